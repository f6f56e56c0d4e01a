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

use super::{RawStore, StateError, StateLimits, StoreBuilder};
use crate::archive::Archive;
use crate::codec::{self, CodecErrorKind};
use crate::restart_chain::{ChainFileKind, LoadChain, PlanInput};
use crate::state_files::StoreFiles;
use std::collections::HashSet;

/// Why one `.delta`/`.snapshot` file does not decode: in the framing (offset in the file) or in the record
/// stream (offset in the decompressed bytes).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum StateFileError {
    /// The compression framing failed ([`codec::CodecError`], offset in the file).
    Codec(codec::CodecError),
    /// The decompressed record stream failed ([`RecordError`], offset in the decompressed stream).
    Records(RecordError),
}

impl StateFileError {
    /// Offset of the failure: in the file for codec errors, in the decompressed stream for record errors.
    pub fn offset(&self) -> u64 {
        match self {
            StateFileError::Codec(e) => e.offset,
            StateFileError::Records(e) => e.offset,
        }
    }

    /// Spark 4.x error class for the same failure while loading the store (`CANNOT_LOAD_STATE_STORE.*`).
    pub fn spark_error_class(&self, kind: RecordFileKind) -> &'static str {
        match (self, kind) {
            (
                StateFileError::Records(RecordError { kind: RecordErrorKind::BadKeySize(_), .. }),
                RecordFileKind::Delta,
            ) => "CANNOT_LOAD_STATE_STORE.CANNOT_READ_DELTA_FILE_KEY_SIZE",
            (StateFileError::Records(RecordError { kind: RecordErrorKind::BadKeySize(_), .. }), _) => {
                "CANNOT_LOAD_STATE_STORE.CANNOT_READ_SNAPSHOT_FILE_KEY_SIZE"
            }
            (StateFileError::Records(RecordError { kind: RecordErrorKind::BadValueSize(_), .. }), _) => {
                "CANNOT_LOAD_STATE_STORE.CANNOT_READ_SNAPSHOT_FILE_VALUE_SIZE"
            }
            _ => "CANNOT_LOAD_STATE_STORE.UNCATEGORIZED",
        }
    }

    /// What Spark 3.5 throws for it (no error classes for most state failures there).
    pub fn spark35_exception(&self) -> &'static str {
        match self {
            StateFileError::Codec(e) if e.kind == CodecErrorKind::Truncated => {
                "java.io.EOFException: Stream ended prematurely"
            }
            StateFileError::Codec(_) => "java.io.IOException: Stream is corrupted (net.jpountz.lz4.LZ4Exception)",
            StateFileError::Records(RecordError { kind: RecordErrorKind::Truncated, .. }) => "java.io.EOFException",
            StateFileError::Records(_) => "org.apache.spark.SparkException [_LEGACY_ERROR_TEMP_2258/2259]",
        }
    }
}

impl fmt::Display for StateFileError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            StateFileError::Codec(e) => write!(f, "{e}"),
            StateFileError::Records(e) => write!(f, "record stream, {e}"),
        }
    }
}

impl std::error::Error for StateFileError {}

/// Checks that one `.delta` (`kind` Delta) or `.snapshot` file decodes as Spark would load it: the framing,
/// its checksums, and the record stream up to the `-1` end marker. For the findings of issue 4.
pub fn verify_file(bytes: &[u8], kind: RecordFileKind, max_out: usize) -> Result<RecordStats, StateFileError> {
    for_each_record_in_file(bytes, kind, max_out, |_, _| {})
}

/// Reads a codec-framed record file (`.delta`, `.snapshot`) as Spark does, streaming: lz4 blocks are decoded one
/// at a time and records handed to `f(key, value)` (`None` = removal) as soon as they are complete, so the file is
/// never held decompressed. Errors as [`verify_file`]: the first failure in stream order, a record error (offset
/// in the decompressed stream) or a framing error (offset in the file). Records before a failure have already
/// been handed to `f`.
pub fn for_each_record_in_file(
    bytes: &[u8],
    kind: RecordFileKind,
    max_out: usize,
    mut f: impl FnMut(&[u8], Option<&[u8]>),
) -> Result<RecordStats, StateFileError> {
    for_each_record_in_file_at(bytes, kind, max_out, |_, k, v| f(k, v))
}

/// [`for_each_record_in_file`] that also tells each record's byte offset in the decompressed stream:
/// `f(offset, key, value)`.
pub fn for_each_record_in_file_at(
    bytes: &[u8],
    kind: RecordFileKind,
    max_out: usize,
    mut f: impl FnMut(u64, &[u8], Option<&[u8]>),
) -> Result<RecordStats, StateFileError> {
    let mut win: Vec<u8> = Vec::new();
    let mut base = 0usize; // decompressed offset of win[0]
    let mut st = RecordStats::default();
    let mut done = false;
    let mut rec_err: Option<RecordError> = None;
    let res = codec::decompress_chunks(bytes, max_out, &mut |chunk: &[u8]| {
        if rec_err.is_some() {
            return;
        }
        if done {
            st.trailing_bytes += chunk.len() as u64;
            return;
        }
        win.extend_from_slice(chunk);
        let mut p = 0usize;
        while let Some(ks) = read_i32(&win, p) {
            if ks == -1 {
                done = true;
                st.end_offset = (base + p) as u64;
                st.trailing_bytes += (win.len() - p - 4) as u64;
                break;
            }
            if ks < 0 {
                rec_err = Some(RecordError {
                    offset: (base + p) as u64,
                    kind: RecordErrorKind::BadKeySize(ks),
                    reason: format!("key size cannot be {ks}"),
                });
                break;
            }
            let k = ks as usize;
            let Some(vs) = p.checked_add(4 + k).and_then(|at| read_i32(&win, at)) else { break };
            let key_at = p + 4;
            let value_at = key_at + k + 4;
            if vs < 0 {
                if kind == RecordFileKind::Snapshot {
                    rec_err = Some(RecordError {
                        offset: (base + key_at + k) as u64,
                        kind: RecordErrorKind::BadValueSize(vs),
                        reason: format!("value size cannot be {vs}"),
                    });
                    break;
                }
                f((base + p) as u64, &win[key_at..key_at + k], None);
                st.removals += 1;
                st.key_bytes += k as u64;
                p = value_at;
                continue;
            }
            let v = vs as usize;
            if win.len() - value_at < v {
                break;
            }
            f((base + p) as u64, &win[key_at..key_at + k], Some(&win[value_at..value_at + v]));
            st.puts += 1;
            st.key_bytes += k as u64;
            st.value_bytes += v as u64;
            p = value_at + v;
        }
        if !done {
            win.drain(..p);
            base += p;
        }
    });
    if let Some(e) = rec_err {
        return Err(StateFileError::Records(e));
    }
    res.map_err(StateFileError::Codec)?;
    if !done {
        let total = base + win.len();
        return Err(StateFileError::Records(RecordError {
            offset: base as u64,
            kind: RecordErrorKind::Truncated,
            reason: format!(
                "stream ends at byte {total} inside a record, before the -1 end marker (java.io.EOFException)"
            ),
        }));
    }
    Ok(st)
}

/// The most delta versions [`check_chain`] walks. An archive holds at most `Limits::max_entries` files, so a
/// longer chain (a hostile `commits/1000000000000`) has missing deltas long before this; the cap keeps it small.
pub const MAX_PLAN_DELTAS: i64 = 1 << 18;

/// The chain Spark reads to load `version` of the HDFS store in `store_dir`, by the one planner
/// ([`crate::restart_chain::plan`]) over the store's listing.
fn plan(a: &dyn Archive, store_dir: &str, version: i64) -> (StoreFiles, LoadChain) {
    let store = crate::state_files::store_files(a.entries(), store_dir);
    let chain = crate::restart_chain::plan(&store, version, &PlanInput::new("hdfs"));
    (store, chain)
}

/// Missing deltas [`check_chain`] reports one by one; more are summed up in one further problem.
const MAX_MISSING_LISTED: usize = 32;

pub(crate) fn read_record_file(
    a: &mut dyn Archive,
    path: &str,
    kind: RecordFileKind,
    limits: &StateLimits,
    mut apply: impl FnMut(&[u8], Option<&[u8]>),
) -> Result<(), StateError> {
    read_record_file_at(a, path, kind, limits, |_, k, v| apply(k, v))
}

/// [`read_record_file`] that also tells each record's offset in the decompressed stream: `apply(offset, key,
/// value)`.
fn read_record_file_at(
    a: &mut dyn Archive,
    path: &str,
    kind: RecordFileKind,
    limits: &StateLimits,
    apply: impl FnMut(u64, &[u8], Option<&[u8]>),
) -> Result<(), StateError> {
    let bytes = a.read(path, limits.max_file_bytes).map_err(|e| StateError::new(path, format!("cannot read: {e}")))?;
    parse_record_file(path, &bytes, kind, limits, apply)
}

/// The records of the file `path` (its bytes read), as [`read_record_file_at`] hands them.
fn parse_record_file(
    path: &str,
    bytes: &[u8],
    kind: RecordFileKind,
    limits: &StateLimits,
    apply: impl FnMut(u64, &[u8], Option<&[u8]>),
) -> Result<(), StateError> {
    for_each_record_in_file_at(bytes, kind, limits.max_decompressed_bytes, apply).map_err(|fe| {
        let class = fe.spark_error_class(kind);
        match fe {
            StateFileError::Codec(e) => StateError::new(path, e.message).at(e.offset).class(class),
            StateFileError::Records(e) => {
                StateError::new(path, format!("{} (byte {} of the decompressed stream)", e.reason, e.offset))
                    .class(class)
            }
        }
    })?;
    Ok(())
}

/// Rebuilds a store at `version` exactly as Spark does: newest snapshot ≤ version, then deltas in order, removals
/// applied. A missing delta is `CANNOT_LOAD_STATE_STORE.CANNOT_READ_DELTA_FILE_NOT_EXISTS`.
pub fn load_store(
    a: &mut dyn Archive,
    store_dir: &str,
    version: i64,
    limits: &StateLimits,
) -> Result<RawStore, StateError> {
    let store = crate::state_files::store_files(a.entries(), store_dir);
    load_store_listed(a, store_dir, &store, version, limits)
}

/// [`load_store`] of a store folder listed already: `store` is
/// [`crate::state_files::store_files`]`(a.entries(), store_dir)` (or the same listing through an index,
/// [`crate::state_files::store_files_in`]); the archive is not listed again.
pub fn load_store_listed(
    a: &mut dyn Archive,
    store_dir: &str,
    store: &StoreFiles,
    version: i64,
    limits: &StateLimits,
) -> Result<RawStore, StateError> {
    if version < 0 {
        return Err(StateError::new(store_dir, format!("version {version} is negative"))
            .class("CANNOT_LOAD_STATE_STORE.UNEXPECTED_VERSION"));
    }
    let chain = crate::restart_chain::plan(store, version, &PlanInput::new("hdfs"));
    load_chain(a, &chain, limits)
}

/// Executes a load chain of the HDFS provider (paths inside the archive, from [`crate::restart_chain::plan`]):
/// the snapshot, then the deltas in order, removals applied; the chain's missing delta is
/// `CANNOT_LOAD_STATE_STORE.CANNOT_READ_DELTA_FILE_NOT_EXISTS`.
pub fn load_chain(a: &mut dyn Archive, chain: &LoadChain, limits: &StateLimits) -> Result<RawStore, StateError> {
    // Deterministic order: by key bytes.
    rebuild(a, chain, limits).map(|(store, _)| store)
}

/// The first put of a chain's first file: the row Spark's `validateStateRowFormat` checks on an HDFS load
/// (`isValidated` is set after it). `offset` is the record's in the decompressed stream; `value` is the value
/// row (unwrapped from the 4.x checksum envelope when there is one).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FirstPut {
    /// The chain file (as given in the chain).
    pub path: String,
    /// Offset of the record in the decompressed stream.
    pub offset: u64,
    /// Key row.
    pub key: Vec<u8>,
    /// Value row.
    pub value: Vec<u8>,
}

/// Executes `chain` like [`load_chain`] and hands every row of the rebuilt store to `f(key, value)` in key
/// order, without a copy of the store; returns the chain's [`FirstPut`]. Errors as [`load_chain`].
pub fn for_each_row_of_chain(
    a: &mut dyn Archive,
    chain: &LoadChain,
    limits: &StateLimits,
    mut f: impl FnMut(&[u8], &[u8]),
) -> Result<Option<FirstPut>, StateError> {
    let (store, first) = rebuild(a, chain, limits)?;
    for (k, v) in store.iter() {
        f(k, v);
    }
    Ok(first)
}

/// A store being rebuilt the way an HDFS load does it: the records of the chain's files, fed in chain order
/// ([`Rebuild::apply`]), make the store (puts insert, delta removals delete; one buffer sorted by key once, as
/// [`load_chain`] builds it). Lets a caller that reads the chain's files for another reason (the read stage's
/// integrity pass) rebuild the store from the same bytes, so each file is decompressed once.
#[derive(Debug, Default)]
pub struct Rebuild {
    store: StoreBuilder,
    first: Option<FirstPut>,
    /// The chain position of the file being fed.
    file: Option<usize>,
    /// Bytes of records fed so far, and the most it keeps ([`Rebuild::cap`]; `None`: no cap).
    fed: usize,
    cap: Option<usize>,
}

impl Rebuild {
    /// Room for `bytes` more bytes of records (a caller that knows a file's size reserves before feeding it),
    /// within the cap.
    pub fn reserve(&mut self, bytes: usize) {
        self.store.reserve(bytes.min(self.cap.unwrap_or(usize::MAX).saturating_sub(self.fed)));
    }

    /// Keeps at most `bytes` of records (keys and values): past it the rebuild stops keeping them and
    /// [`Rebuild::is_over`] says so; its store is then not the chain's, and the caller drops it. A memory budget:
    /// the read stage gives what is left of its verify budget, so a file whose stream unpacks to hundreds of
    /// megabytes is not held twice.
    pub fn cap(&mut self, bytes: usize) {
        self.cap = Some(bytes);
    }

    /// True when the records fed went past [`Rebuild::cap`].
    pub fn is_over(&self) -> bool {
        self.cap.is_some_and(|c| self.fed > c)
    }

    /// One record of the chain's `file`-th file (0 = the base), at `offset` of its decompressed stream:
    /// `value` `None` is a removal (applied only in a delta, as Spark's `updateFromDeltaFile` does). Files are
    /// fed in chain order, every record of a file before the next file's.
    pub fn apply(
        &mut self,
        file: usize,
        path: &str,
        kind: RecordFileKind,
        offset: u64,
        key: &[u8],
        value: Option<&[u8]>,
    ) {
        self.fed = self.fed.saturating_add(key.len() + value.map_or(0, <[u8]>::len));
        if self.is_over() {
            return;
        }
        if self.file != Some(file) {
            if self.file.is_some() {
                self.store.end_file();
            }
            self.file = Some(file);
        }
        match value {
            Some(v) => {
                let value = unwrap_value(key, v);
                if file == 0 && self.first.is_none() {
                    self.first =
                        Some(FirstPut { path: path.to_string(), offset, key: key.to_vec(), value: value.to_vec() });
                }
                self.store.put(key, value);
            }
            None if kind == RecordFileKind::Delta => self.store.remove(unwrap_removed_key(key)),
            None => {}
        }
    }

    /// The rebuilt store (pairs in key order) and the first put of the base file ([`FirstPut`]).
    pub fn finish(mut self) -> (RawStore, Option<FirstPut>) {
        if self.file.is_some() {
            self.store.end_file();
        }
        (self.store.finish(), self.first)
    }

    /// Hands every row of the rebuilt store to `f(key, value)` in key order and returns the first put of the
    /// base file ([`FirstPut`]).
    pub fn for_each_row(self, mut f: impl FnMut(&[u8], &[u8])) -> Option<FirstPut> {
        let (store, first) = self.finish();
        for (k, v) in store.iter() {
            f(k, v);
        }
        first
    }
}

/// The store `chain` rebuilds (snapshot, then deltas in order, removals applied), pairs in key order, and the
/// first put of its first file.
fn rebuild(
    a: &mut dyn Archive,
    chain: &LoadChain,
    limits: &StateLimits,
) -> Result<(RawStore, Option<FirstPut>), StateError> {
    let version = chain.version;
    let mut r = Rebuild::default();
    for (i, step) in chain.steps.iter().enumerate() {
        let kind = if step.kind == ChainFileKind::Snapshot { RecordFileKind::Snapshot } else { RecordFileKind::Delta };
        let path = &step.path;
        let bytes =
            a.read(path, limits.max_file_bytes).map_err(|e| StateError::new(path, format!("cannot read: {e}")))?;
        // Room for the decompressed records up front (state rows compress about 4:1), not grown copy by copy.
        r.reserve(bytes.len().saturating_mul(4).min(limits.max_decompressed_bytes));
        parse_record_file(path, &bytes, kind, limits, |offset, k, v| r.apply(i, path, kind, offset, k, v))?;
    }
    if let Some(m) = &chain.missing {
        let d = m.version;
        return Err(StateError::new(
            &m.path,
            format!("delta file of version {d} does not exist; it is needed to rebuild version {version}"),
        )
        .class("CANNOT_LOAD_STATE_STORE.CANNOT_READ_DELTA_FILE_NOT_EXISTS"));
    }
    Ok(r.finish())
}

/// Where the value a store rebuilt at `version` ([`load_store`]) holds for `key` was written: the newest delta of
/// the load with a put of it, else the base snapshot (path, record offset in the decompressed stream). `None`
/// when no file has it. Re-reads the files: meant for error paths (decode failures), not per row.
pub fn locate_key(
    a: &mut dyn Archive,
    store_dir: &str,
    version: i64,
    key: &[u8],
    limits: &StateLimits,
) -> Option<crate::state::rocksdb::KeySource> {
    let (_, chain) = plan(a, store_dir, version);
    let candidates = chain.steps.iter().rev().map(|s| {
        (
            s.path.clone(),
            if s.kind == ChainFileKind::Snapshot { RecordFileKind::Snapshot } else { RecordFileKind::Delta },
        )
    });
    for (path, kind) in candidates {
        let Ok(bytes) = a.read(&path, limits.max_file_bytes) else { continue };
        let mut hit: Option<u64> = None;
        let _ = for_each_record_in_file_at(&bytes, kind, limits.max_decompressed_bytes, |off, k, v| {
            if v.is_some() && k == key {
                hit = Some(off);
            }
        });
        if let Some(offset) = hit {
            return Some(crate::state::rocksdb::KeySource { path, offset, in_decompressed_stream: true });
        }
    }
    None
}

/// What loading one version of one store needs and what is wrong with it (every problem, not just the first).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ChainCheck {
    /// The store folder.
    pub store_dir: String,
    /// The version checked.
    pub version: i64,
    /// The snapshot the load starts from, if any.
    pub snapshot: Option<i64>,
    /// The deltas replayed after it, in order.
    pub deltas: Vec<i64>,
    /// Missing deltas and files that do not decode, each naming the file (and offset when known) with Spark's
    /// error class.
    pub problems: Vec<StateError>,
    /// Rows of the store at `version` when the chain is sound (puts minus removals), else `None`.
    pub rows: Option<u64>,
}

/// Checks the chain Spark reads to load `version` of an HDFS store (newest snapshot ≤ version, then the deltas):
/// every delta present, every file decoding (framing, checksums, record stream). Unlike [`load_store`] it goes
/// on after a problem so that a report can list them all.
pub fn check_chain(a: &mut dyn Archive, store_dir: &str, version: i64, limits: &StateLimits) -> ChainCheck {
    let store = crate::state_files::store_files(a.entries(), store_dir);
    // Every file of the chain, not only up to the first missing one: the base is the planner's.
    let snapshot = crate::restart_chain::hdfs_base(&store, version.max(0), &[]);
    let from = snapshot.unwrap_or(0).saturating_add(1);
    let deltas: Vec<i64> = (from..=version.max(0).min(from.saturating_add(MAX_PLAN_DELTAS - 1))).collect();
    let have: HashSet<i64> = store.deltas.keys().copied().collect();
    let mut missing_listed = 0usize;
    let mut problems = Vec::new();
    let mut keys: Option<HashSet<Vec<u8>>> = Some(HashSet::new());
    let mut plan: Vec<(String, RecordFileKind)> = Vec::new();
    if let Some(s) = snapshot {
        plan.push((format!("{store_dir}/{s}.snapshot"), RecordFileKind::Snapshot));
    }
    for &d in &deltas {
        plan.push((format!("{store_dir}/{d}.delta"), RecordFileKind::Delta));
    }
    let mut plan = plan.into_iter();
    while let Some((path, kind)) = plan.next() {
        let v = path.rsplit('/').next().unwrap_or("").trim_end_matches(".delta");
        if kind == RecordFileKind::Delta && !v.parse::<i64>().is_ok_and(|v| have.contains(&v)) {
            let v = v.to_string();
            if missing_listed == MAX_MISSING_LISTED {
                // Sum up the rest of the chain instead of one problem per missing version.
                let first = v.parse::<i64>().unwrap_or(version);
                let present = have.iter().filter(|d| **d >= first && **d <= version).count() as i64;
                let missing = (version - first + 1).saturating_sub(present);
                problems.push(
                    StateError::new(
                        &path,
                        format!(
                            "{missing} delta files of versions {first} to {version} do not exist (this one is the \
                             first); they are needed to rebuild version {version}"
                        ),
                    )
                    .class("CANNOT_LOAD_STATE_STORE.CANNOT_READ_DELTA_FILE_NOT_EXISTS"),
                );
                keys = None;
                // Still read the deltas that are present, for their own damage.
                for (p, k) in plan.by_ref() {
                    let pv = p.rsplit('/').next().unwrap_or("").trim_end_matches(".delta");
                    if pv.parse::<i64>().is_ok_and(|pv| have.contains(&pv)) {
                        if let Err(e) = read_record_file(a, &p, k, limits, |_, _| {}) {
                            problems.push(e);
                        }
                    }
                }
                break;
            }
            missing_listed += 1;
            problems.push(
                StateError::new(
                    &path,
                    format!("delta file of version {v} does not exist; it is needed to rebuild version {version}"),
                )
                .class("CANNOT_LOAD_STATE_STORE.CANNOT_READ_DELTA_FILE_NOT_EXISTS"),
            );
            keys = None;
            continue;
        }
        let res = read_record_file(a, &path, kind, limits, |k, v| {
            if let Some(set) = keys.as_mut() {
                if v.is_some() {
                    set.insert(k.to_vec());
                } else {
                    set.remove(k);
                }
            }
        });
        if let Err(e) = res {
            problems.push(e);
            keys = None;
        }
    }
    ChainCheck {
        store_dir: store_dir.to_string(),
        version,
        snapshot,
        deltas,
        problems,
        rows: keys.map(|k| k.len() as u64),
    }
}

/// The UnsafeRow of a stored value. UnsafeRows are a multiple of 8 bytes long; a value 4 bytes longer is either
/// written with Spark 4.3's row checksums (`KeyValueChecksumEncoder.encodeSingleValueRowWithChecksum`: CRC32C of
/// key and row as a little-endian int, then the row) or, when that checksum does not match, a row from Spark < 2.3
/// with 4 stray bytes appended, which Spark reads floored to a multiple of 8 (`HDFSBackedStateStoreProvider`).
pub fn unwrap_value<'a>(key: &[u8], value: &'a [u8]) -> &'a [u8] {
    if value.len() % 8 != 4 {
        return value;
    }
    let stored = u32::from_le_bytes([value[0], value[1], value[2], value[3]]);
    if super::rocksdb::encoding::crc32c(&[key, &value[4..]]) == stored {
        &value[4..]
    } else {
        &value[..value.len() - 4]
    }
}

/// The UnsafeRow of a removed key: with row checksums (4.3) Spark writes a removal's key as checksum + key
/// (`encodeKeyRowWithChecksum`), recognisable by its length (4 more than a multiple of 8).
pub fn unwrap_removed_key(key: &[u8]) -> &[u8] {
    if key.len() % 8 == 4 {
        &key[4..]
    } else {
        key
    }
}
