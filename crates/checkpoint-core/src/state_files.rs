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

/// Splits `<v>` or `<v>_<uniqueId>` (the stem before `.zip` / `.changelog`).
pub fn parse_versioned_stem(stem: &str) -> Option<(i64, Option<String>)> {
    let (v, id) = match stem.split_once('_') {
        Some((v, id)) if !id.is_empty() => (v, Some(id.to_string())),
        Some(_) => return None,
        None => (stem, None),
    };
    if v.is_empty() || !v.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    v.parse::<i64>().ok().filter(|n| *n <= crate::log::MAX_BATCH_ID).map(|n| (n, id))
}

/// True for `.<name>.<uuid>.tmp` (CheckpointFileManager temp files) and other `*.tmp` leftovers.
pub fn is_temp_file(name: &str) -> bool {
    name.ends_with(".tmp") && name.starts_with('.')
}

/// Builds the tree from the checkpoint's entries (`(relative path, size, is_dir)`), ignoring sidecars.
pub fn list_state(entries: &[(String, u64, bool)]) -> StateTree {
    let mut tree = StateTree::default();
    for (path, size, is_dir) in entries {
        let Some(rest) = path.strip_prefix("state/").or_else(|| (path == "state").then_some("")) else {
            continue;
        };
        tree.present = true;
        if rest.is_empty() {
            continue;
        }
        let parts: Vec<&str> = rest.split('/').collect();
        let fref = FileRef { path: path.clone(), size: *size };
        let Ok(op_id) = parts[0].parse::<i64>() else {
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
        if let Ok(part) = parts[1].parse::<u32>() {
            let pf =
                op.partitions.entry(part).or_insert_with(|| PartitionFiles { partition: part, ..Default::default() });
            if parts.len() == 2 {
                continue;
            }
            let (store_name, inner): (String, &[&str]) = match parts[2] {
                "SSTs" | "logs" | "_metadata" => ("default".into(), &parts[2..]),
                p if parts.len() == 3 => {
                    if *is_dir {
                        (p.to_string(), &parts[3..])
                    } else {
                        ("default".into(), &parts[2..])
                    }
                }
                p => (p.to_string(), &parts[3..]),
            };
            let dir = if store_name == "default" && inner.len() == parts.len() - 2 {
                format!("state/{}/{}", parts[0], parts[1])
            } else {
                format!("state/{}/{}/{}", parts[0], parts[1], store_name)
            };
            let store = pf.stores.entry(store_name).or_insert_with(|| StoreFiles { dir, ..Default::default() });
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
    let version = |s: &str| parse_versioned_stem(s).filter(|(_, id)| id.is_none()).map(|(v, _)| v);
    if let Some(v) = name.strip_suffix(".delta").and_then(version) {
        store.deltas.insert(v, fref);
    } else if let Some(v) = name.strip_suffix(".snapshot").and_then(version) {
        store.snapshots.insert(v, fref);
    } else if let Some((v, id)) = name.strip_suffix(".zip").and_then(parse_versioned_stem) {
        store.zips.entry(v).or_default().push(VersionFile { version: v, unique_id: id, file: fref });
    } else if let Some((v, id)) = name.strip_suffix(".changelog").and_then(parse_versioned_stem) {
        store.changelogs.entry(v).or_default().push(VersionFile { version: v, unique_id: id, file: fref });
    } else {
        store.other.push(fref);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn e(p: &str) -> (String, u64, bool) {
        (p.to_string(), 1, false)
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

/// The kind of a file in a state load chain.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ChainFileKind {
    /// HDFS `<v>.snapshot`.
    Snapshot,
    /// HDFS `<v>.delta`.
    Delta,
    /// RocksDB `<v>[_<id>].zip`.
    Zip,
    /// RocksDB `<v>[_<id>].changelog`.
    Changelog,
}

/// One file a state load reads (or would read, when `present` is false).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ChainStep {
    /// State version of the file.
    pub version: i64,
    /// Kind of file.
    pub kind: ChainFileKind,
    /// Path relative to the root (for a missing file, the path Spark looks for).
    pub path: String,
}

/// The files Spark reads to load one version of one store, in read order, and where it stops.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct LoadChain {
    /// The version loaded.
    pub version: i64,
    /// Files read, base first.
    pub steps: Vec<ChainStep>,
    /// The first file Spark needs that is absent (it fails there).
    pub missing: Option<ChainStep>,
    /// Checkpoint format v2: no snapshot zip reachable through the changelog lineage
    /// (`CANNOT_LOAD_STATE_STORE.CANNOT_FIND_BASE_SNAPSHOT_CHECKPOINT`).
    pub base_not_found: bool,
}

/// Computes the load chain of `version` for a store, like Spark's providers:
/// HDFS (`HDFSBackedStateStoreProvider.loadMap`): `V.snapshot`, else the newest snapshot `S < V` (or
/// nothing) and deltas `S+1..V` in order, failing at the first missing delta. RocksDB
/// (`RocksDBFileManager`): the newest zip `S <= V` and changelogs `S+1..V`, failing at the first missing
/// changelog; with checkpoint format v2 (`unique_id` from the commit log), `V_<id>.zip`, else
/// `V_<id>.changelog` and the changelogs below it down to a zip (`lineage`, when known from the
/// changelog header, restricts which versions and ids qualify). Snapshots/zips whose version is in
/// `skip` (known corrupt, for 4.3's auto snapshot repair) are passed over.
pub fn load_chain(
    store: &StoreFiles,
    version: i64,
    provider: &str,
    unique_id: Option<&str>,
    lineage: Option<&[(i64, String)]>,
    skip: &[i64],
) -> LoadChain {
    let mut chain = LoadChain { version, ..Default::default() };
    if version <= 0 {
        return chain;
    }
    let dir = &store.dir;
    if provider == "hdfs" {
        // The plan is the HDFS reader's (`crate::state::hdfs::load_plan`); snapshots in `skip` are left out.
        let files = crate::state::hdfs::StoreFiles {
            deltas: store.deltas.keys().copied().collect(),
            snapshots: store.snapshots.keys().copied().filter(|v| !skip.contains(v)).collect(),
        };
        // `load_plan` lists every delta version after the snapshot; a hand-edited huge batch id would make
        // that list huge, and then some delta is certainly missing: cap the range at what can exist.
        let base = files.snapshots.iter().copied().filter(|s| *s <= version && *s > 0).max().unwrap_or(0);
        let cap = base.saturating_add(files.deltas.len() as i64 + 1).min(version);
        let (snap, deltas) = crate::state::hdfs::load_plan(&files, cap);
        let deltas: Vec<i64> = if cap < version { deltas.into_iter().chain([cap + 1]).collect() } else { deltas };
        if let Some(base) = snap {
            if let Some(f) = store.snapshots.get(&base) {
                chain.steps.push(ChainStep { version: base, kind: ChainFileKind::Snapshot, path: f.path.clone() });
            }
        }
        for d in deltas {
            match store.deltas.get(&d) {
                Some(f) => chain.steps.push(ChainStep { version: d, kind: ChainFileKind::Delta, path: f.path.clone() }),
                None => {
                    chain.missing =
                        Some(ChainStep { version: d, kind: ChainFileKind::Delta, path: format!("{dir}/{d}.delta") });
                    break;
                }
            }
        }
        return chain;
    }
    // RocksDB.
    let pick = |m: &BTreeMap<i64, Vec<VersionFile>>, v: i64, id: Option<&str>| -> Option<VersionFile> {
        let files = m.get(&v)?;
        match id {
            Some(id) => files.iter().find(|f| f.unique_id.as_deref() == Some(id)).cloned(),
            None => files.iter().find(|f| f.unique_id.is_none()).or_else(|| files.first()).cloned(),
        }
    };
    if let Some(uid) = unique_id {
        if !skip.contains(&version) {
            if let Some(z) = pick(&store.zips, version, Some(uid)) {
                chain.steps.push(ChainStep { version, kind: ChainFileKind::Zip, path: z.file.path });
                return chain;
            }
        }
        let Some(top) = pick(&store.changelogs, version, Some(uid)) else {
            chain.missing = Some(ChainStep {
                version,
                kind: ChainFileKind::Changelog,
                path: format!("{dir}/{version}_{uid}.changelog"),
            });
            return chain;
        };
        let mut rev = vec![ChainStep { version, kind: ChainFileKind::Changelog, path: top.file.path }];
        let mut v = version - 1;
        loop {
            if v <= 0 {
                break;
            }
            let want: Option<&str> = lineage.and_then(|l| l.iter().find(|(lv, _)| *lv == v).map(|(_, id)| id.as_str()));
            let in_lineage = lineage.map(|l| l.iter().any(|(lv, _)| *lv == v)).unwrap_or(true);
            if in_lineage && !skip.contains(&v) {
                if let Some(z) = pick(&store.zips, v, want) {
                    rev.push(ChainStep { version: v, kind: ChainFileKind::Zip, path: z.file.path });
                    break;
                }
            }
            if !in_lineage {
                chain.base_not_found = true;
                break;
            }
            match pick(&store.changelogs, v, want) {
                Some(c) => rev.push(ChainStep { version: v, kind: ChainFileKind::Changelog, path: c.file.path }),
                None => {
                    chain.base_not_found = true;
                    break;
                }
            }
            v -= 1;
        }
        rev.reverse();
        chain.steps = rev;
        return chain;
    }
    let base = store.zips.range(..=version).rev().map(|(v, _)| *v).find(|v| !skip.contains(v)).unwrap_or(0);
    if base > 0 {
        if let Some(z) = pick(&store.zips, base, None) {
            chain.steps.push(ChainStep { version: base, kind: ChainFileKind::Zip, path: z.file.path });
        }
        if base == version {
            return chain;
        }
    }
    for c in (base + 1)..=version {
        match pick(&store.changelogs, c, None) {
            Some(f) => chain.steps.push(ChainStep { version: c, kind: ChainFileKind::Changelog, path: f.file.path }),
            None => {
                chain.missing = Some(ChainStep {
                    version: c,
                    kind: ChainFileKind::Changelog,
                    path: format!("{dir}/{c}.changelog"),
                });
                break;
            }
        }
    }
    chain
}

#[cfg(test)]
mod chain_tests {
    use super::*;

    fn store(files: &[&str]) -> StoreFiles {
        let entries: Vec<(String, u64, bool)> = files.iter().map(|f| (format!("state/0/0/{f}"), 1, false)).collect();
        list_state(&entries).operators[&0].partitions[&0].stores["default"].clone()
    }

    #[test]
    fn hdfs_chain() {
        let s = store(&["1.delta", "2.delta", "3.delta", "3.snapshot", "4.delta", "6.delta"]);
        let c = load_chain(&s, 5, "hdfs", None, None, &[]);
        assert_eq!(c.steps.iter().map(|s| s.version).collect::<Vec<_>>(), vec![3, 4]);
        assert_eq!(c.missing.unwrap().path, "state/0/0/5.delta");
        let c = load_chain(&s, 3, "hdfs", None, None, &[]);
        assert_eq!(c.steps[0].kind, ChainFileKind::Snapshot);
        let c = load_chain(&s, 4, "hdfs", None, None, &[3]);
        assert_eq!(c.steps.len(), 4);
        assert!(c.missing.is_none());
    }

    #[test]
    fn rocksdb_chains() {
        let s = store(&["2.zip", "3.changelog", "5.changelog"]);
        let c = load_chain(&s, 5, "rocksdb", None, None, &[]);
        assert_eq!(c.missing.unwrap().path, "state/0/0/4.changelog");
        let s = store(&["6_a.zip", "7_b.changelog", "8_c.changelog", "8_c.zip"]);
        let c = load_chain(&s, 8, "rocksdb", Some("c"), None, &[]);
        assert_eq!(c.steps.len(), 1);
        let c = load_chain(&s, 8, "rocksdb", Some("c"), None, &[8]);
        assert_eq!(c.steps.iter().map(|s| s.version).collect::<Vec<_>>(), vec![6, 7, 8]);
        let s = store(&["2_a.zip", "4_b.changelog", "5_c.changelog"]);
        assert!(load_chain(&s, 5, "rocksdb", Some("c"), None, &[]).base_not_found);
    }
}
