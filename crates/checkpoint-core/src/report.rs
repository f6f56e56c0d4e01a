//! The report: the one machine-readable contract (`../shared/reference/REPORT-CONTRACT.md`).
//!
//! The CLI prints it as JSON, the web page renders the same value, and the conformance tests read it.
//! Fields named in the contract are never renamed or dropped; unknown values are `None` (`null`), never invented.
//! Rendering (terminal, HTML, Markdown) lives in the front ends; this module is data only.

pub use crate::checks::catalogue::{Code, RestartStage};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// Version of this inspector, written into every report.
pub const INSPECTOR_VERSION: &str = env!("CARGO_PKG_VERSION");

/// The whole report for one input (a zip or a directory), which may hold several checkpoints.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Report {
    /// Version of the inspector that wrote the report (semver).
    pub inspector_version: String,
    /// What was read.
    pub input: InputInfo,
    /// One entry per checkpoint root found in the input, ordered by root path.
    pub checkpoints: Vec<CheckpointReport>,
}

/// The input as a whole.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct InputInfo {
    /// File name of the input (no directories).
    pub name: String,
    /// Size of the input in bytes (the zip file's length; for a directory, the sum of file sizes).
    pub bytes: u64,
    /// Number of file entries listed.
    pub entries: u64,
}

/// Kind of a checkpoint root.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum CheckpointKind {
    /// A Structured Streaming `checkpointLocation` (`metadata`, `offsets/`, `commits/`, `state/`).
    StructuredStreaming,
    /// A legacy DStream checkpoint directory (`checkpoint-<ms>` files).
    Dstream,
    /// Something that looks like a checkpoint but could not be classified.
    Unknown,
}

/// Everything the report says about one checkpoint root.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct CheckpointReport {
    /// The checkpoint's folder inside the archive, `/`-separated without a trailing `/`; `""` = archive top.
    pub root: String,
    /// What kind of checkpoint this is.
    pub kind: CheckpointKind,
    /// The query id from `metadata` (`{"id":"<uuid>"}`), or `None` when absent or unreadable.
    pub query_id: Option<String>,
    /// One row per batch id seen in `offsets/` or `commits/`, ascending by batch id.
    pub batches: Vec<BatchInfo>,
    /// Highest batch id in `offsets/`, or `None` when the offset log is empty.
    pub last_batch_id: Option<i64>,
    /// Highest batch id in `commits/`, or `None` when the commit log is empty.
    pub last_committed_batch_id: Option<i64>,
    /// SQL confs recorded in the latest readable offsets file (`OffsetSeqMetadata.conf`).
    pub conf: BTreeMap<String, String>,
    /// One entry per source, in the order the offsets file lists them (latest readable offsets file).
    pub sources: Vec<SourceInfo>,
    /// One entry per stateful operator directory under `state/`, by operator id.
    pub operators: Vec<OperatorInfo>,
    /// Findings, most severe first.
    pub findings: Vec<Finding>,
    /// What a restart will do.
    pub restart: RestartPrediction,
    /// DStream details for `kind == dstream`, else `None`.
    pub dstream: Option<DstreamInfo>,
    /// Confs the restarted query will take from the checkpoint, overriding the session (summary for people).
    #[serde(default)]
    pub forced_conf: Vec<ForcedConf>,
    /// Hints on what extra input would sharpen the diagnosis (e.g. "give --kafka-earliest").
    #[serde(default)]
    pub needs: Vec<String>,
    /// The structured form of `restart.assumption` and of `needs` (same facts, kinds in
    /// [`crate::present::Hint`]), so that each front end words them for its own controls
    /// ([`crate::present::needs`]). Absent when empty.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub hints: Vec<crate::present::Hint>,
    /// The ways out, safest first, with their costs and snippets ([`crate::restart_plan`]); absent when the
    /// verdict is a plain resume with no error or warning finding.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub restart_plan: Option<crate::restart_plan::RestartPlan>,
    /// The file sink logs found beside the checkpoint (in the archive, or given with `--sink-log`), batch by
    /// batch, for the timeline next to the checkpoint's batches. Absent when there is none.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub sink_logs: Vec<SinkLogInfo>,
}

/// A file sink's `_spark_metadata` log as the timeline shows it (`FileStreamSinkLog`; the same rules as
/// the `sink-log-*` findings). Batch id lists keep the newest 10 000 ids.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq)]
pub struct SinkLogInfo {
    /// The log's folder (`<output>/_spark_metadata`), as found in the input.
    pub dir: String,
    /// The compaction interval (`spark.sql.streaming.fileSink.log.compactInterval`, default 10, or inferred
    /// from the `.compact` files listed).
    pub compact_interval: i64,
    /// Batch ids of the log's files (plain and `.compact`), ascending.
    pub batch_ids: Vec<i64>,
    /// True when `batch_ids` holds only the newest ids.
    #[serde(default)]
    pub batch_ids_truncated: bool,
    /// Batch ids whose file is a compaction file (`N.compact`).
    pub compact_batch_ids: Vec<i64>,
    /// Batch ids reading the log needs (the latest compaction and the batches after it) that are not listed
    /// (`sink-log-batch-missing`).
    pub missing_batch_ids: Vec<i64>,
    /// Batch ids of the log beyond the checkpoint's batches: the restarted query skips them without writing
    /// (`sink-log-ahead`).
    pub skipped_batch_ids: Vec<i64>,
}

/// One batch as seen in the offset and commit logs.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct BatchInfo {
    /// The batch id (the log file's name).
    pub batch_id: i64,
    /// `offsets/<batch_id>` exists.
    pub has_offsets: bool,
    /// `commits/<batch_id>` exists.
    pub committed: bool,
    /// `batchTimestampMs` of the offsets file (ms since the epoch), when readable.
    pub timestamp_ms: Option<i64>,
    /// `batchWatermarkMs` of the offsets file (ms since the epoch; 0 = no watermark), when readable.
    pub watermark_ms: Option<i64>,
    /// `nextBatchWatermarkMs` of the commit file, when readable.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub next_watermark_ms: Option<i64>,
}

/// One source of the query, as its latest recorded offset describes it.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct SourceInfo {
    /// Position of the source in the offsets file (0-based), which is `sources/<index>/`.
    pub index: usize,
    /// `file` | `rate` | `kafka` | `delta` | `autoloader` | `memory` | `unknown`.
    pub kind: String,
    /// The offset JSON as recorded (`None` for `-`, i.e. no offset yet). Non-JSON text is kept as a string.
    pub latest_offset: Option<serde_json::Value>,
    /// For the v2 offset log (named sources), the source's name; else `None`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
}

/// One stateful operator (a `state/<operator_id>/` directory).
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct OperatorInfo {
    /// The operator id (directory name).
    pub operator_id: i64,
    /// Operator name from operator metadata (`stateStoreSave`, `dedupe`, `symmetricHashJoin`, ...), when recorded.
    pub name: Option<String>,
    /// Store names (`default`, or the four join stores, or column families' store).
    pub store_names: Vec<String>,
    /// Number of partition directories found.
    pub partitions: u64,
    /// `hdfs` | `rocksdb` | `unknown`, from the files on disk (and the recorded provider class).
    pub provider: String,
    /// Highest state version with a file on disk in any partition and store, or `None`.
    pub latest_version: Option<i64>,
    /// State size by version (growth at a glance), from the files on disk: snapshot bytes and keys summed
    /// over the partitions with a snapshot at that version, delta/changelog bytes over all partitions.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub state_size: Vec<StateSizePoint>,
    /// The state files on disk per store and partition (the listing, not a diagnosis), store name then
    /// partition order; see [`StoreFilesOverview`].
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub state_files: Vec<StoreFilesOverview>,
}

/// The state files of one store of an operator in one partition directory, from file names only
/// ([`crate::state_files::StoreFiles`]): the range of versions on disk, the snapshots, and versions missing
/// inside the range of deltas / changelogs / zips.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq)]
pub struct StoreFilesOverview {
    /// The store (`default`, a join store, ...).
    pub store: String,
    /// The partition id.
    pub partition: u32,
    /// Lowest and highest version with any state file (`.delta`, `.snapshot`, `.zip`, `.changelog`).
    pub first_version: i64,
    /// See `first_version`.
    pub last_version: i64,
    /// How many versions have a snapshot (`.snapshot`, `.zip`).
    pub snapshots: u64,
    /// The newest snapshot versions, ascending (at most 50).
    pub snapshot_versions: Vec<i64>,
    /// The first versions (at most 5) with no `.delta`, `.changelog` or `.zip` between the lowest and the
    /// highest such file.
    pub missing_versions: Vec<i64>,
}

impl StoreFilesOverview {
    /// The overview of one store's listing; `None` when it holds no state file.
    pub fn of(store: &str, partition: u32, f: &crate::state_files::StoreFiles) -> Option<Self> {
        let versions: std::collections::BTreeSet<i64> =
            f.deltas.keys().chain(f.changelogs.keys()).chain(f.zips.keys()).copied().collect();
        let snaps: std::collections::BTreeSet<i64> = f.snapshots.keys().chain(f.zips.keys()).copied().collect();
        let first_version = *versions.iter().next().into_iter().chain(snaps.iter().next()).min()?;
        let last_version = *versions.iter().next_back().into_iter().chain(snaps.iter().next_back()).max()?;
        let mut missing_versions = Vec::new();
        let vs: Vec<i64> = versions.iter().copied().collect();
        'outer: for w in vs.windows(2) {
            for v in w[0] + 1..w[1] {
                if missing_versions.len() == 5 {
                    break 'outer;
                }
                missing_versions.push(v);
            }
        }
        let snapshot_versions: Vec<i64> = snaps.iter().rev().take(50).rev().copied().collect();
        Some(StoreFilesOverview {
            store: store.to_string(),
            partition,
            first_version,
            last_version,
            snapshots: snaps.len() as u64,
            snapshot_versions,
            missing_versions,
        })
    }
}

/// State size of one operator at one version (see [`crate::model::GrowthPoint`]).
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq)]
pub struct StateSizePoint {
    /// State version (batch id + 1).
    pub version: i64,
    /// Partitions with a snapshot (`.snapshot` / `.zip`) at this version.
    pub snapshot_partitions: u32,
    /// Bytes of those snapshots (HDFS `.snapshot` sizes; RocksDB: SST bytes the zips list).
    pub snapshot_bytes: u64,
    /// Keys in those snapshots (RocksDB `numKeys`), when known for all of them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub snapshot_keys: Option<i64>,
    /// Bytes of this version's `.delta` / `.changelog` files over all partitions.
    pub delta_bytes: u64,
}

/// Severity of a finding.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq, PartialOrd, Ord, Hash)]
#[serde(rename_all = "snake_case")]
pub enum Severity {
    /// The restart fails, or data is lost or wrong.
    Error,
    /// Something is off and deserves attention, but the restart goes on.
    Warning,
    /// Worth knowing; normal in many checkpoints.
    Info,
}

/// One piece of evidence: a file (relative to the checkpoint root) and what was seen in it.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Evidence {
    /// Path relative to the checkpoint root.
    pub path: String,
    /// What was seen, in plain words (values, sizes, offsets).
    pub detail: String,
    /// Byte offset inside the file, when the evidence is about one place in it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub offset: Option<u64>,
    /// Size of the file in bytes, when it matters to the evidence (shown next to the path, not in `detail`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub size: Option<u64>,
}

/// A finding: what is wrong (or notable), in Spark's words, why, and what to do.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Finding {
    /// Stable code, serialised kebab-case, e.g. `state-delta-missing` (the catalogue: [`Code`]).
    pub code: Code,
    /// How bad it is.
    pub severity: Severity,
    /// A title in plain words.
    pub title: String,
    /// Spark error classes this finding explains or predicts, `PARENT.SUB` as Spark prints them.
    pub error_classes: Vec<String>,
    /// The files and values that show it.
    pub evidence: Vec<Evidence>,
    /// Why it happens.
    #[serde(default)]
    pub why: String,
    /// What to do, safest step first.
    pub fix: Vec<String>,
    /// True when the user's pasted error text is explained by this finding.
    #[serde(default)]
    pub explains_error_text: bool,
    /// When this finding makes the restart fail: where in Spark's restart sequence, with which error class
    /// and exception (the restart prediction takes the earliest one). `None` = the restart goes on.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub restart_failure: Option<RestartFailure>,
}

/// How a finding makes the restart fail, for the restart prediction.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq)]
pub struct RestartFailure {
    /// Position in Spark's restart sequence (lower fails first), serialised as its number: 10 metadata,
    /// 20-30 offset/commit logs, 35-36 sources, 40 state schema, 50 log writes of the next batch, 55 state
    /// directory, 60 state store configuration, 70-72 state loading ([`RestartStage`]).
    pub stage: RestartStage,
    /// The specific error class Spark prints (not `STREAM_FAILED`), when it prints one.
    pub error_class: Option<String>,
    /// The Java exception class (outermost below `StreamingQueryException`).
    pub exception: String,
}

/// What a restart will do.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum RestartOutcome {
    /// Resumes with the next batch.
    Resumes,
    /// Re-runs the last planned but uncommitted batch, then goes on.
    ReplaysLastBatch,
    /// Fails.
    Fails,
    /// Cannot be told from what was given.
    Unknown,
}

/// The restart prediction for one Spark version.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct RestartPrediction {
    /// The outcome.
    pub outcome: RestartOutcome,
    /// The specific error class Spark raises (not the `STREAM_FAILED` wrapper), or `None`.
    pub error_class: Option<String>,
    /// The Java exception class Spark throws (outermost below the `StreamingQueryException`), or `None`.
    pub exception: Option<String>,
    /// The Spark version the prediction assumes (`X.Y.Z`).
    pub assumed_spark_version: String,
    /// The batch a restart runs first (the replayed batch, or the next one), when known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub first_batch_id: Option<i64>,
    /// The state version a restart loads (last committed batch id + 1), when the query has state.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub state_version_loaded: Option<i64>,
    /// One sentence saying why, for people.
    #[serde(default)]
    pub summary: String,
    /// Set when no Spark version was given: what `assumed_spark_version` stands for, e.g. "assumed Spark 4.3.0
    /// (newest known; the checkpoint was written by Spark ≥ 4.1.0): pass --spark-version X.Y.Z". Also appended
    /// to `summary`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub assumption: Option<String>,
}

/// A DStream checkpoint's details.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Default)]
pub struct DstreamInfo {
    /// `checkpoint-<ms>` times found, ascending (ms since the epoch).
    pub checkpoint_times_ms: Vec<i64>,
    /// Serialized class names and their serialVersionUIDs: the classes of the file Spark recovers from.
    pub classes: Vec<DstreamClass>,
    /// The classes outside Spark, Scala and `java.*` (comma-separated, fully qualified, sorted), for
    /// `spark.streaming.checkpoint.allowedClasses`.
    pub allowed_classes_setting: String,
    /// What to check before using `allowed_classes_setting` (the setting is runtime-specific).
    #[serde(default)]
    pub allowed_classes_note: String,
    /// The checkpoint files in the order Spark tries them (newest first, a file before its `.bk`).
    #[serde(default)]
    pub files: Vec<DstreamFileInfo>,
    /// The file Spark recovers from (the first readable one of `files`), or `None` when none is readable.
    #[serde(default)]
    pub recovers_from: Option<String>,
    /// What that file's `Checkpoint` records.
    #[serde(default)]
    pub checkpoint: Option<DstreamCheckpointInfo>,
    /// RDD checkpoint folders the recovered graph needs, and whether they are in the input.
    #[serde(default)]
    pub rdd_checkpoints: Vec<DstreamRddCheckpoint>,
}

/// A class named in a Java serialization stream.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct DstreamClass {
    /// Fully qualified class name.
    pub name: String,
    /// serialVersionUID as a decimal string.
    pub serial_version_uid: String,
    /// `jdk` | `scala` | `spark` | `third_party` | `application`.
    #[serde(default)]
    pub group: String,
    /// True for an interface of a dynamic proxy.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub proxy: bool,
    /// Where its first object sits, from the `Checkpoint` down.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub path: Option<String>,
}

/// One `checkpoint-<ms>[.bk]` file.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct DstreamFileInfo {
    /// Path relative to the checkpoint root.
    pub path: String,
    /// The time in its name (ms).
    pub time_ms: i64,
    /// A `.bk` copy.
    pub backup: bool,
    /// Size in bytes.
    pub bytes: u64,
    /// `lz4` | `snappy` | `zstd` | `lzf` | `unknown` (sniffed).
    pub codec: String,
    /// Bytes of the Java serialization stream, when it decompressed.
    pub stream_bytes: Option<u64>,
    /// True when it deserializes to a Checkpoint.
    pub readable: bool,
    /// Why not, when not.
    pub error: Option<String>,
}

/// What a DStream `Checkpoint` object records.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Default)]
pub struct DstreamCheckpointInfo {
    /// `master`.
    pub master: Option<String>,
    /// `framework` (the app name).
    pub app_name: Option<String>,
    /// `jars`.
    pub jars: Vec<String>,
    /// `checkpointTime` (ms).
    pub checkpoint_time_ms: Option<i64>,
    /// `checkpointDir`.
    pub checkpoint_dir: Option<String>,
    /// `checkpointDuration` (ms).
    pub checkpoint_duration_ms: Option<i64>,
    /// `pendingTimes` (ms): batches generated but not finished, re-run on recovery.
    pub pending_times_ms: Vec<i64>,
    /// `sparkConfPairs` (values of keys matching Spark's default `spark.redaction.regex` masked).
    pub spark_conf: BTreeMap<String, String>,
    /// The `DStreamGraph`.
    pub graph: DstreamGraphInfo,
}

/// A `DStreamGraph`.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Default)]
pub struct DstreamGraphInfo {
    /// `batchDuration` (ms).
    pub batch_duration_ms: Option<i64>,
    /// `rememberDuration` (ms).
    pub remember_duration_ms: Option<i64>,
    /// `zeroTime` (ms).
    pub zero_time_ms: Option<i64>,
    /// `outputStreams`, as indexes into `streams`.
    pub output_streams: Vec<usize>,
    /// `inputStreams`, as indexes into `streams`.
    pub input_streams: Vec<usize>,
    /// Every DStream of the graph.
    pub streams: Vec<DstreamStreamInfo>,
}

/// One DStream.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Default)]
pub struct DstreamStreamInfo {
    /// Its class.
    pub class: String,
    /// Parent streams (indexes into `streams`).
    pub parents: Vec<usize>,
    /// `rememberDuration` (ms).
    pub remember_duration_ms: Option<i64>,
    /// Slide (ms): recorded, else the parent's, else the batch duration.
    pub slide_duration_ms: Option<i64>,
    /// `checkpointDuration` (ms).
    pub checkpoint_duration_ms: Option<i64>,
    /// `mustCheckpoint`.
    pub must_checkpoint: bool,
    /// `creationSite.shortForm`.
    pub creation_site: Option<String>,
    /// `checkpointData.data`: batch time → what was checkpointed.
    pub checkpoint_data: Vec<DstreamCheckpointDatum>,
}

/// One entry of a DStream's checkpoint data.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct DstreamCheckpointDatum {
    /// Batch time (ms).
    pub time_ms: i64,
    /// The RDD checkpoint folder as recorded, when the value is one.
    pub rdd_checkpoint: Option<String>,
    /// What the value is.
    pub summary: String,
}

/// An RDD checkpoint folder the recovered graph restores.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct DstreamRddCheckpoint {
    /// Relative to the checkpoint root.
    pub path: String,
    /// As recorded (a URI).
    pub recorded: String,
    /// True when the folder is in the input.
    pub exists: bool,
}

/// A recorded conf that the restart will force over the session's value.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct ForcedConf {
    /// Conf key.
    pub key: String,
    /// Value recorded in the checkpoint (which wins).
    pub recorded: String,
    /// The session value the user said they set (`--conf`), when different; else `None`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub session: Option<String>,
    /// Why it matters, in plain words.
    pub note: String,
}

impl Finding {
    /// A finding with a code, severity and title; the other fields empty.
    pub fn new(code: Code, severity: Severity, title: impl Into<String>) -> Self {
        Finding {
            code,
            severity,
            title: title.into(),
            error_classes: Vec::new(),
            evidence: Vec::new(),
            why: String::new(),
            fix: Vec::new(),
            explains_error_text: false,
            restart_failure: None,
        }
    }
    /// Adds a piece of evidence.
    pub fn evidence(mut self, path: impl Into<String>, detail: impl Into<String>, offset: Option<u64>) -> Self {
        self.evidence.push(Evidence { path: path.into(), detail: detail.into(), offset, size: None });
        self
    }
    /// Adds evidence about a file of `size` bytes (rendered as `path (size bytes), byte offset: detail`).
    pub fn evidence_sized(
        mut self,
        path: impl Into<String>,
        size: u64,
        detail: impl Into<String>,
        offset: Option<u64>,
    ) -> Self {
        self.evidence.push(Evidence { path: path.into(), detail: detail.into(), offset, size: Some(size) });
        self
    }
    /// Sets the error classes.
    pub fn classes<S: AsRef<str>>(mut self, classes: &[S]) -> Self {
        self.error_classes = classes.iter().map(|c| c.as_ref().to_string()).collect();
        self
    }
    /// Sets why.
    pub fn why(mut self, why: impl Into<String>) -> Self {
        self.why = why.into();
        self
    }
    /// Sets the fix steps (safest first).
    pub fn fix<S: AsRef<str>>(mut self, steps: &[S]) -> Self {
        self.fix = steps.iter().map(|c| c.as_ref().to_string()).collect();
        self
    }
    /// Marks the finding as failing the restart.
    pub fn fails(mut self, stage: RestartStage, error_class: Option<&str>, exception: &str) -> Self {
        self.restart_failure = Some(RestartFailure {
            stage,
            error_class: error_class.map(str::to_string),
            exception: exception.to_string(),
        });
        self
    }
}

impl Report {
    /// True when any finding of any checkpoint has severity `error` (the CLI then exits with 1).
    pub fn has_errors(&self) -> bool {
        self.checkpoints.iter().any(|c| c.findings.iter().any(|f| f.severity == Severity::Error))
    }
    /// True when any finding of any checkpoint has severity `warning` (`diagnose --fail-on warning` then
    /// exits with 1).
    pub fn has_warnings(&self) -> bool {
        self.checkpoints.iter().any(|c| c.findings.iter().any(|f| f.severity == Severity::Warning))
    }
}

#[cfg(test)]
mod state_files_tests {
    use crate::testutil::{fixture_record, open_fixture};
    use crate::{diagnose, Context};

    #[test]
    fn the_state_files_overview_shows_what_the_mutation_removed() {
        // Real Spark 4.1.4: state/0/1/7.delta and the snapshots 9 and 12 of partition 1 deleted.
        let name = "broken-ss-4.1.4-missing-delta";
        let removed = fixture_record(name)["mutation"]["removed"].clone();
        assert!(removed.as_array().unwrap().iter().any(|p| p == "state/0/1/7.delta"));
        let r = diagnose(&mut open_fixture(name), &Context::default());
        let files = &r.checkpoints[0].operators[0].state_files;
        assert_eq!(files.len(), 3);
        let p1 = files.iter().find(|f| f.partition == 1).unwrap();
        assert_eq!((p1.store.as_str(), p1.first_version, p1.last_version), ("default", 1, 12));
        assert_eq!((p1.missing_versions.clone(), p1.snapshot_versions.clone()), (vec![7], vec![3, 6]));
        let p0 = files.iter().find(|f| f.partition == 0).unwrap();
        assert_eq!((p0.missing_versions.len(), p0.snapshot_versions.clone()), (0, vec![3, 6, 9, 12]));
    }
}
