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
    /// `conf`: recorded SQL confs (string → string), the first [`MAX_KEPT_CONF`] of them (Spark records about
    /// twenty: `OffsetSeqMetadata.relevantSQLConfs`).
    pub conf: BTreeMap<String, String>,
    /// Entries of `conf` past [`MAX_KEPT_CONF`]: checked as JSON, not kept.
    pub conf_not_kept: usize,
    /// Top-level keys Spark does not know (e.g. a hand-edited `BatchWatermarkMs`); Spark ignores them.
    pub unknown_keys: Vec<String>,
    /// 4.3's `version` field of the v2 metadata, when present.
    pub version: Option<i64>,
}

/// Recorded confs kept per offsets file: Spark writes about twenty; more is a hand-edited or hostile file, whose
/// keys Spark ignores anyway (it applies only its `relevantSQLConfs`).
pub const MAX_KEPT_CONF: usize = 256;

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
    /// One entry per source, in file order: the first [`MAX_SOURCE_OFFSETS`] source lines.
    pub offsets: Vec<SourceOffset>,
    /// The source lines after the first [`MAX_SOURCE_OFFSETS`]: counted, not kept (all zero when there are none).
    pub not_kept: SourceLinesNotKept,
}

impl SourceOffset {
    /// The number the source's own folder is filed under (`sources/<n>/`), for the line at `position` (0-based)
    /// of its offsets file: a v2 line's numeric name (`1:{...}`), else the position (v1 lines, and Spark 4.3's
    /// named sources, whose folder `sources/<name>/` the read stage files under that number). `None` past `u32`.
    pub fn folder_number(&self, position: usize) -> Option<u32> {
        self.name.as_deref().and_then(|n| n.parse::<u32>().ok()).or_else(|| u32::try_from(position).ok())
    }
}

impl OffsetSeq {
    /// The number of source lines of the file: the number of sources Spark compares with the restarted
    /// query's (`OffsetSeq.toStreamProgress`), kept or not.
    pub fn source_count(&self) -> u64 {
        (self.offsets.len() as u64).saturating_add(self.not_kept.lines)
    }
}

/// Source lines an offsets file holds per source kept one by one (with their text, JSON and kind); the lines
/// after them are only counted ([`SourceLinesNotKept`]). A query has a handful of sources, a large union
/// hundreds; a file with more has been appended to or edited (Spark would compare their number with the
/// query's sources and stop), and keeping, checking and reporting each of millions of lines one by one (a
/// 16 MiB file of newlines holds 16 million) would cost memory, time and report size in proportion.
pub const MAX_SOURCE_OFFSETS: usize = 1000;

/// The source lines of an offsets file after the first [`MAX_SOURCE_OFFSETS`]: each is read once (is it `-`,
/// is it JSON) and counted; none is kept.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SourceLinesNotKept {
    /// How many source lines come after the kept ones.
    pub lines: u64,
    /// How many of them are `-` (the source had no offset yet).
    pub no_offset: u64,
    /// How many of them are neither `-` nor valid JSON (an empty line included): a source fails to read
    /// such an offset.
    pub not_json: u64,
    /// The first of those: its 1-based line number and the byte offset where it starts.
    pub first_not_json: Option<(u64, u64)>,
}

/// Parses an offsets file. See the module docs for the errors.
pub fn parse(bytes: &[u8]) -> Result<OffsetSeq, LogError> {
    parse_with(bytes, true, MAX_SOURCE_OFFSETS)
}

/// [`parse`], keeping the recorded confs (`keep_conf`) or not: the read stage keeps them for the latest
/// readable offsets file only, and an older batch's conf is checked for what [`parse`] would refuse in it (the
/// same JSON errors; a `conf` that is not an object) without being built (`conf` empty). At most `max_sources`
/// (and at most [`MAX_SOURCE_OFFSETS`]) source lines are kept one by one; the others are counted
/// ([`OffsetSeq::not_kept`]): the read stage keeps fewer for older batches once many are held.
pub fn parse_with(bytes: &[u8], keep_conf: bool, max_sources: usize) -> Result<OffsetSeq, LogError> {
    let max_sources = max_sources.min(MAX_SOURCE_OFFSETS);
    let text = utf8(bytes)?;
    let mut lines = lines_with_offsets(text);
    let Some((_, first)) = lines.next() else {
        return Err(LogError::Empty);
    };
    let version = parse_version_line(first)?;
    let Some((moff, mline)) = lines.next() else {
        return Err(LogError::MissingLine {
            offset: bytes.len() as u64,
            message: "Incomplete log file in the offset commit log".into(),
        });
    };
    let metadata = if mline.trim().is_empty() { None } else { Some(parse_metadata_with(mline, moff, 2, keep_conf)?) };
    let mut offsets = Vec::new();
    let mut not_kept = SourceLinesNotKept::default();
    for (i, (off, line)) in lines.enumerate() {
        let (name, body) = if version >= 2 {
            match line.split_once(':') {
                Some((n, b)) => (Some(n), b),
                None => (None, line),
            }
        } else {
            (None, line)
        };
        if offsets.len() >= max_sources {
            not_kept.count(body, i as u64 + 3, off);
            continue;
        }
        let raw = if body == "-" { None } else { Some(body.to_string()) };
        let json = raw.as_deref().and_then(|r| serde_json::from_str::<serde_json::Value>(r).ok());
        let kind = classify_offset(raw.as_deref(), json.as_ref());
        offsets.push(SourceOffset { name: name.map(str::to_string), raw, json, kind, offset: off, elided: false });
    }
    Ok(OffsetSeq { version, metadata, offsets, not_kept })
}

impl SourceLinesNotKept {
    /// Counts one source line (`body`: the offset text, after a v2 line's `<sourceId>:`) at 1-based line
    /// `line_no`, starting at byte `offset`.
    fn count(&mut self, body: &str, line_no: u64, offset: u64) {
        self.lines += 1;
        if body == "-" {
            self.no_offset += 1;
        } else if serde_json::from_str::<serde::de::IgnoredAny>(body).is_err() {
            self.not_json += 1;
            self.first_not_json.get_or_insert((line_no, offset));
        }
    }
}

/// Parses the `OffsetSeqMetadata` JSON line (json4s semantics: unknown keys ignored, absent numbers = 0).
pub fn parse_metadata(line: &str, line_offset: u64, line_no: usize) -> Result<OffsetSeqMetadata, LogError> {
    parse_metadata_with(line, line_offset, line_no, true)
}

/// [`parse_metadata`], with the recorded confs built or only checked (see [`parse_with`]). The line is parsed
/// once, straight into the fields (no JSON tree of the whole line); what it accepts and refuses, and in which
/// order, is what a parse into a `serde_json::Value` followed by the field checks gives (a test holds the two
/// equal).
fn parse_metadata_with(
    line: &str,
    line_offset: u64,
    line_no: usize,
    keep_conf: bool,
) -> Result<OffsetSeqMetadata, LogError> {
    use serde::de::DeserializeSeed;
    let mut de = serde_json::Deserializer::from_str(line);
    let fields = meta_json::Seed { keep_conf }
        .deserialize(&mut de)
        .and_then(|f| de.end().map(|()| f))
        .map_err(|e| json_error(&e, line, line_offset, line_no))?;
    let data_err =
        |msg: String| LogError::BadJson { offset: line_offset, line: line_no, message: msg, eof: false, data: true };
    let Some(fields) = fields else {
        return Err(data_err("OffsetSeqMetadata is not a JSON object".into()));
    };
    let num = |x: &Option<serde_json::Value>, k: &str| -> Result<Option<i64>, LogError> {
        match x {
            None | Some(serde_json::Value::Null) => Ok(None),
            Some(x) => x.as_i64().map(Some).ok_or_else(|| data_err(format!("{k} is not a long: {x}"))),
        }
    };
    let batch_watermark_ms = num(&fields.watermark, "batchWatermarkMs")?;
    let batch_timestamp_ms = num(&fields.timestamp, "batchTimestampMs")?;
    let version = num(&fields.version, "version")?;
    let conf = match fields.conf {
        meta_json::Conf::Absent | meta_json::Conf::Checked => (BTreeMap::new(), 0),
        meta_json::Conf::Kept(m, n) => (m, n),
        meta_json::Conf::NotAnObject => return Err(data_err("conf is not a JSON object".into())),
    };
    let (conf, conf_not_kept) = conf;
    Ok(OffsetSeqMetadata {
        batch_watermark_ms,
        batch_timestamp_ms,
        conf,
        conf_not_kept,
        unknown_keys: fields.unknown_keys,
        version,
    })
}

/// The metadata line's JSON read straight into its fields (serde visitors over `serde_json`'s parser).
mod meta_json {
    use serde::de::{self, DeserializeSeed, Deserializer, MapAccess, SeqAccess, Visitor};
    use std::collections::BTreeMap;
    use std::fmt;

    /// The keys Spark's `OffsetSeqMetadata` reads (json4s ignores others; the report names them).
    const KNOWN: [&str; 6] =
        ["batchWatermarkMs", "batchTimestampMs", "conf", "version", "sourceMetadataInfo", "sourceMetadata"];

    /// The `conf` member.
    pub(super) enum Conf {
        Absent,
        /// An object, its values as text (a string as it is, anything else as its JSON): the first
        /// [`super::MAX_KEPT_CONF`] entries, and how many more were checked only.
        Kept(BTreeMap<String, String>, usize),
        /// An object, checked and not built.
        Checked,
        /// Any other JSON value (`null` included).
        NotAnObject,
    }

    /// The top-level object's members (a later duplicate key wins, as in a JSON tree).
    pub(super) struct Fields {
        pub(super) watermark: Option<serde_json::Value>,
        pub(super) timestamp: Option<serde_json::Value>,
        pub(super) version: Option<serde_json::Value>,
        pub(super) conf: Conf,
        /// Keys Spark does not know, in first-seen order, each once.
        pub(super) unknown_keys: Vec<String>,
    }

    /// Reads the line: `Some(fields)` for an object, `None` for any other JSON value.
    pub(super) struct Seed {
        pub(super) keep_conf: bool,
    }

    impl<'de> DeserializeSeed<'de> for Seed {
        type Value = Option<Fields>;
        fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
            d.deserialize_any(self)
        }
    }

    /// What a visitor gives for every JSON value but an object and an array (both read to their end).
    macro_rules! scalars {
        ($v:expr) => {
            fn visit_bool<E: de::Error>(self, _: bool) -> Result<Self::Value, E> {
                Ok($v)
            }
            fn visit_i64<E: de::Error>(self, _: i64) -> Result<Self::Value, E> {
                Ok($v)
            }
            fn visit_u64<E: de::Error>(self, _: u64) -> Result<Self::Value, E> {
                Ok($v)
            }
            fn visit_f64<E: de::Error>(self, _: f64) -> Result<Self::Value, E> {
                Ok($v)
            }
            fn visit_str<E: de::Error>(self, _: &str) -> Result<Self::Value, E> {
                Ok($v)
            }
            fn visit_unit<E: de::Error>(self) -> Result<Self::Value, E> {
                Ok($v)
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
                while seq.next_element::<Checked>()?.is_some() {}
                Ok($v)
            }
        };
    }

    impl<'de> Visitor<'de> for Seed {
        type Value = Option<Fields>;
        fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            f.write_str("any JSON value")
        }
        scalars!(None);
        fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
            let mut f =
                Fields { watermark: None, timestamp: None, version: None, conf: Conf::Absent, unknown_keys: vec![] };
            // The unknown keys seen, to keep each once in constant time (a hostile line has hundreds of thousands).
            let mut seen = std::collections::HashSet::new();
            while let Some(key) = map.next_key::<Key>()? {
                match key {
                    Key::Watermark => f.watermark = Some(map.next_value()?),
                    Key::Timestamp => f.timestamp = Some(map.next_value()?),
                    Key::Version => f.version = Some(map.next_value()?),
                    Key::Conf => f.conf = map.next_value_seed(ConfSeed { keep: self.keep_conf })?,
                    Key::OtherKnown => map.next_value::<Checked>().map(|_| ())?,
                    Key::Unknown(k) => {
                        map.next_value::<Checked>()?;
                        if seen.insert(k.clone()) {
                            f.unknown_keys.push(k);
                        }
                    }
                }
            }
            Ok(Some(f))
        }
    }

    /// A member's key: the fields read by name without a copy of the key.
    enum Key {
        Watermark,
        Timestamp,
        Version,
        Conf,
        /// `sourceMetadataInfo`, `sourceMetadata`: known, not read here.
        OtherKnown,
        Unknown(String),
    }

    impl<'de> de::Deserialize<'de> for Key {
        fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
            d.deserialize_str(KeyVisitor)
        }
    }

    struct KeyVisitor;

    impl Visitor<'_> for KeyVisitor {
        type Value = Key;
        fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            f.write_str("a key")
        }
        fn visit_str<E: de::Error>(self, k: &str) -> Result<Key, E> {
            Ok(match k {
                "batchWatermarkMs" => Key::Watermark,
                "batchTimestampMs" => Key::Timestamp,
                "version" => Key::Version,
                "conf" => Key::Conf,
                k if KNOWN.contains(&k) => Key::OtherKnown,
                k => Key::Unknown(k.to_string()),
            })
        }
    }

    /// Reads the `conf` member: built (`keep`) or checked only.
    struct ConfSeed {
        keep: bool,
    }

    impl<'de> DeserializeSeed<'de> for ConfSeed {
        type Value = Conf;
        fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Conf, D::Error> {
            d.deserialize_any(self)
        }
    }

    impl<'de> Visitor<'de> for ConfSeed {
        type Value = Conf;
        fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            f.write_str("any JSON value")
        }
        scalars!(Conf::NotAnObject);
        fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Conf, A::Error> {
            if !self.keep {
                while map.next_entry::<Checked, Checked>()?.is_some() {}
                return Ok(Conf::Checked);
            }
            let mut conf = BTreeMap::new();
            let mut more = 0;
            while conf.len() < super::MAX_KEPT_CONF {
                let Some(k) = map.next_key::<String>()? else { return Ok(Conf::Kept(conf, 0)) };
                let s = match map.next_value::<serde_json::Value>()? {
                    serde_json::Value::String(s) => s,
                    other => other.to_string(),
                };
                conf.insert(k, s);
            }
            while map.next_entry::<Checked, Checked>()?.is_some() {
                more += 1;
            }
            Ok(Conf::Kept(conf, more))
        }
    }

    /// A JSON value read and dropped, checked as a parse into a JSON tree checks it (strings unescaped, so a
    /// bad escape is refused; numbers parsed; the same nesting limit) but never built. (`IgnoredAny` would skip
    /// a string without checking its escapes.)
    pub(super) struct Checked;

    impl<'de> de::Deserialize<'de> for Checked {
        fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
            d.deserialize_any(Checked)
        }
    }

    impl<'de> Visitor<'de> for Checked {
        type Value = Checked;
        fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            f.write_str("any JSON value")
        }
        scalars!(Checked);
        fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Checked, A::Error> {
            while map.next_entry::<Checked, Checked>()?.is_some() {}
            Ok(Checked)
        }
    }
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

    /// The parse into a JSON tree this module used before [`parse_metadata_with`], kept as the reference.
    fn metadata_via_tree(line: &str, line_offset: u64, line_no: usize) -> Result<OffsetSeqMetadata, LogError> {
        let v: serde_json::Value =
            serde_json::from_str(line).map_err(|e| json_error(&e, line, line_offset, line_no))?;
        let data_err = |msg: String| LogError::BadJson {
            offset: line_offset,
            line: line_no,
            message: msg,
            eof: false,
            data: true,
        };
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
        let mut conf_not_kept = 0;
        match obj.get_mut("conf").map(serde_json::Value::take) {
            None => {}
            Some(serde_json::Value::Object(m)) => {
                for (k, val) in m {
                    if conf.len() == MAX_KEPT_CONF {
                        conf_not_kept += 1;
                        continue;
                    }
                    let s = match val {
                        serde_json::Value::String(s) => s,
                        other => other.to_string(),
                    };
                    conf.insert(k, s);
                }
            }
            Some(_) => return Err(data_err("conf is not a JSON object".into())),
        }
        Ok(OffsetSeqMetadata { batch_watermark_ms, batch_timestamp_ms, conf, conf_not_kept, unknown_keys, version })
    }

    /// The one-pass reader gives the tree's answer (value or error, with its offset and message) on crafted
    /// lines, on every prefix of a real 4.3 metadata line and on 20,000 one-byte mutations of it; with the conf
    /// only checked, the same answer less the conf.
    #[test]
    fn one_pass_metadata_equals_the_tree() {
        let real = r#"{"batchWatermarkMs":0,"batchTimestampMs":1764496577000,"conf":{"spark.sql.streaming.stateStore.providerClass":"org.apache.spark.sql.execution.streaming.state.HDFSBackedStateStoreProvider","spark.sql.streaming.join.stateFormatVersion":"2","spark.sql.shuffle.partitions":"3","spark.sql.streaming.multipleWatermarkPolicy":"min"},"sourceMetadataInfo":{"0":{"a":[1,"b"]}}}"#;
        let crafted = [
            "{}",
            "[]",
            r#"[1,{"a":2}]"#,
            "5",
            r#""x""#,
            "null",
            "true",
            "-1.5e3",
            "",
            r#"{"conf":null}"#,
            r#"{"conf":[1]}"#,
            r#"{"conf":"a"}"#,
            r#"{"conf":7}"#,
            r#"{"conf":{}}"#,
            r#"{"conf":{"a":1,"b":true,"c":null,"d":[1,"x"],"e":{"f":2.5},"a":"again"}}"#,
            r#"{"conf":{"a":"b"},"conf":5}"#,
            r#"{"conf":5,"conf":{"a":"b"}}"#,
            r#"{"batchWatermarkMs":1.0}"#,
            r#"{"batchWatermarkMs":"5"}"#,
            r#"{"batchWatermarkMs":null}"#,
            r#"{"batchWatermarkMs":18446744073709551615}"#,
            r#"{"batchWatermarkMs":-9223372036854775808}"#,
            r#"{"batchTimestampMs":[1],"version":2}"#,
            r#"{"version":2,"version":"x"}"#,
            r#"{"BatchWatermarkMs":5,"x":1,"BatchWatermarkMs":6,"sourceMetadataInfo":{"a":[1,2]}}"#,
            r#"{"x":"\ud800"}"#,
            r#"{"conf":{"a":"\ud800"}}"#,
            r#"{"conf":{"\ud800":"a"}}"#,
            r#"{"x":"\q"}"#,
            r#"{"conf":{"a":"b\u0000c\n\"é"}}"#,
            r#"{"x":1e400}"#,
            r#"{"conf":{"a":1e400}}"#,
            r#"{"a":1} x"#,
            r#"{"a":1}   "#,
            "{\"a\":\"\u{1}\"}",
            r#"{"a":01}"#,
            r#"{"a":tru}"#,
            "{\"a\":\n1}",
        ];
        let mut lines: Vec<String> = crafted.iter().map(|s| s.to_string()).collect();
        lines.push(format!("{}1{}", "[".repeat(200), "]".repeat(200)));
        lines.push(format!("{{\"conf\":{{\"a\":{}1{}}}}}", "[".repeat(127), "]".repeat(127)));
        lines.push(format!("{{\"x\":{}1{}}}", "[".repeat(127), "]".repeat(127)));
        lines.push(format!("{{\"x\":{}1{}}}", "[".repeat(126), "]".repeat(126)));
        // Many unknown keys, some repeated (each kept once, in first-seen order).
        let keys: Vec<String> = (0..20_000).map(|i| format!("\"k{}\":{i}", i % 15_000)).collect();
        lines.push(format!("{{{}}}", keys.join(",")));
        lines.push(real.to_string());
        lines.extend((0..real.len()).filter(|&i| real.is_char_boundary(i)).map(|i| real[..i].to_string()));
        let alphabet = br#"{}[]":,09.eE\u nalftrx-"#;
        let mut seed = 7u64;
        for _ in 0..20_000 {
            seed = seed.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            let mut b = real.as_bytes().to_vec();
            let at = (seed >> 33) as usize % b.len();
            b[at] = alphabet[(seed >> 20) as usize % alphabet.len()];
            if let Ok(t) = String::from_utf8(b) {
                lines.push(t);
            }
        }
        for line in &lines {
            let want = metadata_via_tree(line, 10, 2);
            assert_eq!(parse_metadata_with(line, 10, 2, true), want, "{line}");
            let without = want.map(|m| OffsetSeqMetadata { conf: BTreeMap::new(), ..m });
            assert_eq!(parse_metadata_with(line, 10, 2, false), without, "{line}");
        }
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
