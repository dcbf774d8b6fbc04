//! The session formats by name: what `--format` takes and `--json` prints.
//! Which adapter reads a format and how its agent behaves is the formats
//! layer's (`impl Format` there); the name is everyone's, so it lives here.

/// The session formats session-doctor reads.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Format {
    ClaudeCode,
    Codex,
    Pi,
    GeminiCli,
    Mux,
    Opencode,
    OpenaiChat,
    OpenaiResponses,
    Anthropic,
    Gemini,
    Cline,
    Copilot,
    Kiro,
    QwenCode,
}

impl Format {
    pub const ALL: [Format; 14] = [
        Format::ClaudeCode,
        Format::Codex,
        Format::Pi,
        Format::GeminiCli,
        Format::Mux,
        Format::Opencode,
        Format::OpenaiChat,
        Format::OpenaiResponses,
        Format::Anthropic,
        Format::Gemini,
        Format::Cline,
        Format::Copilot,
        Format::Kiro,
        Format::QwenCode,
    ];

    /// The name users type after `--format` and scripts read in `--json`.
    pub fn name(self) -> &'static str {
        match self {
            Format::ClaudeCode => "claude-code",
            Format::Codex => "codex",
            Format::Pi => "pi",
            Format::GeminiCli => "gemini-cli",
            Format::Mux => "mux",
            Format::Opencode => "opencode",
            Format::OpenaiChat => "openai-chat",
            Format::OpenaiResponses => "openai-responses",
            Format::Anthropic => "anthropic",
            Format::Gemini => "gemini",
            Format::Cline => "cline",
            Format::Copilot => "copilot",
            Format::Kiro => "kiro",
            Format::QwenCode => "qwen-code",
        }
    }

    pub fn from_name(name: &str) -> Option<Format> {
        Format::ALL.into_iter().find(|f| f.name() == name)
    }
}

/// An agent that writes another agent's format as its own, so the format
/// alone does not say whose a session is: what session-doctor tells the user
/// (the agent's name, the command that exports and resumes) must be the
/// writer's. The reader decides it from what it reads; `None` on a session
/// means the format's own agent.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Fork {
    /// Kilo Code CLI (`@kilocode/cli`), opencode's fork: opencode's format in a store of its own.
    Kilo,
}

impl Fork {
    /// Its name in reports.
    pub fn agent(self) -> &'static str {
        match self {
            Fork::Kilo => "Kilo Code CLI",
        }
    }

    /// The command that runs it (and exports, imports and resumes its sessions);
    /// also its name after `sessions --agent`.
    pub const fn command(self) -> &'static str {
        match self {
            Fork::Kilo => "kilo",
        }
    }
}

impl std::fmt::Display for Format {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

impl serde::Serialize for Format {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.name())
    }
}
