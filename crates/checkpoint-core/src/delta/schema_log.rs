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
    pub problems: Vec<crate::model::Problem>,
}

/// The table id a folder name holds, when it is a schema tracking log folder.
pub fn table_id_of_dir(name: &str) -> Option<&str> {
    let rest = name.strip_prefix("_schema_log_")?;
    // A table id is a UUID (36 characters); a source tracking id may follow after `_`.
    Some(if rest.len() > 36 && rest.as_bytes()[36] == b'_' { &rest[..36] } else { rest })
}

/// Parses one entry file: `v1` then the JSON. `Err((offset, why))` as Delta's deserializer would refuse it.
pub fn parse_entry(bytes: &[u8]) -> Result<(String, i64, String), (u64, String)> {
    let text = std::str::from_utf8(bytes).map_err(|e| (e.valid_up_to() as u64, "not UTF-8".to_string()))?;
    let (first, rest) = text.split_once('\n').ok_or((0, "no version line and JSON".to_string()))?;
    if first.trim() != "v1" {
        return Err((0, format!("version line {:?} (Delta writes v1)", first.trim())));
    }
    let v: serde_json::Value =
        serde_json::from_str(rest.trim()).map_err(|e| (first.len() as u64 + 1, format!("not JSON: {e}")))?;
    let table_id =
        v.get("tableId").and_then(|x| x.as_str()).ok_or((first.len() as u64 + 1, "no tableId".to_string()))?;
    let version = v
        .get("deltaCommitVersion")
        .and_then(|x| x.as_i64())
        .ok_or((first.len() as u64 + 1, "no deltaCommitVersion".to_string()))?;
    let schema = v.get("dataSchemaJson").and_then(|x| x.as_str()).unwrap_or_default();
    Ok((table_id.to_string(), version, schema.to_string()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_a_persisted_metadata_entry() {
        let entry = br#"v1
{"tableId":"7cdeb771-6009-5df2-8293-142bb3a91275","deltaCommitVersion":3,"dataSchemaJson":"{\"type\":\"struct\",\"fields\":[]}","partitionSchemaJson":"{\"type\":\"struct\",\"fields\":[]}","sourceMetadataPath":"/chk/sources/0"}"#;
        let (id, v, _) = parse_entry(entry).unwrap();
        assert_eq!((id.as_str(), v), ("7cdeb771-6009-5df2-8293-142bb3a91275", 3));
        assert!(parse_entry(b"v2\n{}").is_err());
        assert_eq!(
            table_id_of_dir("_schema_log_7cdeb771-6009-5df2-8293-142bb3a91275_src1"),
            Some("7cdeb771-6009-5df2-8293-142bb3a91275")
        );
    }
}
