//! Glue between the RocksDB provider and the `statestore` view of [`crate::state`]: loading a store for
//! [`crate::state::load_raw_store`] (unique ids from the commit log, row checksums verified and stripped) and
//! reading transformWithState state variables (virtual column families, `stateVarName`), as Spark's
//! `StatePartitionReader` does for them.

use super::encoding::{self, KeyEncoding};
use super::{LoadLimits, LoadOptions, RawStore as RocksStore, RocksDbError};
use crate::archive::Archive;
use crate::dir_index::DirIndex;
use crate::restart_chain::LoadChain;
use crate::state::schema::{parse_schema_v3_file, ColumnFamilySchema};
use crate::state::{RawStore, StateError, StateLimits};

pub use super::tws::*;

impl From<RocksDbError> for StateError {
    fn from(e: RocksDbError) -> Self {
        StateError {
            path: e.path,
            offset: e.offset,
            message: e.message,
            error_class: e.error_class.map(str::to_string),
        }
    }
}

/// Where a store directory sits: (checkpoint root, operator id, partition, store name).
pub(super) fn locate(store_dir: &str) -> Option<(String, String, usize, String)> {
    let parts: Vec<&str> = store_dir.trim_end_matches('/').split('/').collect();
    // ... state / <op> / <part> [/ <store>]
    for i in (0..parts.len()).rev() {
        if parts[i] != "state" {
            continue;
        }
        let op = parts.get(i + 1)?;
        let part = parts.get(i + 2)?.parse::<usize>().ok()?;
        let store = match parts.len() - i {
            3 => "default".to_string(),
            4 => parts[i + 3].to_string(),
            _ => continue,
        };
        if !op.bytes().all(|c| c.is_ascii_digit()) {
            continue;
        }
        return Some((parts[..i].join("/"), op.to_string(), part, store));
    }
    None
}

/// The position of a store among an operator's stores in the commit log's `stateUniqueIds` arrays.
pub(super) fn store_index(store: &str) -> usize {
    crate::model::JOIN_STORE_NAMES.iter().position(|n| *n == store).unwrap_or(0)
}

/// True when another partition of the same operator and store holds RocksDB files: an empty or missing
/// partition folder of a RocksDB operator is then read (and fails) the way Spark's RocksDB provider does.
/// `dirs`: the index of `a`'s entries.
pub(crate) fn sibling_is_rocksdb(a: &dyn Archive, dirs: &DirIndex, store_dir: &str) -> bool {
    let Some((root, op, part, store)) = locate(store_dir) else { return false };
    let Ok(op_id) = op.parse::<i64>() else { return false };
    crate::state::list_partitions_in(a, dirs, &root, op_id).into_iter().filter(|p| *p as usize != part).any(|p| {
        crate::state::detect_provider_in(a, dirs, &crate::state::store_dir(&root, op_id, p, &store))
            == crate::state::Provider::RocksDb
    })
}

/// Checkpoint format v2: the unique id that `commits/<version - 1>` (`stateUniqueIds`) records for the store in
/// `store_dir` (`<root>/state/<op>/<part>[/<store>]`). `None` when the commit or the id is absent. The commit is
/// read (up to 16 MiB: it lists every partition's ids) and parsed once per read: `dirs` (the index of `a`'s
/// entries) keeps its ids for the other partitions ([`crate::dir_index::LogMemo`]).
pub fn unique_id_from_commit(a: &mut dyn Archive, dirs: &DirIndex, store_dir: &str, version: i64) -> Option<String> {
    let (root, op, part, store) = locate(store_dir)?;
    let path = crate::state::join(&root, &format!("commits/{}", version.checked_sub(1)?));
    let all = dirs.memo().unique_ids(&path, || {
        let raw = a.read(&path, 16 << 20).ok()?;
        let text = std::str::from_utf8(&raw).ok()?;
        let mut json: serde_json::Value = serde_json::from_str(text.lines().nth(1)?).ok()?;
        Some(json.get_mut("stateUniqueIds")?.take())
    });
    let ids = all.as_ref().as_ref()?.get(&op)?.get(part)?.as_array()?;
    let idx = if ids.len() == 1 { 0 } else { store_index(&store) };
    ids.get(idx)?.as_str().map(str::to_string)
}

/// Checks every RocksDB store of the checkpoint at `root` the way a restart loads it: version = last committed
/// batch + 1 (or `version` when given), unique ids from the commit log, Spark 4.3 auto snapshot repair as asked.
/// Returns one entry per store folder (`state/<op>/<part>[/<store>]`) that holds RocksDB files or whose sibling
/// partitions do: [`super::verify_version`]'s summary or the first failure (file + offset + Spark error class).
pub fn verify_rocksdb_stores(
    a: &mut dyn Archive,
    root: &str,
    version: Option<i64>,
    auto_snapshot_repair: bool,
) -> Vec<(String, Result<super::VerifySummary, RocksDbError>)> {
    let Some(version) = version.or_else(|| crate::state::last_committed_batch(a, root).map(|b| b + 1)) else {
        return Vec::new();
    };
    let mut out = Vec::new();
    let dirs = DirIndex::build(a.entries());
    for op in crate::state::list_operators(a, root) {
        let parts = expected_partitions(a, &dirs, root, op);
        // Store names: "default" plus sub-folders of partition folders that hold state files (joins).
        let mut stores: Vec<String> = vec!["default".to_string()];
        for &p in &parts {
            let pdir = crate::state::store_dir(root, op, p, "default");
            for (name, is_file) in dirs.children(a.entries(), &pdir) {
                if !is_file && name != "SSTs" && name != "logs" && !name.starts_with('_') && !stores.contains(&name) {
                    stores.push(name);
                }
            }
        }
        for store in &stores {
            for &p in &parts {
                let dir = crate::state::store_dir(root, op, p, store);
                let provider = crate::state::detect_provider_in(a, &dirs, &dir);
                let is_rocks = provider == crate::state::Provider::RocksDb
                    || (provider == crate::state::Provider::Unknown && sibling_is_rocksdb(a, &dirs, &dir));
                if !is_rocks {
                    continue;
                }
                let unique_id = unique_id_from_commit(a, &dirs, &dir, version);
                let opts = LoadOptions {
                    unique_id,
                    limits: None,
                    auto_snapshot_repair,
                    max_change_file_replay: max_change_file_replay(a, &dirs, root, version.saturating_sub(1)),
                };
                let listed = crate::state_files::store_files_in(a.entries(), &dirs, &dir);
                out.push((dir.clone(), super::verify_version_listed(a, &dir, &listed, version, &opts)));
            }
        }
    }
    out
}

/// The partitions a restart loads for operator `op`: `0..numPartitions` from the operator metadata (v2 latest,
/// else v1), else `spark.sql.shuffle.partitions` of the latest offset log entry, united with the folders on disk
/// (a deleted partition folder is still loaded, and fails, on restart). `dirs`: the index of `a`'s entries.
pub(super) fn expected_partitions(a: &mut dyn Archive, dirs: &DirIndex, root: &str, op: i64) -> Vec<u32> {
    let mut parts = crate::state::list_partitions_in(a, dirs, root, op);
    let mut n = crate::state::expected_partitions(a, root, op);
    if n <= 0 {
        n = crate::state::last_offsets(a, root)
            .and_then(|o| o.metadata)
            .and_then(|m| m.conf.get("spark.sql.shuffle.partitions").and_then(|v| v.trim().parse().ok()))
            .unwrap_or(0);
    }
    if (1..=100_000).contains(&n) {
        for p in 0..n as u32 {
            if !parts.contains(&p) {
                parts.push(p);
            }
        }
        parts.sort_unstable();
    }
    parts
}

/// The conf map of the offset log entry of `batch` (`offsets/<batch>`, second line, `conf`), which Spark's state
/// reader applies over the session conf (`StateDataSource.buildStateStoreConf`). Empty when unreadable.
pub(crate) fn offset_conf(a: &mut dyn Archive, root: &str, batch: i64) -> std::collections::BTreeMap<String, String> {
    let path = crate::state::join(root, &format!("offsets/{batch}"));
    a.read(&path, 16 << 20)
        .ok()
        .and_then(|raw| crate::log::offsets::parse(&raw).ok())
        .and_then(|o| o.metadata)
        .map(|m| m.conf)
        .unwrap_or_default()
}

/// [`offset_conf`] parsed once per read: `dirs` (the index of `a`'s entries) keeps it for the other stores.
fn offset_conf_in(
    a: &mut dyn Archive,
    dirs: &DirIndex,
    root: &str,
    batch: i64,
) -> std::sync::Arc<std::collections::BTreeMap<String, String>> {
    let path = crate::state::join(root, &format!("offsets/{batch}"));
    dirs.memo().conf(&path, || offset_conf(a, root, batch))
}

/// Whether loading a RocksDB store for `batch` applies Spark 4.3's auto snapshot repair: `explicit` when given,
/// else as a restart on the newest Spark does (on by default in 4.3), unless the offset log entry of the batch
/// records `spark.sql.streaming.stateStore.autoSnapshotRepair.enabled=false`. `dirs`: the index of `a`'s entries.
pub(crate) fn auto_repair(
    a: &mut dyn Archive,
    dirs: &DirIndex,
    root: &str,
    batch: i64,
    explicit: Option<bool>,
) -> bool {
    explicit.unwrap_or_else(|| {
        offset_conf_in(a, dirs, root, batch)
            .get("spark.sql.streaming.stateStore.autoSnapshotRepair.enabled")
            .is_none_or(|v| !v.trim().eq_ignore_ascii_case("false"))
    })
}

/// `spark.sql.streaming.stateStore.autoSnapshotRepair.maxChangeFileReplay` as the offset log entry of `batch`
/// records it, if it does. `dirs`: the index of `a`'s entries.
pub(crate) fn max_change_file_replay(a: &mut dyn Archive, dirs: &DirIndex, root: &str, batch: i64) -> Option<i64> {
    offset_conf_in(a, dirs, root, batch)
        .get("spark.sql.streaming.stateStore.autoSnapshotRepair.maxChangeFileReplay")
        .and_then(|v| v.trim().parse().ok())
}

/// Loads the RocksDB store of `store_dir` at `version` as a restart would (its unique id from the commit log,
/// auto snapshot repair as [`auto_repair`] says), the folder listed through `dirs`, the index of `a`'s entries.
pub(super) fn load(
    a: &mut dyn Archive,
    dirs: &DirIndex,
    store_dir: &str,
    version: i64,
    limits: &StateLimits,
    repair: Option<bool>,
) -> Result<RocksStore, StateError> {
    let unique_id = unique_id_from_commit(a, dirs, store_dir, version);
    let l = load_limits(limits);
    let (auto_snapshot_repair, max_change_file_replay) = match locate(store_dir) {
        Some((root, ..)) => (
            auto_repair(a, dirs, &root, version.saturating_sub(1), repair),
            max_change_file_replay(a, dirs, &root, version.saturating_sub(1)),
        ),
        None => (repair.unwrap_or(false), None),
    };
    let opts = LoadOptions { unique_id, limits: Some(l), auto_snapshot_repair, max_change_file_replay };
    let listed = crate::state_files::store_files_in(a.entries(), dirs, store_dir);
    Ok(super::load_store_listed(a, store_dir, &listed, version, &opts)?)
}

/// True when the store's values carry 4.3 row checksums (detected on the values: CRC32C over key + value must
/// match, which ordinary UnsafeRow values never do by chance).
pub(super) fn detect_row_checksums(store: &RocksStore) -> bool {
    store.entries.iter().take(16).any(|(k, v)| encoding::has_row_checksums(k, v))
}

pub(crate) fn row_error(store_dir: &str, what: &str, e: encoding::EncodingError) -> StateError {
    let class = if e.message.contains("checksum mismatch") {
        "STATE_STORE_ROW_CHECKSUM_VERIFICATION_FAILED"
    } else {
        "CANNOT_LOAD_STATE_STORE.UNCATEGORIZED"
    };
    StateError::new(store_dir, format!("{what}: {e}")).class(class)
}

/// Loads a RocksDB store for the `statestore` view: every pair as (key UnsafeRow, value UnsafeRow), with the
/// column family prefix, version byte and row checksum (verified) removed.
///
/// `repair`: auto snapshot repair as asked, `None` = as a 4.3 restart would ([`auto_repair`]). `dirs`: the index
/// of `a`'s entries.
pub(crate) fn load_for_state(
    a: &mut dyn Archive,
    dirs: &DirIndex,
    store_dir: &str,
    version: i64,
    limits: &StateLimits,
    repair: Option<bool>,
) -> Result<RawStore, StateError> {
    let store = load(a, dirs, store_dir, version, limits, repair)?;
    let mut pairs = RawStore::default();
    state_pairs(a, Some(dirs), store_dir, &store, limits, |_, k, v| {
        pairs.push(&k, &v);
        true
    })?;
    Ok(pairs)
}

/// The rows of a store rebuilt from exactly the files of `chain` (a restart chain the read stage planned, paths
/// relative to the checkpoint root; `store`: the store's files as the read stage listed them; `prefix`: the root
/// inside the archive), handed to `f(key row, value row)` as [`load_for_state`] yields them: no planning, no
/// repair, no listing, no copy of the store.
pub(crate) fn for_each_row_of_chain(
    a: &mut dyn Archive,
    store: &crate::state_files::StoreFiles,
    prefix: &str,
    chain: &LoadChain,
    limits: &StateLimits,
    f: impl FnMut(&[u8], &[u8]),
) -> Result<(), StateError> {
    let plan = super::plan::load_plan_in(chain, prefix);
    let loaded = super::load_from_plan_in(a, store, prefix, &plan, chain.version, &load_limits(limits))?;
    for_each_row_of_store(a, store, prefix, &loaded, limits, f)
}

/// [`for_each_row_of_chain`] of a store the caller rebuilt from the chain's files as it read them
/// ([`super::Rebuild`]): the same rows, in the same order, with the same errors; `None` when the rebuild is not
/// complete (the caller executes the chain itself).
pub(crate) fn for_each_row_of_rebuild(
    a: &mut dyn Archive,
    store: &crate::state_files::StoreFiles,
    prefix: &str,
    chain: &LoadChain,
    rebuilt: super::Rebuild,
    limits: &StateLimits,
    f: impl FnMut(&[u8], &[u8]),
) -> Option<Result<(), StateError>> {
    let loaded = rebuilt.finish(a, store, prefix, chain, &load_limits(limits))?;
    Some(for_each_row_of_store(a, store, prefix, &loaded, limits, f))
}

/// The rows of a loaded store (`store`: its files as listed, relative to the root `prefix`) as
/// [`state_pairs`] converts them.
fn for_each_row_of_store(
    a: &mut dyn Archive,
    store: &crate::state_files::StoreFiles,
    prefix: &str,
    loaded: &RocksStore,
    limits: &StateLimits,
    mut f: impl FnMut(&[u8], &[u8]),
) -> Result<(), StateError> {
    state_pairs(a, None, &format!("{prefix}{}", store.dir), loaded, limits, |_, k, v| {
        f(&k, &v);
        true
    })
}

/// Where the `index`-th pair of [`load_for_state`]'s store (same arguments) was written ([`super::locate_key`]):
/// reloads the store and walks it as [`load_for_state`] does. For error paths only.
pub(crate) fn locate_pair(
    a: &mut dyn Archive,
    dirs: &DirIndex,
    store_dir: &str,
    version: i64,
    limits: &StateLimits,
    repair: Option<bool>,
    index: usize,
) -> Option<super::KeySource> {
    let store = load(a, dirs, store_dir, version, limits, repair).ok()?;
    let mut n = 0usize;
    let mut raw_key: Option<Vec<u8>> = None;
    let _ = state_pairs(a, Some(dirs), store_dir, &store, limits, |raw, _, _| {
        if n == index {
            raw_key = Some(raw.to_vec());
            return false;
        }
        n += 1;
        true
    });
    let key = raw_key?;
    super::locate_key(a, store_dir, &store.plan, &key, &load_limits(limits))
}

pub(crate) fn load_limits(limits: &StateLimits) -> LoadLimits {
    LoadLimits {
        max_file_bytes: limits.max_file_bytes,
        max_changelog_bytes: limits.max_decompressed_bytes,
        ..LoadLimits::default()
    }
}

/// A store entry's key and value UnsafeRows.
pub(crate) type KeyValueRows = (Vec<u8>, Vec<u8>);

/// The store's entries as (raw key, key UnsafeRow, value UnsafeRow) in key order, handed to `f` until it returns
/// false. Errors in an entry's framing name the file the entry came from ([`super::locate_key`]). `dirs`: the
/// index of `a`'s entries, for the key schema of a prefix-scan store ([`prefix_key_layout`]); `None`: such a
/// store indexes the listing for the call.
pub(crate) fn state_pairs(
    a: &mut dyn Archive,
    dirs: Option<&DirIndex>,
    store_dir: &str,
    store: &RocksStore,
    limits: &StateLimits,
    mut f: impl FnMut(&[u8], Vec<u8>, Vec<u8>) -> bool,
) -> Result<(), StateError> {
    let checksums = detect_row_checksums(store);
    let cf = store.uses_column_families();
    // Prefix-scan keys (session windows: `[len][0 prefix row][0 remaining row]`, 6 mod 8 bytes long) are joined
    // back into one key row with the key schema, as Spark's reader does; plain keys are 1 mod 8 bytes long.
    let prefix_scan =
        store.entries.keys().next().is_some_and(|k| k.len().saturating_sub(if cf { 2 } else { 0 }) % 8 == 6);
    let var_flags = match (prefix_scan, dirs) {
        (false, _) => None,
        (true, Some(dirs)) => Some(prefix_key_layout(a, dirs, store_dir)?),
        (true, None) => {
            let dirs = DirIndex::build(a.entries());
            Some(prefix_key_layout(a, &dirs, store_dir)?)
        }
    };
    for (k, v) in &store.entries {
        let converted = (|| -> Result<Option<KeyValueRows>, StateError> {
            let vals =
                encoding::split_value(k, v, false, Some(checksums)).map_err(|e| row_error(store_dir, "value", e))?;
            let Some(vr) = vals.first() else { return Ok(None) };
            let key = match &var_flags {
                None => {
                    let kp = encoding::split_key(k, cf, &KeyEncoding::NoPrefix)
                        .map_err(|e| row_error(store_dir, "key", e))?;
                    kp.rows.first().map(|r| r.to_vec()).unwrap_or_default()
                }
                Some(flags) => {
                    let kp = encoding::split_key(k, cf, &KeyEncoding::PrefixScan { num_cols: flags.0.len() })
                        .map_err(|e| row_error(store_dir, "key", e))?;
                    let (Some(p), Some(r)) = (kp.rows.first(), kp.rows.get(1)) else { return Ok(None) };
                    encoding::join_unsafe_rows(p, &flags.0, r, &flags.1).map_err(|e| row_error(store_dir, "key", e))?
                }
            };
            Ok(Some((key, vr.to_vec())))
        })();
        match converted {
            Ok(Some((key, val))) => {
                if !f(k, key, val) {
                    break;
                }
            }
            Ok(None) => {}
            Err(e) => {
                return Err(match super::locate_key(a, store_dir, &store.plan, k, &load_limits(limits)) {
                    Some(src) => src.annotate(e),
                    None => e,
                })
            }
        }
    }
    Ok(())
}

/// For a prefix-scan store: which key fields are variable-length, split into (prefix fields, remaining fields),
/// from the key schema (partition 0's schema file) and `numColsPrefixKey` (operator metadata v1; session windows
/// without metadata (3.5) use every key column but the last as the prefix). `dirs`: the index of `a`'s entries.
pub(crate) fn prefix_key_layout(
    a: &mut dyn Archive,
    dirs: &DirIndex,
    store_dir: &str,
) -> Result<(Vec<bool>, Vec<bool>), StateError> {
    use crate::state::schema::DataType;
    let (root, op, _, store) =
        locate(store_dir).ok_or_else(|| StateError::new(store_dir, "not a state/<op>/<part> folder"))?;
    let op_id: i64 = op.parse().map_err(|_| StateError::new(store_dir, "bad operator id"))?;
    let (ks, _) = crate::state::store_schemas_in(a, dirs, &root, op_id, &store)?;
    let meta_path = crate::state::join(&root, &format!("state/{op}/_metadata/metadata"));
    let from_meta = a.read(&meta_path, 1 << 20).ok().and_then(|raw| {
        let text = String::from_utf8(raw).ok()?;
        let json: serde_json::Value = serde_json::from_str(text.lines().nth(1)?).ok()?;
        json.get("stateStoreInfo")?
            .as_array()?
            .iter()
            .find_map(|s| (s.get("storeName")?.as_str()? == store).then(|| s.get("numColsPrefixKey")?.as_u64())?)
    });
    let n = from_meta.map(|n| n as usize).unwrap_or(ks.fields.len().saturating_sub(1));
    if n == 0 || n >= ks.fields.len() {
        return Err(StateError::new(
            store_dir,
            format!("keys are prefix-scan encoded but the prefix has {n} of {} key columns", ks.fields.len()),
        ));
    }
    let var = |t: &DataType| match t {
        DataType::String
        | DataType::Binary
        | DataType::Struct(_)
        | DataType::Array { .. }
        | DataType::Map { .. }
        | DataType::CalendarInterval
        | DataType::Variant => true,
        DataType::Decimal { precision, .. } => *precision > 18,
        _ => false,
    };
    let flags: Vec<bool> = ks.fields.iter().map(|f| var(&f.data_type)).collect();
    Ok((flags[..n].to_vec(), flags[n..].to_vec()))
}

/// The StateSchemaV3 file for `store` of operator `op` in effect at `batch`: the newest
/// `state/<op>/_stateSchema/<store>/<b>_<uuid>` with `b <= batch`.
pub(super) fn schema_v3(
    a: &mut dyn Archive,
    root: &str,
    op: i64,
    store: &str,
    batch: i64,
) -> Result<Vec<ColumnFamilySchema>, StateError> {
    let dir = crate::state::join(root, &format!("state/{op}/_stateSchema/{store}"));
    let mut best: Option<(i64, String)> = None;
    for e in a.entries() {
        let Some(name) = e.path.strip_prefix(&format!("{dir}/")) else { continue };
        if e.is_dir || name.contains('/') || name.starts_with('.') {
            continue;
        }
        let Some((b, _)) = name.split_once('_') else { continue };
        let Ok(b) = b.parse::<i64>() else { continue };
        if b <= batch && best.as_ref().is_none_or(|(bb, _)| b > *bb) {
            best = Some((b, e.path.clone()));
        }
    }
    let Some((_, path)) = best else {
        return Err(StateError::new(&dir, format!("no state schema file (v3) for batch {batch}"))
            .class("STDS_FAILED_TO_READ_STATE_SCHEMA"));
    };
    let bytes = a.read(&path, 16 << 20).map_err(|e| {
        StateError::new(&path, format!("cannot read the state schema file: {e}"))
            .class("STDS_FAILED_TO_READ_STATE_SCHEMA")
    })?;
    parse_schema_v3_file(&bytes)
        .map_err(|e| StateError::new(&path, e.message.clone()).at(e.offset).class("STDS_FAILED_TO_READ_STATE_SCHEMA"))
}

/// The `operatorPropertiesJson` of the transformWithState operator `op` (operator metadata v2 in effect at
/// `batch`): `{"timeMode":..,"outputMode":..,"stateVariables":[{"stateName","stateVariableType","ttlEnabled"}]}`.
pub(super) fn tws_properties(a: &mut dyn Archive, root: &str, op: i64, batch: i64) -> Option<serde_json::Value> {
    let dir = crate::state::join(root, &format!("state/{op}/_metadata/v2"));
    let mut best: Option<(i64, String)> = None;
    for e in a.entries() {
        let Some(name) = e.path.strip_prefix(&format!("{dir}/")) else { continue };
        let Ok(b) = name.parse::<i64>() else { continue };
        if b <= batch && best.as_ref().is_none_or(|(bb, _)| b > *bb) {
            best = Some((b, e.path.clone()));
        }
    }
    let (_, path) = best?;
    let raw = a.read(&path, 16 << 20).ok()?;
    let text = String::from_utf8(raw).ok()?;
    let json: serde_json::Value = serde_json::from_str(text.lines().nth(1)?).ok()?;
    serde_json::from_str(json.get("operatorPropertiesJson")?.as_str()?).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn store_dirs_are_located() {
        assert_eq!(locate("state/0/2"), Some((String::new(), "0".into(), 2, "default".into())));
        assert_eq!(
            locate("chk/state/1/0/left-keyToNumValues"),
            Some(("chk".into(), "1".into(), 0, "left-keyToNumValues".into()))
        );
        assert_eq!(locate("state/x/0"), None);
    }
}
