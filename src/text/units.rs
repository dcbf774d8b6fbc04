//! Numbers for people: one unit system (decimal: kB, MB, GB, as `ls -h --si`,
//! indicatif's `decimal_bytes` and the providers' own "5 MB") and correct plurals.

/// `601` → `601 B`, `1234567` → `1.2 MB`.
#[allow(clippy::cast_precision_loss, reason = "shown to one decimal: past 2^53 bytes the lost digits are not shown")]
pub fn size(bytes: u64) -> String {
    const UNITS: [&str; 5] = ["B", "kB", "MB", "GB", "TB"];
    let mut v = bytes as f64;
    let mut u = 0;
    while v >= 999.95 && u < UNITS.len() - 1 {
        v /= 1000.0;
        u += 1;
    }
    if u == 0 { format!("{bytes} B") } else { format!("{v:.1} {}", UNITS[u]) }
}

/// An exact byte count with its human size: `7340032 bytes (7.3 MB)`.
pub fn exact_size(bytes: u64) -> String {
    if bytes < 1000 { count(bytes, "byte", "bytes") } else { format!("{bytes} bytes ({})", size(bytes)) }
}

/// `1 attachment`, `2 attachments`, `0 attachments`.
pub fn count(n: u64, one: &str, many: &str) -> String {
    format!("{n} {}", if n == 1 { one } else { many })
}

/// `a` or `an` before `word`, as it is spoken (`an opencode record`, `a codex record`).
pub fn article(word: &str) -> &'static str {
    if word.starts_with(['a', 'e', 'i', 'o', 'u', 'A', 'E', 'I', 'O', 'U']) { "an" } else { "a" }
}

/// How many items of a list prose names before "and N more".
pub const FEW: usize = 5;

/// A list for a sentence: every item when there are few, else the first
/// [`FEW`] and how many more (`a, b, c, d, e and 321 more`): a repair over a
/// broken history may touch hundreds of ids, and a line of 326 ids says nothing.
pub fn first_few<T: std::fmt::Display>(items: &[T]) -> String {
    let shown: Vec<String> = items.iter().take(FEW).map(ToString::to_string).collect();
    if items.len() <= FEW { shown.join(", ") } else { format!("{} and {} more", shown.join(", "), items.len() - FEW) }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn long_lists_say_their_count_and_the_first_few() {
        assert_eq!(first_few(&[1, 2]), "1, 2");
        assert_eq!(first_few(&[1, 2, 3, 4, 5]), "1, 2, 3, 4, 5");
        let many: Vec<u64> = (1..=326).collect();
        assert_eq!(first_few(&many), "1, 2, 3, 4, 5 and 321 more");
    }

    #[test]
    fn sizes_are_decimal() {
        assert_eq!(size(0), "0 B");
        assert_eq!(size(999), "999 B");
        assert_eq!(size(1000), "1.0 kB");
        assert_eq!(size(999_960), "1.0 MB");
        assert_eq!(size(6_291_456), "6.3 MB");
        assert_eq!(size(5_000_000_000), "5.0 GB");
    }

    #[test]
    fn plurals() {
        assert_eq!(count(1, "attachment", "attachments"), "1 attachment");
        assert_eq!(count(0, "entry", "entries"), "0 entries");
        assert_eq!(count(2, "entry", "entries"), "2 entries");
        assert_eq!(exact_size(1), "1 byte");
        assert_eq!(exact_size(7_340_032), "7340032 bytes (7.3 MB)");
    }
}
