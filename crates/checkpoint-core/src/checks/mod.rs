//! The checks: one module per family of findings. Each check is a plain function
//! `(&Checkpoint, &Context) -> Vec<Finding>` listed in [`REGISTRY`] under the codes it emits; every code, its
//! severities, error classes and meaning are in the [`catalogue`]. `Context::spark_version` is filled in
//! by [`crate::diagnose`](fn@crate::diagnose) before the checks run (the assumed Spark version).

pub mod archive_entries;
pub mod async_progress;
pub mod budgets;
pub mod catalogue;
pub mod checksums;
pub mod commit_lag;
pub mod delta;
pub mod delta_log;
pub mod delta_schema_log;
pub mod dstream;
pub mod dstream_classes;
pub mod error_text;
pub mod fresh_start;
pub mod kafka;
pub mod kafka_pasted;
pub mod logs;
pub mod metadata;
pub mod recorded_conf;
pub mod rocksdb_zip;
pub mod rocksdb_zip_names;
pub mod schema_file;
pub mod sink_log;
pub mod source_files;
pub mod source_log_entries;
pub mod source_log_range;
mod source_offset_lines;
pub mod source_path;
pub mod stale_sidecar;
pub mod state;
pub mod state_chain;
pub mod state_codec;
pub mod state_growth;
pub mod state_rows;
pub mod timing;
pub mod writers;

#[cfg(test)]
mod snapshot_inputs;
#[cfg(test)]
mod snapshots;

use crate::model::Checkpoint;
use crate::report::{Code, Finding};
use crate::{Context, SparkVersion};
use std::collections::BTreeMap;

/// A check: reads the model, returns findings.
pub type Check = fn(&Checkpoint, &Context) -> Vec<Finding>;

/// One row of the [`REGISTRY`]: a check and the codes of the findings it emits (one code, except where one
/// decision per item picks the code, e.g. how a log file is damaged).
#[derive(Debug, Clone, Copy)]
pub struct Rule {
    /// The codes the check emits (a test keeps this true on every fixture).
    pub codes: &'static [Code],
    /// The check.
    pub check: Check,
}

const fn rule(codes: &'static [Code], check: Check) -> Rule {
    Rule { codes, check }
}

/// Every check, keyed by the codes it emits, in the order they run (the order of findings of equal
/// severity and restart stage in the report).
pub const REGISTRY: &[Rule] = &[
    rule(&[Code::MetadataMissing, Code::MetadataUnreadable, Code::ArchiveEntryUnreadable], metadata::check_metadata),
    rule(&[Code::EscapedPath], metadata::check_escaped_path),
    rule(&[Code::DstreamCheckpointUnreadable], dstream::check_files),
    rule(&[Code::DstreamClassNotLoadable], dstream_classes::check_class_error),
    rule(&[Code::DstreamReplClass], dstream_classes::check_repl),
    rule(&[Code::DstreamScalaIncompatible], dstream_classes::check_scala_version),
    rule(&[Code::DstreamRddCheckpointMissing], dstream::check_rdd_checkpoints),
    rule(&[Code::DstreamGadgetClass], dstream_classes::check_gadgets),
    rule(&[Code::DstreamUnexpectedContent], dstream_classes::check_unexpected),
    rule(&[Code::DstreamRecovery], dstream::check_recovery),
    rule(&[Code::DstreamAllowedClasses], dstream_classes::check_allowed),
    rule(&[Code::DstreamMigration], dstream::check_migration),
    rule(
        &[
            Code::ArchiveEntryUnreadable,
            Code::LogFileEmpty,
            Code::LogVersionMalformed,
            Code::LogFileTruncated,
            Code::LogFileMalformed,
            Code::LogVersionUnsupported,
            Code::LogFilesNotRead,
            Code::FileSinkLog,
            Code::SinkLogUnreadable,
            Code::UnexpectedLogFile,
            Code::OperatorMetadataUnreadable,
        ],
        logs::check_log_files,
    ),
    rule(&[Code::SourceLogBatchMissing], sink_log::check_source_chain),
    rule(&[Code::SourceLogEntriesLost], source_log_entries::check_source_log_entries),
    rule(&[Code::SourceLogBatchMissing, Code::SourceFilesSkipped], source_log_range::check_source_range),
    rule(&[Code::SinkLogBatchMissing], sink_log::check_sink_chain),
    rule(&[Code::SinkLogAhead], sink_log::check_sink_ahead),
    rule(&[Code::SinkLogFileMissing], sink_log::check_sink_files),
    rule(
        &[
            Code::SourceOffsetUnparsable,
            Code::SourceCountDiffers,
            Code::SourceLinesNotExamined,
            Code::CommitWithoutOffsets,
            Code::OffsetsGap,
            Code::CommitsGap,
            Code::CommitAheadOfOffsets,
            Code::LastBatchUncommitted,
        ],
        logs::check_continuity,
    ),
    rule(&[Code::AsyncProgressTracking], async_progress::check_async_progress),
    rule(
        &[Code::ConcurrentWriterTempFile, Code::LeftoverTempFile, Code::BatchTimestampBackwards],
        writers::check_writers,
    ),
    rule(&[Code::OrphanHadoopCrc, Code::OrphanSparkChecksum], writers::check_orphan_crc),
    rule(
        &[
            Code::ShufflePartitionsOverridden,
            Code::StatePartitionMissing,
            Code::StatePartitionExtra,
            Code::StateOperatorEmpty,
            Code::StateOperatorMissing,
            Code::StateDirEmpty,
        ],
        state::check_layout,
    ),
    rule(&[Code::CheckpointIdsNotSupported], state::check_config),
    rule(&[Code::StateEncodingFormatUnsupported], state::check_encoding_format),
    rule(&[Code::RecordedConfUnsupported], recorded_conf::check_recorded_confs),
    rule(&[Code::OperatorMetadataMissing], state::check_tws_operator_metadata),
    rule(&[Code::LogsGoneStateKept], fresh_start::check_logs_gone),
    rule(
        &[
            Code::StateDeltaMissing,
            Code::StateChangelogMissing,
            Code::StateBaseSnapshotMissing,
            Code::StateFileCorrupt,
            Code::StateCodecMismatch,
            Code::RocksdbSstMissing,
            Code::RocksdbSstWrongSize,
            Code::RocksdbSnapshotMemberDamaged,
            Code::StateFileCrcMismatchUnchecked,
            Code::StaleChecksumSidecar,
        ],
        state_chain::check_chains,
    ),
    rule(&[Code::RocksdbZipNameUnparsable], rocksdb_zip_names::check_zip_names),
    rule(&[Code::StateSchemaFileUnreadable], schema_file::check_schema_files),
    rule(&[Code::ArchiveCompressionUnsupported], budgets::check_compression),
    rule(&[Code::ArchiveEntriesOverlap], budgets::check_overlap),
    rule(&[Code::ArchiveEntryUnreadable], budgets::check_inaccessible),
    rule(&[Code::ArchiveEntryUnreadable], archive_entries::check_state_entries),
    rule(&[Code::ArchiveEntrySkipped], archive_entries::check_skipped),
    rule(&[Code::ArchiveEntryDuplicated], archive_entries::check_duplicated),
    rule(&[Code::FileNotVerified], budgets::check_not_verified),
    rule(&[Code::StateRowSchemaViolation], state_rows::check_row_schema),
    rule(&[Code::StateVerificationBudget], state_rows::check_budget),
    rule(&[Code::StateGrowing], state_growth::check_growth),
    rule(&[Code::StateKeysBehindWatermark], state_growth::check_keys_behind_watermark),
    rule(&[Code::WatermarkNotAdvancing], state_growth::check_watermark_stuck),
    rule(&[Code::DeltaLogRead], delta_log::check_log_summary),
    rule(&[Code::DeltaLogFileUnreadable], delta_log::check_log_unreadable),
    rule(&[Code::FileNotVerified], delta_log::check_log_not_verified),
    rule(&[Code::DeltaOffsetInvalid, Code::DeltaOffsetMovedBack], delta::check_offsets),
    rule(&[Code::DeltaSchemaTrackingLog], delta_schema_log::check_schema_tracking_logs),
    rule(
        &[
            Code::DeltaTableUnreconstructable,
            Code::DeltaTableReplaced,
            Code::DeltaVersionExpired,
            Code::DeltaSchemaChange,
            Code::DeltaNonAppendCommit,
            Code::DeltaDataFilesVacuumable,
        ],
        delta_log::check_with_log,
    ),
    rule(&[Code::DeltaRetentionCountdown], delta::check_retention_countdown),
    rule(&[Code::OffsetsRewrittenAfterCommit, Code::LastActivityAge], timing::check_timing),
    rule(
        &[Code::HadoopCrcMismatch, Code::SparkChecksumMismatch, Code::StaleChecksumSidecar, Code::OffsetsUnknownKeys],
        checksums::check_checksums,
    ),
    rule(
        &[
            Code::SourceCountChanged,
            Code::ConcurrentWriters,
            Code::StatefulOperatorWithoutState,
            Code::StateSchemaChanged,
        ],
        error_text::check_error_text,
    ),
    rule(&[Code::KafkaSourceOffsets], kafka::check_kafka_offsets),
    rule(
        &[
            Code::KafkaOffsetsBelowEarliest,
            Code::KafkaOffsetsAheadOfLatest,
            Code::KafkaPartitionsRemoved,
            Code::KafkaTopicMissing,
            Code::KafkaPartitionsAdded,
        ],
        kafka::check_kafka_brokers,
    ),
    rule(&[Code::FileSourceFiles], source_files::check_file_source),
    rule(&[Code::FileSourcePath, Code::FileNotVerified], source_path::check_source_path),
    rule(&[Code::AutoLoaderSource], source_files::check_autoloader),
    rule(&[Code::AutoLoaderSchemaEvolution], source_files::check_autoloader_schema_error),
    rule(&[Code::SourceOffsetShape], source_files::check_other_sources),
];

/// Codes that no registry row emits: [`crate::diagnose`](fn@crate::diagnose) reports them about the input as a whole
/// (`no-checkpoint-found`) or after matching the pasted error to the other findings
/// (`error-not-explained-by-files`).
pub const DIAGNOSE_CODES: &[Code] = &[Code::NoCheckpointFound, Code::ErrorNotExplainedByFiles, Code::RootsNotDiagnosed];

/// The registry rows that emit `code`.
pub fn rules_for(code: Code) -> impl Iterator<Item = &'static Rule> {
    REGISTRY.iter().filter(move |r| r.codes.contains(&code))
}

/// Runs every check of the registry.
pub fn run_all(cp: &Checkpoint, ctx: &Context) -> Vec<Finding> {
    let mut findings: Vec<Finding> = REGISTRY
        .iter()
        .flat_map(|r| {
            let found = (r.check)(cp, ctx);
            debug_assert!(
                found.iter().all(|f| r.codes.contains(&f.code)),
                "a check emitted a code its registry row does not list: {:?} not in {:?}",
                found.iter().map(|f| f.code).collect::<Vec<_>>(),
                r.codes
            );
            found
        })
        .collect();
    findings.retain(|f| !missing_only_inside_unreadable(cp, f));
    // The Delta checks judge with the newest Delta's classes; the line the restart's Spark runs names them.
    let delta = crate::delta::release::line(spark(ctx));
    for f in findings.iter_mut().filter(|f| f.code.as_str().starts_with("delta-")) {
        delta.apply(f);
    }
    findings
}

/// Codes that say a file or folder is absent (or a log has a gap): reported only for what the input could give.
const ABSENCE_CODES: &[Code] = &[
    Code::MetadataMissing,
    Code::OffsetsGap,
    Code::CommitsGap,
    Code::SourceLogBatchMissing,
    Code::SourceFilesSkipped,
    Code::SinkLogBatchMissing,
    Code::SinkLogFileMissing,
    Code::StateOperatorMissing,
    Code::OperatorMetadataMissing,
    Code::StatePartitionMissing,
    Code::StateDirEmpty,
    Code::LogsGoneStateKept,
    Code::StateDeltaMissing,
    Code::StateChangelogMissing,
    Code::StateBaseSnapshotMissing,
    Code::RocksdbSstMissing,
];

/// True for an absence finding whose every file lies in a file or folder the input listed but could not give
/// ([`Checkpoint::archive_unreadable`], `Inaccessible`: a folder of a directory input without read permission,
/// a dangling link): the file may well be there. `archive-entry-unreadable` names the folder and leaves the
/// verdict unknown; "state/0/1/1.delta is missing, restore it" would be a wrong answer and a wrong way out.
fn missing_only_inside_unreadable(cp: &Checkpoint, f: &Finding) -> bool {
    if !ABSENCE_CODES.contains(&f.code) {
        return false;
    }
    let unreadable = |p: &str| {
        cp.archive_unreadable.iter().any(|(u, e)| {
            matches!(e, crate::archive::ArchiveError::Inaccessible { .. })
                && (p == u || p.strip_prefix(u.as_str()).is_some_and(|rest| rest.starts_with('/')))
        })
    };
    let mut paths = f.evidence.iter().map(|e| e.path.trim_end_matches('/')).filter(|p| !p.is_empty()).peekable();
    paths.peek().is_some() && paths.all(unreadable)
}

/// The assumed Spark version.
pub fn spark(ctx: &Context) -> SparkVersion {
    ctx.spark_version.unwrap_or(SparkVersion::NEWEST)
}

/// True for Spark 3.x and older (untyped exceptions for most checkpoint damage).
pub fn legacy(ctx: &Context) -> bool {
    !spark(ctx).at_least(4, 0)
}

/// The confs the restarted query runs with: the session's, overridden by every conf recorded in the latest
/// offsets file (FORMATS.md §3.2: recorded keys win).
pub fn effective_conf(cp: &Checkpoint, ctx: &Context) -> BTreeMap<String, String> {
    let mut c = ctx.session_conf.clone();
    for (k, v) in cp.recorded_conf() {
        c.insert(k, v);
    }
    c
}

/// One conf of [`effective_conf`] (the latest offsets file's recorded value, else the session's), without
/// building the whole map: for checks that ask per file.
pub fn effective_conf_value<'a>(cp: &'a Checkpoint, ctx: &'a Context, key: &str) -> Option<&'a str> {
    let recorded = cp.recorded_conf_ref().and_then(|c| c.get(key));
    recorded.or_else(|| ctx.session_conf.get(key)).map(String::as_str)
}

/// A boolean conf with a default.
pub fn conf_bool(conf: &BTreeMap<String, String>, key: &str, default: bool) -> bool {
    conf.get(key).map(|v| v.trim().eq_ignore_ascii_case("true")).unwrap_or(default)
}

/// Formats the standard "make a backup first" step.
pub const BACKUP: &str = "Copy the whole checkpoint directory somewhere safe before changing anything in it.";

/// The last-resort fix: a new checkpoint location, with each source's exact starting options
/// (see [`crate::restart_plan`]), for the first `MAX_NAMED` sources (the restart plan names every source kept).
pub fn new_checkpoint_step(cp: &Checkpoint) -> String {
    let mut s = String::from(
        "Last resort: start the query on a NEW checkpoint location (option(\"checkpointLocation\", \"<new path>\")) \
         and make the sources start where this checkpoint stopped",
    );
    let plans = crate::restart_plan::source_plans(cp);
    if plans.is_empty() {
        s.push_str(if cp.last_committed_batch_id().is_none() {
            " (no batch was committed, so the sources' own starting options apply)"
        } else {
            " (no start can be computed from the recorded offsets of these sources, so their own starting options apply)"
        });
    }
    for p in plans.iter().take(MAX_NAMED) {
        s.push_str("; ");
        s.push_str(&p.step);
    }
    if plans.len() > MAX_NAMED {
        s.push_str(&format!("; and {} more sources (see the restart plan)", plans.len() - MAX_NAMED));
    }
    s.push_str(". State (aggregations, deduplication, joins) starts empty.");
    s
}

/// Items named in one title or evidence line at most; [`some_of`] counts the rest.
pub(crate) const MAX_NAMED: usize = 20;

/// `a, b, c`, or the first [`MAX_NAMED`] of `count` items and `and N more` (the one way findings name a long list:
/// missing partitions, missing log batches, files not read).
pub(crate) fn some_of<T: std::fmt::Display>(items: impl IntoIterator<Item = T>, count: u64) -> String {
    let shown: Vec<String> = items.into_iter().take(MAX_NAMED).map(|i| i.to_string()).collect();
    let more = count.saturating_sub(shown.len() as u64);
    if more > 0 {
        format!("{} and {more} more", shown.join(", "))
    } else {
        shown.join(", ")
    }
}

/// Findings of one code a report lists one by one; the others of that code are folded into one finding
/// ([`fold_repeated`]). Most checks already group by file or store, but a real broken checkpoint can pass it (a
/// delta missing in each of 200 partitions); it bounds the report, its rendering and a shared link whatever the
/// input holds, and the folded finding still counts and names the rest.
pub const MAX_FINDINGS_PER_CODE: usize = 100;

/// Evidence items a folded finding keeps (one of each folded finding, the first ones).
const MAX_FOLDED_EVIDENCE: usize = 10;

/// Keeps the first [`MAX_FINDINGS_PER_CODE`] findings of each code (in the order given: display order, most
/// severe first) and folds the others of that code into one finding that counts them: the most severe of their
/// severities, the earliest of their restart failures (so the prediction is the same), their error classes, the
/// first evidence of the first `MAX_FOLDED_EVIDENCE`, and as an example the title, why and fix of the one whose
/// restart failure it keeps (else the first one's), so that a prediction quoting the title quotes the right one.
pub fn fold_repeated(findings: Vec<Finding>) -> Vec<Finding> {
    let mut seen: BTreeMap<Code, usize> = BTreeMap::new();
    let mut out = Vec::new();
    let mut folded: BTreeMap<Code, (usize, Finding)> = BTreeMap::new();
    for f in findings {
        let n = seen.entry(f.code).or_default();
        *n += 1;
        if *n <= MAX_FINDINGS_PER_CODE {
            out.push(f);
            continue;
        }
        let Some((count, g)) = folded.get_mut(&f.code) else {
            let mut g = f.clone();
            g.evidence.truncate(1);
            folded.insert(f.code, (1, g));
            continue;
        };
        *count += 1;
        g.severity = g.severity.min(f.severity);
        g.explains_error_text |= f.explains_error_text;
        for c in f.error_classes {
            if !g.error_classes.contains(&c) {
                g.error_classes.push(c);
            }
        }
        if g.evidence.len() < MAX_FOLDED_EVIDENCE {
            g.evidence.extend(f.evidence.into_iter().take(1));
        }
        let earlier = |r: &crate::report::RestartFailure| g.restart_failure.as_ref().is_none_or(|h| r.stage < h.stage);
        if let Some(r) = f.restart_failure.filter(earlier) {
            g.restart_failure = Some(r);
            (g.title, g.why, g.fix) = (f.title, f.why, f.fix);
        }
    }
    for (code, (count, mut g)) in folded {
        g.title = format!("{count} more {code} findings, not listed one by one; one of them: {}", g.title);
        g.why = format!(
            "A report lists at most {MAX_FINDINGS_PER_CODE} findings of one kind; the other {count} are counted here, with the files of the first {} of them. {}",
            g.evidence.len(),
            g.why
        );
        out.push(g);
    }
    out
}

#[cfg(test)]
mod fold_tests {
    use super::*;
    use crate::report::{RestartStage, Severity};

    #[test]
    fn repeated_findings_are_folded_per_code_keeping_the_worst() {
        let mut all: Vec<Finding> = (0..250)
            .map(|i| {
                let sev = if i == 240 { Severity::Error } else { Severity::Warning };
                let mut f = Finding::new(Code::SourceOffsetUnparsable, sev, format!("offsets/{i}")).evidence(
                    format!("offsets/{i}"),
                    "bad",
                    Some(i),
                );
                if i == 240 {
                    f = f.fails(RestartStage::SourceOffsets, None, "X");
                }
                f
            })
            .collect();
        all.push(Finding::new(Code::OffsetsGap, Severity::Warning, "gap"));
        let out = fold_repeated(all);
        assert_eq!(out.len(), MAX_FINDINGS_PER_CODE + 2);
        let g = out.last().expect("the folded finding");
        assert_eq!(g.code, Code::SourceOffsetUnparsable);
        assert!(g.title.starts_with("150 more source-offset-unparsable findings"), "{}", g.title);
        // The example is the finding whose restart failure the folded one keeps: a prediction quoting the title
        // names the file that fails.
        assert!(g.title.ends_with("one of them: offsets/240"), "{}", g.title);
        assert_eq!(g.severity, Severity::Error);
        assert_eq!(g.restart_failure.as_ref().map(|r| r.stage), Some(RestartStage::SourceOffsets));
        assert_eq!(g.evidence.len(), MAX_FOLDED_EVIDENCE);
        assert_eq!(g.evidence[0].path, "offsets/100");
    }
}
