//! `commits/<batchId>` — Spark's `CommitLog` (FORMATS.md §5): version line (`v1`, or `v2` with state
//! checkpoint format v2) and `CommitMetadata` JSON (`nextBatchWatermarkMs`, 4.0+ `stateUniqueIds`).
//!
//! Mirrors `CommitLog.deserialize`: no first line → "Incomplete log file in the offset commit log";
//! the version line is trimmed; a missing second line means `{}` (watermark 0).

use super::{json_error, lines_with_offsets, parse_version_line, utf8, LogError};
use std::collections::BTreeMap;

/// A parsed commit file.
#[derive(Debug, Clone, PartialEq)]
pub struct CommitMetadata {
    /// The version line's number.
    pub version: u32,
    /// `nextBatchWatermarkMs` (ms since the epoch); 0 when absent, like Spark.
    pub next_batch_watermark_ms: i64,
    /// True when the file has no metadata line (Spark substitutes `{}`).
    pub missing_json_line: bool,
    /// `stateUniqueIds`: operator id → per partition → per store, the checkpoint unique ids (format v2).
    pub state_unique_ids: BTreeMap<i64, Vec<Vec<String>>>,
}

/// Parses a commit file.
pub fn parse(bytes: &[u8]) -> Result<CommitMetadata, LogError> {
    let text = utf8(bytes)?;
    // Spark reads the first two lines; the others are never looked at.
    let mut lines = lines_with_offsets(text);
    let Some((_, first)) = lines.next() else {
        return Err(LogError::MissingLine {
            offset: 0,
            message: "Incomplete log file in the offset commit log".into(),
        });
    };
    let version = parse_version_line(first.trim())?;
    let Some((off, line)) = lines.next() else {
        return Ok(CommitMetadata {
            version,
            next_batch_watermark_ms: 0,
            missing_json_line: true,
            state_unique_ids: BTreeMap::new(),
        });
    };
    let v: serde_json::Value = serde_json::from_str(line).map_err(|e| json_error(&e, line, off, 2))?;
    let data_err = |m: String| LogError::BadJson { offset: off, line: 2, message: m, eof: false, data: true };
    let obj = v.as_object().ok_or_else(|| data_err("CommitMetadata is not a JSON object".into()))?;
    let next_batch_watermark_ms = match obj.get("nextBatchWatermarkMs") {
        None | Some(serde_json::Value::Null) => 0,
        Some(x) => x.as_i64().ok_or_else(|| data_err(format!("nextBatchWatermarkMs is not a long: {x}")))?,
    };
    let mut state_unique_ids = BTreeMap::new();
    if let Some(ids) = obj.get("stateUniqueIds").and_then(|x| x.as_object()) {
        for (op, parts) in ids {
            let Ok(op) = op.parse::<i64>() else { continue };
            let parts: Vec<Vec<String>> = parts
                .as_array()
                .map(|a| {
                    a.iter()
                        .map(|p| {
                            p.as_array()
                                .map(|s| s.iter().filter_map(|x| x.as_str().map(str::to_string)).collect())
                                .unwrap_or_default()
                        })
                        .collect()
                })
                .unwrap_or_default();
            state_unique_ids.insert(op, parts);
        }
    }
    Ok(CommitMetadata { version, next_batch_watermark_ms, missing_json_line: false, state_unique_ids })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn commit_files() {
        let c = parse(b"v1\n{\"nextBatchWatermarkMs\":1704067254000}").unwrap();
        assert_eq!(c.next_batch_watermark_ms, 1704067254000);
        let c = parse(b"v1").unwrap();
        assert!(c.missing_json_line);
        let c = parse(b"v2\n{\"nextBatchWatermarkMs\":1,\"stateUniqueIds\":{\"0\":[[\"a\"],[\"b\"]]}}").unwrap();
        assert_eq!(c.state_unique_ids[&0][1][0], "b");
        assert!(matches!(parse(b""), Err(LogError::MissingLine { .. })));
        assert!(matches!(parse(b"v1\n{\"next"), Err(LogError::BadJson { eof: true, .. })));
    }
}
