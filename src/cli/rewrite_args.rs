//! The rewrite flags `preview` and `repair` share.

use clap::Args;

use crate::rewrite::RewriteOptions;

#[derive(Debug, Args, Clone)]
pub struct RewriteArgs {
    /// Keep only the newest N images (user messages and tool results alike);
    /// each older one becomes a note naming its file. 0 drops every image.
    #[arg(long = "max-images", value_name = "N")]
    pub max_images: Option<usize>,
    /// Remove replayed reasoning: OpenAI reasoning items and encrypted content,
    /// Anthropic thinking blocks, Gemini thought signatures. Every visible text,
    /// tool call and tool result stays.
    #[arg(long = "strip-reasoning", conflicts_with = "drop_reasoning_ids")]
    pub strip_reasoning: bool,
    /// For "Item with id 'rs_…' not found": drop the `rs_` ids of reasoning
    /// items so their encrypted content replays self-contained; items with no
    /// encrypted content are removed.
    #[arg(long = "drop-reasoning-ids")]
    pub drop_reasoning_ids: bool,
    /// Re-encode each image over the provider's limits (bytes, pixels per side,
    /// the many-image side limit) to fit, with a note beside it saying what
    /// changed, instead of sending it as it is. Bytes that do not decode are
    /// never fitted: exclude them.
    #[arg(long = "fit")]
    pub fit: bool,
}

impl RewriteArgs {
    pub fn options(&self) -> RewriteOptions {
        RewriteOptions {
            max_images: self.max_images,
            strip_reasoning: self.strip_reasoning,
            drop_reasoning_ids: self.drop_reasoning_ids,
        }
    }

    /// The flags again, for a command printed to the user.
    pub fn repeat(&self) -> String {
        let mut out = Vec::new();
        if let Some(n) = self.max_images {
            out.push(format!("--max-images {n}"));
        }
        if self.strip_reasoning {
            out.push("--strip-reasoning".into());
        }
        if self.drop_reasoning_ids {
            out.push("--drop-reasoning-ids".into());
        }
        if self.fit {
            out.push("--fit".into());
        }
        out.join(" ")
    }
}
