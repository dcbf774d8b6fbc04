//! Refs: the stable, printable name of one attachment.
//!
//! `L<line>.<n>` is the n-th attachment (1-based, in document order) on that
//! line. Sessions are append-only, so a ref never changes when the agent writes
//! more. `sha256:<hex prefix>` names every attachment with those bytes.

use std::fmt;

use super::Attachment;

/// A parsed ref as a user typed it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Ref {
    At { line: u64, index: u32 },
    Sha256(String),
}

#[derive(Debug, PartialEq, Eq)]
pub struct RefError(String);

impl fmt::Display for RefError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "`{}` is not a ref: expected L<line>.<n> (as printed by `scan`) or sha256:<hex prefix of at least 6>",
            self.0
        )
    }
}

impl std::error::Error for RefError {}

impl Ref {
    /// The ref of the `index`-th (1-based) attachment on `line`.
    pub fn format(line: u64, index: u32) -> String {
        format!("L{line}.{index}")
    }

    pub fn parse(s: &str) -> Result<Ref, RefError> {
        let err = || RefError(s.to_string());
        if let Some(hex) = s.strip_prefix("sha256:") {
            let hex = hex.to_ascii_lowercase();
            if hex.len() < 6 || hex.len() > 64 || !hex.bytes().all(|b| b.is_ascii_hexdigit()) {
                return Err(err());
            }
            return Ok(Ref::Sha256(hex));
        }
        let rest = s.strip_prefix('L').or_else(|| s.strip_prefix('l')).ok_or_else(err)?;
        let (line, index) = rest.split_once('.').ok_or_else(err)?;
        let line = line.parse().map_err(|_| err())?;
        let index = index.parse().map_err(|_| err())?;
        if line == 0 || index == 0 {
            return Err(err());
        }
        Ok(Ref::At { line, index })
    }

    /// Does this ref name the attachment?
    pub fn matches(&self, a: &Attachment) -> bool {
        match self {
            Ref::At { .. } => a.reference == self.to_string(),
            Ref::Sha256(prefix) => a.sha256.as_deref().is_some_and(|h| h.starts_with(prefix.as_str())),
        }
    }
}

impl fmt::Display for Ref {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Ref::At { line, index } => f.write_str(&Ref::format(*line, *index)),
            Ref::Sha256(p) => write!(f, "sha256:{p}"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_and_prints() {
        assert_eq!(Ref::parse("L12.3"), Ok(Ref::At { line: 12, index: 3 }));
        assert_eq!(Ref::parse("L12.3").unwrap().to_string(), "L12.3");
        assert_eq!(Ref::parse("sha256:ABCDEF01"), Ok(Ref::Sha256("abcdef01".into())));
        for bad in ["12.3", "L0.1", "L1.0", "L1", "sha256:ab", "sha256:xyzxyz", "L1.2.3"] {
            assert!(Ref::parse(bad).is_err(), "{bad}");
        }
    }
}
