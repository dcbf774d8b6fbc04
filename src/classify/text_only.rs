//! A model or route that takes no images at all: every image is refused, valid
//! or not, so the failure is a per-request image limit of zero (`image_limit`,
//! limit 0) whose remedy is an image-free copy (`--max-images 0`), not the
//! exclusion of one attachment.
//!
//! Matched on the normalized haystack (lowercase, `n't` spelled out). A refusal
//! that names one media type ("image media type not supported: image/heic") is
//! about that image, not the route: it stays `media_rejected`.

/// The wordings, each with where it was seen.
const REFUSALS: &[&str] = &[
    // OpenAI Chat Completions for a text-only model (gpt-3.5, gpt-4 on Azure):
    // browser-use/web-ui#274, vllm-project/vllm#11629.
    "image_url is only supported by certain models",
    // OpenRouter (and routes built on it) when no endpoint of the model takes images:
    // JohnnyZ93/oai-compatible-copilot#229, NousResearch/hermes-agent#23411, nexu-io/nexu#733.
    "no endpoints found that support image input",
    // Volcengine's text-only models (deepseek-v3-2): tencent-connect/openclaw-qqbot#111,
    // zai-org/feedback#570 ("Model do not support image input.").
    "model do not support image input",
    "model does not support image input",
    // LM Studio and Ollama for a model without a vision adapter:
    // lmstudio-ai/lmstudio-bug-tracker#362, #908; ollama/ollama#13099.
    "model does not support images",
    // sub2api's words for the same refusal (Wei-Shaw/sub2api#6899).
    "此模型不支持图像输入",
    // A client that checks the model's capabilities first ("Image paste is not available
    // because … does not advertise image input support").
    "does not advertise image input",
    "no image input support",
];

/// Copilot's proxy's words, with no type named after them.
const NO_MEDIA: &str = "image media type not supported";

/// Whether the provider refuses images as such (the model or route takes none).
pub fn refuses_every_image(hay: &str) -> Option<&'static str> {
    if let Some(p) = REFUSALS.iter().find(|p| hay.contains(*p)) {
        return Some(p);
    }
    // DeepSeek's serde error for a content part of a kind other than text: its
    // message parts take `text` only (esengine/DeepSeek-Reasonix#7859: "messages[466]:
    // unknown variant `image_url`, expected `text`"). A list of expected variants
    // that goes on (", `image_url`") is a route that takes images.
    for at in hay.match_indices("unknown variant `image").map(|(i, _)| i) {
        let rest = &hay[at..];
        let Some(e) = rest.find("expected `text`") else { continue };
        let after = &rest[e + "expected `text`".len()..];
        if !(after.starts_with(',') || after.starts_with(" or ")) {
            return Some("unknown variant `image…`, expected `text`");
        }
    }
    // Zhipu's refusal of a content type outside ['text'] (farion1231/cc-switch#4173:
    // "messages.content.type 参数非法，取值范围 ['text']").
    if hay.contains("content.type") && hay.contains("['text']") {
        return Some("content.type outside ['text']");
    }
    // A Go server whose message content is a string only ("json: cannot unmarshal array
    // into Go struct field Message.messages.content of type string"): no content parts at
    // all, so no image part.
    if hay.contains("cannot unmarshal array into") && hay.contains("content of type string") {
        return Some("content of type string only");
    }
    // The same from serde (DeepSeek: "messages[1]: invalid type: sequence, expected a
    // string"): a message's content is text, never a list of parts.
    if hay.contains("messages[") && hay.contains("invalid type: sequence, expected a string") {
        return Some("content a string only");
    }
    // GitHub Copilot's proxy after a switch to a model whose route takes no images
    // (Grok after Claude, microsoft/vscode#263970; copilot-cli#2030). It names no
    // type, and says the same after a switch between two Claude models
    // (vscode-copilot-release#10872), where only some images may be refused: an
    // image-free copy answers both, an exclusion only the second. A message that
    // goes on to name a type (": image/heic", qwen-code#9291) refuses that type only.
    for at in hay.match_indices(NO_MEDIA).map(|(i, _)| i) {
        let after = hay[at + NO_MEDIA.len()..].trim_start();
        if !after.starts_with(':') {
            return Some(NO_MEDIA);
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::refuses_every_image;

    #[test]
    fn a_route_that_takes_no_images() {
        for hay in [
            "invalid content type. image_url is only supported by certain models. | ",
            "failed to deserialize the json body into the target type: messages[466]: unknown variant `image_url`, expected `text` at line 1 column 690848",
            "no endpoints found that support image input | ",
            "request failed: 400 image media type not supported | ",
            "messages.content.type 参数非法，取值范围 ['text'] | ",
            "400 json: cannot unmarshal array into go struct field message.messages.content of type string",
        ] {
            assert!(refuses_every_image(hay).is_some(), "{hay}");
        }
    }

    #[test]
    fn one_refused_type_or_a_longer_list_is_not_the_route() {
        for hay in [
            "400 image media type not supported: image/heic",
            "unknown variant `image`, expected `text`, `image_url` or `input_audio`",
            "unknown variant `image`, expected `text` or `image_url`",
            "could not process image",
        ] {
            assert_eq!(refuses_every_image(hay), None, "{hay}");
        }
    }
}
