//! The `state/` tree listed per operator, partition, store and version (FORMATS.md §1, §8, §11, §13, §14),
//! from file names only: `.delta`, `.snapshot` (HDFS provider), `.zip`, `<v>_<uniqueId>.zip`, `.changelog`,
//! `<v>_<uniqueId>.changelog`, `SSTs/`, `logs/` (RocksDB), schema files, operator metadata, temp files and
//! both kinds of `.crc` sidecars. Nothing is read here.

use std::collections::BTreeMap;

/// A file of the checkpoint, by path relative to the checkpoint root.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileRef {
    /// Path relative to the checkpoint root.
    pub path: String,
    /// Declared size in bytes.
    pub size: u64,
}

/// One versioned state file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct VersionFile {
    /// The state version (batch id + 1).
    pub version: i64,
    /// Checkpoint format v2 unique id (`<v>_<uniqueId>.zip`), when present.
    pub unique_id: Option<String>,
    /// The file.
    pub file: FileRef,
}

/// Files of one state store (`state/<op>/<part>/` for `default`, or `state/<op>/<part>/<storeName>/`).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct StoreFiles {
    /// The store's directory relative to the root.
    pub dir: String,
    /// `<v>.delta` (HDFS).
    pub deltas: BTreeMap<i64, FileRef>,
    /// `<v>.snapshot` (HDFS).
    pub snapshots: BTreeMap<i64, FileRef>,
    /// `<v>.zip` and `<v>_<id>.zip` (RocksDB), several per version possible in format v2.
    pub zips: BTreeMap<i64, Vec<VersionFile>>,
    /// `<v>.changelog` and `<v>_<id>.changelog`.
    pub changelogs: BTreeMap<i64, Vec<VersionFile>>,
    /// `SSTs/*.sst`.
    pub ssts: Vec<FileRef>,
    /// `logs/*` archived WAL files.
    pub wal_logs: Vec<FileRef>,
    /// `_metadata/schema`.
    pub schema: Option<FileRef>,
    /// `.<name>.<uuid>.tmp` temp files.
    pub temp_files: Vec<FileRef>,
    /// Anything else.
    pub other: Vec<FileRef>,
}

impl StoreFiles {
    /// The path of the `<version>_<uniqueId>.changelog` whose id is `unique_id` (state checkpoint format v2: the
    /// changelog a restart loads for that version, which names its lineage), if listed.
    pub fn changelog_with_id(&self, version: i64, unique_id: &str) -> Option<&str> {
        self.changelogs
            .get(&version)?
            .iter()
            .find(|f| f.unique_id.as_deref() == Some(unique_id))
            .map(|f| f.file.path.as_str())
    }

    /// True when the store has no state file at all.
    pub fn is_empty(&self) -> bool {
        self.deltas.is_empty() && self.snapshots.is_empty() && self.zips.is_empty() && self.changelogs.is_empty()
    }
    /// Highest version with any file.
    pub fn latest_version(&self) -> Option<i64> {
        [
            self.deltas.keys().next_back(),
            self.snapshots.keys().next_back(),
            self.zips.keys().next_back(),
            self.changelogs.keys().next_back(),
        ]
        .into_iter()
        .flatten()
        .max()
        .copied()
    }
    /// Every file of the store except its schema file and temp files: state files by version, `SSTs/`, `logs/`,
    /// then anything else.
    pub fn all_files(&self) -> impl Iterator<Item = &FileRef> {
        self.deltas
            .values()
            .chain(self.snapshots.values())
            .chain(self.zips.values().flatten().map(|f| &f.file))
            .chain(self.changelogs.values().flatten().map(|f| &f.file))
            .chain(self.ssts.iter())
            .chain(self.wal_logs.iter())
            .chain(self.other.iter())
    }
    /// `hdfs`, `rocksdb` or `unknown` from the files present.
    pub fn provider(&self) -> &'static str {
        if !self.zips.is_empty() || !self.changelogs.is_empty() || !self.ssts.is_empty() {
            "rocksdb"
        } else if !self.deltas.is_empty() || !self.snapshots.is_empty() {
            "hdfs"
        } else {
            "unknown"
        }
    }
}

/// One partition directory `state/<op>/<part>/`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PartitionFiles {
    /// The partition id.
    pub partition: u32,
    /// Stores by name (`default` for files directly in the partition directory).
    pub stores: BTreeMap<String, StoreFiles>,
}

/// One operator directory `state/<op>/`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct OperatorFiles {
    /// The operator id.
    pub operator_id: i64,
    /// Partition directories by id.
    pub partitions: BTreeMap<u32, PartitionFiles>,
    /// `_metadata/metadata` (operator metadata v1).
    pub metadata_v1: Option<FileRef>,
    /// `_metadata/v2/<batchId>` (operator metadata v2) by batch id.
    pub metadata_v2: BTreeMap<i64, FileRef>,
    /// `_stateSchema/<store>/<batch>_<uuid>` schema files (v3).
    pub schema_v3: Vec<FileRef>,
    /// Other entries directly under `state/<op>/`.
    pub other: Vec<FileRef>,
}

/// The whole `state/` tree.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct StateTree {
    /// True when any entry under `state/` exists (file or folder).
    pub present: bool,
    /// Operators by id.
    pub operators: BTreeMap<i64, OperatorFiles>,
    /// Entries under `state/` that are not an operator directory.
    pub other: Vec<FileRef>,
}

/// Ids missing from a set of ids taken from folder names, found by walking the gaps between the ids on disk
/// (never a walk over `0..max`: a folder named `4000000000` costs nothing): the first `keep` missing ids in
/// `0..end` (ascending) and how many are missing in all.
pub fn missing_ids<I>(on_disk: I, end: u64, keep: usize) -> (Vec<u64>, u64)
where
    I: IntoIterator<Item = u64>,
{
    let mut first = Vec::new();
    let mut count: u64 = 0;
    let mut next: u64 = 0;
    let mut gap = |from: u64, to: u64, first: &mut Vec<u64>| {
        // `from..to` are missing.
        if to > from {
            count = count.saturating_add(to - from);
            let room = keep.saturating_sub(first.len()) as u64;
            first.extend(from..from.saturating_add(room.min(to - from)));
        }
    };
    for id in on_disk {
        if id >= end {
            break;
        }
        if id >= next {
            gap(next, id, &mut first);
            next = id + 1;
        }
    }
    gap(next, end, &mut first);
    (first, count)
}

/// Parses a state folder or file name that Spark writes from an integer (`state/<operatorId>/<partitionId>`,
/// `<version>.delta`): the decimal text Scala's `toString` gives, ASCII digits without a sign or a leading zero.
/// Spark builds the paths it loads from the numbers (`StateStoreId.storeCheckpointLocation`,
/// `HDFSBackedStateStoreProvider.deltaFile`, `RocksDBFileManager.dfsBatchZipFile`), so `01`, `+1` or `0012` are
/// never what a restart reads: such a name is another folder or file, not an alias of `1` or `12`.
pub fn spark_id<T: std::str::FromStr>(name: &str) -> Option<T> {
    let canonical =
        !name.is_empty() && name.bytes().all(|b| b.is_ascii_digit()) && (name == "0" || !name.starts_with('0'));
    if canonical {
        name.parse().ok()
    } else {
        None
    }
}

/// Splits `<v>` or `<v>_<uniqueId>` (the stem before `.zip` / `.changelog`); `<v>` as Spark writes it
/// ([`spark_id`]).
pub fn parse_versioned_stem(stem: &str) -> Option<(i64, Option<String>)> {
    versioned_stem(stem, true)
}

/// [`parse_versioned_stem`]; with `canonical` false, `<v>` may also have leading zeros (`0011`), as
/// `RocksDBFileManager.getLatestSnapshotVersion` reads the `*.zip` names it lists (`toLong`): there a `0011.zip`
/// counts as snapshot 11, whose load then opens `11.zip`.
fn versioned_stem(stem: &str, canonical: bool) -> Option<(i64, Option<String>)> {
    let (v, id) = match stem.split_once('_') {
        Some((v, id)) if !id.is_empty() => (v, Some(id.to_string())),
        Some(_) => return None,
        None => (stem, None),
    };
    let n = if canonical {
        spark_id::<i64>(v)
    } else {
        Some(v).filter(|v| !v.is_empty() && v.bytes().all(|b| b.is_ascii_digit())).and_then(|v| v.parse::<i64>().ok())
    };
    n.filter(|n| *n <= crate::log::MAX_BATCH_ID).map(|n| (n, id))
}

/// True for `.<name>.<uuid>.tmp` (CheckpointFileManager temp files) and other `*.tmp` leftovers.
pub fn is_temp_file(name: &str) -> bool {
    name.ends_with(".tmp") && name.starts_with('.')
}

/// The `state/` tree of the checkpoint at `root` (an archive folder, `""` = the top) from the archive's entries;
/// paths in it are relative to `root`.
pub fn list_state_in(entries: &[crate::archive::Entry], root: &str) -> StateTree {
    let r = root.trim_matches('/');
    let prefix = if r.is_empty() { String::new() } else { format!("{r}/") };
    let listing: Vec<(String, u64, bool)> = entries
        .iter()
        .filter_map(|e| {
            e.path.strip_prefix(&prefix).filter(|rel| !rel.is_empty()).map(|rel| (rel.to_string(), e.size, e.is_dir))
        })
        .collect();
    list_state(&listing)
}

/// Builds the tree from the checkpoint's entries (`(relative path, size, is_dir)`), ignoring sidecars.
pub fn list_state(entries: &[(String, u64, bool)]) -> StateTree {
    list_state_of(entries.iter().map(|(p, s, d)| (p.as_str(), *s, *d)))
}

/// [`list_state`] over borrowed entries (the listing stage passes the archive's paths without copying them).
pub fn list_state_of<'a>(entries: impl IntoIterator<Item = (&'a str, u64, bool)>) -> StateTree {
    let mut tree = StateTree::default();
    for (path, size, is_dir) in entries {
        let (size, is_dir) = (&size, &is_dir);
        let Some(rest) = path.strip_prefix("state/").or_else(|| (path == "state").then_some("")) else {
            continue;
        };
        tree.present = true;
        if rest.is_empty() {
            continue;
        }
        let parts: Vec<&str> = rest.split('/').collect();
        let fref = FileRef { path: path.to_string(), size: *size };
        let Some(op_id) = spark_id::<i64>(parts[0]) else {
            if !is_dir {
                tree.other.push(fref);
            }
            continue;
        };
        let op =
            tree.operators.entry(op_id).or_insert_with(|| OperatorFiles { operator_id: op_id, ..Default::default() });
        if parts.len() == 1 {
            continue;
        }
        if let Some(part) = spark_id::<u32>(parts[1]) {
            let pf =
                op.partitions.entry(part).or_insert_with(|| PartitionFiles { partition: part, ..Default::default() });
            if parts.len() == 2 {
                continue;
            }
            let (store_name, inner): (&str, &[&str]) = match parts[2] {
                "SSTs" | "logs" | "_metadata" => ("default", &parts[2..]),
                p if parts.len() == 3 => {
                    if *is_dir {
                        (p, &parts[3..])
                    } else {
                        ("default", &parts[2..])
                    }
                }
                p => (p, &parts[3..]),
            };
            if !pf.stores.contains_key(store_name) {
                let dir = if store_name == "default" && inner.len() == parts.len() - 2 {
                    format!("state/{}/{}", parts[0], parts[1])
                } else {
                    format!("state/{}/{}/{}", parts[0], parts[1], store_name)
                };
                pf.stores.insert(store_name.to_string(), StoreFiles { dir, ..Default::default() });
            }
            let Some(store) = pf.stores.get_mut(store_name) else {
                continue;
            };
            if *is_dir || inner.is_empty() {
                continue;
            }
            classify_store_file(store, inner, fref);
        } else if !is_dir {
            match parts[1] {
                "_metadata" if parts.len() == 3 && parts[2] == "metadata" => op.metadata_v1 = Some(fref),
                "_metadata" if parts.len() == 4 && parts[2] == "v2" => {
                    if let Ok(b) = parts[3].parse::<i64>() {
                        op.metadata_v2.insert(b, fref);
                    } else {
                        op.other.push(fref);
                    }
                }
                "_stateSchema" => {
                    let name = parts.last().copied().unwrap_or("");
                    if name.starts_with('.') || name.ends_with(".crc") {
                        continue;
                    }
                    op.schema_v3.push(fref)
                }
                _ => {
                    let name = parts.last().copied().unwrap_or("");
                    if !name.ends_with(".crc") {
                        op.other.push(fref)
                    }
                }
            }
        }
    }
    tree
}

fn classify_store_file(store: &mut StoreFiles, inner: &[&str], fref: FileRef) {
    let name = inner.last().copied().unwrap_or("");
    if inner.len() == 2 && inner[0] == "SSTs" {
        if !name.starts_with('.') && !name.ends_with(".crc") {
            store.ssts.push(fref);
        }
        return;
    }
    if inner.len() == 2 && inner[0] == "logs" {
        if !name.starts_with('.') && !name.ends_with(".crc") {
            store.wal_logs.push(fref);
        }
        return;
    }
    if inner.len() == 2 && inner[0] == "_metadata" && name == "schema" {
        store.schema = Some(fref);
        return;
    }
    if inner.len() != 1 {
        if !name.ends_with(".crc") {
            store.other.push(fref);
        }
        return;
    }
    if is_temp_file(name) {
        store.temp_files.push(fref);
        return;
    }
    if name.ends_with(".crc") {
        return; // sidecars are handled by the checksum pass
    }
    use crate::restart_chain::ChainFileKind as K;
    match parse_state_file_name(name) {
        Some(StateFileName { version: v, kind: K::Delta, .. }) => {
            store.deltas.insert(v, fref);
        }
        Some(StateFileName { version: v, kind: K::Snapshot, .. }) => {
            store.snapshots.insert(v, fref);
        }
        Some(StateFileName { version: v, unique_id, kind: K::Zip }) => {
            store.zips.entry(v).or_default().push(VersionFile { version: v, unique_id, file: fref });
        }
        Some(StateFileName { version: v, unique_id, kind: K::Changelog }) => {
            store.changelogs.entry(v).or_default().push(VersionFile { version: v, unique_id, file: fref });
        }
        None => store.other.push(fref),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn e(p: &str) -> (String, u64, bool) {
        (p.to_string(), 1, false)
    }

    /// Spark loads `<v>.delta`, `<v>.snapshot` and `<v>.changelog` by names it builds from `v`; RocksDB's
    /// `getLatestSnapshotVersion` reads the `*.zip` names it lists with `toLong` (leading zeros included).
    #[test]
    fn state_file_names_as_spark_reads_them() {
        use crate::restart_chain::ChainFileKind as K;
        let v = |n: &str| parse_state_file_name(n).map(|f| (f.version, f.kind));
        assert_eq!(v("12.delta"), Some((12, K::Delta)));
        assert_eq!(v("0.snapshot"), Some((0, K::Snapshot)));
        for n in ["012.delta", "+12.delta", "0012.snapshot", "012.changelog", "-1.delta", "1_2.delta"] {
            assert_eq!(v(n), None, "{n}");
        }
        assert_eq!(v("0011.zip"), Some((11, K::Zip)));
        assert_eq!(v("11_ab.zip"), Some((11, K::Zip)));
        assert_eq!(v("+11.zip"), None);
        assert_eq!((spark_id::<u32>("0"), spark_id::<u32>("00"), spark_id::<u32>("7")), (Some(0), None, Some(7)));
    }

    #[test]
    fn lists_hdfs_rocksdb_and_join_stores() {
        let t = list_state(&[
            e("state/0/_metadata/metadata"),
            e("state/0/0/1.delta"),
            e("state/0/0/.1.delta.crc"),
            e("state/0/0/2.snapshot"),
            e("state/0/0/_metadata/schema"),
            e("state/0/1/left-keyToNumValues/3.delta"),
            e("state/1/0/4_ab-cd.zip"),
            e("state/1/0/5.changelog"),
            e("state/1/0/SSTs/000008-x.sst"),
            e("state/1/0/.5.changelog.abc.tmp"),
            e("state/1/_metadata/v2/0"),
        ]);
        assert!(t.present);
        let op0 = &t.operators[&0];
        assert!(op0.metadata_v1.is_some());
        let s = &op0.partitions[&0].stores["default"];
        assert_eq!(s.dir, "state/0/0");
        assert!(s.deltas.contains_key(&1) && s.snapshots.contains_key(&2) && s.schema.is_some());
        let j = &op0.partitions[&1].stores["left-keyToNumValues"];
        assert_eq!(j.dir, "state/0/1/left-keyToNumValues");
        assert!(j.deltas.contains_key(&3));
        let r = &t.operators[&1].partitions[&0].stores["default"];
        assert_eq!(r.zips[&4][0].unique_id.as_deref(), Some("ab-cd"));
        assert!(r.changelogs.contains_key(&5));
        assert_eq!(r.ssts.len(), 1);
        assert_eq!(r.temp_files.len(), 1);
        assert_eq!(r.provider(), "rocksdb");
        assert_eq!(t.operators[&1].metadata_v2.len(), 1);
    }
}

/// The files of one store folder of an archive (`store_dir` is an archive path such as `state/0/1` or
/// `root/state/0/1/left-keyToNumValues`; [`FileRef::path`]s are archive paths), classified as [`list_state`]
/// does: what the State Data Source loaders plan from. One pass over the listing.
pub fn store_files(entries: &[crate::archive::Entry], store_dir: &str) -> StoreFiles {
    store_files_of(entries.iter(), store_dir)
}

/// [`store_files`] through an index of `entries` built once ([`crate::dir_index::DirIndex`], from these very
/// entries): the same answer, at the cost of the entries under the folder (and sorting their positions back
/// into listing order, the order [`store_files`] classifies them in), not of the whole listing.
pub fn store_files_in(
    entries: &[crate::archive::Entry],
    dirs: &crate::dir_index::DirIndex,
    store_dir: &str,
) -> StoreFiles {
    let dir = store_dir.trim_end_matches('/');
    let prefix = if dir.is_empty() { String::new() } else { format!("{dir}/") };
    let mut under = dirs.under(entries, &prefix).to_vec();
    under.sort_unstable();
    store_files_of(under.iter().filter_map(|&i| entries.get(i as usize)), store_dir)
}

/// [`store_files`] over `entries` (some of a listing, in listing order: those outside the folder are skipped).
fn store_files_of<'e>(entries: impl Iterator<Item = &'e crate::archive::Entry>, store_dir: &str) -> StoreFiles {
    let dir = store_dir.trim_end_matches('/');
    let prefix = if dir.is_empty() { String::new() } else { format!("{dir}/") };
    let mut store = StoreFiles { dir: dir.to_string(), ..Default::default() };
    for e in entries {
        if e.is_dir {
            continue;
        }
        let Some(rel) = e.path.strip_prefix(&prefix) else { continue };
        if rel.is_empty() {
            continue;
        }
        let inner: Vec<&str> = rel.split('/').collect();
        classify_store_file(&mut store, &inner, FileRef { path: e.path.clone(), size: e.size });
    }
    store
}

/// A state file name of a store folder: `<v>.delta`, `<v>.snapshot` (HDFS provider), `<v>[_<uniqueId>].zip`,
/// `<v>[_<uniqueId>].changelog` (RocksDB; the unique id with checkpoint format v2).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StateFileName {
    /// The state version.
    pub version: i64,
    /// Checkpoint format v2 unique id.
    pub unique_id: Option<String>,
    /// Which file it is.
    pub kind: crate::restart_chain::ChainFileKind,
}

/// The one parser of state file names (see [`StateFileName`]); `None` for anything else (sidecars, temp files,
/// `SSTs/`, a version over [`crate::log::MAX_BATCH_ID`], an id on a `.delta`/`.snapshot`).
pub fn parse_state_file_name(name: &str) -> Option<StateFileName> {
    use crate::restart_chain::ChainFileKind as K;
    let (stem, kind) =
        [(".delta", K::Delta), (".snapshot", K::Snapshot), (".zip", K::Zip), (".changelog", K::Changelog)]
            .into_iter()
            .find_map(|(suffix, k)| name.strip_suffix(suffix).map(|s| (s, k)))?;
    let (version, unique_id) = versioned_stem(stem, kind != K::Zip)?;
    if unique_id.is_some() && matches!(kind, K::Delta | K::Snapshot) {
        return None;
    }
    Some(StateFileName { version, unique_id, kind })
}
