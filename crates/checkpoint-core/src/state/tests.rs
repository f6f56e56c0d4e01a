//! Unit tests of UnsafeRow decoding, schema files and operator metadata: hand-built rows with Spark's corner cases
//! (negative decimals, nulls inside nested types, empty and non-UTF-8 strings), and every fixture's files.

use super::operator_metadata::parse_operator_metadata;
use super::schema::*;
use super::unsafe_row::*;
use crate::archive::Archive;
use crate::testutil::*;
use serde_json::{json, Value};

/// What one field/element holds when building an UnsafeRow by hand (a tiny `UnsafeRowWriter`).
#[derive(Clone)]
enum W {
    Null,
    /// Inline 8-byte slot value.
    Fixed(u64),
    /// Variable-length payload (padded to 8 in the variable region).
    Var(Vec<u8>),
    /// Non-compact decimal: 16 bytes always reserved; `None` = null.
    Dec16(Option<Vec<u8>>),
}

fn pad8(v: &mut Vec<u8>) {
    while !v.len().is_multiple_of(8) {
        v.push(0);
    }
}

fn row(fields: &[W]) -> Vec<u8> {
    let n = fields.len();
    let w = n.div_ceil(64) * 8;
    let mut out = vec![0u8; w + 8 * n];
    for (i, f) in fields.iter().enumerate() {
        let slot = w + 8 * i;
        match f {
            W::Null => out[(i / 64) * 8 + (i % 64) / 8] |= 1 << (i % 8),
            W::Fixed(x) => out[slot..slot + 8].copy_from_slice(&x.to_le_bytes()),
            W::Var(p) => {
                let off = out.len() as u64;
                out[slot..slot + 8].copy_from_slice(&((off << 32) | p.len() as u64).to_le_bytes());
                out.extend_from_slice(p);
                pad8(&mut out);
            }
            W::Dec16(d) => {
                let off = out.len() as u64;
                let len = d.as_ref().map_or(0, |b| b.len()) as u64;
                if d.is_none() {
                    out[(i / 64) * 8 + (i % 64) / 8] |= 1 << (i % 8);
                }
                out[slot..slot + 8].copy_from_slice(&((off << 32) | len).to_le_bytes());
                let mut buf = [0u8; 16];
                if let Some(b) = d {
                    buf[..b.len()].copy_from_slice(b);
                }
                out.extend_from_slice(&buf);
            }
        }
    }
    out
}

/// An UnsafeArrayData with elements of `width` bytes (8 for variable-length elements).
fn array(width: usize, elems: &[W]) -> Vec<u8> {
    let n = elems.len();
    let mut out = Vec::new();
    out.extend_from_slice(&(n as u64).to_le_bytes());
    let bits_at = out.len();
    out.resize(bits_at + n.div_ceil(64) * 8, 0);
    let elems_at = out.len();
    out.resize(elems_at + (n * width).div_ceil(8) * 8, 0);
    for (i, e) in elems.iter().enumerate() {
        let at = elems_at + i * width;
        match e {
            W::Null => out[bits_at + i / 8] |= 1 << (i % 8),
            W::Fixed(x) => out[at..at + width].copy_from_slice(&x.to_le_bytes()[..width]),
            W::Var(p) => {
                let off = out.len() as u64;
                out[at..at + 8].copy_from_slice(&((off << 32) | p.len() as u64).to_le_bytes());
                out.extend_from_slice(p);
                pad8(&mut out);
            }
            W::Dec16(_) => unreachable!("not used in arrays"),
        }
    }
    out
}

fn map(keys: Vec<u8>, values: Vec<u8>) -> Vec<u8> {
    let mut out = (keys.len() as u64).to_le_bytes().to_vec();
    out.extend(keys);
    out.extend(values);
    out
}

fn schema(fields: &[(&str, Value)]) -> StructType {
    let f: Vec<Value> =
        fields.iter().map(|(n, t)| json!({"name": n, "type": t, "nullable": true, "metadata": {}})).collect();
    StructType::from_json(&json!({"type": "struct", "fields": f})).unwrap()
}

/// Two's-complement big-endian minimal bytes of an integer (Java `BigInteger.toByteArray`).
fn be_bytes(x: i128) -> Vec<u8> {
    let b = x.to_be_bytes();
    let mut i = 0;
    while i < 15 && ((b[i] == 0 && b[i + 1] & 0x80 == 0) || (b[i] == 0xFF && b[i + 1] & 0x80 != 0)) {
        i += 1;
    }
    b[i..].to_vec()
}

#[test]
fn fixed_width_types_as_spark_writes_them() {
    let s = schema(&[
        ("b", json!("byte")),
        ("sh", json!("short")),
        ("i", json!("integer")),
        ("l", json!("long")),
        ("f", json!("float")),
        ("fnan", json!("float")),
        ("d", json!("double")),
        ("dinf", json!("double")),
        ("t", json!("boolean")),
        ("date", json!("date")),
        ("predate", json!("date")),
        ("ts", json!("timestamp")),
        ("tsneg", json!("timestamp")),
        ("ntz", json!("timestamp_ntz")),
        ("dec", json!("decimal(10,2)")),
        ("dec0", json!("decimal(18,0)")),
    ]);
    let r = row(&[
        W::Fixed((-3i8) as u8 as u64),
        W::Fixed((-300i16) as u16 as u64),
        W::Fixed((-70000i32) as u32 as u64),
        W::Fixed(i64::MIN as u64),
        W::Fixed(0.1f32.to_bits() as u64),
        W::Fixed(f32::NAN.to_bits() as u64),
        W::Fixed((-0.25f64).to_bits()),
        W::Fixed(f64::NEG_INFINITY.to_bits()),
        W::Fixed(1),
        W::Fixed(19723),
        W::Fixed((-719_163i32) as u32 as u64), // 0001-01-01 is day -719162: the day before is in year 0
        W::Fixed(1_704_067_240_123_456),
        W::Fixed((-1i64) as u64),
        W::Fixed(1_704_067_240_000_000),
        W::Fixed((-150i64) as u64),
        W::Fixed((-999_999_999_999_999_999i64) as u64),
    ]);
    let v = decode_row(&r, &s).unwrap();
    assert_eq!(
        v,
        json!({"b": -3, "sh": -300, "i": -70000, "l": i64::MIN, "f": 0.1, "fnan": "NaN", "d": -0.25,
               "dinf": "-Infinity", "t": true, "date": "2024-01-01", "predate": "0000-12-31",
               "ts": "2024-01-01T00:00:40.123Z", "tsneg": "1969-12-31T23:59:59.999Z",
               "ntz": "2024-01-01T00:00:40.000", "dec": -1.5, "dec0": -999_999_999_999_999_999i64})
    );
}

/// Doubles and floats in Java's `Double.toString` / `Float.toString` text, as Spark's `toJSON` writes them (real
/// Spark 4.1.4: `"sum":1.0E-300`, `"fl":2.25`, `"sum":3.0`): plain in [10^-3, 10^7), else `d.dddE<n>`.
#[test]
fn doubles_and_floats_are_written_as_java_does() {
    for (x, text) in [
        (3.0, "3.0"),
        (2.25, "2.25"),
        (-0.0, "-0.0"),
        (0.0, "0.0"),
        (1e-300, "1.0E-300"),
        (0.001, "0.001"),
        (0.000_999, "9.99E-4"),
        (1234567.5, "1234567.5"),
        (1e7, "1.0E7"),
        (-12_345_678.9, "-1.23456789E7"),
        (100.0, "100.0"),
        (0.1, "0.1"),
        (f64::MAX, "1.7976931348623157E308"),
        (f64::MIN_POSITIVE, "2.2250738585072014E-308"),
        (5e-324, "4.9E-324"),
    ] {
        assert_eq!(java_double_string(x), text, "{x:e}");
        assert!(serde_json::from_str::<Value>(text).is_ok_and(|v| v.as_f64() == Some(x)), "{text} reads back");
    }
    for (x, text) in [(0.1f32, "0.1"), (1.5f32, "1.5"), (1e10f32, "1.0E10"), (3.4028235e38f32, "3.4028235E38")] {
        assert_eq!(java_float_string(x), text);
    }
}

#[test]
fn non_compact_decimals_negative_and_null() {
    let s = schema(&[("a", json!("decimal(20,2)")), ("b", json!("decimal(38,0)")), ("c", json!("decimal(38,10)"))]);
    let r = row(&[W::Dec16(Some(be_bytes(-150))), W::Dec16(Some(be_bytes(-5))), W::Dec16(None)]);
    assert_eq!(decode_row(&r, &s).unwrap(), json!({"a": -1.5, "b": -5}));
    // §20.1: 0x0096 = 150 → 1.50 with scale 2.
    let r = row(&[W::Dec16(Some(vec![0x00, 0x96])), W::Dec16(Some(be_bytes(i128::from(i64::MAX) + 1))), W::Null]);
    assert_eq!(decode_row(&r, &s).unwrap(), json!({"a": 1.5, "b": "9223372036854775808"}));
    assert_eq!(decimal_string(-12_345, 2), "-123.45");
    assert_eq!(decimal_string(5, 3), "0.005");
    // Java's BigDecimal.toString, as Spark's toJSON writes a decimal (real Spark 4.1.4 rows: `"small":3.00`,
    // `"small":0.01` of a decimal(5,2)): every digit of the scale, scientific below an adjusted exponent of -6.
    for (u, sc, text) in [
        (300, 2, "3.00"),
        (1, 2, "0.01"),
        (-150, 2, "-1.50"),
        (0, 2, "0.00"),
        (0, 0, "0"),
        (0, 6, "0.000000"),
        (0, 7, "0E-7"),
        (0, 10, "0E-10"),
        (1, 6, "0.000001"),
        (1, 7, "1E-7"),
        (-123, 10, "-1.23E-8"),
        (1_000_000_000_000_000_000_030_000_000_007, 10, "100000000000000000003.0000000007"),
    ] {
        assert_eq!(java_decimal_string(u, sc), text, "{u} scale {sc}");
        assert!(serde_json::from_str::<Value>(text).is_ok_and(|v| v.is_number()), "{text} is a JSON number");
    }
    assert_eq!(decimal_string(-(10i128.pow(37)), 0), format!("-1{}", "0".repeat(37)));
    let big = -(10i128.pow(37)) - 1;
    assert_eq!(be_bytes(big).len(), 16);
    let r = row(&[W::Null, W::Dec16(Some(be_bytes(big))), W::Null]);
    // Past a double's digits: the exact digits (Spark's toJSON writes them all), never -1e37.
    assert_eq!(decode_row(&r, &s).unwrap()["b"], json!("-10000000000000000000000000000000000001"));
    let r = row(&[W::Null, W::Null, W::Dec16(Some(be_bytes(1_000_000_000_000_000_000_030_000_000_007)))]);
    assert_eq!(decode_row(&r, &s).unwrap()["c"], json!("100000000000000000003.0000000007"));
    let mut text = String::new();
    write_row_json(&r, &s, &mut text).unwrap();
    // The text path writes them as Spark's toJSON does: a JSON number with every digit.
    assert_eq!(text, r#"{"c":100000000000000000003.0000000007}"#);
    let r = row(&[W::Dec16(Some(be_bytes(300))), W::Null, W::Dec16(Some(be_bytes(0)))]);
    text.clear();
    write_row_json(&r, &s, &mut text).unwrap();
    assert_eq!(text, r#"{"a":3.00,"c":0E-10}"#);
    // 17 bytes cannot be a decimal(38).
    let mut bad = row(&[W::Null, W::Dec16(Some(be_bytes(1))), W::Null]);
    bad[16..24].copy_from_slice(&((40u64 << 32) | 17).to_le_bytes());
    assert!(decode_row(&bad, &s).is_err());
}

#[test]
fn strings_binary_empty_and_invalid_utf8() {
    let s =
        schema(&[("e", json!("string")), ("bad", json!("string")), ("bin", json!("binary")), ("u", json!("string"))]);
    let r = row(&[
        W::Var(vec![]),
        W::Var(vec![b'a', 0xFF, b'b', 0xE2, 0x82]),
        W::Var(vec![0, 1, 2, 255]),
        W::Var("grüße ✓".as_bytes().to_vec()),
    ]);
    // Java's new String(bytes, UTF_8) puts one U+FFFD per malformed sequence, as from_utf8_lossy does.
    assert_eq!(
        decode_row(&r, &s).unwrap(),
        json!({"e": "", "bad": "a\u{FFFD}b\u{FFFD}", "bin": "AAEC/w==", "u": "grüße ✓"})
    );
    assert_eq!(base64(b""), "");
    assert_eq!(base64(b"f"), "Zg==");
    assert_eq!(base64(b"fo"), "Zm8=");
    assert_eq!(base64(b"foobar"), "Zm9vYmFy");
}

#[test]
fn nested_structs_arrays_maps_with_nulls() {
    let inner = json!({"type": "struct", "fields": [
        {"name": "x", "type": "integer", "nullable": true, "metadata": {}},
        {"name": "y", "type": "string", "nullable": true, "metadata": {}}]});
    let s = schema(&[
        ("st", inner.clone()),
        ("arr", json!({"type": "array", "elementType": "integer", "containsNull": true})),
        ("sarr", json!({"type": "array", "elementType": "string", "containsNull": true})),
        ("m", json!({"type": "map", "keyType": "string", "valueType": "long", "valueContainsNull": true})),
        ("gone", json!("string")),
        ("bools", json!({"type": "array", "elementType": "boolean", "containsNull": false})),
        ("structs", json!({"type": "array", "elementType": inner, "containsNull": true})),
        ("empty", json!({"type": "array", "elementType": "long", "containsNull": true})),
    ]);
    let st = row(&[W::Null, W::Var(b"in".to_vec())]);
    let arr = array(4, &[W::Fixed(7), W::Null, W::Fixed((-1i32) as u32 as u64)]);
    let sarr = array(8, &[W::Var(b"a".to_vec()), W::Null, W::Var(vec![])]);
    let m = map(array(8, &[W::Var(b"k1".to_vec()), W::Var(b"k2".to_vec())]), array(8, &[W::Fixed(5), W::Null]));
    let bools = array(1, &[W::Fixed(1), W::Fixed(0)]);
    let structs = array(8, &[W::Var(row(&[W::Fixed(3), W::Null])), W::Null]);
    let r = row(&[
        W::Var(st),
        W::Var(arr),
        W::Var(sarr),
        W::Var(m),
        W::Null,
        W::Var(bools),
        W::Var(structs),
        W::Var(array(8, &[])),
    ]);
    let v = decode_row(&r, &s).unwrap();
    assert_eq!(
        v,
        json!({"st": {"y": "in"}, "arr": [7, null, -1], "sarr": ["a", null, ""], "m": {"k1": 5, "k2": null},
               "bools": [true, false], "structs": [{"x": 3}, null], "empty": []})
    );
    // Every truncation of the row is an error, never a panic.
    for cut in 0..r.len() {
        assert!(decode_row(&r[..cut], &s).is_err(), "cut {cut}");
    }
    // Every flipped byte gives a value or an error, never a panic.
    for i in 0..r.len() {
        for bit in [0x01u8, 0x10, 0x80] {
            let mut b = r.clone();
            b[i] ^= bit;
            let _ = decode_row(&b, &s);
        }
    }
}

/// A row of one field, `array<array<…<long>>>` nested `depth` levels below the top array, where each array's two
/// element slots point at the same bytes (the next array): 16 + 32 × (depth + 1) bytes that decoded naively
/// hold 2^(depth + 1) longs.
fn shared_nested_arrays(depth: usize) -> (Vec<u8>, StructType) {
    let mut inner = array(8, &[W::Fixed(1), W::Fixed(2)]);
    let mut t = json!("long");
    for _ in 0..depth {
        let mut a = array(8, &[W::Fixed(0), W::Fixed(0)]);
        let slot = ((a.len() as u64) << 32) | inner.len() as u64;
        a[16..24].copy_from_slice(&slot.to_le_bytes());
        a[24..32].copy_from_slice(&slot.to_le_bytes());
        a.extend_from_slice(&inner);
        inner = a;
        t = json!({"type": "array", "elementType": t, "containsNull": true});
    }
    let t = json!({"type": "array", "elementType": t, "containsNull": true});
    let s = schema(&[("a", t)]);
    (row(&[W::Var(inner)]), s)
}

#[test]
fn nested_values_sharing_bytes_stop_at_the_row_budget() {
    // 1,328 bytes whose 2^41 longs (each array's two elements the same bytes) hung the `state` command: every
    // decoding path now stops after about twice the row's size of values, with an error that names the sharing.
    let (r, s) = shared_nested_arrays(40);
    assert_eq!(r.len(), 1_328);
    let start = std::time::Instant::now();
    let e = decode_row(&r, &s).unwrap_err();
    assert!(e.message.contains("nested values share bytes"), "{e}");
    assert!((e.offset as usize) < r.len(), "{e}");
    let mut text = String::new();
    let e2 = write_row_json(&r, &s, &mut text).unwrap_err();
    assert!(e2.message.contains("nested values share bytes"), "{e2}");
    assert!(text.len() < 16 * r.len(), "{} bytes written for a {}-byte row", text.len(), r.len());
    let mut planned = String::new();
    let e3 = RowJsonWriter::new(&s).write(&r, &mut planned).unwrap_err();
    assert!(e3.message.contains("nested values share bytes"), "{e3}");
    assert!(planned.len() < 16 * r.len(), "{} bytes written for a {}-byte row", planned.len(), r.len());
    assert!(start.elapsed() < std::time::Duration::from_secs(2), "{:?}", start.elapsed());
    // Two levels of sharing are within the budget (8 longs from 112 bytes, as the bytes say) ...
    let (r, s) = shared_nested_arrays(2);
    assert_eq!(decode_row(&r, &s).unwrap(), json!({"a": [[[1, 2], [1, 2]], [[1, 2], [1, 2]]]}));
    // ... and a row laid out as Spark writes it, every nested array in bytes of its own, decodes whole.
    let t = json!({"type": "array", "elementType": {"type": "array", "elementType": "long", "containsNull": true}, "containsNull": true});
    let s = schema(&[("a", t)]);
    let inner = |x: u64| W::Var(array(8, &[W::Fixed(x), W::Null, W::Fixed(x + 1)]));
    let r = row(&[W::Var(array(8, &[inner(1), W::Null, inner(3), inner(5)]))]);
    let want = json!({"a": [[1, null, 2], null, [3, null, 4], [5, null, 6]]});
    assert_eq!(decode_row(&r, &s).unwrap(), want);
    let mut text = String::new();
    write_row_json(&r, &s, &mut text).unwrap();
    assert_eq!(text, want.to_string());
}

#[test]
fn bad_offsets_and_sizes_are_errors_with_offsets() {
    let s = schema(&[("k", json!("integer")), ("v", json!("string"))]);
    let mut r = row(&[W::Fixed(1), W::Var(b"hello".to_vec())]);
    r[16..24].copy_from_slice(&((24u64 << 32) | 1000).to_le_bytes());
    let e = decode_row(&r, &s).unwrap_err();
    assert_eq!(e.offset, 16);
    assert!(e.message.contains("outside"), "{e}");
    let e = decode_row(&r[..20], &s).unwrap_err();
    assert_eq!(e.offset, 0);
    // An array claiming 2^40 elements.
    let s2 = schema(&[("a", json!({"type": "array", "elementType": "long", "containsNull": true}))]);
    let mut arr = array(8, &[W::Fixed(1)]);
    arr[0..8].copy_from_slice(&(1u64 << 40).to_le_bytes());
    let e = decode_row(&row(&[W::Var(arr)]), &s2).unwrap_err();
    assert_eq!(e.offset, 16);
    assert!(e.message.contains("claims"), "{e}");
}

#[test]
fn intervals_as_spark_prints_them() {
    let s = schema(&[
        ("ci", json!("interval")),
        ("zero", json!("interval")),
        ("ym", json!("interval year to month")),
        ("m", json!("interval month")),
        ("y", json!("interval year")),
        ("dt", json!("interval day to second")),
        ("hm", json!("interval hour to minute")),
        ("sec", json!("interval second")),
    ]);
    let mut ci = Vec::new();
    ci.extend_from_slice(&14i32.to_le_bytes());
    ci.extend_from_slice(&3i32.to_le_bytes());
    ci.extend_from_slice(&3_723_000_001i64.to_le_bytes());
    let r = row(&[
        W::Var(ci),
        W::Var(vec![0; 16]),
        W::Fixed((-14i32) as u32 as u64),
        W::Fixed(14),
        W::Fixed(25),
        W::Fixed(93_784_000_005),
        W::Fixed((-(3_600_000_000i64 * 26 + 60_000_000 * 5)) as u64),
        W::Fixed(4_500_000),
    ]);
    assert_eq!(
        decode_row(&r, &s).unwrap(),
        json!({"ci": "1 years 2 months 3 days 1 hours 2 minutes 3.000001 seconds", "zero": "0 seconds",
               "ym": "INTERVAL '-1-2' YEAR TO MONTH", "m": "INTERVAL '14' MONTH", "y": "INTERVAL '2' YEAR",
               "dt": "INTERVAL '1 02:03:04.000005' DAY TO SECOND", "hm": "INTERVAL '-26:05' HOUR TO MINUTE",
               "sec": "INTERVAL '04.5' SECOND"})
    );
    assert_eq!(calendar_interval_string(0, -1, -1_500_000), "-1 days -1.5 seconds");
}

#[test]
fn worked_example_20_1() {
    // FORMATS.md §20.1, decompressed 1.delta of groupBy(k).agg(count, max(v), sum(decimal(10,2))).
    let key_schema = StructType::from_json_str(
        r#"{"type":"struct","fields":[{"name":"k","type":"integer","nullable":true,"metadata":{}}]}"#,
    )
    .unwrap();
    let value_schema = schema(&[
        ("count", json!("long")),
        ("max", json!("string")),
        ("sum", json!("decimal(20,2)")),
        ("isEmpty", json!("boolean")),
    ]);
    let key = row(&[W::Fixed(2)]);
    assert_eq!(key.len(), 16);
    let value = row(&[W::Fixed(1), W::Var(b"val1-2".to_vec()), W::Dec16(Some(vec![0x00, 0x96])), W::Fixed(0)]);
    assert_eq!(value.len(), 64);
    assert_eq!(&value[16..24], &[6, 0, 0, 0, 0x28, 0, 0, 0]);
    assert_eq!(decode_row(&key, &key_schema).unwrap(), json!({"k": 2}));
    assert_eq!(
        decode_row(&value, &value_schema).unwrap(),
        json!({"count": 1, "max": "val1-2", "sum": 1.5, "isEmpty": false})
    );
}

#[test]
fn type_names_parse() {
    let cases = [
        ("integer", DataType::Integer),
        ("void", DataType::Null),
        ("decimal(38,18)", DataType::Decimal { precision: 38, scale: 18 }),
        ("decimal", DataType::Decimal { precision: 10, scale: 0 }),
        ("string collate UTF8_LCASE", DataType::String),
        ("varchar(10)", DataType::String),
        ("interval day to second", DataType::DayTimeInterval { start: 0, end: 3 }),
        ("interval minute", DataType::DayTimeInterval { start: 2, end: 2 }),
        ("interval year to month", DataType::YearMonthInterval { start: 0, end: 1 }),
        ("timestamp_ntz", DataType::TimestampNtz),
    ];
    for (name, want) in cases {
        assert_eq!(DataType::from_json(&json!(name)).unwrap(), want, "{name}");
    }
    for bad in ["decimal(40,2)", "decimal(5,6)", "interval second to day", "nope"] {
        assert!(DataType::from_json(&json!(bad)).is_err(), "{bad}");
    }
    let s = StructType::from_json_str(
        r#"{"type":"struct","fields":[{"name":"u","type":{"type":"udt","class":"x","sqlType":"long"},"nullable":true,"metadata":{}}]}"#,
    )
    .unwrap();
    assert_eq!(s.fields[0].data_type, DataType::Long);
    assert_eq!(s.simple_string(), "struct<u:bigint>");
}

fn utf(s: &str) -> Vec<u8> {
    let mut v = (s.len() as u16).to_be_bytes().to_vec();
    v.extend_from_slice(s.as_bytes());
    v
}

#[test]
fn schema_file_v1_v2_and_modified_utf8() {
    let k = r#"{"type":"struct","fields":[{"name":"k","type":"integer","nullable":true,"metadata":{}}]}"#;
    let v = r#"{"type":"struct","fields":[{"name":"v","type":"string","nullable":true,"metadata":{}}]}"#;
    let mut f1 = utf("v1");
    f1.extend(utf(k));
    f1.extend(utf(v));
    let p = parse_schema_file(&f1).unwrap();
    assert_eq!((p.version, p.key.fields[0].name.as_str(), p.value_json.as_str()), (1, "k", v));
    // v2 with the key JSON split over two chunks.
    let mut f2 = utf("v2");
    f2.extend(2i32.to_be_bytes());
    f2.extend(utf(&k[..10]));
    f2.extend(utf(&k[10..]));
    f2.extend(1i32.to_be_bytes());
    f2.extend(utf(v));
    let p = parse_schema_file(&f2).unwrap();
    assert_eq!((p.version, p.key_json.as_str()), (2, k));
    for cut in 0..f2.len() {
        assert!(parse_schema_file(&f2[..cut]).is_err(), "cut {cut}");
    }
    let mut huge = utf("v2");
    huge.extend(i32::MAX.to_be_bytes());
    let e = parse_schema_file(&huge).unwrap_err();
    assert_eq!(e.offset, 4);
    // Modified UTF-8: NUL as C0 80, U+1F600 as a surrogate pair of 3-byte sequences.
    assert_eq!(decode_modified_utf8(&[b'a', 0xC0, 0x80, b'b']).unwrap(), "a\0b");
    assert_eq!(decode_modified_utf8(&[0xED, 0xA0, 0xBD, 0xED, 0xB8, 0x80]).unwrap(), "\u{1F600}");
    assert_eq!(decode_modified_utf8(&[b'a', 0xFF]), Err(1));
}

/// Where Spark's read of a damaged v1/v2 schema file stops, and why (`spark_read_fault`).
#[test]
fn schema_file_faults_as_spark_reads_them() {
    let k = r#"{"type":"struct","fields":[{"name":"k","type":"integer","nullable":true,"metadata":{}}]}"#;
    let mut f = utf("v2");
    f.extend(1i32.to_be_bytes());
    f.extend(utf(k));
    f.extend(1i32.to_be_bytes());
    f.extend(utf(k));
    assert_eq!(spark_read_fault(&f), None);
    let at = |offset: u64, kind| Some(SchemaReadFault { offset, kind });
    use SchemaReadFaultKind::*;
    // Empty, cut anywhere: the read runs past the end, at the value it was reading.
    assert_eq!(spark_read_fault(&[]), at(0, EndOfFile));
    assert_eq!(spark_read_fault(&f[..3]), at(0, EndOfFile));
    assert_eq!(spark_read_fault(&f[..6]), at(4, EndOfFile));
    assert_eq!(spark_read_fault(&f[..f.len() - 1]), at((f.len() - k.len() - 2) as u64, EndOfFile));
    for cut in 0..f.len() {
        assert_eq!(spark_read_fault(&f[..cut]).map(|e| e.kind), Some(EndOfFile), "cut {cut}");
    }
    // Another version string, as read.
    let mut v9 = f.clone();
    v9[3] = b'9';
    assert_eq!(spark_read_fault(&v9), at(0, Version("v9".into())));
    // Text where the file should be: its first two bytes are taken for a length past the end.
    assert_eq!(spark_read_fault(b"this is not a schema file\n"), at(0, EndOfFile));
    // Bytes that are not modified UTF-8 in the key schema, and a key schema that is no JSON struct.
    let mut bad = f.clone();
    bad[10] = 0xFF;
    assert_eq!(spark_read_fault(&bad), at(10, NotModifiedUtf8));
    let mut json = f.clone();
    json[10] = b'x';
    assert_eq!(spark_read_fault(&json), at(4, Json));
    // A negative chunk count is no chunk (an empty schema string, which is no JSON).
    let mut neg = utf("v2");
    neg.extend((-1i32).to_be_bytes());
    neg.extend(1i32.to_be_bytes());
    neg.extend(utf(k));
    assert_eq!(spark_read_fault(&neg), at(4, Json));
}

/// A schema nested deeper than serde_json parses (128) but within Jackson's 1,000 is read by Spark: not verified,
/// no fault. Deeper than 1,000, Spark's own parser refuses it: a fault. A `[` or `{` inside a string is no nesting.
#[test]
fn schema_nesting_between_this_parser_and_jacksons_is_not_verified() {
    let nested = |depth: usize| {
        let mut t = String::from(r#"{"type":"struct","fields":[{"name":"k","type":"#);
        t.push_str(&r#"{"type":"array","containsNull":true,"elementType":"#.repeat(depth));
        t.push_str(r#""integer""#);
        t.push_str(&"}".repeat(depth));
        t.push_str(r#","nullable":true,"metadata":{"note":"[[[{{{"}}]}"#);
        let mut f = utf("v2");
        f.extend(1i32.to_be_bytes());
        f.extend(utf(&t));
        f.extend(1i32.to_be_bytes());
        f.extend(utf(r#"{"type":"struct","fields":[]}"#));
        f
    };
    assert_eq!(spark_read(&nested(60)), SchemaRead::Reads);
    match spark_read(&nested(200)) {
        SchemaRead::NotVerified(why) => assert!(why.contains("203 levels") && why.contains("at byte 4"), "{why}"),
        other => panic!("{other:?}"),
    }
    assert_eq!(spark_read_fault(&nested(200)), None);
    let deep = spark_read_fault(&nested(1200)).expect("Jackson refuses it");
    assert_eq!((deep.offset, deep.kind), (4, SchemaReadFaultKind::Json));
}

/// Every schema file, v3 schema file and operator metadata file in the fixtures parses.
#[test]
fn every_fixture_schema_and_metadata_file_parses() {
    let (mut v2, mut v3, mut meta) = (0, 0, 0);
    for name in fixture_names() {
        let mut a = open_fixture(&name);
        let paths: Vec<String> = a.entries().iter().filter(|e| !e.is_dir).map(|e| e.path.clone()).collect();
        for p in paths {
            let file = p.rsplit('/').next().unwrap_or("");
            if file.starts_with('.') || file.ends_with(".crc") {
                continue;
            }
            if p.ends_with("/_metadata/schema") {
                let bytes = a.read(&p, 1 << 20).unwrap();
                assert_eq!(spark_read_fault(&bytes), None, "{name}/{p}");
                let f = parse_schema_file(&bytes).unwrap_or_else(|e| panic!("{name}/{p}: {e}"));
                assert!(!f.key.fields.is_empty(), "{name}/{p}");
                v2 += 1;
            } else if p.contains("/_stateSchema/") {
                let cfs =
                    parse_schema_v3_file(&a.read(&p, 1 << 20).unwrap()).unwrap_or_else(|e| panic!("{name}/{p}: {e}"));
                assert!(!cfs.is_empty(), "{name}/{p}");
                assert!(cfs.iter().all(|c| c.key_state_encoder_spec["keyStateEncoderType"].is_string()), "{name}/{p}");
                v3 += 1;
            } else if p.ends_with("/_metadata/metadata") || p.contains("/_metadata/v2/") {
                let m = parse_operator_metadata(&a.read(&p, 1 << 20).unwrap())
                    .unwrap_or_else(|e| panic!("{name}/{p}: {e}"));
                assert!(!m.stores.is_empty(), "{name}/{p}");
                assert!(m.stores.iter().all(|s| s.num_partitions > 0), "{name}/{p}");
                if m.version == 2 {
                    assert!(m.operator_properties_json.is_some(), "{name}/{p}");
                    assert!(m.stores.iter().all(|s| !s.state_schema_file_paths.is_empty()), "{name}/{p}");
                }
                meta += 1;
            }
        }
    }
    assert!(v2 > 50 && v3 >= 2 && meta > 20, "schema {v2}, v3 {v3}, metadata {meta}");
}

#[test]
fn v3_schema_file_of_transform_with_state() {
    let mut a = open_fixture("ss-4.3.0-tws-pandas");
    let p = a
        .entries()
        .iter()
        .find(|e| e.path.contains("/_stateSchema/") && !e.path.rsplit('/').next().unwrap_or(".").starts_with('.'))
        .map(|e| e.path.clone())
        .unwrap();
    let bytes = a.read(&p, 1 << 20).unwrap();
    let cfs = parse_schema_v3_file(&bytes).unwrap();
    // The state variable named in the operator properties is a column family with a key and a value schema.
    let meta_path = a.entries().iter().find(|e| e.path.ends_with("_metadata/v2/0")).map(|e| e.path.clone()).unwrap();
    let m = parse_operator_metadata(&a.read(&meta_path, 1 << 20).unwrap()).unwrap();
    let props: Value = serde_json::from_str(m.operator_properties_json.as_deref().unwrap()).unwrap();
    let var = props["stateVariables"][0]["stateName"].as_str().unwrap();
    let cf = cfs.iter().find(|c| c.column_family == var).unwrap();
    assert!(!cf.key.fields.is_empty() && !cf.value.fields.is_empty());
    assert_eq!(cf.user_key_encoder_schema, None);
    for cut in 0..bytes.len() {
        assert!(parse_schema_v3_file(&bytes[..cut]).is_err(), "cut {cut}");
    }
}

#[test]
fn operator_metadata_errors() {
    assert!(parse_operator_metadata(b"").is_err());
    assert!(parse_operator_metadata(b"v9\n{}").is_err());
    let bad = b"v1\n{\"operatorInfo\":";
    let e = parse_operator_metadata(bad).unwrap_err();
    // Inside the JSON line (which starts at byte 3), where parsing stopped (at the cut).
    assert!((3..=bad.len() as u64).contains(&e.offset) && e.offset > 3, "{e}");
}

fn mutation_paths(rec: &Value) -> Vec<String> {
    let m = &rec["mutation"];
    let mut v: Vec<String> = m["removed"]
        .as_array()
        .map(|a| a.iter().filter_map(|p| p.as_str().map(str::to_string)).collect())
        .unwrap_or_default();
    v.extend(m["file"].as_str().map(str::to_string));
    v
}

/// `state/<op>/<part>/[<store>/]<file>` → (op, part, store).
fn store_of(path: &str) -> Option<(i64, u32, String)> {
    let parts: Vec<&str> = path.split('/').collect();
    match parts.as_slice() {
        ["state", op, part, _file] => Some((op.parse().ok()?, part.parse().ok()?, "default".into())),
        ["state", op, part, store, _file] => Some((op.parse().ok()?, part.parse().ok()?, store.to_string())),
        _ => None,
    }
}

/// For every fixture whose mutation deleted a delta (HDFS), reading that store at the last committed batch fails
/// with Spark's error naming the missing delta; a flipped byte in a snapshot fails naming the snapshot and an
/// offset at or before the flipped byte; a deleted partition folder is named.
#[test]
fn damaged_hdfs_fixtures_fail_with_the_file_named() {
    use super::{read_state, StateQuery};
    let (mut missing, mut corrupt, mut partition) = (0, 0, 0);
    for name in fixture_names() {
        let rec = fixture_record(&name);
        let kind = rec["mutation"]["kind"].as_str().unwrap_or("");
        let mut a = open_fixture(&name);
        for path in mutation_paths(&rec) {
            let file = path.rsplit('/').next().unwrap_or("");
            let Some((op, part, store)) = store_of(&path) else { continue };
            if file.starts_with('.') || !(file.ends_with(".delta") || file.ends_with(".snapshot")) {
                continue;
            }
            let q =
                StateQuery { operator_id: op, store_name: store.clone(), partition: Some(part), ..Default::default() };
            let res = read_state(&mut a, "", &q);
            if kind == "c" && file.ends_with(".delta") {
                let e = res.expect_err(&format!("{name}: {path} was deleted"));
                assert_eq!(e.path, path, "{name}");
                assert_eq!(e.error_class.as_deref(), Some("CANNOT_LOAD_STATE_STORE.CANNOT_READ_DELTA_FILE_NOT_EXISTS"));
                missing += 1;
            } else if kind == "j" {
                let e = res.expect_err(&format!("{name}: {path} was damaged"));
                assert_eq!(e.path, path, "{name}");
                assert!(e.offset.is_some(), "{name}: {e}");
                let bytes = a.read(&path, 1 << 20).unwrap();
                let fe = super::hdfs::verify_file(&bytes, super::hdfs::RecordFileKind::Snapshot, 1 << 24).unwrap_err();
                assert_eq!(Some(fe.offset()), e.offset, "{name}");
                corrupt += 1;
            }
        }
        if kind == "b" && super::detect_provider(&a, "state/0/0") == super::Provider::Hdfs {
            let e = read_state(&mut a, "", &StateQuery::default()).expect_err(&format!("{name}: partition deleted"));
            assert!(e.path.starts_with("state/0/"), "{name}: {e}");
            assert!(a.entries().iter().all(|x| !x.path.starts_with(&format!("{}/", e.path))), "{name}: {e}");
            partition += 1;
        }
    }
    assert!(
        missing >= 3 && corrupt >= 3 && partition >= 2,
        "missing {missing}, corrupt {corrupt}, partition {partition}"
    );
}

#[test]
fn hdfs_base_picks_newest_snapshot_at_or_below() {
    use crate::restart_chain::{hdfs_base, plan, PlanInput};
    let names: Vec<String> =
        (1..=12).map(|v| format!("{v}.delta")).chain([3, 6, 9, 12].map(|v| format!("{v}.snapshot"))).collect();
    let entries: Vec<(String, u64, bool)> = names.iter().map(|n| (format!("state/0/0/{n}"), 1, false)).collect();
    let f = crate::state_files::list_state(&entries).operators[&0].partitions[&0].stores["default"].clone();
    assert_eq!(hdfs_base(&f, 12, &[]), Some(12));
    assert_eq!(hdfs_base(&f, 11, &[]), Some(9));
    assert_eq!(hdfs_base(&f, 2, &[]), None);
    assert_eq!(hdfs_base(&f, 0, &[]), None);
    let versions = |v: i64| plan(&f, v, &PlanInput::new("hdfs")).steps.iter().map(|s| s.version).collect::<Vec<_>>();
    assert_eq!(versions(12), vec![12]);
    assert_eq!(versions(11), vec![9, 10, 11]);
    assert_eq!(versions(2), vec![1, 2]);
    assert!(versions(0).is_empty());
}

/// Reading an older batch replays fewer deltas: version 1 of every HDFS store holds exactly the puts of 1.delta.
#[test]
fn older_batches_rebuild_from_deltas() {
    use super::{read_state, StateQuery};
    let mut a = open_fixture("ss-4.3.0-agg-hdfs");
    let q = StateQuery { batch_id: Some(0), ..Default::default() };
    let rows = read_state(&mut a, "", &q).unwrap();
    let mut puts = 0;
    for p in super::list_partitions(&a, "", 0) {
        let bytes = a.read(&format!("state/0/{p}/1.delta"), 1 << 20).unwrap();
        puts += super::hdfs::verify_file(&bytes, super::hdfs::RecordFileKind::Delta, 1 << 24).unwrap().puts;
    }
    assert_eq!(rows.len() as u64, puts);
    assert!(puts > 0);
}

/// Every snapshot Spark wrote equals the replay of deltas 1..=v without any snapshot (all healthy HDFS fixtures,
/// every store and partition): the snapshot and delta readers agree with each other and with Spark.
#[test]
fn snapshots_equal_delta_replay() {
    use super::hdfs::load_store;
    use super::StateLimits;
    let mut checked = 0;
    for name in fixture_names() {
        if !fixture_record(&name)["mutation"].is_null() {
            continue;
        }
        let mut a = open_fixture(&name);
        let files: Vec<String> = a.entries().iter().filter(|e| !e.is_dir).map(|e| e.path.clone()).collect();
        let dirs: std::collections::BTreeSet<String> = files
            .iter()
            .filter(|p| p.ends_with(".snapshot") && !p.rsplit('/').next().unwrap_or(".").starts_with('.'))
            .filter_map(|p| p.rsplit_once('/').map(|(d, _)| d.to_string()))
            .collect();
        for dir in dirs {
            let sf = crate::state_files::store_files(a.entries(), &dir);
            let deltas_only: Vec<(String, Vec<u8>)> = sf
                .deltas
                .keys()
                .map(|v| {
                    let p = format!("{dir}/{v}.delta");
                    let b = a.read(&p, 1 << 24).unwrap();
                    (p, b)
                })
                .collect();
            let mut mem =
                crate::archive::MemArchive::new("deltas", deltas_only, crate::archive::Limits::default()).unwrap();
            for &v in sf.snapshots.keys() {
                let with_snapshot = load_store(&mut a, &dir, v, &StateLimits::default()).unwrap();
                let replayed = load_store(&mut mem, &dir, v, &StateLimits::default()).unwrap();
                assert_eq!(with_snapshot, replayed, "{name}: {dir} version {v}");
                checked += 1;
            }
        }
    }
    assert!(checked > 50, "only {checked} snapshots compared");
}

#[test]
fn state_roots_are_found_at_the_top_or_nested() {
    let files = vec![
        ("chk/state/0/0/1.delta".to_string(), vec![1]),
        ("chk/commits/0".to_string(), vec![1]),
        ("other/state/0/_metadata/metadata".to_string(), vec![1]),
        ("notes/state/readme".to_string(), vec![1]),
    ];
    let a = crate::archive::MemArchive::new("x", files, crate::archive::Limits::default()).unwrap();
    assert_eq!(super::find_state_roots(&a), vec!["chk".to_string(), "other".to_string()]);
    let a = open_fixture("ss-4.3.0-agg-hdfs");
    assert_eq!(super::find_state_roots(&a), vec![String::new()]);
}

/// The chain check lists every problem of the damaged fixtures and none of the healthy ones.
#[test]
fn chain_check_on_fixtures() {
    use super::hdfs::check_chain;
    use super::StateLimits;
    let (mut healthy, mut damaged) = (0, 0);
    for name in fixture_names() {
        let rec = fixture_record(&name);
        let mut a = open_fixture(&name);
        let Some(batch) = super::last_committed_batch(&a, "") else { continue };
        let damaged_files = mutation_paths(&rec);
        for op in super::list_operators(&a, "") {
            for p in super::list_partitions(&a, "", op) {
                let dir = super::store_dir("", op, p, "default");
                if super::detect_provider(&a, &dir) != super::Provider::Hdfs {
                    continue;
                }
                let c = check_chain(&mut a, &dir, batch + 1, &StateLimits::default());
                let touched = damaged_files.iter().any(|f| f.starts_with(&format!("{dir}/")));
                if rec["mutation"].is_null() {
                    assert!(c.problems.is_empty(), "{name}: {dir}: {:?}", c.problems);
                    assert!(c.rows.is_some());
                    healthy += 1;
                } else if touched && c.problems.iter().any(|e| damaged_files.contains(&e.path)) {
                    assert!(c.rows.is_none());
                    damaged += 1;
                }
            }
        }
    }
    assert!(healthy > 10 && damaged >= 4, "healthy {healthy}, damaged {damaged}");
}

#[test]
fn structural_validation_as_spark_does() {
    let s = schema(&[
        ("b", json!("boolean")),
        ("i", json!("integer")),
        ("v", json!("string")),
        ("d", json!("decimal(20,2)")),
    ]);
    let good = row(&[W::Fixed(1), W::Fixed(7), W::Var(b"abc".to_vec()), W::Dec16(None)]);
    validate_structure(&good, &s).unwrap();
    let mut b = good.clone();
    b[8] = 2;
    assert_eq!(validate_structure(&b, &s).unwrap_err().offset, 8);
    let mut b = good.clone();
    b[20] = 1; // upper half of the int slot
    assert_eq!(validate_structure(&b, &s).unwrap_err().offset, 16);
    let mut b = good.clone();
    b[24..32].copy_from_slice(&((8u64 << 32) | 3).to_le_bytes()); // points into the fixed region
    assert_eq!(validate_structure(&b, &s).unwrap_err().offset, 24);
    assert!(validate_structure(&good[..good.len() - 4], &s).is_err());
    let nulls = row(&[W::Null, W::Null, W::Null, W::Null]);
    validate_structure(&nulls, &s).unwrap();
    let mut b = nulls.clone();
    b[16] = 1;
    assert!(validate_structure(&b, &s).is_err());
}

/// Every row of every healthy HDFS fixture store passes Spark's structural validation.
#[test]
fn fixture_rows_pass_structural_validation() {
    let mut rows = 0;
    for name in fixture_names() {
        if !fixture_record(&name)["mutation"].is_null() {
            continue;
        }
        let mut a = open_fixture(&name);
        let Some(batch) = super::last_committed_batch(&a, "") else { continue };
        for m in super::read_state_metadata(&mut a, "").unwrap() {
            let dir0 = super::store_dir("", m.operator_id, 0, &m.state_store_name);
            if super::detect_provider(&a, &dir0) != super::Provider::Hdfs {
                continue;
            }
            let (ks, vs) = super::store_schemas(&mut a, "", m.operator_id, &m.state_store_name).unwrap();
            for p in super::list_partitions(&a, "", m.operator_id) {
                let dir = super::store_dir("", m.operator_id, p, &m.state_store_name);
                let raw = super::load_raw_store(&mut a, &dir, batch + 1, &Default::default()).unwrap();
                for (k, v) in raw.iter() {
                    validate_structure(k, &ks).unwrap_or_else(|e| panic!("{name} {dir}: key {e}"));
                    validate_structure(v, &vs).unwrap_or_else(|e| panic!("{name} {dir}: value {e}"));
                    rows += 1;
                }
            }
        }
    }
    assert!(rows > 50, "{rows}");
}

#[test]
fn unknown_store_names_list_the_known_ones() {
    use super::{read_state, store_names, StateQuery};
    let mut a = open_fixture("ss-4.3.0-join");
    let names = store_names(&a, "", 0);
    assert_eq!(names.len(), 4, "{names:?}");
    let e = read_state(&mut a, "", &StateQuery { store_name: "nope".into(), ..Default::default() }).unwrap_err();
    assert!(e.message.contains("left-keyToNumValues"), "{e}");
}

/// A schema with a decimal, double or float, which the text writer writes as Java does.
fn has_java_numbers(s: &StructType) -> bool {
    fn in_type(t: &DataType) -> bool {
        match t {
            DataType::Decimal { .. } | DataType::Double | DataType::Float => true,
            DataType::Struct(s) => has_java_numbers(s),
            DataType::Array { element, .. } => in_type(element),
            DataType::Map { key, value, .. } => in_type(key) || in_type(value),
            _ => false,
        }
    }
    s.fields.iter().any(|f| in_type(&f.data_type))
}

fn close(x: Option<f64>, y: Option<f64>) -> bool {
    matches!((x, y), (Some(x), Some(y)) if (x - y).abs() <= 4.0 * f64::EPSILON * x.abs().max(y.abs()))
}

/// `a` (the text writer's JSON, parsed) is `b` (the Value decoder's): numbers of one value, a decimal the values
/// keep as digits equal to the parsed double of them.
fn same_value(a: &Value, b: &Value) -> bool {
    match (a, b) {
        // serde_json's parse of a double may differ in the last bit (no `float_roundtrip`).
        (Value::Number(x), Value::Number(y)) => close(x.as_f64(), y.as_f64()),
        (Value::Number(x), Value::String(y)) => close(x.as_f64(), y.parse::<f64>().ok()),
        (Value::Array(x), Value::Array(y)) => x.len() == y.len() && x.iter().zip(y).all(|(p, q)| same_value(p, q)),
        (Value::Object(x), Value::Object(y)) => {
            x.len() == y.len() && x.iter().all(|(k, p)| y.get(k).is_some_and(|q| same_value(p, q)))
        }
        _ => a == b,
    }
}

/// The text writer gives exactly the Value decoder's JSON text on hand-built rows of every type and on every
/// fixture row, and fails where it fails.
#[test]
fn text_writer_matches_value_decoder() {
    fn same(bytes: &[u8], s: &StructType) {
        let mut text = String::new();
        let mut planned = String::new();
        let res = super::unsafe_row::RowJsonWriter::new(s).write(bytes, &mut planned);
        assert_eq!(res.is_ok(), decode_row(bytes, s).is_ok(), "the compiled writer fails where the values fail");
        match (decode_row(bytes, s), write_row_json(bytes, s, &mut text)) {
            (Ok(v), Ok(())) => {
                if has_java_numbers(s) {
                    // Java's number text (`-1.50`, `1.0E-300`) where the values keep a double or digits.
                    let parsed: Value = serde_json::from_str(&text).expect("valid JSON");
                    assert!(same_value(&parsed, &v), "{text} vs {v}");
                } else {
                    assert_eq!(text, v.to_string());
                }
                assert_eq!(planned, text);
            }
            (Err(_), Err(_)) => {}
            (a, b) => panic!("decoders disagree: {a:?} vs {b:?}"),
        }
    }
    let s = schema(&[
        ("s", json!("string")),
        ("q", json!("string")),
        ("i", json!("integer")),
        ("ts", json!("timestamp")),
        ("d", json!("decimal(20,2)")),
        ("a", json!({"type": "array", "elementType": "string", "containsNull": true})),
        ("n", json!({"type": "array", "elementType": "integer", "containsNull": true})),
        ("m", json!({"type": "map", "keyType": "string", "valueType": "long", "valueContainsNull": true})),
        ("f", json!("double")),
        ("b", json!("binary")),
    ]);
    let r = row(&[
        W::Var("tab\there \"quoted\" \\ \u{1} ü".as_bytes().to_vec()),
        W::Null,
        W::Fixed((-5i32) as u32 as u64),
        W::Fixed(1_704_067_240_000_000),
        W::Dec16(Some(be_bytes(-150))),
        W::Var(array(8, &[W::Var(b"x".to_vec()), W::Null])),
        W::Var(array(4, &[W::Fixed(1), W::Null, W::Fixed(3)])),
        W::Var(map(array(8, &[W::Var(b"k".to_vec())]), array(8, &[W::Null]))),
        W::Fixed(2.5f64.to_bits()),
        W::Var(vec![1, 2, 3]),
    ]);
    same(&r, &s);
    for cut in 0..r.len() {
        same(&r[..cut], &s);
    }
    for i in 0..r.len() {
        let mut b = r.clone();
        b[i] ^= 0x41;
        same(&b, &s);
    }
    for name in ["ss-4.3.0-agg-hdfs", "ss-4.3.0-join", "ss-4.1.4-dedup", "ss-4.1.4-pandas-state"] {
        let mut a = open_fixture(name);
        for m in super::read_state_metadata(&mut a, "").unwrap() {
            let (ks, vs) = super::store_schemas(&mut a, "", m.operator_id, &m.state_store_name).unwrap();
            let batch = super::last_committed_batch(&a, "").unwrap();
            for p in super::list_partitions(&a, "", m.operator_id) {
                let dir = super::store_dir("", m.operator_id, p, &m.state_store_name);
                for (k, v) in super::load_raw_store(&mut a, &dir, batch + 1, &Default::default()).unwrap().iter() {
                    same(k, &ks);
                    same(v, &vs);
                }
            }
        }
    }
}

/// A struct that repeats a field name (an aggregation buffer does: `avg(x), sum(y)` keeps `sum` and `count`
/// twice) is written with every field, in schema order, as Spark's `toJSON` writes it (real Spark 4.1.4's
/// `statestore` rows of `agg(avg, sum, max...)` keep them all), at any depth; the Value decoder keeps one.
#[test]
fn repeated_field_names_are_all_written_as_spark_does() {
    let top = schema(&[("a", json!("long")), ("a", json!("string"))]);
    let dup = row(&[W::Fixed(1), W::Var(b"x".to_vec())]);
    let mut text = String::new();
    write_row_json(&dup, &top, &mut text).unwrap();
    assert_eq!(text, r#"{"a":1,"a":"x"}"#);
    assert_eq!(decode_row(&dup, &top).unwrap().as_object().map(|m| m.len()), Some(1));
    let inner = json!({"type": "struct", "fields": [
        {"name": "x", "type": "long", "nullable": true, "metadata": {}},
        {"name": "x", "type": "long", "nullable": true, "metadata": {}}]});
    let nested = schema(&[("s", inner)]);
    let r = row(&[W::Var(row(&[W::Fixed(7), W::Fixed(8)]))]);
    let mut text = String::new();
    write_row_json(&r, &nested, &mut text).unwrap();
    assert_eq!(text, r#"{"s":{"x":7,"x":8}}"#);
}

/// Spark 4.3 HDFS stores with row checksums: values carry a CRC32C prefix, removal keys too; Spark < 2.3 values
/// carry 4 stray trailing bytes. Both unwrap to the UnsafeRow, and removals still find their key.
#[test]
fn row_checksums_and_legacy_trailing_bytes_unwrap() {
    use super::hdfs::{load_store, unwrap_value};
    use crate::codec::write::lz4_block_stream;
    let crc = |parts: &[&[u8]]| super::rocksdb::encoding::crc32c(parts);
    let k1 = row(&[W::Fixed(1)]);
    let k2 = row(&[W::Fixed(2)]);
    let v = row(&[W::Fixed(42)]);
    let mut checked = crc(&[&k1, &v]).to_le_bytes().to_vec();
    checked.extend_from_slice(&v);
    assert_eq!(unwrap_value(&k1, &checked), &v[..]);
    let mut legacy = v.clone();
    legacy.extend_from_slice(&[9, 9, 9, 9]);
    assert_eq!(unwrap_value(&k1, &legacy), &v[..]);
    assert_eq!(unwrap_value(&k1, &v), &v[..]);
    let rec = |out: &mut Vec<u8>, k: &[u8], v: Option<&[u8]>| {
        out.extend_from_slice(&(k.len() as i32).to_be_bytes());
        out.extend_from_slice(k);
        match v {
            Some(v) => {
                out.extend_from_slice(&(v.len() as i32).to_be_bytes());
                out.extend_from_slice(v);
            }
            None => out.extend_from_slice(&(-1i32).to_be_bytes()),
        }
    };
    let mut d1 = Vec::new();
    rec(&mut d1, &k1, Some(&checked));
    let mut c2 = crc(&[&k2, &v]).to_le_bytes().to_vec();
    c2.extend_from_slice(&v);
    rec(&mut d1, &k2, Some(&c2));
    d1.extend_from_slice(&(-1i32).to_be_bytes());
    let mut d2 = Vec::new();
    let mut removed = crc(&[&k1]).to_le_bytes().to_vec();
    removed.extend_from_slice(&k1);
    rec(&mut d2, &removed, None);
    d2.extend_from_slice(&(-1i32).to_be_bytes());
    let files = vec![
        ("s/1.delta".to_string(), lz4_block_stream(&d1, 32 * 1024)),
        ("s/2.delta".to_string(), lz4_block_stream(&d2, 32 * 1024)),
    ];
    let mut a = crate::archive::MemArchive::new("m", files, crate::archive::Limits::default()).unwrap();
    let store = load_store(&mut a, "s", 2, &Default::default()).unwrap();
    assert_eq!(store.to_pairs(), vec![(k2.clone(), v.clone())]);
    let store = load_store(&mut a, "s", 1, &Default::default()).unwrap();
    assert_eq!(store.len(), 2);
}

/// Map keys are named as Spark's JSON writer names them (`keyArray.get(i).toString`): timestamps and dates as
/// their internal integers, decimals in plain notation.
#[test]
fn map_keys_as_spark_names_them() {
    let s = schema(&[
        ("ts", json!({"type": "map", "keyType": "timestamp", "valueType": "integer", "valueContainsNull": true})),
        ("i", json!({"type": "map", "keyType": "integer", "valueType": "string", "valueContainsNull": true})),
        ("d", json!({"type": "map", "keyType": "decimal(5,2)", "valueType": "boolean", "valueContainsNull": false})),
    ]);
    let r = row(&[
        W::Var(map(array(8, &[W::Fixed(1_704_067_240_000_000)]), array(4, &[W::Fixed(1)]))),
        W::Var(map(array(4, &[W::Fixed((-3i32) as u32 as u64)]), array(8, &[W::Var(b"x".to_vec())]))),
        W::Var(map(array(8, &[W::Fixed((-150i64) as u64)]), array(1, &[W::Fixed(1)]))),
    ]);
    assert_eq!(
        decode_row(&r, &s).unwrap(),
        json!({"ts": {"1704067240000000": 1}, "i": {"-3": "x"}, "d": {"-1.50": true}})
    );
    let mut text = String::new();
    write_row_json(&r, &s, &mut text).unwrap();
    assert_eq!(serde_json::from_str::<Value>(&text).unwrap(), decode_row(&r, &s).unwrap());
}

/// Damage inside a well-framed delta is reported with Spark's error for it and the file named: a garbled key size
/// (`CANNOT_READ_DELTA_FILE_KEY_SIZE`), a stream cut before its end marker, a row whose offsets leave the row.
#[test]
fn damage_inside_a_well_framed_delta() {
    use super::{read_state, StateQuery};
    use crate::codec::write::lz4_block_stream;
    let base = open_fixture("ss-4.3.0-agg-hdfs");
    let files: Vec<(String, Vec<u8>)> = {
        let mut a = base;
        let paths: Vec<String> = a.entries().iter().filter(|e| !e.is_dir).map(|e| e.path.clone()).collect();
        paths
            .into_iter()
            .map(|p| {
                let b = a.read(&p, 1 << 24).unwrap();
                (p, b)
            })
            .collect()
    };
    // The newest delta of partition 0 holding a put; read at its version, from deltas only (no snapshots).
    let mut target = String::new();
    let mut original = Vec::new();
    for v in (1..=12).rev() {
        let p = format!("state/0/0/{v}.delta");
        let Some((_, b)) = files.iter().find(|(q, _)| *q == p) else { continue };
        let d = crate::codec::decompress(b, 1 << 24).unwrap();
        if super::hdfs::scan_records(&d).unwrap().puts > 0 {
            target = p;
            original = d;
            break;
        }
    }
    let version: i64 = target.trim_start_matches("state/0/0/").trim_end_matches(".delta").parse().unwrap();
    let target = target.as_str();
    let with = |data: Vec<u8>| {
        let mut fs = files.clone();
        for (p, b) in fs.iter_mut() {
            if p == target {
                *b = lz4_block_stream(&data, 32 * 1024);
            }
        }
        fs.retain(|(p, _)| !p.ends_with(".snapshot"));
        let mut a = crate::archive::MemArchive::new("m", fs, crate::archive::Limits::default()).unwrap();
        read_state(&mut a, "", &StateQuery { partition: Some(0), batch_id: Some(version - 1), ..Default::default() })
    };
    assert!(with(original.clone()).is_ok());
    let mut bad_size = original.clone();
    bad_size[0..4].copy_from_slice(&(-9i32).to_be_bytes());
    let e = with(bad_size).unwrap_err();
    assert_eq!(
        (e.path.as_str(), e.error_class.as_deref()),
        (target, Some("CANNOT_LOAD_STATE_STORE.CANNOT_READ_DELTA_FILE_KEY_SIZE"))
    );
    assert!(e.message.contains("key size cannot be -9"), "{e}");
    let cut = original[..original.len() - 4].to_vec();
    let e = with(cut).unwrap_err();
    assert_eq!(e.path, target);
    assert!(e.message.contains("before the -1 end marker"), "{e}");
    if original.len() > 8 {
        // The first put's key: its variable-length slots (the window struct, the string) pointed far away.
        let mut first_put = None;
        super::hdfs::for_each_record(&original, super::hdfs::RecordFileKind::Delta, |r| {
            if r.value.is_some() && first_put.is_none() {
                first_put = Some((r.offset as usize, r.key.len()));
            }
        })
        .unwrap();
        let (at, ksize) = first_put.expect("the delta holds a put");
        let mut bad_row = original.clone();
        for slot in (at + 4 + 8..at + 4 + ksize).step_by(8).take(2) {
            bad_row[slot + 4..slot + 8].copy_from_slice(&0x7FFF_0000u32.to_le_bytes());
        }
        let e = with(bad_row).unwrap_err();
        assert_eq!(e.error_class.as_deref(), Some("CANNOT_LOAD_STATE_STORE.KEY_ROW_FORMAT_VALIDATION_FAILURE"), "{e}");
        // The row error names the delta and the record's offset in its decompressed stream, not the folder.
        assert_eq!((e.path.as_str(), e.offset), (target, Some(at as u64)), "{e}");
    }
}

#[test]
fn timestamps_across_eras() {
    assert_eq!(format_timestamp(0, true), "1970-01-01T00:00:00.000Z");
    assert_eq!(format_timestamp(-1, false), "1969-12-31T23:59:59.999");
    assert_eq!(format_timestamp(253_402_300_799_999_999, true), "9999-12-31T23:59:59.999Z");
    assert_eq!(format_timestamp(253_402_300_800_000_000, true), "+10000-01-01T00:00:00.000Z");
    assert_eq!(format_timestamp(-62_135_596_800_000_000, true), "0001-01-01T00:00:00.000Z");
    assert_eq!(format_timestamp(-62_167_219_200_000_001, true), "-0001-12-31T23:59:59.999Z");
    assert_eq!(format_date(-719_162), "0001-01-01");
}

/// Checkpoints without operator metadata (3.5) still get a state-metadata view; where the stores leave no doubt
/// the operator name is inferred, and the rows agree with the 4.x fixture of the same query.
#[test]
fn state_metadata_for_checkpoints_without_operator_metadata() {
    let mut checked = 0;
    for name in fixture_names() {
        if !fixture_record(&name)["mutation"].is_null() || !name.starts_with("ss-3.5") {
            continue;
        }
        let mut a = open_fixture(&name);
        let rows = super::read_state_metadata(&mut a, "").unwrap();
        let scenario = fixture_record(&name)["scenario"].as_str().unwrap_or("").to_string();
        for r in &rows {
            assert!(r.num_partitions > 0 && r.max_batch_id >= r.min_batch_id, "{name}: {r:?}");
            if let Some(n) = &r.operator_name {
                assert!(r.operator_name_inferred);
                let ok = (n == "symmetricHashJoin" && scenario.contains("join"))
                    || (n == "dedupe" && scenario.contains("dropDuplicates"));
                assert!(ok, "{name}: inferred {n} for {scenario}");
                checked += 1;
            }
        }
    }
    assert!(checked >= 5, "{checked}");
}

/// The streaming reader (lz4 block by block) sees exactly what the whole-buffer reader sees, with records spanning
/// block boundaries, the same errors at the same offsets, and never panics on a cut file.
#[test]
fn streaming_reader_equals_whole_buffer_reader() {
    use super::hdfs::{for_each_record, for_each_record_in_file, RecordFileKind, StateFileError};
    use crate::codec::write::lz4_block_stream;
    let mut data = Vec::new();
    let mut seed = 7u64;
    for i in 0..300u32 {
        seed = seed.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        let k = vec![i as u8; 8 * (1 + (seed >> 60) as usize)];
        data.extend_from_slice(&(k.len() as i32).to_be_bytes());
        data.extend_from_slice(&k);
        if i % 7 == 3 {
            data.extend_from_slice(&(-1i32).to_be_bytes());
        } else {
            let v = vec![(i * 3) as u8; if i % 50 == 0 { 70_000 } else { 8 * ((seed >> 56) as usize % 9) }];
            data.extend_from_slice(&(v.len() as i32).to_be_bytes());
            data.extend_from_slice(&v);
        }
    }
    data.extend_from_slice(&(-1i32).to_be_bytes());
    let collect_whole = |d: &[u8], kind| {
        let mut v: Vec<(Vec<u8>, Option<Vec<u8>>)> = Vec::new();
        let st = for_each_record(d, kind, |r| v.push((r.key.to_vec(), r.value.map(<[u8]>::to_vec))));
        (st, v)
    };
    let collect_stream = |framed: &[u8], kind| {
        let mut v: Vec<(Vec<u8>, Option<Vec<u8>>)> = Vec::new();
        let st = for_each_record_in_file(framed, kind, 1 << 26, |k, val| v.push((k.to_vec(), val.map(<[u8]>::to_vec))));
        (st, v)
    };
    for block in [64usize, 1024, 32 * 1024] {
        let framed = lz4_block_stream(&data, block);
        let (ws, wv) = collect_whole(&data, RecordFileKind::Delta);
        let (ss, sv) = collect_stream(&framed, RecordFileKind::Delta);
        assert_eq!(ws.unwrap(), ss.unwrap(), "block {block}");
        assert_eq!(wv, sv);
        // A snapshot must not hold removals: same error, same offset.
        let we = collect_whole(&data, RecordFileKind::Snapshot).0.unwrap_err();
        match collect_stream(&framed, RecordFileKind::Snapshot).0.unwrap_err() {
            StateFileError::Records(e) => assert_eq!((e.offset, e.kind), (we.offset, we.kind)),
            other => panic!("{other}"),
        }
    }
    // A garbled key size in the middle, and bytes after the end marker.
    let mut bad = data.clone();
    let at = {
        let mut offs = Vec::new();
        for_each_record(&data, RecordFileKind::Delta, |r| offs.push(r.offset)).unwrap();
        offs[150] as usize
    };
    bad[at..at + 4].copy_from_slice(&(-42i32).to_be_bytes());
    let framed = lz4_block_stream(&bad, 1024);
    match collect_stream(&framed, RecordFileKind::Delta).0.unwrap_err() {
        StateFileError::Records(e) => assert_eq!(e.offset as usize, at),
        other => panic!("{other}"),
    }
    let mut tail = data.clone();
    tail.extend_from_slice(&[1, 2, 3]);
    let st = collect_stream(&lz4_block_stream(&tail, 64), RecordFileKind::Delta).0.unwrap();
    assert_eq!(st.trailing_bytes, 3);
    // Cut anywhere: an error, never a panic; cut inside the record stream: a truncation at a record start.
    let framed = lz4_block_stream(&data, 1024);
    for cut in (0..framed.len()).step_by(97) {
        assert!(collect_stream(&framed[..cut], RecordFileKind::Delta).0.is_err(), "cut {cut}");
    }
    let cut_records = lz4_block_stream(&data[..data.len() / 2], 1024);
    match collect_stream(&cut_records, RecordFileKind::Delta).0.unwrap_err() {
        StateFileError::Records(e) => assert!(e.reason.contains("before the -1 end marker"), "{}", e.reason),
        other => panic!("{other}"),
    }
}

#[test]
fn first_missing_partition_is_found_against_the_folders() {
    use super::first_missing_partition as f;
    assert_eq!(f(&[0, 1, 2], 3), None);
    assert_eq!(f(&[0, 1, 2], -3), None);
    assert_eq!(f(&[0, 1, 2], i64::MAX), Some(3));
    assert_eq!(f(&[0, 2], 3), Some(1));
    assert_eq!(f(&[0, 0, 1, 1, 3], 4), Some(2));
    assert_eq!(f(&[1, 2], 3), Some(0));
    assert_eq!(f(&[], 0), None);
    assert_eq!(f(&[u32::MAX], i64::MAX), Some(0));
}

/// All files of a fixture, to be changed and put in a [`crate::archive::MemArchive`].
fn fixture_files(name: &str) -> Vec<(String, Vec<u8>)> {
    let mut a = open_fixture(name);
    let paths: Vec<String> = a.entries().iter().filter(|e| !e.is_dir).map(|e| e.path.clone()).collect();
    paths
        .into_iter()
        .map(|p| {
            let b = a.read(&p, 1 << 26).unwrap();
            (p, b)
        })
        .collect()
}

/// `data` (a decompressed delta or v1 changelog ending in the -1 end marker) with one more record before the
/// marker; returns the new stream and the record's offset.
fn with_record_before_end(data: &[u8], key: &[u8], value: &[u8]) -> (Vec<u8>, u64) {
    let end = data.len() - 4;
    assert_eq!(&data[end..], &(-1i32).to_be_bytes(), "stream does not end in the -1 marker");
    let mut out = data[..end].to_vec();
    out.extend_from_slice(&(key.len() as i32).to_be_bytes());
    out.extend_from_slice(key);
    out.extend_from_slice(&(value.len() as i32).to_be_bytes());
    out.extend_from_slice(value);
    out.extend_from_slice(&(-1i32).to_be_bytes());
    (out, end as u64)
}

/// A row that does not decode names the delta it was last put in (the newest such delta, or an older one when no
/// later delta touches it) and the record's offset in the decompressed stream; the store folder stays in the
/// message.
#[test]
fn hdfs_row_errors_name_the_delta_and_record_offset() {
    use super::{read_state, StateQuery};
    use crate::codec::write::lz4_block_stream;
    let files = fixture_files("ss-4.1.4-agg-hdfs");
    let mut a = crate::archive::MemArchive::new("m", files.clone(), crate::archive::Limits::default()).unwrap();
    let listed = crate::state_files::store_files(a.entries(), "state/0/0");
    // The newest version that is not a snapshot: a snapshot and at least one delta after it.
    let mut version = super::last_committed_batch(&a, "").unwrap() + 1;
    while listed.snapshots.contains_key(&version) {
        version -= 1;
    }
    let q = StateQuery { batch_id: Some(version - 1), ..Default::default() };
    let snap = listed.snapshots.keys().copied().filter(|s| *s <= version).max();
    let deltas: Vec<i64> = listed.deltas.keys().copied().filter(|d| *d > snap.unwrap_or(0) && *d <= version).collect();
    assert!(!deltas.is_empty());
    assert!(read_state(&mut a, "", &q).is_ok());
    let mut picks =
        vec![format!("state/0/0/{}.delta", deltas[deltas.len() - 1]), format!("state/0/0/{}.delta", deltas[0])];
    picks.extend(snap.map(|s| format!("state/0/0/{s}.snapshot")));
    assert!(picks.len() == 3, "{picks:?}");
    for path in picks {
        let mut fs = files.clone();
        let mut at = 0;
        for (p, b) in fs.iter_mut() {
            if *p == path {
                let data = crate::codec::decompress(b, 1 << 24).unwrap();
                // A 3-byte key: no UnsafeRow (rows are 8-byte words).
                let (new, off) = with_record_before_end(&data, &[1, 2, 3], &[0; 16]);
                at = off;
                *b = lz4_block_stream(&new, 32 * 1024);
            }
        }
        let mut a = crate::archive::MemArchive::new("m", fs, crate::archive::Limits::default()).unwrap();
        let e = read_state(&mut a, "", &q).unwrap_err();
        assert_eq!((e.path.as_str(), e.offset), (path.as_str(), Some(at)), "{e}");
        assert_eq!(e.error_class.as_deref(), Some("CANNOT_LOAD_STATE_STORE.KEY_ROW_FORMAT_VALIDATION_FAILURE"));
        assert!(e.message.contains("store state/0/0") && e.message.contains("decompressed"), "{e}");
    }
}

/// RocksDB: a row that does not decode names the changelog it came from and the record's offset in the
/// decompressed stream; rows from the snapshot name the SST holding them.
#[test]
fn rocksdb_row_errors_name_the_changelog_or_sst() {
    use super::{read_state, StateQuery};
    use crate::codec::write::lz4_block_stream;
    let files = fixture_files("ss-4.0.5-agg-rocksdb-changelog");
    // Batch 10 = version 11: 10.zip plus 11.changelog.
    let q = StateQuery { partition: Some(0), batch_id: Some(10), ..Default::default() };
    let mut a = crate::archive::MemArchive::new("m", files.clone(), crate::archive::Limits::default()).unwrap();
    assert!(read_state(&mut a, "", &q).is_ok());
    let path = "state/0/0/11.changelog";
    let mut fs = files.clone();
    let mut at = 0;
    for (p, b) in fs.iter_mut() {
        if p == path {
            let data = crate::codec::decompress(b, 1 << 24).unwrap();
            // Version byte 0, then 3 bytes: no UnsafeRow.
            let (new, off) = with_record_before_end(&data, &[0, 1, 2, 3], &[0; 17]);
            at = off;
            *b = lz4_block_stream(&new, 32 * 1024);
        }
    }
    let mut a = crate::archive::MemArchive::new("m", fs, crate::archive::Limits::default()).unwrap();
    let e = read_state(&mut a, "", &q).unwrap_err();
    assert_eq!((e.path.as_str(), e.offset), (path, Some(at)), "{e}");
    assert!(e.message.contains("store state/0/0"), "{e}");

    // Every key of the snapshot-only version 12 (12.zip) is located in an SST the zip lists, at a data block
    // offset inside that file, and that SST holds the key.
    let mut a = crate::archive::MemArchive::new("m", files, crate::archive::Limits::default()).unwrap();
    let opts = super::rocksdb::LoadOptions::default();
    let store = super::rocksdb::load_store(&mut a, "state/0/0", 12, &opts).unwrap();
    assert!(store.plan.changelogs.is_empty() && store.plan.snapshot.is_some());
    let limits = super::rocksdb::LoadLimits::default();
    let mut n = 0;
    for k in store.entries.keys().take(5) {
        let src = super::rocksdb::locate_key(&mut a, "state/0/0", &store.plan, k, &limits).unwrap();
        assert!(src.path.starts_with("state/0/0/SSTs/") && src.path.ends_with(".sst"), "{src:?}");
        assert!(!src.in_decompressed_stream);
        let sst = a.read(&src.path, 1 << 26).unwrap();
        assert!(src.offset < sst.len() as u64);
        let t = super::rocksdb::sst::read_sst(&sst, Default::default()).unwrap();
        assert!(t.entries.iter().any(|e| e.user_key == *k));
        n += 1;
    }
    assert!(n > 0);
}

/// One compiled writer over many rows (the date of the last timestamp kept between them) writes each row as
/// `write_row_json` does: days before the epoch, around leap days, past year 9999, timestamp_ntz.
#[test]
fn compiled_writer_keeps_dates_right_across_rows() {
    let s = schema(&[("t", json!("timestamp")), ("n", json!("timestamp_ntz")), ("k", json!("string"))]);
    let mut w = super::unsafe_row::RowJsonWriter::new(&s);
    let day = 86_400_000_000i64;
    let mut micros = vec![0, -1, 1, day - 1, day, -day, -day - 1, i64::MAX, i64::MIN, 253_402_300_800_000_000];
    micros.extend((0..400).map(|i| 951_782_400_000_000 + i * (day / 7) - 3 * day));
    for (i, &t) in micros.iter().enumerate() {
        let r = row(&[W::Fixed(t as u64), W::Fixed(t.wrapping_add(i as i64) as u64), W::Var(b"x".to_vec())]);
        let (mut a, mut b) = (String::new(), String::new());
        w.write(&r, &mut a).unwrap();
        write_row_json(&r, &s, &mut b).unwrap();
        assert_eq!(a, b, "{t}");
        assert_eq!(a, decode_row(&r, &s).unwrap().to_string());
    }
}

/// An explicit batch id that was planned but not committed (or is beyond the log) has no committed batch to read,
/// as Spark 4.x's `statestore` reader says (a newcomer's real Spark 4.1.4 reads of a query killed mid-batch:
/// STDS_COMMITTED_BATCH_UNAVAILABLE on HDFS and RocksDB); a committed one reads.
#[test]
fn an_uncommitted_batch_id_has_no_committed_batch_to_read() {
    use super::{read_state, StateQuery};
    // The last two commits deleted: offsets 0..=19, commits 0..=17.
    let files = generated_files("log-accident-commits-two-deleted-4.1.4");
    let mut a = crate::archive::MemArchive::new("t.zip", files, crate::archive::Limits::default()).unwrap();
    for b in [18, 19, 25] {
        let e = read_state(&mut a, "", &StateQuery { batch_id: Some(b), ..Default::default() }).unwrap_err();
        assert_eq!(e.error_class.as_deref(), Some("STDS_COMMITTED_BATCH_UNAVAILABLE"), "{b}: {e}");
        assert!(e.message.contains(&format!("batchId {b} (last committed: 17)")), "{e}");
    }
    assert!(!read_state(&mut a, "", &StateQuery { batch_id: Some(17), ..Default::default() }).unwrap().is_empty());
}
