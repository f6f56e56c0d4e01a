//! Questions about a [`Checkpoint`] that the read stage, the checks, the prediction and the restart plan all
//! ask: which batch a restart runs, which state version it loads, the provider of an operator, the unique id of
//! a store version (checkpoint format v2), the store index Spark uses for it.

use super::Checkpoint;
use std::collections::BTreeMap;

impl Checkpoint {
    /// The batch a restart runs first (FORMATS.md §1, §16): after the last committed batch C with offsets up to
    /// C, batch C+1; when offsets go beyond the last commit, or commits beyond the offsets, the latest planned
    /// batch L is run again.
    pub fn restart_batch(&self) -> Option<i64> {
        let last = self.last_batch_id();
        let committed = self.last_committed_batch_id();
        match (last, committed) {
            (None, None) => None,
            (None, Some(c)) => Some(c + 1),
            (Some(l), None) => Some(l),
            (Some(l), Some(c)) if c == l => Some(c + 1),
            // An uncommitted latest batch is run again; so is a latest batch whose commit is followed by commits of
            // batches without offsets files (`populateStartOffsets` has no case for those: commit-ahead-of-offsets).
            (Some(l), Some(_)) => Some(l),
        }
    }

    /// The state version a restart loads: batch N runs on state version N (written by batch N-1, whose
    /// version is its batch id + 1), so it equals [`Checkpoint::restart_batch`].
    pub fn restart_version(&self) -> Option<i64> {
        self.restart_batch()
    }

    /// The checkpoint unique id of (operator, partition, store index) for `version`, from the commit of batch
    /// `version - 1` (checkpoint format v2, `stateUniqueIds`).
    pub fn unique_id(&self, op: i64, part: u32, store_index: usize, version: i64) -> Option<String> {
        let c = self.commits.get(&(version - 1))?.file.content.as_ref().ok()?;
        c.state_unique_ids.get(&op)?.get(part as usize)?.get(store_index).cloned()
    }

    /// Provider of an operator (`hdfs` / `rocksdb` / `unknown`) from its files on disk, else from the recorded
    /// provider class ([`provider_from_conf`]).
    pub fn operator_provider(&self, op: i64) -> String {
        if let Some(o) = self.state.operators.get(&op) {
            for p in o.partitions.values() {
                for s in p.stores.values() {
                    let pr = s.provider();
                    if pr != "unknown" {
                        return pr.to_string();
                    }
                }
            }
        }
        provider_from_conf(&self.recorded_conf()).to_string()
    }
}

/// The stores of a stream-stream join (`SymmetricHashJoinStateManager`: `<side>-<type>`), in the order of its
/// manager. Every other stateful operator of Spark loads the one store `default`.
pub const JOIN_STORE_NAMES: [&str; 4] =
    ["left-keyToNumValues", "left-keyWithIndexToValue", "right-keyToNumValues", "right-keyWithIndexToValue"];

/// The store index Spark uses in `stateUniqueIds` (stores in name order of the join manager; other stores in
/// the order of `names`).
pub fn store_index(names: &[String], name: &str) -> usize {
    JOIN_STORE_NAMES.iter().position(|n| *n == name).or_else(|| names.iter().position(|n| n == name)).unwrap_or(0)
}

/// `hdfs` / `rocksdb` / `unknown` from `spark.sql.streaming.stateStore.providerClass` (unset = `hdfs`, Spark's
/// default).
pub fn provider_from_conf(conf: &BTreeMap<String, String>) -> &'static str {
    match conf.get("spark.sql.streaming.stateStore.providerClass") {
        Some(c) if c.contains("RocksDB") => "rocksdb",
        Some(c) if c.contains("HDFSBacked") => "hdfs",
        Some(_) => "unknown",
        None => "hdfs",
    }
}
