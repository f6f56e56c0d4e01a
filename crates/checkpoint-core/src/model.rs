//! `Checkpoint`: everything read from one checkpoint root, typed, each fact with the file it came from
//! (paths relative to the checkpoint root) and every problem met while reading (path, byte offset, reason).
//! Built by the read stage ([`crate::read::read_checkpoint`]); consumed by the checks, the prediction and the
//! restart plan, which ask it questions through its methods (`queries`), never the read stage.

use crate::hadoop::CrcError;
use crate::log::commits::CommitMetadata;
use crate::log::file_log::FileLogBatch;
use crate::log::metadata::StreamMetadata;
use crate::log::offsets::OffsetSeq;
use crate::log::operator_metadata::OperatorMetadata;
use crate::log::LogError;
use crate::report::CheckpointKind;
use crate::state_files::{FileRef, StateTree};
use std::collections::{BTreeMap, BTreeSet};

mod async_progress;
mod chains;
mod queries;
mod sidecar_map;
pub use async_progress::AsyncProgressLog;
pub use chains::{OperatorStores, RestartChain, StoreKey, MAX_MISSING_PLANNED};
pub use queries::{provider_from_conf, store_index, JOIN_STORE_NAMES};
pub use sidecar_map::{Sidecar, SidecarMap};

/// A problem met while reading: which file, where in it, and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Problem {
    /// Path relative to the checkpoint root.
    pub path: String,
    /// Byte offset inside the file, when known.
    pub offset: Option<u64>,
    /// Why, in plain words.
    pub reason: String,
}

/// A file that was read and parsed (or failed to parse).
#[derive(Debug, Clone, PartialEq)]
pub struct ReadFile<T> {
    /// Path relative to the checkpoint root.
    pub path: String,
    /// Size in bytes as listed.
    pub size: u64,
    /// The parsed content or why it could not be parsed.
    pub content: Result<T, LogError>,
}

/// One batch file of a metadata log.
#[derive(Debug, Clone, PartialEq)]
pub struct LogFile<T> {
    /// The batch id (file name).
    pub batch_id: i64,
    /// True for a `<id>.compact` file.
    pub compact: bool,
    /// The file and its parsed content.
    pub file: ReadFile<T>,
}

/// A compactible file log (`sources/<n>/` or a sink's `_spark_metadata/`).
#[derive(Debug, Clone, PartialEq)]
pub struct FileLog {
    /// The log directory relative to the root.
    pub dir: String,
    /// Every batch file listed: batch id → (path, size, compact).
    pub listed: BTreeMap<i64, (String, u64, bool)>,
    /// The compaction interval inferred from the `.compact` files on disk (default 10).
    pub compact_interval: i64,
    /// The batch files that were read (the latest ones and those named by temp files).
    pub read: BTreeMap<i64, LogFile<FileLogBatch>>,
    /// A sink log only: the data files listed in its output folder (path relative to the folder holding
    /// `_spark_metadata` → size), `None` when the input holds no data file there (only the log was given).
    pub output_files: Option<BTreeMap<String, u64>>,
}

/// A leftover `.<name>.<uuid>.tmp` file of an interrupted or concurrent atomic write.
#[derive(Debug, Clone, PartialEq)]
pub struct TempFile {
    /// Path relative to the root.
    pub path: String,
    /// Size in bytes.
    pub size: u64,
    /// The directory it is in.
    pub dir: String,
    /// The final file name it was meant to become (`12` for `.12.<uuid>.tmp`).
    pub target: String,
    /// The batch id of the target, when the target is a batch file.
    pub target_batch: Option<i64>,
    /// For temp files in `offsets/`: the parsed content.
    pub offsets: Option<Result<OffsetSeq, LogError>>,
    /// For temp files in `sources/<n>/` or `_spark_metadata/`: the parsed content.
    pub file_log: Option<Result<FileLogBatch, LogError>>,
}

/// A Hadoop `.<name>.crc` sidecar and, when the main file was read, whether it matches.
#[derive(Debug, Clone, PartialEq)]
pub struct CrcSidecar {
    /// Sidecar path relative to the root.
    pub path: String,
    /// The main file's path.
    pub main: String,
    /// True when the main file exists.
    pub main_exists: bool,
    /// `None` = not verified (main file not read); `Some(Ok)` = matches.
    pub verified: Option<Result<(), CrcError>>,
    /// When it does not match its main file: another file of the archive whose bytes it matches (the temp
    /// file of another write attempt of the same file), which shows it was written for other bytes.
    pub matches: Option<String>,
}

/// A Spark 4.1+ `<name>.crc` checksum file and, when the main file was read, whether it matches.
#[derive(Debug, Clone, PartialEq)]
pub struct ChecksumSidecar {
    /// Checksum file path relative to the root.
    pub path: String,
    /// The main file's path.
    pub main: String,
    /// True when the main file exists.
    pub main_exists: bool,
    /// `None` = not verified; `Some(Err(reason))` = mismatch or unreadable checksum file.
    pub verified: Option<Result<(), String>>,
    /// What the checksum file records (size, CRC32C, writer, time), when it was read and parses.
    pub recorded: Option<crate::checksum::SparkChecksum>,
    /// When it does not match its main file: another file of the archive whose bytes it matches.
    pub matches: Option<String>,
}

/// What a state file's bytes say about its integrity (without decoding rows).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StateFileIntegrity {
    /// Path relative to the root.
    pub path: String,
    /// `None` = looks intact; `Some(problem)` = cannot be read the way Spark reads it.
    pub problem: Option<Problem>,
    /// The Java exception Spark's reader throws on it (e.g. `java.util.zip.ZipException`).
    pub exception: Option<String>,
    /// For a checkpoint format v2 changelog: the lineage `(version, uniqueId)` from its header.
    pub lineage: Option<Vec<(i64, String)>>,
    /// The compressed payload does not decode while the framing is intact (see
    /// [`crate::state_integrity::StreamCheck::payload_corrupt`]).
    pub payload_corrupt: bool,
    /// The specific 4.x error class for this damage, when there is one.
    pub error_class: Option<String>,
    /// `.delta`/`.snapshot`: (puts, removals); `.changelog`: (records, 0); when the file decoded.
    pub records: Option<(u64, u64)>,
    /// RocksDB zip: `numKeys` of its metadata, when it reads.
    pub num_keys: Option<i64>,
    /// Bytes of the decompressed stream (`.delta`, `.snapshot`, `.changelog`), when it decompressed.
    pub decompressed_bytes: Option<u64>,
    /// RocksDB zip: the SST and log files its metadata lists (relative paths), which a load copies through
    /// Hadoop's FileSystem (their `.crc` sidecars are verified by the read stage too).
    pub listed_files: Vec<String>,
    /// A RocksDB `<v>.zip` that opens as a zip: the file its damage is in, when `problem` is an SST its
    /// metadata lists that is absent, or a member a restart opens that is absent, empty or unparsable.
    pub rocksdb: Option<RocksDbZipDamage>,
    /// `.delta`, `.snapshot`, `.changelog`: the compression framing its first bytes show ([`crate::codec::sniff`];
    /// [`crate::codec::Codec::Unknown`] for none); `None` for a zip or a file whose bytes were not read. Spark
    /// decompresses it with the codec the offset log decides, whatever this says (`state-codec-mismatch`).
    pub codec: Option<crate::codec::Codec>,
}

/// Where the damage of a RocksDB `<v>.zip` that opens as a zip is (`RocksDBFileManager.loadCheckpointFromDfs`:
/// unzip, read `metadata`, copy the SSTs it lists; then RocksDB opens `CURRENT` and its MANIFEST).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RocksDbZipDamage {
    /// An SST file the zip's `metadata` lists is not under `SSTs/`.
    SstMissing {
        /// Its path relative to the root (`state/0/1/SSTs/000012-<uuid>.sst`).
        sst: String,
        /// The size the metadata records.
        size: u64,
    },
    /// An SST file the zip's `metadata` lists has another size under `SSTs/` (Spark checks the size of its copy).
    SstWrongSize {
        /// Its path relative to the root.
        sst: String,
        /// The size the metadata records.
        size: u64,
        /// The size on disk.
        found: u64,
    },
    /// A member of the zip is absent, empty or unparsable.
    Member {
        /// The member's name inside the zip (`CURRENT`, `MANIFEST-000005`, `OPTIONS-000007`, `metadata`).
        member: String,
        /// How.
        fault: crate::state::rocksdb::zip_meta::MemberFault,
    },
}

/// The SST files one `<v>.zip` lists, read when a zip of its store that a restart loads is damaged (to say
/// which versions share a missing SST and which older snapshot is intact).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ZipListing {
    /// The zip's path relative to the root.
    pub path: String,
    /// Its state version.
    pub version: i64,
    /// The SSTs its metadata lists: path relative to the root, size.
    pub ssts: Vec<(String, u64)>,
    /// Why it cannot be loaded by itself (unreadable, metadata or member damage), `None` when it reads.
    pub damage: Option<String>,
}

/// State size at one version of one operator, from the files on disk, summed over the partitions that have
/// a snapshot (HDFS `.snapshot`, RocksDB `.zip`) at that version.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct GrowthPoint {
    /// State version.
    pub version: i64,
    /// Partitions with a snapshot at this version.
    pub partitions: u32,
    /// Bytes of those snapshots (HDFS: `.snapshot` sizes; RocksDB: SST bytes the zips list).
    pub snapshot_bytes: u64,
    /// Keys (RocksDB: `numKeys` of the zips' metadata), when known for every counted partition.
    pub keys: Option<i64>,
    /// Bytes of the deltas / changelogs of this version over all partitions (write volume of the batch).
    pub delta_bytes: u64,
}

/// A state file (or the SST files of a zip) not verified because the byte budget
/// ([`crate::Context::verify_budget_bytes`]) was spent.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Unverified {
    /// Path relative to the root (for SSTs: the zip that lists them).
    pub path: String,
    /// Bytes that would have been read.
    pub bytes: u64,
    /// What was skipped, in plain words.
    pub what: String,
}

/// A file a stage tried to read and could not because of a limit of this inspector or an input it cannot
/// inflate (not because the file is damaged): "not verified".
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NotVerified {
    /// Path relative to the root.
    pub path: String,
    /// Which limit, with the file's value and the limit (or the unsupported compression method).
    pub reason: String,
    /// A restart reads this file (a state file of a restart chain): the verdict depends on it.
    pub restart_reads: bool,
}

/// Row-level facts of one state store read at the restart version (within the byte budget).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct StoreRows {
    /// The store folder relative to the root.
    pub store_dir: String,
    /// The state version read.
    pub version: i64,
    /// Rows in the store.
    pub rows: u64,
    /// Bytes of key and value rows.
    pub bytes: u64,
    /// The first key row that violates the stored key schema: (row index in key order, offset in the row,
    /// reason), per `UnsafeRowUtils.validateStructuralIntegrity`.
    pub bad_key: Option<(u64, u64, String)>,
    /// Same for value rows.
    pub bad_value: Option<(u64, u64, String)>,
    /// Rows that violate the key or value schema.
    pub bad_rows: u64,
    /// Event-time keys (`window.end`, ms since the epoch): (smallest, count at or below the watermark of the
    /// batch that wrote this version).
    pub window_end_min_ms: Option<i64>,
    /// Keys whose `window.end` is at or below that watermark.
    pub keys_behind_watermark: u64,
    /// Why the store could not be read, when it could not (the chain findings say more).
    pub error: Option<String>,
    /// HDFS provider: the first row Spark reads while loading (first put of the first file of the chain),
    /// which `validateStateRowFormat` checks, when it violates the schema: (file, offset of the record in the
    /// decompressed stream, `key` or `value`, reason).
    pub first_row_invalid: Option<(String, u64, &'static str, String)>,
}

/// [`Checkpoint::file_mtimes`] of a file whose input records no modification time.
pub const NO_MTIME: i64 = i64::MIN;

/// Everything read from one checkpoint root.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Checkpoint {
    /// The root inside the archive (`""` = top).
    pub root: String,
    /// The kind of checkpoint.
    pub kind: Kind,
    /// Every file under the root (relative paths), listing only.
    pub files: Vec<FileRef>,
    /// Every directory under the root (relative paths, from folder entries and file parents).
    pub dirs: BTreeSet<String>,
    /// `metadata`, when present.
    pub metadata: Option<ReadFile<StreamMetadata>>,
    /// `offsets/<id>` files by batch id (all read: they are small).
    pub offsets: BTreeMap<i64, LogFile<OffsetSeq>>,
    /// `commits/<id>` files by batch id.
    pub commits: BTreeMap<i64, LogFile<CommitMetadata>>,
    /// `sources/<n>/` file source logs by source index.
    pub source_logs: BTreeMap<u32, FileLog>,
    /// `sources/<n>/` directories of sources that are not file sources (Kafka initial offsets, ...):
    /// listed, not parsed here.
    pub other_source_dirs: BTreeMap<u32, Vec<FileRef>>,
    /// Kafka sources' initial offsets (`sources/<n>/0`, the starting offsets of the first batch) by source
    /// index ([`crate::log::source_meta::parse_initial_offsets`]).
    pub source_initial_offsets: BTreeMap<u32, ReadFile<serde_json::Value>>,
    /// Auto Loader schema files (`_schemas/<n>` of a schema location inside this root) by version: their
    /// top-level column names ([`crate::log::source_meta::parse_schema_file`]).
    pub schema_log: BTreeMap<i64, ReadFile<Vec<String>>>,
    /// A file sink's `_spark_metadata/` found inside this root, when any.
    pub sink_logs: Vec<FileLog>,
    /// The `state/` tree.
    pub state: StateTree,
    /// Operator metadata by operator id (v1 file, or the newest v2 file).
    pub operator_metadata: BTreeMap<i64, ReadFile<OperatorMetadata>>,
    /// State schema files (v1/v2, `state/<op>/0/[<store>/]_metadata/schema`) by path: the stored key and
    /// value schemas as Spark's `simpleString`, or why the file cannot be read.
    pub state_schemas: BTreeMap<String, Result<(String, String), Problem>>,
    /// The schema files of [`Checkpoint::state_schemas`] that Spark's own read fails on, by path: where it stops
    /// and why ([`crate::state::schema::spark_read_fault`]).
    pub state_schema_faults: BTreeMap<String, crate::state::schema::SchemaReadFault>,
    /// Leftover temp files anywhere under the root.
    pub temp_files: Vec<TempFile>,
    /// Positions in `files` by path: the index [`Checkpoint::file_size`], [`Checkpoint::has_file`] and
    /// [`Checkpoint::modified_ms`] look up (positions only, no copy of the paths; a path listed twice resolves
    /// to its last entry).
    pub file_index: crate::path_index::PathIndex,
    /// Last-modified time (ms since the epoch) of each file of `files`, by position, when the input records one
    /// ([`crate::archive::Entry::modified_ms`]); [`NO_MTIME`] when it does not.
    pub file_mtimes: Vec<i64>,
    /// Hadoop `.crc` sidecars, by the main file's path.
    pub hadoop_crcs: SidecarMap<CrcSidecar>,
    /// Spark 4.1+ checksum files, by the main file's path.
    pub spark_checksums: SidecarMap<ChecksumSidecar>,
    /// The chain each store's restart loads, planned once by the read stage (see [`RestartChain`]), in
    /// [`Checkpoint::restart_stores`] order.
    pub restart_chains: BTreeMap<StoreKey, RestartChain>,
    /// Integrity of the state files a restart reads.
    pub state_integrity: BTreeMap<String, StateFileIntegrity>,
    /// RocksDB zips of the stores whose restart zip is damaged (SST or member), by store folder, oldest first.
    pub rocksdb_zips: BTreeMap<String, Vec<ZipListing>>,
    /// State files not verified because the byte budget was spent.
    pub unverified: Vec<Unverified>,
    /// The byte budget for state verification and row checks (`u64::MAX` = none) and the bytes spent.
    pub verify_budget: (u64, u64),
    /// What the read stage left of the input's file log budgets when it ended: bytes of entries that may still
    /// be kept ([`crate::read::ReadOptions::file_log_entry_bytes`]) and bytes of file log files that may still
    /// be read ([`crate::read::ReadOptions::file_log_bytes`]); the next root of the input gets these.
    pub file_log_budget_left: (u64, u64),
    /// State size by version per operator (growth at a glance), from the listing and zip metadata.
    pub state_growth: BTreeMap<i64, Vec<GrowthPoint>>,
    /// Rows of the stores read at the restart version (row checks), by store folder.
    pub store_rows: BTreeMap<String, StoreRows>,
    /// The Delta source's schema tracking logs under the root (`_schema_log_<tableId>/`).
    pub delta_schema_logs: Vec<crate::delta::schema_log::SchemaLog>,
    /// DStream `checkpoint-<ms>` times (for kind dstream).
    pub dstream_times_ms: Vec<i64>,
    /// DStream `checkpoint-<ms>[.bk]` files, each decoded (for kind dstream; see [`crate::dstream`]).
    pub dstream_files: Vec<crate::dstream::CheckpointFile>,
    /// Problems met while reading that no typed field holds.
    pub problems: Vec<Problem>,
    /// Entries under the root that the archive cannot deliver at all, known from its listing (an unsupported
    /// compression method, overlapping entries), by relative path; entries left out of the listing because
    /// their name cannot be a file of a folder ([`crate::ArchiveError::BadPath`]: every root gets them, by
    /// the name as stored); and state files of a restart chain whose zip entry does not unpack (the zip is
    /// damaged, not necessarily the file: [`crate::ArchiveError::Corrupt`] and the like).
    pub archive_unreadable: BTreeMap<String, crate::archive::ArchiveError>,
    /// Paths under the root that the archive lists more than once (relative paths), with their copies; the
    /// last copy is the one read ([`crate::archive::DuplicateEntry`]).
    pub archive_duplicates: Vec<crate::archive::DuplicateEntry>,
    /// State files not verified because of a limit of this inspector (log files say so in their content:
    /// [`LogError::NotVerified`]).
    pub not_verified: Vec<NotVerified>,
}

/// Kind of a root, with a default for `Default`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Kind(pub CheckpointKind);

impl Default for Kind {
    fn default() -> Self {
        Kind(CheckpointKind::Unknown)
    }
}

impl Checkpoint {
    /// Highest batch id in `offsets/`.
    pub fn last_batch_id(&self) -> Option<i64> {
        self.offsets.keys().next_back().copied()
    }
    /// Highest batch id in `commits/`.
    pub fn last_committed_batch_id(&self) -> Option<i64> {
        self.commits.keys().next_back().copied()
    }
    /// The latest offsets file that parsed, if any.
    pub fn latest_readable_offsets(&self) -> Option<(i64, &OffsetSeq)> {
        self.offsets.iter().rev().find_map(|(id, f)| f.file.content.as_ref().ok().map(|o| (*id, o)))
    }
    /// Recorded confs of the latest readable offsets file.
    pub fn recorded_conf(&self) -> BTreeMap<String, String> {
        self.recorded_conf_ref().cloned().unwrap_or_default()
    }
    /// [`Checkpoint::recorded_conf`] without a copy, `None` when no offsets file with metadata parsed.
    pub fn recorded_conf_ref(&self) -> Option<&BTreeMap<String, String>> {
        self.latest_readable_offsets().and_then(|(_, o)| o.metadata.as_ref()).map(|m| &m.conf)
    }
    /// True when `path` (relative) is a file of this checkpoint.
    pub fn has_file(&self, path: &str) -> bool {
        self.file_position(path).is_some()
    }
    /// Size of a file, when listed.
    pub fn file_size(&self, path: &str) -> Option<u64> {
        self.file_position(path).map(|i| self.files[i].size)
    }
    /// Last-modified time of a file (ms since the epoch), when listed and the input records one.
    pub fn modified_ms(&self, path: &str) -> Option<i64> {
        self.file_position(path).and_then(|i| self.file_mtimes.get(i)).copied().filter(|t| *t != NO_MTIME)
    }
    /// Builds [`Checkpoint::file_index`] from `files` (the listing calls it once).
    pub fn index_files(&mut self) {
        let files = &self.files;
        self.file_index = crate::path_index::PathIndex::build(
            files.len(),
            |i| files.get(i as usize).map(|f| f.path.as_str()),
            crate::path_index::Duplicates::Last,
        );
    }
    /// The position in `files` of `path` (its last entry when listed twice).
    fn file_position(&self, path: &str) -> Option<usize> {
        self.file_index.find(path, |i| self.files.get(i as usize).map(|f| f.path.as_str()))
    }
    /// The Hadoop sidecar of a file, when listed.
    pub fn crc_of(&self, main: &str) -> Option<&CrcSidecar> {
        self.hadoop_crcs.get(main)
    }
    /// The Spark checksum file of a file, when listed.
    pub fn checksum_of(&self, main: &str) -> Option<&ChecksumSidecar> {
        self.spark_checksums.get(main)
    }
    /// The lineage recorded in a changelog's header (checkpoint format v2), when it was read.
    pub fn lineage_of(&self, path: &str) -> Option<&[(i64, String)]> {
        self.integrity_of(path).and_then(|i| i.lineage.as_deref())
    }
    /// Integrity record of a state file, when it was checked.
    pub fn integrity_of(&self, path: &str) -> Option<&StateFileIntegrity> {
        self.state_integrity.get(path)
    }
    /// The Spark version range the files are consistent with: the lowest version that could have
    /// written them (e.g. an offsets `v2` file needs 4.3, a commits `v2` file 4.0, operator metadata 4.0,
    /// Spark checksum files 4.1).
    pub fn min_writer_version(&self) -> crate::SparkVersion {
        use crate::SparkVersion as V;
        let mut v = V::new(2, 4, 0);
        let mut bump = |x: V| {
            if x > v {
                v = x
            }
        };
        for f in self.offsets.values() {
            if let Ok(o) = &f.file.content {
                if o.version >= 2 {
                    bump(V::new(4, 3, 0));
                }
            }
        }
        for f in self.commits.values() {
            if let Ok(c) = &f.file.content {
                if c.version >= 2 || !c.state_unique_ids.is_empty() {
                    bump(V::new(4, 0, 0));
                }
            }
        }
        if self.state.operators.values().any(|o| o.metadata_v1.is_some() || !o.metadata_v2.is_empty()) {
            bump(V::new(4, 0, 0));
        }
        if !self.spark_checksums.is_empty() {
            bump(V::new(4, 1, 0));
        }
        v
    }
}
