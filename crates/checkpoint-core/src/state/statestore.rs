//! The `statestore` source of Spark's State Data Source (`StateDataSource.scala`, `StatePartitionReader.scala`,
//! `StreamStreamJoinStatePartitionReader.scala`): state rows of one operator, store and batch.

use super::schema::{DataType, StructType};
use super::*;
use crate::archive::Archive;
use crate::dir_index::DirIndex;
use serde_json::Value;
use std::collections::HashMap;
use std::ops::ControlFlow;

/// Reads state rows as Spark's `statestore` data source does (see [`StateQuery`]), with default limits.
///
/// Errors ([`StateError`], naming the file): no committed batch and no `batch_id`; no such operator or
/// partition; a missing or undecodable schema file, delta or snapshot; a row that does not match its schema.
pub fn read_state(a: &mut dyn Archive, root: &str, q: &StateQuery) -> Result<Vec<StateRow>, StateError> {
    read_state_with_limits(a, root, q, &StateLimits::default())
}

/// [`read_state`] with explicit limits: every row of [`read_state_each`], collected.
pub fn read_state_with_limits(
    a: &mut dyn Archive,
    root: &str,
    q: &StateQuery,
    limits: &StateLimits,
) -> Result<Vec<StateRow>, StateError> {
    let mut rows = Vec::new();
    read_state_each(a, root, q, limits, &mut |r| {
        rows.push(r);
        ControlFlow::Continue(())
    })?;
    Ok(rows)
}

/// The row sink the readers hand rows to: `Err` stops the read with that error (the row limit, or
/// [`sink_stop`] when the caller's sink asked to stop).
pub(crate) type RowSink<'a> = dyn FnMut(StateRow) -> Result<(), StateError> + 'a;

/// Reads state rows as [`read_state`] does, handing each row to `sink` as soon as it is decoded, partition by
/// partition (rows of one partition in the order [`read_state`] returns them). The rows are never all built
/// first: what is held at once is the store of one partition (HDFS and RocksDB rebuild a version's key → value
/// map, which is the state itself) and, for `joinSide`, that partition's buffered input rows.
///
/// `sink` returns [`ControlFlow::Break`] to stop early (the read then ends with `Ok`). Errors as [`read_state`];
/// rows handed out before an error stay handed out. At most `limits.max_rows` rows are handed out: one more is
/// an error naming the store folder.
pub fn read_state_each(
    a: &mut dyn Archive,
    root: &str,
    q: &StateQuery,
    limits: &StateLimits,
    sink: &mut dyn FnMut(StateRow) -> ControlFlow<()>,
) -> Result<(), StateError> {
    let mut stopped = false;
    let res = {
        let mut inner = |r: StateRow| -> Result<(), StateError> {
            if sink(r).is_break() {
                stopped = true;
                return Err(sink_stop());
            }
            Ok(())
        };
        read_state_into(a, root, q, limits, &mut Emit::Rows(&mut inner))
    };
    if stopped {
        return Ok(());
    }
    res
}

/// Reads state rows as [`read_state_each`] does, handing each row to `sink` as its JSON text (one object, no
/// newline): the text of [`StateRow::to_json`] for the row [`read_state_each`] gives, but for numbers, written as
/// Spark's `toJSON` writes them (Java's `BigDecimal.toString` and `Double.toString`: `3.00`, `1.0E-300`, where
/// the values hold the same number), the rows in the same
/// order, the same errors. Rows of plain stores are written straight from their UnsafeRows into one reused
/// buffer (no JSON values built, no allocation per row): the fast way to print a large store.
pub fn read_state_text_each(
    a: &mut dyn Archive,
    root: &str,
    q: &StateQuery,
    limits: &StateLimits,
    sink: &mut dyn FnMut(&str) -> ControlFlow<()>,
) -> Result<(), StateError> {
    let mut stopped = false;
    let res = {
        let mut inner = |r: &str| -> Result<(), StateError> {
            if sink(r).is_break() {
                stopped = true;
                return Err(sink_stop());
            }
            Ok(())
        };
        let mut out = Emit::Text { sink: &mut inner, line: String::with_capacity(1024) };
        read_state_into(a, root, q, limits, &mut out)
    };
    if stopped {
        return Ok(());
    }
    res
}

/// The text sink of [`read_state_text_each`]'s readers: `Err` stops the read as [`RowSink`] does.
type TextSink<'a> = dyn FnMut(&str) -> Result<(), StateError> + 'a;

/// Where the readers hand rows: as [`StateRow`]s, or as their JSON text (through a reused line buffer).
enum Emit<'s, 'a> {
    /// Rows as values.
    Rows(&'s mut RowSink<'a>),
    /// Rows as text.
    Text { sink: &'s mut TextSink<'a>, line: String },
}

impl Emit<'_, '_> {
    /// Hands one row on (as text: [`StateRow::write_json`]).
    fn row(&mut self, r: StateRow) -> Result<(), StateError> {
        match self {
            Emit::Rows(sink) => sink(r),
            Emit::Text { sink, line } => {
                line.clear();
                r.write_json(line);
                sink(line)
            }
        }
    }

    /// `f` with a [`RowSink`] that hands its rows on through [`Emit::row`] (for the readers that build rows).
    fn with_rows<R>(&mut self, f: impl FnOnce(&mut RowSink<'_>) -> R) -> R {
        match self {
            Emit::Rows(sink) => f(*sink),
            Emit::Text { .. } => f(&mut |r| self.row(r)),
        }
    }
}

/// The marker error a [`RowSink`] returns when the caller's sink stopped the read (never shown: the readers'
/// public entry points turn it into `Ok`).
pub(crate) fn sink_stop() -> StateError {
    StateError::new("", "the row sink stopped the read")
}

fn read_state_into(
    a: &mut dyn Archive,
    root: &str,
    q: &StateQuery,
    limits: &StateLimits,
    out: &mut Emit<'_, '_>,
) -> Result<(), StateError> {
    // The archive's listing indexed once: every question about a folder below is a range of it.
    let dirs = DirIndex::build(a.entries());
    match prepare(a, &dirs, root, q, limits)? {
        Prepared::Nothing => Ok(()),
        Prepared::ChangeFeed { range, parts } => {
            out.with_rows(|sink| change_feed::read_change_feed(a, &dirs, root, q, range, &parts, limits, sink))
        }
        Prepared::JoinSide { side, version, parts } => {
            let repair = q.auto_snapshot_repair;
            let op = q.operator_id;
            out.with_rows(|sink| read_join_side(a, &dirs, root, op, side, version, &parts, limits, repair, sink))
        }
        Prepared::StateVar { target, batch, parts } => {
            let opts = rocksdb::state_view::VarReadOptions {
                flatten_collection_types: q.flatten_collection_types,
                auto_snapshot_repair: q.auto_snapshot_repair,
            };
            out.with_rows(|sink| {
                rocksdb::state_view::read_state_var(
                    a,
                    &dirs,
                    root,
                    q.operator_id,
                    &q.store_name,
                    &target,
                    batch,
                    &parts,
                    limits,
                    &opts,
                    sink,
                )
            })
        }
        Prepared::Plain(mut plain) => {
            plain.dirs = dirs;
            let mut text = plain.text_writer();
            for index in 0..plain.partitions().len() {
                let store = plain.load(a, index)?;
                match out {
                    Emit::Rows(sink) => plain.emit_rows(a, &store, sink)?,
                    Emit::Text { sink, .. } => {
                        let mut stop = None;
                        let end = text.write(&store, &mut |line| match sink(line) {
                            Ok(()) => ControlFlow::Continue(()),
                            Err(e) => {
                                stop = Some(e);
                                ControlFlow::Break(())
                            }
                        });
                        match end {
                            TextEnd::Written => {}
                            TextEnd::Stopped => return Err(stop.unwrap_or_else(sink_stop)),
                            TextEnd::Failed { row, error } => return Err(plain.row_error(a, &store, row, error)),
                        }
                    }
                }
            }
            Ok(())
        }
    }
}

/// A query with its options resolved and checked ([`prepare`]): which reader reads it, and what.
enum Prepared {
    /// No partition to read (the partition filter excludes `snapshotPartitionId`).
    Nothing,
    /// `readChangeFeed` over batches `range` (inclusive).
    ChangeFeed { range: (i64, i64), parts: Vec<u32> },
    /// `joinSide`, at state `version`.
    JoinSide { side: JoinSide, version: i64, parts: Vec<u32> },
    /// `stateVarName` or `readRegisteredTimers` of a transformWithState operator.
    StateVar { target: rocksdb::state_view::VarTarget, batch: i64, parts: Vec<u32> },
    /// A plain store's rows.
    Plain(PlainStoreRead),
}

/// Resolves and checks `q`'s options as Spark's reader does before it reads a row (option errors, the batch,
/// the partitions, the provider, the schemas); `dirs`: the index of `a`'s entries. A [`Prepared::Plain`] read
/// is given an empty index: its caller hands it `dirs` once done with it.
fn prepare(
    a: &mut dyn Archive,
    dirs: &DirIndex,
    root: &str,
    q: &StateQuery,
    limits: &StateLimits,
) -> Result<Prepared, StateError> {
    let mode = change_feed::resolve_options(a, root, q)?;
    let batch = query_batch(root, q, mode.batch())?;
    let version = batch + 1;
    let op_dir = join(root, &format!("state/{}", q.operator_id));
    let parts = match mode {
        change_feed::ReadMode::FromSnapshot { partition, .. } => {
            let p = change_feed::snapshot_partition(a, dirs, root, q.operator_id, partition)?;
            // The partition filter of this reader on top of Spark's one partition.
            if q.partition.is_some_and(|f| f != p) {
                return Ok(Prepared::Nothing);
            }
            vec![p]
        }
        _ => partitions_to_read(a, dirs, root, q, version, &op_dir)?,
    };
    if let change_feed::ReadMode::ChangeFeed { start, end } = mode {
        return Ok(Prepared::ChangeFeed { range: (start, end), parts });
    }
    let snapshot = match mode {
        change_feed::ReadMode::FromSnapshot { snapshot_batch, .. } => Some(snapshot_batch + 1),
        _ => None,
    };
    if snapshot.is_some() && (q.join_side.is_some() || q.state_var.is_some() || q.read_registered_timers) {
        return Err(StateError::new(
            &op_dir,
            "this inspector reads snapshotStartBatchId for plain stores only (not joinSide, stateVarName or readRegisteredTimers)",
        ));
    }
    if let Some(side) = q.join_side {
        return Ok(Prepared::JoinSide { side, version, parts });
    }
    check_state_var_options(a, root, q, &op_dir)?;
    if q.state_var.is_some() || q.read_registered_timers {
        let dir = store_dir(root, q.operator_id, parts[0], &q.store_name);
        if detect_provider_in(a, dirs, &dir) != Provider::RocksDb {
            return Err(StateError::new(
                dir,
                "stateVarName and readRegisteredTimers apply to transformWithState operators, whose state is in RocksDB stores",
            )
            .class("STDS_INVALID_OPTION_VALUE.WITH_MESSAGE"));
        }
        let target = match &q.state_var {
            Some(v) => rocksdb::state_view::VarTarget::Variable(v.clone()),
            None => rocksdb::state_view::VarTarget::Timers,
        };
        return Ok(Prepared::StateVar { target, batch, parts });
    }
    let (key_schema, value_schema) = store_schemas_in(a, dirs, root, q.operator_id, &q.store_name)?;
    Ok(Prepared::Plain(PlainStoreRead {
        root: root.to_string(),
        operator_id: q.operator_id,
        store_name: q.store_name.clone(),
        parts,
        version,
        snapshot,
        repair: q.auto_snapshot_repair,
        limits: *limits,
        key_schema,
        value_schema,
        loaded_rows: 0,
        dirs: DirIndex::default(),
    }))
}

/// The plain-store read of `q` ([`read_state_text_each`]'s rows `{"key":..,"value":..,"partition_id":..}`)
/// split in its two halves, so that a front end may run them on two threads: [`PlainStoreRead::load`] reads one
/// partition's store from the archive, and [`StoreTextWriter::write`] writes its rows as JSON text without the
/// archive. `None` when `q` is not a plain-store read (`readChangeFeed`, `joinSide`, `stateVarName`,
/// `readRegisteredTimers`): [`read_state_text_each`] reads those. A read of no partition (the partition filter
/// excludes `snapshotPartitionId`, whatever the other options) is `Some`, with no partition: it gives no row, as
/// [`read_state_text_each`] does. Errors: the option errors of [`read_state_text_each`], raised before any row.
///
/// Run in order (load partition 0, write it, load partition 1, …) the halves give exactly the rows and the
/// errors of [`read_state_text_each`]; that is how [`read_state_text_each`] itself reads a plain store.
pub fn plain_store_read(
    a: &mut dyn Archive,
    root: &str,
    q: &StateQuery,
    limits: &StateLimits,
) -> Result<Option<PlainStoreRead>, StateError> {
    let dirs = DirIndex::build(a.entries());
    Ok(match prepare(a, &dirs, root, q, limits)? {
        Prepared::Plain(mut p) => {
            p.dirs = dirs;
            Some(p)
        }
        Prepared::Nothing => Some(PlainStoreRead::empty(root, q, limits)),
        _ => None,
    })
}

/// A plain store's read with its options resolved ([`plain_store_read`]).
#[derive(Debug)]
pub struct PlainStoreRead {
    root: String,
    operator_id: i64,
    store_name: String,
    /// The partitions read, in order.
    parts: Vec<u32>,
    /// The state version read (batch + 1).
    version: i64,
    /// `snapshotStartBatchId` + 1: the snapshot version the rebuild starts from.
    snapshot: Option<i64>,
    repair: Option<bool>,
    limits: StateLimits,
    key_schema: StructType,
    value_schema: StructType,
    /// Rows of the stores loaded so far (bounded by `limits.max_rows`).
    loaded_rows: usize,
    /// The index of the archive's entries the read was prepared on (rebuilt by [`PlainStoreRead::load`] when
    /// handed an archive it does not fit).
    dirs: DirIndex,
}

/// One partition's store, loaded by [`PlainStoreRead::load`].
#[derive(Debug)]
pub struct LoadedStore {
    /// The state partition.
    pub partition: u32,
    /// The store folder (`<root>/state/<op>/<partition>[/<store>]`).
    dir: String,
    raw: RawStore,
}

impl LoadedStore {
    /// Number of rows.
    pub fn rows(&self) -> usize {
        self.raw.len()
    }
}

/// How [`StoreTextWriter::write`] ended.
#[derive(Debug)]
pub enum TextEnd {
    /// Every row was written.
    Written,
    /// The sink asked to stop.
    Stopped,
    /// Row `row` (0-based) does not match its schema: the rows before it were written. [`read_state_text_each`]
    /// ends with this error, once [`PlainStoreRead::row_error`] has added the file the row comes from.
    Failed {
        /// The row's position in the store.
        row: usize,
        /// Why it does not decode.
        error: StateError,
    },
}

/// Writes a plain store's rows as JSON text ([`PlainStoreRead::text_writer`]); holds no archive, so it may run
/// on another thread than the loads.
#[derive(Debug)]
pub struct StoreTextWriter {
    /// Rows are written straight from their UnsafeRows, every field of a struct that repeats a name kept, as
    /// Spark's `toJSON` writes them (an aggregation buffer repeats names: `sum`, `count` of `avg(x), sum(y)`).
    direct: (unsafe_row::RowJsonWriter, unsafe_row::RowJsonWriter),
    key_schema: StructType,
    value_schema: StructType,
    line: String,
}

impl StoreTextWriter {
    /// Hands every row of `store` to `sink` as its JSON text (one object, no newline), in order, each exactly as
    /// [`read_state_text_each`] gives it: straight from the UnsafeRows into one reused buffer (no JSON values
    /// built, no allocation per row), or from the decoded row when it does not write straight.
    pub fn write(&mut self, store: &LoadedStore, sink: &mut dyn FnMut(&str) -> ControlFlow<()>) -> TextEnd {
        let raw = &store.raw;
        for (i, (k, v)) in raw.iter().enumerate() {
            self.line.clear();
            // A row that does not write straight is decoded for the error (`decode_row`'s words).
            if write_pair_json(raw, k, v, &mut self.direct, store.partition, &mut self.line).is_err() {
                match decode_pair(raw, k, v, &self.key_schema, &self.value_schema, &store.dir) {
                    Ok((key, value)) => {
                        self.line.clear();
                        StateRow::new(store.partition, key, value).write_json(&mut self.line);
                    }
                    Err(error) => return TextEnd::Failed { row: i, error },
                }
            }
            if sink(&self.line).is_break() {
                return TextEnd::Stopped;
            }
        }
        TextEnd::Written
    }
}

impl PlainStoreRead {
    /// A read of no partition.
    fn empty(root: &str, q: &StateQuery, limits: &StateLimits) -> Self {
        PlainStoreRead {
            root: root.to_string(),
            operator_id: q.operator_id,
            store_name: q.store_name.clone(),
            parts: Vec::new(),
            version: 0,
            snapshot: None,
            repair: None,
            limits: *limits,
            key_schema: StructType::default(),
            value_schema: StructType::default(),
            loaded_rows: 0,
            dirs: DirIndex::default(),
        }
    }

    /// The partitions read, in order ([`PlainStoreRead::load`] takes an index into them).
    pub fn partitions(&self) -> &[u32] {
        &self.parts
    }

    /// The writer of the stores' rows as JSON text.
    pub fn text_writer(&self) -> StoreTextWriter {
        StoreTextWriter {
            direct: (
                unsafe_row::RowJsonWriter::new(&self.key_schema),
                unsafe_row::RowJsonWriter::new(&self.value_schema),
            ),
            key_schema: self.key_schema.clone(),
            value_schema: self.value_schema.clone(),
            line: String::with_capacity(1024),
        }
    }

    /// Loads the store of the `index`-th partition: the version's snapshot and deltas (HDFS) or its snapshot
    /// and changelogs (RocksDB), rebuilt, rows in key order. Errors as [`read_state_text_each`]'s for that store
    /// (a missing or undecodable file), and more than `limits.max_rows` rows in the stores loaded so far.
    ///
    /// `a` is the archive the read was prepared on ([`plain_store_read`]): its folders are found in the index of
    /// its entries made then, at the cost of the store's own files, not of the whole listing. (Handed an archive
    /// with another number of entries, the read indexes that one first.)
    pub fn load(&mut self, a: &mut dyn Archive, index: usize) -> Result<LoadedStore, StateError> {
        let p = *self.parts.get(index).ok_or_else(|| StateError::new(&self.root, "no such partition index"))?;
        let dir = store_dir(&self.root, self.operator_id, p, &self.store_name);
        self.index_of(a);
        let raw = match self.snapshot {
            Some(s) => change_feed::load_from_snapshot_in(a, &self.dirs, &dir, s, self.version, &self.limits)?,
            None => load_raw_store_in(a, &self.dirs, &dir, self.version, &self.limits, self.repair)?,
        };
        if self.loaded_rows + raw.len() > self.limits.max_rows {
            return Err(StateError::new(dir, format!("more than {} rows", self.limits.max_rows)));
        }
        self.loaded_rows += raw.len();
        Ok(LoadedStore { partition: p, dir, raw })
    }

    /// The error [`read_state_text_each`] ends with for row `row` of `store`, which does not decode
    /// ([`TextEnd::Failed`]): `error` with the file the row comes from and its byte offset when known.
    pub fn row_error(&self, a: &mut dyn Archive, store: &LoadedStore, row: usize, error: StateError) -> StateError {
        let rebuilt;
        let dirs = if self.dirs.fits(a.entries()) {
            &self.dirs
        } else {
            rebuilt = DirIndex::build(a.entries());
            &rebuilt
        };
        at_source(a, dirs, &store.dir, self.version, &self.limits, self.repair, &store.raw, row, error)
    }

    /// Makes `self.dirs` an index of `a`'s entries when it is not one (by its length: see [`DirIndex::fits`]).
    fn index_of(&mut self, a: &dyn Archive) {
        if !self.dirs.fits(a.entries()) {
            self.dirs = DirIndex::build(a.entries());
        }
    }

    /// Every row of `store`, decoded, handed to `sink` ([`read_state_each`]).
    fn emit_rows(&self, a: &mut dyn Archive, store: &LoadedStore, sink: &mut RowSink<'_>) -> Result<(), StateError> {
        for (i, (k, v)) in store.raw.iter().enumerate() {
            let (key, value) = decode_pair(&store.raw, k, v, &self.key_schema, &self.value_schema, &store.dir)
                .map_err(|e| self.row_error(a, store, i, e))?;
            sink(StateRow::new(store.partition, key, value))?;
        }
        Ok(())
    }
}

/// One plain row `{"key":..,"value":..,"partition_id":p}` written into `line` straight from its UnsafeRows
/// ([`unsafe_row::RowJsonWriter`]s of the key and value schemas): the text of [`StateRow::to_json`] for the row
/// [`decode_pair`] gives.
fn write_pair_json(
    raw: &RawStore,
    k: &[u8],
    v: &[u8],
    (kw, vw): &mut (unsafe_row::RowJsonWriter, unsafe_row::RowJsonWriter),
    p: u32,
    line: &mut String,
) -> Result<(), unsafe_row::RowError> {
    line.push_str("{\"key\":");
    kw.write(k.get(raw.key_prefix_len..).unwrap_or(&[]), line)?;
    line.push_str(",\"value\":");
    vw.write(v.get(raw.value_prefix_len..).unwrap_or(&[]), line)?;
    line.push_str(",\"partition_id\":");
    row_json::push_int(line, i64::from(p));
    line.push('}');
    Ok(())
}

/// The `joinSide` view: for each join key of `<side>-keyToNumValues` with count n, the n buffered input rows of
/// `<side>-keyWithIndexToValue` (indexes 0..n), value without the `matched` column of join state format 2
/// (`SymmetricHashJoinStateManager.iterator`, `StreamStreamJoinStatePartitionReader`), handed to `sink`.
/// `dirs`: the index of `a`'s entries.
#[allow(clippy::too_many_arguments)]
pub(super) fn read_join_side(
    a: &mut dyn Archive,
    dirs: &DirIndex,
    root: &str,
    op: i64,
    side: JoinSide,
    version: i64,
    parts: &[u32],
    limits: &StateLimits,
    repair: Option<bool>,
    sink: &mut RowSink<'_>,
) -> Result<(), StateError> {
    let count_store = format!("{}-keyToNumValues", side.name());
    let value_store = format!("{}-keyWithIndexToValue", side.name());
    let (cks, cvs) = store_schemas_in(a, dirs, root, op, &count_store)?;
    let (vks, vvs) = store_schemas_in(a, dirs, root, op, &value_store)?;
    // Join state format 2 appends a boolean `matched` column to the input row.
    let drop_matched = vvs.fields.last().is_some_and(|f| f.name == "matched" && f.data_type == DataType::Boolean);
    let mut emitted = 0usize;
    for &p in parts {
        let cdir = store_dir(root, op, p, &count_store);
        let vdir = store_dir(root, op, p, &value_store);
        let counts = load_raw_store_in(a, dirs, &cdir, version, limits, repair)?;
        let values = load_raw_store_in(a, dirs, &vdir, version, limits, repair)?;
        // (join key JSON text, index) → input row.
        let mut by_key: HashMap<(String, i64), Value> = HashMap::new();
        for (i, (k, v)) in values.iter().enumerate() {
            let (kj, mut vj) = decode_pair(&values, k, v, &vks, &vvs, &vdir)
                .map_err(|e| at_source(a, dirs, &vdir, version, limits, repair, &values, i, e))?;
            let Value::Object(mut km) = kj else { continue };
            let idx = km.remove("index").and_then(|i| i.as_i64()).unwrap_or(-1);
            if drop_matched {
                if let Value::Object(m) = &mut vj {
                    m.remove("matched");
                }
            }
            by_key.insert((Value::Object(km).to_string(), idx), vj);
        }
        for (i, (k, v)) in counts.iter().enumerate() {
            let (kj, cj) = decode_pair(&counts, k, v, &cks, &cvs, &cdir)
                .map_err(|e| at_source(a, dirs, &cdir, version, limits, repair, &counts, i, e))?;
            let n = cj.get("value").and_then(Value::as_i64).unwrap_or(0);
            let ktext = kj.to_string();
            for i in 0..n.max(0) {
                if let Some(vj) = by_key.remove(&(ktext.clone(), i)) {
                    if emitted >= limits.max_rows {
                        return Err(StateError::new(vdir, format!("more than {} rows", limits.max_rows)));
                    }
                    emitted += 1;
                    sink(StateRow::new(p, kj.clone(), vj))?;
                }
            }
        }
    }
    Ok(())
}

/// The operator's name when its stores leave no doubt (no metadata to read it from): the four stream-stream join
/// stores, or a single store whose value row is one `void` field (deduplication's dummy value). `dirs`: the
/// index of `a`'s entries.
pub(super) fn infer_operator_name(
    a: &mut dyn Archive,
    dirs: &DirIndex,
    root: &str,
    op: i64,
    stores: &[String],
) -> Option<String> {
    let join = ["left-keyToNumValues", "left-keyWithIndexToValue", "right-keyToNumValues", "right-keyWithIndexToValue"];
    if stores.len() == 4 && join.iter().all(|j| stores.iter().any(|s| s == j)) {
        return Some("symmetricHashJoin".into());
    }
    if stores.len() == 1 && stores[0] == "default" {
        if let Ok((_, value)) = store_schemas_in(a, dirs, root, op, "default") {
            if value.fields.len() == 1 && value.fields[0].data_type == DataType::Null {
                return Some("dedupe".into());
            }
        }
    }
    None
}

/// The batch a query reads (checked by [`change_feed::resolve_options`]), after the option conflict of the
/// timers.
fn query_batch(root: &str, q: &StateQuery, batch: i64) -> Result<i64, StateError> {
    if q.read_registered_timers && q.state_var.is_some() {
        return Err(StateError::new(
            join(root, &format!("state/{}", q.operator_id)),
            "the options readRegisteredTimers and stateVarName conflict: give one of them",
        )
        .class("STDS_CONFLICT_OPTIONS"));
    }
    Ok(batch)
}

/// The partitions a query reads (all listed, or the one asked for), after Spark's checks: a partition folder
/// missing below the expected count fails the load of `version`, an asked partition must exist. `dirs`: the
/// index of `a`'s entries.
fn partitions_to_read(
    a: &mut dyn Archive,
    dirs: &DirIndex,
    root: &str,
    q: &StateQuery,
    version: i64,
    op_dir: &str,
) -> Result<Vec<u32>, StateError> {
    let mut parts = list_partitions_in(a, dirs, root, q.operator_id);
    if parts.is_empty() {
        return Err(StateError::new(op_dir, "no state partition folders for this operator")
            .class("STDS_NO_PARTITION_DISCOVERED_IN_STATE_STORE"));
    }
    // Spark's stores are partitions 0..numPartitions-1; a missing folder cannot be rebuilt (Spark then fails to
    // load version `version` of that partition, from its first delta on).
    // The count comes from the metadata and may be anything: the missing partition is found against the listed
    // folders (no walk over 0..expected).
    let expected = expected_partitions(a, root, q.operator_id).max(parts.last().map_or(0, |m| i64::from(*m) + 1));
    let wanted_missing = match q.partition {
        Some(p) => Some(i64::from(p)).filter(|p| *p < expected && !parts.iter().any(|x| i64::from(*x) == *p)),
        None => first_missing_partition(&parts, expected),
    };
    if let Some(m) = wanted_missing {
        if version > 0 {
            let beyond_int = if expected > i64::from(i32::MAX) {
                " (more than Spark's Int partition count allows: the operator metadata is not Spark's)"
            } else {
                ""
            };
            return Err(StateError::new(
                format!("{op_dir}/{m}"),
                format!(
                    "state folder of partition {m} is missing ({expected} partitions expected{beyond_int}, {} folders found); version {version} cannot be rebuilt",
                    parts.len()
                ),
            )
            .class("CANNOT_LOAD_STATE_STORE.CANNOT_READ_DELTA_FILE_NOT_EXISTS"));
        }
    }
    if let Some(p) = q.partition {
        if !parts.contains(&p) {
            return Err(StateError::new(format!("{op_dir}/{p}"), format!("partition {p} has no state folder"))
                .class("CANNOT_LOAD_STATE_STORE.SNAPSHOT_PARTITION_ID_NOT_FOUND"));
        }
        parts = vec![p];
    }
    Ok(parts)
}

/// Spark's option checks against the operator metadata (`StateDataSource.runStateVarChecks`): state variable
/// options only for transformWithState, which needs one of them.
fn check_state_var_options(a: &mut dyn Archive, root: &str, q: &StateQuery, op_dir: &str) -> Result<(), StateError> {
    let op_name = operator_name(a, root, q.operator_id);
    let is_tws = op_name.as_deref().is_some_and(|n| TWS_OPERATORS.contains(&n));
    if (q.state_var.is_some() || q.read_registered_timers) && q.join_side.is_none() {
        if let Some(n) = op_name.as_deref().filter(|_| !is_tws) {
            return Err(StateError::new(
                op_dir,
                format!(
                    "Providing state variable names is only supported with the transformWithState operator. Found operator={n}. Please remove this option and re-run the query."
                ),
            )
            .class("STDS_INVALID_OPTION_VALUE.WITH_MESSAGE"));
        }
    } else if is_tws && q.join_side.is_none() {
        return Err(StateError::new(
            op_dir,
            "the transformWithState operator needs the option stateVarName (or readRegisteredTimers)",
        )
        .class("STDS_REQUIRED_OPTION_UNSPECIFIED"));
    }
    Ok(())
}
