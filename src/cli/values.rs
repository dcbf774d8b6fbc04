//! The values a flag takes, from the one vocabulary each comes from: `--format`
//! from [`Format::ALL`], `--provider` from the provider vocabulary
//! ([`Rules::names`]), `--agent` from the agents `sessions` finds, `--target`
//! from the preview dialects. Each parser checks a value at parse time and
//! tells clap the names, so `--help` lists them and shell completion offers
//! them (not file names); the help text and the error list the same names.

use std::ffi::OsStr;

use clap::builder::{PossibleValue, TypedValueParser};
use clap::error::ErrorKind;

use crate::media::rules::Rules;
use crate::model::Format;

/// A flag's value: parsed by `parse`, completed from `names`.
#[derive(Clone, Copy)]
pub struct Vocabulary<T> {
    names: fn() -> Vec<&'static str>,
    parse: fn(&str) -> Result<T, String>,
}

impl<T: Clone + Send + Sync + 'static> TypedValueParser for Vocabulary<T> {
    type Value = T;

    fn parse_ref(&self, cmd: &clap::Command, arg: Option<&clap::Arg>, value: &OsStr) -> Result<T, clap::Error> {
        let arg = arg.map(ToString::to_string).unwrap_or_else(|| "a value".into());
        let Some(s) = value.to_str() else {
            return Err(clap::Error::raw(ErrorKind::InvalidUtf8, format!("invalid UTF-8 in {arg}\n")).with_cmd(cmd));
        };
        (self.parse)(s).map_err(|why| {
            clap::Error::raw(ErrorKind::InvalidValue, format!("invalid value '{s}' for '{arg}': {why}\n")).with_cmd(cmd)
        })
    }

    fn possible_values(&self) -> Option<Box<dyn Iterator<Item = PossibleValue> + '_>> {
        Some(Box::new((self.names)().into_iter().map(PossibleValue::new)))
    }
}

/// `--format`: `auto` (`None`) or one format.
#[derive(Clone, Copy, Debug)]
pub struct FormatChoice(pub Option<Format>);

pub fn format() -> Vocabulary<FormatChoice> {
    Vocabulary {
        names: || std::iter::once("auto").chain(Format::ALL.map(Format::name)).collect(),
        parse: |s| {
            if s == "auto" {
                return Ok(FormatChoice(None));
            }
            Format::from_name(s).map(|f| FormatChoice(Some(f))).ok_or_else(|| {
                format!("unknown format; expected auto or one of: {}", Format::ALL.map(Format::name).join(", "))
            })
        },
    }
}

/// `--provider` of the commands that judge media: `generic` or a provider of the
/// vocabulary, by name or alias (as the rules take it), kept as typed.
pub fn provider() -> Vocabulary<String> {
    Vocabulary {
        names: Rules::names,
        parse: |s| match Rules::builtin(s) {
            Some(_) => Ok(s.to_string()),
            None => Err(format!("unknown provider; expected one of: {}", Rules::names().join(", "))),
        },
    }
}

/// `classify --provider`: the provider that returned an error, by name or alias
/// (no `generic`: an error comes from a real service), kept as typed.
pub fn error_provider() -> Vocabulary<String> {
    Vocabulary {
        names: || crate::provider::NAMES.to_vec(),
        parse: |s| match crate::provider::canonical(s) {
            Some(_) => Ok(s.to_string()),
            None => Err(format!("unknown provider; expected one of: {}", crate::provider::NAMES.join(", "))),
        },
    }
}

/// `--target` of `preview`: `native` (`None`) or one dialect.
#[derive(Clone, Copy, Debug)]
pub struct Target(pub Option<crate::request::Dialect>);

pub fn target() -> Vocabulary<Target> {
    use crate::request::Dialect;
    const DIALECTS: [&str; 4] = ["anthropic", "openai-chat", "openai-responses", "gemini"];
    Vocabulary {
        names: || std::iter::once("native").chain(DIALECTS).collect(),
        parse: |s| {
            if s == "native" {
                return Ok(Target(None));
            }
            Dialect::from_name(s)
                .map(|d| Target(Some(d)))
                .ok_or_else(|| format!("unknown target; expected native or one of: {}", DIALECTS.join(", ")))
        },
    }
}

/// `--max-images N`: a count, 0 or more. `-1` is taken as the value (not as
/// a flag clap would tell the user to write as `-- -1`) and refused as one.
pub fn image_count<T: std::str::FromStr>(s: &str) -> Result<T, String> {
    s.parse().map_err(|_| format!("`{s}` is not a number of images: give 0 or more (0 drops every image)"))
}

/// `--agent`: an agent whose sessions can be found (`claude`, `gemini` for short).
pub fn agent() -> Vocabulary<&'static str> {
    use crate::discover::{AGENTS, agent_name};
    Vocabulary {
        names: || AGENTS.to_vec(),
        parse: |s| agent_name(s).ok_or_else(|| format!("unknown agent; expected one of: {}", AGENTS.join(", "))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn provider_takes_names_and_aliases_and_lists_the_vocabulary() {
        let p = provider();
        assert!((p.parse)("claude").is_ok() && (p.parse)("generic").is_ok() && (p.parse)("vertex").is_ok());
        let err = (p.parse)("bogus").unwrap_err();
        let names: Vec<String> = p.possible_values().expect("names").map(|v| v.get_name().to_string()).collect();
        assert_eq!(names, Rules::names());
        assert!(err.ends_with(&Rules::names().join(", ")), "{err}");
    }
}
