//! The one restart-chain planner: for a store and a state version, exactly which files a restart loads, in read
//! order, and where it stops (FORMATS.md §8, §11, §14): the HDFS provider's snapshot and deltas, the RocksDB
//! provider's zip and changelogs, the checkpoint format v2 lineage, and Spark 4.2+'s auto snapshot repair (known
//! damaged snapshots passed over). Pure: it plans from a listing ([`StoreFiles`]); the read stage, the checks
//! and the State Data Source loaders ([`crate::state::hdfs`], [`crate::state::rocksdb`]) execute its chains.
//!
//! The Spark release and the confs the restart runs with are explicit inputs ([`PlanInput`]), so per-release
//! differences live here.

use crate::state_files::{StoreFiles, VersionFile};
use crate::SparkVersion;
use std::collections::BTreeMap;

/// What a plan depends on besides the listing.
#[derive(Debug, Clone, Copy)]
pub struct PlanInput<'a> {
    /// The Spark release that restarts (the chain rules are the same from 3.5 to 4.3 today; 4.3 adds
    /// [`PlanInput::repairs_snapshots`]).
    pub release: SparkVersion,
    /// The confs of the restarted query (recorded in the offset log, then the session's).
    pub conf: Option<&'a BTreeMap<String, String>>,
    /// `hdfs` or `rocksdb` (see [`crate::model::Checkpoint::operator_provider`]).
    pub provider: &'a str,
    /// Checkpoint format v2: the unique id of the version loaded (commit log `stateUniqueIds`).
    pub unique_id: Option<&'a str>,
    /// Checkpoint format v2: the lineage `(version, uniqueId)` from the header of the loaded version's
    /// changelog, when known; it restricts which versions and ids qualify.
    pub lineage: Option<&'a [(i64, String)]>,
    /// Versions of snapshots/zips known to be damaged, passed over (4.2+ auto snapshot repair).
    pub skip: &'a [i64],
}

impl<'a> PlanInput<'a> {
    /// A plan for `provider` by the newest release with no confs, no unique id, no lineage, nothing skipped.
    pub fn new(provider: &'a str) -> Self {
        PlanInput { release: SparkVersion::NEWEST, conf: None, provider, unique_id: None, lineage: None, skip: &[] }
    }
    /// Spark 4.2+ with `spark.sql.streaming.stateStore.autoSnapshotRepair.enabled` (default true): a damaged
    /// snapshot is passed over and the version rebuilt from an older one. 4.2 is included because real Spark
    /// 4.2.1 attempted the repair on a default session (`CANNOT_LOAD_STATE_STORE.AUTO_SNAPSHOT_REPAIR_FAILED`
    /// in `tests/data/spark/missing-changelog-4.2.1-ckptv2.json`); 4.1.4 did not (its fixtures fail plainly).
    pub fn repairs_snapshots(&self) -> bool {
        self.release.at_least(4, 2)
            && self
                .conf
                .and_then(|c| c.get("spark.sql.streaming.stateStore.autoSnapshotRepair.enabled"))
                .is_none_or(|v| v.trim().eq_ignore_ascii_case("true"))
    }
}

/// How a release fails when a checkpoint format v2 lineage reaches back to no snapshot zip (a changelog of
/// the lineage and every zip at or above it gone): `(error class, exception, inner class)`. Observed with real
/// Spark on the same damage (`tools/spark-gen/missing_changelog.py`, `tests/data/spark/missing-changelog-*`):
/// - 4.0: the load falls back to a snapshot whose checkpoint metadata is not of the v2 format it expects:
///   `CANNOT_READ_CHECKPOINT` ("Expected v2, but found v1");
/// - 4.1: `CANNOT_FIND_BASE_SNAPSHOT_CHECKPOINT` (the lineage is printed);
/// - 4.2: the automatic snapshot repair tries and gives up: `UNCATEGORIZED` wrapping
///   `AUTO_SNAPSHOT_REPAIR_FAILED` (IllegalStateException "lineage is incomplete");
/// - 4.3: the load starts from the newest older zip and stops at the missing changelog:
///   `CANNOT_READ_STREAMING_STATE_FILE` (java.io.FileNotFoundException).
pub fn lineage_break_error(release: SparkVersion) -> (&'static str, &'static str, Option<&'static str>) {
    const EXC: &str = "org.apache.spark.SparkException";
    if release.at_least(4, 3) {
        ("CANNOT_LOAD_STATE_STORE.CANNOT_READ_STREAMING_STATE_FILE", EXC, None)
    } else if release.at_least(4, 2) {
        ("CANNOT_LOAD_STATE_STORE.UNCATEGORIZED", EXC, Some("CANNOT_LOAD_STATE_STORE.AUTO_SNAPSHOT_REPAIR_FAILED"))
    } else if release.at_least(4, 1) {
        ("CANNOT_LOAD_STATE_STORE.CANNOT_FIND_BASE_SNAPSHOT_CHECKPOINT", EXC, None)
    } else {
        ("CANNOT_LOAD_STATE_STORE.CANNOT_READ_CHECKPOINT", EXC, None)
    }
}

/// HDFS provider: the snapshot a load of `version` starts from (`HDFSBackedStateStoreProvider.loadMap`): the
/// newest `<s>.snapshot` with `0 < s <= version` not in `skip`, or none (start from an empty map).
pub fn hdfs_base(store: &StoreFiles, version: i64, skip: &[i64]) -> Option<i64> {
    if version < 1 {
        return None;
    }
    store.snapshots.range(1..=version).rev().map(|(v, _)| *v).find(|v| !skip.contains(v))
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
/// `skip` (known corrupt, for the 4.2+ auto snapshot repair) are passed over.
pub fn plan(store: &StoreFiles, version: i64, input: &PlanInput<'_>) -> LoadChain {
    let PlanInput { provider, unique_id, lineage, skip, .. } = *input;
    let mut chain = LoadChain { version, ..Default::default() };
    if version <= 0 {
        return chain;
    }
    let dir = &store.dir;
    if provider == "hdfs" {
        let snap = hdfs_base(store, version, skip);
        // Every delta after the snapshot up to `version`; a hand-edited huge batch id would make that list huge,
        // and then some delta is certainly missing: cap the range at what can exist.
        let base = snap.unwrap_or(0);
        let cap = base.saturating_add(store.deltas.len() as i64 + 1).min(version);
        let deltas = base.saturating_add(1)..=cap.max(base).saturating_add(i64::from(cap < version));
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
mod tests {
    use super::*;
    use crate::state_files::list_state;

    fn load_chain(
        s: &StoreFiles,
        v: i64,
        p: &str,
        id: Option<&str>,
        l: Option<&[(i64, String)]>,
        skip: &[i64],
    ) -> LoadChain {
        plan(s, v, &PlanInput { unique_id: id, lineage: l, skip, ..PlanInput::new(p) })
    }

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
