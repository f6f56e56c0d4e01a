//! State stores (FORMATS.md §8–§13): the HDFS-backed provider's record files, UnsafeRow decoding, schema files,
//! operator metadata, and the two views Spark's State Data Source (4.0+) gives, for any checkpoint (3.5 too):
//!
//! * [`read_state`]: rows in the shape of `spark.read.format("statestore")` (options `operatorId`, `storeName`,
//!   `stateVarName`, `joinSide`, `batchId`, and a partition filter) — `{"key":{..},"value":{..},"partition_id":n}`.
//! * [`read_state_metadata`]: rows in the shape of `spark.read.format("state-metadata")`.
//!
//! Mirrors `StateDataSource.scala`, `StatePartitionReader.scala`, `StreamStreamJoinStatePartitionReader.scala`
//! and `StateMetadataSource.scala` (sql/core/src/main/scala/org/apache/spark/sql/execution/datasources/v2/state/).
//! The provider is found on disk: `.delta`/`.snapshot` files → HDFS ([`hdfs`]), `.zip`/`.changelog` → RocksDB
//! (see [`load_raw_store`]).

pub mod hdfs;
pub mod operator_metadata;
pub mod rocksdb;
pub mod schema;
pub mod unsafe_row;

use crate::archive::Archive;
use schema::{DataType, StructType};
use serde_json::{Map, Value};
use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::fmt;

/// Which side of a stream-stream join (`joinSide` option).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum JoinSide {
    /// The left input's state.
    Left,
    /// The right input's state.
    Right,
}

impl JoinSide {
    /// `left` / `right`, the prefix of the side's store names.
    pub fn name(self) -> &'static str {
        match self {
            JoinSide::Left => "left",
            JoinSide::Right => "right",
        }
    }
}

/// Options with the meaning of Spark's `statestore` data source.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StateQuery {
    /// `operatorId` (default 0).
    pub operator_id: i64,
    /// `storeName` (default `default`); ignored when `join_side` is set.
    pub store_name: String,
    /// `stateVarName`: the state variable of a transformWithState operator.
    pub state_var: Option<String>,
    /// `joinSide`: read a stream-stream join's side as Spark's joined view (key → each buffered input row).
    pub join_side: Option<JoinSide>,
    /// `batchId`; default the last committed batch. The state version read is `batch_id + 1`.
    pub batch_id: Option<i64>,
    /// Only this partition (Spark reads all and one filters on `partition_id`).
    pub partition: Option<u32>,
    /// `readRegisteredTimers`: read the timers of a transformWithState operator (its `$procTimers_keyToTimestamp`
    /// or `$eventTimers_keyToTimestamp` column family, by the operator's time mode) instead of a state variable.
    /// Conflicts with `state_var`, as in Spark.
    pub read_registered_timers: bool,
    /// `flattenCollectionTypes` (default true): one row per list element (`list_element`) / map entry
    /// (`user_map_key`, `user_map_value`) of a transformWithState `ListState` / `MapState`; false gives one row per
    /// grouping key with `list_value` / `map_value`.
    pub flatten_collection_types: bool,
    /// Spark 4.3's auto snapshot repair while loading RocksDB stores (an unreadable snapshot is skipped and the
    /// version rebuilt from an older one and more changelogs). `None`: as a restart on the newest Spark (4.3)
    /// does, i.e. on unless `spark.sql.streaming.stateStore.autoSnapshotRepair.enabled` is `false` in the offset
    /// log entry of the batch read.
    pub auto_snapshot_repair: Option<bool>,
}

impl Default for StateQuery {
    fn default() -> Self {
        StateQuery {
            operator_id: 0,
            store_name: "default".into(),
            state_var: None,
            join_side: None,
            batch_id: None,
            partition: None,
            read_registered_timers: false,
            flatten_collection_types: true,
            auto_snapshot_repair: None,
        }
    }
}

/// One row in the shape of Spark's statestore reader (`{"key":{..},"value":{..},"partition_id":0}`), or of its
/// transformWithState shapes (`SchemaUtil.generateSchemaForStateVar` in Spark 4.x):
///
/// | state variable | columns (in order) |
/// |---|---|
/// | any store, `ValueState` | `key`, `value`, `partition_id` |
/// | `ListState` (flattened) | `key`, `list_element`, `partition_id` |
/// | `ListState`, `flattenCollectionTypes=false` | `key`, `list_value`, `partition_id` |
/// | `MapState` (flattened) | `key`, `user_map_key`, `user_map_value`, `partition_id` |
/// | `MapState`, `flattenCollectionTypes=false` | `key`, `map_value`, `partition_id` |
/// | timers (`readRegisteredTimers`) | `key`, `expiration_timestamp_ms`, `partition_id` |
///
/// Columns a shape does not have are `None` (and `value` is `Value::Null`); [`StateRow::to_json`] leaves them out
/// exactly as Spark's `toJSON` leaves out null columns.
#[derive(Debug, Clone, PartialEq)]
pub struct StateRow {
    /// State partition the row lives in.
    pub partition_id: u32,
    /// The key row as `toJSON` writes it (for `MapState` and timers: the grouping key).
    pub key: Value,
    /// The value row as `toJSON` writes it; `Value::Null` for shapes without a `value` column.
    pub value: Value,
    /// `list_element`: one element of a `ListState` (flattened).
    pub list_element: Option<Value>,
    /// `list_value`: every element of a `ListState` (not flattened), as `toJSON` writes an array of structs.
    pub list_value: Option<Vec<Value>>,
    /// `map_value`: a `MapState` (not flattened) as `toJSON` writes a map whose keys are structs: each key is the
    /// user key row's `UnsafeRow.toString` (`[hex word,hex word,..]`), each value the value row.
    pub map_value: Option<Map<String, Value>>,
    /// `user_map_key`: the user key of one `MapState` entry (flattened).
    pub user_map_key: Option<Value>,
    /// `user_map_value`: the value of one `MapState` entry (flattened).
    pub user_map_value: Option<Value>,
    /// `expiration_timestamp_ms`: a registered timer's expiry, ms since the epoch.
    pub expiration_timestamp_ms: Option<i64>,
}

impl StateRow {
    /// A row of the plain `key`, `value`, `partition_id` shape.
    pub fn new(partition_id: u32, key: Value, value: Value) -> Self {
        StateRow {
            partition_id,
            key,
            value,
            list_element: None,
            list_value: None,
            map_value: None,
            user_map_key: None,
            user_map_value: None,
            expiration_timestamp_ms: None,
        }
    }

    /// The row as one JSON object in Spark's column order (`{"key":..,"value":..,"partition_id":..}` for the
    /// plain shape); null columns are left out, as `toJSON` does.
    pub fn to_json(&self) -> Value {
        let mut m = Map::new();
        if !self.key.is_null() {
            m.insert("key".into(), self.key.clone());
        }
        if let Some(e) = &self.list_element {
            m.insert("list_element".into(), e.clone());
        }
        if let Some(l) = &self.list_value {
            m.insert("list_value".into(), Value::Array(l.clone()));
        }
        if let Some(k) = &self.user_map_key {
            m.insert("user_map_key".into(), k.clone());
        }
        if let Some(v) = &self.user_map_value {
            m.insert("user_map_value".into(), v.clone());
        }
        if let Some(mv) = &self.map_value {
            m.insert("map_value".into(), Value::Object(mv.clone()));
        }
        if let Some(t) = self.expiration_timestamp_ms {
            m.insert("expiration_timestamp_ms".into(), t.into());
        }
        if !self.value.is_null() {
            m.insert("value".into(), self.value.clone());
        }
        m.insert("partition_id".into(), self.partition_id.into());
        Value::Object(m)
    }
}

/// One row of Spark's `state-metadata` data source.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StateMetadataRow {
    /// `operatorId`.
    pub operator_id: i64,
    /// `operatorName`; `None` when the checkpoint has no operator metadata (Spark 3.5 writes none).
    pub operator_name: Option<String>,
    /// `stateStoreName`.
    pub state_store_name: String,
    /// `numPartitions` (from the metadata, else the partition folders found).
    pub num_partitions: i64,
    /// `minBatchId`: the first batch in `commits/` (-1 when none).
    pub min_batch_id: i64,
    /// `maxBatchId`: the last batch in `commits/` (-1 when none).
    pub max_batch_id: i64,
    /// `operatorProperties` (operator metadata v2 only).
    pub operator_properties: Option<String>,
    /// Hidden column `_numColsPrefixKey`.
    pub num_cols_prefix_key: i64,
    /// The state store provider found on disk.
    pub provider: Provider,
    /// True when `operator_name` was not read from operator metadata but inferred from the stores (checkpoints
    /// written before Spark 4.0 have no metadata): join store names → `symmetricHashJoin`, a value row of one
    /// `void` field → `dedupe`.
    pub operator_name_inferred: bool,
}

impl StateMetadataRow {
    /// The row as Spark's `toJSON` writes it (null columns left out, hidden columns not shown).
    pub fn to_json(&self) -> Value {
        let mut m = Map::new();
        m.insert("operatorId".into(), self.operator_id.into());
        if let Some(n) = &self.operator_name {
            m.insert("operatorName".into(), n.clone().into());
        }
        m.insert("stateStoreName".into(), self.state_store_name.clone().into());
        m.insert("numPartitions".into(), self.num_partitions.into());
        m.insert("minBatchId".into(), self.min_batch_id.into());
        m.insert("maxBatchId".into(), self.max_batch_id.into());
        if let Some(p) = &self.operator_properties {
            m.insert("operatorProperties".into(), p.clone().into());
        }
        Value::Object(m)
    }
}

/// Which state store provider wrote a store.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Provider {
    /// `HDFSBackedStateStoreProvider`: `<v>.delta` / `<v>.snapshot`.
    Hdfs,
    /// `RocksDBStateStoreProvider`: `<v>.zip`, `<v>.changelog`, `SSTs/`.
    RocksDb,
    /// No state file found.
    Unknown,
}

impl Provider {
    /// `hdfs`, `rocksdb` or `unknown` (the report contract's names).
    pub fn name(self) -> &'static str {
        match self {
            Provider::Hdfs => "hdfs",
            Provider::RocksDb => "rocksdb",
            Provider::Unknown => "unknown",
        }
    }
}

/// Why state cannot be read: the file (relative to the archive), the byte offset when known, Spark's error
/// class for the same failure when it has one.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StateError {
    /// Path inside the archive of the file or folder concerned.
    pub path: String,
    /// Byte offset in that file (compressed file offsets for codec errors; for record errors the offset in the
    /// decompressed stream, see `message`).
    pub offset: Option<u64>,
    /// Plain-words explanation.
    pub message: String,
    /// Spark's error class for this failure (4.x names, `PARENT.SUB`), when there is one.
    pub error_class: Option<String>,
}

impl StateError {
    pub(crate) fn new(path: impl Into<String>, message: impl Into<String>) -> Self {
        StateError { path: path.into(), offset: None, message: message.into(), error_class: None }
    }
    pub(crate) fn at(mut self, offset: u64) -> Self {
        self.offset = Some(offset);
        self
    }
    pub(crate) fn class(mut self, c: &str) -> Self {
        self.error_class = Some(c.to_string());
        self
    }
}

impl fmt::Display for StateError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.path)?;
        // The offset once: messages that already name it ("lz4 block starting at byte 0 ...") are not repeated.
        if let Some(o) = self.offset.filter(|o| !self.message.contains(&format!("byte {o} "))) {
            write!(f, " (byte {o})")?;
        }
        write!(f, ": {}", self.message)?;
        if let Some(c) = &self.error_class {
            write!(f, " [{c}]")?;
        }
        Ok(())
    }
}

impl std::error::Error for StateError {}

/// A store's content handed from a provider to decoding: key bytes → value bytes exactly as the provider stores
/// them. Decoding skips the first `key_prefix_len` / `value_prefix_len` bytes (HDFS: 0; RocksDB: the version byte
/// and, with virtual column families, the 2-byte family id) and reads the rest as an UnsafeRow.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RawStore {
    /// (key, value) pairs, in no particular order.
    pub pairs: Vec<(Vec<u8>, Vec<u8>)>,
    /// Bytes before the key's UnsafeRow.
    pub key_prefix_len: usize,
    /// Bytes before the value's UnsafeRow.
    pub value_prefix_len: usize,
}

/// Bounds for reading state. Sizes in bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct StateLimits {
    /// Largest state file read from the archive.
    pub max_file_bytes: u64,
    /// Largest decompressed state file.
    pub max_decompressed_bytes: usize,
    /// Most rows returned by one [`read_state`] call.
    pub max_rows: usize,
}

impl Default for StateLimits {
    fn default() -> Self {
        StateLimits { max_file_bytes: 256 << 20, max_decompressed_bytes: 1 << 30, max_rows: 50_000_000 }
    }
}

/// `root` joined with a relative path (`root` "" = archive top).
pub(crate) fn join(root: &str, rel: &str) -> String {
    let r = root.trim_matches('/');
    if r.is_empty() {
        rel.to_string()
    } else {
        format!("{r}/{rel}")
    }
}

/// Names of the direct children (files and folders) of `dir` in the archive, with whether each is a file.
pub(crate) fn children(a: &dyn Archive, dir: &str) -> BTreeMap<String, bool> {
    let prefix = if dir.is_empty() { String::new() } else { format!("{}/", dir.trim_end_matches('/')) };
    let mut out = BTreeMap::new();
    for e in a.entries() {
        if let Some(rest) = e.path.strip_prefix(&prefix) {
            if rest.is_empty() {
                continue;
            }
            match rest.split_once('/') {
                Some((first, _)) => {
                    out.insert(first.to_string(), false);
                }
                None => {
                    out.entry(rest.to_string()).or_insert(!e.is_dir);
                }
            }
        }
    }
    out
}

/// Store names of an operator as found on disk: `default` when partition folders hold state files directly, plus
/// every sub-folder of a partition other than `_metadata` and `SSTs` (join stores, named stores).
pub fn store_names(a: &dyn Archive, root: &str, operator_id: i64) -> Vec<String> {
    let mut stores = BTreeSet::new();
    for p in list_partitions(a, root, operator_id) {
        for (name, is_file) in children(a, &store_dir(root, operator_id, p, "default")) {
            if is_file {
                if !name.starts_with('.') {
                    stores.insert("default".to_string());
                }
            } else if name != "_metadata" && name != "SSTs" {
                stores.insert(name);
            }
        }
    }
    stores.into_iter().collect()
}

/// Checkpoint roots of an archive that hold state: every folder `R` with `R/state/<op>/<partition or _metadata>/…`
/// ("" = the archive top), shortest first.
pub fn find_state_roots(a: &dyn Archive) -> Vec<String> {
    let mut roots = BTreeSet::new();
    for e in a.entries() {
        let segs: Vec<&str> = e.path.split('/').collect();
        for i in 0..segs.len().saturating_sub(2) {
            let numeric = |s: &str| !s.is_empty() && s.bytes().all(|c| c.is_ascii_digit());
            if segs[i] == "state" && numeric(segs[i + 1]) && (numeric(segs[i + 2]) || segs[i + 2] == "_metadata") {
                roots.insert(segs[..i].join("/"));
                break;
            }
        }
    }
    let mut v: Vec<String> = roots.into_iter().collect();
    v.sort_by_key(|r| (r.matches('/').count() + usize::from(!r.is_empty()), r.clone()));
    v
}

/// Batch ids present in `<root>/commits/` (files whose whole name is a batch id, as
/// [`crate::log::parse_batch_file_name`] reads them: `0..=`[`crate::log::MAX_BATCH_ID`]), ascending. Larger
/// names are hand-made files Spark never writes (the diagnosis reports them); they are not batches here, so
/// `batch + 1` (the state version) never overflows.
pub fn committed_batches(a: &dyn Archive, root: &str) -> Vec<i64> {
    let mut v: Vec<i64> = children(a, &join(root, "commits"))
        .into_iter()
        .filter(|(_, is_file)| *is_file)
        .filter_map(|(n, _)| crate::log::parse_batch_file_name(&n, false).map(|(b, _)| b))
        .collect();
    v.sort_unstable();
    v
}

/// The newest file of `<root>/offsets/` (by batch id, as [`committed_batches`] reads names), parsed by the offset
/// log reader; `None` when there is none or it does not parse.
pub fn last_offsets(a: &mut dyn Archive, root: &str) -> Option<crate::log::offsets::OffsetSeq> {
    let dir = join(root, "offsets");
    let batch = children(a, &dir)
        .into_iter()
        .filter(|(_, is_file)| *is_file)
        .filter_map(|(n, _)| crate::log::parse_batch_file_name(&n, false).map(|(b, _)| b))
        .max()?;
    let raw = a.read(&format!("{dir}/{batch}"), 16 << 20).ok()?;
    crate::log::offsets::parse(&raw).ok()
}

/// Partition ids of `state/<op>/` (folders whose name is an integer), ascending.
pub fn list_partitions(a: &dyn Archive, root: &str, operator_id: i64) -> Vec<u32> {
    let mut v: Vec<u32> = children(a, &join(root, &format!("state/{operator_id}")))
        .into_iter()
        .filter(|(n, is_file)| !*is_file && n.bytes().all(|c| c.is_ascii_digit()))
        .filter_map(|(n, _)| n.parse().ok())
        .collect();
    v.sort_unstable();
    v
}

/// Operator ids under `state/` (folders whose name is an integer), ascending.
pub fn list_operators(a: &dyn Archive, root: &str) -> Vec<i64> {
    let mut v: Vec<i64> = children(a, &join(root, "state"))
        .into_iter()
        .filter(|(n, is_file)| !*is_file && n.bytes().all(|c| c.is_ascii_digit()))
        .filter_map(|(n, _)| n.parse().ok())
        .collect();
    v.sort_unstable();
    v
}

/// The folder of one store of one partition: `state/<op>/<part>` for `default`, else `state/<op>/<part>/<store>`.
pub fn store_dir(root: &str, operator_id: i64, partition: u32, store_name: &str) -> String {
    if store_name == "default" {
        join(root, &format!("state/{operator_id}/{partition}"))
    } else {
        join(root, &format!("state/{operator_id}/{partition}/{store_name}"))
    }
}

/// Which provider wrote the files directly inside `store_dir`.
pub fn detect_provider(a: &dyn Archive, store_dir: &str) -> Provider {
    let kids = children(a, store_dir);
    let mut hdfs = false;
    let mut rocks = false;
    for (name, is_file) in &kids {
        if !is_file {
            rocks |= name == "SSTs";
            continue;
        }
        if name.starts_with('.') {
            continue;
        }
        hdfs |= name.ends_with(".delta") || name.ends_with(".snapshot");
        rocks |= name.ends_with(".zip") || name.ends_with(".changelog");
    }
    match (hdfs, rocks) {
        (true, false) => Provider::Hdfs,
        (false, true) => Provider::RocksDb,
        (true, true) => Provider::Hdfs,
        (false, false) => Provider::Unknown,
    }
}

/// Loads one store of one partition at `version` with the provider found on disk. RocksDB stores are loaded
/// with Spark 4.3's auto snapshot repair unless the checkpoint's offset log turns it off (see
/// [`StateQuery::auto_snapshot_repair`]).
pub fn load_raw_store(
    a: &mut dyn Archive,
    store_dir: &str,
    version: i64,
    limits: &StateLimits,
) -> Result<RawStore, StateError> {
    load_raw_store_repair(a, store_dir, version, limits, None)
}

/// [`load_raw_store`] with auto snapshot repair as asked (`None`: as a 4.3 restart would).
pub fn load_raw_store_repair(
    a: &mut dyn Archive,
    store_dir: &str,
    version: i64,
    limits: &StateLimits,
    repair: Option<bool>,
) -> Result<RawStore, StateError> {
    match detect_provider(a, store_dir) {
        Provider::Hdfs => hdfs::load_store(a, store_dir, version, limits),
        Provider::RocksDb => load_rocksdb_store(a, store_dir, version, limits, repair),
        Provider::Unknown if version > 0 && rocksdb::state_view::sibling_is_rocksdb(a, store_dir) => {
            load_rocksdb_store(a, store_dir, version, limits, repair)
        }
        Provider::Unknown => {
            if version == 0 {
                Ok(RawStore::default())
            } else {
                Err(StateError::new(
                    store_dir,
                    format!("no state files for version {version} (folder empty or absent)"),
                )
                .class("CANNOT_LOAD_STATE_STORE.CANNOT_READ_DELTA_FILE_NOT_EXISTS"))
            }
        }
    }
}

/// RocksDB stores are read by [`rocksdb`]: key and value UnsafeRows with the RocksDB prefixes removed.
fn load_rocksdb_store(
    a: &mut dyn Archive,
    store_dir: &str,
    version: i64,
    limits: &StateLimits,
    repair: Option<bool>,
) -> Result<RawStore, StateError> {
    rocksdb::state_view::load_for_state(a, store_dir, version, limits, repair)
}

/// The key and value schemas of a store: the schema file v1/v2 under partition 0
/// (`state/<op>/0/[<store>/]_metadata/schema`).
pub fn store_schemas(
    a: &mut dyn Archive,
    root: &str,
    operator_id: i64,
    store_name: &str,
) -> Result<(StructType, StructType), StateError> {
    let path = format!("{}/_metadata/schema", store_dir(root, operator_id, 0, store_name));
    let known = store_names(a, root, operator_id);
    if !known.is_empty() && !known.iter().any(|k| k == store_name) {
        return Err(StateError::new(
            join(root, &format!("state/{operator_id}")),
            format!("operator {operator_id} has no state store named {store_name:?}; its stores: {}", known.join(", ")),
        ));
    }
    let bytes = a.read(&path, 16 << 20).map_err(|e| {
        StateError::new(&path, format!("cannot read the state schema file: {e}"))
            .class("STDS_FAILED_TO_READ_STATE_SCHEMA")
    })?;
    let f = schema::parse_schema_file(&bytes).map_err(|e| {
        StateError::new(&path, e.message.clone()).at(e.offset).class("STDS_FAILED_TO_READ_STATE_SCHEMA")
    })?;
    Ok((f.key, f.value))
}

/// Path of the operator metadata file Spark's state reader uses for an operator: the newest
/// `state/<op>/_metadata/v2/<batchId>` (transformWithState, 4.0+), else `state/<op>/_metadata/metadata` (v1);
/// `None` when neither is in the archive. Mirrors `OperatorStateMetadataReader` and `StateMetadataSource`
/// (apache/spark sql/core/.../execution/streaming/state/OperatorStateMetadata.scala).
pub fn operator_metadata_path(a: &dyn Archive, root: &str, operator_id: i64) -> Option<String> {
    let meta_dir = join(root, &format!("state/{operator_id}/_metadata"));
    let latest_v2 = children(a, &format!("{meta_dir}/v2"))
        .into_iter()
        .filter(|(n, f)| *f && !n.is_empty() && n.bytes().all(|c| c.is_ascii_digit()))
        .filter_map(|(n, _)| n.parse::<i64>().ok())
        .max();
    match latest_v2 {
        Some(b) => Some(format!("{meta_dir}/v2/{b}")),
        None => {
            let p = format!("{meta_dir}/metadata");
            a.entries().iter().any(|e| e.path == p).then_some(p)
        }
    }
}

/// The operator metadata Spark's state reader uses for an operator ([`operator_metadata_path`]), parsed; `None`
/// when absent or unreadable.
fn read_operator_metadata(
    a: &mut dyn Archive,
    root: &str,
    operator_id: i64,
) -> Option<operator_metadata::OperatorMetadata> {
    let path = operator_metadata_path(a, root, operator_id)?;
    let bytes = a.read(&path, 16 << 20).ok()?;
    operator_metadata::parse_operator_metadata(&bytes).ok()
}

/// The operator name recorded in the operator metadata (latest v2, else v1), when readable.
fn operator_name(a: &mut dyn Archive, root: &str, operator_id: i64) -> Option<String> {
    read_operator_metadata(a, root, operator_id).map(|m| m.operator_name)
}

/// Operator names of transformWithState (`StateDataSource.twsShortNameSeq`).
const TWS_OPERATORS: [&str; 3] =
    ["transformWithStateExec", "transformWithStateInPandasExec", "transformWithStateInPySparkExec"];

/// Number of partitions the operator metadata records for an operator (largest over its stores), 0 when there is
/// no readable metadata.
pub fn expected_partitions(a: &mut dyn Archive, root: &str, operator_id: i64) -> i64 {
    read_operator_metadata(a, root, operator_id)
        .map_or(0, |m| m.stores.iter().map(|s| s.num_partitions).max().unwrap_or(0))
}

/// The smallest partition id in `0..expected` with no folder in `parts` (ascending), in O(`parts.len()`) whatever
/// `expected` claims.
fn first_missing_partition(parts: &[u32], expected: i64) -> Option<i64> {
    let mut next: i64 = 0;
    for &p in parts {
        let p = i64::from(p);
        if p < next {
            continue;
        }
        if p > next {
            break;
        }
        next += 1;
    }
    (next < expected).then_some(next)
}

/// The last committed batch (highest id in `commits/`), as Spark's reader defaults `batchId` to.
pub fn last_committed_batch(a: &dyn Archive, root: &str) -> Option<i64> {
    committed_batches(a, root).last().copied()
}

/// `e` (a row of `raw`, the store of `store_dir` at `version`, failed to decode) re-pointed at the file the
/// `index`-th pair came from and the record's offset ([`hdfs::locate_key`], [`rocksdb::locate_key`]); unchanged
/// when the file cannot be found. Re-reads the store's files: error path only.
#[allow(clippy::too_many_arguments)]
fn at_source(
    a: &mut dyn Archive,
    store_dir: &str,
    version: i64,
    limits: &StateLimits,
    repair: Option<bool>,
    raw: &RawStore,
    index: usize,
    e: StateError,
) -> StateError {
    let src = match detect_provider(a, store_dir) {
        Provider::Hdfs => raw.pairs.get(index).and_then(|(k, _)| hdfs::locate_key(a, store_dir, version, k, limits)),
        Provider::RocksDb | Provider::Unknown => {
            rocksdb::state_view::locate_pair(a, store_dir, version, limits, repair, index)
        }
    };
    match src {
        Some(s) => s.annotate(e),
        None => e,
    }
}

fn decode_pair(
    raw: &RawStore,
    k: &[u8],
    v: &[u8],
    ks: &StructType,
    vs: &StructType,
    dir: &str,
) -> Result<(Value, Value), StateError> {
    let key = k.get(raw.key_prefix_len..).unwrap_or(&[]);
    let val = v.get(raw.value_prefix_len..).unwrap_or(&[]);
    let kj = unsafe_row::decode_row(key, ks).map_err(|e| {
        StateError::new(dir, format!("key row does not match the key schema {}: {}", ks.simple_string(), e))
            .class("CANNOT_LOAD_STATE_STORE.KEY_ROW_FORMAT_VALIDATION_FAILURE")
    })?;
    let vj = unsafe_row::decode_row(val, vs).map_err(|e| {
        StateError::new(dir, format!("value row does not match the value schema {}: {}", vs.simple_string(), e))
            .class("CANNOT_LOAD_STATE_STORE.VALUE_ROW_FORMAT_VALIDATION_FAILURE")
    })?;
    Ok((kj, vj))
}

/// Reads state rows as Spark's `statestore` data source does (see [`StateQuery`]), with default limits.
///
/// Errors ([`StateError`], naming the file): no committed batch and no `batch_id`; no such operator or
/// partition; a missing or undecodable schema file, delta or snapshot; a row that does not match its schema.
pub fn read_state(a: &mut dyn Archive, root: &str, q: &StateQuery) -> Result<Vec<StateRow>, StateError> {
    read_state_with_limits(a, root, q, &StateLimits::default())
}

/// [`read_state`] with explicit limits.
pub fn read_state_with_limits(
    a: &mut dyn Archive,
    root: &str,
    q: &StateQuery,
    limits: &StateLimits,
) -> Result<Vec<StateRow>, StateError> {
    let batch = match q.batch_id {
        Some(b) if b < 0 => return Err(StateError::new(join(root, "commits"), format!("batchId {b} is negative"))),
        Some(b) if b > crate::log::MAX_BATCH_ID => {
            return Err(StateError::new(
                join(root, "commits"),
                format!("batchId {b} is beyond any batch Spark writes (at most 2^60)"),
            )
            .class("STDS_INVALID_OPTION_VALUE.WITH_MESSAGE"))
        }
        Some(b) => b,
        None => last_committed_batch(a, root).ok_or_else(|| {
            StateError::new(join(root, "commits"), "no committed batch: give a batch id")
                .class("STDS_COMMITTED_BATCH_UNAVAILABLE")
        })?,
    };
    if q.read_registered_timers && q.state_var.is_some() {
        return Err(StateError::new(
            join(root, &format!("state/{}", q.operator_id)),
            "the options readRegisteredTimers and stateVarName conflict: give one of them",
        )
        .class("STDS_CONFLICT_OPTIONS"));
    }
    let version = batch.checked_add(1).ok_or_else(|| {
        StateError::new(join(root, "commits"), format!("batchId {batch}: state version {batch} + 1 overflows"))
    })?;
    let op_dir = join(root, &format!("state/{}", q.operator_id));
    let mut parts = list_partitions(a, root, q.operator_id);
    if parts.is_empty() {
        return Err(StateError::new(&op_dir, "no state partition folders for this operator")
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
    if let Some(side) = q.join_side {
        return read_join_side(a, root, q.operator_id, side, version, &parts, limits, q.auto_snapshot_repair);
    }
    // Spark's option checks against the operator metadata (`StateDataSource.runStateVarChecks`).
    let op_name = operator_name(a, root, q.operator_id);
    let is_tws = op_name.as_deref().is_some_and(|n| TWS_OPERATORS.contains(&n));
    if (q.state_var.is_some() || q.read_registered_timers) && q.join_side.is_none() {
        if let Some(n) = op_name.as_deref().filter(|_| !is_tws) {
            return Err(StateError::new(
                &op_dir,
                format!(
                    "Providing state variable names is only supported with the transformWithState operator. Found operator={n}. Please remove this option and re-run the query."
                ),
            )
            .class("STDS_INVALID_OPTION_VALUE.WITH_MESSAGE"));
        }
    } else if is_tws && q.join_side.is_none() {
        return Err(StateError::new(
            &op_dir,
            "the transformWithState operator needs the option stateVarName (or readRegisteredTimers)",
        )
        .class("STDS_REQUIRED_OPTION_UNSPECIFIED"));
    }
    if q.state_var.is_some() || q.read_registered_timers {
        let dir = store_dir(root, q.operator_id, parts[0], &q.store_name);
        if detect_provider(a, &dir) != Provider::RocksDb {
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
        let opts = rocksdb::state_view::VarReadOptions {
            flatten_collection_types: q.flatten_collection_types,
            auto_snapshot_repair: q.auto_snapshot_repair,
        };
        return rocksdb::state_view::read_state_var(
            a,
            root,
            q.operator_id,
            &q.store_name,
            &target,
            batch,
            &parts,
            limits,
            &opts,
        );
    }
    let (ks, vs) = store_schemas(a, root, q.operator_id, &q.store_name)?;
    let mut rows = Vec::new();
    for p in parts {
        let dir = store_dir(root, q.operator_id, p, &q.store_name);
        let raw = load_raw_store_repair(a, &dir, version, limits, q.auto_snapshot_repair)?;
        if rows.len() + raw.pairs.len() > limits.max_rows {
            return Err(StateError::new(dir, format!("more than {} rows", limits.max_rows)));
        }
        for (i, (k, v)) in raw.pairs.iter().enumerate() {
            let (key, value) = decode_pair(&raw, k, v, &ks, &vs, &dir)
                .map_err(|e| at_source(a, &dir, version, limits, q.auto_snapshot_repair, &raw, i, e))?;
            rows.push(StateRow::new(p, key, value));
        }
    }
    Ok(rows)
}

/// The `joinSide` view: for each join key of `<side>-keyToNumValues` with count n, the n buffered input rows of
/// `<side>-keyWithIndexToValue` (indexes 0..n), value without the `matched` column of join state format 2
/// (`SymmetricHashJoinStateManager.iterator`, `StreamStreamJoinStatePartitionReader`).
#[allow(clippy::too_many_arguments)]
fn read_join_side(
    a: &mut dyn Archive,
    root: &str,
    op: i64,
    side: JoinSide,
    version: i64,
    parts: &[u32],
    limits: &StateLimits,
    repair: Option<bool>,
) -> Result<Vec<StateRow>, StateError> {
    let count_store = format!("{}-keyToNumValues", side.name());
    let value_store = format!("{}-keyWithIndexToValue", side.name());
    let (cks, cvs) = store_schemas(a, root, op, &count_store)?;
    let (vks, vvs) = store_schemas(a, root, op, &value_store)?;
    // Join state format 2 appends a boolean `matched` column to the input row.
    let drop_matched = vvs.fields.last().is_some_and(|f| f.name == "matched" && f.data_type == DataType::Boolean);
    let mut rows = Vec::new();
    for &p in parts {
        let cdir = store_dir(root, op, p, &count_store);
        let vdir = store_dir(root, op, p, &value_store);
        let counts = load_raw_store_repair(a, &cdir, version, limits, repair)?;
        let values = load_raw_store_repair(a, &vdir, version, limits, repair)?;
        // (join key JSON text, index) → input row.
        let mut by_key: HashMap<(String, i64), Value> = HashMap::new();
        for (i, (k, v)) in values.pairs.iter().enumerate() {
            let (kj, mut vj) = decode_pair(&values, k, v, &vks, &vvs, &vdir)
                .map_err(|e| at_source(a, &vdir, version, limits, repair, &values, i, e))?;
            let Value::Object(mut km) = kj else { continue };
            let idx = km.remove("index").and_then(|i| i.as_i64()).unwrap_or(-1);
            if drop_matched {
                if let Value::Object(m) = &mut vj {
                    m.remove("matched");
                }
            }
            by_key.insert((Value::Object(km).to_string(), idx), vj);
        }
        for (i, (k, v)) in counts.pairs.iter().enumerate() {
            let (kj, cj) = decode_pair(&counts, k, v, &cks, &cvs, &cdir)
                .map_err(|e| at_source(a, &cdir, version, limits, repair, &counts, i, e))?;
            let n = cj.get("value").and_then(Value::as_i64).unwrap_or(0);
            let ktext = kj.to_string();
            for i in 0..n.max(0) {
                if let Some(vj) = by_key.remove(&(ktext.clone(), i)) {
                    if rows.len() >= limits.max_rows {
                        return Err(StateError::new(vdir, format!("more than {} rows", limits.max_rows)));
                    }
                    rows.push(StateRow::new(p, kj.clone(), vj));
                }
            }
        }
    }
    Ok(rows)
}

/// The operator's name when its stores leave no doubt (no metadata to read it from): the four stream-stream join
/// stores, or a single store whose value row is one `void` field (deduplication's dummy value).
fn infer_operator_name(a: &mut dyn Archive, root: &str, op: i64, stores: &[String]) -> Option<String> {
    let join = ["left-keyToNumValues", "left-keyWithIndexToValue", "right-keyToNumValues", "right-keyWithIndexToValue"];
    if stores.len() == 4 && join.iter().all(|j| stores.iter().any(|s| s == j)) {
        return Some("symmetricHashJoin".into());
    }
    if stores.len() == 1 && stores[0] == "default" {
        if let Ok((_, value)) = store_schemas(a, root, op, "default") {
            if value.fields.len() == 1 && value.fields[0].data_type == DataType::Null {
                return Some("dedupe".into());
            }
        }
    }
    None
}

/// Reads the `state-metadata` view: one row per operator and store. Operator name, store names and partition
/// counts come from the operator metadata (v2 for the latest batch if present, else v1); when a checkpoint has
/// none (Spark 3.5), from the folders on disk. `minBatchId`/`maxBatchId` are the first and last batches in
/// `commits/`.
pub fn read_state_metadata(a: &mut dyn Archive, root: &str) -> Result<Vec<StateMetadataRow>, StateError> {
    let batches = committed_batches(a, root);
    let (min_b, max_b) = (batches.first().copied().unwrap_or(-1), batches.last().copied().unwrap_or(-1));
    let mut out = Vec::new();
    for op in list_operators(a, root) {
        let parts = list_partitions(a, root, op);
        let meta_path = operator_metadata_path(a, root, op);
        let provider_of = |a: &dyn Archive, store: &str| {
            parts.first().map(|&p| detect_provider(a, &store_dir(root, op, p, store))).unwrap_or(Provider::Unknown)
        };
        if let Some(path) = meta_path {
            let bytes = a.read(&path, 16 << 20).map_err(|e| {
                StateError::new(&path, format!("cannot read operator metadata: {e}"))
                    .class("STDS_FAILED_TO_READ_OPERATOR_METADATA")
            })?;
            let m = operator_metadata::parse_operator_metadata(&bytes).map_err(|e| {
                StateError::new(&path, e.message.clone()).at(e.offset).class("STDS_FAILED_TO_READ_OPERATOR_METADATA")
            })?;
            for s in &m.stores {
                out.push(StateMetadataRow {
                    operator_id: m.operator_id,
                    operator_name: Some(m.operator_name.clone()),
                    state_store_name: s.store_name.clone(),
                    num_partitions: s.num_partitions,
                    min_batch_id: min_b,
                    max_batch_id: max_b,
                    operator_properties: m.operator_properties_json.clone(),
                    num_cols_prefix_key: s.num_cols_prefix_key,
                    provider: provider_of(a, &s.store_name),
                    operator_name_inferred: false,
                });
            }
            continue;
        }
        // No metadata: stores are the folders under the partitions (or `default` when files sit directly there).
        let stores = store_names(a, root, op);
        let inferred = infer_operator_name(a, root, op, &stores);
        for s in stores {
            out.push(StateMetadataRow {
                operator_id: op,
                operator_name: inferred.clone(),
                operator_name_inferred: inferred.is_some(),
                provider: provider_of(a, &s),
                state_store_name: s,
                num_partitions: parts.len() as i64,
                min_batch_id: min_b,
                max_batch_id: max_b,
                operator_properties: None,
                num_cols_prefix_key: 0,
            });
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests;
