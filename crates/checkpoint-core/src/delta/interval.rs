//! Delta's retention settings: the `CalendarInterval` strings of `delta.logRetentionDuration` and
//! `delta.deletedFileRetentionDuration`, and their defaults.
//!
//! Mirrors delta-io/delta `DeltaConfigs.scala` (`parseCalendarInterval`, `isValidIntervalConfigValue`):
//! `interval 30 days`, `30 days`, `interval 1 week 2 hours`; units week, day, hour, minute, second,
//! millisecond, microsecond (singular or plural, any case); months and years are refused, as Delta refuses
//! them for these settings.

/// `delta.logRetentionDuration`'s default: `interval 30 days`.
pub const DEFAULT_LOG_RETENTION_MS: i64 = 30 * DAY_MS;
/// `delta.deletedFileRetentionDuration`'s default: `interval 1 week`.
pub const DEFAULT_DELETED_FILE_RETENTION_MS: i64 = 7 * DAY_MS;
/// `delta.checkpointRetentionDuration`'s default: `interval 2 days`.
pub const DEFAULT_CHECKPOINT_RETENTION_MS: i64 = 2 * DAY_MS;
/// One day in ms.
pub const DAY_MS: i64 = 86_400_000;

/// The key of the log retention setting.
pub const LOG_RETENTION_KEY: &str = "delta.logRetentionDuration";
/// The key of the deleted-file retention setting.
pub const DELETED_FILE_RETENTION_KEY: &str = "delta.deletedFileRetentionDuration";

/// Parses a Delta interval setting into ms; `None` when Delta would refuse it.
pub fn parse_interval_ms(s: &str) -> Option<i64> {
    let lower = s.trim().to_ascii_lowercase();
    let body = lower.strip_prefix("interval").map(str::trim_start).unwrap_or(&lower);
    let words: Vec<&str> = body.split_whitespace().collect();
    if words.is_empty() || !words.len().is_multiple_of(2) {
        return None;
    }
    let mut total: i64 = 0;
    for pair in words.chunks(2) {
        let n: i64 = pair[0].parse().ok()?;
        let unit = pair[1].trim_end_matches('s');
        let ms: i64 = match unit {
            "week" => 7 * DAY_MS,
            "day" => DAY_MS,
            "hour" => 3_600_000,
            "minute" => 60_000,
            "second" => 1000,
            "millisecond" => 1,
            "microsecond" => 0,
            _ => return None,
        };
        total = total.checked_add(n.checked_mul(ms)?)?;
    }
    (total >= 0).then_some(total)
}

/// An interval in plain words: `30 days`, `20 seconds`, `36 hours`.
pub fn describe_ms(ms: i64) -> String {
    let plural = |n: i64, u: &str| if n == 1 { format!("1 {u}") } else { format!("{n} {u}s") };
    if ms % DAY_MS == 0 {
        plural(ms / DAY_MS, "day")
    } else if ms % 3_600_000 == 0 {
        plural(ms / 3_600_000, "hour")
    } else if ms % 60_000 == 0 {
        plural(ms / 60_000, "minute")
    } else if ms % 1000 == 0 {
        plural(ms / 1000, "second")
    } else {
        format!("{ms} ms")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_delta_intervals() {
        assert_eq!(parse_interval_ms("interval 30 days"), Some(30 * DAY_MS));
        assert_eq!(parse_interval_ms("interval 1 week"), Some(7 * DAY_MS));
        assert_eq!(parse_interval_ms("7 days"), Some(7 * DAY_MS));
        assert_eq!(parse_interval_ms("interval 20 seconds"), Some(20_000));
        assert_eq!(parse_interval_ms("INTERVAL 1 day 12 hours"), Some(36 * 3_600_000));
        assert_eq!(parse_interval_ms("interval 1 month"), None);
        assert_eq!(parse_interval_ms("soon"), None);
        assert_eq!(describe_ms(30 * DAY_MS), "30 days");
        assert_eq!(describe_ms(20_000), "20 seconds");
    }
}
