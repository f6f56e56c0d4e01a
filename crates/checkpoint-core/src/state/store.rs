//! Finding and loading a state store in the archive: the `state/<operator>/<partition>/<store>` folders, the
//! provider on disk, the raw (key, value) pairs of a store version (HDFS or RocksDB), its schemas and its
//! operator metadata.

use super::schema::StructType;
use super::*;
use crate::archive::Archive;
use crate::dir_index::DirIndex;
use serde_json::Value;
use std::collections::{BTreeMap, BTreeSet};

/// `root` joined with a relative path (`root` "" = archive top).
pub(crate) fn join(root: &str, rel: &str) -> String {
    let r = root.trim_matches('/');
    if r.is_empty() {
        rel.to_string()
    } else {
        format!("{r}/{rel}")
    }
}

/// Names of the direct children (files and folders) of `dir` in the archive, with whether each is a file: one
/// scan of every entry. For more than one question about an archive, build a [`DirIndex`] once and ask
/// [`DirIndex::children`] (the same answer, without the scan).
pub(crate) fn children(a: &dyn Archive, dir: &str) -> BTreeMap<String, bool> {
    let prefix = if dir.is_empty() { String::new() } else { format!("{}/", dir.trim_end_matches('/')) };
    let mut out = BTreeMap::new();
    for e in a.entries() {
        if let Some(rest) = e.path.strip_prefix(&prefix) {
            if rest.is_empty() {
                continue;
            }
            match rest.split_once('/') {
                Some((first, _)) => {
                    out.insert(first.to_string(), false);
                }
                None => {
                    out.entry(rest.to_string()).or_insert(!e.is_dir);
                }
            }
        }
    }
    out
}

/// Store names of an operator as found on disk: `default` when partition folders hold state files directly, else
/// the join's stores among the partitions' sub-folders, else those sub-folders (other than `_metadata`, `SSTs`,
/// `logs` and hidden ones), as the restart chains name them without operator metadata. Indexes the archive's listing for the call
/// ([`store_names_in`] with an index built once).
pub fn store_names(a: &dyn Archive, root: &str, operator_id: i64) -> Vec<String> {
    store_names_in(a, &DirIndex::build(a.entries()), root, operator_id)
}

/// [`store_names`] through `dirs`, the index of `a`'s entries: the entries under the operator's folder are
/// looked at once each, whatever the number of partitions.
pub fn store_names_in(a: &dyn Archive, dirs: &DirIndex, root: &str, operator_id: i64) -> Vec<String> {
    let mut stores = BTreeSet::new();
    for p in list_partitions_in(a, dirs, root, operator_id) {
        partition_store_names(dirs.children(a.entries(), &store_dir(root, operator_id, p, "default")), &mut stores);
    }
    spark_store_names(stores)
}

/// The stores Spark writes among the names the partition folders show (`found`, [`partition_store_names`]):
/// `default` when some partition holds state files directly (no join writes it), else the join's stores found
/// ([`crate::model::JOIN_STORE_NAMES`]), else what was found. RocksDB's `logs/` and folders named with a leading
/// `_` or `.` are never stores; a folder beside a store's files (`backup/`) is none either (as the restart
/// chains' [`crate::model::Checkpoint::store_names`] judges without operator metadata).
pub(super) fn spark_store_names(found: BTreeSet<String>) -> Vec<String> {
    let found: BTreeSet<String> =
        found.into_iter().filter(|n| n != "logs" && !n.starts_with('_') && !n.starts_with('.')).collect();
    if found.contains("default") {
        return vec!["default".to_string()];
    }
    let joins: Vec<String> =
        crate::model::JOIN_STORE_NAMES.iter().filter(|n| found.contains(**n)).map(|n| n.to_string()).collect();
    if joins.is_empty() {
        found.into_iter().collect()
    } else {
        joins
    }
}

/// Adds the store names one partition folder's children (`kids`) show to `stores` ([`store_names`]).
fn partition_store_names(kids: BTreeMap<String, bool>, stores: &mut BTreeSet<String>) {
    for (name, is_file) in kids {
        if is_file {
            if !name.starts_with('.') {
                stores.insert("default".to_string());
            }
        } else if name != "_metadata" && name != "SSTs" {
            stores.insert(name);
        }
    }
}

/// `Err` with the operator's store names ([`store_names_in`]) when it has some and `store_name` is not one of
/// them. Answered from partition 0 alone when that folder has the store (the usual case: then the store is one
/// of them whatever the other partitions hold), so that a question asked per partition costs the folder of
/// partition 0, not the operator's.
pub(super) fn check_store_name(
    a: &dyn Archive,
    dirs: &DirIndex,
    root: &str,
    operator_id: i64,
    store_name: &str,
) -> Result<(), Vec<String>> {
    let mut first = BTreeSet::new();
    partition_store_names(dirs.children(a.entries(), &store_dir(root, operator_id, 0, "default")), &mut first);
    if first.contains(store_name) {
        return Ok(());
    }
    let known = store_names_in(a, dirs, root, operator_id);
    if !known.is_empty() && !known.iter().any(|k| k == store_name) {
        return Err(known);
    }
    Ok(())
}

/// Checkpoint roots of an archive that hold state: every folder `R` with `R/state/<op>/<partition or _metadata>/…`
/// ("" = the archive top), shortest first.
pub fn find_state_roots(a: &dyn Archive) -> Vec<String> {
    let mut roots = BTreeSet::new();
    for e in a.entries() {
        let segs: Vec<&str> = e.path.split('/').collect();
        for i in 0..segs.len().saturating_sub(2) {
            let numeric = |s: &str| !s.is_empty() && s.bytes().all(|c| c.is_ascii_digit());
            if segs[i] == "state" && numeric(segs[i + 1]) && (numeric(segs[i + 2]) || segs[i + 2] == "_metadata") {
                roots.insert(segs[..i].join("/"));
                break;
            }
        }
    }
    let mut v: Vec<String> = roots.into_iter().collect();
    v.sort_by_key(|r| (r.matches('/').count() + usize::from(!r.is_empty()), r.clone()));
    v
}

/// Batch ids present in `<root>/commits/` (files whose whole name is a batch id, as
/// [`crate::log::parse_batch_file_name`] reads them: `0..=`[`crate::log::MAX_BATCH_ID`]), ascending. Larger
/// names are hand-made files Spark never writes (the diagnosis reports them); they are not batches here, so
/// `batch + 1` (the state version) never overflows.
pub fn committed_batches(a: &dyn Archive, root: &str) -> Vec<i64> {
    let mut v: Vec<i64> = children(a, &join(root, "commits"))
        .into_iter()
        .filter(|(_, is_file)| *is_file)
        .filter_map(|(n, _)| crate::log::parse_batch_file_name(&n, false).map(|(b, _)| b))
        .collect();
    v.sort_unstable();
    v
}

/// The newest file of `<root>/offsets/` (by batch id, as [`committed_batches`] reads names), parsed by the offset
/// log reader; `None` when there is none or it does not parse.
pub fn last_offsets(a: &mut dyn Archive, root: &str) -> Option<crate::log::offsets::OffsetSeq> {
    let dir = join(root, "offsets");
    let batch = children(a, &dir)
        .into_iter()
        .filter(|(_, is_file)| *is_file)
        .filter_map(|(n, _)| crate::log::parse_batch_file_name(&n, false).map(|(b, _)| b))
        .max()?;
    let raw = a.read(&format!("{dir}/{batch}"), 16 << 20).ok()?;
    crate::log::offsets::parse(&raw).ok()
}

/// Partition ids of `state/<op>/` (folders whose name is an integer), ascending. One scan of the listing
/// ([`list_partitions_in`] with an index built once).
pub fn list_partitions(a: &dyn Archive, root: &str, operator_id: i64) -> Vec<u32> {
    partition_ids(children(a, &join(root, &format!("state/{operator_id}"))))
}

/// [`list_partitions`] through `dirs`, the index of `a`'s entries.
pub fn list_partitions_in(a: &dyn Archive, dirs: &DirIndex, root: &str, operator_id: i64) -> Vec<u32> {
    partition_ids(dirs.children(a.entries(), &join(root, &format!("state/{operator_id}"))))
}

/// The partition ids among an operator folder's children, ascending.
fn partition_ids(kids: BTreeMap<String, bool>) -> Vec<u32> {
    let mut v: Vec<u32> = kids
        .into_iter()
        .filter(|(_, is_file)| !*is_file)
        .filter_map(|(n, _)| crate::state_files::spark_id(&n))
        .collect();
    v.sort_unstable();
    v
}

/// Operator ids under `state/` (folders named by an integer as Spark writes it: `spark_id`), ascending.
pub fn list_operators(a: &dyn Archive, root: &str) -> Vec<i64> {
    let mut v: Vec<i64> = children(a, &join(root, "state"))
        .into_iter()
        .filter(|(_, is_file)| !*is_file)
        .filter_map(|(n, _)| crate::state_files::spark_id(&n))
        .collect();
    v.sort_unstable();
    v
}

/// The folder of one store of one partition: `state/<op>/<part>` for `default`, else `state/<op>/<part>/<store>`.
pub fn store_dir(root: &str, operator_id: i64, partition: u32, store_name: &str) -> String {
    if store_name == "default" {
        join(root, &format!("state/{operator_id}/{partition}"))
    } else {
        join(root, &format!("state/{operator_id}/{partition}/{store_name}"))
    }
}

/// Which provider wrote the files directly inside `store_dir`. One scan of the listing ([`detect_provider_in`]
/// with an index built once).
pub fn detect_provider(a: &dyn Archive, store_dir: &str) -> Provider {
    provider_of_children(&children(a, store_dir))
}

/// [`detect_provider`] through `dirs`, the index of `a`'s entries.
pub fn detect_provider_in(a: &dyn Archive, dirs: &DirIndex, store_dir: &str) -> Provider {
    provider_of_children(&dirs.children(a.entries(), store_dir))
}

/// The provider whose files are among a store folder's children.
fn provider_of_children(kids: &BTreeMap<String, bool>) -> Provider {
    let mut hdfs = false;
    let mut rocks = false;
    for (name, is_file) in kids {
        if !is_file {
            rocks |= name == "SSTs";
            continue;
        }
        if name.starts_with('.') {
            continue;
        }
        hdfs |= name.ends_with(".delta") || name.ends_with(".snapshot");
        rocks |= name.ends_with(".zip") || name.ends_with(".changelog");
    }
    match (hdfs, rocks) {
        (true, false) => Provider::Hdfs,
        (false, true) => Provider::RocksDb,
        (true, true) => Provider::Hdfs,
        (false, false) => Provider::Unknown,
    }
}

/// Loads one store of one partition at `version` with the provider found on disk. RocksDB stores are loaded
/// with Spark 4.3's auto snapshot repair unless the checkpoint's offset log turns it off (see
/// [`StateQuery::auto_snapshot_repair`]). Indexes the archive's listing for the call: to load many stores of
/// one archive, build a [`DirIndex`] once and call [`load_raw_store_in`].
pub fn load_raw_store(
    a: &mut dyn Archive,
    store_dir: &str,
    version: i64,
    limits: &StateLimits,
) -> Result<RawStore, StateError> {
    load_raw_store_repair(a, store_dir, version, limits, None)
}

/// [`load_raw_store`] with auto snapshot repair as asked (`None`: as a 4.3 restart would).
pub fn load_raw_store_repair(
    a: &mut dyn Archive,
    store_dir: &str,
    version: i64,
    limits: &StateLimits,
    repair: Option<bool>,
) -> Result<RawStore, StateError> {
    let dirs = DirIndex::build(a.entries());
    load_raw_store_in(a, &dirs, store_dir, version, limits, repair)
}

/// [`load_raw_store_repair`] through `dirs`, the index of `a`'s entries: the store's folder (and, when it holds
/// no state file, its operator's partition folders) is listed from the index, not by a scan of the archive.
pub fn load_raw_store_in(
    a: &mut dyn Archive,
    dirs: &DirIndex,
    store_dir: &str,
    version: i64,
    limits: &StateLimits,
    repair: Option<bool>,
) -> Result<RawStore, StateError> {
    match detect_provider_in(a, dirs, store_dir) {
        Provider::Hdfs => {
            let files = crate::state_files::store_files_in(a.entries(), dirs, store_dir);
            hdfs::load_store_listed(a, store_dir, &files, version, limits)
        }
        Provider::RocksDb => load_rocksdb_store(a, dirs, store_dir, version, limits, repair),
        Provider::Unknown if version > 0 && rocksdb::state_view::sibling_is_rocksdb(a, dirs, store_dir) => {
            load_rocksdb_store(a, dirs, store_dir, version, limits, repair)
        }
        Provider::Unknown => {
            if version == 0 {
                Ok(RawStore::default())
            } else {
                Err(StateError::new(
                    store_dir,
                    format!("no state files for version {version} (folder empty or absent)"),
                )
                .class("CANNOT_LOAD_STATE_STORE.CANNOT_READ_DELTA_FILE_NOT_EXISTS"))
            }
        }
    }
}

/// RocksDB stores are read by [`rocksdb`]: key and value UnsafeRows with the RocksDB prefixes removed.
pub(super) fn load_rocksdb_store(
    a: &mut dyn Archive,
    dirs: &DirIndex,
    store_dir: &str,
    version: i64,
    limits: &StateLimits,
    repair: Option<bool>,
) -> Result<RawStore, StateError> {
    rocksdb::state_view::load_for_state(a, dirs, store_dir, version, limits, repair)
}

/// The key and value schemas of a store: the schema file v1/v2 under partition 0
/// (`state/<op>/0/[<store>/]_metadata/schema`). Errors: a store name the operator's partitions do not have (when
/// they have any; its stores named), a schema file that is missing or does not parse. Indexes the archive's
/// listing for the call ([`store_schemas_in`] with an index built once).
pub fn store_schemas(
    a: &mut dyn Archive,
    root: &str,
    operator_id: i64,
    store_name: &str,
) -> Result<(StructType, StructType), StateError> {
    let dirs = DirIndex::build(a.entries());
    store_schemas_in(a, &dirs, root, operator_id, store_name)
}

/// [`store_schemas`] through `dirs`, the index of `a`'s entries.
pub fn store_schemas_in(
    a: &mut dyn Archive,
    dirs: &DirIndex,
    root: &str,
    operator_id: i64,
    store_name: &str,
) -> Result<(StructType, StructType), StateError> {
    let path = format!("{}/_metadata/schema", store_dir(root, operator_id, 0, store_name));
    if let Err(known) = check_store_name(a, dirs, root, operator_id, store_name) {
        return Err(StateError::new(
            join(root, &format!("state/{operator_id}")),
            format!("operator {operator_id} has no state store named {store_name:?}; its stores: {}", known.join(", ")),
        ));
    }
    let bytes = a.read(&path, 16 << 20).map_err(|e| {
        StateError::new(&path, format!("cannot read the state schema file: {e}"))
            .class("STDS_FAILED_TO_READ_STATE_SCHEMA")
    })?;
    let f = schema::parse_schema_file(&bytes).map_err(|e| {
        StateError::new(&path, e.message.clone()).at(e.offset).class("STDS_FAILED_TO_READ_STATE_SCHEMA")
    })?;
    Ok((f.key, f.value))
}

/// Path of the operator metadata file Spark's state reader uses for an operator: the newest
/// `state/<op>/_metadata/v2/<batchId>` (transformWithState, 4.0+), else `state/<op>/_metadata/metadata` (v1);
/// `None` when neither is in the archive. Mirrors `OperatorStateMetadataReader` and `StateMetadataSource`
/// (apache/spark sql/core/.../execution/streaming/state/OperatorStateMetadata.scala).
pub fn operator_metadata_path(a: &dyn Archive, root: &str, operator_id: i64) -> Option<String> {
    let meta_dir = join(root, &format!("state/{operator_id}/_metadata"));
    let v2 = children(a, &format!("{meta_dir}/v2"));
    metadata_path_of(&meta_dir, v2, |p| a.entries().iter().any(|e| e.path == p))
}

/// [`operator_metadata_path`] through `dirs`, the index of `a`'s entries.
pub fn operator_metadata_path_in(a: &dyn Archive, dirs: &DirIndex, root: &str, operator_id: i64) -> Option<String> {
    let meta_dir = join(root, &format!("state/{operator_id}/_metadata"));
    let v2 = dirs.children(a.entries(), &format!("{meta_dir}/v2"));
    let entries = a.entries();
    metadata_path_of(&meta_dir, v2, |p| dirs.under(entries, p).iter().any(|&i| entries[i as usize].path == p))
}

/// The operator metadata file in `meta_dir` (`state/<op>/_metadata`): the newest of `v2` (the children of
/// `meta_dir/v2`), else `meta_dir/metadata` when `listed` says the archive has it.
fn metadata_path_of(meta_dir: &str, v2: BTreeMap<String, bool>, listed: impl Fn(&str) -> bool) -> Option<String> {
    let latest_v2 = v2
        .into_iter()
        .filter(|(n, f)| *f && !n.is_empty() && n.bytes().all(|c| c.is_ascii_digit()))
        .filter_map(|(n, _)| n.parse::<i64>().ok())
        .max();
    match latest_v2 {
        Some(b) => Some(format!("{meta_dir}/v2/{b}")),
        None => {
            let p = format!("{meta_dir}/metadata");
            listed(&p).then_some(p)
        }
    }
}

/// The operator metadata Spark's state reader uses for an operator ([`operator_metadata_path`]), parsed; `None`
/// when absent or unreadable.
pub(super) fn read_operator_metadata(
    a: &mut dyn Archive,
    root: &str,
    operator_id: i64,
) -> Option<operator_metadata::OperatorMetadata> {
    let path = operator_metadata_path(a, root, operator_id)?;
    let bytes = a.read(&path, 16 << 20).ok()?;
    operator_metadata::parse_operator_metadata(&bytes).ok()
}

/// [`read_operator_metadata`] through `dirs`, the index of `a`'s entries (for a question asked per partition).
pub(super) fn read_operator_metadata_in(
    a: &mut dyn Archive,
    dirs: &DirIndex,
    root: &str,
    operator_id: i64,
) -> Option<operator_metadata::OperatorMetadata> {
    let path = operator_metadata_path_in(a, dirs, root, operator_id)?;
    let bytes = a.read(&path, 16 << 20).ok()?;
    operator_metadata::parse_operator_metadata(&bytes).ok()
}

/// The operator name recorded in the operator metadata (latest v2, else v1), when readable.
pub(super) fn operator_name(a: &mut dyn Archive, root: &str, operator_id: i64) -> Option<String> {
    read_operator_metadata(a, root, operator_id).map(|m| m.operator_name)
}

/// Operator names of transformWithState (`StateDataSource.twsShortNameSeq`).
pub(super) const TWS_OPERATORS: [&str; 3] =
    ["transformWithStateExec", "transformWithStateInPandasExec", "transformWithStateInPySparkExec"];

/// Number of partitions the operator metadata records for an operator (largest over its stores), 0 when there is
/// no readable metadata.
pub fn expected_partitions(a: &mut dyn Archive, root: &str, operator_id: i64) -> i64 {
    read_operator_metadata(a, root, operator_id)
        .map_or(0, |m| m.stores.iter().map(|s| s.num_partitions).max().unwrap_or(0))
}

/// The smallest partition id in `0..expected` with no folder in `parts` (ascending), in O(`parts.len()`) whatever
/// `expected` claims.
pub(super) fn first_missing_partition(parts: &[u32], expected: i64) -> Option<i64> {
    let mut next: i64 = 0;
    for &p in parts {
        let p = i64::from(p);
        if p < next {
            continue;
        }
        if p > next {
            break;
        }
        next += 1;
    }
    (next < expected).then_some(next)
}

/// The last committed batch (highest id in `commits/`), as Spark's reader defaults `batchId` to.
pub fn last_committed_batch(a: &dyn Archive, root: &str) -> Option<i64> {
    committed_batches(a, root).last().copied()
}

/// `e` (a row of `raw`, the store of `store_dir` at `version`, failed to decode) re-pointed at the file the
/// `index`-th pair came from and the record's offset ([`hdfs::locate_key`], [`rocksdb::locate_key`]); unchanged
/// when the file cannot be found. Re-reads the store's files: error path only.
#[allow(clippy::too_many_arguments)]
pub(super) fn at_source(
    a: &mut dyn Archive,
    dirs: &DirIndex,
    store_dir: &str,
    version: i64,
    limits: &StateLimits,
    repair: Option<bool>,
    raw: &RawStore,
    index: usize,
    e: StateError,
) -> StateError {
    let src = match detect_provider_in(a, dirs, store_dir) {
        Provider::Hdfs => raw.pair(index).and_then(|(k, _)| hdfs::locate_key(a, store_dir, version, k, limits)),
        Provider::RocksDb | Provider::Unknown => {
            rocksdb::state_view::locate_pair(a, dirs, store_dir, version, limits, repair, index)
        }
    };
    match src {
        Some(s) => s.annotate(e),
        None => e,
    }
}

pub(super) fn decode_pair(
    raw: &RawStore,
    k: &[u8],
    v: &[u8],
    ks: &StructType,
    vs: &StructType,
    dir: &str,
) -> Result<(Value, Value), StateError> {
    let key = k.get(raw.key_prefix_len..).unwrap_or(&[]);
    let val = v.get(raw.value_prefix_len..).unwrap_or(&[]);
    let kj = unsafe_row::decode_row(key, ks).map_err(|e| {
        StateError::new(dir, format!("key row does not match the key schema {}: {}", ks.simple_string(), e))
            .class("CANNOT_LOAD_STATE_STORE.KEY_ROW_FORMAT_VALIDATION_FAILURE")
    })?;
    let vj = unsafe_row::decode_row(val, vs).map_err(|e| {
        StateError::new(dir, format!("value row does not match the value schema {}: {}", vs.simple_string(), e))
            .class("CANNOT_LOAD_STATE_STORE.VALUE_ROW_FORMAT_VALIDATION_FAILURE")
    })?;
    Ok((kj, vj))
}
