//! Compactible file logs (FORMATS.md §6): the file source log `sources/<n>/` (`FileStreamSourceLog`) and a
//! file sink's `_spark_metadata/` (`FileStreamSinkLog`). Each batch file is a version line and one JSON
//! object per line; `<id>.compact` files hold every live entry up to `<id>`.
//!
//! Mirrors `CompactibleFileStreamLog.deserialize` (no first line → "Incomplete log file") and its
//! compaction arithmetic (`isCompactionBatch`, interval inference from the `.compact` files on disk).

use super::{json_error, lines_with_offsets, parse_version_line, utf8, LogError};

/// One entry of a file source log (`FileEntry`) or file sink log (`SinkFileStatus`), as far as we use it.
#[derive(Debug, Clone, PartialEq)]
pub struct FileLogEntry {
    /// The URI-encoded path of the data file.
    pub path: String,
    /// Source log: the file's modification time (`timestamp`, ms); sink log: `modificationTime`.
    pub timestamp_ms: Option<i64>,
    /// Source log: the batch that first processed the file.
    pub batch_id: Option<i64>,
    /// Sink log: `size` in bytes.
    pub size: Option<i64>,
    /// Sink log: `action` (`add` | `delete`).
    pub action: Option<String>,
}

/// A parsed batch file of a compactible log.
#[derive(Debug, Clone, PartialEq)]
pub struct FileLogBatch {
    /// The version line's number.
    pub version: u32,
    /// The entries, in file order.
    pub entries: Vec<FileLogEntry>,
}

/// Parses one batch file (plain or `.compact`).
pub fn parse(bytes: &[u8]) -> Result<FileLogBatch, LogError> {
    let text = utf8(bytes)?;
    let mut lines = lines_with_offsets(text);
    let Some((_, first)) = lines.next() else {
        return Err(LogError::Empty);
    };
    let version = parse_version_line(first)?;
    let mut entries = Vec::new();
    for (i, (off, line)) in lines.enumerate().map(|(i, l)| (i + 1, l)) {
        let v: serde_json::Value = serde_json::from_str(line).map_err(|e| json_error(&e, line, off, i + 1))?;
        let Some(path) = v.get("path").and_then(|p| p.as_str()) else {
            return Err(LogError::BadJson {
                offset: off,
                line: i + 1,
                message: "No usable value for path".into(),
                eof: false,
                data: true,
            });
        };
        entries.push(FileLogEntry {
            path: path.to_string(),
            timestamp_ms: v.get("timestamp").or_else(|| v.get("modificationTime")).and_then(|x| x.as_i64()),
            batch_id: v.get("batchId").and_then(|x| x.as_i64()),
            size: v.get("size").and_then(|x| x.as_i64()),
            action: v.get("action").and_then(|x| x.as_str()).map(str::to_string),
        });
    }
    Ok(FileLogBatch { version, entries })
}

/// `CompactibleFileStreamLog.isCompactionBatch`: `(batchId + 1) % interval == 0`.
pub fn is_compaction_batch(batch_id: i64, interval: i64) -> bool {
    interval > 0 && batch_id.checked_add(1).is_some_and(|b| b % interval == 0)
}

/// Infers the compaction interval the way Spark does when it reopens a log (`deriveCompactInterval`):
/// with two or more `.compact` files, the difference of the two newest; with exactly one (`c.compact`),
/// the smallest divisor of `c + 1` that is `>= default_interval` (or `c + 1` itself); with none, the
/// configured default. `compact_ids` need not be sorted.
pub fn infer_compact_interval(compact_ids: &[i64], default_interval: i64) -> i64 {
    let mut ids: Vec<i64> = compact_ids.to_vec();
    ids.sort_unstable();
    ids.dedup();
    match ids.len() {
        0 => default_interval,
        1 => {
            let latest = ids[0].saturating_add(1);
            if latest <= default_interval {
                return latest.max(1);
            }
            // Spark: (defaultInterval until latestCompactBatchId + 1).find(latest % _ == 0).getOrElse(latest)
            let mut d = default_interval.max(1);
            let limit = latest.min(default_interval.saturating_add(1_000_000));
            while d < limit {
                if latest % d == 0 {
                    return d;
                }
                d += 1;
            }
            latest
        }
        n => ids[n - 1] - ids[n - 2],
    }
}

/// The batch files Spark reads to get every live entry up to `latest` (`allFiles`): the newest compaction
/// batch at or below `latest` (if any) followed by the plain batches after it.
pub fn files_needed(latest: i64, interval: i64) -> (Option<i64>, std::ops::RangeInclusive<i64>) {
    if interval <= 0 {
        return (None, 0..=latest);
    }
    let start = (latest.saturating_add(1) / interval).saturating_mul(interval) - 1;
    if start >= 0 && is_compaction_batch(start, interval) {
        (Some(start), (start + 1)..=latest)
    } else {
        (None, 0..=latest)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_source_and_sink_entries() {
        let b = parse(b"v1\n{\"path\":\"file:///a\",\"timestamp\":1,\"batchId\":0}\n{\"path\":\"file:///b\",\"timestamp\":2,\"batchId\":0}").unwrap();
        assert_eq!(b.entries.len(), 2);
        assert_eq!(b.entries[1].batch_id, Some(0));
        let s = parse(b"v1\n{\"path\":\"p\",\"size\":12,\"isDir\":false,\"modificationTime\":3,\"blockReplication\":1,\"blockSize\":3,\"action\":\"add\"}").unwrap();
        assert_eq!(s.entries[0].action.as_deref(), Some("add"));
        assert_eq!(parse(b""), Err(LogError::Empty));
        assert!(matches!(parse(b"v1\n{\"pa"), Err(LogError::BadJson { eof: true, .. })));
    }

    #[test]
    fn compaction_arithmetic() {
        assert!(is_compaction_batch(9, 10));
        assert!(!is_compaction_batch(10, 10));
        assert_eq!(infer_compact_interval(&[9, 19], 10), 10);
        assert_eq!(infer_compact_interval(&[4], 10), 5);
        assert_eq!(infer_compact_interval(&[29], 10), 10);
        assert_eq!(infer_compact_interval(&[], 7), 7);
        assert_eq!(files_needed(23, 10), (Some(19), 20..=23));
        assert_eq!(files_needed(5, 10), (None, 0..=5));
    }
}
