//! The restart chains of a checkpoint, planned once by the read stage ([`crate::read::state_chains`]) and read
//! by the checks and the row stage: for every store a restart loads, the files the one planner
//! ([`crate::restart_chain::plan`]) says it reads for the restart version, with the inputs it planned from (the
//! checkpoint format v2 unique id and lineage). What-if chains for a fix ("with this snapshot moved away") are
//! planned from the same stored inputs ([`RestartChain::replan`]).
//!
//! Which stores a restart loads ([`Checkpoint::restart_stores`]) mirrors Spark: every partition
//! `0..spark.sql.shuffle.partitions` of every stateful operator, each store of the operator (join: four).

use super::{store_index, Checkpoint, JOIN_STORE_NAMES};
use crate::restart_chain::{plan, LoadChain, PlanInput};
use crate::state_files::{OperatorFiles, StoreFiles};
use std::collections::BTreeSet;

/// Recorded partition ids without a folder that are planned (and so reported) at most; the first missing ones
/// already fail the restart, and the layout check names them all in one finding.
pub const MAX_MISSING_PLANNED: usize = 64;

/// One store a restart loads: `(operator id, partition id, store name)`, ordered as Spark lists them.
pub type StoreKey = (i64, u32, String);

/// An operator's store names ([`Checkpoint::store_names`]; empty without a state folder) and provider
/// ([`Checkpoint::operator_provider`]), as planning its stores' chains needs them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OperatorStores {
    /// The operator's store names.
    pub names: Vec<String>,
    /// `hdfs`, `rocksdb` or `unknown`.
    pub provider: String,
}

/// The chain a restart loads for one store at the restart version, and what it was planned from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RestartChain {
    /// The store folder, relative to the root (`state/<op>/<partition>[/<store>]`); it may be absent.
    pub dir: String,
    /// `hdfs`, `rocksdb` or `unknown` ([`Checkpoint::operator_provider`]).
    pub provider: String,
    /// Checkpoint format v2: the unique id of the loaded version (commit log `stateUniqueIds`).
    pub unique_id: Option<String>,
    /// Checkpoint format v2: the lineage in the header of the loaded version's changelog, when it was read.
    pub lineage: Option<Vec<(i64, String)>>,
    /// The files read, base first, and where the load stops.
    pub chain: LoadChain,
}

impl RestartChain {
    /// The chain of the same version with the snapshots/zips of `skip` passed over (auto snapshot repair, or a
    /// file moved away), with or without the known lineage: the one planner on the stored inputs.
    pub fn replan(&self, store: &StoreFiles, skip: &[i64], with_lineage: bool) -> LoadChain {
        let lineage = if with_lineage { self.lineage.as_deref() } else { None };
        let input = PlanInput { unique_id: self.unique_id.as_deref(), lineage, skip, ..PlanInput::new(&self.provider) };
        plan(store, self.chain.version, &input)
    }
}

impl Checkpoint {
    /// The stores a restart loads, in Spark's order: for every operator with a state folder, the partitions on
    /// disk and the first [`MAX_MISSING_PLANNED`] recorded ones without a folder (Spark loads
    /// `0..spark.sql.shuffle.partitions`; without a recorded count, those up to the highest folder), times the
    /// operator's store names (from any partition, else its operator metadata, else `default`).
    pub fn restart_stores(&self) -> Vec<StoreKey> {
        let recorded = self.recorded_shuffle_partitions();
        let mut out = Vec::new();
        for (op, o) in &self.state.operators {
            let names = self.store_names(*op, o);
            for part in partitions_loaded(o, recorded) {
                out.extend(names.iter().map(|n| (*op, part, n.clone())));
            }
        }
        out
    }

    /// `spark.sql.shuffle.partitions` as recorded in the latest readable offsets file: the state partitions a
    /// restart loads (`None`: not recorded or not a number).
    pub fn recorded_shuffle_partitions(&self) -> Option<u32> {
        self.recorded_conf().get("spark.sql.shuffle.partitions").and_then(|s| s.trim().parse().ok())
    }

    /// An operator's store names: those its operator metadata records (`state/<op>/_metadata`, written by
    /// Spark 3.5+, which names every store the operator loads); without it, `default` when that store holds a
    /// state file in some partition (no join writes it), else the join's stores ([`JOIN_STORE_NAMES`]) that
    /// hold one; else `default`. An empty folder beside a partition's files, or a folder that is no store of
    /// Spark's (`backup/`), is not a store a restart loads.
    pub fn store_names(&self, op: i64, o: &OperatorFiles) -> Vec<String> {
        let recorded = match self.operator_metadata.get(&op).map(|m| &m.content) {
            Some(Ok(m)) if !m.stores.is_empty() => Some(m.stores.iter().map(|s| s.store_name.clone())),
            _ => None,
        };
        let mut names: BTreeSet<String> = match recorded {
            Some(r) => r.collect(),
            None => {
                let with_files: BTreeSet<&str> = o
                    .partitions
                    .values()
                    .flat_map(|p| p.stores.iter().filter(|(_, s)| !s.is_empty()).map(|(n, _)| n.as_str()))
                    .collect();
                if with_files.contains("default") {
                    BTreeSet::from(["default".to_string()])
                } else {
                    JOIN_STORE_NAMES.iter().filter(|n| with_files.contains(*n)).map(|n| n.to_string()).collect()
                }
            }
        };
        if names.is_empty() {
            names.insert("default".into());
        }
        names.into_iter().collect()
    }

    /// The store's files in the listing (`None`: its folder is absent).
    pub fn store_files(&self, key: &StoreKey) -> Option<&StoreFiles> {
        self.state.operators.get(&key.0)?.partitions.get(&key.1)?.stores.get(&key.2)
    }

    /// What planning a store's chain needs of its operator: its store names and provider. Both walk the
    /// operator's partitions, so a caller planning many stores finds them once per operator.
    pub fn operator_stores(&self, op: i64) -> OperatorStores {
        OperatorStores {
            names: self.state.operators.get(&op).map(|o| self.store_names(op, o)).unwrap_or_default(),
            provider: self.operator_provider(op),
        }
    }

    /// Plans the restart chain of one store from the listing and the commit log (no file is read; the lineage
    /// is `lineage` when the caller read the loaded changelog's header).
    pub fn plan_restart_chain(
        &self,
        key: &StoreKey,
        version: i64,
        lineage: Option<Vec<(i64, String)>>,
    ) -> RestartChain {
        self.plan_restart_chain_of(&self.operator_stores(key.0), key, version, lineage)
    }

    /// [`Self::plan_restart_chain`] with the operator's [`OperatorStores`] found by the caller (once per
    /// operator: finding them per store would walk every partition for every partition).
    pub fn plan_restart_chain_of(
        &self,
        op_stores: &OperatorStores,
        key: &StoreKey,
        version: i64,
        lineage: Option<Vec<(i64, String)>>,
    ) -> RestartChain {
        let (op, part, name) = key;
        let dir = if name == "default" { format!("state/{op}/{part}") } else { format!("state/{op}/{part}/{name}") };
        let provider = op_stores.provider.clone();
        let unique_id = self.unique_id(*op, *part, store_index(&op_stores.names, name), version);
        let empty = StoreFiles { dir: dir.clone(), ..Default::default() };
        let store = self.store_files(key).unwrap_or(&empty);
        let input =
            PlanInput { unique_id: unique_id.as_deref(), lineage: lineage.as_deref(), ..PlanInput::new(&provider) };
        let chain = plan(store, version, &input);
        RestartChain { dir, provider, unique_id, lineage, chain }
    }
}

/// The partitions a restart loads that are planned: the folders on disk below the recorded
/// `spark.sql.shuffle.partitions` (Spark loads `0..n`; a folder at or above it is one it ignores,
/// `state-partition-extra`), every folder when the count is not recorded, and the first missing ids between them
/// and the recorded count (never a walk over a huge range from a hand-edited count or a folder named
/// `4000000000`).
fn partitions_loaded(o: &OperatorFiles, recorded: Option<u32>) -> Vec<u32> {
    let on_disk = o.partitions.keys().next_back().map(|p| p.saturating_add(1)).unwrap_or(0);
    let n_parts = match recorded {
        Some(n) => n.min(on_disk.saturating_add(10_000)),
        None => on_disk,
    };
    let (missing, _) = crate::state_files::missing_ids(
        o.partitions.keys().map(|p| u64::from(*p)),
        u64::from(n_parts),
        MAX_MISSING_PLANNED,
    );
    let mut parts: Vec<u32> = o.partitions.keys().copied().filter(|p| recorded.is_none_or(|n| *p < n)).collect();
    parts.extend(missing.iter().filter_map(|p| u32::try_from(*p).ok()));
    parts.sort_unstable();
    parts
}

#[cfg(test)]
mod tests {
    use crate::archive::Archive;
    use crate::read::{read_checkpoint_with, ReadOptions};
    use crate::restart_chain::{plan, PlanInput};

    /// The read stage plans every store's chain once, with or without reading state; with state read, a
    /// checkpoint format v2 chain is planned again with the lineage of the loaded changelog's header, and the
    /// stored chain is the one planner's answer on those inputs.
    #[test]
    fn read_stage_stores_each_restart_chain_once() {
        let name = "ss-4.3.0-agg-rocksdb-ckptv2";
        let mut a = crate::testutil::open_fixture(name);
        let roots = crate::layout::find_roots(a.entries());
        let quick = ReadOptions { verify_state: false, check_rows: false, ..Default::default() };
        let listed = read_checkpoint_with(&mut a, &roots[0], &quick);
        let deep = read_checkpoint_with(&mut a, &roots[0], &ReadOptions::default());
        let version = deep.restart_version().expect("restart version");
        let keys: Vec<_> = deep.restart_chains.keys().cloned().collect();
        assert_eq!(keys, deep.restart_stores(), "one chain per store a restart loads, in Spark's order");
        assert_eq!(listed.restart_chains.keys().collect::<Vec<_>>(), deep.restart_chains.keys().collect::<Vec<_>>());
        let mut with_lineage = 0;
        for (key, rc) in &deep.restart_chains {
            let store = deep.store_files(key).expect("a folder per partition");
            let uid = rc.unique_id.as_deref().expect("format v2: a unique id per store");
            assert!(listed.restart_chains[key].lineage.is_none(), "no file read, no lineage");
            let input = PlanInput { unique_id: Some(uid), lineage: rc.lineage.as_deref(), ..PlanInput::new("rocksdb") };
            assert_eq!(rc.chain, plan(store, version, &input));
            assert!(rc.chain.missing.is_none() && !rc.chain.steps.is_empty(), "{key:?}: healthy chain");
            with_lineage += usize::from(rc.lineage.is_some());
        }
        assert!(with_lineage > 0, "the loaded changelogs' lineage was read");
    }
}
