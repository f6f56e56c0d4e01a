//! Values as Spark shows them in text (`Cast` to string, as the State Data Source's rows print in `show()` and
//! JSON): floats and doubles, decimals, dates and timestamps (proleptic Gregorian, microseconds), calendar,
//! year-month and day-time intervals, binary as base64. Used by the UnsafeRow decoder ([`super::unsafe_row`]).

use crate::time::civil_from_days;
use serde_json::{Number, Value};

pub(crate) fn float_value(x: f32) -> Value {
    if x.is_nan() {
        Value::String("NaN".into())
    } else if x.is_infinite() {
        Value::String(if x > 0.0 { "Infinity" } else { "-Infinity" }.into())
    } else {
        // Through the shortest decimal form, so 0.1f stays 0.1 (as Java's Float.toString prints it).
        let d: f64 = format!("{x}").parse().unwrap_or(f64::from(x));
        Number::from_f64(d).map(Value::Number).unwrap_or(Value::Null)
    }
}

pub(crate) fn double_value(x: f64) -> Value {
    if x.is_nan() {
        Value::String("NaN".into())
    } else if x.is_infinite() {
        Value::String(if x > 0.0 { "Infinity" } else { "-Infinity" }.into())
    } else {
        Number::from_f64(x).map(Value::Number).unwrap_or(Value::Null)
    }
}

/// Plain decimal text of `unscaled × 10^-scale` (Java `BigDecimal.toPlainString`).
pub fn decimal_string(unscaled: i128, scale: u8) -> String {
    let neg = unscaled < 0;
    let digits = unscaled.unsigned_abs().to_string();
    let s = scale as usize;
    let body = if s == 0 {
        digits
    } else if digits.len() > s {
        format!("{}.{}", &digits[..digits.len() - s], &digits[digits.len() - s..])
    } else {
        format!("0.{}{}", "0".repeat(s - digits.len()), digits)
    };
    if neg {
        format!("-{body}")
    } else {
        body
    }
}

/// A finite double's text as Java's `Double.toString` writes it, which is what Spark's `toJSON` writes
/// (Jackson's `writeNumber(double)`): the shortest digits that read back as the same double, plain between
/// 10^-3 and 10^7 (`3.0`, `0.001`, `1234567.5`), else `d.dddE<n>` (`1.0E-300`, `1.0E7`, `-2.5E-4`). Real Spark
/// 4.1.4 rows: `"sum":1.0E-300`. (Java before 19 can give a longer form for a few doubles, `2.0000000000000002E23`
/// for 2e23, JDK-4511638; Spark 4 runs on 17 and 21.)
pub(crate) fn java_double_string(x: f64) -> String {
    // Java never picks one digit: of the two-digit decimals, the one nearest the double (Double.MIN_VALUE is
    // 4.9E-324, not 5.0E-324).
    let shortest = format!("{x:e}");
    let sci = if shortest.trim_start_matches('-').contains('.') { shortest } else { format!("{x:.1e}") };
    java_layout(&sci, x.abs() >= 1e-3 && x.abs() < 1e7)
}

/// [`java_double_string`] for a float (`Float.toString`: the shortest digits of the float, same layout).
pub(crate) fn java_float_string(x: f32) -> String {
    let shortest = format!("{x:e}");
    let sci = if shortest.trim_start_matches('-').contains('.') { shortest } else { format!("{x:.1e}") };
    java_layout(&sci, x.abs() >= 1e-3 && x.abs() < 1e7)
}

/// Java's layout of a scientific form (`-1.25e-4`: sign, digits, exponent of the first digit), trailing zeros
/// of the digits dropped (`1.0e-1` is `0.1`).
fn java_layout(sci: &str, plain: bool) -> String {
    let (mantissa, exp) = sci.split_once('e').unwrap_or((sci, "0"));
    let exp: i64 = exp.parse().unwrap_or(0);
    let (sign, mantissa) = mantissa.strip_prefix('-').map_or(("", mantissa), |m| ("-", m));
    let all: String = mantissa.chars().filter(char::is_ascii_digit).collect();
    let kept = all.trim_end_matches('0').len().max(1);
    let digits = &all[..kept];
    if digits.bytes().all(|d| d == b'0') {
        return format!("{sign}0.0");
    }
    let (first, rest) = digits.split_at(1);
    if !plain {
        let rest = if rest.is_empty() { "0" } else { rest };
        return format!("{sign}{first}.{rest}E{exp}");
    }
    if exp < 0 {
        return format!("{sign}0.{}{digits}", "0".repeat((-exp - 1) as usize));
    }
    let int_len = exp as usize + 1;
    if digits.len() <= int_len {
        format!("{sign}{digits}{}.0", "0".repeat(int_len - digits.len()))
    } else {
        format!("{sign}{}.{}", &digits[..int_len], &digits[int_len..])
    }
}

/// A decimal's text as Java's `BigDecimal.toString` writes it, which is what Spark's `toJSON` writes (Jackson's
/// `writeNumber(BigDecimal)` without `WRITE_BIGDECIMAL_AS_PLAIN`): every digit of the scale (`3.00` of a
/// decimal(5,2)), in scientific notation when the adjusted exponent is below -6 (`0E-10`, `1.23E-8` of a
/// decimal(38,10)). Always a valid JSON number. Spark's scales are never negative.
pub(crate) fn java_decimal_string(unscaled: i128, scale: u8) -> String {
    let digits = unscaled.unsigned_abs().to_string();
    let adjusted = digits.len() as i64 - 1 - i64::from(scale);
    if scale == 0 || adjusted >= -6 {
        return decimal_string(unscaled, scale);
    }
    let sign = if unscaled < 0 { "-" } else { "" };
    let (first, rest) = digits.split_at(1);
    let point = if rest.is_empty() { "" } else { "." };
    format!("{sign}{first}{point}{rest}E{adjusted}")
}

/// A decimal as JSON: a number when it is one exactly (an integer that fits 64 bits, or a double whose value is
/// the decimal's: `-1.50` is -1.5), else its exact digits as a string (`"100000000000000000003.0000000007"` of a
/// decimal(38,10)), never a rounded double: serde_json has no arbitrary-precision numbers here, and Spark's
/// `toJSON` writes every digit (Jackson's `BigDecimal`).
pub(crate) fn decimal_value(unscaled: i128, scale: u8) -> Value {
    if scale == 0 {
        if let Ok(i) = i64::try_from(unscaled) {
            return Value::from(i);
        }
    }
    let s = decimal_string(unscaled, scale);
    match s.parse::<f64>().ok().and_then(Number::from_f64) {
        Some(n) if n.as_f64().is_some_and(|f| plain_digits(&f.to_string()) == plain_digits(&s)) => Value::Number(n),
        _ => Value::String(s),
    }
}

/// A plain decimal string without the zeros that do not change its value (`-1.50` → `-1.5`, `2.0` → `2`).
fn plain_digits(s: &str) -> &str {
    if s.contains('.') {
        s.trim_end_matches('0').trim_end_matches('.')
    } else {
        s
    }
}

/// Year as Java's `uuuu` pattern prints it: 4 digits, a sign beyond.
pub(crate) fn format_year(y: i64) -> String {
    if y > 9999 {
        format!("+{y}")
    } else if y < 0 {
        format!("-{:04}", -y)
    } else {
        format!("{y:04}")
    }
}

/// `yyyy-MM-dd` of a Spark `date` (days since the epoch).
pub fn format_date(days: i64) -> String {
    let (y, m, d) = civil_from_days(days);
    format!("{}-{m:02}-{d:02}", format_year(y))
}

/// [`format_timestamp`] appended to `out` without intermediate allocations.
pub(crate) fn push_timestamp(micros: i64, utc: bool, out: &mut String) {
    let millis = micros.div_euclid(1000);
    let secs = millis.div_euclid(1000);
    let ms = millis.rem_euclid(1000);
    let sod = secs.rem_euclid(86_400);
    let (y, m, d) = civil_from_days(secs.div_euclid(86_400));
    if !(0..=9999).contains(&y) {
        out.push_str(&format_year(y));
    }
    // `yyyy-MM-ddTHH:mm:ss.SSS` (the year when it has 4 digits) and the zone, as one ASCII run.
    let two = |v: i64| [b'0' + (v / 10 % 10) as u8, b'0' + (v % 10) as u8];
    let y4 = if (0..=9999).contains(&y) { y } else { 0 };
    let (y1, y2) = (two(y4 / 100), two(y4 % 100));
    let (mo, da) = (two(i64::from(m)), two(i64::from(d)));
    let (h, mi, se) = (two(sod / 3600), two((sod / 60) % 60), two(sod % 60));
    let ms2 = two(ms % 100);
    let t = [
        y1[0],
        y1[1],
        y2[0],
        y2[1],
        b'-',
        mo[0],
        mo[1],
        b'-',
        da[0],
        da[1],
        b'T',
        h[0],
        h[1],
        b':',
        mi[0],
        mi[1],
        b':',
        se[0],
        se[1],
        b'.',
        b'0' + (ms / 100) as u8,
        ms2[0],
        ms2[1],
        b'Z',
    ];
    let from = if (0..=9999).contains(&y) { 0 } else { 4 };
    let t = if utc { &t[from..] } else { &t[from..t.len() - 1] };
    out.push_str(std::str::from_utf8(t).unwrap_or(""));
}

/// A Spark timestamp (microseconds since the epoch) as toJSON writes it: `yyyy-MM-dd'T'HH:mm:ss.SSS` plus `Z`
/// when `utc` (timestamp, rendered in UTC), nothing for timestamp_ntz. Sub-millisecond digits are dropped.
pub fn format_timestamp(micros: i64, utc: bool) -> String {
    let mut s = String::with_capacity(24);
    push_timestamp(micros, utc, &mut s);
    s
}

/// Seconds with up to 6 decimals, trailing zeros stripped (`BigDecimal.valueOf(micros, 6).stripTrailingZeros
/// .toPlainString`).
pub(crate) fn plain_seconds(micros: i128) -> String {
    let s = decimal_string(micros, 6);
    if s.contains('.') {
        s.trim_end_matches('0').trim_end_matches('.').to_string()
    } else {
        s
    }
}

/// Spark's `CalendarInterval.toString` (e.g. `1 years 2 months 3 days 4 hours 5.000006 seconds`).
pub fn calendar_interval_string(months: i32, days: i32, micros: i64) -> String {
    if months == 0 && days == 0 && micros == 0 {
        return "0 seconds".into();
    }
    let mut parts: Vec<String> = Vec::new();
    let mut unit = |v: i64, u: &str| {
        if v != 0 {
            parts.push(format!("{v} {u}"));
        }
    };
    if months != 0 {
        unit(i64::from(months / 12), "years");
        unit(i64::from(months % 12), "months");
    }
    unit(i64::from(days), "days");
    let mut secs_part = None;
    if micros != 0 {
        let mut rest = i128::from(micros);
        unit((rest / 3_600_000_000) as i64, "hours");
        rest %= 3_600_000_000;
        unit((rest / 60_000_000) as i64, "minutes");
        rest %= 60_000_000;
        if rest != 0 {
            secs_part = Some(format!("{} seconds", plain_seconds(rest)));
        }
    }
    parts.extend(secs_part);
    parts.join(" ")
}

/// ANSI year-month interval string (`IntervalUtils.toYearMonthIntervalString`, ANSI style).
pub fn year_month_interval_string(months: i32, start: u8, end: u8) -> String {
    let abs = i64::from(months).abs();
    let sign = if months < 0 { "-" } else { "" };
    let year = format!("{sign}{}", abs / 12);
    if start == end {
        if start == 0 {
            format!("INTERVAL '{year}' YEAR")
        } else {
            format!("INTERVAL '{months}' MONTH")
        }
    } else {
        format!("INTERVAL '{year}-{}' YEAR TO MONTH", abs % 12)
    }
}

/// ANSI day-time interval string (`IntervalUtils.toDayTimeIntervalString`, ANSI style), e.g.
/// `INTERVAL '1 02:03:04.000005' DAY TO SECOND`.
pub fn day_time_interval_string(micros: i64, start: u8, end: u8) -> String {
    const NAMES: [&str; 4] = ["DAY", "HOUR", "MINUTE", "SECOND"];
    let (start, end) = (start.min(3), end.min(3));
    let from = NAMES[start as usize];
    let to = NAMES[end as usize];
    let postfix = if start == end { format!("' {from}") } else { format!("' {from} TO {to}") };
    let sign = if micros < 0 { "-" } else { "" };
    let mut rest = i128::from(micros).abs();
    let (day, hour, minute, second) = (86_400_000_000i128, 3_600_000_000i128, 60_000_000i128, 1_000_000i128);
    let secs = |rest: i128| {
        let lead = if rest < 10 * second { "0" } else { "" };
        format!("{lead}{}", plain_seconds(rest))
    };
    let mut s = String::from(sign);
    match start {
        0 => {
            s.push_str(&(rest / day).to_string());
            rest %= day;
        }
        1 => {
            s.push_str(&format!("{:02}", rest / hour));
            rest %= hour;
        }
        2 => {
            s.push_str(&format!("{:02}", rest / minute));
            rest %= minute;
        }
        _ => s.push_str(&secs(rest)),
    }
    if start < 1 && 1 <= end {
        s.push_str(&format!(" {:02}", rest / hour));
        rest %= hour;
    }
    if start < 2 && 2 <= end {
        s.push_str(&format!(":{:02}", rest / minute));
        rest %= minute;
    }
    if start < 3 && 3 <= end {
        s.push(':');
        s.push_str(&secs(rest));
    }
    format!("INTERVAL '{s}{postfix}")
}

/// Standard base64 with padding (Jackson's `writeBinary`, `Base64Variants.MIME_NO_LINEFEEDS`).
pub fn base64(b: &[u8]) -> String {
    const T: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut out = String::with_capacity(b.len().div_ceil(3) * 4);
    for c in b.chunks(3) {
        let n =
            (u32::from(c[0]) << 16) | (u32::from(*c.get(1).unwrap_or(&0)) << 8) | u32::from(*c.get(2).unwrap_or(&0));
        out.push(T[(n >> 18) as usize & 63] as char);
        out.push(T[(n >> 12) as usize & 63] as char);
        out.push(if c.len() > 1 { T[(n >> 6) as usize & 63] as char } else { '=' });
        out.push(if c.len() > 2 { T[n as usize & 63] as char } else { '=' });
    }
    out
}
