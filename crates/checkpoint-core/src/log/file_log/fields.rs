//! The fields of a file log entry line, read with serde without building a `serde_json::Value` of the line:
//! the five fields used are kept, every other value is skipped as it is read. Each field is `None` when absent
//! and `Some(None)` when present with a value of another type (`serde_json::Value::as_i64` / `as_str` give
//! `None` there too), so that [`super::entry`] decides as it did on a `Value`.

use serde::de::{self, Deserialize, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};
use std::fmt;

/// The fields of one entry line (`FileEntry` of a source log, `SinkFileStatus` of a sink log) that are used.
#[derive(Debug, Default)]
pub(super) struct EntryFields {
    pub path: Option<Option<String>>,
    pub timestamp: Option<Option<i64>>,
    pub modification_time: Option<Option<i64>>,
    pub batch_id: Option<Option<i64>>,
    pub size: Option<Option<i64>>,
    pub action: Option<Option<String>>,
}

/// A key of an entry object: one of the used fields, or another.
enum Key {
    Path,
    Timestamp,
    ModificationTime,
    BatchId,
    Size,
    Action,
    Other,
}

impl<'de> Deserialize<'de> for Key {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl Visitor<'_> for V {
            type Value = Key;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a field name")
            }
            fn visit_str<E: de::Error>(self, s: &str) -> Result<Key, E> {
                Ok(match s {
                    "path" => Key::Path,
                    "timestamp" => Key::Timestamp,
                    "modificationTime" => Key::ModificationTime,
                    "batchId" => Key::BatchId,
                    "size" => Key::Size,
                    "action" => Key::Action,
                    _ => Key::Other,
                })
            }
        }
        d.deserialize_str(V)
    }
}

/// Any JSON value: an integer that fits an `i64` is kept, anything else is skipped.
struct Int(Option<i64>);
/// Any JSON value: a string is kept, anything else is skipped.
struct Str(Option<String>);

/// Skips the rest of an array or object value.
fn drain_seq<'de, A: SeqAccess<'de>>(mut a: A) -> Result<(), A::Error> {
    while a.next_element::<IgnoredAny>()?.is_some() {}
    Ok(())
}

fn drain_map<'de, A: MapAccess<'de>>(mut a: A) -> Result<(), A::Error> {
    while a.next_entry::<IgnoredAny, IgnoredAny>()?.is_some() {}
    Ok(())
}

/// The visitor methods every lenient value shares: scalars of other types read as absent, arrays and objects
/// are skipped.
macro_rules! others_absent {
    ($t:ident) => {
        fn visit_bool<E: de::Error>(self, _: bool) -> Result<$t, E> {
            Ok($t(None))
        }
        fn visit_f64<E: de::Error>(self, _: f64) -> Result<$t, E> {
            Ok($t(None))
        }
        fn visit_unit<E: de::Error>(self) -> Result<$t, E> {
            Ok($t(None))
        }
        fn visit_none<E: de::Error>(self) -> Result<$t, E> {
            Ok($t(None))
        }
        fn visit_seq<A: SeqAccess<'de>>(self, a: A) -> Result<$t, A::Error> {
            drain_seq(a).map(|_| $t(None))
        }
        fn visit_map<A: MapAccess<'de>>(self, a: A) -> Result<$t, A::Error> {
            drain_map(a).map(|_| $t(None))
        }
    };
}

impl<'de> Deserialize<'de> for Int {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Int;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("any value")
            }
            fn visit_i64<E: de::Error>(self, v: i64) -> Result<Int, E> {
                Ok(Int(Some(v)))
            }
            fn visit_u64<E: de::Error>(self, v: u64) -> Result<Int, E> {
                Ok(Int(i64::try_from(v).ok()))
            }
            fn visit_str<E: de::Error>(self, _: &str) -> Result<Int, E> {
                Ok(Int(None))
            }
            others_absent!(Int);
        }
        d.deserialize_any(V)
    }
}

impl<'de> Deserialize<'de> for Str {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Str;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("any value")
            }
            fn visit_i64<E: de::Error>(self, _: i64) -> Result<Str, E> {
                Ok(Str(None))
            }
            fn visit_u64<E: de::Error>(self, _: u64) -> Result<Str, E> {
                Ok(Str(None))
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<Str, E> {
                Ok(Str(Some(v.to_string())))
            }
            fn visit_string<E: de::Error>(self, v: String) -> Result<Str, E> {
                Ok(Str(Some(v)))
            }
            others_absent!(Str);
        }
        d.deserialize_any(V)
    }
}

impl<'de> Deserialize<'de> for EntryFields {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = EntryFields;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a JSON value")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut a: A) -> Result<EntryFields, A::Error> {
                let mut f = EntryFields::default();
                while let Some(k) = a.next_key::<Key>()? {
                    match k {
                        Key::Path => f.path = Some(a.next_value::<Str>()?.0),
                        Key::Action => f.action = Some(a.next_value::<Str>()?.0),
                        Key::Timestamp => f.timestamp = Some(a.next_value::<Int>()?.0),
                        Key::ModificationTime => f.modification_time = Some(a.next_value::<Int>()?.0),
                        Key::BatchId => f.batch_id = Some(a.next_value::<Int>()?.0),
                        Key::Size => f.size = Some(a.next_value::<Int>()?.0),
                        Key::Other => {
                            a.next_value::<IgnoredAny>()?;
                        }
                    }
                }
                Ok(f)
            }
            // Not an object: no field (the entry then has no usable path).
            fn visit_seq<A: SeqAccess<'de>>(self, a: A) -> Result<EntryFields, A::Error> {
                drain_seq(a).map(|_| EntryFields::default())
            }
            fn visit_bool<E: de::Error>(self, _: bool) -> Result<EntryFields, E> {
                Ok(EntryFields::default())
            }
            fn visit_i64<E: de::Error>(self, _: i64) -> Result<EntryFields, E> {
                Ok(EntryFields::default())
            }
            fn visit_u64<E: de::Error>(self, _: u64) -> Result<EntryFields, E> {
                Ok(EntryFields::default())
            }
            fn visit_f64<E: de::Error>(self, _: f64) -> Result<EntryFields, E> {
                Ok(EntryFields::default())
            }
            fn visit_str<E: de::Error>(self, _: &str) -> Result<EntryFields, E> {
                Ok(EntryFields::default())
            }
            fn visit_unit<E: de::Error>(self) -> Result<EntryFields, E> {
                Ok(EntryFields::default())
            }
        }
        d.deserialize_any(V)
    }
}

#[cfg(test)]
mod tests {
    use super::super::{entry, FileLogEntry};
    use crate::log::{json_error, LogError};

    /// The entry as read through a whole `serde_json::Value` (the reader before this one): the reference.
    fn by_value(line: &str) -> Result<FileLogEntry, LogError> {
        let v: serde_json::Value = serde_json::from_str(line).map_err(|e| json_error(&e, line, 7, 2))?;
        let Some(path) = v.get("path").and_then(|p| p.as_str()) else {
            return Err(LogError::BadJson {
                offset: 7,
                line: 2,
                message: "No usable value for path".into(),
                eof: false,
                data: true,
            });
        };
        Ok(FileLogEntry {
            path: path.to_string(),
            timestamp_ms: v.get("timestamp").or_else(|| v.get("modificationTime")).and_then(|x| x.as_i64()),
            batch_id: v.get("batchId").and_then(|x| x.as_i64()),
            size: v.get("size").and_then(|x| x.as_i64()),
            action: v.get("action").and_then(|x| x.as_str()).map(str::to_string),
        })
    }

    #[test]
    fn fields_read_as_a_whole_value_reads_them() {
        let lines = [
            r#"{"path":"file:///a","timestamp":1,"batchId":0}"#,
            r#"{"path":"p","size":12,"isDir":false,"modificationTime":3,"blockReplication":1,"blockSize":3,"action":"add"}"#,
            r#"{"path":"a","path":"b"}"#,
            r#"{"path":"a","path":1}"#,
            r#"{"path":null}"#,
            r#"{"path":["x"]}"#,
            r#"{"path":{"a":"b"}}"#,
            r#"{"timestamp":1}"#,
            r#"["path","x"]"#,
            r#""path""#,
            "17",
            "null",
            "true",
            r#"{"path":"a","timestamp":"1","modificationTime":5}"#,
            r#"{"path":"a","timestamp":null,"modificationTime":5}"#,
            r#"{"path":"a","modificationTime":5}"#,
            r#"{"path":"a","timestamp":1.5,"batchId":18446744073709551615,"size":-3}"#,
            r#"{"path":"a","batchId":9223372036854775807,"size":9223372036854775808}"#,
            r#"{"path":"a","action":7}"#,
            r#"{"path":"a\u00e9\n","action":"de\"lete"}"#,
            r#"{"path":"a","x":{"y":[1,2,{"z":null}],"w":"v"},"t":[[[]]]}"#,
            r#"{"path":"a","x":[1,2"#,
            r#"{"path":"a",}"#,
            r#"{"path":"a"} x"#,
            r#"{"path":"a"}   "#,
            r#"{"pa"#,
            "",
            "{",
            r#"{"path":"a","timestamp":-0}"#,
            r#"{"path":"a","timestamp":1e3}"#,
        ];
        for line in lines {
            assert_eq!(entry(line, 7, 2), by_value(line), "{line}");
        }
    }
}
