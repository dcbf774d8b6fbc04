//! Which model the next request goes to.

use super::Session;

impl Session {
    /// The model the next request goes to: one chosen after the latest entries
    /// ([`Session::model`]), else the one the latest entry names. A user turn
    /// sent after a switch names the new model (the agent's context) though no
    /// reply came back from it: that model has accepted nothing yet.
    pub fn next_model(&self) -> Option<&str> {
        self.model.as_deref().or_else(|| self.entries.iter().rev().find_map(|e| e.model.as_deref()))
    }
}
