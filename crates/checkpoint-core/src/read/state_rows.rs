//! Stage 6, row checks: for the stores a restart loads whose chain is intact, decodes every row at the restart
//! version (within the byte budget), validates key and value rows against the stored schema the way
//! `StateStoreProvider.validateStateRowFormat` does, and collects event-time keys (`window.end`).

use super::Reader;
use crate::model::{Checkpoint, StoreRows, Unverified};
use crate::restart_chain::{ChainFileKind, ChainStep, LoadChain};
use std::collections::BTreeSet;

/// Most stores whose rows are decoded in one diagnosis (each costs a listing scan besides its bytes).
pub(crate) const MAX_ROW_CHECK_STORES: usize = 256;

/// For the stores a restart loads whose chain is intact: decodes every row at the restart version (within the
/// byte budget), validates key and value rows against the stored schema (partition 0's schema file) the way
/// `StateStoreProvider.validateStateRowFormat` does, and collects event-time keys (`window.end`).
pub(crate) fn read_store_rows(cp: &mut Checkpoint, rd: &mut Reader<'_>) {
    let Some(version) = cp.restart_version().filter(|v| *v > 0) else {
        return;
    };
    let mut stores_read = 0usize;
    let ops: Vec<i64> = cp.state.operators.keys().copied().collect();
    for op in ops {
        let provider = cp.operator_provider(op);
        let names: BTreeSet<String> =
            cp.state.operators[&op].partitions.values().flat_map(|p| p.stores.keys().cloned()).collect();
        for name in names {
            let Some(ctx) = row_context(cp, rd, op, &name, version) else {
                continue; // no readable schema file: nothing to validate against
            };
            let parts: Vec<u32> = cp.state.operators[&op].partitions.keys().copied().collect();
            for part in parts {
                let Some(store) = cp.state.operators[&op].partitions[&part].stores.get(&name).cloned() else {
                    continue;
                };
                if store.is_empty() {
                    continue;
                }
                let Some(rc) = cp.restart_chains.get(&(op, part, name.clone())) else {
                    continue;
                };
                let chain = rc.chain.clone();
                if !chain_intact(cp, &chain) {
                    continue;
                }
                let mut bytes: u64 = chain.steps.iter().map(|s| row_cost(cp, &s.path)).sum();
                if chain.steps.iter().any(|s| s.kind == ChainFileKind::Zip) {
                    bytes = bytes.saturating_add(sst_cost(&store));
                }
                if bytes > rd.budget_left || stores_read >= MAX_ROW_CHECK_STORES {
                    cp.unverified.push(Unverified {
                        path: store.dir.clone(),
                        bytes,
                        what: format!("rows of state version {version} not decoded (schema and watermark checks)"),
                    });
                    continue;
                }
                rd.budget_left -= bytes;
                stores_read += 1;
                // The integrity pass rebuilt the store from the bytes it checked (each file read once).
                if let Some(sr) = rd.rows_read.remove(&store.dir) {
                    #[cfg(test)]
                    FUSED_TAKEN.with(|n| n.set(n.get() + 1));
                    cp.store_rows.insert(store.dir.clone(), sr);
                    continue;
                }
                #[cfg(test)]
                CHAINS_EXECUTED.with(|n| n.set(n.get() + 1));
                let mut sr = StoreRows { store_dir: store.dir.clone(), version, ..Default::default() };
                let limits = crate::state::StateLimits::default();
                // The chain the read stage planned, executed once; rows scanned as they come.
                rd.prefetch(cp, chain.steps.iter().map(|s| s.path.as_str()));
                let abs_chain = absolute(rd, &chain);
                let mut scan = RowScan { sr: &mut sr, s: &ctx };
                let loaded = if store.provider() == "hdfs" {
                    crate::state::hdfs::for_each_row_of_chain(rd.archive, &abs_chain, &limits, |k, v| scan.row(k, v))
                } else {
                    let prefix = rd.prefix.clone();
                    crate::state::rocksdb::state_view::for_each_row_of_chain(
                        rd.archive,
                        &store,
                        &prefix,
                        &chain,
                        &limits,
                        |k, v| scan.row(k, v),
                    )
                    .map(|()| None)
                };
                match loaded {
                    Err(e) => sr.error = Some(e.to_string()),
                    Ok(first) if provider == "hdfs" => {
                        sr.first_row_invalid = first.and_then(|p| first_row_check(&p, &chain, rd, &ctx));
                    }
                    Ok(_) => {}
                }
                cp.store_rows.insert(store.dir.clone(), sr);
            }
        }
    }
}

#[cfg(test)]
thread_local! {
    /// Stores whose rows the row stage took from the integrity pass (tests: the fused path is exercised).
    pub(crate) static FUSED_TAKEN: std::cell::Cell<usize> = const { std::cell::Cell::new(0) };
    /// Stores whose chain the row stage executed itself (tests: none where the integrity pass could rebuild).
    pub(crate) static CHAINS_EXECUTED: std::cell::Cell<usize> = const { std::cell::Cell::new(0) };
}

/// What the SSTs of a RocksDB store cost the row stage's byte budget when its chain loads a zip: their stored
/// sizes, every SST of the store.
pub(crate) fn sst_cost(store: &crate::state_files::StoreFiles) -> u64 {
    store.ssts.iter().fold(0u64, |a, f| a.saturating_add(f.size))
}

/// What decoding the rows of one chain file costs the byte budget: the decompressed bytes the integrity pass
/// saw (else the stored size).
pub(crate) fn row_cost(cp: &Checkpoint, path: &str) -> u64 {
    let stored = cp.file_size(path).unwrap_or(0);
    cp.integrity_of(path).and_then(|i| i.decompressed_bytes).unwrap_or(stored).max(stored)
}

/// Whether the row stage decodes a chain: no missing file, a base found, and every file read by the integrity
/// pass without a problem.
pub(crate) fn chain_intact(cp: &Checkpoint, chain: &LoadChain) -> bool {
    chain.missing.is_none()
        && !chain.base_not_found
        && chain.steps.iter().all(|s| cp.integrity_of(&s.path).is_some_and(|i| i.problem.is_none()))
}

/// What decoding the rows of one store name of an operator needs: the stored schemas (partition 0's schema
/// file), what to check, and the watermark of the batch that wrote the restart version.
pub(crate) struct RowContext {
    ks: crate::state::schema::StructType,
    vs: crate::state::schema::StructType,
    /// False for a dummy value Spark does not validate (deduplication without watermark).
    check_value: bool,
    /// The key field that is a time window, when any.
    window_end: Option<usize>,
    /// Watermark (ms) of the batch that wrote the version (eviction in batch `version - 1` used it); 0 = none.
    wm_ms: i64,
}

/// The [`RowContext`] of store `name` of operator `op` at state `version`; `None` without a readable schema
/// file (nothing to validate against).
pub(crate) fn row_context(
    cp: &Checkpoint,
    rd: &mut Reader<'_>,
    op: i64,
    name: &str,
    version: i64,
) -> Option<RowContext> {
    use crate::state::schema::{DataType, StructType};
    let (ks, vs) = stored_schemas(cp, rd, op, name)?;
    let wm_ms = cp
        .offsets
        .get(&(version - 1))
        .and_then(|o| o.file.content.as_ref().ok())
        .and_then(|o| o.metadata.as_ref())
        .and_then(|m| m.batch_watermark_ms)
        .unwrap_or(0);
    // Deduplication without watermark stores a dummy value Spark does not validate.
    let check_value = !(vs.fields.len() == 1 && vs.fields[0].data_type == DataType::Null);
    let window_end: Option<usize> = ks.fields.iter().position(|f| {
        f.name == "window"
            && matches!(&f.data_type, DataType::Struct(StructType { fields })
                if fields.len() == 2 && fields[1].name == "end" && fields[1].data_type == DataType::Timestamp)
    });
    Some(RowContext { ks, vs, check_value, window_end, wm_ms })
}

/// The rows of an HDFS store rebuilt by the integrity pass from the files of `chain` (relative paths), validated
/// and scanned as [`read_store_rows`] does when it executes the chain itself.
pub(crate) fn rows_of_rebuild(
    rebuilt: crate::state::hdfs::Rebuild,
    ctx: &RowContext,
    store_dir: &str,
    version: i64,
    chain: &LoadChain,
    rd: &Reader<'_>,
) -> StoreRows {
    let mut sr = StoreRows { store_dir: store_dir.to_string(), version, ..Default::default() };
    let mut scan = RowScan { sr: &mut sr, s: ctx };
    let first = rebuilt.for_each_row(|k, v| scan.row(k, v));
    sr.first_row_invalid = first.and_then(|p| first_row_check(&p, chain, rd, ctx));
    sr
}

/// The rows of a RocksDB store rebuilt by the integrity pass from the files of `chain` (relative paths), as
/// [`read_store_rows`] finds them when it executes the chain itself; `None` when the rebuild is not complete.
pub(crate) fn rows_of_rocksdb_rebuild(
    rebuilt: crate::state::rocksdb::Rebuild,
    ctx: &RowContext,
    store: &crate::state_files::StoreFiles,
    version: i64,
    chain: &LoadChain,
    rd: &mut Reader<'_>,
) -> Option<StoreRows> {
    let mut sr = StoreRows { store_dir: store.dir.clone(), version, ..Default::default() };
    let mut scan = RowScan { sr: &mut sr, s: ctx };
    let prefix = rd.prefix.clone();
    let limits = crate::state::StateLimits::default();
    let rows = crate::state::rocksdb::state_view::for_each_row_of_rebuild(
        rd.archive,
        store,
        &prefix,
        chain,
        rebuilt,
        &limits,
        |k, v| scan.row(k, v),
    )?;
    if let Err(e) = rows {
        sr.error = Some(e.to_string());
    }
    Some(sr)
}

/// The key and value schemas of a store: its schema file (v1/v2) in partition 0, from the listing.
fn stored_schemas(
    cp: &Checkpoint,
    rd: &mut Reader<'_>,
    op: i64,
    name: &str,
) -> Option<(crate::state::schema::StructType, crate::state::schema::StructType)> {
    let f = cp.state.operators.get(&op)?.partitions.get(&0)?.stores.get(name)?.schema.as_ref()?;
    let bytes = rd.read(&f.path, 16 << 20).ok()?;
    let s = crate::state::schema::parse_schema_file(&bytes).ok()?;
    Some((s.key, s.value))
}

/// A chain with archive paths (the model's are relative to the root).
fn absolute(rd: &Reader<'_>, chain: &LoadChain) -> LoadChain {
    let abs = |s: &ChainStep| ChainStep { path: rd.abs(&s.path), ..s.clone() };
    LoadChain {
        steps: chain.steps.iter().map(abs).collect(),
        missing: chain.missing.as_ref().map(abs),
        ..chain.clone()
    }
}

/// Validates the rows of a loaded store one at a time and collects its event-time keys (`wm_ms` = the watermark
/// of the batch that wrote the version) into `sr`.
struct RowScan<'r> {
    sr: &'r mut StoreRows,
    s: &'r RowContext,
}

impl RowScan<'_> {
    /// One row (key and value UnsafeRows), the `sr.rows`-th of the store.
    fn row(&mut self, k: &[u8], v: &[u8]) {
        let (sr, s) = (&mut *self.sr, self.s);
        let (ks, vs) = (&s.ks, &s.vs);
        let i = sr.rows;
        sr.rows += 1;
        sr.bytes += (k.len() + v.len()) as u64;
        let mut bad = false;
        if let Err(e) = crate::state::unsafe_row::validate_structure(k, ks) {
            bad = true;
            sr.bad_key.get_or_insert((i, e.offset, e.message));
        }
        if s.check_value {
            if let Err(e) = crate::state::unsafe_row::validate_structure(v, vs) {
                bad = true;
                sr.bad_value.get_or_insert((i, e.offset, e.message));
            }
        }
        if bad {
            sr.bad_rows += 1;
            return;
        }
        if let Some(end_ms) = s.window_end.and_then(|idx| window_end_ms(k, ks.fields.len(), idx)) {
            sr.window_end_min_ms = Some(sr.window_end_min_ms.map_or(end_ms, |m| m.min(end_ms)));
            if s.wm_ms > 0 && end_ms <= s.wm_ms {
                sr.keys_behind_watermark += 1;
            }
        }
    }
}

/// `window.end` (ms since the epoch) of a key UnsafeRow whose field `idx` (of `n` top-level fields) is the
/// `struct<start: timestamp, end: timestamp>` a time window groups by; `None` when null or out of bounds.
fn window_end_ms(row: &[u8], n: usize, idx: usize) -> Option<i64> {
    let word =
        |at: usize| -> Option<u64> { Some(u64::from_le_bytes(row.get(at..at.checked_add(8)?)?.try_into().ok()?)) };
    let bitset = n.div_ceil(64) * 8;
    if word((idx / 64) * 8)? & (1u64 << (idx % 64)) != 0 {
        return None;
    }
    let slot = word(bitset.checked_add(idx.checked_mul(8)?)?)?;
    let off = (slot >> 32) as usize;
    // Nested row: one bitset word for 2 fields, then start, end.
    let nested_null = word(off)?;
    if nested_null & 0b10 != 0 {
        return None;
    }
    let micros = word(off.checked_add(16)?)? as i64;
    Some(micros.div_euclid(1000))
}

/// The row `validateStateRowFormat` checks on an HDFS restart: the first put of the first file of the chain
/// (`isValidated` is set after it), captured while the chain was executed. `Some` when it violates the key or
/// value schema: (file, record offset in the decompressed stream, `key` or `value`, reason).
fn first_row_check(
    first: &crate::state::hdfs::FirstPut,
    chain: &LoadChain,
    rd: &Reader<'_>,
    ctx: &RowContext,
) -> Option<(String, u64, &'static str, String)> {
    let (ks, vs, check_value) = (&ctx.ks, &ctx.vs, ctx.check_value);
    // The model's path (relative to the root) of the chain file.
    let path =
        chain.steps.iter().find(|s| rd.abs(&s.path) == first.path).map_or(first.path.clone(), |s| s.path.clone());
    if let Err(e) = crate::state::unsafe_row::validate_structure(&first.key, ks) {
        return Some((path, first.offset, "key", format!("byte {} of the key row: {}", e.offset, e.message)));
    }
    if check_value {
        // Spark floors the value to a multiple of 8 (rows written before 2.3).
        let v = &first.value[..first.value.len() / 8 * 8];
        if let Err(e) = crate::state::unsafe_row::validate_structure(v, vs) {
            return Some((path, first.offset, "value", format!("byte {} of the value row: {}", e.offset, e.message)));
        }
    }
    None
}
