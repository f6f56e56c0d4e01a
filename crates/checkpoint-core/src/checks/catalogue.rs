//! The catalogue of findings: every finding [`Code`] the inspector can report, with the severities it is
//! reported with, the Spark error classes it can predict or explain, and what it means; and the
//! [`RestartStage`]s of Spark's restart sequence a failing finding is placed at.
//!
//! A code is serialised as its stable kebab-case string (`"state-delta-missing"`), exactly as in the report
//! contract (`../shared/reference/REPORT-CONTRACT.md`); a stage as its number. The README's report section
//! lists this table (a test keeps the two in agreement).
//!
//! Adding a code: one line in the `catalogue!` table below (variant, string, severities, error classes,
//! doc), a check function that emits it, a row in [`super::REGISTRY`], and a snapshot case beside the check
//! (see `docs/adding-a-finding.md`).

use crate::report::Severity;
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use std::fmt;
use std::str::FromStr;

/// What the catalogue says about one code.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CodeInfo {
    /// The stable kebab-case string of the code, as it appears in the JSON report.
    pub code: &'static str,
    /// The severities the code is reported with (which one depends on the evidence, e.g. whether a restart
    /// reads the file), most severe first.
    pub severities: &'static [Severity],
    /// The Spark error classes (`PARENT.SUB` as Spark prints them) a finding of this code can name; empty
    /// when Spark raises an untyped exception, or (for `error-not-explained-by-files`) when the class is the
    /// one the pasted error names.
    pub error_classes: &'static [&'static str],
    /// What the finding means, in one or two sentences.
    pub doc: &'static str,
}

macro_rules! catalogue {
    ($(
        $variant:ident = $code:literal, [$($sev:ident),+], [$($class:literal),* $(,)?],
        $doc:literal;
    )*) => {
        /// A finding code: one per kind of finding, serialised as its kebab-case string.
        #[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
        pub enum Code {
            $(
                #[doc = $doc]
                $variant,
            )*
        }

        impl Code {
            /// Every code, in catalogue order.
            pub const ALL: &'static [Code] = &[$(Code::$variant),*];

            /// What the catalogue says about this code.
            pub const fn info(self) -> &'static CodeInfo {
                match self {
                    $(Code::$variant => &CodeInfo {
                        code: $code,
                        severities: &[$(Severity::$sev),+],
                        error_classes: &[$($class),*],
                        doc: $doc,
                    },)*
                }
            }
        }
    };
}

catalogue! {
    // The root `metadata` file and the checkpoint path.
    MetadataMissing = "metadata-missing", [Error, Warning], ["STREAMING_CHECKPOINT_MISSING_METADATA_FILE"],
        "The `metadata` file (the query id) is missing while the offset or commit logs hold batches: Spark 4.3 refuses to start, older Spark silently continues under a new query id.";
    MetadataUnreadable = "metadata-unreadable", [Error], [],
        "The `metadata` file does not parse, so the query cannot be created from this checkpoint.";
    EscapedPath = "escaped-path", [Error, Warning], ["_LEGACY_ERROR_TEMP_2263", "_LEGACY_ERROR_TEMP_2200"],
        "A folder of the checkpoint (or of a file sink) was percent-escaped by Spark 2.4; Spark 3.0+ stops and asks to move it.";
    // DStream checkpoints (issue 8).
    DstreamCheckpointUnreadable = "dstream-checkpoint-unreadable", [Error, Warning], [],
        "A DStream `checkpoint-<time>` file does not decompress, does not parse as Java serialization or holds no `Checkpoint`: an error when no file is readable (Spark fails with \"Failed to read checkpoint from directory\"), a warning when Spark falls back to an older file.";
    DstreamRecovery = "dstream-recovery", [Info], [],
        "Which `checkpoint-<time>` file Spark recovers the StreamingContext from (the newest readable one; the `.bk` copy, then older files as fallback) and the DStream graph it holds.";
    DstreamRddCheckpointMissing = "dstream-rdd-checkpoint-missing", [Error], [],
        "A DStream's checkpoint data names an RDD checkpoint folder that is not in the checkpoint: restoring the graph fails with `IllegalArgumentException: requirement failed: Checkpoint directory does not exist`.";
    DstreamReplClass = "dstream-repl-class", [Error], [],
        "The graph holds classes spark-shell generated for typed-in code (`$lineN.$read...`): a new shell session does not define them, so recovery fails with ClassNotFoundException.";
    DstreamClassNotLoadable = "dstream-class-not-loadable", [Error], [],
        "The pasted error says a class of the checkpoint cannot be loaded (ClassNotFoundException), changed its serialVersionUID (InvalidClassException) or is not allow-listed: the class, its recorded serialVersionUID, where it sits and what to do.";
    DstreamScalaIncompatible = "dstream-scala-incompatible", [Error], [],
        "The checkpoint was written by a Scala 2.12 build of Spark (its Scala collection classes say so) and the restart uses Spark 4.x, built with Scala 2.13: those classes differ, so deserialization fails with InvalidClassException / ClassNotFoundException.";
    DstreamGadgetClass = "dstream-gadget-class", [Error], [],
        "The checkpoint names a known Java deserialization gadget class (commons-collections transformers, TemplatesImpl, Groovy, Spring, C3P0, ROME, BeanShell and similar chains): reading it on the driver can run code; do not restart from it.";
    DstreamUnexpectedContent = "dstream-unexpected-content", [Warning], [],
        "The stream holds what Spark's checkpoint writer never produces: dynamic proxies, reflection, naming, RMI, scripting or management classes, several top-level objects, resets or a written exception.";
    DstreamAllowedClasses = "dstream-allowed-classes", [Info], [],
        "The checkpoint's classes outside Spark, Scala and `java.*`: the narrowest value for `spark.streaming.checkpoint.allowedClasses` on runtimes that filter the classes of DStream checkpoints.";
    DstreamMigration = "dstream-migration", [Info], [],
        "The DStream API is legacy: how the operations of this graph map to Structured Streaming.";
    // Log files (offsets, commits, file source logs, operator metadata, file sink logs).
    ArchiveEntryUnreadable = "archive-entry-unreadable", [Error, Warning], [],
        "A zip entry does not unpack (the zip is damaged, not necessarily the checkpoint), or a directory input does not give a file or folder (permission denied, not a regular file, a symbolic link loop): not checked, never damage; an error, and the verdict unknown, when a restart reads it.";
    LogFileEmpty = "log-file-empty", [Error, Warning], [],
        "A log file (offsets, commits, a file source log) is empty; an error when a restart reads it.";
    LogVersionMalformed = "log-version-malformed", [Error, Warning], ["MALFORMED_LOG_FILE"],
        "A log file's first line is not a version line `v<N>`; an error when a restart reads it.";
    LogFileTruncated = "log-file-truncated", [Error, Warning], [],
        "A log file ends in the middle of its content (a cut copy or an interrupted write); an error when a restart reads it.";
    LogFileMalformed = "log-file-malformed", [Error, Warning], [],
        "A log file does not parse (bad JSON or content); an error when a restart reads it.";
    LogVersionUnsupported = "log-version-unsupported", [Error, Warning],
        ["INVALID_LOG_VERSION.EXACT_MATCH_VERSION", "INVALID_LOG_VERSION.MAX_SUPPORTED_VERSION"],
        "A log file has a version the assumed Spark cannot read (written by a newer Spark, or a commit log of another state checkpoint format).";
    LogFilesNotRead = "log-files-not-read", [Info], [],
        "Older offsets/commits files were over the inspector's log byte budget and were not read (a restart does not read them either).";
    UnexpectedLogFile = "unexpected-log-file", [Info], [],
        "A file in a log directory is not named by a batch id, so Spark ignores it.";
    OperatorMetadataUnreadable = "operator-metadata-unreadable", [Warning], [],
        "A stateful operator's metadata file (`state/<op>/_metadata`) does not parse; Spark 4.0+ reads it to compare the restarted plan.";
    FileSinkLog = "file-sink-log", [Info], [],
        "The input holds a file sink's `_spark_metadata` log: how many batches and files it records.";
    SinkLogUnreadable = "sink-log-unreadable", [Warning], [],
        "A batch file of a file sink's `_spark_metadata` log does not parse; readers of the output and the sink read it.";
    SinkLogBatchMissing = "sink-log-batch-missing", [Error, Warning], ["BATCH_METADATA_NOT_FOUND", "_LEGACY_ERROR_TEMP_2206", "MALFORMED_LOG_FILE"],
        "A file sink log misses a file: in its chain (the latest `.compact` and the batches after it), readers of the output fail; or a committed batch's (the log behind the commit log), its output is missing from the log; either way the sink's next compaction batch fails.";
    SinkLogAhead = "sink-log-ahead", [Warning], [],
        "A file sink log has batches the checkpoint never planned (a new checkpoint writing into an old output): the sink skips those batches silently, losing their data.";
    SinkLogFileMissing = "sink-log-file-missing", [Warning], [],
        "Data files a file sink log lists are absent from the output folder given with it: readers of the output through the log fail or miss rows.";
    SourceLogBatchMissing = "source-log-batch-missing", [Error], [],
        "A file source log (`sources/<n>/`) misses a file a restart reads: the chain the source restores (the latest `.compact` and the batches after it), the batches of the latest batch's logOffset range, or every batch up to the committed logOffset (the next files then fail the batch).";
    SourceFilesSkipped = "source-files-skipped", [Warning], [],
        "A file source log lost its newest batch file, at the logOffset the checkpoint committed: Spark resumes, but logs the files it lists first (every file that arrived while the query was down) as that committed batch again, and no batch reads them: silent data loss.";
    SourceLogEntriesLost = "source-log-entries-lost", [Warning], [],
        "A file of the chain a file source restores parses but lacks the entries of some batches (cut at a line or to its version line): Spark resumes and reads those batches' files again (duplicates).";
    SourceOffsetUnparsable = "source-offset-unparsable", [Error, Warning], [],
        "A source's offset in an offsets file is not valid JSON; an error when a restart reads that file.";
    SourceCountDiffers = "source-count-differs", [Error, Warning], [],
        "Two offsets files list a different number of sources (a cut file or a changed query); an error for the latest. Named sources added with Spark 4.3's source evolution (offsets v2) are no change.";
    SourceLinesNotExamined = "source-lines-not-examined", [Warning, Info], [],
        "An offsets file has more source lines than this inspector examines one by one (1000): their number is reported (a restart compares it with the query's sources), the lines after the first 1000 are only counted and checked for JSON; a warning, and an unknown verdict unless the restart fails by the sources' offsets, when a restart reads the file.";
    CommitWithoutOffsets = "commit-without-offsets", [Warning], [],
        "A commit file has no offsets file of the same batch: offsets files were deleted.";
    OffsetsGap = "offsets-gap", [Error, Warning], [],
        "Offsets files are missing between the first and the latest batch; an error when the one before the latest is gone (a restart needs it).";
    AsyncProgressTracking = "async-progress-tracking", [Error, Info], [],
        "The offset and commit logs were written with async progress tracking (`asyncProgressTrackingEnabled`: offsets and commits written once per checkpoint interval, not for every batch): a restart without it needs the offsets of the batch before the latest and fails with IllegalStateException \"batch N doesn't exist\" when that batch was never written.";
    CommitsGap = "commits-gap", [Warning], [],
        "Commit files are missing between the first and the latest commit.";
    CommitAheadOfOffsets = "commit-ahead-of-offsets", [Error], ["CONCURRENT_STREAM_LOG_UPDATE", "CANNOT_LOAD_STATE_STORE.CANNOT_READ_STREAMING_STATE_FILE"],
        "A commit file exists for a batch beyond the latest offsets file (offsets files were deleted): Spark runs the latest planned batch again and fails writing its commit, or loading its state with checkpoint format v2.";
    LastBatchUncommitted = "last-batch-uncommitted", [Error, Warning, Info], ["CANNOT_LOAD_STATE_STORE.CANNOT_READ_STREAMING_STATE_FILE"],
        "The latest batch was planned but not committed, so a restart runs it again; a warning when the commit log trails by more than one batch, an error then with state checkpoint format v2 (the state is loaded with the ids of another version).";
    // Writers and sidecars.
    ConcurrentWriterTempFile = "concurrent-writer-temp-file", [Warning], [],
        "A leftover temp file holds a different copy of an existing log file: two runs planned the same batch.";
    LeftoverTempFile = "leftover-temp-file", [Warning], [],
        "A temp file of an interrupted atomic write was left behind; Spark ignores it.";
    BatchTimestampBackwards = "batch-timestamp-backwards", [Warning], [],
        "A later batch records an earlier batchTimestampMs: another writer, or the driver clock jumped back.";
    OrphanHadoopCrc = "orphan-hadoop-crc", [Error, Warning, Info], ["_LEGACY_ERROR_TEMP_2207", "CONCURRENT_STREAM_LOG_UPDATE"],
        "A Hadoop `.crc` sidecar has no main file; in a log Spark writes next it makes the rename fail with a misleading \"concurrently using\" error.";
    OrphanSparkChecksum = "orphan-spark-checksum", [Info], [],
        "Spark 4.1+ checksum files remain for files that were deleted; harmless by itself.";
    // The state tree and its configuration.
    ShufflePartitionsOverridden = "shuffle-partitions-overridden", [Info], [],
        "The session's spark.sql.shuffle.partitions is ignored: the checkpoint's recorded value wins for a stateful query.";
    StatePartitionMissing = "state-partition-missing", [Error, Info], [],
        "A stateful operator has no state directory for some of the recorded partitions; an error when a restart loads a version above 0.";
    StatePartitionExtra = "state-partition-extra", [Warning], [],
        "A stateful operator has partition directories beyond the recorded partition count; Spark ignores them.";
    StateOperatorEmpty = "state-operator-empty", [Warning], [],
        "An operator's state directory holds no partition directory.";
    StateOperatorMissing = "state-operator-missing", [Error, Warning], [
        "STREAMING_STATEFUL_OPERATOR_NOT_MATCH_IN_STATE_METADATA",
        "CANNOT_LOAD_STATE_STORE.CANNOT_READ_DELTA_FILE_NOT_EXISTS",
        "CANNOT_LOAD_STATE_STORE.CANNOT_READ_STREAMING_STATE_FILE",
    ],
        "Operator ids are not contiguous: the state directory of an operator below the highest one is missing, so a restart fails: on Spark 4.0+ with operator metadata at planning (the operator check), else loading that operator's state.";
    StateDirEmpty = "state-dir-empty", [Warning], ["STREAMING_STATEFUL_OPERATOR_MISSING_STATE_DIRECTORY"],
        "`state/` exists but holds no operator directory although batches were committed.";
    LogsGoneStateKept = "logs-gone-state-kept", [Error, Warning], ["STATE_STORE_CHECKPOINT_LOCATION_NOT_EMPTY"],
        "No offsets file, but `state/` (or `commits/`) still holds files: Spark 4.1+ refuses to start batch 0 on it; 3.5 and 4.0 start over and overwrite the old state.";
    CheckpointIdsNotSupported = "checkpoint-ids-not-supported", [Error], ["STATE_STORE_CHECKPOINT_IDS_NOT_SUPPORTED"],
        "The HDFS state store provider is asked to use state checkpoint format v2, which only RocksDB implements.";
    OperatorMetadataMissing = "operator-metadata-missing", [Error], ["STDS_FAILED_TO_READ_OPERATOR_METADATA"],
        "A transformWithState operator (its state schema files under `state/<op>/_stateSchema/`) has no operator metadata left (`state/<op>/_metadata/v2/`): Spark 4.x reads it at the restart's planning to find the schema files, and fails.";
    RecordedConfUnsupported = "recorded-conf-unsupported", [Error, Warning], ["INVALID_CONF_VALUE.REQUIREMENT", "CANNOT_LOAD_STATE_STORE.VALUE_ROW_FORMAT_VALIDATION_FAILURE"],
        "The latest offsets file records a conf a restart applies, with a value the restart's Spark cannot honour (a checkpoint of a newer Spark restarted on an older one): a join state format it does not accept, Spark 4.3's row checksums in the state values, a list state merge format of 4.2+.";
    StateEncodingFormatUnsupported = "state-encoding-format-unsupported", [Error], ["_LEGACY_ERROR_TEMP_3102"],
        "The restarting session sets spark.sql.streaming.stateStore.encodingFormat=avro and the query has a stateful operator other than transformWithState: the query fails when it starts, before the checkpoint's recorded value could apply.";
    // Loading the state version a restart needs.
    StateDeltaMissing = "state-delta-missing", [Error], ["CANNOT_LOAD_STATE_STORE.CANNOT_READ_DELTA_FILE_NOT_EXISTS"],
        "A `.delta` file the HDFS provider replays to rebuild the restart's state version is missing.";
    StateChangelogMissing = "state-changelog-missing", [Error], ["CANNOT_LOAD_STATE_STORE.CANNOT_READ_STREAMING_STATE_FILE"],
        "A `.changelog` file the RocksDB provider replays to rebuild the restart's state version is missing.";
    StateBaseSnapshotMissing = "state-base-snapshot-missing", [Error], [
            "CANNOT_LOAD_STATE_STORE.CANNOT_FIND_BASE_SNAPSHOT_CHECKPOINT",
            "CANNOT_LOAD_STATE_STORE.CANNOT_READ_CHECKPOINT",
            "CANNOT_LOAD_STATE_STORE.UNCATEGORIZED",
            "CANNOT_LOAD_STATE_STORE.AUTO_SNAPSHOT_REPAIR_FAILED",
            "CANNOT_LOAD_STATE_STORE.CANNOT_READ_STREAMING_STATE_FILE",
        ],
        "No snapshot zip is left to start the restart's state chain from where one is needed: with state checkpoint format v2, none of the lineage of the version loaded (the error class Spark raises differs by release); for a transformWithState store, none at all (its column families' mapping is in a zip, so its changelogs cannot be replayed onto an empty store).";
    StateFileCorrupt = "state-file-corrupt", [Error, Warning], [
        "CANNOT_LOAD_STATE_STORE.UNCATEGORIZED",
        "CANNOT_LOAD_STATE_STORE.CANNOT_READ_CHECKPOINT",
        "CANNOT_LOAD_STATE_STORE.CANNOT_READ_DELTA_FILE_KEY_SIZE",
        "CANNOT_LOAD_STATE_STORE.CANNOT_READ_SNAPSHOT_FILE_KEY_SIZE",
        "CANNOT_LOAD_STATE_STORE.CANNOT_READ_SNAPSHOT_FILE_VALUE_SIZE",
        "CANNOT_LOAD_STATE_STORE.INVALID_CHANGE_LOG_READER_VERSION",
        "CANNOT_LOAD_STATE_STORE.CANNOT_READ_STREAMING_STATE_FILE",
        "CANNOT_LOAD_STATE_STORE.UNEXPECTED_FILE_SIZE",
        "CANNOT_LOAD_STATE_STORE.AUTO_SNAPSHOT_REPAIR_FAILED",
        "CHECKPOINT_FILE_CHECKSUM_VERIFICATION_FAILED",
    ],
        "A state file the restart loads is damaged; an error unless Spark's automatic snapshot repair (4.2+) rebuilds the version from intact older files.";
    StateCodecMismatch = "state-codec-mismatch", [Error], ["CANNOT_LOAD_STATE_STORE.UNCATEGORIZED"],
        "The state files a restart loads are compressed with another codec than the one Spark reads them with (the latest offsets file's spark.sql.streaming.stateStore.compression.codec, lz4 when it records none).";
    RocksdbSstMissing = "rocksdb-sst-missing", [Error, Warning], ["CANNOT_LOAD_STATE_STORE.UNCATEGORIZED"],
        "An SST file the metadata of the RocksDB snapshot zip a restart loads lists is absent from `SSTs/`: Spark's copy of it fails (FileNotFoundException), and Spark does not fall back to an older snapshot by itself (only 4.3's snapshot repair, with changelog checkpointing, does).";
    RocksdbSstWrongSize = "rocksdb-sst-wrong-size", [Error, Warning], ["CANNOT_LOAD_STATE_STORE.UNEXPECTED_FILE_SIZE"],
        "An SST file the metadata of the RocksDB snapshot zip a restart loads lists has another size under `SSTs/` (truncated, emptied, replaced): Spark copies it, compares the size and fails.";
    RocksdbSnapshotMemberDamaged = "rocksdb-snapshot-member-damaged", [Error, Warning], [
        "CANNOT_LOAD_STATE_STORE.UNCATEGORIZED",
        "CANNOT_LOAD_STATE_STORE.CANNOT_READ_CHECKPOINT",
    ],
        "A member of the RocksDB snapshot zip a restart loads is absent, empty or unparsable while the zip itself reads: `metadata` (Spark's file mapping), `CURRENT` or the MANIFEST it names (RocksDB cannot open the checkpoint).";
    RocksdbZipNameUnparsable = "rocksdb-zip-name-unparsable", [Error], ["CANNOT_LOAD_STATE_STORE.UNCATEGORIZED"],
        "A file named `*.zip` whose name is no version (`old.zip`) is in a RocksDB store folder a restart loads: Spark's load lists the folder's zips (from 4.2 on every load, before only when the restart version has no zip of its own), parses each name as a number and fails (NumberFormatException); checkpoint format v2 does not.";
    StateFileCrcMismatchUnchecked = "state-file-crc-mismatch-unchecked", [Warning], [],
        "State files the restart loads do not match their Hadoop `.crc`, and the HDFS provider loads them without checking.";
    StaleChecksumSidecar = "stale-checksum-sidecar", [Error, Warning], [
        "CANNOT_LOAD_STATE_STORE.UNCATEGORIZED",
        "CHECKPOINT_FILE_CHECKSUM_VERIFICATION_FAILED",
        "CANNOT_LOAD_STATE_STORE.AUTO_SNAPSHOT_REPAIR_FAILED",
    ],
        "A Hadoop `.crc` or Spark 4.1+ checksum file disagrees with a data file that decodes completely: the sidecar (another write attempt's) is the bad file, the fix deletes it; an error when Spark verifies that sidecar on the read (a RocksDB zip's `.crc`, a state file's checksum file), else a warning.";
    StateRowSchemaViolation = "state-row-schema-violation", [Error, Warning], [
        "CANNOT_LOAD_STATE_STORE.KEY_ROW_FORMAT_VALIDATION_FAILURE",
        "CANNOT_LOAD_STATE_STORE.VALUE_ROW_FORMAT_VALIDATION_FAILURE",
        "STATE_STORE_KEY_ROW_FORMAT_VALIDATION_FAILURE",
        "STATE_STORE_VALUE_ROW_FORMAT_VALIDATION_FAILURE",
        "CANNOT_LOAD_STATE_STORE.UNCATEGORIZED",
    ],
        "State rows of the restart's version do not match the stored key or value schema; an error when the row Spark validates first is one of them.";
    StateSchemaFileUnreadable = "state-schema-file-unreadable", [Error, Warning], [
        "INVALID_LOG_VERSION.MAX_SUPPORTED_VERSION",
        "MALFORMED_LOG_FILE",
    ],
        "A store's schema file (`state/<op>/0/_metadata/schema`) that Spark's read fails on (empty, cut, not the binary format, an unknown version): Spark reads it whenever it plans a batch of the operator; an error unless `spark.sql.streaming.stateStore.stateSchemaCheck` is off.";
    StateVerificationBudget = "state-verification-budget", [Info], [],
        "State files a restart loads were over the read budget and were not verified (a run with no budget checks them).";
    // Budgets and hostile input (issue 12).
    ArchiveCompressionUnsupported = "archive-compression-unsupported", [Warning, Info], [],
        "Zip entries use a compression method this inspector does not unpack (bzip2, LZMA, Zstandard, ...) or are encrypted: one finding for the zip, the files are not verified (not damaged); the verdict is unknown when a restart reads one. Re-zip with deflate.";
    ArchiveEntriesOverlap = "archive-entries-overlap", [Warning, Info], [],
        "Zip entries share compressed bytes with another entry (an overlapping-entry zip bomb, or a broken zip): they are not unpacked, the rest is read; the verdict is unknown when a restart reads one.";
    ArchiveEntrySkipped = "archive-entry-skipped", [Warning], [],
        "Zip entries whose name cannot be a file of a checkpoint folder (a `..` component, an absolute or drive path, a name that is not UTF-8) were left out: never read, never written (nothing is ever extracted); the rest of the zip was diagnosed.";
    ArchiveEntryDuplicated = "archive-entry-duplicated", [Error, Warning], [],
        "The zip lists a path more than once: the last copy in its central directory is read, the one extracting the zip leaves on disk. An error (the verdict unknown) when the copies differ and a restart reads the file: the restart's result depends on which copy the real folder holds.";
    FileNotVerified = "file-not-verified", [Warning, Info], [],
        "Files a limit of this inspector kept from being read (one file's size, compression ratio, bytes unpacked in all, or a reader's own: an SST block or table, a state file's stream over 512 MiB): not verified, never reported as damage; the verdict is unknown when a restart reads one.";
    RootsNotDiagnosed = "roots-not-diagnosed", [Info], [],
        "The input holds more checkpoint roots than one run diagnoses (1000): the first ones are diagnosed, the others are named and counted.";
    // State growth and the watermark.
    StateGrowing = "state-growing", [Warning], [],
        "An operator's state grew at least twofold from snapshot to snapshot and never shrank: it is not evicting.";
    StateKeysBehindWatermark = "state-keys-behind-watermark", [Warning], [],
        "State holds windows that ended at or before the watermark of the batch that wrote it: they are not being evicted.";
    WatermarkNotAdvancing = "watermark-not-advancing", [Info], [],
        "The watermark has not moved over the last batches while batches kept running.";
    // Time and checksums.
    OffsetsRewrittenAfterCommit = "offsets-rewritten-after-commit", [Warning], [],
        "An offsets file was modified after its batch (or the next) was committed: a second writer or a hand edit.";
    LastActivityAge = "last-activity-age", [Info], [],
        "How long ago the last batch started and the last commit was written, against the time of the run.";
    HadoopCrcMismatch = "hadoop-crc-mismatch", [Warning], [],
        "A log file does not match its Hadoop `.crc` sidecar: it was changed after Spark wrote it, or (when it parses) the sidecar is another write's; Spark does not verify it.";
    SparkChecksumMismatch = "spark-checksum-mismatch", [Warning], ["CHECKPOINT_FILE_CHECKSUM_VERIFICATION_FAILED"],
        "A file does not match its Spark 4.1+ checksum file.";
    OffsetsUnknownKeys = "offsets-unknown-keys", [Warning], [],
        "The latest offsets file has metadata keys Spark does not know (a misspelled key silently becomes 0), or far more recorded confs than Spark writes (only the first 256 are kept).";
    // Delta Lake source (issue 10).
    DeltaLogRead = "delta-log-read", [Info], [],
        "A Delta table's `_delta_log` was given: its commits, checkpoints, earliest reconstructable version, table id, retention and protocol.";
    DeltaLogFileUnreadable = "delta-log-file-unreadable", [Warning], [],
        "A file of the given `_delta_log` (a commit, checkpoint or `_last_checkpoint`) does not read or parse.";
    DeltaOffsetInvalid = "delta-offset-invalid", [Error, Warning], ["DELTA_INVALID_SOURCE_OFFSET_FORMAT", "DELTA_INVALID_SOURCE_VERSION", "DELTA_INVALID_FORMAT_FROM_SOURCE_VERSION"],
        "A Delta source offset that Delta refuses to read back (unknown or reserved sourceVersion, fields that do not parse); an error when a restart reads it.";
    DeltaOffsetMovedBack = "delta-offset-moved-back", [Warning], [],
        "The batch a restart re-runs has a Delta end offset behind its start (version, index or the initial-snapshot flag moved back): Delta does not check offsets it reads back, so the rows between them are read twice.";
    DeltaTableUnreconstructable = "delta-table-unreconstructable", [Error], ["DELTA_TRUNCATED_TRANSACTION_LOG", "DELTA_VERSIONS_NOT_CONTIGUOUS", "DELTA_MISSING_PART_FILES"],
        "The Delta source table's log cannot rebuild its latest snapshot (commits missing after the newest checkpoint, or no checkpoint and no commit 0): no reader can open the table.";
    DeltaTableReplaced = "delta-table-replaced", [Error], ["DIFFERENT_DELTA_TABLE_READ_BY_STREAMING_SOURCE"],
        "The Delta table at the source path has another id (`metaData.id`) than the `reservoirId` the checkpoint recorded: the table was dropped and re-created.";
    DeltaVersionExpired = "delta-version-expired", [Error], ["DELTA_MISSING_FILES_UNEXPECTED_VERSION", "DELTA_LOG_FILE_NOT_FOUND_FOR_STREAMING_SOURCE", "DELTA_STREAMING_CHECK_COLUMN_MAPPING_NO_SNAPSHOT", "DELTA_UNSUPPORTED_COLUMN_MAPPING_STREAMING_READS"],
        "The table version the Delta source needs next is gone from the `_delta_log` (log cleanup after `delta.logRetentionDuration`); on a column-mapping table, the snapshot at the restart's start cannot be rebuilt (Delta's schema check fails first, whatever failOnDataLoss says).";
    DeltaSchemaChange = "delta-schema-change", [Error], ["DELTA_STREAMING_INCOMPATIBLE_SCHEMA_CHANGE_USE_SCHEMA_LOG", "DELTA_STREAMING_INCOMPATIBLE_SCHEMA_CHANGE", "DELTA_SCHEMA_CHANGED_WITH_VERSION", "DELTA_STREAMING_METADATA_EVOLUTION", "DELTA_STREAMING_CANNOT_CONTINUE_PROCESSING_POST_SCHEMA_EVOLUTION", "DELTA_BLOCK_COLUMN_MAPPING_SCHEMA_INCOMPATIBLE_OPERATION", "DELTA_UNSUPPORTED_COLUMN_MAPPING_STREAMING_READS", "DELTA_STREAMING_SCHEMA_EVOLUTION"],
        "A non-additive schema change (drop, rename, type change) of the Delta source table between the stream's version and the latest stops the stream.";
    DeltaNonAppendCommit = "delta-non-append-commit", [Error], ["DELTA_SOURCE_TABLE_IGNORE_CHANGES", "DELTA_SOURCE_IGNORE_DELETE"],
        "A commit after the stream's version removes data files (delete, update, merge, overwrite): the Delta source stops there without `skipChangeCommits`.";
    DeltaDataFilesVacuumable = "delta-data-files-vacuumable", [Warning], [],
        "Data files the Delta source has not read yet were removed from the table longer ago than `delta.deletedFileRetentionDuration`: VACUUM may have deleted them.";
    DeltaSchemaTrackingLog = "delta-schema-tracking-log", [Error, Info], ["DELTA_STREAMING_SCHEMA_LOG_DESERIALIZE_FAILED", "DELTA_STREAMING_SCHEMA_LOG_INCOMPATIBLE_DELTA_TABLE_ID"],
        "The Delta source's schema tracking log under the checkpoint (`schemaTrackingLocation`): its entries; an error when an entry does not parse or it belongs to another table.";
    DeltaRetentionCountdown = "delta-retention-countdown", [Error, Warning, Info], ["DELTA_MISSING_FILES_UNEXPECTED_VERSION", "DELTA_LOG_FILE_NOT_FOUND_FOR_STREAMING_SOURCE"],
        "When the table version the Delta source needs becomes eligible for log cleanup (the table's retention, or Delta's 30-day default without its log): a warning past two thirds of the window, an error past it (a warning when the table's log, given, still holds the version: cleanup waits for the table's next checkpoint).";
    // Driven by the pasted error text.
    SourceCountChanged = "source-count-changed", [Error], [],
        "The pasted error says the restarted query has another number of sources than the checkpoint recorded.";
    ConcurrentWriters = "concurrent-writers", [Error], ["CONCURRENT_STREAM_LOG_UPDATE", "CONCURRENT_QUERY", "_LEGACY_ERROR_TEMP_2207"],
        "The pasted error says two writers used the checkpoint at once; the finding names the files that show it.";
    StatefulOperatorWithoutState = "stateful-operator-without-state", [Error], [
        "STREAMING_STATEFUL_OPERATOR_MISSING_STATE_DIRECTORY",
        "CANNOT_LOAD_STATE_STORE.CANNOT_READ_DELTA_FILE_NOT_EXISTS",
        "CANNOT_LOAD_STATE_STORE.CANNOT_READ_STREAMING_STATE_FILE",
    ],
        "The pasted error says a stateful operator found no state: the state was lost, or the query gained a stateful operator.";
    StateSchemaChanged = "state-schema-changed", [Error], ["STATE_STORE_KEY_SCHEMA_NOT_COMPATIBLE", "STATE_STORE_VALUE_SCHEMA_NOT_COMPATIBLE"],
        "The pasted error says the restarted query's state schema differs from the schema stored in the checkpoint.";
    ErrorNotExplainedByFiles = "error-not-explained-by-files", [Error], [],
        "The pasted error names an error class or exception that nothing in the files explains (most likely a change of the query or its environment).";
    // Kafka, Auto Loader, file and other sources (issue 10).
    KafkaSourceOffsets = "kafka-source-offsets", [Info], [],
        "A Kafka source's offsets per topic and partition: where the next batch starts (the last committed batch's end offsets) and, when recorded, where the first batch started.";
    KafkaOffsetsBelowEarliest = "kafka-offsets-below-earliest", [Error], ["KAFKA_DATA_LOSS.COULD_NOT_READ_OFFSET_RANGE"],
        "A partition's next offset is below the brokers' earliest: retention deleted records the query never read; the restart fails unless failOnDataLoss=false, which skips them silently.";
    KafkaOffsetsAheadOfLatest = "kafka-offsets-ahead-of-latest", [Error], ["KAFKA_DATA_LOSS.PARTITION_OFFSET_CHANGED", "KAFKA_DATA_LOSS.COULD_NOT_READ_OFFSET_RANGE"],
        "A partition's offset in the checkpoint is beyond the brokers' latest (the topic was re-created, or a broker reports a lower high-water mark, which may be transient), or an uncommitted batch recorded an end below its start: the replay fails.";
    KafkaPartitionsRemoved = "kafka-partitions-removed", [Error], ["KAFKA_DATA_LOSS.PARTITIONS_DELETED", "KAFKA_DATA_LOSS.PARTITIONS_DELETED_AND_GROUP_ID_CONFIG_PRESENT"],
        "The brokers no longer have partitions the checkpoint reads (its topic has fewer partitions now): the restart reports them deleted.";
    KafkaTopicMissing = "kafka-topic-missing", [Error, Warning], ["KAFKA_DATA_LOSS.PARTITIONS_DELETED"],
        "The brokers' offsets name no partition of a topic the checkpoint reads: deleted (which fails the restart) or not listed; an error when the pasted error confirms it.";
    KafkaPartitionsAdded = "kafka-partitions-added", [Error, Info], ["KAFKA_DATA_LOSS.ADDED_PARTITION_DOES_NOT_START_FROM_OFFSET_ZERO"],
        "The brokers have partitions the checkpoint does not: a restart reads them from their earliest; an error when that earliest is not 0 (records already aged out).";
    FileSourceFiles = "file-source-files", [Info], [],
        "A file source's log (`sources/<n>/`, compactions included): the files each batch read, and what a restart reads again.";
    FileSourcePath = "file-source-path", [Error, Warning, Info], [],
        "The path a file source reads now (given by the user) against the files its log recorded: a path that is not a glob and does not hold the last batch's files fails the restart (Wrong basePath); otherwise the new path's files are all new, but those older than the newest recorded file minus maxFileAge.";
    AutoLoaderSource = "autoloader-source", [Info], [],
        "An Auto Loader (`cloudFiles`) source: its offset, its file-tracking store under `sources/<n>/rocksdb/` (format not public) and its schema versions when the schema location is in the input.";
    AutoLoaderSchemaEvolution = "autoloader-schema-evolution", [Warning], [],
        "The pasted error is Auto Loader's UnknownFieldException: new columns stopped the stream after the schema location was updated; a restart picks up the new schema.";
    SourceOffsetShape = "source-offset-shape", [Info], [],
        "A source other than file, Kafka, Delta and Auto Loader (rate, memory, socket, Event Hubs, a custom source), named from its offset's shape; its raw offset is shown.";
    // The input as a whole.
    NoCheckpointFound = "no-checkpoint-found", [Warning], [],
        "The input holds no Spark checkpoint (no metadata, offsets, commits, state or DStream checkpoint file).";
}

impl Code {
    /// The stable kebab-case string, as in the JSON report.
    pub const fn as_str(self) -> &'static str {
        self.info().code
    }
}

/// The catalogue as a Markdown table (code, severities, error classes, meaning), as the README lists it.
pub fn markdown_table() -> String {
    let mut out = String::from("| code | severity | Spark error classes | meaning |\n|---|---|---|---|\n");
    for c in Code::ALL {
        let i = c.info();
        let sev: Vec<&str> = i
            .severities
            .iter()
            .map(|s| match s {
                Severity::Error => "error",
                Severity::Warning => "warning",
                Severity::Info => "info",
            })
            .collect();
        let classes: Vec<String> = i.error_classes.iter().map(|c| format!("`{c}`")).collect();
        out.push_str(&format!(
            "| `{}` | {} | {} | {} |\n",
            i.code,
            sev.join(", "),
            if classes.is_empty() { "—".to_string() } else { classes.join(", ") },
            i.doc
        ));
    }
    out
}

impl fmt::Display for Code {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for Code {
    type Err = String;
    /// The code named by its kebab-case string.
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Code::ALL.iter().copied().find(|c| c.as_str() == s).ok_or_else(|| format!("unknown finding code {s:?}"))
    }
}

impl PartialEq<str> for Code {
    fn eq(&self, other: &str) -> bool {
        self.as_str() == other
    }
}

impl PartialEq<&str> for Code {
    fn eq(&self, other: &&str) -> bool {
        self.as_str() == *other
    }
}

impl Serialize for Code {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.as_str())
    }
}

impl<'de> Deserialize<'de> for Code {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let s = String::deserialize(d)?;
        s.parse().map_err(serde::de::Error::custom)
    }
}

/// Where in Spark's restart sequence a finding makes the restart fail (FORMATS.md §16): the restart
/// prediction takes the earliest. Serialised as its number (lower fails first).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
#[repr(u32)]
pub enum RestartStage {
    /// The query is analysed when it starts (`UnsupportedOperationChecker`), before any checkpoint file is read.
    Analysis = 5,
    /// `metadata` is read (and, in 4.3, checked to exist) when the query starts.
    Metadata = 10,
    /// DStream: `StreamingContext.getOrCreate` deserializes the checkpoint files, newest first.
    DstreamCheckpointRead = 12,
    /// DStream: the recovered graph restores each DStream's checkpointed RDDs from their folders.
    DstreamRestore = 14,
    /// The latest offsets file is read.
    LatestOffsets = 20,
    /// The offsets file before the latest is read (where the latest batch starts).
    PreviousOffsets = 25,
    /// The latest commit file is read.
    LatestCommit = 30,
    /// The number of sources is matched against the latest offsets file.
    SourceCount = 35,
    /// Each source re-reads its offset JSON, and a file source its log (`sources/<n>/`).
    SourceOffsets = 36,
    /// The state schema is checked at planning.
    StateSchema = 40,
    /// The next batch's log files are written (offsets, then commits).
    LogWrite = 50,
    /// Stateful operators look for their state directory.
    StateDirectory = 55,
    /// Executors read the batch's input: a Kafka source fetches its offset ranges (`KafkaDataConsumer.get`). The
    /// scan runs in the stage before the shuffle that feeds the stateful operators, so before their stores open.
    SourceRead = 58,
    /// The state store configuration is validated when the first store opens.
    StateStoreConfig = 60,
    /// Executors load the state version `last commit + 1` in every partition.
    StateLoad = 70,
    /// The first state row read is validated against the stored schema.
    StateRowValidation = 72,
    /// The batch's sink commits its output; a file sink compacts its log at compaction batches
    /// (`FileStreamSinkLog`, every `compactInterval` batches), reading the previous compaction and the batches after it.
    SinkCommit = 80,
    /// The batch's commit file is written (`commitLog.add`), after its sink committed the output.
    BatchCommit = 90,
}

impl RestartStage {
    /// Every stage, in restart order.
    pub const ALL: &'static [RestartStage] = &[
        RestartStage::Analysis,
        RestartStage::Metadata,
        RestartStage::DstreamCheckpointRead,
        RestartStage::DstreamRestore,
        RestartStage::LatestOffsets,
        RestartStage::PreviousOffsets,
        RestartStage::LatestCommit,
        RestartStage::SourceCount,
        RestartStage::SourceOffsets,
        RestartStage::StateSchema,
        RestartStage::LogWrite,
        RestartStage::StateDirectory,
        RestartStage::SourceRead,
        RestartStage::StateStoreConfig,
        RestartStage::StateLoad,
        RestartStage::StateRowValidation,
        RestartStage::SinkCommit,
        RestartStage::BatchCommit,
    ];

    /// The stage's number (its position in the restart sequence; the JSON value).
    pub const fn number(self) -> u32 {
        self as u32
    }
}

impl Serialize for RestartStage {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_u32(self.number())
    }
}

impl<'de> Deserialize<'de> for RestartStage {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let n = u32::deserialize(d)?;
        RestartStage::ALL
            .iter()
            .copied()
            .find(|s| s.number() == n)
            .ok_or_else(|| serde::de::Error::custom(format!("unknown restart stage {n}")))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn codes_are_unique_kebab_case_and_round_trip() {
        let mut seen = std::collections::BTreeSet::new();
        for c in Code::ALL {
            let s = c.as_str();
            assert!(seen.insert(s), "{s} twice");
            assert!(s.bytes().all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-'), "{s}");
            assert_eq!(s.parse::<Code>(), Ok(*c));
            assert_eq!(serde_json::to_string(c).unwrap(), format!("\"{s}\""));
            assert_eq!(serde_json::from_str::<Code>(&format!("\"{s}\"")).unwrap(), *c);
            let info = c.info();
            assert!(!info.severities.is_empty() && !info.doc.is_empty(), "{s}");
            assert!(info.severities.windows(2).all(|w| w[0] < w[1]), "{s}: severities most severe first");
        }
    }

    #[test]
    fn the_readme_lists_the_catalogue() {
        let readme = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../../README.md")).expect("README");
        let start =
            readme.find("<!-- finding-codes:start -->").expect("start marker") + "<!-- finding-codes:start -->\n".len();
        let end = readme.find("<!-- finding-codes:end -->").expect("end marker");
        if std::env::var_os("UPDATE_README").is_some() && readme[start..end] != markdown_table() {
            // `UPDATE_README=1 cargo test -p checkpoint-core --lib catalogue` rewrites the table (review the diff).
            let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../README.md");
            std::fs::write(path, format!("{}{}{}", &readme[..start], markdown_table(), &readme[end..]))
                .expect("write README");
            return;
        }
        assert_eq!(
            &readme[start..end],
            markdown_table(),
            "README's finding table differs from the catalogue; run with UPDATE_README=1 to rewrite it, then review the diff"
        );
    }

    #[test]
    fn stages_serialise_as_their_numbers_in_order() {
        assert!(RestartStage::ALL.windows(2).all(|w| w[0] < w[1] && w[0].number() < w[1].number()));
        for s in RestartStage::ALL {
            let j = serde_json::to_string(s).unwrap();
            assert_eq!(j, s.number().to_string());
            assert_eq!(serde_json::from_str::<RestartStage>(&j).unwrap(), *s);
        }
    }
}
