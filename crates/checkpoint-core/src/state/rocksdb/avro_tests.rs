//! Tests of the Avro reader, and a test-only writer of the same subset (`write`).

use super::*;

/// Test-only Avro writer for the same subset, driven by a Spark schema and the JSON of the row (so tests can
/// build rows byte for byte as Spark's `AvroSerializer` + `GenericDatumWriter` write them).
pub(crate) mod write {
    use super::*;

    pub fn long(out: &mut Vec<u8>, v: i64) {
        let mut z = ((v << 1) ^ (v >> 63)) as u64;
        loop {
            let b = (z & 0x7f) as u8;
            z >>= 7;
            if z == 0 {
                out.push(b);
                return;
            }
            out.push(b | 0x80);
        }
    }

    fn val(out: &mut Vec<u8>, t: &AvroType, dt: &DataType, v: &Value) {
        match t {
            AvroType::Union(_) => {
                if v.is_null() {
                    long(out, 0);
                } else if let AvroType::Union(b) = t {
                    long(out, 1);
                    val(out, &b[1], dt, v);
                }
            }
            AvroType::Null => {}
            AvroType::Boolean => out.push(u8::from(v.as_bool().unwrap())),
            AvroType::Int | AvroType::Long => long(out, v.as_i64().unwrap()),
            AvroType::Float => out.extend((v.as_f64().unwrap() as f32).to_le_bytes()),
            AvroType::Double => out.extend(v.as_f64().unwrap().to_le_bytes()),
            AvroType::String | AvroType::Bytes => {
                let s = v.as_str().unwrap().as_bytes();
                long(out, s.len() as i64);
                out.extend(s);
            }
            AvroType::Fixed(n) => {
                // The test gives the unscaled value as an integer.
                let x = i128::from(v.as_i64().unwrap());
                out.extend(&x.to_be_bytes()[16 - n..]);
            }
            AvroType::Record(fields) => {
                let DataType::Struct(st) = dt else { panic!("record for {dt:?}") };
                for (f, ft) in st.fields.iter().zip(fields) {
                    val(out, ft, &f.data_type, v.get(&f.name).unwrap_or(&Value::Null));
                }
            }
            AvroType::Array(items) => {
                let DataType::Array { element, .. } = dt else { panic!() };
                let a = v.as_array().unwrap();
                if !a.is_empty() {
                    long(out, a.len() as i64);
                    for x in a {
                        val(out, items, element, x);
                    }
                }
                long(out, 0);
            }
            AvroType::Map(values) => {
                let DataType::Map { value: vt, .. } = dt else { panic!() };
                let m = v.as_object().unwrap();
                if !m.is_empty() {
                    long(out, m.len() as i64);
                    for (k, x) in m {
                        long(out, k.len() as i64);
                        out.extend(k.as_bytes());
                        val(out, values, vt, x);
                    }
                }
                long(out, 0);
            }
        }
    }

    /// The Avro bytes of `row` (a JSON object) for `schema`.
    pub fn row(schema: &StructType, row: &Value) -> Vec<u8> {
        let t = avro_schema(schema).unwrap();
        let mut out = Vec::new();
        val(&mut out, &t, &DataType::Struct(schema.clone()), row);
        out
    }
}

mod tests {
    use super::*;
    use serde_json::json;

    fn schema(json: &str) -> StructType {
        StructType::from_json_str(json).unwrap()
    }

    #[test]
    fn min_bytes_like_spark() {
        // Decimal.minBytesForPrecision: 1..2 digits → 1 byte, 3..4 → 2, 9 → 4, 18 → 8, 38 → 16.
        assert_eq!(min_bytes_for_precision(1), 1);
        assert_eq!(min_bytes_for_precision(2), 1);
        assert_eq!(min_bytes_for_precision(3), 2);
        assert_eq!(min_bytes_for_precision(9), 4);
        assert_eq!(min_bytes_for_precision(10), 5);
        assert_eq!(min_bytes_for_precision(18), 8);
        assert_eq!(min_bytes_for_precision(38), 16);
    }

    #[test]
    fn schema_mirrors_to_avro_type_with_defaults() {
        let s = schema(
            r#"{"type":"struct","fields":[
            {"name":"a","type":"integer","nullable":false,"metadata":{}},
            {"name":"n","type":"void","nullable":true,"metadata":{}},
            {"name":"s","type":{"type":"struct","fields":[{"name":"x","type":"string","nullable":true,"metadata":{}}]},"nullable":true,"metadata":{}},
            {"name":"l","type":{"type":"array","elementType":"long","containsNull":true},"nullable":true,"metadata":{}}]}"#,
        );
        let u = |t| AvroType::Union(vec![AvroType::Null, t]);
        assert_eq!(
            avro_schema(&s).unwrap(),
            AvroType::Record(vec![
                u(AvroType::Int),
                AvroType::Null,
                u(AvroType::Record(vec![u(AvroType::String)])),
                u(AvroType::Array(Box::new(AvroType::Long))),
            ])
        );
        let bad = schema(
            r#"{"type":"struct","fields":[{"name":"m","type":{"type":"map","keyType":"integer","valueType":"long","valueContainsNull":true},"nullable":true,"metadata":{}}]}"#,
        );
        assert!(avro_schema(&bad).is_err());
    }

    #[test]
    fn hand_encoded_bytes_decode() {
        // {a: int 3 (non-null), s: string "hé", t: timestamp 1 s, d: decimal(5,2) -1.25, b: binary "hi"}
        let s = schema(
            r#"{"type":"struct","fields":[
            {"name":"a","type":"integer","nullable":false,"metadata":{}},
            {"name":"s","type":"string","nullable":true,"metadata":{}},
            {"name":"t","type":"timestamp","nullable":true,"metadata":{}},
            {"name":"d","type":"decimal(5,2)","nullable":true,"metadata":{}},
            {"name":"b","type":"binary","nullable":true,"metadata":{}},
            {"name":"z","type":"long","nullable":true,"metadata":{}}]}"#,
        );
        // Every field is a ["null", T] union: branch 1 (= zig-zag 2) then the value.
        let mut b = vec![2, 6]; // a = 3 → zig-zag 6
        b.extend([2, 6, b'h', 0xc3, 0xa9]); // string of 3 bytes
        b.extend([2, 0x80, 0x89, 0x7a]); // 1_000_000 µs → zig-zag 2_000_000
        b.extend([2, 0xff, 0xff, 0x83]); // decimal(5,2) → fixed(3): unscaled -125 big-endian
        b.extend([2, 4, b'h', b'i']);
        b.push(0); // z = null (branch 0)
        let v = decode_avro_row(&b, &s).unwrap();
        assert_eq!(v, json!({"a": 3, "s": "hé", "t": "1970-01-01T00:00:01.000Z", "d": -1.25, "b": "aGk="}));
        // Every cut and every flipped byte is an error or a value, never a panic.
        for n in 0..b.len() {
            assert!(decode_avro_row(&b[..n], &s).is_err());
        }
        for i in 0..b.len() {
            let mut x = b.clone();
            x[i] ^= 0xff;
            let _ = decode_avro_row(&x, &s);
        }
        // Trailing bytes are an error.
        let mut t = b.clone();
        t.push(0);
        assert!(decode_avro_row(&t, &s).unwrap_err().message.contains("left after"));
    }

    #[test]
    fn writer_round_trip_nested() {
        let s = schema(
            r#"{"type":"struct","fields":[
            {"name":"k","type":{"type":"struct","fields":[{"name":"x","type":"double","nullable":true,"metadata":{}},{"name":"f","type":"float","nullable":true,"metadata":{}}]},"nullable":true,"metadata":{}},
            {"name":"l","type":{"type":"array","elementType":"integer","containsNull":false},"nullable":true,"metadata":{}},
            {"name":"m","type":{"type":"map","keyType":"string","valueType":"date","valueContainsNull":true},"nullable":true,"metadata":{}},
            {"name":"ok","type":"boolean","nullable":true,"metadata":{}}]}"#,
        );
        let row = json!({"k": {"x": 1.5, "f": 0.5}, "l": [1, -2, 3], "m": {"a": 0}, "ok": true});
        let b = write::row(&s, &row);
        let v = decode_avro_row(&b, &s).unwrap();
        assert_eq!(v, json!({"k": {"x": 1.5, "f": 0.5}, "l": [1, -2, 3], "m": {"a": "1970-01-01"}, "ok": true}));
        // An array claiming 2^40 items is bounded, not allocated.
        let mut huge = vec![0u8, 2];
        write::long(&mut huge, 1 << 40);
        assert!(decode_avro_row(&huge, &s).is_err());
    }

    #[test]
    fn to_unsafe_row_matches_the_json_path() {
        let s = schema(
            r#"{"type":"struct","fields":[
            {"name":"k","type":{"type":"struct","fields":[{"name":"x","type":"double","nullable":true,"metadata":{}},{"name":"s","type":"string","nullable":true,"metadata":{}}]},"nullable":true,"metadata":{}},
            {"name":"l","type":{"type":"array","elementType":"integer","containsNull":false},"nullable":true,"metadata":{}},
            {"name":"m","type":{"type":"map","keyType":"string","valueType":"long","valueContainsNull":true},"nullable":true,"metadata":{}},
            {"name":"d","type":"decimal(20,2)","nullable":true,"metadata":{}},
            {"name":"e","type":"decimal(20,2)","nullable":true,"metadata":{}},
            {"name":"b","type":"byte","nullable":true,"metadata":{}},
            {"name":"ok","type":"boolean","nullable":true,"metadata":{}}]}"#,
        );
        let row = json!({"k": {"x": 1.5, "s": "hi"}, "l": [1, -2, 3], "m": {"a": 5}, "d": -12345, "b": -3, "ok": true});
        let b = write::row(&s, &row);
        let u = decode_avro_to_unsafe_row(&b, &s).unwrap();
        assert_eq!(crate::state::unsafe_row::decode_row(&u, &s).unwrap(), decode_avro_row(&b, &s).unwrap(),);
        // The struct {value: "a"} as UnsafeRowWriter lays it out: no nulls, slot (16 << 32 | 1), "a" padded.
        let k =
            schema(r#"{"type":"struct","fields":[{"name":"value","type":"string","nullable":true,"metadata":{}}]}"#);
        let u = decode_avro_to_unsafe_row(&write::row(&k, &json!({"value": "a"})), &k).unwrap();
        let mut want = 0u64.to_le_bytes().to_vec();
        want.extend(((16u64 << 32) | 1).to_le_bytes());
        want.extend(b"a\0\0\0\0\0\0\0");
        assert_eq!(u, want);
        for n in 0..b.len() {
            assert!(decode_avro_to_unsafe_row(&b[..n], &s).is_err());
        }
    }

    #[test]
    fn resolution_by_field_name() {
        let reader = schema(
            r#"{"type":"struct","fields":[{"name":"b","type":"long","nullable":true,"metadata":{}},{"name":"c","type":"long","nullable":true,"metadata":{}}]}"#,
        );
        assert_eq!(resolve(&json!({"a": 1, "b": 2}), &reader), json!({"b": 2}));
    }
}
