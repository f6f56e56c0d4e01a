//! The Delta source's schema tracking log under the checkpoint (`schemaTrackingLocation`): folder
//! `_schema_log_<tableId>[_<sourceTrackingId>]`, one file per entry named by its sequence number, each
//! `v1` then one JSON `PersistedMetadata` (`tableId`, `deltaCommitVersion`, `dataSchemaJson`,
//! `partitionSchemaJson`, `sourceMetadataPath`, ...). Mirrors delta-io/delta
//! `sources/DeltaSourceMetadataTrackingLog.scala` and `streaming/SchemaTrackingLog.scala` (an
//! `HDFSMetadataLog` with `JsonSchemaSerializer`).

/// One entry of the log.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SchemaLogEntry {
    /// The entry's sequence number (file name).
    pub seq: i64,
    /// Path relative to the checkpoint root.
    pub path: String,
    /// `tableId`.
    pub table_id: String,
    /// `deltaCommitVersion`: the table version the schema is valid from.
    pub delta_commit_version: i64,
    /// `dataSchemaJson`.
    pub data_schema_json: String,
    /// `previousMetadataSeqNum`: the entry Delta compares this one with (else `seq - 1`).
    pub previous_seq: Option<i64>,
}

/// Why an entry does not read, as Delta's read of it fails (`JsonSchemaSerializer.deserialize`, then
/// `PersistedMetadata.validateAgainstSourceTableId` on the latest entry).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SchemaLogFault {
    /// No line at all: `FailedToDeserializeException`, raised as `DELTA_STREAMING_SCHEMA_LOG_DESERIALIZE_FAILED`.
    Empty,
    /// The first line (as read) is not `v1`: Spark's `MetadataVersionUtil.validateVersion(text, 1)`.
    Version(String),
    /// Not UTF-8 (`Source.fromInputStream(in, UTF-8).getLines`: `MalformedInputException`).
    NotUtf8,
    /// The JSON line does not parse (Jackson's `JsonParseException`).
    Json,
    /// A field of the wrong type (Jackson's `MismatchedInputException`).
    Shape,
    /// No JSON line or no `tableId`: Jackson reads `tableId` as null, and the latest entry's table id check
    /// fails (`DELTA_STREAMING_SCHEMA_LOG_INCOMPATIBLE_DELTA_TABLE_ID`).
    NoTableId,
    /// The archive could not deliver the file (a limit of this inspector, or a damaged zip entry).
    Unreadable,
}

/// An entry that does not read: its sequence number, where and why, and the fault's kind.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SchemaLogProblem {
    /// The entry's sequence number (file name).
    pub seq: i64,
    /// Path, byte offset and reason.
    pub problem: crate::model::Problem,
    /// The kind of fault.
    pub fault: SchemaLogFault,
}

/// A schema tracking log found under the checkpoint.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct SchemaLog {
    /// The folder, relative to the checkpoint root.
    pub dir: String,
    /// The table id in the folder name (`_schema_log_<tableId>`).
    pub dir_table_id: String,
    /// The entries that parse, by sequence number.
    pub entries: Vec<SchemaLogEntry>,
    /// Entries that do not parse: path, byte offset, why.
    pub problems: Vec<SchemaLogProblem>,
}

impl SchemaLog {
    /// The entries a restart reads, as (latest, previous) sequence numbers: Delta's log reads its latest file at
    /// init (`HDFSMetadataLog.getLatest`) and, when the stream starts, the one the latest names as previous
    /// (`previousMetadataSeqNum`, else the latest minus one) to compare the two
    /// (`DeltaSourceMetadataTrackingLog.create`: `getPreviousTrackedMetadata`). Older entries are not read.
    pub fn read_on_restart(&self) -> Option<(i64, i64)> {
        let latest = self.entries.iter().map(|e| e.seq).chain(self.problems.iter().map(|p| p.seq)).max()?;
        let previous = self
            .entries
            .iter()
            .find(|e| e.seq == latest)
            .and_then(|e| e.previous_seq)
            .unwrap_or(latest.saturating_sub(1));
        Some((latest, previous))
    }
}

/// The table id a folder name holds, when it is a schema tracking log folder.
pub fn table_id_of_dir(name: &str) -> Option<&str> {
    let rest = name.strip_prefix("_schema_log_")?;
    // A table id is a UUID (36 characters); a source tracking id may follow after `_`.
    Some(if rest.len() > 36 && rest.as_bytes()[36] == b'_' { &rest[..36] } else { rest })
}

/// An entry as Delta reads it: (`tableId`, `deltaCommitVersion`, `dataSchemaJson`, `previousMetadataSeqNum`).
pub type ParsedEntry = (String, i64, String, Option<i64>);

/// Parses one entry file as `JsonSchemaSerializer.deserialize` does: the first line is the version (`v1`), the
/// second the JSON (`{}` when there is none; later lines are not read). A missing `deltaCommitVersion` reads as 0
/// (Jackson's default for a primitive). `Err((offset, why, fault))` where Delta's read fails.
pub fn parse_entry(bytes: &[u8]) -> Result<ParsedEntry, (u64, String, SchemaLogFault)> {
    let text = std::str::from_utf8(bytes)
        .map_err(|e| (e.valid_up_to() as u64, "not UTF-8".to_string(), SchemaLogFault::NotUtf8))?;
    if text.is_empty() {
        return Err((0, "empty: no version line".to_string(), SchemaLogFault::Empty));
    }
    let mut lines = text.split('\n');
    let first = lines.next().unwrap_or_default().trim_end_matches('\r');
    if first != "v1" {
        return Err((
            0,
            format!("version line {first:?} (Delta writes v1)"),
            SchemaLogFault::Version(first.to_string()),
        ));
    }
    let at = first.len() as u64 + 1;
    let json = lines.next().unwrap_or("{}");
    let v: serde_json::Value =
        serde_json::from_str(json).map_err(|e| (at, format!("not JSON: {e}"), SchemaLogFault::Json))?;
    let shape = |what: &str| (at, format!("{what} is not of its type"), SchemaLogFault::Shape);
    let table_id = match v.get("tableId") {
        None | Some(serde_json::Value::Null) => {
            return Err((at, "no tableId (Delta reads it as null)".to_string(), SchemaLogFault::NoTableId))
        }
        Some(x) => x.as_str().ok_or_else(|| shape("tableId"))?,
    };
    let version = match v.get("deltaCommitVersion") {
        None | Some(serde_json::Value::Null) => 0,
        Some(x) => x.as_i64().ok_or_else(|| shape("deltaCommitVersion"))?,
    };
    let schema = v.get("dataSchemaJson").and_then(|x| x.as_str()).unwrap_or_default();
    let previous = v.get("previousMetadataSeqNum").and_then(serde_json::Value::as_i64);
    Ok((table_id.to_string(), version, schema.to_string(), previous))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_a_persisted_metadata_entry() {
        let entry = br#"v1
{"tableId":"7cdeb771-6009-5df2-8293-142bb3a91275","deltaCommitVersion":3,"dataSchemaJson":"{\"type\":\"struct\",\"fields\":[]}","partitionSchemaJson":"{\"type\":\"struct\",\"fields\":[]}","sourceMetadataPath":"/chk/sources/0"}"#;
        let (id, v, _, previous) = parse_entry(entry).unwrap();
        assert_eq!((id.as_str(), v, previous), ("7cdeb771-6009-5df2-8293-142bb3a91275", 3, None));
        assert!(matches!(parse_entry(b"v2\n{}"), Err((0, _, SchemaLogFault::Version(t))) if t == "v2"));
        assert!(matches!(parse_entry(b""), Err((0, _, SchemaLogFault::Empty))));
        // Only "v1": Delta reads `{}`, whose null tableId fails the latest entry's table id check.
        assert!(matches!(parse_entry(b"v1"), Err((3, _, SchemaLogFault::NoTableId))));
        assert!(matches!(parse_entry(b"v1\n{\"tableId\":"), Err((3, _, SchemaLogFault::Json))));
        assert!(matches!(
            parse_entry(b"v1\n{\"tableId\":\"t\",\"deltaCommitVersion\":\"x\"}"),
            Err((3, _, SchemaLogFault::Shape))
        ));
        // Later lines are not read; a missing deltaCommitVersion is 0; the previous entry's number is kept.
        let (_, v, _, previous) =
            parse_entry(b"v1\n{\"tableId\":\"t\",\"previousMetadataSeqNum\":2}\ngarbage").unwrap();
        assert_eq!((v, previous), (0, Some(2)));
        assert_eq!(
            table_id_of_dir("_schema_log_7cdeb771-6009-5df2-8293-142bb3a91275_src1"),
            Some("7cdeb771-6009-5df2-8293-142bb3a91275")
        );
    }
}
