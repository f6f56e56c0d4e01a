//! State stores (FORMATS.md §8–§13): the HDFS-backed provider's record files, UnsafeRow decoding, schema files,
//! operator metadata, and the two views Spark's State Data Source (4.0+) gives, for any checkpoint (3.5 too):
//!
//! * [`read_state`]: rows in the shape of `spark.read.format("statestore")` (options `operatorId`, `storeName`,
//!   `stateVarName`, `joinSide`, `batchId`, and a partition filter) — `{"key":{..},"value":{..},"partition_id":n}`.
//! * [`read_state_metadata`]: rows in the shape of `spark.read.format("state-metadata")`.
//! * [`read_state_each`]: [`read_state`]'s rows handed to a sink as they are decoded; with the `readChangeFeed`
//!   and `snapshotStartBatchId` options of [`StateQuery`] ([`change_feed`]).
//!
//! Mirrors `StateDataSource.scala`, `StatePartitionReader.scala`, `StreamStreamJoinStatePartitionReader.scala`
//! and `StateMetadataSource.scala` (sql/core/src/main/scala/org/apache/spark/sql/execution/datasources/v2/state/).
//! The provider is found on disk: `.delta`/`.snapshot` files → HDFS ([`hdfs`]), `.zip`/`.changelog` → RocksDB
//! (see [`load_raw_store`]).

pub mod change_feed;
pub mod hdfs;
pub mod operator_metadata;
mod raw_store;
pub mod rocksdb;
mod row_json;
pub mod schema;
mod state_metadata;
mod statestore;
mod store;
pub mod unsafe_row;
pub mod value_text;

pub use raw_store::RawStore;
pub(crate) use raw_store::StoreBuilder;
pub use state_metadata::*;
pub use statestore::*;
pub use store::*;

use serde_json::{Map, Value};
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
    /// `readChangeFeed` (Spark 4.0+): instead of the state at a batch, the changes of each batch in
    /// `change_start_batch_id..=change_end_batch_id`, one row per put (`change_type` `update`) or removal
    /// (`delete`, no value), with its `batch_id` (see [`change_feed`]). Conflicts with `batch_id`, `join_side`
    /// and the snapshot options, as in Spark.
    pub read_change_feed: bool,
    /// `changeStartBatchId`: first batch of the change feed (required with `read_change_feed`, only allowed
    /// with it). Signed as Spark's option is: a negative value is Spark's `IS_NEGATIVE` error.
    pub change_start_batch_id: Option<i64>,
    /// `changeEndBatchId`: last batch of the change feed; default the last committed batch.
    pub change_end_batch_id: Option<i64>,
    /// `snapshotStartBatchId`: rebuild the state of `batch_id` from the snapshot written for this batch (state
    /// version `+ 1`: HDFS `<v>.snapshot`, RocksDB `<v>.zip`) and the deltas / changelogs after it, instead of
    /// the newest snapshot. Needs `snapshot_partition_id`, as in Spark.
    pub snapshot_start_batch_id: Option<i64>,
    /// `snapshotPartitionId`: the one partition read with `snapshot_start_batch_id` (each partition has its own
    /// snapshots). Needs `snapshot_start_batch_id`.
    pub snapshot_partition_id: Option<i64>,
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
            read_change_feed: false,
            change_start_batch_id: None,
            change_end_batch_id: None,
            snapshot_start_batch_id: None,
            snapshot_partition_id: None,
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
/// | change feed (`readChangeFeed`) | `batch_id`, `change_type`, `key`, `value`, `partition_id` |
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
    /// `batch_id` of a change feed row: the batch whose delta / changelog (state version `batch_id + 1`) holds
    /// the change.
    pub batch_id: Option<i64>,
    /// `change_type` of a change feed row: `update` (a put), `delete` (a removal; `value` is null) or `append`
    /// (a merge), Spark's `RecordType.getRecordTypeAsString`.
    pub change_type: Option<&'static str>,
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
            batch_id: None,
            change_type: None,
        }
    }

    /// The row as one JSON object in Spark's column order (`{"key":..,"value":..,"partition_id":..}` for the
    /// plain shape); null columns are left out, as `toJSON` does.
    pub fn to_json(&self) -> Value {
        let mut m = Map::new();
        if let Some(b) = self.batch_id {
            m.insert("batch_id".into(), b.into());
        }
        if let Some(t) = self.change_type {
            m.insert("change_type".into(), t.into());
        }
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

    /// Appends [`StateRow::to_json`]'s text to `out` (the same bytes as `to_json().to_string()`, without copying
    /// the row's values into a new object).
    pub fn write_json(&self, out: &mut String) {
        fn col(out: &mut String, first: &mut bool, name: &str) {
            out.push(if *first { '{' } else { ',' });
            *first = false;
            out.push('"');
            out.push_str(name);
            out.push_str("\":");
        }
        fn json<T: serde::Serialize + ?Sized>(out: &mut String, v: &T) {
            out.push_str(&serde_json::to_string(v).unwrap_or_default());
        }
        let mut first = true;
        let f = &mut first;
        if let Some(b) = self.batch_id {
            col(out, f, "batch_id");
            row_json::push_int(out, b);
        }
        if let Some(t) = self.change_type {
            col(out, f, "change_type");
            json(out, t);
        }
        if !self.key.is_null() {
            col(out, f, "key");
            json(out, &self.key);
        }
        if let Some(e) = &self.list_element {
            col(out, f, "list_element");
            json(out, e);
        }
        if let Some(l) = &self.list_value {
            col(out, f, "list_value");
            json(out, l);
        }
        if let Some(k) = &self.user_map_key {
            col(out, f, "user_map_key");
            json(out, k);
        }
        if let Some(v) = &self.user_map_value {
            col(out, f, "user_map_value");
            json(out, v);
        }
        if let Some(mv) = &self.map_value {
            col(out, f, "map_value");
            json(out, mv);
        }
        if let Some(t) = self.expiration_timestamp_ms {
            col(out, f, "expiration_timestamp_ms");
            row_json::push_int(out, t);
        }
        if !self.value.is_null() {
            col(out, f, "value");
            json(out, &self.value);
        }
        col(out, f, "partition_id");
        row_json::push_int(out, i64::from(self.partition_id));
        out.push('}');
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
    /// The operator metadata file the row was read from (`state/<op>/_metadata/v2/<batch>` or
    /// `state/<op>/_metadata/metadata`); `None` when the operator has none and the row comes from the state
    /// folders. Spark's `state-metadata` source then returns no row at all, for any operator of the checkpoint
    /// (`StateMetadataPartitionReader.allOperatorStateMetadata` catches the failure to read one operator's
    /// metadata and returns an empty array).
    pub metadata_file: Option<String>,
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

#[cfg(test)]
mod dirs_tests;
#[cfg(test)]
mod tests;
