//! Time for people and records: RFC 3339 stamps and "4 min ago", with no date
//! crate for two conversions. The overlay, the classifier's reset times,
//! `sessions` and a copy's new records all stamp time the same way.

use std::time::SystemTime;

/// `2026-08-09T14:03:07Z` for a time after 1970 (UTC, whole seconds).
pub fn rfc3339(t: SystemTime) -> String {
    let secs = t.duration_since(SystemTime::UNIX_EPOCH).map_or(0, |d| d.as_secs());
    rfc3339_secs(i64::try_from(secs).unwrap_or(i64::MAX))
}

/// Seconds since the epoch → `YYYY-MM-DDTHH:MM:SSZ` (proleptic Gregorian, UTC):
/// no date crate for one conversion.
pub fn rfc3339_secs(secs: i64) -> String {
    let days = secs.div_euclid(86_400);
    let rem = secs.rem_euclid(86_400);
    // Howard Hinnant's civil_from_days.
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!("{year:04}-{month:02}-{day:02}T{:02}:{:02}:{:02}Z", rem / 3600, rem % 3600 / 60, rem % 60)
}

/// `just now`, `4 min ago`, `3 h ago`, `2 days ago`, relative to `now`.
pub fn ago(t: SystemTime, now: SystemTime) -> String {
    let s = now.duration_since(t).map_or(0, |d| d.as_secs());
    match s {
        0..60 => "just now".into(),
        60..3600 => format!("{} min ago", s / 60),
        3600..86_400 => format!("{} h ago", s / 3600),
        86_400..172_800 => "1 day ago".into(),
        _ => format!("{} days ago", s / 86_400),
    }
}

/// The current time as RFC 3339 UTC (`2026-11-30T04:45:30Z`).
pub fn now_rfc3339() -> String {
    rfc3339(SystemTime::now())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[test]
    fn times() {
        let t = SystemTime::UNIX_EPOCH + Duration::from_secs(1_786_543_387);
        assert_eq!(rfc3339(t), "2026-08-12T14:03:07Z");
        assert_eq!(rfc3339(SystemTime::UNIX_EPOCH), "1970-01-01T00:00:00Z");
        let at = |s: u64| rfc3339(SystemTime::UNIX_EPOCH + std::time::Duration::from_secs(s));
        assert_eq!(at(951_782_400), "2000-02-29T00:00:00Z");
        assert_eq!(at(1_796_013_930), "2026-11-30T04:45:30Z");
        assert_eq!(ago(t, t + Duration::from_secs(59)), "just now");
        assert_eq!(ago(t, t + Duration::from_secs(4 * 60 + 5)), "4 min ago");
        assert_eq!(ago(t, t + Duration::from_secs(3 * 86_400)), "3 days ago");
    }
}
