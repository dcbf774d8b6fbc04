//! The JSON Schema of each command's `--json` output (`session-doctor schema
//! <command>`), written here in one place per command from the Rust types the
//! outputs serialize (named beside each); the enumerations (formats, failure
//! classes) are taken from the code itself. Every field an output always
//! carries is `required`; fields may be added within a `schema_version`, so
//! objects stay open to properties not named here. `tests/it/schemas.rs`
//! validates every command's output on every sample against these.

use serde_json::{Value, json};

use crate::report::printer::json::SCHEMA_VERSION;

/// The commands that have a `--json` output, in `--help`'s order.
pub const COMMANDS: &[&str] =
    &["scan", "diagnose", "exclude", "preview", "repair", "check", "classify", "sessions", "guard"];

const DRAFT: &str = "https://json-schema.org/draft/2020-12/schema";

fn string() -> Value {
    json!({ "type": "string" })
}
fn nullable(ty: &str) -> Value {
    json!({ "type": [ty, "null"] })
}
fn count() -> Value {
    json!({ "type": "integer", "minimum": 0 })
}
fn strings() -> Value {
    json!({ "type": "array", "items": { "type": "string" } })
}
fn counts() -> Value {
    json!({ "type": "array", "items": { "type": "integer", "minimum": 0 } })
}
fn version() -> Value {
    json!({ "type": "integer", "const": SCHEMA_VERSION, "description": "The version of this schema: raised only when a field is renamed, removed or changes type" })
}

/// An object whose properties are `props`, each required unless named in `optional`.
fn object(props: &[(&str, Value)], optional: &[&str]) -> Value {
    let required: Vec<&str> = props.iter().map(|(k, _)| *k).filter(|k| !optional.contains(k)).collect();
    let properties: serde_json::Map<String, Value> = props.iter().map(|(k, v)| ((*k).to_string(), v.clone())).collect();
    json!({ "type": "object", "required": required, "properties": properties })
}

/// A top-level object: `schema_version` first.
fn versioned(title: &str, props: &[(&str, Value)], optional: &[&str]) -> Value {
    let mut all = vec![("schema_version", version())];
    all.extend(props.iter().cloned());
    let mut o = object(&all, optional);
    o["title"] = json!(title);
    o
}

fn format() -> Value {
    let names: Vec<&str> = crate::model::Format::ALL.iter().map(|f| f.name()).collect();
    json!({ "type": "string", "enum": names })
}
/// [`crate::model::Fork`]: the agent, by the name `sessions --agent` takes.
fn fork() -> Value {
    json!({ "enum": [crate::model::Fork::Kilo.command()] })
}
fn class() -> Value {
    let names: Vec<&str> = crate::classify::Class::ALL.iter().map(|c| c.as_str()).collect();
    json!({ "type": "string", "enum": names })
}
fn severity() -> Value {
    json!({ "enum": ["info", "warning", "error"] })
}
fn verdict() -> Value {
    json!({ "enum": ["ok", "warn", "invalid"] })
}
/// A registered problem code (docs/codes.md): `family.name`.
fn code() -> Value {
    json!({ "type": "string", "pattern": "^[a-z0-9_]+(\\.[a-z0-9_]+)+$" })
}

/// `media::Defect`: an attachment's or a request limit's problem.
fn media_problem() -> Value {
    object(&[("severity", verdict()), ("code", code()), ("message", string())], &[])
}
/// `model::Span`.
fn span() -> Value {
    object(&[("offset", count()), ("len", count()), ("line", count())], &["line"])
}
/// `model::Finding`: what the reader found in a line.
fn finding() -> Value {
    object(&[("line", count()), ("severity", severity()), ("message", string()), ("code", code())], &["code"])
}
/// `model::Attachment` (scan's `attachments[]`; diagnose's suspects add to it).
fn attachment_props() -> Vec<(&'static str, Value)> {
    vec![
        ("ref", string()),
        ("line", count()),
        ("origin", json!({ "enum": ["user", "tool_result", "assistant"] })),
        ("call_id", nullable("string")),
        ("tool", nullable("string")),
        ("name", nullable("string")),
        ("mime_declared", nullable("string")),
        ("mime_detected", nullable("string")),
        ("bytes", nullable("integer")),
        ("sha256", nullable("string")),
        ("width", nullable("integer")),
        ("height", nullable("integer")),
        ("pages", nullable("integer")),
        ("verdict", verdict()),
        ("problems", json!({ "type": "array", "items": media_problem() })),
        ("encoding", json!({ "enum": ["base64", "data_url", "reference", "bytes"] })),
        ("url", nullable("string")),
        ("pointer", string()),
        ("span", json!({ "anyOf": [span(), { "type": "null" }] })),
        ("mirrors", json!({ "type": "array", "items": span() })),
        ("excluded", json!({ "type": "boolean" })),
        ("healed", json!({ "const": true })),
    ]
}

/// `report::ScanReport`.
fn scan_report() -> Value {
    let carried = object(
        &[
            ("refs", strings()),
            ("images", count()),
            ("pdf_pages", count()),
            ("max_image_side", count()),
            ("media_bytes", count()),
        ],
        &[],
    );
    let attachment = object(&attachment_props(), &["healed"]);
    versioned(
        "session-doctor scan --json (one file)",
        &[
            ("file", string()),
            ("format", format()),
            ("written_by", fork()),
            ("format_detected", json!({ "type": "boolean" })),
            ("provider", string()),
            ("lines", count()),
            ("entries", count()),
            ("attachments", json!({ "type": "array", "items": attachment })),
            ("findings", json!({ "type": "array", "items": finding() })),
            ("limits", json!({ "type": "array", "items": media_problem() })),
            ("request", carried),
        ],
        &["written_by"],
    )
}

/// `{"file", "error"}`: a file `scan` could not read, among several.
fn scan_error() -> Value {
    versioned("a file scan could not read", &[("file", string()), ("error", string())], &[])
}

fn scan() -> Value {
    // One file: its report (or the error object every command answers); several: an array.
    json!({ "anyOf": [
        scan_report(),
        scan_error(),
        error(),
        { "type": "array", "items": { "anyOf": [scan_report(), scan_error()] } },
    ] })
}

/// `classify::Classification`'s fields.
fn classification_props() -> Vec<(&'static str, Value)> {
    vec![
        ("class", class()),
        ("retryable", nullable("boolean")),
        ("provider", nullable("string")),
        ("status", nullable("integer")),
        ("code", nullable("string")),
        ("type", nullable("string")),
        ("message", nullable("string")),
        ("limit", nullable("integer")),
        ("block", nullable("string")),
        ("remedy", string()),
        ("call_ids", strings()),
    ]
}

/// `diagnose::Diagnosis`.
fn diagnose() -> Value {
    let mut failure = classification_props();
    failure.extend([
        ("line", nullable("integer")),
        ("source", json!({ "enum": ["recorded", "given", "predicted"] })),
        ("recovered", json!({ "type": "boolean" })),
        ("moved_to", string()),
    ]);
    let failure = object(&failure, &["moved_to"]);
    let mut suspect = attachment_props();
    suspect.extend([
        ("prime", json!({ "type": "boolean" })),
        ("named", json!({ "type": "boolean" })),
        ("why", string()),
    ]);
    let suspect = object(&suspect, &["healed"]);
    let kinds =
        ["call_without_result", "result_without_call", "duplicate_result", "empty_message", "roles_out_of_order"];
    let history = object(
        &[
            ("kind", json!({ "enum": kinds })),
            ("code", code()),
            ("line", count()),
            ("call_id", nullable("string")),
            ("tool", nullable("string")),
            ("at", nullable("string")),
            ("pending", json!({ "type": "boolean" })),
            ("agent_pairs", json!({ "type": "boolean" })),
            ("message", string()),
            ("named", json!({ "type": "boolean" })),
        ],
        &[],
    );
    let boundary = object(&[("line", count()), ("model", nullable("string"))], &[]);
    let accepted =
        object(&[("ref", string()), ("line", count()), ("why", string()), ("failed_at", count())], &["failed_at"]);
    let or_null = |v: Value| json!({ "anyOf": [v, { "type": "null" }] });
    // A session that cannot be read at all: the fields above unknown, and why.
    let unreadable = versioned(
        "session-doctor diagnose --json (the session cannot be read; exit 2)",
        &[
            ("file", string()),
            ("format", json!({ "type": "null" })),
            ("stuck", json!({ "type": "null" })),
            ("failure", json!({ "type": "null" })),
            ("suspects", json!({ "type": "array", "maxItems": 0 })),
            ("excluded", json!({ "type": "array", "maxItems": 0 })),
            ("next", json!({ "type": "array", "maxItems": 0 })),
            ("error", string()),
        ],
        &[],
    );
    json!({ "anyOf": [versioned(
        "session-doctor diagnose --json",
        &[
            ("file", string()),
            ("format", format()),
            ("written_by", fork()),
            ("stuck", json!({ "type": "boolean" })),
            ("verdict", string()),
            ("failure", or_null(failure)),
            ("suspects", json!({ "type": "array", "items": suspect })),
            ("excluded", strings()),
            ("history", json!({ "type": "array", "items": history })),
            ("next", strings()),
            ("undetermined", json!({ "const": true })),
            ("provider", string()),
            ("model", nullable("string")),
            ("boundary", or_null(boundary)),
            ("limits", json!({ "type": "array", "items": media_problem() })),
            ("accepted_invalid", json!({ "type": "array", "items": accepted })),
            ("notes", strings()),
            ("findings", json!({ "type": "array", "items": finding() })),
            ("lines", count()),
            ("entries", count()),
            ("attachments", count()),
        ],
        &["undetermined", "written_by"],
    ), unreadable, error()] })
}

/// `cli::exclude::Outcome`.
fn exclude() -> Value {
    json!({ "anyOf": [versioned(
        "session-doctor exclude --json",
        &[
            ("overlay", string()),
            ("event", json!({ "enum": [crate::overlay::EXCLUDED, crate::overlay::INCLUDED] })),
            ("changed", json!({ "type": "boolean" })),
            ("attachments", strings()),
            ("next", strings()),
        ],
        &[],
    ), error()] })
}

/// `rewrite::Summary`: what preview and repair changed.
fn changes() -> Value {
    object(
        &[
            ("excluded", strings()),
            ("capped", strings()),
            ("healed", strings()),
            ("reasoning_removed", count()),
            ("reasoning_ids_dropped", count()),
            ("failures_dropped", counts()),
            ("calls_answered", strings()),
            ("results_removed", strings()),
            ("repeats_removed", strings()),
            ("fitted", strings()),
            ("not_fitted", strings()),
            ("surrogates_replaced", counts()),
        ],
        &["healed", "repeats_removed", "surrogates_replaced"],
    )
}

/// `preview --json`: the summary on standard error (standard output is the request).
fn preview() -> Value {
    json!({ "anyOf": [versioned(
        "session-doctor preview --json (the summary it prints on standard error)",
        &[
            ("file", string()),
            ("format", format()),
            ("target", string()),
            ("items", count()),
            ("changes", changes()),
            ("not_in_session", strings()),
        ],
        &[],
    ), error()] })
}

/// `repair::Report` when a copy is written, and the answer when none is.
fn repair() -> Value {
    let written = versioned(
        "session-doctor repair --json (a copy written)",
        &[
            ("file", string()),
            ("format", format()),
            ("written", json!({ "const": true })),
            ("out", string()),
            ("id", nullable("string")),
            ("resume", nullable("string")),
            ("resume_note", string()),
            ("lines", count()),
            ("touched", count()),
            ("renamed", count()),
            ("inserted", count()),
            ("dropped", counts()),
            ("changes", changes()),
            ("suspects_left_out", strings()),
            ("still_stuck", nullable("string")),
            ("next", strings()),
        ],
        &["resume_note", "next"],
    );
    let nothing = versioned(
        "session-doctor repair --json (nothing written)",
        &[
            ("file", string()),
            ("format", format()),
            ("written", json!({ "const": false })),
            ("reason", string()),
            ("still_stuck", string()),
            ("next", strings()),
            ("not_fitted", strings()),
        ],
        &["still_stuck", "next", "not_fitted"],
    );
    json!({ "anyOf": [written, nothing, error()] })
}

/// `check::CheckReport` (`check --json`, `--output-format json`).
fn check() -> Value {
    let problem = object(
        &[
            ("code", code()),
            ("severity", severity()),
            ("message", string()),
            ("line", nullable("integer")),
            ("ref", nullable("string")),
        ],
        &[],
    );
    let problems = json!({ "type": "array", "items": problem });
    let session = object(
        &[
            ("file", string()),
            ("session", string()),
            ("format", json!({ "anyOf": [format(), { "type": "null" }] })),
            ("ok", json!({ "type": "boolean" })),
            ("problems", problems.clone()),
            ("allowed", problems),
        ],
        &["session"],
    );
    let skipped = object(&[("file", string()), ("reason", string())], &[]);
    json!({ "anyOf": [versioned(
        "session-doctor check --json",
        &[
            ("sessions", json!({ "type": "array", "items": session })),
            ("ok", json!({ "type": "boolean" })),
            ("skipped", json!({ "type": "array", "items": skipped })),
        ],
        &[],
    ), error()] })
}

/// `cli::classify::Json`.
fn classify() -> Value {
    let mut props = classification_props();
    props.extend([
        ("resets_at", nullable("string")),
        ("resets_in", nullable("string")),
        ("signal", nullable("string")),
        ("why", strings()),
    ]);
    json!({ "anyOf": [versioned("session-doctor classify --json", &props, &["signal", "why"]), error()] })
}

/// `report::sessions::ListedJson`, one per session.
fn sessions() -> Value {
    let row = versioned(
        "one session sessions --json lists",
        &[
            ("agent", string()),
            ("format", json!({ "anyOf": [format(), { "type": "null" }] })),
            ("path", string()),
            ("bytes", count()),
            ("modified", json!({ "type": "string", "format": "date-time" })),
            ("health", json!({ "enum": super::sessions::Health::ALL.map(|h| json!(h)) })),
        ],
        &[],
    );
    json!({ "anyOf": [{ "type": "array", "items": row }, error()] })
}

/// `guard FILE… --json`: one row per file.
fn guard() -> Value {
    let row = versioned(
        "one file guard --json judged",
        &[
            ("file", string()),
            ("decision", json!({ "enum": ["pass", "fitted", "deny"] })),
            ("reason", string()),
            ("fitted", nullable("string")),
        ],
        &[],
    );
    json!({ "anyOf": [{ "type": "array", "items": row }, error()] })
}

/// `{"error": "…"}`: what every command answers under `--json` when it fails (exit 2).
fn error() -> Value {
    versioned("an error under --json (exit 2)", &[("error", string())], &[])
}

/// The schema of `command`'s `--json` output, or `None` for a command without one.
pub fn of(command: &str) -> Option<Value> {
    let mut s = match command {
        "scan" => scan(),
        "diagnose" => diagnose(),
        "exclude" => exclude(),
        "preview" => preview(),
        "repair" => repair(),
        "check" => check(),
        "classify" => classify(),
        "sessions" => sessions(),
        "guard" => guard(),
        _ => return None,
    };
    let o = s.as_object_mut()?;
    let mut head = serde_json::Map::new();
    head.insert("$schema".into(), json!(DRAFT));
    head.insert("$id".into(), json!(format!("urn:session-doctor:{command}:v{SCHEMA_VERSION}")));
    if !o.contains_key("title") {
        head.insert("title".into(), json!(format!("session-doctor {command} --json")));
    }
    head.extend(std::mem::take(o));
    Some(Value::Object(head))
}
