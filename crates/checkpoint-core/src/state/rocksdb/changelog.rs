//! RocksDB changelog files `<v>.changelog` (checkpoint format v2: `<v>_<uniqueId>.changelog`), versions 1–4.
//!
//! Mirrors Spark's `StateStoreChangelog.scala` (`StateStoreChangelogWriterV1..V4`, `StateStoreChangelogReaderFactory`):
//! the file is codec-framed (FORMATS.md §7) and inside is a Java `DataOutputStream` (big-endian):
//!
//! | version | header | record | end marker |
//! |---|---|---|---|
//! | v1 | none | `int32 klen, key, int32 vlen, value` (vlen -1 = delete) | `int32 -1` |
//! | v2 | `writeUTF("v2")` | `byte type` (0x01 put, 0x10 delete, 0x11 merge) then as v1 | byte `0x00` |
//! | v3 | `writeUTF("v3")`, `writeUTF(lineage JSON)` | as v1 | `int32 -1` |
//! | v4 | `writeUTF("v4")`, `writeUTF(lineage JSON)` | as v2 | byte `0x00` |
//!
//! Version detection follows Spark's reader factory: read a `writeUTF` string; when it starts with `v` the rest is
//! the version (a Java `Short`), otherwise — or on EOF, a malformed modified-UTF-8 string or a number that does not
//! parse — the file is v1.

/// One change recorded in a changelog.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ChangeRecord {
    /// `put`: set key to value.
    Put {
        /// Key bytes as the store keeps them.
        key: Vec<u8>,
        /// Value bytes.
        value: Vec<u8>,
    },
    /// `delete` (remove) key.
    Delete {
        /// Key bytes.
        key: Vec<u8>,
    },
    /// `merge` (append a value to a list, RocksDB merge operator).
    Merge {
        /// Key bytes.
        key: Vec<u8>,
        /// Value bytes to append.
        value: Vec<u8>,
    },
}

/// One item of a checkpoint format v2 lineage (`LineageItem`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LineageItem {
    /// State store version.
    pub version: i64,
    /// The unique id (`checkpointUniqueId`) of that version's files.
    pub checkpoint_unique_id: String,
}

/// A decoded changelog.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Changelog {
    /// Changelog format version (1..=4).
    pub format_version: u16,
    /// Lineage recorded in v3/v4 files (from the base snapshot up to the version before this file's), else empty.
    pub lineage: Vec<LineageItem>,
    /// Records in file order.
    pub records: Vec<ChangeRecord>,
    /// Byte offset in the decompressed stream of each record of `records` (same index).
    pub record_offsets: Vec<u64>,
    /// Bytes after the end marker (Spark ignores them).
    pub trailing_bytes: usize,
}

/// Kind of changelog failure.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ChangelogErrorKind {
    /// The stream ended before the end marker (a writer crash or a truncated file).
    Truncated,
    /// A record or header is malformed (bad record type, negative key length, bad lineage JSON).
    Corrupt,
    /// The version header names a version outside 1..=4 (`CANNOT_LOAD_STATE_STORE.INVALID_CHANGE_LOG_READER_VERSION`).
    InvalidVersion,
    /// A record would exceed the limits.
    OverLimit,
}

/// Why a decompressed changelog stream cannot be read; `offset` is in the decompressed stream.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ChangelogError {
    /// Kind of failure.
    pub kind: ChangelogErrorKind,
    /// Byte offset in the decompressed stream where the failing record or field starts.
    pub offset: u64,
    /// What is wrong.
    pub message: String,
}

impl std::fmt::Display for ChangelogError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "at decompressed byte {}: {}", self.offset, self.message)
    }
}

impl std::error::Error for ChangelogError {}

fn cerr<T>(kind: ChangelogErrorKind, offset: usize, message: impl Into<String>) -> Result<T, ChangelogError> {
    Err(ChangelogError { kind, offset: offset as u64, message: message.into() })
}

/// Java `DataInputStream.readUTF`: `Ok(Some(s))`, `Ok(None)` on EOF or malformed modified UTF-8 (both make
/// Spark's factory fall back to v1), advancing `pos` only on success.
fn read_utf(b: &[u8], pos: &mut usize) -> Option<String> {
    let len = u16::from_be_bytes([*b.get(*pos)?, *b.get(*pos + 1)?]) as usize;
    let bytes = b.get((*pos).checked_add(2)?..(*pos).checked_add(2 + len)?)?;
    let mut out = String::with_capacity(len);
    let mut i = 0;
    while i < bytes.len() {
        let c = bytes[i];
        let ch: u32 = match c >> 4 {
            0..=7 => {
                i += 1;
                u32::from(c)
            }
            12 | 13 => {
                let c2 = *bytes.get(i + 1)?;
                if c2 & 0xC0 != 0x80 {
                    return None;
                }
                i += 2;
                (u32::from(c & 0x1F) << 6) | u32::from(c2 & 0x3F)
            }
            14 => {
                let c2 = *bytes.get(i + 1)?;
                let c3 = *bytes.get(i + 2)?;
                if c2 & 0xC0 != 0x80 || c3 & 0xC0 != 0x80 {
                    return None;
                }
                i += 3;
                (u32::from(c & 0x0F) << 12) | (u32::from(c2 & 0x3F) << 6) | u32::from(c3 & 0x3F)
            }
            _ => return None,
        };
        // Java strings are UTF-16; lone surrogates cannot be Rust chars: keep a replacement character.
        out.push(char::from_u32(ch).unwrap_or('\u{FFFD}'));
    }
    *pos += 2 + len;
    Some(out)
}

/// Java `Short.parseShort` (ASCII digits, optional sign).
fn parse_java_short(s: &str) -> Option<i16> {
    let (neg, body) = match (s.strip_prefix('-'), s.strip_prefix('+')) {
        (Some(r), _) => (true, r),
        (None, Some(r)) => (false, r),
        _ => (false, s),
    };
    if body.is_empty() || body.len() > 6 || !body.bytes().all(|c| c.is_ascii_digit()) {
        return None;
    }
    let v: i32 = body.parse().ok()?;
    i16::try_from(if neg { -v } else { v }).ok()
}

/// Detects the changelog format version as Spark's `StateStoreChangelogReaderFactory` does.
///
/// Returns the version (any `i16`; callers reject values outside 1..=4) and the header length consumed by the
/// version string (0 for v1).
pub fn detect_version(decompressed: &[u8]) -> (i16, usize) {
    let mut pos = 0;
    match read_utf(decompressed, &mut pos) {
        Some(s) if s.starts_with('v') => match parse_java_short(&s[1..]) {
            Some(v) => (v, pos),
            None => (1, 0),
        },
        _ => (1, 0),
    }
}

fn read_i32(b: &[u8], pos: usize) -> Option<i32> {
    Some(i32::from_be_bytes([*b.get(pos)?, *b.get(pos + 1)?, *b.get(pos + 2)?, *b.get(pos + 3)?]))
}

/// Most memory the records of one changelog may take, in bytes: each record's key and value plus
/// [`RECORD_COST`]. Past it: [`ChangelogErrorKind::OverLimit`] (not verified). Ten million empty records of an
/// 80 MB stream would otherwise hold a gigabyte.
pub const MAX_RECORD_MEMORY: usize = 256 << 20;
/// What one kept record costs besides its key and value: the record, its offset and its two buffers, in bytes.
pub const RECORD_COST: usize = 128;

/// Parses a decompressed changelog stream.
///
/// `max_records` bounds the number of records, [`MAX_RECORD_MEMORY`] the memory they take. Errors:
/// [`ChangelogErrorKind::Truncated`] when the stream ends before the end marker or inside a record,
/// [`ChangelogErrorKind::Corrupt`] for malformed records or lineage, [`ChangelogErrorKind::InvalidVersion`] for a
/// version outside 1..=4, [`ChangelogErrorKind::OverLimit`] past a bound.
pub fn parse_changelog(b: &[u8], max_records: usize) -> Result<Changelog, ChangelogError> {
    parse_within(b, max_records, MAX_RECORD_MEMORY)
}

/// [`parse_changelog`] with `max_memory` for [`MAX_RECORD_MEMORY`].
fn parse_within(b: &[u8], max_records: usize, max_memory: usize) -> Result<Changelog, ChangelogError> {
    use ChangelogErrorKind::*;
    let (version, mut pos) = detect_version(b);
    if !(1..=4).contains(&version) {
        return cerr(
            InvalidVersion,
            0,
            format!(
                "The change log reader version cannot be {version}. The checkpoint probably is from a future Spark version, please upgrade your Spark."
            ),
        );
    }
    let mut lineage = Vec::new();
    if version >= 3 {
        let at = pos;
        let json = match read_utf(b, &mut pos) {
            Some(s) => s,
            None => return cerr(Truncated, at, "the lineage string after the version header is missing or malformed"),
        };
        let v: serde_json::Value = serde_json::from_str(&json).map_err(|e| ChangelogError {
            kind: Corrupt,
            offset: at as u64,
            message: format!("lineage JSON: {e}"),
        })?;
        let arr = match v.as_array() {
            Some(a) => a,
            None => return cerr(Corrupt, at, "lineage JSON is not an array"),
        };
        for item in arr {
            let version = item.get("version").and_then(|x| x.as_i64());
            let id = item.get("checkpointUniqueId").and_then(|x| x.as_str());
            match (version, id) {
                (Some(v), Some(id)) => lineage.push(LineageItem { version: v, checkpoint_unique_id: id.to_string() }),
                _ => return cerr(Corrupt, at, format!("lineage item without version/checkpointUniqueId: {item}")),
            }
        }
    }
    let typed = version == 2 || version == 4;
    let mut records = Vec::new();
    let mut record_offsets = Vec::new();
    let mut memory = 0usize;
    loop {
        let rec_at = pos;
        let kind = if typed {
            let t = match b.get(pos) {
                Some(t) => *t,
                None => return cerr(Truncated, pos, "the changelog ends without its end marker (EOF record 0x00)"),
            };
            pos += 1;
            match t {
                0x00 => break,
                0x01 | 0x10 | 0x11 => t,
                other => return cerr(Corrupt, rec_at, format!("Found invalid record type for value={}", other as i8)),
            }
        } else {
            0xFF
        };
        let klen = match read_i32(b, pos) {
            Some(k) => k,
            None if !typed && pos == b.len() => {
                return cerr(Truncated, pos, "the changelog ends without its end marker (int -1)")
            }
            None => return cerr(Truncated, pos, "the changelog ends inside a key length"),
        };
        if !typed && klen == -1 {
            pos += 4;
            break;
        }
        if klen < 0 {
            return cerr(Corrupt, pos, format!("key size cannot be {klen}"));
        }
        pos += 4;
        let kend = pos.saturating_add(klen as usize);
        let key = match b.get(pos..kend) {
            Some(k) => k.to_vec(),
            None => return cerr(Truncated, pos, format!("the changelog ends inside a key of {klen} bytes")),
        };
        pos = kend;
        let vlen = match read_i32(b, pos) {
            Some(v) => v,
            None => return cerr(Truncated, pos, "the changelog ends inside a value length"),
        };
        pos += 4;
        let rec = if vlen < 0 {
            if kind == 0x01 || kind == 0x11 {
                return cerr(Corrupt, rec_at, format!("a put/merge record has value size {vlen}"));
            }
            ChangeRecord::Delete { key }
        } else {
            let vend = pos.saturating_add(vlen as usize);
            let value = match b.get(pos..vend) {
                Some(v) => v.to_vec(),
                None => return cerr(Truncated, pos, format!("the changelog ends inside a value of {vlen} bytes")),
            };
            pos = vend;
            match kind {
                0x11 => ChangeRecord::Merge { key, value },
                0x10 => return cerr(Corrupt, rec_at, "a delete record carries a value"),
                _ => ChangeRecord::Put { key, value },
            }
        };
        if records.len() >= max_records {
            return cerr(OverLimit, rec_at, format!("more than {max_records} records"));
        }
        memory = memory.saturating_add(pos - rec_at + RECORD_COST);
        if memory > max_memory {
            return cerr(
                OverLimit,
                rec_at,
                format!("the records read reach {memory} bytes of memory (the limit {max_memory})"),
            );
        }
        records.push(rec);
        record_offsets.push(rec_at as u64);
    }
    Ok(Changelog { format_version: version as u16, lineage, records, record_offsets, trailing_bytes: b.len() - pos })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Many small records stop at the memory budget (a limit, not damage), before they are all kept.
    #[test]
    fn records_past_the_memory_budget_are_a_limit() {
        let mut b = Vec::new();
        for _ in 0..1000 {
            b.extend_from_slice(&1i32.to_be_bytes());
            b.push(b'k');
            b.extend_from_slice(&0i32.to_be_bytes());
        }
        b.extend_from_slice(&(-1i32).to_be_bytes());
        assert_eq!(parse_within(&b, 10_000, 1 << 20).unwrap().records.len(), 1000);
        let e = parse_within(&b, 10_000, 100 * (9 + RECORD_COST)).unwrap_err();
        assert_eq!(e.kind, ChangelogErrorKind::OverLimit);
        assert!(e.message.contains("bytes of memory"), "{}", e.message);
    }

    fn utf(s: &str) -> Vec<u8> {
        let mut v = (s.len() as u16).to_be_bytes().to_vec();
        v.extend_from_slice(s.as_bytes());
        v
    }

    fn rec(k: &[u8], v: Option<&[u8]>) -> Vec<u8> {
        let mut out = (k.len() as i32).to_be_bytes().to_vec();
        out.extend_from_slice(k);
        match v {
            Some(v) => {
                out.extend_from_slice(&(v.len() as i32).to_be_bytes());
                out.extend_from_slice(v);
            }
            None => out.extend_from_slice(&(-1i32).to_be_bytes()),
        }
        out
    }

    #[test]
    fn v1_put_delete_end() {
        let mut b = rec(b"\0k", Some(b"\0v"));
        b.extend(rec(b"\0k", None));
        b.extend((-1i32).to_be_bytes());
        let c = parse_changelog(&b, 100).unwrap();
        assert_eq!(c.format_version, 1);
        assert_eq!(c.records.len(), 2);
        assert_eq!(c.records[1], ChangeRecord::Delete { key: b"\0k".to_vec() });
        // empty v1 changelog: just the end marker
        assert_eq!(parse_changelog(&(-1i32).to_be_bytes(), 10).unwrap().records.len(), 0);
        // truncated at every byte: always an error, never a panic
        for n in 0..b.len() {
            let e = parse_changelog(&b[..n], 100).unwrap_err();
            assert_eq!(e.kind, ChangelogErrorKind::Truncated, "cut at {n}: {e}");
            assert!(e.offset <= n as u64);
        }
    }

    #[test]
    fn v4_lineage_and_merge() {
        let mut b = utf("v4");
        b.extend(utf("[{\"version\":3,\"checkpointUniqueId\":\"a\"},{\"version\":4,\"checkpointUniqueId\":\"b\"}]"));
        b.push(0x01);
        b.extend(rec(b"k", Some(b"v")));
        b.push(0x11);
        b.extend(rec(b"k", Some(b"w")));
        b.push(0x10);
        b.extend(rec(b"k", None));
        b.push(0x00);
        let c = parse_changelog(&b, 100).unwrap();
        assert_eq!(c.format_version, 4);
        assert_eq!(c.lineage.len(), 2);
        assert_eq!(c.lineage[1].checkpoint_unique_id, "b");
        assert!(matches!(c.records[1], ChangeRecord::Merge { .. }));
        for n in 0..b.len() {
            assert!(parse_changelog(&b[..n], 100).is_err(), "cut at {n}");
        }
        let mut bad = b.clone();
        let at = bad.len() - 1;
        bad[at] = 0x05;
        assert_eq!(parse_changelog(&bad, 100).unwrap_err().kind, ChangelogErrorKind::Corrupt);
    }

    #[test]
    fn version_heuristic_like_spark() {
        assert_eq!(detect_version(&utf("v2")).0, 2);
        assert_eq!(detect_version(&utf("v9")).0, 9);
        assert_eq!(detect_version(&utf("v)")).0, 1, "SPARK-52553: NumberFormatException means v1");
        assert_eq!(detect_version(&[0xFF, 0xFF, 0xFF, 0xFF]).0, 1, "EOF means v1");
        assert_eq!(detect_version(&[0x00, 0x02, 0xC0, 0x41]).0, 1, "malformed UTF means v1");
        let e = parse_changelog(&utf("v7"), 10).unwrap_err();
        assert_eq!(e.kind, ChangelogErrorKind::InvalidVersion);
    }
}
