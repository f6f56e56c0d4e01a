//! `HDFSBackedStateStoreProvider` files (FORMATS.md §8): `<v>.delta` and `<v>.snapshot` under
//! `state/<op>/<part>/[<storeName>/]`, codec-framed (§7) record streams.
//!
//! Mirrors `HDFSBackedStateStoreProvider.updateFromDeltaFile` / `readSnapshotFile`
//! (sql/core/src/main/scala/org/apache/spark/sql/execution/streaming/state/HDFSBackedStateStoreProvider.scala):
//! a `DataInputStream` of `int32 keySize` (`-1` ends the file), key bytes, `int32 valueSize` (negative = the key
//! was removed, deltas only), value bytes.

use std::fmt;

/// Which kind of record file is being read; decides whether removals are allowed and which Spark error a bad
/// size maps to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum RecordFileKind {
    /// `<v>.delta` (or a v1 `.changelog`): a negative value size is a removal.
    Delta,
    /// `<v>.snapshot`: a negative value size is an error (`CANNOT_READ_SNAPSHOT_FILE_VALUE_SIZE`).
    Snapshot,
}

/// What a well-formed record stream holds (nothing decoded).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct RecordStats {
    /// Records with a value (puts).
    pub puts: u64,
    /// Records with a negative value size (removals; deltas only).
    pub removals: u64,
    /// Sum of key sizes in bytes.
    pub key_bytes: u64,
    /// Sum of value sizes in bytes (puts only).
    pub value_bytes: u64,
    /// Offset of the `-1` end marker in the decompressed stream.
    pub end_offset: u64,
    /// Bytes after the end marker (Spark ignores them; its writer never produces any).
    pub trailing_bytes: u64,
}

/// Why a record stream cannot be read, as Spark would fail on it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RecordErrorKind {
    /// A key size below -1: Spark's "key size cannot be N" (`_LEGACY_ERROR_TEMP_2258`, 4.x
    /// `CANNOT_READ_DELTA_FILE_KEY_SIZE` / `CANNOT_READ_SNAPSHOT_FILE_KEY_SIZE`).
    BadKeySize(i32),
    /// A negative value size in a snapshot: "value size cannot be N" (`CANNOT_READ_SNAPSHOT_FILE_VALUE_SIZE`).
    BadValueSize(i32),
    /// The stream ends before the `-1` end marker (mid-size, mid-key or mid-value): Spark's `EOFException`.
    Truncated,
}

/// An unreadable record stream: where (offset in the **decompressed** stream) and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RecordError {
    /// Byte offset in the decompressed stream of the size field (or record) that failed.
    pub offset: u64,
    /// What failed.
    pub kind: RecordErrorKind,
    /// Plain-words explanation with Spark's wording where it has one.
    pub reason: String,
}

impl fmt::Display for RecordError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "decompressed byte {}: {}", self.offset, self.reason)
    }
}

impl std::error::Error for RecordError {}

/// One record of a stream: a key and its value, or `None` for a removal.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Record<'a> {
    /// Offset of the record's key size field in the decompressed stream.
    pub offset: u64,
    /// Key bytes (an UnsafeRow for HDFS stores).
    pub key: &'a [u8],
    /// Value bytes, or `None` when the record removes the key.
    pub value: Option<&'a [u8]>,
}

fn read_i32(b: &[u8], at: usize) -> Option<i32> {
    let s = b.get(at..at.checked_add(4)?)?;
    Some(i32::from_be_bytes([s[0], s[1], s[2], s[3]]))
}

/// Walks a record stream, calling `f` for each record; returns the stats. Errors as [`scan_records`].
pub fn for_each_record<'a>(
    data: &'a [u8],
    kind: RecordFileKind,
    mut f: impl FnMut(Record<'a>),
) -> Result<RecordStats, RecordError> {
    let mut st = RecordStats::default();
    let mut pos = 0usize;
    let trunc = |at: usize, what: &str| RecordError {
        offset: at as u64,
        kind: RecordErrorKind::Truncated,
        reason: format!(
            "stream ends at byte {} inside {what}, before the -1 end marker (java.io.EOFException)",
            data.len()
        ),
    };
    loop {
        let rec_at = pos;
        let Some(ksize) = read_i32(data, pos) else {
            return Err(trunc(pos, "a key size"));
        };
        if ksize == -1 {
            st.end_offset = pos as u64;
            st.trailing_bytes = (data.len() - pos - 4) as u64;
            return Ok(st);
        }
        if ksize < 0 {
            return Err(RecordError {
                offset: pos as u64,
                kind: RecordErrorKind::BadKeySize(ksize),
                reason: format!("key size cannot be {ksize}"),
            });
        }
        pos += 4;
        let k = ksize as usize;
        let Some(key) = data.get(pos..pos + k) else {
            return Err(trunc(rec_at, &format!("a key of {k} bytes")));
        };
        pos += k;
        let Some(vsize) = read_i32(data, pos) else {
            return Err(trunc(rec_at, "a value size"));
        };
        pos += 4;
        st.key_bytes += k as u64;
        if vsize < 0 {
            if kind == RecordFileKind::Snapshot {
                return Err(RecordError {
                    offset: (pos - 4) as u64,
                    kind: RecordErrorKind::BadValueSize(vsize),
                    reason: format!("value size cannot be {vsize}"),
                });
            }
            st.removals += 1;
            f(Record { offset: rec_at as u64, key, value: None });
            continue;
        }
        let v = vsize as usize;
        let Some(value) = data.get(pos..pos + v) else {
            return Err(trunc(rec_at, &format!("a value of {v} bytes")));
        };
        pos += v;
        st.puts += 1;
        st.value_bytes += v as u64;
        f(Record { offset: rec_at as u64, key, value: Some(value) });
    }
}

/// Walks a decompressed HDFS-provider record stream (`.delta`/`.snapshot`, or a v1 changelog) without decoding
/// rows, as a delta (negative value size = removal).
///
/// Errors ([`RecordError`], offset in the decompressed stream): a key size below -1 ("key size cannot be N"),
/// a stream that ends before the `-1` marker ([`RecordErrorKind::Truncated`]). Sizes larger than what is left
/// are truncation, never an allocation.
pub fn scan_records(decompressed: &[u8]) -> Result<RecordStats, RecordError> {
    for_each_record(decompressed, RecordFileKind::Delta, |_| {})
}
