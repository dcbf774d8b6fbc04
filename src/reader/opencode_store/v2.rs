//! opencode's event-sourced ("v2") messages as the `{info, parts}` lines its v1
//! messages are read as, so one adapter reads both. The shapes are opencode
//! 1.18.33's `Session.Message.*` schemas (a row's `data` is the message without
//! `id` and `type`):
//! - `user`: `text`, `files: [{uri, mime, name?}]` (`Prompt.FileAttachment`);
//! - `synthetic`: `text`, sent as the user's;
//! - `assistant`: `agent`, `model: {id, providerID}`, `content` of `text`,
//!   `reasoning` (`providerMetadata`) and `tool` (`id`, `name`, `state` with
//!   `status`, `input`, and, once completed, `attachments` and `content`, whose
//!   `{type:"file", uri, mime, name}` items are media too), `finish`, `tokens`,
//!   `error: {type, message}`;
//! - `system` (context), `agent-switched`, `model-switched`, `shell` and
//!   `compaction` hold no attachment and are not read here.
//!
//! File items become v1 `file` parts (`url`, `mime`, `filename`), so refs,
//! judging, exclusion and preview work on them as on v1 sessions.

use serde_json::{Map, Value, json};

/// The `{info, parts}` of one v2 message of type `ty`, if it is one the provider sees.
pub fn message(ty: &str, data: Map<String, Value>) -> Option<(Map<String, Value>, Vec<Value>)> {
    let data = Value::Object(data);
    let mut info = Map::new();
    info.insert("time".into(), data.get("time").cloned().unwrap_or(Value::Null));
    let text = |t: &Value| json!({"type": "text", "text": t.as_str().unwrap_or_default()});
    let mut parts = Vec::new();
    match ty {
        "user" | "synthetic" => {
            info.insert("role".into(), json!("user"));
            parts.push(text(&data["text"]));
            parts.extend(items(&data["files"]).iter().map(file));
        }
        "assistant" => {
            info.insert("role".into(), json!("assistant"));
            let model = &data["model"];
            for (k, v) in [("modelID", &model["id"]), ("providerID", &model["providerID"]), ("agent", &data["agent"])] {
                if !v.is_null() {
                    info.insert(k.into(), v.clone());
                }
            }
            for k in ["tokens", "finish", "cost"] {
                if let Some(v) = data.get(k) {
                    info.insert(k.into(), v.clone());
                }
            }
            if let Some(err) = data.get("error").filter(|e| e.is_object()) {
                let message = err["message"].as_str().unwrap_or_default();
                info.insert("error".into(), json!({"name": "UnknownError", "data": {"message": message}}));
            }
            parts.extend(items(&data["content"]).iter().filter_map(assistant_part));
        }
        _ => return None,
    }
    Some((info, parts))
}

fn items(v: &Value) -> &[Value] {
    v.as_array().map_or(&[], Vec::as_slice)
}

/// A v2 file item (`uri`, `mime`, `name`) as a v1 `file` part.
fn file(f: &Value) -> Value {
    let mut p = json!({"type": "file", "url": f["uri"], "mime": f["mime"]});
    if let Some(name) = f.get("name").filter(|n| n.is_string()) {
        p["filename"] = name.clone();
    }
    p
}

fn assistant_part(c: &Value) -> Option<Value> {
    Some(match c["type"].as_str()? {
        "text" => json!({"type": "text", "text": c["text"]}),
        "reasoning" => json!({"type": "reasoning", "text": c["text"], "metadata": c["providerMetadata"]}),
        "tool" => {
            let st = &c["state"];
            // A file may be both an attachment and result content: counted once.
            let mut files: Vec<Value> = Vec::new();
            for f in
                items(&st["attachments"]).iter().chain(items(&st["content"]).iter().filter(|x| x["type"] == "file"))
            {
                if !files.iter().any(|g| g["url"] == f["uri"]) {
                    files.push(file(f));
                }
            }
            let output = items(&st["content"])
                .iter()
                .filter(|x| x["type"] == "text")
                .filter_map(|x| x["text"].as_str())
                .collect::<Vec<_>>()
                .join("\n");
            let mut state = json!({"status": st["status"], "input": st["input"], "output": output});
            if !files.is_empty() {
                state["attachments"] = Value::Array(files);
            }
            json!({"type": "tool", "callID": c["id"], "tool": c["name"], "state": state, "metadata": c["provider"]["metadata"]})
        }
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn data(v: Value) -> Map<String, Value> {
        match v {
            Value::Object(m) => m,
            _ => unreachable!(),
        }
    }

    #[test]
    fn a_tool_result_file_is_an_attachment_once_and_an_error_is_kept() {
        // Shapes of opencode 1.18.33's `Session.Message.Assistant` and
        // `ToolState.Completed` (not driven: its v2 loop does not run headless).
        let file = json!({"uri": "data:image/png;base64,AA==", "mime": "image/png", "name": "a.png"});
        let (info, parts) = message(
            "assistant",
            data(json!({
                "agent": "build", "model": {"id": "m", "providerID": "p"},
                "content": [
                    {"type": "text", "id": "t1", "text": "reading"},
                    {"type": "tool", "id": "call_1", "name": "read", "time": {"created": 1},
                     "state": {"status": "completed", "input": {"filePath": "a.png"}, "structured": {},
                               "attachments": [file.clone()],
                               "content": [{"type": "text", "text": "Image read"}, {"type": "file", "uri": file["uri"], "mime": "image/png"}]}}
                ],
                "error": {"type": "unknown", "message": "400 Could not process image"},
                "time": {"created": 1}
            })),
        )
        .unwrap();
        assert_eq!(info["role"], "assistant");
        assert_eq!(info["modelID"], "m");
        assert_eq!(info["error"]["data"]["message"], "400 Could not process image");
        assert_eq!(parts[1]["callID"], "call_1");
        assert_eq!(parts[1]["state"]["attachments"].as_array().unwrap().len(), 1, "{parts:#?}");
        assert_eq!(parts[1]["state"]["attachments"][0]["url"], file["uri"]);
        assert_eq!(parts[1]["state"]["output"], "Image read");
        assert!(message("model-switched", data(json!({"model": {"id": "m"}}))).is_none());
    }
}
