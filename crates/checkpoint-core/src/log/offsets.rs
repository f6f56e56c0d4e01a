//! `offsets/<batchId>` — Spark's `OffsetSeqLog` (FORMATS.md §3): version line, `OffsetSeqMetadata` JSON,
//! then one offset per source (v1: positional lines; v2, Spark 4.3+: `<sourceId>:<offset>` lines).
//!
//! Mirrors `OffsetSeqLog.deserialize`: no first line → "Incomplete log file"; no metadata line →
//! "Incomplete log file in the offset commit log"; the metadata JSON is parsed by json4s (unknown keys
//! ignored, missing numbers default to 0).

use super::{json_error, lines_with_offsets, parse_version_line, utf8, LogError};
use crate::source::{classify_offset, SourceKind};
use std::collections::BTreeMap;

/// `OffsetSeqMetadata`: the batch's watermark, timestamp and recorded SQL confs.
#[derive(Debug, Clone, PartialEq)]
pub struct OffsetSeqMetadata {
    /// `batchWatermarkMs` (ms since the epoch; 0 = no watermark); `None` when the key is absent.
    pub batch_watermark_ms: Option<i64>,
    /// `batchTimestampMs` (ms since the epoch); `None` when absent.
    pub batch_timestamp_ms: Option<i64>,
    /// `conf`: recorded SQL confs (string → string).
    pub conf: BTreeMap<String, String>,
    /// Top-level keys Spark does not know (e.g. a hand-edited `BatchWatermarkMs`); Spark ignores them.
    pub unknown_keys: Vec<String>,
    /// 4.3's `version` field of the v2 metadata, when present.
    pub version: Option<i64>,
}

/// One source's offset line.
#[derive(Debug, Clone, PartialEq)]
pub struct SourceOffset {
    /// v2 layout: the source id/name left of the first `:`; v1: `None`.
    pub name: Option<String>,
    /// The offset text as stored; `None` for `-` (no offset yet).
    pub raw: Option<String>,
    /// The offset parsed as JSON, when it is JSON.
    pub json: Option<serde_json::Value>,
    /// What kind of source wrote it.
    pub kind: SourceKind,
    /// Byte offset of the line in the file.
    pub offset: u64,
    /// True when the reader dropped `raw` and `json` to bound memory (an older batch whose offsets no check
    /// needs; see `read::KEEP_FULL_OFFSETS`). The offset parsed as JSON when it was read.
    pub elided: bool,
}

/// A parsed offsets file.
#[derive(Debug, Clone, PartialEq)]
pub struct OffsetSeq {
    /// The version line's number (1 or 2; larger when written by a newer Spark).
    pub version: u32,
    /// The metadata line; `None` when it is empty (very old checkpoints).
    pub metadata: Option<OffsetSeqMetadata>,
    /// One entry per source, in file order.
    pub offsets: Vec<SourceOffset>,
}

/// Parses an offsets file. See the module docs for the errors.
pub fn parse(bytes: &[u8]) -> Result<OffsetSeq, LogError> {
    let text = utf8(bytes)?;
    let lines = lines_with_offsets(text);
    let Some(&(_, first)) = lines.first() else {
        return Err(LogError::Empty);
    };
    let version = parse_version_line(first)?;
    let Some(&(moff, mline)) = lines.get(1) else {
        return Err(LogError::MissingLine {
            offset: bytes.len() as u64,
            message: "Incomplete log file in the offset commit log".into(),
        });
    };
    let metadata = if mline.trim().is_empty() { None } else { Some(parse_metadata(mline, moff, 2)?) };
    let mut offsets = Vec::new();
    for &(off, line) in lines.iter().skip(2) {
        let (name, body) = if version >= 2 {
            match line.split_once(':') {
                Some((n, b)) => (Some(n.to_string()), b),
                None => (None, line),
            }
        } else {
            (None, line)
        };
        let raw = if body == "-" { None } else { Some(body.to_string()) };
        let json = raw.as_deref().and_then(|r| serde_json::from_str::<serde_json::Value>(r).ok());
        let kind = classify_offset(raw.as_deref(), json.as_ref());
        offsets.push(SourceOffset { name, raw, json, kind, offset: off, elided: false });
    }
    Ok(OffsetSeq { version, metadata, offsets })
}

/// Parses the `OffsetSeqMetadata` JSON line (json4s semantics: unknown keys ignored, absent numbers = 0).
pub fn parse_metadata(line: &str, line_offset: u64, line_no: usize) -> Result<OffsetSeqMetadata, LogError> {
    let v: serde_json::Value = serde_json::from_str(line).map_err(|e| json_error(&e, line, line_offset, line_no))?;
    let data_err =
        |msg: String| LogError::BadJson { offset: line_offset, line: line_no, message: msg, eof: false, data: true };
    let serde_json::Value::Object(mut obj) = v else {
        return Err(data_err("OffsetSeqMetadata is not a JSON object".into()));
    };
    let num = |obj: &serde_json::Map<String, serde_json::Value>, k: &str| -> Result<Option<i64>, LogError> {
        match obj.get(k) {
            None | Some(serde_json::Value::Null) => Ok(None),
            Some(x) => x.as_i64().map(Some).ok_or_else(|| data_err(format!("{k} is not a long: {x}"))),
        }
    };
    let batch_watermark_ms = num(&obj, "batchWatermarkMs")?;
    let batch_timestamp_ms = num(&obj, "batchTimestampMs")?;
    let version = num(&obj, "version")?;
    const KNOWN: [&str; 6] =
        ["batchWatermarkMs", "batchTimestampMs", "conf", "version", "sourceMetadataInfo", "sourceMetadata"];
    let unknown_keys = obj.keys().filter(|k| !KNOWN.contains(&k.as_str())).cloned().collect();
    let mut conf = BTreeMap::new();
    // The conf's strings are moved out of the parsed JSON, not copied (one per key and value per batch).
    match obj.get_mut("conf").map(serde_json::Value::take) {
        None => {}
        Some(serde_json::Value::Object(m)) => {
            for (k, val) in m {
                let s = match val {
                    serde_json::Value::String(s) => s,
                    other => other.to_string(),
                };
                conf.insert(k, s);
            }
        }
        Some(_) => return Err(data_err("conf is not a JSON object".into())),
    }
    Ok(OffsetSeqMetadata { batch_watermark_ms, batch_timestamp_ms, conf, unknown_keys, version })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn v1_and_v2() {
        let o =
            parse(b"v1\n{\"batchWatermarkMs\":5,\"batchTimestampMs\":7,\"conf\":{\"a\":\"b\"}}\n{\"logOffset\":3}\n-")
                .unwrap();
        assert_eq!(o.version, 1);
        let m = o.metadata.unwrap();
        assert_eq!((m.batch_watermark_ms, m.batch_timestamp_ms), (Some(5), Some(7)));
        assert_eq!(m.conf["a"], "b");
        assert_eq!(o.offsets.len(), 2);
        assert_eq!(o.offsets[0].kind, SourceKind::File);
        assert_eq!(o.offsets[1].raw, None);
        let o = parse(b"v2\n{\"batchWatermarkMs\":0}\n1:{\"logOffset\":3}\n0:-").unwrap();
        assert_eq!(o.offsets[0].name.as_deref(), Some("1"));
        assert_eq!(o.offsets[1].raw, None);
    }

    #[test]
    fn errors_like_spark() {
        assert_eq!(parse(b""), Err(LogError::Empty));
        assert!(matches!(parse(b"v1"), Err(LogError::MissingLine { offset: 2, .. })));
        assert!(matches!(parse(b"xx\n{}"), Err(LogError::MalformedVersion { .. })));
        match parse(b"v1\n{\"batchWatermarkMs\":0,\"batchTimes") {
            Err(LogError::BadJson { eof: true, offset, .. }) => assert!(offset >= 3),
            other => panic!("{other:?}"),
        }
    }
}
