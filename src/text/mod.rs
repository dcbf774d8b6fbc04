//! Text for people, the lowest layer: untrusted strings made safe to print
//! ([`sanitize()`]) or to paste into a shell ([`shell`]), and numbers with their
//! units ([`units`]). Every layer above prints through these.

pub mod sanitize;
pub mod shell;
pub mod units;

pub use sanitize::{markup_escape, sanitize, sanitize_keeping_lines, sanitize_path};
pub use shell::shell_quote;
