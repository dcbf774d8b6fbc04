//! When a limit lifts, as the provider or agent says it: "Your limit will reset at 9am
//! (America/Chicago)", "resets 1:30am (Asia/Dhaka)", "Please try again in 1.98s", Gemini's
//! `retryDelay: "51s"`, Claude Code's `usage limit reached|1762952400` (a Unix time).
//!
//! Forward scans with ASCII-case-insensitive `find` on the original text (lowercasing ASCII
//! keeps byte offsets), so the value is quoted in the provider's own case.

// One date conversion for the crate (`discover` formats file times the same way).
use crate::clock::rfc3339_secs as rfc3339;

use serde::Serialize;

/// A reset time and/or a wait, each quoted as the text gives it.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct Resets {
    /// A clock time or date ("9am (America/Chicago)"); a Unix time is given in UTC, RFC 3339.
    pub at: Option<String>,
    /// A wait ("1.984999999s", "17 seconds", "2 days 3 hours").
    pub within: Option<String>,
}

/// Phrases followed by a reset time.
const AT: &[&str] = &["will reset at ", "resets at ", "reset at ", "resets on ", "resets · ", "resets "];
/// Phrases followed by a wait.
const IN: &[&str] = &[
    "try again in ",
    "retry in ",
    "retry after ",
    "resets in ",
    "reset after ",
    "reset in ",
    "\"retrydelay\":\"",
    "\"retrydelay\": \"",
    "'retrydelay': '",
];
/// Longest value quoted.
const MAX_VALUE: usize = 48;

/// The reset time and wait `texts` name, if any.
pub fn find(texts: &[&str]) -> Option<Resets> {
    let mut r = Resets::default();
    for t in texts {
        let lower = t.to_ascii_lowercase();
        if r.at.is_none() {
            r.at = epoch_after_bar(t, &lower).or_else(|| AT.iter().find_map(|k| value_after(t, &lower, k)));
        }
        if r.within.is_none() {
            r.within = IN.iter().find_map(|k| value_after(t, &lower, k));
        }
    }
    (r.at.is_some() || r.within.is_some()).then_some(r)
}

/// The value after keyword `k`: up to the end of the sentence (". ", ",", ";", a newline or
/// a quote), starting with a digit ("9am", "1.98s"), so "resets here" is no reset time.
fn value_after(t: &str, lower: &str, k: &str) -> Option<String> {
    let mut from = 0;
    while let Some(i) = lower[from..].find(k) {
        let start = from + i + k.len();
        from = start;
        let rest = &t[start..];
        if !rest.starts_with(|c: char| c.is_ascii_digit()) {
            continue;
        }
        let mut end = rest.len();
        // A backslash: the escaped quote of a body quoted past parsing (`after 161h.\"`).
        for stop in [". ", ".\n", ",", ";", "\n", "\"", "\\", "'", "|", " ·", " -", " —"] {
            if let Some(p) = rest.find(stop) {
                end = end.min(p);
            }
        }
        let mut v = rest[..end].trim().trim_end_matches('.').trim();
        if v.len() > MAX_VALUE {
            let mut cut = MAX_VALUE;
            while !v.is_char_boundary(cut) {
                cut -= 1;
            }
            v = v[..cut].trim_end();
        }
        if !v.is_empty() {
            return Some(v.to_string());
        }
    }
    None
}

impl Resets {
    /// The wait in seconds, when it is a number of units ("1.98s", "17 seconds", "2
    /// days 3 hours", "86400", a bare number being seconds as in `Retry-After`).
    pub fn wait_secs(&self) -> Option<f64> {
        let w = self.within.as_deref()?.to_ascii_lowercase();
        let mut total = 0.0;
        let mut rest = w.trim();
        let mut any = false;
        while !rest.is_empty() {
            let n = rest.find(|c: char| !(c.is_ascii_digit() || c == '.')).unwrap_or(rest.len());
            let value: f64 = rest[..n].parse().ok()?;
            rest = rest[n..].trim_start();
            let u = rest.find(|c: char| !c.is_ascii_alphabetic()).unwrap_or(rest.len());
            let unit = match &rest[..u] {
                "ms" | "msec" | "millisecond" | "milliseconds" => 0.001,
                "" | "s" | "sec" | "secs" | "second" | "seconds" => 1.0,
                "m" | "min" | "mins" | "minute" | "minutes" => 60.0,
                "h" | "hr" | "hrs" | "hour" | "hours" => 3600.0,
                "d" | "day" | "days" => 86400.0,
                _ => return None,
            };
            total += value * unit;
            any = true;
            rest = rest[u..].trim_start_matches([' ', ',']).trim_start_matches("and ").trim_start();
        }
        any.then_some(total)
    }
}

/// Claude Code's `limit reached|1762952400`: the Unix time after the bar, in UTC.
fn epoch_after_bar(t: &str, lower: &str) -> Option<String> {
    let i = lower.find("limit reached|")?;
    let digits: String = t[i + "limit reached|".len()..].chars().take_while(char::is_ascii_digit).collect();
    (digits.len() >= 9).then(|| digits.parse::<i64>().ok()).flatten().map(rfc3339)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(t: &str) -> Option<String> {
        find(&[t]).and_then(|r| r.at)
    }
    fn within(t: &str) -> Option<String> {
        find(&[t]).and_then(|r| r.within)
    }

    #[test]
    fn reset_times_as_written() {
        assert_eq!(
            at("Claude usage limit reached. Your limit will reset at 9am (America/Chicago).").as_deref(),
            Some("9am (America/Chicago)")
        );
        assert_eq!(at("You've hit your limit · resets 1:30am (Asia/Dhaka)").as_deref(), Some("1:30am (Asia/Dhaka)"));
        assert_eq!(at("Limits will reset at 9:30 AM.  View your usage details.").as_deref(), Some("9:30 AM"));
        assert_eq!(at("Claude AI usage limit reached|1762952400").as_deref(), Some("2025-11-12T13:00:00Z"));
        assert_eq!(at("nothing resets here"), None);
    }

    #[test]
    fn waits_as_written() {
        assert_eq!(within("Please try again in 1.984999999s. Need more tokens?").as_deref(), Some("1.984999999s"));
        assert_eq!(within("Rate limit is exceeded. Try again in 17 seconds.; retrying").as_deref(), Some("17 seconds"));
        assert_eq!(within(r#"{"@type":"x.RetryInfo","retryDelay":"51s"}"#).as_deref(), Some("51s"));
        assert_eq!(within("try again in a moment"), None);
    }

    #[test]
    fn waits_in_seconds() {
        let secs = |t: &str| find(&[t]).and_then(|r| r.wait_secs());
        assert_eq!(secs("Please try again in 1.5s."), Some(1.5));
        assert_eq!(secs("Please retry after 86400 seconds. Please go here"), Some(86400.0));
        assert_eq!(secs("try again in 2 days 3 hours"), Some(2.0 * 86400.0 + 3.0 * 3600.0));
        assert_eq!(secs("try again in 1m30s"), Some(90.0));
        assert_eq!(secs("retry after 120"), Some(120.0));
        assert_eq!(secs("try again in 5 fortnights"), None);
        // Gemini CLI's words, and the same in a body quoted past parsing.
        assert_eq!(secs("Your quota will reset after 2h24m55s."), Some(2.0 * 3600.0 + 24.0 * 60.0 + 55.0));
        assert_eq!(secs(r#"\"message\": \"… Your quota will reset after 4s.\", \"status\""#), Some(4.0));
    }

    #[test]
    fn epoch_conversion() {
        assert_eq!(rfc3339(0), "1970-01-01T00:00:00Z");
        assert_eq!(rfc3339(951_782_400), "2000-02-29T00:00:00Z");
    }
}
