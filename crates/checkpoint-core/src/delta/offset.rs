//! The Delta source offset as Delta reads it back from the offset log.
//!
//! Mirrors delta-io/delta `spark/src/main/scala/org/apache/spark/sql/delta/sources/DeltaSourceOffset.scala`
//! (`DeltaSourceOffset.Deserializer`, `validateOffsets`): the serialized fields are `sourceVersion`,
//! `reservoirId`, `reservoirVersion`, `index` and `isStartingVersion` (which really means "is in the initial
//! snapshot"). `sourceVersion` 1 is the normal format, 3 the one with schema-change markers (`index` -20 =
//! a metadata change, -19 = right after one), 2 is reserved. Delta's rejections:
//!
//! * JSON that does not map onto the fields (a string where a number belongs): `DELTA_INVALID_SOURCE_OFFSET_FORMAT`;
//! * `sourceVersion` < 1 (also a missing one, which Jackson reads as 0) or == 2: `DELTA_INVALID_SOURCE_VERSION`;
//! * `sourceVersion` > 3: `DELTA_INVALID_FORMAT_FROM_SOURCE_VERSION` (written by a newer Delta);
//! * `index` -1 with `sourceVersion` 3: the base index is upgraded to -100 only for versions below 3, so the
//!   constructor's `assert(index != -1)` fails (an `AssertionError`, no error class).

use serde_json::Value;

/// `sourceVersion` of the plain format.
pub const VERSION_1: i64 = 1;
/// `sourceVersion` reserved by Delta (rejected).
pub const VERSION_2: i64 = 2;
/// `sourceVersion` of the format with schema-change indexes (the newest Delta writes).
pub const VERSION_3: i64 = 3;
/// `index` of an offset that holds a metadata (schema) change (from sourceVersion 3).
pub const METADATA_CHANGE_INDEX: i64 = -20;
/// `index` right after a metadata change (from sourceVersion 3).
pub const POST_METADATA_CHANGE_INDEX: i64 = -19;
/// `index` on disk for "before the first file of the version" (in memory Delta uses -100).
pub const BASE_INDEX_V1: i64 = -1;

/// A Delta source offset as recorded in `offsets/<batch>`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DeltaSourceOffset {
    /// The serialization version (1 or 3).
    pub source_version: i64,
    /// The Delta table id (`metaData.id` of the table the stream read); `None` when absent (Jackson: null).
    pub reservoir_id: Option<String>,
    /// The table version being processed: the version the next batch reads from.
    pub reservoir_version: i64,
    /// Position within the version's sorted files; -1 = before the first file; -20/-19 schema-change markers.
    pub index: i64,
    /// True while the stream is still reading the initial snapshot of the table at `reservoir_version`
    /// (serialized as `isStartingVersion`).
    pub is_initial_snapshot: bool,
}

/// Why Delta refuses an offset.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum OffsetRejection {
    /// The fields do not parse (`DELTA_INVALID_SOURCE_OFFSET_FORMAT`).
    InvalidFormat(String),
    /// `sourceVersion` below 1 or the reserved 2 (`DELTA_INVALID_SOURCE_VERSION`).
    InvalidSourceVersion(i64),
    /// `sourceVersion` above 3, written by a newer Delta (`DELTA_INVALID_FORMAT_FROM_SOURCE_VERSION`).
    TooNew(i64),
    /// `index` -1 in a sourceVersion 3 offset: Delta's `assert(index != -1)` fails.
    BaseIndexInVersion3,
}

impl OffsetRejection {
    /// The error class Delta raises, when it raises one.
    pub fn error_class(&self) -> Option<&'static str> {
        match self {
            OffsetRejection::InvalidFormat(_) => Some("DELTA_INVALID_SOURCE_OFFSET_FORMAT"),
            OffsetRejection::InvalidSourceVersion(_) => Some("DELTA_INVALID_SOURCE_VERSION"),
            OffsetRejection::TooNew(_) => Some("DELTA_INVALID_FORMAT_FROM_SOURCE_VERSION"),
            OffsetRejection::BaseIndexInVersion3 => None,
        }
    }

    /// The exception Delta throws.
    pub fn exception(&self) -> &'static str {
        match self {
            OffsetRejection::BaseIndexInVersion3 => "java.lang.AssertionError",
            _ => "org.apache.spark.sql.delta.DeltaIllegalStateException",
        }
    }

    /// What is wrong, in plain words.
    pub fn describe(&self) -> String {
        match self {
            OffsetRejection::InvalidFormat(why) => format!("the offset's fields do not parse ({why})"),
            OffsetRejection::InvalidSourceVersion(v) => {
                format!("sourceVersion {v} is invalid (1 and 3 are the formats Delta writes; 2 is reserved)")
            }
            OffsetRejection::TooNew(v) => {
                format!("sourceVersion {v} is newer than the newest format Delta reads (3): a newer Delta wrote it")
            }
            OffsetRejection::BaseIndexInVersion3 => {
                "index -1 with sourceVersion 3: only offsets of version 1 may carry the base index -1".to_string()
            }
        }
    }
}

/// A `Long` field as Jackson reads it: a JSON integer, a float (truncated), or a string holding an integer;
/// absent or null = 0. Anything else is a format error.
fn long_field(o: &serde_json::Map<String, Value>, key: &str) -> Result<i64, OffsetRejection> {
    match o.get(key) {
        None | Some(Value::Null) => Ok(0),
        Some(Value::Number(n)) => n
            .as_i64()
            .or_else(|| n.as_f64().filter(|f| f.is_finite() && f.abs() < 9.2e18).map(|f| f as i64))
            .ok_or_else(|| OffsetRejection::InvalidFormat(format!("{key} = {n} is not a long"))),
        Some(Value::String(s)) => s
            .trim()
            .parse::<i64>()
            .map_err(|_| OffsetRejection::InvalidFormat(format!("{key} = {s:?} is not a number"))),
        Some(other) => Err(OffsetRejection::InvalidFormat(format!("{key} = {other} is not a number"))),
    }
}

/// Reads a Delta source offset as Delta's deserializer does, with its rejections.
pub fn parse(json: &Value) -> Result<DeltaSourceOffset, OffsetRejection> {
    let Some(o) = json.as_object() else {
        return Err(OffsetRejection::InvalidFormat("not a JSON object".into()));
    };
    let source_version = long_field(o, "sourceVersion")?;
    let reservoir_version = long_field(o, "reservoirVersion")?;
    let index = long_field(o, "index")?;
    let reservoir_id = match o.get("reservoirId") {
        None | Some(Value::Null) => None,
        Some(Value::String(s)) => Some(s.clone()),
        Some(v @ (Value::Number(_) | Value::Bool(_))) => Some(v.to_string()),
        Some(v) => return Err(OffsetRejection::InvalidFormat(format!("reservoirId = {v} is not a string"))),
    };
    let is_initial_snapshot = match o.get("isStartingVersion") {
        None | Some(Value::Null) => false,
        Some(Value::Bool(b)) => *b,
        Some(Value::String(s)) if s == "true" || s == "false" => s == "true",
        Some(v) => return Err(OffsetRejection::InvalidFormat(format!("isStartingVersion = {v} is not a boolean"))),
    };
    if source_version < VERSION_1 || source_version == VERSION_2 {
        return Err(OffsetRejection::InvalidSourceVersion(source_version));
    }
    if source_version > VERSION_3 {
        return Err(OffsetRejection::TooNew(source_version));
    }
    if source_version == VERSION_3 && index == BASE_INDEX_V1 {
        return Err(OffsetRejection::BaseIndexInVersion3);
    }
    Ok(DeltaSourceOffset { source_version, reservoir_id, reservoir_version, index, is_initial_snapshot })
}

impl DeltaSourceOffset {
    /// True when `index` is a schema-change marker (-20 or -19).
    pub fn is_schema_change_marker(&self) -> bool {
        self.index == METADATA_CHANGE_INDEX || self.index == POST_METADATA_CHANGE_INDEX
    }

    /// Delta's `validateOffsets(previous, self)`: the offset must not move back (version, then index) and
    /// the initial-snapshot flag may only go from true to false. `None` when it holds, else why not.
    pub fn moved_back_from(&self, previous: &DeltaSourceOffset) -> Option<&'static str> {
        if !previous.is_initial_snapshot && self.is_initial_snapshot {
            Some("'isInitialSnapshot' flipped incorrectly")
        } else if previous.reservoir_version > self.reservoir_version {
            Some("'reservoirVersion' moved back")
        } else if previous.reservoir_version == self.reservoir_version && norm(previous.index) > norm(self.index) {
            Some("'index' moved back")
        } else {
            None
        }
    }
}

/// The in-memory index Delta compares: the on-disk base index -1 of a version-1 offset is -100.
fn norm(index: i64) -> i64 {
    if index == BASE_INDEX_V1 {
        -100
    } else {
        index
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p(s: &str) -> Result<DeltaSourceOffset, OffsetRejection> {
        parse(&serde_json::from_str(s).unwrap())
    }

    #[test]
    fn reads_the_plain_and_the_schema_change_formats() {
        let o =
            p(r#"{"sourceVersion":1,"reservoirId":"t","reservoirVersion":40,"index":-1,"isStartingVersion":false}"#)
                .unwrap();
        assert_eq!((o.reservoir_version, o.index, o.is_initial_snapshot), (40, -1, false));
        assert_eq!(o.reservoir_id.as_deref(), Some("t"));
        let o =
            p(r#"{"sourceVersion":3,"reservoirId":"t","reservoirVersion":7,"index":-20,"isStartingVersion":false}"#)
                .unwrap();
        assert!(o.is_schema_change_marker());
    }

    #[test]
    fn rejects_as_delta_does() {
        let base = |sv: &str| {
            p(&format!(
                r#"{{"sourceVersion":{sv},"reservoirId":"t","reservoirVersion":1,"index":0,"isStartingVersion":false}}"#
            ))
        };
        assert_eq!(base("0"), Err(OffsetRejection::InvalidSourceVersion(0)));
        assert_eq!(base("2"), Err(OffsetRejection::InvalidSourceVersion(2)));
        assert_eq!(base("4"), Err(OffsetRejection::TooNew(4)));
        assert!(matches!(base("\"x\""), Err(OffsetRejection::InvalidFormat(_))));
        assert_eq!(base("4").unwrap_err().error_class(), Some("DELTA_INVALID_FORMAT_FROM_SOURCE_VERSION"));
        // A missing sourceVersion is read as 0.
        assert_eq!(
            p(r#"{"reservoirId":"t","reservoirVersion":1,"index":0}"#),
            Err(OffsetRejection::InvalidSourceVersion(0))
        );
        assert_eq!(
            p(r#"{"sourceVersion":3,"reservoirId":"t","reservoirVersion":1,"index":-1,"isStartingVersion":false}"#),
            Err(OffsetRejection::BaseIndexInVersion3)
        );
    }

    #[test]
    fn offsets_must_move_forward() {
        let o = |v: i64, i: i64, init: bool| DeltaSourceOffset {
            source_version: 1,
            reservoir_id: Some("t".into()),
            reservoir_version: v,
            index: i,
            is_initial_snapshot: init,
        };
        assert_eq!(o(5, -1, false).moved_back_from(&o(4, 3, false)), None);
        assert_eq!(o(5, 2, false).moved_back_from(&o(5, -1, false)), None);
        assert!(o(4, 0, false).moved_back_from(&o(5, 0, false)).is_some());
        assert!(o(5, 1, false).moved_back_from(&o(5, 2, false)).is_some());
        assert!(o(5, 1, true).moved_back_from(&o(5, 0, false)).is_some());
    }
}
