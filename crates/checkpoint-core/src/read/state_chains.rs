//! Stage 5, the state a restart loads. `plan_state_chains` (always; the listing and the commit log only)
//! stores every store's restart chain in the model ([`Checkpoint::restart_chains`]), planned once by the one
//! planner; `read_state_chains` (when state is verified) reads the files of those chains once each (sidecars,
//! integrity: framing, checksums, decompression, zip metadata and SST sizes), within the byte budget. With
//! checkpoint format v2 the loaded version's changelog is read first: its header names the lineage, and the
//! chain is planned again with it. When a snapshot/zip in the chain is damaged, the chain without it is read too
//! (Spark 4.2+'s auto snapshot repair).

use super::state_rows::{self, RowContext};
use super::{sidecars, Reader, MAX_STATE_FILE_BYTES};
use crate::archive::ArchiveError;
use crate::model::{
    Checkpoint, NotVerified, OperatorStores, Problem, StateFileIntegrity, StoreKey, Unverified, ZipListing,
};
use crate::report::CheckpointKind;
use crate::restart_chain::ChainFileKind;
use crate::state::hdfs::{Rebuild, RecordFileKind};
use crate::state_files::StoreFiles;
use std::collections::{BTreeSet, HashMap};

/// Plans the restart chain of every store a restart loads ([`Checkpoint::restart_stores`]) and stores it in
/// the model. Reads nothing.
pub(crate) fn plan_state_chains(cp: &mut Checkpoint) {
    if cp.kind.0 != CheckpointKind::StructuredStreaming {
        return;
    }
    let Some(version) = cp.restart_version() else {
        return;
    };
    let mut op_stores: HashMap<i64, OperatorStores> = HashMap::new();
    for key in cp.restart_stores() {
        let o = op_stores.entry(key.0).or_insert_with(|| cp.operator_stores(key.0));
        let rc = cp.plan_restart_chain_of(o, &key, version, None);
        cp.restart_chains.insert(key, rc);
    }
}

/// Rounds of the auto snapshot repair followed: the damaged base and up to three more damaged ones.
const REPAIR_ROUNDS: usize = 4;

/// Tells the archive the planned chain of `key`'s store, then of the `next` one's: an archive that reads ahead
/// (the CLI's second thread) inflates the next store's files while this one's are checked; a browser `Blob`
/// fetches the next chain one store early, in the same slices. A checkpoint format v2 chain is planned again
/// once its lineage is read, so only format v1 chains are hinted here (their files are the ones read); a v2
/// chain is hinted when it is read.
fn hint_chains(cp: &Checkpoint, rd: &mut Reader<'_>, key: &StoreKey, next: Option<&StoreKey>, done: &BTreeSet<String>) {
    for key in [Some(key), next].into_iter().flatten() {
        let paths: Vec<String> = match cp.restart_chains.get(key) {
            Some(rc) if rc.unique_id.is_none() => {
                rc.chain.steps.iter().map(|s| s.path.clone()).filter(|p| !done.contains(p)).collect()
            }
            _ => continue,
        };
        rd.prefetch(cp, paths.iter().map(String::as_str));
    }
}

/// For every planned chain whose store has files: reads the chain's files (sidecars, integrity), the lineage
/// first (format v2, then the chain is planned again with it), and the chains without damaged bases. With
/// `check_rows`, a store's rows (HDFS and RocksDB) are rebuilt from the same bytes as its restart chain is
/// checked ([`Reader::rows_read`], for the row stage): each file is read once. Stores the row stage would not
/// take (past its count of stores or what is left of the byte budget once the stores before are charged) are
/// not rebuilt: the row stage refuses them, or executes their chain itself.
pub(crate) fn read_state_chains(cp: &mut Checkpoint, rd: &mut Reader<'_>, check_rows: bool) {
    let Some(version) = cp.restart_version() else {
        return;
    };
    let keys: Vec<StoreKey> = cp.restart_chains.keys().cloned().collect();
    let mut done: BTreeSet<String> = BTreeSet::new();
    let mut contexts: HashMap<(i64, String), Option<RowContext>> = HashMap::new();
    let mut op_stores: HashMap<i64, OperatorStores> = HashMap::new();
    // Stores rebuilt so far and the bytes the row stage will charge for them.
    let (mut rebuilt, mut rows_reserved) = (0usize, 0u64);
    for (k, key) in keys.iter().cloned().enumerate() {
        let Some(store) = cp.store_files(&key).filter(|s| !s.is_empty()).cloned() else {
            continue;
        };
        hint_chains(cp, rd, &key, keys.get(k + 1), &done);
        // Checkpoint format v2: the changelog of the loaded version names its lineage; read it first.
        let uid = cp.restart_chains[&key].unique_id.clone();
        let top = uid.as_deref().and_then(|u| store.changelog_with_id(version, u)).map(str::to_string);
        let provider = store.provider();
        // Its records, held for the rebuild of the rows below, where it is the chain's last file.
        let mut top_records = None;
        if let Some(t) = &top {
            if done.insert(t.clone()) {
                let mut held = RowsRebuild::Held(None);
                let rows = (check_rows && version > 0 && provider == "rocksdb").then_some((0, &mut held));
                check_state_file(cp, rd, t, ChainFileKind::Changelog, &store, rows);
                if let RowsRebuild::Held(Some(cl)) = held {
                    top_records = Some((t.clone(), cl));
                }
            }
            if let Some(lineage) = cp.lineage_of(t).map(<[(i64, String)]>::to_vec) {
                let o = op_stores.entry(key.0).or_insert_with(|| cp.operator_stores(key.0));
                let rc = cp.plan_restart_chain_of(o, &key, version, Some(lineage));
                cp.restart_chains.insert(key.clone(), rc);
            }
        }
        // The rows of the restart chain, rebuilt while its files are checked (the row stage takes them).
        let mut rebuild = None;
        let room = rebuilt < state_rows::MAX_ROW_CHECK_STORES;
        if check_rows && room && version > 0 && (provider == "hdfs" || provider == "rocksdb") {
            let ctx = contexts
                .entry((key.0, key.2.clone()))
                .or_insert_with(|| state_rows::row_context(cp, rd, key.0, &key.2, version));
            if ctx.is_some() {
                rebuild = Some(RowsRebuild::new(provider, rd.budget_left.saturating_sub(rows_reserved)));
            }
        }
        // The held records serve only a rebuild whose chain ends in that changelog (not one that loads the
        // version's own zip): otherwise they are dropped before the chain's files are decoded.
        let ends_in_top = |p: &str| cp.restart_chains[&key].chain.steps.last().is_some_and(|s| s.path == p);
        if rebuild.is_none() || top_records.as_ref().is_some_and(|(p, _)| !ends_in_top(p)) {
            top_records = None;
        }
        let mut skip: Vec<i64> = Vec::new();
        for _round in 0..REPAIR_ROUNDS {
            let rc = &cp.restart_chains[&key];
            let chain = if skip.is_empty() { rc.chain.clone() } else { rc.replan(&store, &skip, true) };
            rd.prefetch(cp, chain.steps.iter().map(|s| s.path.as_str()).filter(|p| !done.contains(*p)));
            let mut damaged_base: Option<i64> = None;
            let mut rows_cost = 0u64;
            for (i, step) in chain.steps.iter().enumerate() {
                if done.insert(step.path.clone()) {
                    check_state_file(cp, rd, &step.path, step.kind, &store, rebuild.as_mut().map(|r| (i, r)));
                } else {
                    match (&mut rebuild, top_records.take()) {
                        // The format v2 changelog read first for its lineage: its records, held.
                        (Some(RowsRebuild::RocksDb(r)), Some((path, cl))) if path == step.path => {
                            r.changelog(i, Some(cl))
                        }
                        _ => rebuild = None, // a file checked before fed no rows
                    }
                }
                // The row stage charges the rows' cost after this pass: a store already over what is left of the
                // budget will not be taken, so it is not held in memory either.
                rows_cost = rows_cost.saturating_add(state_rows::row_cost(cp, &step.path));
                if step.kind == ChainFileKind::Zip {
                    rows_cost = rows_cost.saturating_add(state_rows::sst_cost(&store));
                }
                if rows_reserved.saturating_add(rows_cost) > rd.budget_left
                    || matches!(&rebuild, Some(RowsRebuild::Hdfs(r)) if r.is_over())
                {
                    rebuild = None;
                }
                let bad = cp.integrity_of(&step.path).is_some_and(|i| i.problem.is_some())
                    || cp.crc_of(&step.path).is_some_and(|c| matches!(c.verified, Some(Err(_))))
                    || cp.checksum_of(&step.path).is_some_and(|c| matches!(c.verified, Some(Err(_))));
                if bad && matches!(step.kind, ChainFileKind::Snapshot | ChainFileKind::Zip) {
                    damaged_base = Some(step.version);
                }
            }
            if let Some(r) = rebuild.take() {
                if state_rows::chain_intact(cp, &chain) {
                    if let Some(Some(ctx)) = contexts.get(&(key.0, key.2.clone())) {
                        let sr = match r {
                            RowsRebuild::Hdfs(r) => {
                                Some(state_rows::rows_of_rebuild(r, ctx, &store.dir, version, &chain, rd))
                            }
                            RowsRebuild::RocksDb(r) => {
                                state_rows::rows_of_rocksdb_rebuild(*r, ctx, &store, version, &chain, rd)
                            }
                            RowsRebuild::Held(_) => None,
                        };
                        if let Some(sr) = sr {
                            rd.rows_read.insert(store.dir.clone(), sr);
                            rebuilt += 1;
                            rows_reserved = rows_reserved.saturating_add(rows_cost);
                        }
                    }
                }
            }
            match damaged_base {
                Some(v) if !skip.contains(&v) => skip.push(v),
                _ => break,
            }
        }
    }
}

/// A store's rows rebuilt by the integrity pass from the bytes it checks, for the row stage.
enum RowsRebuild {
    /// An HDFS store: each `.delta`/`.snapshot`'s records as they are checked.
    Hdfs(Rebuild),
    /// A RocksDB store: the base zip's snapshot as its SSTs are checked, then each changelog's records.
    RocksDb(Box<crate::state::rocksdb::Rebuild>),
    /// A RocksDB changelog read before its chain is known (checkpoint format v2's lineage): its records, kept.
    Held(Option<crate::state::rocksdb::changelog::Changelog>),
}

impl RowsRebuild {
    /// The rebuild of a store of `provider` (`hdfs` or `rocksdb`); an HDFS one keeps at most `budget` bytes of
    /// rows, which are held besides the stream being checked.
    fn new(provider: &str, budget: u64) -> Self {
        match provider {
            "hdfs" => {
                let mut r = Rebuild::default();
                r.cap(usize::try_from(budget).unwrap_or(usize::MAX));
                RowsRebuild::Hdfs(r)
            }
            _ => RowsRebuild::RocksDb(Box::default()),
        }
    }
}

/// Reads one state file of a chain (within the budget) and records its integrity. With `rows` (the file's
/// index in the chain, the store being rebuilt), the file's records are applied to the rebuild as they are
/// checked; a file not read leaves the rebuild short of it.
fn check_state_file(
    cp: &mut Checkpoint,
    rd: &mut Reader<'_>,
    path: &str,
    kind: ChainFileKind,
    store: &StoreFiles,
    rows: Option<(usize, &mut RowsRebuild)>,
) {
    let size = cp.file_size(path).unwrap_or(0);
    if size > rd.budget_left {
        cp.unverified.push(Unverified { path: path.to_string(), bytes: size, what: "not read".into() });
        return;
    }
    rd.budget_left -= size;
    let bytes = match rd.read(path, MAX_STATE_FILE_BYTES) {
        Ok(b) => b,
        Err(e) => {
            if let Some(reason) = super::not_verified_reason(&e) {
                cp.not_verified.push(NotVerified { path: path.to_string(), reason, restart_reads: true });
                return;
            }
            if e.is_entry_damage() {
                // The zip entry (or the folder's file) cannot be read: that says nothing about the file's
                // content, as for a log file (`archive-entry-unreadable`, the verdict unknown).
                cp.archive_unreadable.insert(path.to_string(), e);
                return;
            }
            cp.state_integrity.insert(
                path.to_string(),
                StateFileIntegrity {
                    path: path.to_string(),
                    problem: Some(Problem { path: path.to_string(), offset: None, reason: e.to_string() }),
                    exception: Some("java.io.IOException".into()),
                    lineage: None,
                    payload_corrupt: false,
                    error_class: None,
                    records: None,
                    num_keys: None,
                    decompressed_bytes: None,
                    listed_files: Vec::new(),
                    rocksdb: None,
                    codec: None,
                },
            );
            return;
        }
    };
    sidecars::verify(cp, rd, path, &bytes);
    let integrity = match kind {
        ChainFileKind::Zip => {
            let rows = match rows {
                Some((i, RowsRebuild::RocksDb(r))) => Some((i, &mut **r)),
                _ => None,
            };
            zip_integrity(cp, rd, path, &bytes, store, rows)
        }
        k => {
            let (snapshot, changelog) = (k == ChainFileKind::Snapshot, k == ChainFileKind::Changelog);
            let c = match rows {
                Some((i, RowsRebuild::RocksDb(r))) if changelog => {
                    let (c, records) = crate::state_integrity::check_changelog_keeping(path, &bytes);
                    r.changelog(i, records);
                    c
                }
                Some((_, RowsRebuild::Held(slot))) if changelog => {
                    let (c, records) = crate::state_integrity::check_changelog_keeping(path, &bytes);
                    *slot = records;
                    c
                }
                Some((i, RowsRebuild::Hdfs(r))) if !changelog => {
                    let abs = rd.abs(path);
                    let rk = if snapshot { RecordFileKind::Snapshot } else { RecordFileKind::Delta };
                    // Room for the decompressed records up front (state rows compress about 4:1), as a load does.
                    r.reserve(
                        bytes.len().saturating_mul(4).min(crate::state::StateLimits::default().max_decompressed_bytes),
                    );
                    crate::state_integrity::check_stream_file_with(path, &bytes, snapshot, false, |o, k, v| {
                        r.apply(i, &abs, rk, o, k, v)
                    })
                }
                _ => crate::state_integrity::check_stream_file(path, &bytes, snapshot, changelog),
            };
            // A limit of this inspector stopped the check: not verified (so the chain is not intact and its rows
            // are not rebuilt), never damage.
            if let Some(reason) = c.not_verified {
                cp.not_verified.push(NotVerified { path: path.to_string(), reason, restart_reads: true });
                return;
            }
            StateFileIntegrity {
                path: path.to_string(),
                problem: c.problem,
                exception: c.exception,
                lineage: c.lineage,
                payload_corrupt: c.payload_corrupt,
                error_class: c.error_class.map(str::to_string),
                records: c.records,
                num_keys: None,
                decompressed_bytes: c.decompressed_bytes,
                listed_files: Vec::new(),
                rocksdb: None,
                codec: Some(crate::codec::sniff(&bytes)),
            }
        }
    };
    // The budget bounds work: a stream costs its decompressed bytes.
    if let Some(d) = integrity.decompressed_bytes {
        rd.budget_left = rd.budget_left.saturating_sub(d.saturating_sub(size));
    }
    let rocks_damaged = integrity.rocksdb.is_some();
    cp.state_integrity.insert(path.to_string(), integrity);
    if rocks_damaged && !cp.rocksdb_zips.contains_key(&store.dir) {
        read_zip_listings(cp, rd, store);
    }
}

/// The integrity of a RocksDB `<v>.zip` of a restart chain: its members and metadata, the SSTs it lists (decoded
/// within the budget, which they are charged to) and their sidecars. With `rows` (the zip's index in the chain,
/// the store being rebuilt), the snapshot the check decoded is the rebuild's base.
fn zip_integrity(
    cp: &mut Checkpoint,
    rd: &mut Reader<'_>,
    path: &str,
    bytes: &[u8],
    store: &StoreFiles,
    rows: Option<(usize, &mut crate::state::rocksdb::Rebuild)>,
) -> StateFileIntegrity {
    let abs_dir = rd.abs(&store.dir);
    let abs_zip = rd.abs(path);
    let budget = rd.budget_left;
    let prefix = rd.prefix.clone();
    let listing = crate::state::rocksdb::immutable_files(store);
    let (z, snapshot) = crate::state_integrity::check_rocksdb_zip_keeping(
        rd.archive, &abs_dir, &abs_zip, bytes, &listing, &prefix, budget,
    );
    if let Some((i, r)) = rows {
        r.base(i, snapshot);
    }
    if let Some(reason) = &z.not_verified {
        cp.not_verified.push(NotVerified { path: path.to_string(), reason: reason.clone(), restart_reads: true });
    }
    // An SST the zip lists that the input could not give: not verified (a limit) or unreadable, never damage.
    if let Some((sst, e)) = z.unreadable.clone() {
        match super::not_verified_reason(&e) {
            Some(reason) if !matches!(e, ArchiveError::Inaccessible { .. }) => {
                cp.not_verified.push(NotVerified { path: sst, reason, restart_reads: true })
            }
            _ => {
                cp.archive_unreadable.insert(sst, e);
            }
        }
    }
    if z.ssts_decoded {
        rd.budget_left = rd.budget_left.saturating_sub(z.sst_bytes);
    } else if z.sst_bytes > budget && z.problem.is_none() {
        cp.unverified.push(Unverified {
            path: path.to_string(),
            bytes: z.sst_bytes,
            what: "the SST files it lists: present with the recorded sizes, blocks not decoded".into(),
        });
    }
    // Only when the SSTs fitted the budget (and were decoded): their sidecars cost no more of it.
    let listed_files =
        if z.problem.is_none() && z.ssts_decoded { verify_listed_sidecars(cp, rd, z.listed_files) } else { Vec::new() };
    StateFileIntegrity {
        path: path.to_string(),
        problem: z.problem,
        exception: z.exception,
        lineage: None,
        payload_corrupt: false,
        error_class: z.error_class.map(str::to_string),
        records: None,
        num_keys: z.num_keys,
        decompressed_bytes: None,
        listed_files,
        rocksdb: z.rocksdb,
        codec: None,
    }
}

/// Most zips of one store whose SST lists are read when its restart zip is damaged (the newest ones).
const MAX_LISTED_ZIPS: usize = 64;

/// Reads the `metadata` of every `<v>.zip` of `store` (newest first, bounded by [`MAX_LISTED_ZIPS`] and the byte
/// budget): which SSTs each lists and whether its members are intact, for the finding about a damaged zip.
fn read_zip_listings(cp: &mut Checkpoint, rd: &mut Reader<'_>, store: &StoreFiles) {
    let mut out = Vec::new();
    let dir = store.dir.trim_end_matches('/');
    for f in store.zips.values().rev().flatten().take(MAX_LISTED_ZIPS) {
        let path = f.file.path.clone();
        if f.file.size > rd.budget_left {
            cp.unverified.push(Unverified {
                path: path.clone(),
                bytes: f.file.size,
                what: "zip metadata not read (which SSTs it lists)".into(),
            });
            continue;
        }
        rd.budget_left -= f.file.size;
        let listing = match rd.read(&path, MAX_STATE_FILE_BYTES) {
            Err(e) => ZipListing { path: path.clone(), version: f.version, ssts: vec![], damage: Some(e.to_string()) },
            Ok(bytes) => match crate::state::rocksdb::zip_meta::read_version_zip(&bytes, Default::default()) {
                Err(e) => {
                    ZipListing { path: path.clone(), version: f.version, ssts: vec![], damage: Some(e.to_string()) }
                }
                Ok(z) => ZipListing {
                    path: path.clone(),
                    version: f.version,
                    ssts: z
                        .metadata
                        .distinct_sst_files()
                        .map(|s| (format!("{dir}/SSTs/{}", s.dfs_file_name), s.size_bytes))
                        .collect(),
                    damage: z.member_damage.map(|e| e.to_string()),
                },
            },
        };
        out.push(listing);
    }
    out.reverse();
    cp.rocksdb_zips.insert(store.dir.clone(), out);
}

/// The SST and log files a RocksDB zip lists (`listed`: relative paths, as [`crate::state_integrity::ZipCheck`]
/// names them), with the Hadoop sidecar of each verified: a load copies them through Hadoop's FileSystem, which
/// checks the `.crc`. Called only when the zip's SSTs were decoded within the byte budget, so their sizes are
/// already paid for.
fn verify_listed_sidecars(cp: &mut Checkpoint, rd: &mut Reader<'_>, listed: Vec<String>) -> Vec<String> {
    for p in &listed {
        if !cp.hadoop_crcs.contains_key(p) {
            continue;
        }
        if let Ok(b) = rd.read(p, MAX_STATE_FILE_BYTES) {
            sidecars::verify(cp, rd, p, &b);
        }
    }
    listed
}
