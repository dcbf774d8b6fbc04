//! The two facts a remedy needs from the provider's wording: the limit it names
//! ("31 > 30" → 30) and the request path of the block it blames (`messages.3.content.1`).
//!
//! Both are forward scans with `str::find`; no regex, nothing to backtrack.
//!
//! **Block convention:** the path is kept as the provider wrote it (Anthropic dots,
//! OpenAI/Gemini brackets) and trimmed after its innermost index, i.e. to the content block
//! itself: `messages.3.content.1.image.source.base64` → `messages.3.content.1`,
//! `input[6].output[0].image_url` → `input[6].output[0]`,
//! `contents[0].parts[1].inline_data` → `contents[0].parts[1]`.

/// `A > B` comparisons: the right-hand side is the limit.
/// See: "Too many images in request: 31 \> 30", "Too much media: 0 document pages + 103
/// images \> 100", "image exceeds 5 MB maximum: 7340032 bytes \> 5242880 bytes", "prompt is
/// too long: 215000 tokens \> 200000 maximum".
fn comparison(hay: &str) -> Option<u64> {
    let mut from = 0;
    while let Some(i) = hay[from..].find(" > ") {
        let at = from + i;
        // Bytes, not a `str` slice: 40 bytes back may fall inside a multibyte
        // character (found by fuzzing: "…m\u{e1}ximum … 202609 tokens > 200000" panicked).
        let before = &hay.as_bytes()[at.saturating_sub(40)..at];
        if before.iter().any(u8::is_ascii_digit)
            && let Some(n) = leading_number(&hay[at + 3..])
        {
            return Some(n);
        }
        from = at + 3;
    }
    None
}

/// Keywords after which the next number (within the same sentence) is the limit.
const KEYWORDS: &[&str] = &[
    // See: OpenAI/DeepSeek/vLLM "maximum context length is 128000 tokens"; xAI "maximum
    // prompt length is 131072"; vLLM "context length is only 4096".
    "maximum context length is",
    "maximum prompt length is",
    "context length is only",
    // See: LM Studio "loaded with context length of only 32768 tokens"; vLLM "At most 1
    // image(s) may be provided".
    "context length of only",
    "at most",
    // See: Anthropic "A maximum of 100 PDF pages may be provided"; opencode#47721
    // "exceeding the maximum of 50"; vscode#303825 "supports a maximum of 10".
    "maximum of",
    // agent-core's "the maximum number of 20 images" (shared/seeds/002).
    "maximum number of",
    // See: claude-code#16173 "exceed max allowed size for many-image requests: 2000 pixels";
    // #13480 "max allowed size: 8000 pixels".
    "max allowed size",
    // See: QuantumNous/new-api#1233 "too many images in the message, max allowed is 16".
    "max allowed is",
    // See: Gemini "exceeds the maximum number of tokens allowed (1048575)".
    "tokens allowed",
    // See: Mistral "too large for model with 32768 maximum context length".
    "model with",
    // See: Copilot "exceeds the limit of 128000"; LiteLLM "exceeds limit 4"; Cerebras "while
    // limit is 8192"; Vertex "exceeds the limit: 20971520 bytes"; OpenAI TPM "Limit 30000".
    "limit of",
    "exceeds limit",
    "limit is",
    "limit:",
    "limit ",
    // See: OpenAI "Expected a string with maximum length 10485760".
    "maximum length",
    // See: SiliconFlow "max_total_tokens (172191) must be less than or equal to max_seq_len
    // (131072)" (bytedance/deer-flow#376).
    "max_seq_len",
    // See: sglang "exceeds the maximum allowed length (59862 tokens)"; Moonshot "max
    // length:8192"; SambaNova "The maximum context length of DeepSeek-V3-0324 is 32768";
    // Cohere "cannot exceed 2048 - received 6354".
    "maximum allowed length",
    "max length",
    "maximum context length of",
    "cannot exceed",
    // See: Text Generation Inference "`inputs` tokens + `max_new_tokens` must be <= 8192",
    // "`inputs` must have less than 4096 tokens" (huggingface/chat-ui#1149, meta-llama/llama#1103).
    "must be <=",
    "must have less than",
    // llama.cpp "Cannot truncate prompt with n_keep (15028) >= n_ctx (7424)".
    "n_ctx",
];

/// The limit a provider message names, if it names one. `hay` is normalized (lowercase).
pub fn limit(hay: &str) -> Option<u64> {
    if let Some(n) = comparison(hay) {
        return Some(n);
    }
    for kw in KEYWORDS {
        let Some(i) = hay.find(kw) else { continue };
        let rest = &hay[i + kw.len()..];
        let mut end = rest.len().min(48);
        while !rest.is_char_boundary(end) {
            end -= 1;
        }
        let window = &rest[..end];
        let window = window.split(". ").next().unwrap_or(window);
        // The first number not glued to a letter or a dash: those are identifiers
        // ("gpt-4o", "DeepSeek-V3-0324"), not a limit.
        let mut at = 0;
        while let Some(d) = window[at..].find(|c: char| c.is_ascii_digit()).map(|d| at + d) {
            // A decimal's fraction is no number of its own either.
            let glued =
                window[..d].chars().next_back().is_some_and(|c| c.is_ascii_alphabetic() || c == '-' || c == '.');
            let run = window[d..].find(|c: char| !c.is_ascii_digit()).map_or(window.len(), |e| d + e);
            if !glued && let Some(n) = leading_number(&window[d..]) {
                return Some(n);
            }
            at = run;
        }
    }
    range_upper(hay)
}

/// The upper bound of a range a length is held to: DashScope's "Range of input length
/// should be [1, 204800]".
fn range_upper(hay: &str) -> Option<u64> {
    let i = hay.find("should be [").map(|i| i + "should be [".len())?;
    let (low, rest) = hay[i..].split_once(", ")?;
    low.parse::<u64>().ok()?;
    let (high, _) = rest.split_once(']')?;
    high.parse().ok()
}

/// Digits at the start of `s`, allowing `,` thousands separators ("30,000").
fn leading_number(s: &str) -> Option<u64> {
    let mut n: u64 = 0;
    let mut digits = 0;
    let b = s.as_bytes();
    let mut i = 0;
    while i < b.len() {
        match b[i] {
            d @ b'0'..=b'9' => {
                n = n.checked_mul(10)?.checked_add(u64::from(d - b'0'))?;
                digits += 1;
            }
            b',' if digits > 0 && b.get(i + 1).is_some_and(u8::is_ascii_digit) => {}
            _ => break,
        }
        i += 1;
    }
    // "5.0 MB": a decimal is a size in some unit, not a count we can act on.
    let decimal = b.get(i) == Some(&b'.') && b.get(i + 1).is_some_and(u8::is_ascii_digit);
    (digits > 0 && !decimal).then_some(n)
}

/// Where request paths start (Anthropic, OpenAI Chat/Responses, Gemini).
const PATH_STARTS: &[&str] = &["messages.", "messages[", "input[", "contents[", "contents.", "system."];

/// A full request path the provider names in `text` (original case), untrimmed.
pub fn path(text: &str) -> Option<&str> {
    for start in PATH_STARTS {
        let mut from = 0;
        while let Some(i) = text[from..].find(start) {
            let at = from + i;
            from = at + start.len();
            let boundary = text[..at].chars().next_back().is_none_or(|c| !(c.is_alphanumeric() || c == '_'));
            let next_is_digit = text[at + start.len()..].starts_with(|c: char| c.is_ascii_digit());
            if !boundary || !next_is_digit {
                continue;
            }
            let len = text[at..]
                .find(|c: char| !(c.is_ascii_alphanumeric() || matches!(c, '_' | '.' | '[' | ']')))
                .unwrap_or(text.len() - at);
            return Some(text[at..at + len].trim_end_matches('.'));
        }
    }
    None
}

/// Trims a path after its innermost index (`.N` or `[N]`): the block it names.
pub fn block(path: &str) -> Option<String> {
    let b = path.as_bytes();
    let mut cut = None;
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'.' || b[i] == b'[' {
            let open = b[i];
            let mut j = i + 1;
            while j < b.len() && b[j].is_ascii_digit() {
                j += 1;
            }
            let closed = if open == b'[' { b.get(j) == Some(&b']') } else { j == b.len() || b[j] == b'.' };
            if j > i + 1 && closed {
                let end = if open == b'[' { j + 1 } else { j };
                cut = Some(end);
                i = end;
                continue;
            }
        }
        i += 1;
    }
    cut.map(|c| path[..c].to_string())
}

/// Whether a request path points into an image, document or file part.
pub fn path_is_media(path: &str) -> bool {
    const MEDIA: &[&str] = &[
        ".image",
        "image_url",
        "inline_data",
        "inlinedata",
        ".document",
        ".pdf",
        "input_image",
        "input_file",
        "file_data",
    ];
    let lower = path.to_ascii_lowercase();
    MEDIA.iter().any(|m| lower.contains(m))
}

/// Whether a request path points into a replayed message's reasoning: `messages.2.reasoning_details.0.data`,
/// `input[3].encrypted_content`, `messages.1.content.0.thinking.signature`. A setting
/// (`thinking.budget_tokens`, `reasoning.effort`) is no message's, so it starts no history path.
pub fn path_is_reasoning(path: &str) -> bool {
    const HISTORY: &[&str] = &["messages.", "messages[", "input[", "contents[", "contents."];
    const REASONING: &[&str] = &[
        ".reasoning_details",
        ".reasoning_content",
        ".reasoning_text",
        ".thinking",
        ".redacted_thinking",
        ".encrypted_content",
        ".thought_signature",
        ".thoughtsignature",
    ];
    let lower = path.to_ascii_lowercase();
    HISTORY.iter().any(|h| lower.starts_with(h)) && REASONING.iter().any(|r| lower.contains(r))
}

/// Prefixes of tool call ids: Anthropic `toolu_`, Bedrock `tooluse_`, OpenAI Chat `call_`,
/// OpenAI Responses `fc_` (function call items).
/// Anthropic server tools `srvtoolu_`.
const CALL_ID_PREFIXES: &[&str] = &["toolu_", "srvtoolu_", "tooluse_", "call_", "fc_"];
/// Most call ids reported; a provider listing more adds nothing a repair needs.
const MAX_CALL_IDS: usize = 64;

/// The tool call ids named in `texts` (original case), each once, in the order found.
///
/// An id is a prefix at a word start followed by at least 3 id characters, with a digit
/// among them or at least 16 of them, so the words `call_id` and `call_ids` are not ids.
pub fn call_ids(texts: &[String]) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for text in texts {
        for prefix in CALL_ID_PREFIXES {
            let mut from = 0;
            while let Some(i) = text[from..].find(prefix) {
                let at = from + i;
                from = at + prefix.len();
                let boundary = text[..at].chars().next_back().is_none_or(|c| !(c.is_ascii_alphanumeric() || c == '_'));
                let rest = &text[from..];
                let len =
                    rest.find(|c: char| !(c.is_ascii_alphanumeric() || c == '_' || c == '-')).unwrap_or(rest.len());
                let body = &rest[..len];
                let id_like = len >= 3 && (body.bytes().any(|b| b.is_ascii_digit()) || len >= 16);
                if boundary && id_like {
                    let id = &text[at..from + len];
                    if !out.iter().any(|o| o == id) {
                        out.push(id.to_string());
                        if out.len() >= MAX_CALL_IDS {
                            return out;
                        }
                    }
                }
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn limits_from_comparisons() {
        assert_eq!(limit("too many images in request: 31 > 30"), Some(30));
        assert_eq!(limit("too much media: 0 document pages + 103 images > 100"), Some(100));
        assert_eq!(limit("image exceeds 5 mb maximum: 7340032 bytes > 5242880 bytes"), Some(5_242_880));
        assert_eq!(limit("prompt is too long: 215000 tokens > 200000 maximum"), Some(200_000));
        assert_eq!(limit("exceed context limit: 197000 + 8192 > 200000, decrease input"), Some(200_000));
    }

    #[test]
    fn limits_past_identifiers_and_from_ranges() {
        assert_eq!(limit("the maximum context length of deepseek-v3-0324 is 32768 tokens"), Some(32768));
        assert_eq!(
            limit("<400> internalerror.algo.invalidparameter: range of input length should be [1, 204800]"),
            Some(204_800)
        );
        assert_eq!(limit("model max length exceeded, max length:8192"), Some(8192));
    }

    #[test]
    fn limits_from_keywords() {
        assert_eq!(limit("this model's maximum context length is 128000 tokens. however"), Some(128_000));
        assert_eq!(limit("a maximum of 100 pdf pages may be provided."), Some(100));
        assert_eq!(
            limit("at least one of the image dimensions exceed max allowed size for many-image requests: 2000 pixels"),
            Some(2000)
        );
        assert_eq!(limit("exceeds the maximum number of tokens allowed (1048575)."), Some(1_048_575));
        assert_eq!(
            limit(
                "request too large for gpt-4o in organization org-x on tokens per min (tpm): limit 30000, requested 45000."
            ),
            Some(30000)
        );
        assert_eq!(limit("request contains 52 images, exceeding the maximum of 50 allowed per request"), Some(50));
        assert_eq!(limit("too large for model with 32768 maximum context length"), Some(32768));
        assert_eq!(
            limit("max_total_tokens (172191) must be less than or equal to max_seq_len (131072)"),
            Some(131_072)
        );
        assert_eq!(limit("length of prompt_tokens (143644) must be less than max_seq_len (65536)."), Some(65536));
        assert_eq!(limit("limit 30,000 tokens"), Some(30000));
    }

    #[test]
    fn no_limit_where_none_is_named() {
        assert_eq!(limit("could not process image"), None);
        assert_eq!(limit("image exceeds 5 mb maximum"), None);
        assert_eq!(limit("a > b and nothing else"), None);
    }

    #[test]
    fn paths_and_blocks() {
        let t = "messages.3.content.1.image.source.base64: image exceeds 5 MB maximum";
        assert_eq!(path(t), Some("messages.3.content.1.image.source.base64"));
        assert_eq!(block("messages.3.content.1.image.source.base64").as_deref(), Some("messages.3.content.1"));
        assert_eq!(
            block("messages.16.content.2.tool_result.content.0.image.source.base64").as_deref(),
            Some("messages.16.content.2.tool_result.content.0")
        );
        assert_eq!(block("input[6].output[0].image_url").as_deref(), Some("input[6].output[0]"));
        assert_eq!(block("messages[3].content[1].image_url").as_deref(), Some("messages[3].content[1]"));
        assert_eq!(block("contents[0].parts[1].inline_data").as_deref(), Some("contents[0].parts[1]"));
        assert_eq!(
            path("Invalid value at 'contents[0].parts[1].inline_data.data' (TYPE_BYTES)"),
            Some("contents[0].parts[1].inline_data.data")
        );
        assert_eq!(path("Invalid 'input[284].output[1].image_url'. Expected"), Some("input[284].output[1].image_url"));
        assert_eq!(path("messages: text content blocks must be non-empty"), None);
        assert_eq!(path("api_messages.3.x"), None);
        assert_eq!(block("messages"), None);
    }

    #[test]
    fn reasoning_paths_are_a_messages_not_a_settings() {
        assert!(path_is_reasoning("messages.2.reasoning_details.0.data"));
        assert!(path_is_reasoning("input[3].encrypted_content"));
        assert!(path_is_reasoning("messages.1.content.0.thinking.signature"));
        assert!(!path_is_reasoning(&format!("thinking.{}", "budget_tokens")));
        assert!(!path_is_reasoning("messages.1.content.0.text"));
    }

    #[test]
    fn media_paths() {
        assert!(path_is_media("messages.3.content.1.image.source.base64"));
        assert!(path_is_media("input[6].output[0].image_url"));
        assert!(!path_is_media("messages.1.content.0.thinking.signature"));
    }

    #[test]
    fn call_ids_are_ids_not_words() {
        let t = vec![
            "messages.54: `tool_use` ids were found without `tool_result` blocks immediately after: toolu_01Abc, toolu_02Def".to_string(),
            "No tool call found for function call output with call_id call_abc123.".to_string(),
            "Invalid 'input[107].id': 'fc_08d2'. call_ids toolu_01Abc".to_string(),
        ];
        assert_eq!(call_ids(&t), ["toolu_01Abc", "toolu_02Def", "call_abc123", "fc_08d2"]);
        assert!(call_ids(&["the function call_id is missing".to_string()]).is_empty());
    }
}
