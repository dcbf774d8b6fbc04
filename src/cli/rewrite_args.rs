//! The rewrite flags `preview` and `repair` share.

use clap::Args;

use crate::rewrite::RewriteOptions;

#[derive(Debug, Args, Clone)]
pub struct RewriteArgs {
    /// Keep only the newest N images (user messages and tool results alike);
    /// each older one becomes a note naming its file. 0 drops every image: the
    /// cure for a model or route that takes none ("image media type not
    /// supported", "No endpoints found that support image input").
    #[arg(long = "max-images", value_name = "N", allow_hyphen_values = true, value_parser = super::values::image_count::<usize>)]
    pub max_images: Option<usize>,
    /// Remove replayed reasoning: OpenAI reasoning items and encrypted content,
    /// Anthropic thinking blocks, Gemini thought signatures. Every visible text,
    /// tool call and tool result stays. `--strip-reasoning=openai` (or
    /// `anthropic`, `gemini`) removes only that provider's reasoning, for the
    /// provider that refused it (a blob it could not verify); the rest stays.
    #[arg(
        long = "strip-reasoning",
        value_name = "PROVIDER",
        num_args = 0..=1,
        require_equals = true,
        default_missing_value = "all",
        value_parser = ["all", "openai", "anthropic", "gemini"],
        conflicts_with = "drop_reasoning_ids"
    )]
    pub strip_reasoning: Option<String>,
    /// For "Item with id 'rs_…' not found" (or 'msg_…', 'fc_…'): drop the
    /// replayed OpenAI item ids — the `rs_` ids of reasoning items, so their
    /// encrypted content replays self-contained (items with no encrypted
    /// content are removed), and the `msg_`/`fc_` ids of a reply's text and
    /// tool calls where the session keeps them (opencode), so they are sent as
    /// themselves rather than by reference.
    #[arg(long = "drop-reasoning-ids")]
    pub drop_reasoning_ids: bool,
    /// Re-encode each image over the provider's limits (bytes, pixels per side,
    /// the many-image side limit) to fit, with a note beside it saying what
    /// changed, instead of sending it as it is. Bytes that do not decode are
    /// never fitted: exclude them.
    #[arg(long = "fit")]
    pub fit: bool,
    /// For a session over its model's context window ("prompt is too long",
    /// `context_length_exceeded`): replace the bulkiest tool outputs (then
    /// images, oldest first) each by a note saying what it was and that the
    /// original session keeps it, until the estimate fits. Earlier turns go
    /// before the last; every tool call keeps its result. The window is the
    /// one the recorded error states, else --context-tokens, else the model's.
    #[arg(long = "fit-context")]
    pub fit_context: bool,
    /// The model's context window in tokens, for --fit-context (instead of
    /// the one the error states or the model's).
    #[arg(long = "context-tokens", value_name = "N", requires = "fit_context", value_parser = clap::value_parser!(u64).range(1..))]
    pub context_tokens: Option<u64>,
}

impl RewriteArgs {
    pub fn options(&self) -> RewriteOptions {
        RewriteOptions {
            max_images: self.max_images,
            strip_reasoning: self.strip_reasoning.is_some(),
            strip_only: self.strip_only(),
            drop_reasoning_ids: self.drop_reasoning_ids,
        }
    }

    /// What `--fit-context` was asked, when it was.
    pub fn context(&self) -> Option<crate::rewrite::trim::ContextOptions> {
        self.fit_context.then_some(crate::rewrite::trim::ContextOptions { tokens: self.context_tokens })
    }

    /// The family `--strip-reasoning=PROVIDER` names (the parser allows no other).
    fn strip_only(&self) -> Option<&'static str> {
        ["openai", "anthropic", "gemini"].into_iter().find(|f| self.strip_reasoning.as_deref() == Some(*f))
    }

    /// The flags again, for a command printed to the user.
    pub fn repeat(&self) -> String {
        let mut out = Vec::new();
        if let Some(n) = self.max_images {
            out.push(format!("--max-images {n}"));
        }
        match (&self.strip_reasoning, self.strip_only()) {
            (Some(_), Some(family)) => out.push(format!("--strip-reasoning={family}")),
            (Some(_), None) => out.push("--strip-reasoning".into()),
            (None, _) => {}
        }
        if self.drop_reasoning_ids {
            out.push("--drop-reasoning-ids".into());
        }
        if self.fit {
            out.push("--fit".into());
        }
        if self.fit_context {
            out.push("--fit-context".into());
        }
        if let Some(n) = self.context_tokens {
            out.push(format!("--context-tokens {n}"));
        }
        out.join(" ")
    }
}
