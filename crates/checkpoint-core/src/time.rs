//! Time, one place: days ↔ proleptic Gregorian dates, ms since the epoch as UTC text, and the RFC 3339 / epoch-ms
//! "now" the front ends accept. Used by the archive (zip DOS times), the State Data Source rows (Spark `date` and
//! `timestamp`), the checks' evidence and the CLI's `--now`.

/// Days since 1970-01-01 of a proleptic Gregorian date.
pub fn days_from_civil(y: i64, m: i64, d: i64) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let doy = (153 * (m + if m > 2 { -3 } else { 9 }) + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

/// Civil date (proleptic Gregorian) `(year, month, day)` of a day count since 1970-01-01.
pub fn civil_from_days(z: i64) -> (i64, u32, u32) {
    let z = z + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let y = yoe + era * 400;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let m = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    (if m <= 2 { y + 1 } else { y }, m, d)
}

/// ms since the epoch as UTC text to the second, as Spark prints a timestamp in UTC
/// (`2026-11-30 12:00:00`, see [`crate::state::unsafe_row::format_timestamp`]).
pub fn utc(ms: i64) -> String {
    crate::state::unsafe_row::format_timestamp(ms.div_euclid(1000).saturating_mul(1_000_000), true)
}

/// "Now" as the front ends take it: epoch milliseconds, or RFC 3339 (`2026-11-30T00:00:00Z`, fractions and
/// `±hh:mm` offsets; each field in range, the day within its month). Returns ms since the epoch.
pub fn parse_now(s: &str) -> Result<i64, String> {
    let s = s.trim();
    if let Ok(ms) = s.parse::<i64>() {
        return Ok(ms);
    }
    let err = || format!("not RFC 3339 or epoch ms: {s:?}");
    let b = s.as_bytes();
    if b.len() < 20
        || b[4] != b'-'
        || b[7] != b'-'
        || !(b[10] == b'T' || b[10] == b't' || b[10] == b' ')
        || b[13] != b':'
        || b[16] != b':'
    {
        return Err(err());
    }
    let num = |r: std::ops::Range<usize>| s.get(r).and_then(|x| x.parse::<i64>().ok()).ok_or_else(err);
    let (y, mo, d, h, mi, se) = (num(0..4)?, num(5..7)?, num(8..10)?, num(11..13)?, num(14..16)?, num(17..19)?);
    // RFC 3339 ranges (a leap second 60 is allowed); days beyond the month's length are refused too.
    let leap = y % 4 == 0 && (y % 100 != 0 || y % 400 == 0);
    let month_days = [31, if leap { 29 } else { 28 }, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];
    if !(1..=12).contains(&mo) || d < 1 || d > month_days[(mo - 1) as usize] || h > 23 || mi > 59 || se > 60 {
        return Err(err());
    }
    let mut i = 19;
    let mut ms = 0i64;
    if b.get(i) == Some(&b'.') {
        let start = i + 1;
        i = start;
        while i < b.len() && b[i].is_ascii_digit() {
            i += 1;
        }
        let frac = &s[start..i];
        let f3: String = frac.chars().chain("000".chars()).take(3).collect();
        ms = f3.parse().map_err(|_| err())?;
    }
    let offset_min = match &s[i..] {
        "Z" | "z" => 0,
        tz if tz.len() == 6 && (tz.starts_with('+') || tz.starts_with('-')) => {
            let h: i64 = tz.get(1..3).and_then(|x| x.parse().ok()).ok_or_else(err)?;
            let m: i64 = tz.get(4..6).and_then(|x| x.parse().ok()).ok_or_else(err)?;
            let sign = if tz.starts_with('-') { -1 } else { 1 };
            sign * (h * 60 + m)
        }
        _ => return Err(err()),
    };
    let days = days_from_civil(y, mo, d);
    Ok(((days * 86400 + h * 3600 + mi * 60 + se - offset_min * 60) * 1000) + ms)
}
