//! Delta log actions from their JSON form (a commit's lines, or a checkpoint row turned into JSON), as the
//! Delta protocol names them (delta-io/delta `PROTOCOL.md`, `actions/actions.scala`): `commitInfo`,
//! `metaData`, `protocol`, `add`, `remove`, `cdc`, `checkpointMetadata`, `sidecar`. Unknown actions are
//! skipped, as Delta's reader does.

use super::table::{CommitInfo, FileAction, Protocol, TableMetadata};
use serde_json::Value;
use std::collections::BTreeMap;

/// One action of interest.
#[derive(Debug, Clone, PartialEq)]
pub enum Action {
    /// `commitInfo`.
    CommitInfo(CommitInfo),
    /// `metaData`.
    Metadata(TableMetadata),
    /// `protocol`.
    Protocol(Protocol),
    /// `add`.
    Add(FileAction),
    /// `remove`.
    Remove(FileAction),
    /// `cdc`.
    Cdc,
    /// `sidecar` (v2 checkpoints): the sidecar file's path (relative to `_delta_log/_sidecars/`).
    Sidecar(String),
    /// `checkpointMetadata` (v2 checkpoints).
    CheckpointMetadata,
}

fn int(v: &Value) -> Option<i64> {
    v.as_i64().or_else(|| v.as_str().and_then(|s| s.trim().parse().ok()))
}

fn string_map(v: Option<&Value>) -> BTreeMap<String, String> {
    v.and_then(Value::as_object)
        .map(|o| {
            o.iter()
                .filter_map(|(k, v)| match v {
                    Value::String(s) => Some((k.clone(), s.clone())),
                    Value::Null => None,
                    other => Some((k.clone(), other.to_string())),
                })
                .collect()
        })
        .unwrap_or_default()
}

fn strings(v: Option<&Value>) -> Vec<String> {
    v.and_then(Value::as_array)
        .map(|a| a.iter().filter_map(|x| x.as_str().map(str::to_string)).collect())
        .unwrap_or_default()
}

fn file_action(o: &serde_json::Map<String, Value>) -> Option<FileAction> {
    Some(FileAction {
        path: o.get("path")?.as_str()?.to_string(),
        data_change: o.get("dataChange").and_then(Value::as_bool).unwrap_or(true),
        size: o.get("size").and_then(int),
        deletion_timestamp: o.get("deletionTimestamp").and_then(int),
    })
}

/// The actions of one JSON object (a line of a commit, a checkpoint row): every non-null action key.
pub fn actions_of(v: &Value) -> Vec<Action> {
    let Some(o) = v.as_object() else { return vec![] };
    let mut out = Vec::new();
    for (key, a) in o {
        let Some(a) = a.as_object() else { continue };
        let action = match key.as_str() {
            "commitInfo" => Some(Action::CommitInfo(CommitInfo {
                timestamp: a.get("timestamp").and_then(int),
                in_commit_timestamp: a.get("inCommitTimestamp").and_then(int),
                operation: a.get("operation").and_then(Value::as_str).map(str::to_string),
                mode: a
                    .get("operationParameters")
                    .and_then(|p| p.get("mode"))
                    .and_then(Value::as_str)
                    .map(|m| m.trim_matches('"').to_string()),
                engine: a
                    .get("engineInfo")
                    .or_else(|| a.get("clientVersion"))
                    .and_then(Value::as_str)
                    .map(str::to_string),
            })),
            "metaData" => Some(Action::Metadata(TableMetadata {
                id: a.get("id").and_then(Value::as_str).unwrap_or_default().to_string(),
                schema_string: a.get("schemaString").and_then(Value::as_str).unwrap_or_default().to_string(),
                partition_columns: strings(a.get("partitionColumns")),
                configuration: string_map(a.get("configuration")),
                created_time: a.get("createdTime").and_then(int),
            })),
            "protocol" => Some(Action::Protocol(Protocol {
                min_reader_version: a.get("minReaderVersion").and_then(int).unwrap_or(0),
                min_writer_version: a.get("minWriterVersion").and_then(int).unwrap_or(0),
                reader_features: strings(a.get("readerFeatures")),
                writer_features: strings(a.get("writerFeatures")),
            })),
            "add" => file_action(a).map(Action::Add),
            "remove" => file_action(a).map(Action::Remove),
            "cdc" => Some(Action::Cdc),
            "sidecar" => a.get("path").and_then(Value::as_str).map(|p| Action::Sidecar(p.to_string())),
            "checkpointMetadata" => Some(Action::CheckpointMetadata),
            _ => None,
        };
        out.extend(action);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_actions_of_a_delta_spark_commit() {
        let line = r#"{"commitInfo":{"timestamp":1795305600000,"operation":"WRITE","operationParameters":{"mode":"Append","partitionBy":"[]"}}}"#;
        let a = actions_of(&serde_json::from_str(line).unwrap());
        assert!(
            matches!(&a[0], Action::CommitInfo(c) if c.timestamp == Some(1795305600000) && c.mode.as_deref() == Some("Append"))
        );
        let line = r#"{"remove":{"path":"p.parquet","dataChange":true,"deletionTimestamp":5,"size":3}}"#;
        let a = actions_of(&serde_json::from_str(line).unwrap());
        assert_eq!(
            a,
            vec![Action::Remove(FileAction {
                path: "p.parquet".into(),
                data_change: true,
                size: Some(3),
                deletion_timestamp: Some(5)
            })]
        );
        // A checkpoint row turned into JSON has every action column, null but one.
        let row = r#"{"txn":null,"add":null,"remove":null,"metaData":{"id":"x","schemaString":"{}","partitionColumns":[],"configuration":{"delta.logRetentionDuration":"interval 7 days"}},"protocol":null}"#;
        let a = actions_of(&serde_json::from_str(row).unwrap());
        assert!(
            matches!(&a[0], Action::Metadata(m) if m.id == "x" && m.conf("delta.logRetentionDuration") == Some("interval 7 days"))
        );
    }
}
