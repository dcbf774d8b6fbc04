//! The canonical session model every adapter maps into.
