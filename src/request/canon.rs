//! The request in no dialect: messages of parts, enough to write any dialect.

use serde_json::Value;

/// Who says a message on the wire (no tool role: results ride in user messages).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum WireRole {
    User,
    Assistant,
    System,
}

/// A provider family whose replayed reasoning only it can verify.
pub type Family = &'static str;

#[derive(Clone, Debug, PartialEq)]
pub enum Part {
    Text(String),
    /// An image or a document: inline base64, or a URL / file id.
    Media {
        mime: Option<String>,
        data: Option<String>,
        url: Option<String>,
        name: Option<String>,
    },
    Call {
        id: String,
        name: String,
        args: Value,
    },
    Result {
        id: String,
        name: Option<String>,
        parts: Vec<Part>,
        error: bool,
        /// Members the agent adds to the result's Chat Completions `tool`
        /// message beside the API's own (Copilot CLI's `__copilotMessageSource`):
        /// a JSON object, or None.
        extra: Option<Value>,
    },
    /// Opaque replayed reasoning, kept as the dialect wrote it.
    Reasoning {
        family: Family,
        raw: Value,
    },
}

#[derive(Clone, Debug, PartialEq)]
pub struct Msg {
    pub role: WireRole,
    pub parts: Vec<Part>,
}

impl Msg {
    pub fn new(role: WireRole, parts: Vec<Part>) -> Msg {
        Msg { role, parts }
    }
}

impl Part {
    /// A media part from a `data:` URL or another URL.
    pub fn from_url(url: &str, mime: Option<&str>, name: Option<String>) -> Part {
        if let Some(rest) = url.strip_prefix("data:")
            && let Some((head, data)) = rest.split_once(',')
        {
            let m = head.split(';').next().filter(|m| !m.is_empty()).map(str::to_string);
            return Part::Media { mime: m.or(mime.map(str::to_string)), data: Some(data.to_string()), url: None, name };
        }
        Part::Media { mime: mime.map(str::to_string), data: None, url: Some(url.to_string()), name }
    }

    pub fn is_pdf(&self) -> bool {
        matches!(self, Part::Media { mime: Some(m), .. } if m == "application/pdf")
    }

    /// The `data:` URL of inline media, else its URL.
    pub fn data_url(&self) -> Option<String> {
        match self {
            Part::Media { data: Some(d), mime, .. } => {
                Some(format!("data:{};base64,{d}", mime.as_deref().unwrap_or("application/octet-stream")))
            }
            Part::Media { url: Some(u), .. } => Some(u.clone()),
            _ => None,
        }
    }
}

/// Text of a JSON string or else the JSON itself.
pub fn text_of(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        Value::Null => String::new(),
        other => other.to_string(),
    }
}
