//! Builds a minimal session in each format's native shape around given media,
//! so a test can put any payload (valid, broken, bad base64) into every format.
//! Each payload becomes one attachment; the first is pasted by the user, the
//! others come back from a tool call that read `/tmp/media-<n>`.

use serde_json::{Value, json};

/// Every format name with a wrapper.
pub const FORMATS: [&str; 10] = [
    "claude-code",
    "codex",
    "pi",
    "gemini-cli",
    "mux",
    "opencode",
    "openai-chat",
    "openai-responses",
    "anthropic",
    "gemini",
];

/// One payload: its base64 text as it will sit in the file, and its declared type.
pub struct Item<'a> {
    pub base64: &'a str,
    pub mime: &'a str,
}

fn data_url(i: &Item<'_>) -> String {
    format!("data:{};base64,{}", i.mime, i.base64)
}

fn lines(v: &[Value]) -> String {
    v.iter().map(|l| l.to_string() + "\n").collect()
}

/// The session text, in `format`, holding `items`.
pub fn session(format: &str, items: &[Item<'_>]) -> String {
    let (user, tools) = items.split_first().expect("at least one item");
    match format {
        "claude-code" => {
            let mut out = vec![json!({"type":"user","uuid":"u0","parentUuid":null,"sessionId":"s","isSidechain":false,
                "message":{"role":"user","content":[{"type":"text","text":"look"},
                {"type":"image","source":{"type":"base64","media_type":user.mime,"data":user.base64}}]}})];
            let mut parent = "u0".to_string();
            for (n, t) in tools.iter().enumerate() {
                let (a, r) = (format!("a{n}"), format!("r{n}"));
                out.push(json!({"type":"assistant","uuid":a,"parentUuid":parent,"sessionId":"s","requestId":"req_1",
                    "message":{"id":format!("msg_{n}"),"type":"message","role":"assistant","model":"claude-sonnet-4-5",
                    "content":[{"type":"tool_use","id":format!("toolu_{n}"),"name":"Read","input":{"file_path":format!("/tmp/media-{n}")}}],
                    "stop_reason":"tool_use","usage":{"input_tokens":10,"output_tokens":5,"cache_creation_input_tokens":0,"cache_read_input_tokens":0}}}));
                let block = if t.mime == "application/pdf" { "document" } else { "image" };
                out.push(json!({"type":"user","uuid":r,"parentUuid":a,"sessionId":"s",
                    "message":{"role":"user","content":[{"type":"tool_result","tool_use_id":format!("toolu_{n}"),
                    "content":[{"type":block,"source":{"type":"base64","media_type":t.mime,"data":t.base64}}]}]}}));
                parent = format!("r{n}");
            }
            lines(&out)
        }
        "codex" => {
            let mut out = vec![
                json!({"timestamp":"t","type":"session_meta","payload":{"id":"x","cwd":"/","originator":"codex_cli_rs","cli_version":"0.58.0","model_provider":"openai"}}),
                json!({"timestamp":"t","type":"turn_context","payload":{"cwd":"/","model":"gpt-5-codex","approval_policy":"never","sandbox_policy":{"mode":"read-only"},"summary":"auto"}}),
                json!({"timestamp":"t","type":"response_item","payload":{"type":"message","role":"user","content":[{"type":"input_image","image_url":data_url(user)}]}}),
            ];
            for (n, t) in tools.iter().enumerate() {
                out.push(json!({"timestamp":"t","type":"response_item","payload":{"type":"function_call","name":"view_image","call_id":format!("call_{n}"),
                    "arguments":json!({"path":format!("/tmp/media-{n}")}).to_string()}}));
                out.push(json!({"timestamp":"t","type":"response_item","payload":{"type":"function_call_output","call_id":format!("call_{n}"),
                    "output":[{"type":"input_image","image_url":data_url(t)}]}}));
            }
            lines(&out)
        }
        "pi" => {
            let mut out = vec![
                json!({"type":"session","version":3,"id":"s","timestamp":"t","cwd":"/"}),
                json!({"type":"message","id":"00000001","parentId":null,"timestamp":"t","message":{"role":"user","content":[{"type":"image","data":user.base64,"mimeType":user.mime}],"timestamp":1}}),
            ];
            let mut parent = 1;
            for (n, t) in tools.iter().enumerate() {
                let (a, r) = (parent + 1, parent + 2);
                out.push(json!({"type":"message","id":format!("{a:08x}"),"parentId":format!("{parent:08x}"),"timestamp":"t","message":{"role":"assistant",
                    "content":[{"type":"toolCall","id":format!("call_{n}"),"name":"read","arguments":{"path":format!("/tmp/media-{n}")}}],
                    "api":"anthropic-messages","provider":"anthropic","model":"claude-sonnet-4-5","usage":{"input":1,"output":1,"cacheRead":0,"cacheWrite":0,"totalTokens":2},"stopReason":"toolUse","timestamp":2}}));
                out.push(json!({"type":"message","id":format!("{r:08x}"),"parentId":format!("{a:08x}"),"timestamp":"t","message":{"role":"toolResult","toolCallId":format!("call_{n}"),"toolName":"read",
                    "content":[{"type":"image","data":t.base64,"mimeType":t.mime}],"isError":false,"timestamp":3}}));
                parent = r;
            }
            lines(&out)
        }
        "gemini-cli" => {
            let mut out = vec![
                json!({"sessionId":"s","projectHash":"h","startTime":"t","lastUpdated":"t","kind":"main"}),
                json!({"id":"u","timestamp":"t","type":"user","content":[{"inlineData":{"mimeType":user.mime,"data":user.base64}}]}),
            ];
            let calls: Vec<Value> = tools.iter().enumerate().map(|(n, t)| json!({"id":format!("c{n}"),"name":"read_file","args":{"absolute_path":format!("/tmp/media-{n}")},"status":"success",
                "result":[{"functionResponse":{"id":format!("c{n}"),"name":"read_file","response":{"output":"ok"},"parts":[{"inlineData":{"mimeType":t.mime,"data":t.base64}}]}}]})).collect();
            out.push(json!({"id":"g","timestamp":"t","type":"gemini","content":"","model":"gemini-2.5-pro","toolCalls":calls,"tokens":{"input":1,"output":1,"cached":0,"thoughts":0,"tool":0,"total":2}}));
            lines(&out)
        }
        "mux" => {
            let mut out = vec![json!({"id":"m0","role":"user","metadata":{"historySequence":1},"workspaceId":"w",
                "parts":[{"type":"file","mediaType":user.mime,"url":data_url(user)}]})];
            for (n, t) in tools.iter().enumerate() {
                out.push(json!({"id":format!("m{}", n + 1),"role":"assistant","workspaceId":"w",
                    "metadata":{"historySequence":n + 2,"model":"anthropic:claude-sonnet-4-5","usage":{"inputTokens":1,"outputTokens":1,"totalTokens":2}},
                    "parts":[{"type":"dynamic-tool","toolCallId":format!("call_{n}"),"toolName":"attach_file","input":{"path":format!("/tmp/media-{n}")},"state":"output-available",
                    "output":{"type":"content","value":[{"type":"media","data":t.base64,"mediaType":t.mime}]}}]}));
            }
            lines(&out)
        }
        "opencode" => {
            let info = |id: &str, role: &str| {
                json!({"id":id,"sessionID":"ses_1","role":role,"time":{"created":1},"modelID":"claude-sonnet-4-5","providerID":"anthropic",
                "tokens":{"input":1,"output":1,"reasoning":0,"cache":{"read":0,"write":0}}})
            };
            let mut out = vec![
                json!({"info":info("msg_0","user"),"parts":[{"type":"file","mime":user.mime,"filename":"pasted","url":data_url(user)}]}),
            ];
            let parts: Vec<Value> = tools.iter().enumerate().map(|(n, t)| json!({"type":"tool","callID":format!("call_{n}"),"tool":"read",
                "state":{"status":"completed","input":{"filePath":format!("/tmp/media-{n}")},"output":"ok","title":"","metadata":{},"time":{"start":1,"end":2},
                "attachments":[{"type":"file","mime":t.mime,"url":data_url(t)}]}})).collect();
            if !parts.is_empty() {
                out.push(json!({"info":info("msg_1","assistant"),"parts":parts}));
            }
            lines(&out)
        }
        "openai-chat" | "openai-responses" | "anthropic" | "gemini" => logged(format, user, tools),
        other => panic!("no wrapper for {other}"),
    }
}

/// A provider format's session: one logged request holding `user` and `tools`.
fn logged(format: &str, user: &Item<'_>, tools: &[Item<'_>]) -> String {
    match format {
        "openai-chat" => {
            let mut msgs =
                vec![json!({"role":"user","content":[{"type":"image_url","image_url":{"url":data_url(user)}}]})];
            for (n, t) in tools.iter().enumerate() {
                msgs.push(json!({"role":"assistant","content":null,"tool_calls":[{"id":format!("call_{n}"),"type":"function","function":{"name":"view","arguments":json!({"path":format!("/tmp/media-{n}")}).to_string()}}]}));
                msgs.push(json!({"role":"tool","tool_call_id":format!("call_{n}"),"content":[{"type":"image_url","image_url":{"url":data_url(t)}}]}));
            }
            lines(&[json!({"model":"gpt-4o","messages":msgs})])
        }
        "openai-responses" => {
            let mut input = vec![
                json!({"type":"message","role":"user","content":[{"type":"input_image","image_url":data_url(user)}]}),
            ];
            for (n, t) in tools.iter().enumerate() {
                input.push(json!({"type":"function_call","call_id":format!("call_{n}"),"name":"view","arguments":json!({"path":format!("/tmp/media-{n}")}).to_string()}));
                input.push(json!({"type":"function_call_output","call_id":format!("call_{n}"),"output":[{"type":"input_image","image_url":data_url(t)}]}));
            }
            lines(&[json!({"model":"gpt-5","input":input})])
        }
        "anthropic" => {
            let block = |i: &Item<'_>| {
                let kind = if i.mime == "application/pdf" { "document" } else { "image" };
                json!({"type":kind,"source":{"type":"base64","media_type":i.mime,"data":i.base64}})
            };
            let mut msgs = vec![json!({"role":"user","content":[block(user)]})];
            for (n, t) in tools.iter().enumerate() {
                msgs.push(json!({"role":"assistant","content":[{"type":"tool_use","id":format!("toolu_{n}"),"name":"Read","input":{"file_path":format!("/tmp/media-{n}")}}]}));
                msgs.push(json!({"role":"user","content":[{"type":"tool_result","tool_use_id":format!("toolu_{n}"),"content":[block(t)]}]}));
            }
            lines(&[json!({"model":"claude-sonnet-4-5","max_tokens":1024,"messages":msgs})])
        }
        "gemini" => {
            let mut contents =
                vec![json!({"role":"user","parts":[{"inlineData":{"mimeType":user.mime,"data":user.base64}}]})];
            for (n, t) in tools.iter().enumerate() {
                contents.push(json!({"role":"model","parts":[{"functionCall":{"id":format!("c{n}"),"name":"read_file","args":{"absolute_path":format!("/tmp/media-{n}")}}}]}));
                contents.push(json!({"role":"user","parts":[{"functionResponse":{"id":format!("c{n}"),"name":"read_file","response":{"output":"ok"},
                    "parts":[{"inlineData":{"mimeType":t.mime,"data":t.base64}}]}}]}));
            }
            lines(&[json!({"contents":contents})])
        }
        other => panic!("no logged format {other}"),
    }
}

/// `session` (in `format`) with the provider's rejection recorded after it, as
/// that agent records a failed request. `message` is the provider's message,
/// e.g. `messages.2.content.0.image.source.base64: Could not process image`.
pub fn failed(format: &str, session: &str, message: &str) -> String {
    let last: Value = session.lines().last().and_then(|l| serde_json::from_str(l).ok()).unwrap_or(Value::Null);
    let anthropic = json!({"type":"error","error":{"type":"invalid_request_error","message":message},"request_id":"req_011CVHx8n1Dq2"});
    let openai = json!({"error":{"message":message,"type":"invalid_request_error","param":null,"code":null}});
    let gemini = json!({"error":{"code":400,"message":message,"status":"INVALID_ARGUMENT"}});
    let line = match format {
        "claude-code" => {
            json!({"type":"assistant","uuid":"err-1","parentUuid":last["uuid"],"sessionId":"s","isSidechain":false,
            "isApiErrorMessage":true,"apiErrorStatus":400,"error":"invalid_request",
            "message":{"id":"e1","type":"message","role":"assistant","model":"<synthetic>",
            "content":[{"type":"text","text":format!("API Error: 400 {anthropic}")}],"stop_reason":"stop_sequence",
            "usage":{"input_tokens":0,"output_tokens":0,"cache_creation_input_tokens":0,"cache_read_input_tokens":0}}})
        }
        "codex" => {
            json!({"timestamp":"t","type":"event_msg","payload":{"type":"error","message":format!("unexpected status 400 Bad Request: {openai}")}})
        }
        "pi" => {
            json!({"type":"message","id":"ffffffff","parentId":last["id"],"timestamp":"t","message":{"role":"assistant","content":[],
            "api":"anthropic-messages","provider":"anthropic","model":"claude-sonnet-4-5",
            "usage":{"input":0,"output":0,"cacheRead":0,"cacheWrite":0,"totalTokens":0},"stopReason":"error","errorMessage":format!("400 {anthropic}"),"timestamp":9}})
        }
        "gemini-cli" => {
            json!({"id":"e1","timestamp":"t","type":"error","content":format!("[API Error: {message} (Status: INVALID_ARGUMENT)]")})
        }
        "mux" => json!({"id":"mx","role":"assistant","workspaceId":"w","parts":[],
            "metadata":{"historySequence":99,"model":"anthropic:claude-sonnet-4-5","error":message,"errorType":"api"}}),
        "opencode" => {
            json!({"info":{"id":"msg_9","sessionID":"ses_1","role":"assistant","time":{"created":9},"modelID":"claude-sonnet-4-5","providerID":"anthropic",
            "error":{"name":"APIError","data":{"message":message,"statusCode":400,"isRetryable":false,"responseBody":anthropic.to_string()}}},"parts":[]})
        }
        "openai-chat" | "openai-responses" => openai,
        "anthropic" => anthropic,
        "gemini" => gemini,
        other => panic!("no error shape for {other}"),
    };
    format!("{session}{line}\n")
}
