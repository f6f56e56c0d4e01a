//! Canonical text of State Data Source JSON rows: keys sorted, numbers by value, timestamps as instants. One
//! copy for every test that compares our rows with Spark's (`state_golden`, `state_change_feed` here; the web
//! crate's `tests/state.rs` includes this file by path). Only `std` and `serde_json`, so it builds for wasm too.

use serde_json::Value;
use std::collections::BTreeMap;

/// Days since the epoch of a proleptic Gregorian date.
#[allow(dead_code, reason = "each test crate uses its own part of this file")]
pub fn days_from_civil(y: i64, m: i64, d: i64) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = (m + 9) % 12;
    let doy = (153 * mp + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

/// `yyyy-MM-ddTHH:mm:ss[.fff…][Z|±HH:mm]` → microseconds since the epoch (with zone) or local (without).
#[allow(dead_code, reason = "each test crate uses its own part of this file")]
pub fn parse_timestamp(s: &str) -> Option<(i64, bool)> {
    let b = s.as_bytes();
    if b.len() < 19 || b[4] != b'-' || b[7] != b'-' || b[10] != b'T' || b[13] != b':' || b[16] != b':' {
        return None;
    }
    let num = |r: std::ops::Range<usize>| s.get(r)?.parse::<i64>().ok();
    let (y, mo, d, h, mi, se) = (num(0..4)?, num(5..7)?, num(8..10)?, num(11..13)?, num(14..16)?, num(17..19)?);
    let mut rest = &s[19..];
    let mut frac_us = 0i64;
    if let Some(r) = rest.strip_prefix('.') {
        let digits: String = r.chars().take_while(|c| c.is_ascii_digit()).collect();
        rest = &r[digits.len()..];
        let mut padded = digits.clone();
        padded.truncate(6);
        while padded.len() < 6 {
            padded.push('0');
        }
        frac_us = padded.parse().ok()?;
    }
    let (offset_s, zoned) = match rest {
        "" => (0, false),
        "Z" => (0, true),
        z if z.len() == 6 && (z.starts_with('+') || z.starts_with('-')) => {
            let sign = if z.starts_with('-') { -1 } else { 1 };
            (sign * (z[1..3].parse::<i64>().ok()? * 3600 + z[4..6].parse::<i64>().ok()? * 60), true)
        }
        _ => return None,
    };
    let secs = days_from_civil(y, mo, d) * 86_400 + h * 3600 + mi * 60 + se - offset_s;
    Some((secs * 1_000_000 + frac_us, zoned))
}

/// Canonical text of a JSON value: keys sorted, numbers by value, timestamps as instants.
#[allow(dead_code, reason = "each test crate uses its own part of this file")]
pub fn canon(v: &Value) -> String {
    match v {
        Value::Object(m) => {
            let sorted: BTreeMap<&String, String> = m.iter().map(|(k, v)| (k, canon(v))).collect();
            let parts: Vec<String> = sorted.iter().map(|(k, v)| format!("{k:?}:{v}")).collect();
            format!("{{{}}}", parts.join(","))
        }
        Value::Array(a) => format!("[{}]", a.iter().map(canon).collect::<Vec<_>>().join(",")),
        Value::Number(n) => format!("n:{}", n.as_f64().unwrap_or(f64::NAN)),
        Value::String(s) => match parse_timestamp(s) {
            Some((us, zoned)) => format!("ts{}:{us}", if zoned { "" } else { "_ntz" }),
            None => format!("{s:?}"),
        },
        other => other.to_string(),
    }
}

/// The canonical text of a `statestore` row: its key, value and partition id.
#[allow(dead_code, reason = "each test crate uses its own part of this file")]
pub fn row_canon(r: &Value) -> String {
    canon(&serde_json::json!({"key": r["key"], "value": r["value"], "partition_id": r["partition_id"]}))
}

/// A multiset of canonical rows (row → count).
#[allow(dead_code, reason = "each test crate uses its own part of this file")]
pub fn multiset(rows: impl IntoIterator<Item = String>) -> BTreeMap<String, usize> {
    let mut m = BTreeMap::new();
    for r in rows {
        *m.entry(r).or_default() += 1;
    }
    m
}
