//! The Delta table's `_delta_log` as read: the model the Delta checks judge. Built by [`super::reader`]
//! from an [`crate::Archive`]; every fact carries the log file it came from.
//!
//! Terms follow delta-io/delta: a *commit* is `<v>.json` (`FileNames.deltaFile`), a *checkpoint* a classic
//! single file `<v>.checkpoint.parquet`, a multi-part one `<v>.checkpoint.<part>.<parts>.parquet`, or a v2
//! one `<v>.checkpoint.<uuid>.{json,parquet}` with sidecars in `_sidecars/`; `_last_checkpoint` points at the
//! newest; `<a>.<b>.compacted.json` are log compaction files. A snapshot at version `v` needs a complete
//! checkpoint at `c <= v` (or none and commit 0) and every commit `c+1..=v` (`SnapshotManagement.
//! validateDeltaVersions`; compacted files are not counted, as Delta first validates the segment without them).

use crate::model::Problem;
use std::collections::BTreeMap;

/// `commitInfo` of a commit: when and what.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct CommitInfo {
    /// `commitInfo.timestamp` (ms).
    pub timestamp: Option<i64>,
    /// `commitInfo.inCommitTimestamp` (ms), written when `delta.enableInCommitTimestamps` is on.
    pub in_commit_timestamp: Option<i64>,
    /// `commitInfo.operation`, e.g. `WRITE`, `DELETE`, `DROP COLUMNS`.
    pub operation: Option<String>,
    /// `commitInfo.operationParameters.mode` when present (`Append`, `Overwrite`).
    pub mode: Option<String>,
    /// `commitInfo.engineInfo` (or delta-rs's `clientVersion`).
    pub engine: Option<String>,
}

/// A `metaData` action.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct TableMetadata {
    /// `metaData.id`: the table id (the stream's `reservoirId`).
    pub id: String,
    /// `metaData.schemaString` (a Spark StructType as JSON).
    pub schema_string: String,
    /// `metaData.partitionColumns`.
    pub partition_columns: Vec<String>,
    /// `metaData.configuration`: the table properties.
    pub configuration: BTreeMap<String, String>,
    /// `metaData.createdTime` (ms).
    pub created_time: Option<i64>,
}

impl TableMetadata {
    /// A table property.
    pub fn conf(&self, key: &str) -> Option<&str> {
        self.configuration.get(key).map(String::as_str)
    }
    /// `delta.columnMapping.mode` (`none` when unset).
    pub fn column_mapping_mode(&self) -> &str {
        self.conf("delta.columnMapping.mode").unwrap_or("none")
    }
    /// A boolean table property (Delta's `toBoolean`: `true` in any case).
    pub fn flag(&self, key: &str) -> bool {
        self.conf(key).is_some_and(|v| v.trim().eq_ignore_ascii_case("true"))
    }
}

/// A `protocol` action.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Protocol {
    /// `minReaderVersion`.
    pub min_reader_version: i64,
    /// `minWriterVersion`.
    pub min_writer_version: i64,
    /// `readerFeatures` (reader version 3).
    pub reader_features: Vec<String>,
    /// `writerFeatures` (writer version 7).
    pub writer_features: Vec<String>,
}

/// A data file's `add` or `remove` as far as the checks need it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileAction {
    /// The data file path (relative to the table, as in the log).
    pub path: String,
    /// `dataChange`.
    pub data_change: bool,
    /// `size` in bytes, when recorded.
    pub size: Option<i64>,
    /// `remove.deletionTimestamp` (ms) for a remove.
    pub deletion_timestamp: Option<i64>,
}

/// One commit file `<v>.json`.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Commit {
    /// The table version.
    pub version: i64,
    /// Path inside the input.
    pub path: String,
    /// Bytes.
    pub size: u64,
    /// The file's last-modified time, when the input records one (log cleanup judges expiry by it).
    pub modified_ms: Option<i64>,
    /// `commitInfo`, when present.
    pub commit_info: Option<CommitInfo>,
    /// `metaData`, when the commit changes it.
    pub metadata: Option<TableMetadata>,
    /// `protocol`, when the commit changes it.
    pub protocol: Option<Protocol>,
    /// `add` actions (paths kept up to the reader's cap).
    pub adds: Vec<FileAction>,
    /// `remove` actions.
    pub removes: Vec<FileAction>,
    /// `cdc` actions (change data files).
    pub cdc_files: u64,
    /// True when the commit did not parse (what is above was read before the damage).
    pub damaged: bool,
}

impl Commit {
    /// The commit's time as Delta's streaming source and time travel use it: the in-commit timestamp
    /// when recorded, else `commitInfo.timestamp`, else the file's modification time.
    pub fn timestamp(&self) -> Option<i64> {
        let ci = self.commit_info.as_ref();
        ci.and_then(|c| c.in_commit_timestamp).or(ci.and_then(|c| c.timestamp)).or(self.modified_ms)
    }
    /// `remove`s with `dataChange = true`: a delete, update, merge or overwrite (what stops a stream).
    pub fn data_change_removes(&self) -> impl Iterator<Item = &FileAction> {
        self.removes.iter().filter(|r| r.data_change)
    }
    /// The operation name, with its mode when recorded (`WRITE (Overwrite)`).
    pub fn operation(&self) -> String {
        let ci = self.commit_info.as_ref();
        let op = ci.and_then(|c| c.operation.as_deref()).unwrap_or("unknown operation");
        match ci.and_then(|c| c.mode.as_deref()) {
            Some(m) => format!("{op} ({m})"),
            None => op.to_string(),
        }
    }
}

/// The layout of a checkpoint.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CheckpointLayout {
    /// `<v>.checkpoint.parquet`.
    Classic,
    /// `<v>.checkpoint.<part>.<parts>.parquet`.
    MultiPart {
        /// The number of parts the name declares.
        parts: u32,
    },
    /// `<v>.checkpoint.<uuid>.{json,parquet}`, with `sidecar` actions naming files in `_sidecars/`.
    V2 {
        /// The sidecar files it names.
        sidecars: Vec<String>,
    },
}

/// One checkpoint (all its files).
#[derive(Debug, Clone, PartialEq)]
pub struct Checkpoint {
    /// The table version it holds.
    pub version: i64,
    /// Its layout.
    pub layout: CheckpointLayout,
    /// Its files inside the input (parts, or the v2 top file and its sidecars).
    pub files: Vec<String>,
    /// Files the layout needs that are absent (missing parts or sidecars): of a multi-part checkpoint the first
    /// [`crate::delta::reader::MAX_MISSING_NAMED`] parts, then one entry `and N more parts of M`.
    pub missing: Vec<String>,
    /// The `metaData` it holds.
    pub metadata: Option<TableMetadata>,
    /// The `protocol` it holds.
    pub protocol: Option<Protocol>,
    /// Number of `add` actions (live data files at `version`).
    pub num_adds: u64,
    /// `remove` actions (tombstones kept for VACUUM).
    pub removes: Vec<FileAction>,
    /// True when a file of it did not read or parse.
    pub damaged: bool,
    /// True when a file of it was not verified ([`DeltaLog::not_verified`]): its actions are not counted.
    pub not_verified: bool,
}

impl Checkpoint {
    /// Delta uses a checkpoint only when every file of it is there and readable.
    pub fn complete(&self) -> bool {
        self.missing.is_empty() && !self.damaged
    }
}

/// `_last_checkpoint`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LastCheckpoint {
    /// `version`.
    pub version: i64,
    /// `parts`, for a multi-part checkpoint.
    pub parts: Option<i64>,
    /// True when it carries a `v2Checkpoint` entry.
    pub v2: bool,
}

/// A Delta table's `_delta_log`, as read.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct DeltaLog {
    /// The input it came from (file name).
    pub input: String,
    /// The `_delta_log` folder inside the input (`""` when the input is the folder itself).
    pub dir: String,
    /// Commit files by version.
    pub commits: BTreeMap<i64, Commit>,
    /// Checkpoints by version (the best instance of each: complete over incomplete).
    pub checkpoints: BTreeMap<i64, Checkpoint>,
    /// `_last_checkpoint`, when present and readable.
    pub last_checkpoint: Option<LastCheckpoint>,
    /// Log compaction files `(start, end, path)`.
    pub compacted: Vec<(i64, i64, String)>,
    /// Other files of the folder (checksums `<v>.crc`, `_commits/` unbackfilled commits, ...): path and size.
    pub other_files: Vec<(String, u64)>,
    /// Commit versions listed but not read (over the reader's byte budget), newest first skipped last.
    pub not_read: Vec<i64>,
    /// Files that did not read or parse (path, byte offset, why).
    pub problems: Vec<Problem>,
    /// Files the input could not give or a limit of this inspector kept from being read (a checkpoint part over
    /// [`crate::delta::reader::MAX_CHECKPOINT_BYTES`], a zip entry that does not unpack): not verified, no damage.
    /// A checkpoint with such a part is taken as complete (Delta reads it) and `Checkpoint::not_verified`.
    pub not_verified: Vec<Problem>,
}

impl DeltaLog {
    /// Path of a file of the log as the user sees it (`_delta_log/<name>`).
    pub fn display_path(&self, path: &str) -> String {
        if path.contains("_delta_log/") {
            path.to_string()
        } else {
            format!("_delta_log/{path}")
        }
    }

    /// The newest version the log holds (a commit or a checkpoint).
    pub fn latest_version(&self) -> Option<i64> {
        let c = self.commits.keys().next_back().copied();
        let k = self.checkpoints.keys().next_back().copied();
        c.max(k)
    }

    /// The oldest commit file.
    pub fn earliest_commit(&self) -> Option<i64> {
        self.commits.keys().next().copied()
    }

    /// The checkpoint Delta starts the latest snapshot from: the newest complete one.
    pub fn latest_complete_checkpoint(&self) -> Option<&Checkpoint> {
        self.checkpoints.values().rev().find(|c| c.complete())
    }

    /// True when commits `from..=to` are all present.
    pub fn commits_contiguous(&self, from: i64, to: i64) -> bool {
        from > to || (self.commits.range(from..=to).count() as i128 == i128::from(to) - i128::from(from) + 1)
    }

    /// The first missing commit in `from..=to`.
    pub fn first_missing_commit(&self, from: i64, to: i64) -> Option<i64> {
        (from..=to).find(|v| !self.commits.contains_key(v))
    }

    /// The base a snapshot at `version` starts from, as Delta picks it: the newest complete checkpoint at
    /// or before `version` (`Some(c)`), or `Some(-1)` (no checkpoint: from commit 0), when the commits after
    /// it up to `version` are all there; `None` when the version cannot be reconstructed.
    pub fn snapshot_base(&self, version: i64) -> Option<i64> {
        let base = self.checkpoints.range(..=version).rev().find(|(_, c)| c.complete()).map(|(v, _)| *v).unwrap_or(-1);
        self.commits_contiguous(base.saturating_add(1), version).then_some(base)
    }

    /// The earliest version a snapshot can be built at.
    pub fn earliest_reconstructable(&self) -> Option<i64> {
        let latest = self.latest_version()?;
        let mut candidates: Vec<i64> = self.checkpoints.values().filter(|c| c.complete()).map(|c| c.version).collect();
        if self.commits.contains_key(&0) {
            candidates.push(0);
        }
        candidates.sort_unstable();
        candidates.into_iter().find(|&v| v <= latest && self.snapshot_base(v).is_some())
    }

    /// The table metadata in force at `version`: the newest `metaData` of a commit or checkpoint at or before
    /// it, with the version it was written at.
    pub fn metadata_at(&self, version: i64) -> Option<(i64, &TableMetadata)> {
        let from_commit = self.commits.range(..=version).rev().find_map(|(v, c)| c.metadata.as_ref().map(|m| (*v, m)));
        let from_checkpoint =
            self.checkpoints.range(..=version).rev().find_map(|(v, c)| c.metadata.as_ref().map(|m| (*v, m)));
        match (from_commit, from_checkpoint) {
            (Some(a), Some(b)) => Some(if a.0 >= b.0 { a } else { b }),
            (a, b) => a.or(b),
        }
    }

    /// The latest table metadata.
    pub fn latest_metadata(&self) -> Option<(i64, &TableMetadata)> {
        self.metadata_at(self.latest_version()?)
    }

    /// The protocol in force at `version`.
    pub fn protocol_at(&self, version: i64) -> Option<(i64, &Protocol)> {
        let from_commit = self.commits.range(..=version).rev().find_map(|(v, c)| c.protocol.as_ref().map(|m| (*v, m)));
        let from_checkpoint =
            self.checkpoints.range(..=version).rev().find_map(|(v, c)| c.protocol.as_ref().map(|m| (*v, m)));
        match (from_commit, from_checkpoint) {
            (Some(a), Some(b)) => Some(if a.0 >= b.0 { a } else { b }),
            (a, b) => a.or(b),
        }
    }

    /// Where the log's `metaData` was read from, for evidence: the commit file or the checkpoint's first file.
    pub fn metadata_source(&self, version: i64) -> String {
        if let Some(c) = self.commits.get(&version).filter(|c| c.metadata.is_some()) {
            return self.display_path(&c.path);
        }
        if let Some(k) = self.checkpoints.get(&version) {
            if let Some(f) = k.files.first() {
                return self.display_path(f);
            }
        }
        self.display_path(&format!("{version:020}.json"))
    }
}
