//! The `readChangeFeed` and `snapshotStartBatchId` options of Spark's `statestore` source (4.0+):
//!
//! * **Option checks** ([`resolve_options`]) in the order and with the error classes of
//!   `StateSourceOptions.apply` (`StateDataSource.scala`): `STDS_CONFLICT_OPTIONS`, `STDS_REQUIRED_OPTION_UNSPECIFIED`,
//!   `STDS_INVALID_OPTION_VALUE.IS_NEGATIVE` / `.WITH_MESSAGE`, `STDS_COMMITTED_BATCH_UNAVAILABLE`.
//! * **Change feed** (`read_change_feed`): per partition, the delta (`HDFSBackedStateStoreChangeDataReader`,
//!   `<v>.delta`) or changelog (`RocksDBStateStoreChangeDataReader`, `<v>[_<id>].changelog`) of every state version
//!   `changeStartBatchId + 1 ..= changeEndBatchId + 1`, each record one row `batch_id` (= version - 1),
//!   `change_type`, `key`, `value`, `partition_id` (`StateStoreChangeDataPartitionReader`). A RocksDB store without
//!   changelog checkpointing has no changelogs: Spark fails on the first one,
//!   `CANNOT_LOAD_STATE_STORE.CANNOT_READ_STREAMING_STATE_FILE`, and so does this reader.
//! * **From a snapshot** ([`load_from_snapshot`]): `replayStateFromSnapshot(snapshotStartBatchId + 1, batchId + 1)`
//!   of the two providers: that exact snapshot (HDFS `<v>.snapshot`, missing: `CANNOT_LOAD_STATE_STORE.UNCATEGORIZED`
//!   as Spark's `StateStoreSnapshotFileNotFound`; RocksDB `<v>[_<id>].zip`, missing: `UNCATEGORIZED` as its
//!   `FileNotFoundException`), then every delta / changelog after it up to the batch.

use super::hdfs::{self, RecordFileKind};
use super::rocksdb::{self, encoding};
use super::schema::StructType;
use super::statestore::RowSink;
use super::*;
use crate::archive::Archive;
use crate::dir_index::DirIndex;
use crate::restart_chain::{ChainFileKind, ChainStep, LoadChain};
use serde_json::Value;

/// What a query asks for once Spark's option checks passed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ReadMode {
    /// The state at `batch` (version `batch + 1`), from the newest snapshot as a restart loads it.
    State {
        /// The batch read.
        batch: i64,
    },
    /// The state at `batch` rebuilt from the snapshot of `snapshot_batch` in partition `partition`.
    FromSnapshot {
        /// The batch read.
        batch: i64,
        /// `snapshotStartBatchId`.
        snapshot_batch: i64,
        /// `snapshotPartitionId`.
        partition: i64,
    },
    /// The changes of batches `start..=end`.
    ChangeFeed {
        /// `changeStartBatchId`.
        start: i64,
        /// `changeEndBatchId` (default: the last committed batch).
        end: i64,
    },
}

impl ReadMode {
    /// The batch whose state version (`batch + 1`) bounds the read: the batch read, or the change feed's end.
    pub fn batch(&self) -> i64 {
        match *self {
            ReadMode::State { batch } | ReadMode::FromSnapshot { batch, .. } => batch,
            ReadMode::ChangeFeed { end, .. } => end,
        }
    }
}

fn conflict(root: &str, a: &str, b: &str) -> StateError {
    StateError::new(
        join(root, "state"),
        format!("The options ['{a}', '{b}'] cannot be specified together. Please specify the one."),
    )
    .class("STDS_CONFLICT_OPTIONS")
}

fn required(root: &str, opt: &str) -> StateError {
    StateError::new(join(root, "state"), format!("'{opt}' must be specified."))
        .class("STDS_REQUIRED_OPTION_UNSPECIFIED")
}

fn negative(root: &str, opt: &str) -> StateError {
    StateError::new(join(root, "state"), format!("Invalid value for source option '{opt}': cannot be negative."))
        .class("STDS_INVALID_OPTION_VALUE.IS_NEGATIVE")
}

fn invalid(root: &str, opt: &str, msg: String) -> StateError {
    StateError::new(join(root, "state"), format!("Invalid value for source option '{opt}': {msg}"))
        .class("STDS_INVALID_OPTION_VALUE.WITH_MESSAGE")
}

fn no_committed_batch(root: &str, why: String) -> StateError {
    StateError::new(join(root, "commits"), why).class("STDS_COMMITTED_BATCH_UNAVAILABLE")
}

/// Spark's checks of the batch, change feed and snapshot options (`StateSourceOptions.apply`, same order, same
/// error classes), giving what the query reads. Batch ids beyond [`crate::log::MAX_BATCH_ID`] are refused
/// (`STDS_INVALID_OPTION_VALUE.WITH_MESSAGE`): Spark never writes them and `batch + 1` must not overflow.
pub fn resolve_options(a: &dyn Archive, root: &str, q: &StateQuery) -> Result<ReadMode, StateError> {
    let too_big = |opt: &str, b: i64| {
        (b > crate::log::MAX_BATCH_ID)
            .then(|| invalid(root, opt, format!("{b} is beyond any batch Spark writes (at most 2^60)")))
    };
    let last = || last_committed_batch(a, root);
    let last_text = || last().map_or_else(|| "none".to_string(), |l| l.to_string());
    if q.read_change_feed {
        if q.join_side.is_some() {
            return Err(conflict(root, "joinSide", "readChangeFeed"));
        }
        if q.batch_id.is_some() {
            return Err(conflict(root, "batchId", "readChangeFeed"));
        }
        if q.snapshot_start_batch_id.is_some() {
            return Err(conflict(root, "snapshotStartBatchId", "readChangeFeed"));
        }
        if q.snapshot_partition_id.is_some() {
            return Err(conflict(root, "snapshotPartitionId", "readChangeFeed"));
        }
        let start = q.change_start_batch_id.ok_or_else(|| required(root, "changeStartBatchId"))?;
        let end = match q.change_end_batch_id {
            Some(e) => e,
            None => last().ok_or_else(|| no_committed_batch(root, "no committed batch found".into()))?,
        };
        if start < 0 {
            return Err(negative(root, "changeStartBatchId"));
        }
        if end < start {
            return Err(invalid(
                root,
                "changeEndBatchId",
                format!(
                    "changeEndBatchId cannot be smaller than changeStartBatchId. Please check the input to changeEndBatchId, or if you are using its default value, make sure that changeStartBatchId is less than {end}."
                ),
            ));
        }
        if let Some(e) = too_big("changeEndBatchId", end) {
            return Err(e);
        }
        // Spark 4.3 reads the commit of the end batch (its state unique ids): a batch not committed fails.
        if last().is_none_or(|l| end > l) {
            return Err(no_committed_batch(
                root,
                format!("No committed batch found for changeEndBatchId {end} (last committed: {})", last_text()),
            ));
        }
        return Ok(ReadMode::ChangeFeed { start, end });
    }
    if q.change_start_batch_id.is_some() {
        let m = "Only specify this option when readChangeFeed is set to true.".to_string();
        return Err(invalid(root, "changeStartBatchId", m));
    }
    if q.change_end_batch_id.is_some() {
        let m = "Only specify this option when readChangeFeed is set to true.".to_string();
        return Err(invalid(root, "changeEndBatchId", m));
    }
    let batch = match q.batch_id {
        Some(b) => b,
        None => last().ok_or_else(|| no_committed_batch(root, "no committed batch: give a batch id".into()))?,
    };
    if batch < 0 {
        return Err(negative(root, "batchId"));
    }
    if let Some(e) = too_big("batchId", batch) {
        return Err(e);
    }
    match (q.snapshot_start_batch_id, q.snapshot_partition_id) {
        (Some(s), _) if s < 0 => Err(negative(root, "snapshotStartBatchId")),
        (Some(s), _) if s > batch => {
            Err(invalid(root, "snapshotStartBatchId", format!("value should be less than or equal to {batch}")))
        }
        (_, Some(p)) if p < 0 => Err(negative(root, "snapshotPartitionId")),
        (None, Some(_)) => Err(required(root, "snapshotStartBatchId")),
        (Some(_), None) => Err(required(root, "snapshotPartitionId")),
        (Some(snapshot_batch), Some(partition)) => {
            // Spark 4.3 reads the commit of the batch (its state unique ids): a batch not committed fails.
            if last().is_none_or(|l| batch > l) {
                return Err(no_committed_batch(
                    root,
                    format!("No committed batch found for batchId {batch} (last committed: {})", last_text()),
                ));
            }
            Ok(ReadMode::FromSnapshot { batch, snapshot_batch, partition })
        }
        // Spark 4.x reads the batch's offsets and commit for its confs and state ids: a batch planned but not
        // committed, or beyond the log, has none (real Spark 4.1.4, a newcomer's reads of a query killed in
        // batch 2 with batchId 2 and 5: STDS_COMMITTED_BATCH_UNAVAILABLE, on HDFS and RocksDB).
        (None, None)
            if q.batch_id.is_some() && super::store::committed_batches(a, root).binary_search(&batch).is_err() =>
        {
            Err(no_committed_batch(
                root,
                format!("No committed batch found for batchId {batch} (last committed: {})", last_text()),
            ))
        }
        (None, None) => Ok(ReadMode::State { batch }),
    }
}

/// The one partition a `snapshotPartitionId` query reads: its folder must exist
/// (`CANNOT_LOAD_STATE_STORE.SNAPSHOT_PARTITION_ID_NOT_FOUND`, as Spark's `StateStoreSnapshotPartitionNotFound`).
/// `dirs`: the index of `a`'s entries.
pub(super) fn snapshot_partition(
    a: &dyn Archive,
    dirs: &DirIndex,
    root: &str,
    op: i64,
    partition: i64,
) -> Result<u32, StateError> {
    u32::try_from(partition).ok().filter(|p| list_partitions_in(a, dirs, root, op).contains(p)).ok_or_else(|| {
        StateError::new(
            join(root, &format!("state/{op}/{partition}")),
            format!("Partition id {partition} not found for state of operator {op} at {}", join(root, "state")),
        )
        .class("CANNOT_LOAD_STATE_STORE.SNAPSHOT_PARTITION_ID_NOT_FOUND")
    })
}

/// The provider a store folder is read with: the one found on disk, else (an empty or missing folder) the one of
/// the operator's other partitions. `dirs`: the index of `a`'s entries.
fn provider_of(a: &dyn Archive, dirs: &DirIndex, dir: &str) -> Provider {
    match detect_provider_in(a, dirs, dir) {
        Provider::Unknown if rocksdb::state_view::sibling_is_rocksdb(a, dirs, dir) => Provider::RocksDb,
        Provider::Unknown => Provider::Hdfs,
        p => p,
    }
}

/// Loads one store at `version` from the snapshot of version `snapshot_version` and the deltas / changelogs
/// after it (`SupportsFineGrainedReplay.replayReadStateFromSnapshot`), as pairs of key and value UnsafeRows.
///
/// Errors: the snapshot missing (`CANNOT_LOAD_STATE_STORE.UNCATEGORIZED`, as Spark), a delta missing
/// (`CANNOT_LOAD_STATE_STORE.CANNOT_READ_DELTA_FILE_NOT_EXISTS`), a changelog missing
/// (`CANNOT_LOAD_STATE_STORE.CANNOT_READ_STREAMING_STATE_FILE`), a file that does not decode. Indexes the
/// archive's listing for the call ([`load_from_snapshot_in`] with an index built once).
pub fn load_from_snapshot(
    a: &mut dyn Archive,
    dir: &str,
    snapshot_version: i64,
    version: i64,
    limits: &StateLimits,
) -> Result<RawStore, StateError> {
    let dirs = DirIndex::build(a.entries());
    load_from_snapshot_in(a, &dirs, dir, snapshot_version, version, limits)
}

/// [`load_from_snapshot`] through `dirs`, the index of `a`'s entries.
pub fn load_from_snapshot_in(
    a: &mut dyn Archive,
    dirs: &DirIndex,
    dir: &str,
    snapshot_version: i64,
    version: i64,
    limits: &StateLimits,
) -> Result<RawStore, StateError> {
    let files = crate::state_files::store_files_in(a.entries(), dirs, dir);
    // At most one file per version of the range, and never more than the archive lists.
    let span = version.saturating_sub(snapshot_version);
    if span > a.entries().len() as i64 + 1 {
        let m = format!("versions {snapshot_version}..{version}: more files than the archive holds are needed");
        return Err(StateError::new(dir, m).class("CANNOT_LOAD_STATE_STORE.CANNOT_READ_DELTA_FILE_NOT_EXISTS"));
    }
    if provider_of(a, dirs, dir) == Provider::Hdfs {
        let Some(snap) = files.snapshots.get(&snapshot_version) else {
            return Err(StateError::new(
                format!("{dir}/{snapshot_version}.snapshot"),
                format!("the snapshot file of version {snapshot_version} does not exist (Spark's StateStoreSnapshotFileNotFound)"),
            )
            .class("CANNOT_LOAD_STATE_STORE.UNCATEGORIZED"));
        };
        let step = |version, kind, path: String| ChainStep { version, kind, path };
        let mut chain = LoadChain { version, ..Default::default() };
        chain.steps.push(step(snapshot_version, ChainFileKind::Snapshot, snap.path.clone()));
        for v in snapshot_version + 1..=version {
            match files.deltas.get(&v) {
                Some(d) => chain.steps.push(step(v, ChainFileKind::Delta, d.path.clone())),
                None => {
                    chain.missing = Some(step(v, ChainFileKind::Delta, format!("{dir}/{v}.delta")));
                    break;
                }
            }
        }
        return hdfs::load_chain(a, &chain, limits);
    }
    let zip = version_file(a, dirs, dir, &files.zips, snapshot_version).ok_or_else(|| {
        StateError::new(
            format!("{dir}/{snapshot_version}.zip"),
            format!("File {dir}/{snapshot_version}.zip does not exist (java.io.FileNotFoundException): the snapshot of version {snapshot_version} is needed"),
        )
        .class("CANNOT_LOAD_STATE_STORE.UNCATEGORIZED")
    })?;
    let mut plan = rocksdb::LoadPlan { snapshot: Some((snapshot_version, zip)), changelogs: Vec::new() };
    for v in snapshot_version + 1..=version {
        plan.changelogs.push((v, changelog_path(a, dirs, dir, &files, v)?));
    }
    let l = rocksdb::state_view::load_limits(limits);
    let store = rocksdb::load_from_plan_listed(a, dir, &files, version, &plan, &l)?;
    let mut pairs = RawStore::default();
    rocksdb::state_view::state_pairs(a, Some(dirs), dir, &store, limits, |_, k, v| {
        pairs.push(&k, &v);
        true
    })?;
    Ok(pairs)
}

/// The file of `version` among `by_version` (zips or changelogs of a store): with checkpoint format v2 the one
/// whose unique id `commits/<version - 1>` records, else the only one (or the one without an id).
fn version_file(
    a: &mut dyn Archive,
    dirs: &DirIndex,
    dir: &str,
    by_version: &std::collections::BTreeMap<i64, Vec<crate::state_files::VersionFile>>,
    version: i64,
) -> Option<String> {
    let cands = by_version.get(&version)?;
    let id = rocksdb::state_view::unique_id_from_commit(a, dirs, dir, version);
    let pick = match &id {
        Some(id) => cands.iter().find(|f| f.unique_id.as_deref() == Some(id.as_str())),
        None => cands.iter().find(|f| f.unique_id.is_none()).or(cands.first().filter(|_| cands.len() == 1)),
    };
    pick.map(|f| f.file.path.clone())
}

/// The changelog of `version` ([`version_file`]); missing: Spark's
/// `CANNOT_LOAD_STATE_STORE.CANNOT_READ_STREAMING_STATE_FILE`.
fn changelog_path(
    a: &mut dyn Archive,
    dirs: &DirIndex,
    dir: &str,
    files: &crate::state_files::StoreFiles,
    version: i64,
) -> Result<String, StateError> {
    version_file(a, dirs, dir, &files.changelogs, version).ok_or_else(|| {
        let path = format!("{dir}/{version}.changelog");
        StateError::new(&path, format!("Error reading streaming state file of {path}: it does not exist"))
            .class("CANNOT_LOAD_STATE_STORE.CANNOT_READ_STREAMING_STATE_FILE")
    })
}

/// Reads the change feed of batches `start..=end` of one store (`q`'s operator and store name) over `parts`,
/// handing each change to `sink` as a row (`batch_id`, `change_type`, `key`, `value`, `partition_id`), partition
/// by partition, versions ascending, records in file order — Spark's order. Only one delta / changelog is held
/// at a time.
///
/// Errors (the file, the record's offset in the decompressed stream, Spark's error class): a delta or changelog
/// of the range missing or undecodable, a key or value that does not match the store's schema, more than
/// `limits.max_rows` rows; state variables of transformWithState (their change feed is not read by this
/// inspector). `dirs`: the index of `a`'s entries.
#[allow(clippy::too_many_arguments)]
pub(super) fn read_change_feed(
    a: &mut dyn Archive,
    dirs: &DirIndex,
    root: &str,
    q: &StateQuery,
    (start, end): (i64, i64),
    parts: &[u32],
    limits: &StateLimits,
    sink: &mut RowSink<'_>,
) -> Result<(), StateError> {
    if q.state_var.is_some() || q.read_registered_timers {
        return Err(StateError::new(
            join(root, &format!("state/{}", q.operator_id)),
            "this inspector does not read the change feed of transformWithState state variables or timers",
        ));
    }
    let (ks, vs) = store_schemas_in(a, dirs, root, q.operator_id, &q.store_name)?;
    let mut emitted = 0usize;
    for &p in parts {
        let dir = store_dir(root, q.operator_id, p, &q.store_name);
        let files = crate::state_files::store_files_in(a.entries(), dirs, &dir);
        let rocks = provider_of(a, dirs, &dir) == Provider::RocksDb;
        let layout = if rocks { Some(RocksKeys::of(a, dirs, root, &dir, end)?) } else { None };
        for v in start + 1..=end + 1 {
            let mut emit = |key: &[u8], value: Option<&[u8]>, path: &str, offset: Option<u64>| {
                let row = change_row(p, v - 1, key, value, &ks, &vs).map_err(|e| {
                    let e = StateError { path: path.to_string(), ..e };
                    match offset {
                        Some(o) => e.at(o),
                        None => e,
                    }
                })?;
                if emitted >= limits.max_rows {
                    return Err(StateError::new(path, format!("more than {} rows", limits.max_rows)));
                }
                emitted += 1;
                sink(row)
            };
            match &layout {
                None => hdfs_changes(a, &dir, &files, v, limits, &mut emit)?,
                Some(l) => {
                    let path = changelog_path(a, dirs, &dir, &files, v)?;
                    rocks_changes(a, &dir, path, limits, l, &mut emit)?
                }
            }
        }
    }
    Ok(())
}

/// A change's receiver: (key UnsafeRow, value UnsafeRow or `None` for a removal, file, record offset).
type ChangeSink<'a> = dyn FnMut(&[u8], Option<&[u8]>, &str, Option<u64>) -> Result<(), StateError> + 'a;

/// The records of `<v>.delta` (HDFS), puts and removals, handed to `emit` as they are decoded.
fn hdfs_changes(
    a: &mut dyn Archive,
    dir: &str,
    files: &crate::state_files::StoreFiles,
    v: i64,
    limits: &StateLimits,
    emit: &mut ChangeSink<'_>,
) -> Result<(), StateError> {
    let Some(delta) = files.deltas.get(&v) else {
        return Err(StateError::new(
            format!("{dir}/{v}.delta"),
            format!("Error reading streaming state file of {dir}/{v}.delta: it does not exist (the change feed of batch {} needs it)", v - 1),
        )
        .class("CANNOT_LOAD_STATE_STORE.CANNOT_READ_STREAMING_STATE_FILE"));
    };
    let path = delta.path.clone();
    let bytes =
        a.read(&path, limits.max_file_bytes).map_err(|e| StateError::new(&path, format!("cannot read: {e}")))?;
    let mut failed: Option<StateError> = None;
    let res =
        hdfs::for_each_record_in_file_at(&bytes, RecordFileKind::Delta, limits.max_decompressed_bytes, |o, k, val| {
            if failed.is_some() {
                return;
            }
            let r = match val {
                Some(val) => emit(k, Some(hdfs::unwrap_value(k, val)), &path, Some(o)),
                None => emit(hdfs::unwrap_removed_key(k), None, &path, Some(o)),
            };
            failed = r.err();
        });
    if let Some(e) = failed {
        return Err(e);
    }
    res.map(|_| ()).map_err(|fe| {
        let class = fe.spark_error_class(RecordFileKind::Delta);
        match fe {
            hdfs::StateFileError::Codec(e) => StateError::new(&path, e.message).at(e.offset).class(class),
            hdfs::StateFileError::Records(e) => {
                StateError::new(&path, format!("{} (byte {} of the decompressed stream)", e.reason, e.offset))
                    .class(class)
            }
        }
    })
}

/// How the raw keys of a RocksDB store's changelogs are taken apart: plain keys, or the prefix-scan keys of
/// session windows (joined back into one key row, as [`rocksdb::state_view::state_pairs`] does), and whether
/// rows carry 4.3 row checksums (offset log conf of the last batch read).
struct RocksKeys {
    prefix_scan: Option<(Vec<bool>, Vec<bool>)>,
    row_checksums: Option<bool>,
}

impl RocksKeys {
    fn of(a: &mut dyn Archive, dirs: &DirIndex, root: &str, dir: &str, batch: i64) -> Result<Self, StateError> {
        let conf = rocksdb::state_view::offset_conf(a, root, batch);
        let row_checksums = conf
            .get("spark.sql.streaming.stateStore.rowChecksum.enabled")
            .map(|v| v.trim().eq_ignore_ascii_case("true"));
        let meta = read_operator_metadata_in(a, dirs, root, locate_op(dir).unwrap_or(0));
        let prefix = meta.is_some_and(|m| m.stores.iter().any(|s| s.num_cols_prefix_key > 0));
        let prefix_scan = if prefix { Some(rocksdb::state_view::prefix_key_layout(a, dirs, dir)?) } else { None };
        Ok(RocksKeys { prefix_scan, row_checksums })
    }

    /// The key UnsafeRow of a raw key (a removal's key may carry a 4-byte row checksum first).
    fn key_row(&self, raw: &[u8], removal: bool, dir: &str) -> Result<Vec<u8>, StateError> {
        let raw = if removal && (self.row_checksums == Some(true) || raw.len() % 8 == 5) && raw.len() > 4 {
            &raw[4..]
        } else {
            raw
        };
        let err = |e: encoding::EncodingError| rocksdb::state_view::row_error(dir, "key", e);
        match &self.prefix_scan {
            None => {
                let kp = encoding::split_key(raw, false, &encoding::KeyEncoding::NoPrefix).map_err(err)?;
                Ok(kp.rows.first().map(|r| r.to_vec()).unwrap_or_default())
            }
            Some(flags) => {
                let enc = encoding::KeyEncoding::PrefixScan { num_cols: flags.0.len() };
                let kp = encoding::split_key(raw, false, &enc).map_err(err)?;
                let (Some(p), Some(r)) = (kp.rows.first(), kp.rows.get(1)) else {
                    return Err(StateError::new(dir, "prefix-scan key without its two parts"));
                };
                encoding::join_unsafe_rows(p, &flags.0, r, &flags.1).map_err(err)
            }
        }
    }
}

/// The operator id of a store folder `…/state/<op>/<part>[/<store>]`.
fn locate_op(dir: &str) -> Option<i64> {
    let segs: Vec<&str> = dir.split('/').collect();
    let i = segs.iter().rposition(|s| *s == "state")?;
    segs.get(i + 1)?.parse().ok()
}

/// The records of a RocksDB changelog (`path`, of the store folder `dir`), handed to `emit` in file order.
fn rocks_changes(
    a: &mut dyn Archive,
    dir: &str,
    path: String,
    limits: &StateLimits,
    keys: &RocksKeys,
    emit: &mut ChangeSink<'_>,
) -> Result<(), StateError> {
    let cl = rocksdb::read_changelog_file(a, &path, &rocksdb::state_view::load_limits(limits))?;
    for (r, off) in cl.records.iter().zip(&cl.record_offsets) {
        let at = |e: StateError| StateError { path: path.clone(), ..e }.at(*off);
        let (raw, value) = match r {
            rocksdb::changelog::ChangeRecord::Put { key, value } => (key, Some(value)),
            rocksdb::changelog::ChangeRecord::Delete { key } => (key, None),
            rocksdb::changelog::ChangeRecord::Merge { .. } => {
                return Err(at(StateError::new(
                    dir,
                    "a merge record (list state): this inspector reads the change feed of plain stores only",
                )));
            }
        };
        let key = keys.key_row(raw, value.is_none(), dir).map_err(at)?;
        match value {
            Some(val) => {
                let vals = encoding::split_value(raw, val, false, keys.row_checksums)
                    .map_err(|e| at(rocksdb::state_view::row_error(dir, "value", e)))?;
                let Some(vr) = vals.first() else { continue };
                emit(&key, Some(vr), &path, Some(*off))?;
            }
            None => emit(&key, None, &path, Some(*off))?,
        }
    }
    Ok(())
}

/// One change decoded into a row; errors carry Spark's row-format error classes.
fn change_row(
    partition: u32,
    batch: i64,
    key: &[u8],
    value: Option<&[u8]>,
    ks: &StructType,
    vs: &StructType,
) -> Result<StateRow, StateError> {
    let kj = unsafe_row::decode_row(key, ks).map_err(|e| {
        StateError::new("", format!("key row does not match the key schema {}: {}", ks.simple_string(), e))
            .class("CANNOT_LOAD_STATE_STORE.KEY_ROW_FORMAT_VALIDATION_FAILURE")
    })?;
    let vj = match value {
        Some(v) => unsafe_row::decode_row(v, vs).map_err(|e| {
            StateError::new("", format!("value row does not match the value schema {}: {}", vs.simple_string(), e))
                .class("CANNOT_LOAD_STATE_STORE.VALUE_ROW_FORMAT_VALIDATION_FAILURE")
        })?,
        None => Value::Null,
    };
    let mut row = StateRow::new(partition, kj, vj);
    row.batch_id = Some(batch);
    row.change_type = Some(if value.is_some() { "update" } else { "delete" });
    Ok(row)
}
