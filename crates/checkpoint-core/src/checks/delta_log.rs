//! Delta Lake source checks against the table's `_delta_log` (the CLI's delta-log option, the page's second drop
//! target, or a `_delta_log/` in the same zip): what the log holds, whether the table can be read at all,
//! whether it is still the table the checkpoint read, whether the version the stream needs is still there,
//! and what between that version and the latest stops the stream (non-additive schema changes, commits
//! that delete or rewrite data, data files VACUUM may have removed).
//!
//! The spec is delta-io/delta: `SnapshotManagement.getLogSegmentForVersion` / `validateDeltaVersions`
//! (`DELTA_TRUNCATED_TRANSACTION_LOG`, `DELTA_VERSIONS_NOT_CONTIGUOUS`, `DELTA_MISSING_PART_FILES`),
//! `DeltaSourceOffset.apply` (`DIFFERENT_DELTA_TABLE_READ_BY_STREAMING_SOURCE`), `DeltaLog.getChangeLogFiles`
//! (`DELTA_MISSING_FILES_UNEXPECTED_VERSION`), `DeltaSource.getSnapshotFromDeltaLog`
//! (`DELTA_LOG_FILE_NOT_FOUND_FOR_STREAMING_SOURCE`), `DeltaSource.checkReadIncompatibleSchemaChanges`
//! (`DELTA_STREAMING_INCOMPATIBLE_SCHEMA_CHANGE_USE_SCHEMA_LOG` on column-mapping tables,
//! `DELTA_SCHEMA_CHANGED_WITH_VERSION` otherwise), `DeltaSource.validateCommitAndDecideSkipping`
//! (`DELTA_SOURCE_TABLE_IGNORE_CHANGES`, `DELTA_SOURCE_IGNORE_DELETE`).

use super::delta::{
    date, days_left, DELTA_FILE_NOT_FOUND, DELTA_ILLEGAL_STATE, LOG_FILE_NOT_FOUND_FOR_STREAMING, MISSING_FILES,
};
use super::BACKUP;
use crate::delta::facts::{delta_sources, DeltaSourceFacts};
use crate::delta::interval::{describe_ms, DAY_MS};
use crate::delta::release::{line, DeltaLine};
use crate::delta::schema::{diff, SchemaChange};
use crate::delta::table::{CheckpointLayout, DeltaLog};
use crate::model::Checkpoint;
use crate::report::{Code, Finding, RestartStage, Severity};
use crate::time::utc;
use crate::Context;

pub(super) fn versions(v: &[i64]) -> String {
    match v {
        [] => "none".into(),
        [a] => a.to_string(),
        _ if v.len() > 6 => format!("{}, {}, …, {} ({} in all)", v[0], v[1], v[v.len() - 1], v.len()),
        _ => v.iter().map(i64::to_string).collect::<Vec<_>>().join(", "),
    }
}

fn range_text(log: &DeltaLog) -> String {
    match (log.earliest_commit(), log.commits.keys().next_back()) {
        (Some(a), Some(b)) if a == *b => format!("commit {a}"),
        (Some(a), Some(b)) => format!("commits {a}..{b}"),
        _ => "no commit files".into(),
    }
}

/// One info finding per log given: what it holds.
pub fn check_log_summary(_cp: &Checkpoint, ctx: &Context) -> Vec<Finding> {
    let mut out = Vec::new();
    for log in &ctx.delta_logs {
        let dir = if log.dir.is_empty() { "_delta_log".to_string() } else { log.dir.clone() };
        let meta = log.latest_metadata();
        let id = meta.map(|(_, m)| m.id.clone()).unwrap_or_else(|| "unknown (no metaData read)".into());
        let cps: Vec<i64> = log.checkpoints.keys().copied().collect();
        let mut f = Finding::new(
            Code::DeltaLogRead,
            Severity::Info,
            format!(
                "Delta table {id}: {}, checkpoints at {}, earliest reconstructable version {}",
                range_text(log),
                versions(&cps),
                log.earliest_reconstructable().map(|v| v.to_string()).unwrap_or_else(|| "none".into())
            ),
        );
        let mut lines = vec![format!(
            "{} file(s) listed in {} of {}",
            log.commits.len()
                + log.checkpoints.values().map(|c| c.files.len()).sum::<usize>()
                + log.other_files.len()
                + log.compacted.len(),
            dir,
            log.input
        )];
        for k in log.checkpoints.values() {
            let layout = match &k.layout {
                CheckpointLayout::Classic => "classic single-file".to_string(),
                CheckpointLayout::MultiPart { parts } => format!("multi-part ({parts} parts)"),
                CheckpointLayout::V2 { sidecars } => format!("v2 with {} sidecar(s)", sidecars.len()),
            };
            let state = if k.complete() {
                format!("{} live data files", k.num_adds)
            } else if !k.missing.is_empty() {
                format!("incomplete: {} missing", k.missing.join(", "))
            } else {
                "damaged".into()
            };
            lines.push(format!("checkpoint {}: {layout}, {state}", k.version));
        }
        if let Some(lc) = &log.last_checkpoint {
            lines.push(format!("_last_checkpoint: version {}{}", lc.version, if lc.v2 { " (v2)" } else { "" }));
        }
        for (a, b, _) in &log.compacted {
            lines.push(format!("compacted log file for versions {a}..{b}"));
        }
        if !log.not_read.is_empty() {
            lines.push(format!("{} older commit file(s) not read (over the byte budget)", log.not_read.len()));
        }
        if let Some((v, m)) = meta {
            let conf =
                |k: &str, d: &str| m.conf(k).map(|x| format!("{x:?}")).unwrap_or_else(|| format!("default ({d})"));
            lines.push(format!(
                "metaData (version {v}): delta.logRetentionDuration {}, delta.deletedFileRetentionDuration {}, delta.enableChangeDataFeed {}, delta.columnMapping.mode {}, delta.enableInCommitTimestamps {}",
                conf("delta.logRetentionDuration", "30 days"),
                conf("delta.deletedFileRetentionDuration", "7 days"),
                conf("delta.enableChangeDataFeed", "false"),
                conf("delta.columnMapping.mode", "none"),
                conf("delta.enableInCommitTimestamps", "false"),
            ));
        }
        if let Some((v, p)) = log.latest_version().and_then(|l| log.protocol_at(l)) {
            let mut feats: Vec<String> = p.reader_features.iter().map(|x| format!("reader:{x}")).collect();
            feats.extend(p.writer_features.iter().map(|x| format!("writer:{x}")));
            lines.push(format!(
                "protocol (version {v}): minReaderVersion {}, minWriterVersion {}{}",
                p.min_reader_version,
                p.min_writer_version,
                if feats.is_empty() { String::new() } else { format!(", features {}", feats.join(", ")) }
            ));
        }
        let ts: Vec<(i64, i64)> = log.commits.values().filter_map(|c| Some((c.version, c.timestamp()?))).collect();
        if let (Some(a), Some(b)) = (ts.first(), ts.last()) {
            let ict =
                log.commits.values().any(|c| c.commit_info.as_ref().is_some_and(|i| i.in_commit_timestamp.is_some()));
            lines.push(format!(
                "commit times ({}): version {} at {}, version {} at {}",
                if ict { "in-commit timestamps" } else { "commitInfo.timestamp" },
                a.0,
                utc(a.1),
                b.0,
                utc(b.1)
            ));
        }
        for l in lines {
            f = f.evidence(&dir, l, None);
        }
        out.push(f.why("The Delta source reads the table through this log: a snapshot needs a complete checkpoint at or before the version (or commit 0) and every commit after it; log cleanup removes commits and checkpoints past delta.logRetentionDuration.").fix(&["Nothing to do; the Delta checks below use these facts."]));
    }
    out
}

/// Files of the log that do not read or parse.
pub fn check_log_unreadable(_cp: &Checkpoint, ctx: &Context) -> Vec<Finding> {
    ctx.delta_logs
        .iter()
        .flat_map(|log| {
            log.problems.iter().map(move |p| {
                Finding::new(Code::DeltaLogFileUnreadable, Severity::Warning, format!("{} does not read: {}", log.display_path(&p.path), p.reason))
                    .evidence(log.display_path(&p.path), p.reason.clone(), p.offset)
                    .why("Delta reads the same file when it builds a snapshot; a damaged commit or checkpoint makes the table unreadable for every reader, not only this stream (or the zip of the log is damaged: zip it again).")
                    .fix(&["Zip the _delta_log folder again and re-run; if the file is damaged in the table itself, restore it from the storage's versioning or backups."])
            })
        })
        .collect()
}

/// Files of a Delta log this inspector could not verify (a checkpoint part over its 256 MiB cap, a commit over
/// 16 MiB, a zip entry that does not unpack): one `file-not-verified` warning per log, the verdict unknown. A
/// checkpoint with such a part is taken as complete: Delta reads it.
pub fn check_log_not_verified(_cp: &Checkpoint, ctx: &Context) -> Vec<Finding> {
    ctx.delta_logs
        .iter()
        .filter(|log| !log.not_verified.is_empty())
        .map(|log| {
            let first = log.display_path(&log.not_verified[0].path);
            let mut f = Finding::new(
                Code::FileNotVerified,
                Severity::Warning,
                format!("{first} of the Delta source's log not verified: over a limit of this inspector; the restart verdict is unknown"),
            )
            .why("A limit of this inspector (one file's size, compression ratio, a zip entry it cannot unpack) kept it from reading a file of the source table's log that Delta reads when the stream restarts. That says nothing about the file: the checks take a checkpoint of it as complete and count none of its actions, so the verdict is unknown.")
            .fix(&["Check the named file by hand (its size, e.g. with `unzip -l`), or give a log with fewer or smaller files (`--delta-log` of the _delta_log folder itself); the other findings stand."]);
            for p in &log.not_verified {
                f = f.evidence(log.display_path(&p.path), p.reason.clone(), p.offset);
            }
            f
        })
        .collect()
}

/// The latest snapshot cannot be built: Delta fails before the stream reads anything.
fn unreconstructable(s: &DeltaSourceFacts<'_>, log: &DeltaLog) -> Option<Finding> {
    let latest = log.latest_version()?;
    if log.snapshot_base(latest).is_some() {
        return None;
    }
    let base = log.latest_complete_checkpoint().map(|c| c.version);
    let first_missing = log.first_missing_commit(base.map_or(0, |b| b.saturating_add(1)), latest)?;
    let head = base.map_or(0, |b| b.saturating_add(1));
    let (class, what) = if log.last_checkpoint.as_ref().is_some_and(|lc| base.is_none() && lc.version >= 0) {
        (
            "DELTA_MISSING_PART_FILES",
            format!(
                "_last_checkpoint names checkpoint {} but no complete checkpoint is there",
                log.last_checkpoint.as_ref().map_or(0, |l| l.version)
            ),
        )
    } else if first_missing == head {
        (
            "DELTA_TRUNCATED_TRANSACTION_LOG",
            match base {
                Some(b) => format!("the newest complete checkpoint is {b}, and commit {head} after it is missing"),
                None => format!("there is no checkpoint and no commit 0: the log holds {} only", range_text(log)),
            },
        )
    } else {
        ("DELTA_VERSIONS_NOT_CONTIGUOUS", format!("commit {first_missing} is missing between {head} and {latest}"))
    };
    let f = Finding::new(
        Code::DeltaTableUnreconstructable,
        Severity::Error,
        format!("The Delta source table cannot be reconstructed: {what} (source #{})", s.index),
    )
    .evidence(log.display_path(&format!("{first_missing:020}.json")), format!("absent; {} present; checkpoints at {}", range_text(log), versions(&log.checkpoints.keys().copied().collect::<Vec<_>>())), None)
    .evidence(&s.offsets_path, format!("source #{} reads this table", s.index), None)
    .why("Delta builds the latest snapshot of a table from its newest complete checkpoint and every commit after it (SnapshotManagement.validateDeltaVersions), or from commit 0 when there is no checkpoint. Log files were deleted by hand or by a copy that skipped them, so no reader, including this stream, can open the table.")
    .fix(&[
        "Repair the table first: restore the missing _delta_log files from the storage's versioning or a backup (or recreate the table from its data); the stream can only go on once the table reads.".to_string(),
        "If the table is recreated, it gets a new table id: the stream then needs a new checkpoint.".to_string(),
    ])
    .classes(&[class])
    // DeltaErrors: versions not contiguous and missing part files are DeltaIllegalStateExceptions, a truncated
    // log a DeltaFileNotFoundException.
    .fails(RestartStage::SourceOffsets, Some(class), if class == "DELTA_TRUNCATED_TRANSACTION_LOG" { DELTA_FILE_NOT_FOUND } else { DELTA_ILLEGAL_STATE });
    Some(f)
}

/// The table at the path is not the table the checkpoint read.
fn replaced(s: &DeltaSourceFacts<'_>, log: &DeltaLog) -> Option<Finding> {
    let (v, meta) = log.latest_metadata()?;
    let recorded = s.reservoir_id();
    if recorded == Some(meta.id.as_str()) {
        return None;
    }
    let recorded_text = recorded.unwrap_or("null (no reservoirId)");
    let needed = s.needed_version().unwrap_or(0);
    let exists = log.latest_version().is_some_and(|l| l >= needed);
    let class = "DIFFERENT_DELTA_TABLE_READ_BY_STREAMING_SOURCE";
    Some(
        Finding::new(
            Code::DeltaTableReplaced,
            Severity::Error,
            format!("Delta source #{}: the checkpoint read table {recorded_text}, the log now holds table {}: the table was replaced", s.index, meta.id),
        )
        .evidence(&s.offsets_path, format!("source #{}: reservoirId {recorded_text}, reservoirVersion {needed}", s.index), None)
        .evidence(log.metadata_source(v), format!("metaData.id {} (version {v})", meta.id), None)
        .why(format!(
            "Delta compares the table id of every offset it reads back with the table's id (DeltaSourceOffset.apply) and refuses another table: the table was dropped and re-created at the same path (or the query now reads another table). Its versions restarted at 0{}, so a version number of the old table means nothing in the new one.",
            if exists { format!(" and version {needed} exists again") } else { String::new() }
        ))
        .fix(&[
            BACKUP.to_string(),
            "If the query was pointed at the wrong table, point it back.".to_string(),
            "Otherwise start a NEW checkpoint for the new table (the old checkpoint cannot be reused): without startingVersion it reads the new table's current snapshot, then its new commits (bounded first batch with .option(\"maxBytesPerTrigger\", \"1g\")), or startingVersion \"latest\" for new data only (startingVersion \"0\" fails once commit 0 is cleaned up, and at the first commit that removes files); make the sink idempotent if rows of the old table were already written.".to_string(),
        ])
        .classes(&[class])
        .fails(RestartStage::SourceOffsets, Some(class), DELTA_ILLEGAL_STATE),
    )
}

/// What schema tracking needs when `spark.databricks.delta.streaming.schemaTracking.enabled` is false: Delta
/// refuses a `schemaTrackingLocation` then (`DeltaDataSource.getMetadataTrackingLogForDeltaSource`).
pub const TRACKING_BACK_ON: &str = "Set spark.databricks.delta.streaming.schemaTracking.enabled back to true first (with it false, Delta refuses schemaTrackingLocation: UnsupportedOperationException \"Schema tracking location is not supported for Delta streaming source\"). ";

/// The class Delta raises when a column-mapping table's snapshot at the stream's start cannot be built.
pub const CM_NO_SNAPSHOT: &str = "DELTA_STREAMING_CHECK_COLUMN_MAPPING_NO_SNAPSHOT";
/// The conf that turns that check off.
pub const CM_UNSAFE_CONF: &str =
    "spark.databricks.delta.streaming.unsafeReadOnIncompatibleColumnMappingSchemaChanges.enabled";

/// A column-mapping table whose snapshot at the version the restart starts from cannot be rebuilt: before it
/// lists any commit, Delta's restart checks the schema changes since that version on the snapshot there
/// (`DeltaSource.checkReadIncompatibleSchemaChangeOnStreamStartOnce`, `getSnapshotAt`) and, on a column-mapping
/// table without schema tracking, fails when it cannot build it (`DeltaErrors.
/// failedToGetSnapshotDuringColumnMappingStreamingReadCheck`), whatever failOnDataLoss says.
fn column_mapping_no_snapshot(
    s: &DeltaSourceFacts<'_>,
    log: &DeltaLog,
    cp: &Checkpoint,
    ctx: &Context,
) -> Option<Finding> {
    let v = s.needed_version()?;
    let initial = s.offset.as_ref().is_ok_and(|o| o.is_initial_snapshot);
    let (_, m) = log.latest_metadata()?;
    let unsafe_on =
        super::effective_conf(cp, ctx).get(CM_UNSAFE_CONF).is_some_and(|x| x.trim().eq_ignore_ascii_case("true"));
    if m.column_mapping_mode() == "none" || s.tracks_schema(cp) || unsafe_on || v > log.latest_version()? {
        return None;
    }
    if log.snapshot_base(v).is_some() {
        return None;
    }
    let oldest = log.earliest_reconstructable().map(|x| x.to_string()).unwrap_or_else(|| "none".into());
    Some(
        Finding::new(
            Code::DeltaVersionExpired,
            Severity::Error,
            format!("Delta source #{}: the column-mapping table's snapshot at version {v}, where the restart starts, cannot be rebuilt (the oldest version the log can rebuild is {oldest}): Delta's schema check fails before it reads", s.index),
        )
        .evidence(&s.offsets_path, format!("source #{}: reservoirVersion {v}", s.index), None)
        .evidence(if log.dir.is_empty() { "_delta_log".into() } else { log.dir.clone() }, format!("delta.columnMapping.mode = {}; {}; checkpoints at {}", m.column_mapping_mode(), range_text(log), versions(&log.checkpoints.keys().copied().collect::<Vec<_>>())), None)
        .why(format!("On a column-mapping table a restart first checks the schema changes since its start on the snapshot at version {v} (DeltaSource.checkReadIncompatibleSchemaChangeOnStreamStartOnce) and, without schema tracking, fails when that snapshot cannot be built (no complete checkpoint at or before {v} with every commit after it): {CM_NO_SNAPSHOT}, before any commit is listed, so failOnDataLoss=false does not get past it."))
        .fix(&[
            BACKUP.to_string(),
            if initial {
                // The initial snapshot is read at that version next: no conf gets past it.
                format!("Skipping the check ({CM_UNSAFE_CONF}=true) does not help here: the stream is still reading its initial snapshot at version {v}, which it cannot rebuild either ({LOG_FILE_NOT_FOUND_FOR_STREAMING}).")
            } else {
                format!("Keep this checkpoint and skip the check: {}", cm_unsafe_step(v))
            },
            "Or a NEW checkpoint starting at a version the log still holds (see the restart plan).".to_string(),
        ])
        .classes(&[CM_NO_SNAPSHOT])
        .fails(RestartStage::SourceOffsets, Some(CM_NO_SNAPSHOT), "org.apache.spark.sql.delta.DeltaAnalysisException"),
    )
}

/// The step that turns Delta's column-mapping start check off, and what it costs.
pub fn cm_unsafe_step(v: i64) -> String {
    format!("set {CM_UNSAFE_CONF}=true (and .option(\"failOnDataLoss\", \"false\") if the versions after {v} are gone too): unsafe, a rename or drop of a column in the versions not checked goes unnoticed; set it back once two batches have committed.")
}

/// The version the stream needs is gone from the log.
fn expired(s: &DeltaSourceFacts<'_>, log: &DeltaLog, cp: &Checkpoint, now: Option<i64>) -> Option<Finding> {
    let v = s.needed_version()?;
    let latest = log.latest_version()?;
    let initial = s.offset.as_ref().is_ok_and(|o| o.is_initial_snapshot);
    let earliest_commit = log.earliest_commit();
    let (class, seen, detail) = if initial {
        if log.snapshot_base(v).is_some() {
            return None;
        }
        (LOG_FILE_NOT_FOUND_FOR_STREAMING, log.earliest_reconstructable(), format!("the snapshot at version {v} cannot be rebuilt: no complete checkpoint at or before {v} with every commit after it"))
    } else {
        if v > latest {
            return None;
        }
        let first = log.commits.range(v..).next().map(|(k, _)| *k);
        let gap = match first {
            Some(f) if f > v => (v, f),
            Some(_) => {
                let missing = log.first_missing_commit(v, latest)?;
                let next = log.commits.range(missing..).next().map(|(k, _)| *k)?;
                (missing, next)
            }
            None => return None,
        };
        (
            MISSING_FILES,
            Some(gap.1),
            format!("the stream expects commit {} next; the first commit file from there is {}", gap.0, gap.1),
        )
    };
    let retention = match &s.log_retention.table_value {
        Some(t) => format!("delta.logRetentionDuration {t:?}"),
        None => format!("Delta's default delta.logRetentionDuration of {}", describe_ms(s.log_retention.ms)),
    };
    let oldest = seen.map(|x| x.to_string()).unwrap_or_else(|| "none".into());
    let mut fix = vec![BACKUP.to_string()];
    // The stream's unread data starts at `u` (the last committed batch's end); the restart lists the log from `v`.
    let u = s.unread_version().unwrap_or(v).max(v);
    if let (Some(now), Some((start, ts, stale))) = (now, s.bounded_start(now.unwrap_or(0), DAY_MS)) {
        let _ = now;
        let skipped = if start <= u {
            format!("no unread version is skipped (version {u} is the first the stream has not read; the versions gone were read by the last committed batch)")
        } else {
            format!(
                "versions {u}..{} are skipped (a gap{})",
                start - 1,
                match (log.commits.get(&u).and_then(|c| c.timestamp()), ts) {
                    (Some(a), Some(b)) => format!(" from {} to {}", utc(a), utc(b)),
                    (_, Some(b)) => format!(" up to {}", utc(b)),
                    _ => String::new(),
                }
            )
        };
        fix.push(format!(
            "A NEW checkpoint with .option(\"startingVersion\", \"{start}\"){} and .option(\"maxBytesPerTrigger\", \"1g\") for a bounded first batch: {skipped}; this start is inside the retained window with at least a day's margin and must be recomputed after {}.",
            ts.map(|t| format!(" (or .option(\"startingTimestamp\", \"{}\"))", utc(t))).unwrap_or_default(),
            utc(stale)
        ));
    } else {
        fix.push(format!("A NEW checkpoint with .option(\"startingVersion\", <a version the log still holds, e.g. {oldest}>) and .option(\"maxBytesPerTrigger\", \"1g\"): the versions in between are skipped."));
    }
    if s.tracks_schema(cp) {
        fix.push("failOnDataLoss=false does not help here: the query tracks the schema (schemaTrackingLocation), and Delta then refuses to skip missing commits (IllegalArgumentException: Using schema from schema tracking log cannot tolerate missing commit files).".to_string());
    } else if !initial {
        fix.push("Or restart this checkpoint with .option(\"failOnDataLoss\", \"false\"): the stream silently skips the lost versions it has not read (a gap nobody is told about); keep it until two batches have committed after the restart (until then a restart lists the log from before the gap again).".to_string());
    }
    fix.push(format!("To keep it from happening again, raise the table's retention above the longest pause: ALTER TABLE <table> SET TBLPROPERTIES ('delta.logRetentionDuration' = 'interval 60 days') (today {retention}; costs log storage only)."));
    let age = now
        .zip(s.batch_timestamp_ms)
        .map(|(n, b)| {
            let ago = crate::checks::timing::ago(n.saturating_sub(b));
            format!(" Batch {}, whose offsets the restart reads from, started {ago}.", s.batch)
        })
        .unwrap_or_default();
    Some(
        Finding::new(
            Code::DeltaVersionExpired,
            Severity::Error,
            format!("Delta source #{} needs table version {v}, but the oldest version the log still has is {oldest} ({retention}): log cleanup removed the versions in between", s.index),
        )
        .evidence(&s.offsets_path, format!("source #{}: reservoirVersion {v}{}", s.index, if initial { ", isStartingVersion true" } else { "" }), None)
        .evidence(if log.dir.is_empty() { "_delta_log".into() } else { log.dir.clone() }, format!("{detail}; {}; checkpoints at {}; earliest commit {}", range_text(log), versions(&log.checkpoints.keys().copied().collect::<Vec<_>>()), earliest_commit.map(|e| e.to_string()).unwrap_or_else(|| "none".into())), None)
        .why(format!("Delta's streaming source lists the commit files from the version it needs (DeltaLog.getChangeLogFiles) and stops when the first one is past it{}: the query was stopped longer than the table keeps its log, and log cleanup (after a checkpoint of the table) deleted the versions it had not read yet.{age}", if initial { "; while it is still in the initial snapshot it needs that version's snapshot, which cannot be rebuilt" } else { "" }))
        .fix(&fix)
        .classes(&[class])
        .fails(RestartStage::SourceOffsets, Some(class), if initial { DELTA_FILE_NOT_FOUND } else { DELTA_ILLEGAL_STATE }),
    )
}

/// Non-additive schema changes between the needed version and the latest.
fn schema_change(s: &DeltaSourceFacts<'_>, log: &DeltaLog, cp: &Checkpoint, ctx: &Context) -> Option<Finding> {
    let v = s.needed_version()?;
    let u = s.unread_version().unwrap_or(v).max(v);
    let latest = log.latest_version()?;
    if v > latest {
        return None;
    }
    let (lv, read) = log.latest_metadata()?;
    let (_, at_v) = log.metadata_at(v)?;
    let cm = read.column_mapping_mode() != "none";
    let all = diff(&at_v.schema_string, &read.schema_string, &at_v.partition_columns, &read.partition_columns, cm)?;
    let breaking: Vec<&SchemaChange> = all.iter().filter(|c| c.non_additive()).collect();
    if breaking.is_empty() {
        return None;
    }
    // The commit that made the change: the first metaData after `v` whose change from the one before breaks.
    let mut prev = at_v;
    let mut at = lv;
    for (ver, c) in log.commits.range(v.saturating_add(1)..=latest) {
        if let Some(m) = &c.metadata {
            let d = diff(&prev.schema_string, &m.schema_string, &prev.partition_columns, &m.partition_columns, cm)
                .unwrap_or_default();
            if d.iter().any(SchemaChange::non_additive) {
                at = *ver;
                break;
            }
            prev = m;
        }
    }
    let what: Vec<String> = breaking.iter().map(|c| c.describe()).collect();
    let op = log.commits.get(&at).map(|c| c.operation().to_string()).unwrap_or_else(|| "a metadata change".into());
    let delta = line(super::spark(ctx));
    let tracking_off = !tracking_on(cp, ctx);
    let mapping_change = breaking.iter().any(|c| matches!(c, SchemaChange::Dropped(_) | SchemaChange::Renamed(..)));
    let tracked_logs: Vec<_> =
        cp.delta_schema_logs.iter().filter(|l| Some(l.dir_table_id.as_str()) == s.reservoir_id()).collect();
    // Before Delta 2.4 there is no schema tracking: a log folder is not read.
    let tracked = !tracked_logs.is_empty() && delta >= DeltaLine::V2_4;
    // The newest table version whose schema the tracking log holds: below the change, the next restart records it.
    let logged = tracked_logs.iter().flat_map(|l| l.entries.iter().map(|e| e.delta_commit_version)).max();
    let (class, exception, why, way) = if tracked
        && (cm || breaking.iter().any(|c| c.is_type_change()))
        && logged.is_some_and(|l| l < at)
    {
        ("DELTA_STREAMING_METADATA_EVOLUTION", "org.apache.spark.sql.delta.DeltaRuntimeException", format!("The checkpoint's schema tracking log holds the schema up to table version {} only: at the change (version {at}) Delta writes the new schema to the log and stops the stream once on purpose (DeltaSourceMetadataEvolutionSupport.updateMetadataTrackingLogAndFailTheStreamIfNeeded: \"Please restart the stream to continue\"); the restart after that stops again (DELTA_STREAMING_CANNOT_CONTINUE_PROCESSING_POST_SCHEMA_EVOLUTION) until the non-additive change is acknowledged.", logged.unwrap_or_default()),
            format!("Restart once more on this checkpoint (the schema is recorded by then); before the next restart acknowledge the change with {}; check the sink's schema first.", delta.acknowledge()))
    } else if tracked && (cm || breaking.iter().any(|c| c.is_type_change())) {
        ("DELTA_STREAMING_CANNOT_CONTINUE_PROCESSING_POST_SCHEMA_EVOLUTION", "org.apache.spark.sql.delta.DeltaRuntimeException", "The checkpoint has a schema tracking log for this table, so Delta evolves the stream's schema across the change (DeltaSourceMetadataEvolutionSupport) but stops once and asks to acknowledge a non-additive change before it goes on.".to_string(),
            format!("Acknowledge the change and restart on this checkpoint: {}; check the sink's schema first.", delta.acknowledge()))
    } else if cm && mapping_change {
        let class = if tracking_off {
            "DELTA_STREAMING_INCOMPATIBLE_SCHEMA_CHANGE"
        } else {
            "DELTA_STREAMING_INCOMPATIBLE_SCHEMA_CHANGE_USE_SCHEMA_LOG"
        };
        (class, "org.apache.spark.sql.delta.DeltaStreamingNonAdditiveSchemaIncompatibleException", format!("On a column-mapping table (delta.columnMapping.mode = {}) Delta detects renames and drops by the columns' physical names (DeltaSource.checkNonAdditiveSchemaChanges) and blocks the stream unless it tracks the schema: the stream reads with the latest schema, and the older files hold a column it no longer has.", read.column_mapping_mode()),
            tracking_way(delta, tracking_off))
    } else {
        ("DELTA_SCHEMA_CHANGED_WITH_VERSION", DELTA_ILLEGAL_STATE, format!("The stream reads every version with the table's latest schema (version {lv}); files written before the change hold data that schema cannot read (SchemaUtils.isReadCompatible: a column missing from the read schema, a changed type, a tightened nullability or changed partition columns). {}Delta's message names the version it checked (the stream's start, {v}); with startingVersion/startingTimestamp set the class is DELTA_SCHEMA_CHANGED_WITH_STARTING_OPTIONS.", if cm { "" } else { "The table has no column mapping, so schemaTrackingLocation does not help. " }),
            format!("A NEW checkpoint starting after the change: .option(\"startingVersion\", \"{}\") ({}), with .option(\"maxBytesPerTrigger\", \"1g\").", at.saturating_add(1).max(u), skipped_by_start(u, at)))
    };
    let mut steps = vec![BACKUP.to_string(), way];
    if cm && mapping_change {
        steps.push(format!(
            "Or a NEW checkpoint with .option(\"startingVersion\", \"{}\") (after the change; {}).",
            at.saturating_add(1).max(u),
            skipped_by_start(u, at)
        ));
    }
    let removes_too = log.commits.get(&at).is_some_and(|c| c.data_change_removes().next().is_some());
    if removes_too {
        steps.push(format!("Version {at} also removes data files ({op}): once past the schema change the stream needs {} to go on (see the next finding).", skip_changes_option(delta)));
    }
    Some(
        Finding::new(
            Code::DeltaSchemaChange,
            Severity::Error,
            format!("Delta source #{}: non-additive schema change ({}) at table version {at} ({op}), after the stream's position {v}", s.index, what.join("; ")),
        )
        .evidence(&s.offsets_path, format!("source #{}: reservoirVersion {v}", s.index), None)
        .evidence(log.metadata_source(at), format!("metaData at version {at}: {}", what.join("; ")), None)
        .why(why)
        .fix(&steps)
        .classes(&[class])
        .fails(RestartStage::SourceOffsets, Some(class), exception),
    )
}

/// The reader option that lets the stream go past a commit that removes files, on `delta`'s line.
fn skip_changes_option(delta: DeltaLine) -> &'static str {
    if delta.has_skip_change_commits() {
        ".option(\"skipChangeCommits\", \"true\")"
    } else {
        ".option(\"ignoreChanges\", \"true\") (Delta 2.4's skipChangeCommits does not exist yet; ignoreChanges re-reads the rewritten files' rows: duplicates)"
    }
}

/// True when a restart with `schemaTrackingLocation` tracks the schema on the restart's Delta line: from Delta 3.0
/// unless `spark.databricks.delta.streaming.schemaTracking.enabled=false`; on 2.4 only with the internal
/// `spark.databricks.delta.streaming.nonAdditiveSchemaEvolution.enabled=true` (`DeltaDataSource`: "Schema tracking
/// location is not supported for Delta streaming source" otherwise); never before.
pub fn tracking_on(cp: &Checkpoint, ctx: &Context) -> bool {
    let conf = |k: &str| super::effective_conf_value(cp, ctx, k).map(|x| x.trim().to_ascii_lowercase());
    match line(super::spark(ctx)) {
        DeltaLine::V2_0 | DeltaLine::V2_3 => false,
        DeltaLine::V2_4 => conf(NON_ADDITIVE_2_4).as_deref() == Some("true"),
        DeltaLine::V3 | DeltaLine::V4 => {
            conf("spark.databricks.delta.streaming.schemaTracking.enabled").as_deref() != Some("false")
        }
    }
}

/// Delta 2.4's internal conf that allows `schemaTrackingLocation` (default false).
pub const NON_ADDITIVE_2_4: &str = "spark.databricks.delta.streaming.nonAdditiveSchemaEvolution.enabled";

/// The way out of a rename or drop on a column-mapping table by the restart's Delta line: track the schema (turned
/// on first where it is off), or, before Delta 2.4, no way on this checkpoint.
fn tracking_way(delta: DeltaLine, tracking_off: bool) -> String {
    let track = ".option(\"schemaTrackingLocation\", \"<checkpoint path>/_schema_log\") (a folder under the checkpoint): Delta then records the schema per version and stops once at the change, asking you to acknowledge it";
    match delta {
        DeltaLine::V2_0 => format!("{} cannot stream a column-mapping table at all (DELTA_UNSUPPORTED_COLUMN_MAPPING_STREAMING_READS): run the query on Spark 3.4+ (Delta 2.4+), where schema tracking crosses the change.", delta.name()),
        DeltaLine::V2_3 => format!("{} cannot cross a rename or drop in a stream on this checkpoint: a NEW checkpoint after the change (below), or run on Spark 3.4+ (Delta 2.4+) with schemaTrackingLocation. (Delta's escape hatch spark.databricks.delta.streaming.unsafeReadOnIncompatibleColumnMappingSchemaChanges.enabled=true reads the old files with the new schema: wrong or null columns.)", delta.name()),
        DeltaLine::V2_4 if tracking_off => format!("Set {NON_ADDITIVE_2_4}=true (an internal conf of Delta 2.4, off by default; without it Delta refuses schemaTrackingLocation: UnsupportedOperationException) and restart this checkpoint with {track} ({}); no data is skipped.", delta.acknowledge()),
        _ => format!("{}Restart this checkpoint with {track} ({}); no data is skipped.", if tracking_off { TRACKING_BACK_ON } else { "" }, delta.acknowledge()),
    }
}

/// What a NEW checkpoint starting after a change at version `at` skips, the stream's unread data starting at `u`:
/// versions `u..=at`, or nothing when the change is in versions the last committed batch already read (the
/// restart re-lists them from the batch before, `getBatch(offsets[N-1], offsets[N])`, and fails there, but a new
/// checkpoint starts at `u`, after the change).
fn skipped_by_start(u: i64, at: i64) -> String {
    if at >= u {
        format!("versions {u}..{at} are not read")
    } else {
        format!("the change at version {at} is in versions the last committed batch already read: nothing unread is skipped")
    }
}

/// Commits after the needed version that delete or rewrite data.
fn non_append(s: &DeltaSourceFacts<'_>, log: &DeltaLog, ctx: &Context) -> Option<Finding> {
    let v = s.needed_version()?;
    let initial = s.offset.as_ref().is_ok_and(|o| o.is_initial_snapshot);
    let from = if initial { v.saturating_add(1) } else { v };
    let hits: Vec<_> = log.commits.range(from..).filter(|(_, c)| c.data_change_removes().next().is_some()).collect();
    let (&first, c) = *hits.first()?;
    let adds = c.adds.iter().any(|a| a.data_change);
    let removed = c.data_change_removes().next().map(|r| r.path.clone()).unwrap_or_default();
    let (class, kind) = if adds {
        ("DELTA_SOURCE_TABLE_IGNORE_CHANGES", "rewrites data (removes and adds files)")
    } else {
        ("DELTA_SOURCE_IGNORE_DELETE", "deletes data (removes files)")
    };
    let mut f = Finding::new(
        Code::DeltaNonAppendCommit,
        Severity::Error,
        format!("Delta source #{}: table version {first} ({}) {kind}; the stream stops there unless it skips change commits", s.index, c.operation()),
    )
    .evidence(&s.offsets_path, format!("source #{}: reservoirVersion {v}", s.index), None)
    .evidence(log.display_path(&c.path), format!("{} remove(s) with dataChange=true (e.g. {removed}), {} add(s)", c.data_change_removes().count(), c.adds.iter().filter(|a| a.data_change).count()), None);
    for (ver, c) in hits.iter().skip(1).take(5) {
        f = f.evidence(
            log.display_path(&c.path),
            format!("version {ver} ({}) also removes data files", c.operation()),
            None,
        );
    }
    let cdf = log.latest_metadata().is_some_and(|(_, m)| m.flag("delta.enableChangeDataFeed"));
    let mut steps = vec![
        BACKUP.to_string(),
        if line(super::spark(ctx)).has_skip_change_commits() {
            "If downstream does not need the change: restart with .option(\"skipChangeCommits\", \"true\"): Delta skips every commit that removes files, including the rows it adds (an overwrite's new rows are not read).".to_string()
        } else {
            format!("If downstream can take the rewritten files' rows again: restart with .option(\"ignoreChanges\", \"true\"): Delta re-reads every file a rewriting commit adds, so rows that did not change come again (duplicates) and deletes are not seen ({} has no skipChangeCommits, which came with Delta 2.4).", line(super::spark(ctx)).name())
        },
    ];
    if cdf {
        steps.push("The table has change data feed on: a NEW checkpoint with .option(\"readChangeFeed\", \"true\") streams the updates and deletes as rows (_change_type).".to_string());
    }
    steps.push(format!("Or a NEW checkpoint starting after it: .option(\"startingVersion\", \"{}\").", first + 1));
    Some(
        f.why("Delta's streaming source is append-only: a commit that removes data files (DELETE, UPDATE, MERGE, an overwrite) stops it (DeltaSource.validateCommitAndDecideSkipping) unless skipChangeCommits (or the older ignoreDeletes / ignoreChanges) is set on the source; commits that only reorganise files (OPTIMIZE, dataChange=false) do not.")
            .fix(&steps)
            .classes(&[class])
            .fails(RestartStage::SourceOffsets, Some(class), "org.apache.spark.sql.delta.DeltaUnsupportedOperationException"),
    )
}

/// Data files the stream still has to read that were removed long enough ago for VACUUM to delete them.
fn vacuumable(s: &DeltaSourceFacts<'_>, log: &DeltaLog, now: i64) -> Option<Finding> {
    // Data files are read from the unread position on (the restart's listing from the batch before only plans).
    let v = s.unread_version()?;
    let initial = s.unread_in_initial_snapshot();
    let cutoff = now.saturating_sub(s.deleted_file_retention.ms);
    let added_after: std::collections::BTreeMap<&str, i64> = log
        .commits
        .range(if initial { v.saturating_add(1) } else { v }..)
        .flat_map(|(ver, c)| c.adds.iter().filter(|a| a.data_change).map(move |a| (a.path.as_str(), *ver)))
        .collect();
    let mut gone = Vec::new();
    for (ver, c) in log.commits.range(v.saturating_add(1)..) {
        for r in &c.removes {
            let Some(ts) = r.deletion_timestamp.or(c.timestamp()) else { continue };
            let needed = match added_after.get(r.path.as_str()) {
                Some(a) => a < ver,
                None => initial,
            };
            if needed && ts < cutoff {
                gone.push((*ver, r.path.clone(), ts));
            }
        }
    }
    let (ver, path, ts) = gone.first().cloned()?;
    let retention = match &s.deleted_file_retention.table_value {
        Some(t) => format!("the table's delta.deletedFileRetentionDuration {t:?}"),
        None => format!(
            "Delta's default delta.deletedFileRetentionDuration of {}",
            describe_ms(s.deleted_file_retention.ms)
        ),
    };
    Some(
        Finding::new(
            Code::DeltaDataFilesVacuumable,
            Severity::Warning,
            format!("Delta source #{}: {} data file(s) the stream has not read yet were removed from the table (first at version {ver}, {}) longer ago than {retention}: VACUUM may have deleted them", s.index, gone.len(), date(ts)),
        )
        .evidence(log.display_path(&log.commits.get(&ver).map(|c| c.path.clone()).unwrap_or_default()), format!("remove {path}, deletionTimestamp {}: VACUUM may delete it from {} on ({})", utc(ts), date(ts + s.deleted_file_retention.ms), days_left(now, ts + s.deleted_file_retention.ms)), None)
        .evidence(s.unread_path(), format!("source #{}: reservoirVersion {v}", s.index), None)
        .why("The stream reads the data files of the versions after its position (or of its initial snapshot); a file removed by a later commit stays on storage only until VACUUM deletes files removed longer ago than delta.deletedFileRetentionDuration. The log does not say whether VACUUM ran: if it did, reading that version fails with a file-not-found error.")
        .fix(&[
            "Check that the files still exist in the table folder (e.g. ls <table path>/<file>).",
            "If they are gone: a NEW checkpoint with startingVersion after the removing version; raise delta.deletedFileRetentionDuration above the longest pause (keeps removed files longer: their storage is the cost).",
        ]),
    )
}

/// Every check that needs the table's log, per Delta source, in the order a restart meets them.
pub fn check_with_log(cp: &Checkpoint, ctx: &Context) -> Vec<Finding> {
    let mut out = Vec::new();
    for s in delta_sources(cp, ctx) {
        let Some(log) = s.log else { continue };
        if s.offset.is_err() {
            continue;
        }
        let first = out.len();
        source_findings(&s, log, cp, ctx, &mut out);
        for f in &mut out[first..] {
            add_unread_evidence(f, &s);
        }
    }
    out
}

/// The findings of one source, in the order a restart meets them (the first failure ends the list).
fn source_findings(s: &DeltaSourceFacts<'_>, log: &DeltaLog, cp: &Checkpoint, ctx: &Context, out: &mut Vec<Finding>) {
    if let Some(f) = unreconstructable(s, log) {
        out.push(f);
        return;
    }
    if let Some(f) = replaced(s, log) {
        out.push(f);
        return;
    }
    if let Some(f) = column_mapping_no_snapshot(s, log, cp, ctx) {
        out.push(f);
        return;
    }
    if let Some(f) = expired(s, log, cp, ctx.now_ms) {
        out.push(f);
        return;
    }
    out.extend(schema_change(s, log, cp, ctx));
    out.extend(non_append(s, log, ctx));
    if let Some(now) = ctx.now_ms {
        out.extend(vacuumable(s, log, now));
    }
}

/// Beside the offsets a restart lists the log from (the batch before the latest), the last committed batch's:
/// where the unread data starts, and the offsets file a reader of the finding looks at first.
fn add_unread_evidence(f: &mut Finding, s: &DeltaSourceFacts<'_>) {
    let Some((b, o)) = &s.unread else { return };
    let path = format!("offsets/{b}");
    if *b == s.batch || f.evidence.iter().any(|e| e.path == path) {
        return;
    }
    let detail = format!(
        "source #{}: reservoirId {}, reservoirVersion {}: the last committed batch's end, where the unread data starts (a restart lists the log from {} before it: getBatch({}, {path}))",
        s.index,
        o.reservoir_id.as_deref().unwrap_or("(none)"),
        o.reservoir_version,
        s.offsets_path,
        s.offsets_path
    );
    f.evidence.push(crate::report::Evidence { path, detail, offset: None, size: None });
}
