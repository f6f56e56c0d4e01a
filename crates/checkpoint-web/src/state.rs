//! The page's state browser: a bounded, paged view over the core's state reader ([`checkpoint_core::state`]).
//!
//! Nothing here runs during the diagnosis: the page asks for it only when the user opens the State tab.
//!
//! * [`state_overview`]: operators, their stores (provider, partitions, stored schemas as trees, transformWithState
//!   state variables, join sides), the committed batches, and the state size on disk per version (from the
//!   listing; RocksDB `numKeys` and SST sizes from each `<v>.zip`'s metadata, read only when small).
//! * [`load_state`]: decodes one selection (operator + store / state variable / join side, at a batch) into a
//!   [`LoadedState`] the worker keeps, with per-partition row counts and bytes; [`LoadedState::page`] filters it by
//!   partition and key substring and cuts one page.

use checkpoint_core::dir_index::DirIndex;
use checkpoint_core::state::schema::{DataType, StructType};
use checkpoint_core::state::{
    self, rocksdb, schema, JoinSide, Provider, StateError, StateLimits, StateQuery, StateRow,
};
use checkpoint_core::Archive;
use serde::Deserialize;
use serde_json::{json, Map, Value};
use std::collections::BTreeMap;

/// Largest `<v>.zip` whose metadata the overview reads for `numKeys` and SST sizes, in bytes.
pub const MAX_ZIP_META_BYTES: u64 = 4 << 20;
/// Most `<v>.zip` files the overview opens (the rest count by their own size only).
pub const MAX_ZIP_META_READS: usize = 2_000;
/// Largest page the page may ask for.
pub const MAX_PAGE_SIZE: usize = 1_000;
/// Most rows one selection decodes in the browser (the rows are kept in the worker's memory for paging).
pub const MAX_LOADED_ROWS: usize = 2_000_000;

/// What the page selects (JSON: `{"operator_id":0,"store_name":"default","state_var":null,"join_side":null,
/// "batch_id":null,"read_registered_timers":false,"read_change_feed":false,"change_start_batch_id":null,
/// "change_end_batch_id":null}`); the meanings are those of Spark's `statestore` source options, and so are the
/// checks: [`Self::to_query`] passes every option on, and the core's reader refuses what Spark refuses (a
/// `batch_id` with `read_change_feed`, a change batch id without it, a negative or out-of-range one), with Spark's
/// error class.
#[derive(Debug, Clone, Default, Deserialize, PartialEq, Eq)]
#[serde(default)]
pub struct StateSelection {
    /// `operatorId`.
    pub operator_id: i64,
    /// `storeName` (`default` when empty).
    pub store_name: String,
    /// `stateVarName` (transformWithState).
    pub state_var: Option<String>,
    /// `joinSide`: `left` or `right`.
    pub join_side: Option<String>,
    /// `batchId`; `None` = the last committed batch.
    pub batch_id: Option<i64>,
    /// `readRegisteredTimers` (transformWithState): the operator's timers instead of a state variable.
    pub read_registered_timers: bool,
    /// `readChangeFeed`: the changes of each batch in `change_start_batch_id..=change_end_batch_id` (rows with
    /// `batch_id` and `change_type`) instead of the state at one batch.
    pub read_change_feed: bool,
    /// `changeStartBatchId` (required with `read_change_feed`).
    pub change_start_batch_id: Option<i64>,
    /// `changeEndBatchId`; `None` = the last committed batch.
    pub change_end_batch_id: Option<i64>,
}

impl StateSelection {
    /// The core's query for this selection.
    ///
    /// Errors: a `join_side` other than `left`/`right`.
    pub fn to_query(&self) -> Result<StateQuery, StateError> {
        let join_side = match self.join_side.as_deref().filter(|s| !s.is_empty()) {
            None => None,
            Some("left") => Some(JoinSide::Left),
            Some("right") => Some(JoinSide::Right),
            Some(other) => {
                return Err(StateError {
                    path: String::new(),
                    offset: None,
                    message: format!("joinSide must be left or right, not {other:?}"),
                    error_class: Some("STDS_INVALID_OPTION_VALUE.WITH_MESSAGE".into()),
                })
            }
        };
        let store = if self.store_name.is_empty() { "default".to_string() } else { self.store_name.clone() };
        Ok(StateQuery {
            operator_id: self.operator_id,
            store_name: store,
            state_var: self.state_var.clone().filter(|s| !s.is_empty()),
            join_side,
            batch_id: self.batch_id,
            partition: None,
            read_registered_timers: self.read_registered_timers,
            read_change_feed: self.read_change_feed,
            change_start_batch_id: self.change_start_batch_id,
            change_end_batch_id: self.change_end_batch_id,
            ..StateQuery::default()
        })
    }
}

/// A state error as the page shows it: `{path, offset, message, error_class}`.
pub fn error_json(e: &StateError) -> Value {
    json!({"path": e.path, "offset": e.offset, "message": e.message, "error_class": e.error_class})
}

/// A data type as a tree node: `{type, fields?/element?/key?/value?}` (`type` is Spark's simple string).
fn type_tree(t: &DataType) -> Value {
    match t {
        DataType::Struct(s) => json!({"type": "struct", "fields": struct_fields(s)}),
        DataType::Array { element, contains_null } => {
            json!({"type": t.simple_string(), "element": type_tree(element), "contains_null": contains_null})
        }
        DataType::Map { key, value, value_contains_null } => json!({"type": t.simple_string(),
            "key": type_tree(key), "value": type_tree(value), "value_contains_null": value_contains_null}),
        other => json!({"type": other.simple_string()}),
    }
}

fn struct_fields(s: &StructType) -> Vec<Value> {
    s.fields
        .iter()
        .map(|f| {
            let mut node = type_tree(&f.data_type);
            if let Value::Object(m) = &mut node {
                m.insert("name".into(), Value::String(f.name.clone()));
                m.insert("nullable".into(), Value::Bool(f.nullable));
            }
            node
        })
        .collect()
}

/// A struct type as a tree: `{type:"struct", simple, fields:[{name, type, nullable, fields?...}]}`.
pub fn schema_tree(s: &StructType) -> Value {
    json!({"type": "struct", "simple": s.simple_string(), "fields": struct_fields(s)})
}

/// Version of a state file name: `<v>.delta`, `<v>.snapshot`, `<v>[_<id>].zip`, `<v>[_<id>].changelog` (the
/// core's one parser, [`checkpoint_core::state_files::parse_state_file_name`]).
fn file_version(name: &str) -> Option<(i64, &'static str)> {
    use checkpoint_core::restart_chain::ChainFileKind as K;
    let f = checkpoint_core::state_files::parse_state_file_name(name)?;
    Some((
        f.version,
        match f.kind {
            K::Delta => "delta",
            K::Snapshot => "snapshot",
            K::Zip => "zip",
            K::Changelog => "changelog",
        },
    ))
}

/// Per-version size of one store over all partitions.
#[derive(Default)]
struct VersionStat {
    bytes: u64,
    files: u64,
    num_keys: Option<i64>,
    kinds: BTreeMap<&'static str, u64>,
}

/// The files of one operator's partition folders, by (store, partition): (path relative to the store's folder,
/// archive path, size). `default` is the partition folder itself (with its `SSTs/`, `logs/`); other stores are its
/// sub-folders. Hidden files (`.crc`, temp files) and `_metadata/` are left out. One pass over the listing.
type OperatorFiles = BTreeMap<(String, u32), Vec<(String, String, u64)>>;

fn operator_files(a: &dyn Archive, root: &str, op: i64) -> OperatorFiles {
    // The core's listing of the state tree; files kept in archive order.
    let r = root.trim_matches('/');
    let base = if r.is_empty() { String::new() } else { format!("{r}/") };
    let tree = checkpoint_core::state_files::list_state_in(a.entries(), r);
    let order: BTreeMap<&str, usize> = a.entries().iter().enumerate().map(|(i, e)| (e.path.as_str(), i)).collect();
    let mut out: OperatorFiles = BTreeMap::new();
    let Some(o) = tree.operators.get(&op) else { return out };
    for (p, pf) in &o.partitions {
        for (store, s) in &pf.stores {
            let dir = format!("{}/", s.dir);
            let mut v: Vec<(usize, (String, String, u64))> = s
                .all_files()
                .filter_map(|f| {
                    let rel = f.path.strip_prefix(&dir)?;
                    if rel.starts_with("_metadata/") || rel.rsplit('/').next().is_some_and(|n| n.starts_with('.')) {
                        return None;
                    }
                    let path = format!("{base}{}", f.path);
                    Some((order.get(path.as_str()).copied().unwrap_or(usize::MAX), (rel.to_string(), path, f.size)))
                })
                .collect();
            if v.is_empty() {
                continue;
            }
            v.sort_by_key(|x| x.0);
            out.insert((store.clone(), *p), v.into_iter().map(|x| x.1).collect());
        }
    }
    out
}

/// Bytes of the files of a store in each partition (incl. `SSTs/`), 0 for a partition without any.
fn partition_file_bytes(files: &OperatorFiles, store: &str, parts: &[u32]) -> Vec<(u32, u64)> {
    parts
        .iter()
        .map(|&p| {
            let total =
                files.get(&(store.to_string(), p)).map_or(0, |v| v.iter().map(|f| f.2).fold(0u64, u64::saturating_add));
            (p, total)
        })
        .collect()
}

/// State size on disk per version of one store (all partitions): delta/snapshot/zip/changelog sizes from the
/// listing, plus for RocksDB the SSTs each `<v>.zip`'s metadata lists (and its `numKeys`) when the zip is small.
fn version_sizes(
    a: &mut dyn Archive,
    files: &OperatorFiles,
    store: &str,
    parts: &[u32],
    zip_reads: &mut usize,
    notes: &mut Vec<Value>,
) -> Vec<Value> {
    let mut by_v: BTreeMap<i64, VersionStat> = BTreeMap::new();
    for &p in parts {
        let Some(list) = files.get(&(store.to_string(), p)) else { continue };
        for (name, path, size) in list.iter().filter(|f| !f.0.contains('/')) {
            let (name, size) = (name.as_str(), *size);
            let Some((v, kind)) = file_version(name) else { continue };
            let st = by_v.entry(v).or_default();
            st.bytes = st.bytes.saturating_add(size);
            st.files += 1;
            *st.kinds.entry(kind).or_default() += size;
            if kind == "zip" && size <= MAX_ZIP_META_BYTES && *zip_reads < MAX_ZIP_META_READS {
                *zip_reads += 1;
                match a.read(path, MAX_ZIP_META_BYTES) {
                    Ok(bytes) => match rocksdb::zip_meta::read_version_zip(&bytes, Default::default()) {
                        Ok(z) => {
                            let sst: u64 = z.metadata.sst_files.iter().map(|f| f.size_bytes).sum();
                            st.bytes = st.bytes.saturating_add(sst);
                            st.files += z.metadata.sst_files.len() as u64;
                            *st.kinds.entry("sst").or_default() += sst;
                            if let Some(n) = z.metadata.num_keys {
                                st.num_keys = Some(st.num_keys.unwrap_or(0).saturating_add(n));
                            }
                        }
                        Err(e) => notes.push(json!({"path": path, "offset": e.offset, "message": e.to_string()})),
                    },
                    Err(e) => notes.push(json!({"path": path, "offset": null, "message": e.to_string()})),
                }
            }
        }
    }
    by_v.into_iter()
        .map(|(v, s)| {
            json!({"version": v, "batch_id": v - 1, "bytes": s.bytes, "files": s.files,
            "num_keys": s.num_keys, "by_kind": s.kinds})
        })
        .collect()
}

/// Latest StateSchemaV3 file of a store (`state/<op>/_stateSchema/<store>/<batch>_<uuid>`), parsed.
fn schema_v3(a: &mut dyn Archive, root: &str, op: i64, store: &str) -> Option<Result<Value, Value>> {
    let rel = format!("state/{op}/_stateSchema/{store}/");
    let dir = if root.is_empty() { rel } else { format!("{}/{rel}", root.trim_matches('/')) };
    let mut best: Option<(i64, String)> = None;
    for e in a.entries() {
        let Some(name) = e.path.strip_prefix(&dir) else { continue };
        if e.is_dir || name.contains('/') || name.starts_with('.') {
            continue;
        }
        let Some(b) = name.split_once('_').and_then(|(b, _)| b.parse::<i64>().ok()) else { continue };
        if best.as_ref().is_none_or(|(bb, _)| b > *bb) {
            best = Some((b, e.path.clone()));
        }
    }
    let (_, path) = best?;
    let bytes = match a.read(&path, 16 << 20) {
        Ok(b) => b,
        Err(e) => return Some(Err(json!({"path": path, "offset": null, "message": e.to_string()}))),
    };
    Some(match schema::parse_schema_v3_file(&bytes) {
        Ok(cfs) => Ok(json!({"path": path, "column_families": cfs.iter().map(|c| json!({
            "name": c.column_family,
            "internal": c.column_family.starts_with('$') || c.column_family == "default",
            "key": schema_tree(&c.key), "value": schema_tree(&c.value)})).collect::<Vec<_>>()})),
        Err(e) => Err(json!({"path": path, "offset": e.offset, "message": e.message})),
    })
}

/// Everything the State tab shows before any row is decoded (see the module doc). Shape:
/// `{root, roots, committed_batches:{first,last,count}, metadata:[Spark's state-metadata rows] | metadata_error,
///   operators:[{operator_id, operator_name, partitions, join, stores:[{name, provider, partitions,
///   partition_bytes:[[p, bytes]], schema:{key,value} | schema_error, schema_v3?, state_vars:[..],
///   versions:[{version, batch_id, bytes, files, num_keys, by_kind}]}]}], notes:[{path, offset, message}]}`.
pub fn state_overview(a: &mut dyn Archive) -> Value {
    let roots = state::find_state_roots(a);
    let root = roots.first().cloned().unwrap_or_default();
    let batches = state::committed_batches(a, &root);
    let mut notes = Vec::new();
    let (metadata, metadata_error) = match state::read_state_metadata(a, &root) {
        Ok(rows) => (rows, Value::Null),
        Err(e) => (Vec::new(), error_json(&e)),
    };
    let mut zip_reads = 0usize;
    let mut operators = Vec::new();
    // The listing indexed once: the folders of every partition and store are ranges of it.
    let dirs = DirIndex::build(a.entries());
    let ops = if roots.is_empty() { Vec::new() } else { state::list_operators(a, &root) };
    for op in ops {
        let parts = state::list_partitions_in(a, &dirs, &root, op);
        let files = operator_files(a, &root, op);
        let name = metadata.iter().find(|m| m.operator_id == op).and_then(|m| m.operator_name.clone());
        let mut store_names = state::store_names_in(a, &dirs, &root, op);
        for m in metadata.iter().filter(|m| m.operator_id == op) {
            if !store_names.contains(&m.state_store_name) {
                store_names.push(m.state_store_name.clone());
            }
        }
        let join =
            ["left-keyToNumValues", "left-keyWithIndexToValue", "right-keyToNumValues", "right-keyWithIndexToValue"]
                .iter()
                .all(|j| store_names.iter().any(|s| s == j));
        let mut stores = Vec::new();
        for s in &store_names {
            let provider = parts
                .iter()
                .map(|&p| state::detect_provider_in(a, &dirs, &state::store_dir(&root, op, p, s)))
                .find(|p| *p != Provider::Unknown)
                .unwrap_or(Provider::Unknown);
            let mut store = Map::new();
            store.insert("name".into(), json!(s));
            store.insert("provider".into(), json!(provider.name()));
            let store_parts: Vec<u32> =
                parts.iter().copied().filter(|&p| files.contains_key(&(s.clone(), p))).collect();
            store.insert("partitions".into(), json!(store_parts));
            store.insert("partition_bytes".into(), json!(partition_file_bytes(&files, s, &parts)));
            let v3 = schema_v3(a, &root, op, s);
            match state::store_schemas_in(a, &dirs, &root, op, s) {
                Ok((k, v)) => {
                    store.insert("schema".into(), json!({"key": schema_tree(&k), "value": schema_tree(&v)}));
                }
                Err(e) if v3.is_none() => {
                    store.insert("schema_error".into(), error_json(&e));
                }
                Err(_) => {}
            }
            let mut vars = Vec::new();
            match v3 {
                Some(Ok(v)) => {
                    if let Some(cfs) = v["column_families"].as_array() {
                        vars = cfs.iter().filter(|c| c["internal"] == false).map(|c| c["name"].clone()).collect();
                    }
                    store.insert("schema_v3".into(), v);
                }
                Some(Err(e)) => {
                    store.insert("schema_error".into(), e);
                }
                None => {}
            }
            store.insert("state_vars".into(), Value::Array(vars));
            store.insert("versions".into(), json!(version_sizes(a, &files, s, &parts, &mut zip_reads, &mut notes)));
            stores.push(Value::Object(store));
        }
        operators.push(json!({"operator_id": op, "operator_name": name, "partitions": parts, "join": join,
            "stores": stores}));
    }
    json!({
        "root": root,
        "roots": roots,
        "committed_batches": {"first": batches.first(), "last": batches.last(), "count": batches.len()},
        "metadata": metadata.iter().map(|m| m.to_json()).collect::<Vec<_>>(),
        "metadata_error": metadata_error,
        "operators": operators,
        "notes": notes,
    })
}

/// Per-partition totals of a decoded selection.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PartitionStat {
    /// Partition id.
    pub partition: u32,
    /// Rows decoded.
    pub rows: u64,
    /// Bytes of the rows' JSON text (key + value): the decoded size.
    pub decoded_bytes: u64,
    /// Bytes of the files under the partition's store folder(s), incl. `SSTs/`.
    pub file_bytes: u64,
}

/// One decoded selection, kept by the worker between pages.
#[derive(Debug, Clone)]
pub struct LoadedState {
    /// What was asked.
    pub selection: StateSelection,
    /// The batch read (the last committed one when the selection gives none); for a change feed its last batch.
    pub batch_id: i64,
    /// For a change feed (`read_change_feed`): the batches whose changes were read, `(start, end)` inclusive.
    pub change_range: Option<(i64, i64)>,
    /// Every row, in the reader's order (partition by partition).
    pub rows: Vec<StateRow>,
    /// Lower-cased key JSON text of each row (what the search matches).
    key_text: Vec<String>,
    /// Totals by partition, ascending, incl. partitions without rows.
    pub partitions: Vec<PartitionStat>,
    /// Milliseconds spent decoding (filled in by the caller).
    pub ms: f64,
}

/// Decodes one selection with the core's reader ([`state::read_state`]) at the first state root of the archive.
///
/// Errors: the core's [`StateError`] (naming the file and, where known, the byte offset).
pub fn load_state(a: &mut dyn Archive, sel: &StateSelection) -> Result<LoadedState, StateError> {
    let root = state::find_state_roots(a).into_iter().next().unwrap_or_default();
    let q = sel.to_query()?;
    let limits = StateLimits { max_rows: MAX_LOADED_ROWS, ..StateLimits::default() };
    // The reader checks the options as Spark does (and fails before reading anything when they are wrong).
    let rows = state::read_state_with_limits(a, &root, &q, &limits)?;
    let last = || state::last_committed_batch(a, &root).unwrap_or(-1);
    let (batch_id, change_range) = match (q.read_change_feed, q.change_start_batch_id) {
        (true, Some(start)) => {
            let end = q.change_end_batch_id.unwrap_or_else(last);
            (end, Some((start, end)))
        }
        _ => (q.batch_id.unwrap_or_else(last), None),
    };
    let parts = state::list_partitions(a, &root, q.operator_id);
    let files = operator_files(a, &root, q.operator_id);
    let stores: Vec<String> = match q.join_side {
        Some(side) => vec![format!("{}-keyToNumValues", side.name()), format!("{}-keyWithIndexToValue", side.name())],
        None => vec![q.store_name.clone()],
    };
    let mut stats: BTreeMap<u32, PartitionStat> =
        parts.iter().map(|&p| (p, PartitionStat { partition: p, ..Default::default() })).collect();
    for s in &stores {
        for (p, b) in partition_file_bytes(&files, s, &parts) {
            let st = stats.entry(p).or_insert_with(|| PartitionStat { partition: p, ..Default::default() });
            st.file_bytes = st.file_bytes.saturating_add(b);
        }
    }
    let mut key_text = Vec::with_capacity(rows.len());
    for r in &rows {
        let k = r.key.to_string();
        let vlen = r.value.to_string().len() as u64;
        let st = stats
            .entry(r.partition_id)
            .or_insert_with(|| PartitionStat { partition: r.partition_id, ..Default::default() });
        st.rows += 1;
        st.decoded_bytes = st.decoded_bytes.saturating_add(k.len() as u64 + vlen);
        key_text.push(k.to_lowercase());
    }
    Ok(LoadedState {
        selection: sel.clone(),
        batch_id,
        change_range,
        rows,
        key_text,
        partitions: stats.into_values().collect(),
        ms: 0.0,
    })
}

impl LoadedState {
    /// One page of rows: those of `partition` (all when `None`) whose key JSON contains `search`
    /// (case-insensitive; empty = all), page `page` (0-based) of `page_size` rows (1..=[`MAX_PAGE_SIZE`]).
    /// Shape: `{batch_id, change_feed, total_rows, matching_rows, page, page_size, pages, rows:[{partition_id,key,
    /// value}], partitions:[{partition, rows, decoded_bytes, file_bytes}], ms}`; `change_feed` is `null`, or
    /// `{start_batch_id, end_batch_id}` for a change feed, whose rows also carry `batch_id` and `change_type`
    /// (Spark's columns, [`StateRow::to_json`]).
    pub fn page(&self, partition: Option<u32>, search: &str, page: usize, page_size: usize) -> Value {
        let page_size = page_size.clamp(1, MAX_PAGE_SIZE);
        let needle = search.trim().to_lowercase();
        let matching: Vec<usize> = (0..self.rows.len())
            .filter(|&i| partition.is_none_or(|p| self.rows[i].partition_id == p))
            .filter(|&i| needle.is_empty() || self.key_text[i].contains(&needle))
            .collect();
        let pages = matching.len().div_ceil(page_size).max(1);
        let page = page.min(pages - 1);
        let rows: Vec<Value> =
            matching.iter().skip(page * page_size).take(page_size).map(|&i| self.rows[i].to_json()).collect();
        json!({
            "batch_id": self.batch_id,
            "change_feed": self.change_range.map(|(s, e)| json!({"start_batch_id": s, "end_batch_id": e})),
            "total_rows": self.rows.len(),
            "matching_rows": matching.len(),
            "page": page,
            "page_size": page_size,
            "pages": pages,
            "rows": rows,
            "partitions": self.partitions.iter().map(|p| json!({"partition": p.partition, "rows": p.rows,
                "decoded_bytes": p.decoded_bytes, "file_bytes": p.file_bytes})).collect::<Vec<_>>(),
            "ms": self.ms,
        })
    }
}
