//! File sink logs (`<output>/_spark_metadata`, `FileStreamSinkLog`) and file source logs (`sources/<n>/`,
//! `FileStreamSourceLog`) against what Spark reads of them: the chain `CompactibleFileStreamLog.allFiles`
//! reads (the newest `.compact` at or below the latest batch and the batches after it; `getAllValidBatches`),
//! the batches the sink's next compaction reads (`getValidBatchesBeforeCompactionBatch`), the batches
//! `FileStreamSink.addBatch` skips (`batchId <= fileLog.getLatestBatchId()`), and the data files the log lists.

use super::BACKUP;

/// The first step of a sink log's fix: the log is in the output folder, not the checkpoint.
pub const SINK_BACKUP: &str = "Copy the output folder's _spark_metadata somewhere safe before changing anything in it.";
use crate::log::file_log::files_needed;
use crate::model::{Checkpoint, FileLog};
use crate::report::{Code, Finding, RestartStage, Severity, SinkLogInfo};
use crate::Context;
use std::collections::BTreeSet;

/// The sink logs of a root: those inside it, then those given beside it (`Context::sink_logs`) that are not
/// the same folder.
pub fn sink_logs<'a>(cp: &'a Checkpoint, ctx: &'a Context) -> Vec<&'a FileLog> {
    let inside: BTreeSet<String> = cp
        .sink_logs
        .iter()
        .map(
            |l| if cp.root.is_empty() { l.dir.clone() } else { format!("{}/{}", cp.root.trim_end_matches('/'), l.dir) },
        )
        .collect();
    cp.sink_logs.iter().chain(ctx.sink_logs.iter().filter(|l| !inside.contains(&l.dir))).collect()
}

/// What a file sink's compaction throws for an absent batch file on the assumed Spark, as (error class, exception)
/// (`HDFSMetadataLog.applyFnToBatchByStream`, `QueryExecutionErrors.batchMetadataFileNotFoundError`):
/// `BATCH_METADATA_NOT_FOUND` since 3.5 (SPARK-42299 named it), `_LEGACY_ERROR_TEMP_2206` in 3.4, both a
/// SparkFileNotFoundException; a plain java.io.FileNotFoundException before. The message is "Unable to find batch
/// <file>" throughout.
fn batch_not_found(ctx: &Context) -> (Option<&'static str>, &'static str) {
    let v = super::spark(ctx);
    if v.at_least(3, 5) {
        (Some("BATCH_METADATA_NOT_FOUND"), "org.apache.spark.SparkFileNotFoundException")
    } else if v.at_least(3, 4) {
        (Some("_LEGACY_ERROR_TEMP_2206"), "org.apache.spark.SparkFileNotFoundException")
    } else {
        (None, "java.io.FileNotFoundException")
    }
}

/// How a finding names that failure: the class, or the exception without one.
fn batch_not_found_words(ctx: &Context) -> &'static str {
    match batch_not_found(ctx) {
        (Some(c), _) => c,
        (None, e) => e,
    }
}

/// The batch file name Spark's `batchIdToPath` gives `id` in a log of `interval`.
fn batch_path(log: &FileLog, id: i64) -> String {
    batch_path_at(log, id, log.compact_interval)
}

/// [`batch_path`] with the interval `interval`.
fn batch_path_at(log: &FileLog, id: i64, interval: i64) -> String {
    crate::log::file_log::batch_id_to_path(&log.dir, id, interval)
}

/// The conf that sets the default compaction interval of a file source's log (`sources/<n>/`).
pub(super) const SOURCE_INTERVAL_CONF: &str = "spark.sql.streaming.fileSource.log.compactInterval";
/// The conf that sets the default compaction interval of a file sink's log (`_spark_metadata`).
pub(super) const SINK_INTERVAL_CONF: &str = "spark.sql.streaming.fileSink.log.compactInterval";

/// The compaction interval a restart reopens `log` with (`CompactibleFileStreamLog.compactInterval`): the
/// difference of its two newest `.compact` files as listed, or, with at most one, `deriveCompactInterval` with the
/// restarted session's `conf` ([`SOURCE_INTERVAL_CONF`] or [`SINK_INTERVAL_CONF`], an int; 10 unset, Spark's
/// default) as the default ([`crate::log::file_log::infer_compact_interval`]). It differs from the interval the
/// log was written with ([`FileLog::compact_interval`]) only when the log has at most one `.compact` file and the
/// session sets another value. A value that is no positive int is Spark's to refuse, and is not modelled: the
/// written interval is kept.
pub(super) fn restart_interval(log: &FileLog, ctx: &Context, conf: &str) -> i64 {
    let default = ctx.session_conf.get(conf).and_then(|v| v.trim().parse::<i32>().ok()).filter(|v| *v > 0);
    let newest: Vec<i64> = log.listed.iter().rev().filter(|(_, (_, _, c))| *c).map(|(id, _)| *id).take(2).collect();
    match default {
        Some(d) => crate::log::file_log::infer_compact_interval(&newest, i64::from(d)),
        None => log.compact_interval,
    }
}

/// The words of a finding's why when the restart reopens `log` with another interval than it was written with.
fn interval_change_words(log: &FileLog, interval: i64, conf: &str) -> String {
    if interval == log.compact_interval {
        return String::new();
    }
    let compacts: Vec<String> =
        log.listed.iter().filter(|(_, (_, _, c))| *c).map(|(id, _)| format!("{id}.compact")).collect();
    format!(
        " The restarted session sets {conf} to another value than the log was written with: from {} Spark derives the interval {interval} (CompactibleFileStreamLog.deriveCompactInterval), not {}, and names the batch files by it (batchIdToPath).",
        if compacts.is_empty() { "no .compact file".to_string() } else { format!("its one compaction file {}", compacts.join(", ")) },
        log.compact_interval
    )
}

/// The way out of an interval change: the conf back at the interval the log was written with.
fn interval_change_step(log: &FileLog, interval: i64, conf: &str) -> Option<String> {
    (interval != log.compact_interval).then(|| {
        format!(
            "Restart with {conf}={} (the interval the log was written with{}): the files are then found under their names.",
            log.compact_interval,
            if log.compact_interval == 10 { ", Spark's default: or leave it unset" } else { "" }
        )
    })
}

/// Whether batch `id` of the log is listed under the name Spark's `batchIdToPath` gives it (`N.compact` at
/// compaction batches, `N` otherwise).
fn listed_as_named(log: &FileLog, id: i64, interval: i64) -> bool {
    let want_compact = crate::log::file_log::is_compaction_batch(id, interval);
    log.listed.get(&id).is_some_and(|(_, _, c)| *c == want_compact)
}

/// [`listed_as_named`], and the file parses when it was read.
fn readable_as_named(log: &FileLog, id: i64, interval: i64) -> bool {
    listed_as_named(log, id, interval) && log.read.get(&id).is_none_or(|f| f.file.content.is_ok())
}

/// The batch files `allFiles` reads up to the latest batch that are not in the listing (or are listed
/// under the other name: a plain file where a `.compact` belongs), with the latest batch id, when the log is
/// opened with the compaction interval `interval`.
pub(super) fn missing_in_chain(log: &FileLog, interval: i64) -> Option<(i64, Vec<i64>)> {
    let (&latest, _) = log.listed.iter().next_back()?;
    let (compact, range) = files_needed(latest, interval);
    let missing: Vec<i64> =
        compact.into_iter().chain(range).filter(|id| !listed_as_named(log, *id, interval)).take(1000).collect();
    (!missing.is_empty()).then_some((latest, missing))
}

/// A sink log whose chain (the latest `.compact` and the batches after it) misses a file.
pub fn check_sink_chain(cp: &Checkpoint, ctx: &Context) -> Vec<Finding> {
    let mut out = Vec::new();
    for log in sink_logs(cp, ctx) {
        // A log with no batch file: an output folder given without its `_spark_metadata` (deleted, or a new
        // output path): the sink starts a new log at the restart's batch.
        let latest = log.listed.keys().next_back().copied().unwrap_or(-1);
        let interval = restart_interval(log, ctx, SINK_INTERVAL_CONF);
        // The restart's first batch is a compaction batch past the log's latest: its commit reads the previous
        // compaction and every batch up to it now (`FileStreamSinkLog` compaction,
        // `getValidBatchesBeforeCompactionBatch`), also batches the log never got and files that do not parse.
        let restart =
            cp.restart_batch().filter(|r| *r > latest && crate::log::file_log::is_compaction_batch(*r, interval));
        let needed_now: Vec<i64> = restart
            .map(|r| {
                let (c, range) = files_needed(r - 1, interval);
                c.into_iter().chain(range).filter(|id| !readable_as_named(log, *id, interval)).take(1000).collect()
            })
            .unwrap_or_default();
        let mut missing = missing_in_chain(log, interval).map(|(_, m)| m).unwrap_or_default();
        missing.extend(needed_now.iter().copied());
        missing.sort_unstable();
        missing.dedup();
        // Only a log surely this query's: its own, or the one sink log beside it that it does not read.
        // A log-less output folder is only ever given as this query's sink (`--sink-log`).
        let own = cp.sink_logs.iter().any(|l| std::ptr::eq(l, log))
            || (sink_logs(cp, ctx).len() == 1 && (log.listed.is_empty() || !read_by_a_source(cp, log)));
        if missing.is_empty() {
            out.extend(behind_commits(cp, ctx, log, latest).filter(|_| own));
            continue;
        }
        // The compaction batch that reads the missing files: the restart's own, or the next one after the log.
        let next_compact = restart.unwrap_or_else(|| {
            latest.saturating_add(interval).saturating_add(1) / interval.max(1) * interval.max(1) - 1
        });
        let first = batch_path_at(log, missing[0], interval);
        let compacts_now = restart.filter(|_| !needed_now.is_empty());
        // The compaction reads the batches in order; the first bad one decides: an absent file is
        // `batch_not_found` (BATCH_METADATA_NOT_FOUND recorded with 4.1.4; also a file listed under the other
        // name, as after an interval change), a file under its name that does not parse the log reader's failure
        // (com.fasterxml.jackson.core.io.JsonEOFException for a line cut short, "Incomplete log file" for an empty
        // one: real Spark 4.1.4).
        let first_bad = needed_now.first().or(missing.first()).copied().unwrap_or(latest);
        let unreadable = log
            .read
            .get(&first_bad)
            .filter(|_| listed_as_named(log, first_bad, interval))
            .and_then(|f| f.file.content.as_ref().err());
        let (class, exception) = match unreadable {
            Some(e) => super::logs::spark_error(e, ctx),
            None if listed_as_named(log, first_bad, interval) => (None, "java.lang.IllegalStateException"),
            None => batch_not_found(ctx),
        };
        let ending = match unreadable {
            Some(e) => format!("fails reading {} with {exception} ({e})", batch_path_at(log, first_bad, interval)),
            None => format!("fails with {} (\"Unable to find batch {first}\")", batch_not_found_words(ctx)),
        };
        let mut f = Finding::new(
                Code::SinkLogBatchMissing,
                Severity::Error,
                format!(
                    "File sink log {} is missing batch file(s) {} that reading it needs{}",
                    log.dir,
                    super::some_of(&missing, missing.len() as u64),
                    if missing.iter().any(|m| log.listed.contains_key(m)) { " (or they do not parse)" } else { "" }
                ),
            )
            .classes(&class.into_iter().collect::<Vec<_>>())
            .evidence(&log.dir, if latest < 0 {
                format!(
                    "no batch file (the output folder has no log); compaction interval {interval}; the restart's batch {next_compact} compacts the log and needs: {}",
                    missing.iter().take(20).map(|i| batch_path_at(log, *i, interval)).collect::<Vec<_>>().join(", ")
                )
            } else {
                format!(
                    "latest batch {latest}, compaction interval {interval} (from the .compact files listed{}); reading the log needs {}; not listed: {}",
                    if interval != log.compact_interval { format!(" and {SINK_INTERVAL_CONF}; written with {}", log.compact_interval) } else { String::new() },
                    match files_needed(latest, interval) { (Some(c), r) => format!("{c}.compact and batches {}..={}", r.start(), r.end()), (None, r) => format!("batches {}..={}", r.start(), r.end()) },
                    missing.iter().take(20).map(|i| batch_path_at(log, *i, interval)).collect::<Vec<_>>().join(", ")
                )
            }, None)
            .why(if latest < 0 {
                format!(
                    "A file sink compacts its log every compactInterval batches (FileStreamSinkLog), reading the previous compaction and the batches after it. This output folder has no log: the restarted query starts one at its own batch, {next_compact}, a compaction batch, which {ending}.{}",
                    interval_change_words(log, interval, SINK_INTERVAL_CONF)
                )
            } else {
                format!(
                    "Spark reads a file sink's log from its newest compaction file and the batches after it (CompactibleFileStreamLog.allFiles). Readers of the output through the log fail with {} \"{first} doesn't exist (latestId: {latest}, compactInterval: {interval})\"; the restarted query itself runs until its next compaction batch {next_compact}, which reads the same files and {ending}.{}",
                    reader_exception(ctx),
                    interval_change_words(log, interval, SINK_INTERVAL_CONF)
                )
            })
            .fix(&[SINK_BACKUP.to_string()]
                .into_iter()
                .chain(interval_change_step(log, interval, SINK_INTERVAL_CONF))
                .chain([
                    format!("Restore {first} (and the other missing files) from a backup or the storage's versioning; the log cannot be rebuilt from the checkpoint."),
                ])
                // Files missing because the interval changed are there under their other names: the conf is the fix.
                .chain(placeholder_step(log, &placeholders(log, latest, &needed_now, interval), interval).filter(|_| interval == log.compact_interval && needed_now.len() < 1000))
                .chain(own.then(|| no_backup_step(log, cp.restart_batch(), interval)))
                .collect::<Vec<_>>());
        if let Some(r) = compacts_now {
            f = f.fails(RestartStage::SinkCommit, class, exception);
            f.title = format!("{} (the restart's batch {r} compacts the log and fails)", f.title);
        }
        out.push(f);
    }
    out
}

/// Without a backup, the sink log's batches ahead of the checkpoint (`first..=latest`) can be deleted so that the
/// restarted query writes them again: real Spark 3.5.9 and 4.1.4 rewrote them, compacted on at batch 9, and its
/// readers through the log saw every row once. Only when the log up to `first - 1` reads without them (the
/// compaction and batches `allFiles` needs are listed): else deleting leaves a log no reader opens.
fn drop_ahead_step(log: &FileLog, first: i64, latest: i64, ctx: &Context) -> Option<String> {
    if first <= 0 {
        // A new checkpoint: moving the whole log away is the step for it.
        return None;
    }
    let interval = restart_interval(log, ctx, SINK_INTERVAL_CONF).max(1);
    let (compact, range) = files_needed(first - 1, interval);
    if !compact.into_iter().chain(range).all(|id| readable_as_named(log, id, interval)) {
        return None;
    }
    let ahead: Vec<String> = log.listed.range(first..=latest).map(|(_, (path, _, _))| path.clone()).collect();
    let count = ahead.len() as u64;
    Some(format!(
        "{DROP_AHEAD_STEP} {} (the log's batches ahead of the checkpoint, with their .<name>.crc sidecars) before the restart; the sink then writes batches {first}..={latest} again, and readers through the log see each row once (real Spark 3.5.9 and 4.1.4 did, and compacted on). The earlier run's data files of those batches stay in the folder unlisted: a reader globbing the part files sees them twice.",
        super::some_of(&ahead, count)
    ))
}

/// How the placeholder step begins: a repair that hides rows from readers of the log.
pub const PLACEHOLDER_STEP: &str = "Without a backup, keep this checkpoint with placeholder batch files";
/// How the step deleting a sink log's batches ahead of the checkpoint begins: a repair after which readers
/// globbing the part files see those batches twice.
pub const DROP_AHEAD_STEP: &str = "Without that backup: delete";

/// The exception a reader of a file sink's output raises for a batch file its log lacks
/// (`CompactibleFileStreamLog.allFiles`): java.io.FileNotFoundException from Spark 4.3 on, before
/// java.lang.IllegalStateException (real Spark 3.5.9, 4.1.4, 4.3.0 reads after `sink-log-deleted`).
fn reader_exception(ctx: &Context) -> &'static str {
    if super::spark(ctx).at_least(4, 3) {
        "java.io.FileNotFoundException"
    } else {
        "java.lang.IllegalStateException"
    }
}

/// The batch files to stand in for: those reading the log up to `latest` needs and lacks readable
/// ([`chain_lost`]), and those the restart's compaction batch needs now (`needed_now`), in order.
fn placeholders(log: &FileLog, latest: i64, needed_now: &[i64], interval: i64) -> Vec<i64> {
    let mut ids = chain_lost(log, latest, interval);
    ids.extend_from_slice(needed_now);
    ids.sort_unstable();
    ids.dedup();
    ids
}

/// The batch files reading the log up to `latest` needs (the newest compaction at or below it and the batches
/// after, `allFiles`) that it does not have readable under their names.
fn chain_lost(log: &FileLog, latest: i64, interval: i64) -> Vec<i64> {
    let (compact, range) = files_needed(latest, interval);
    compact.into_iter().chain(range).filter(|id| !readable_as_named(log, *id, interval)).take(10_001).collect()
}

/// A repair in place of a sink log that lost batch files `ids` (ascending, the ones reading the log needs),
/// without a backup: a placeholder for each, a file holding the one line `v1`, which the log reads as a batch
/// that lists no file. Real Spark 3.5.9 and 4.1.4 (helpers' runs: the whole log lost at batch 5 and at batch 12,
/// its latest two files, its `9.compact`) then ran through the next compaction batch, and readers through the
/// log worked, without the rows of those batches (a placeholder `.compact` hides every batch up to it). Not
/// offered for more than 10 000 files.
fn placeholder_step(log: &FileLog, ids: &[i64], interval: i64) -> Option<String> {
    if ids.is_empty() || ids.len() > 10_000 {
        return None;
    }
    let paths: Vec<String> = ids.iter().map(|id| batch_path_at(log, *id, interval)).collect();
    let compact = ids.iter().rev().find(|id| crate::log::file_log::is_compaction_batch(**id, interval.max(1)));
    Some(format!(
        "{PLACEHOLDER_STEP}: write {}{} with the single line v1 (a batch that lists no file; e.g. printf 'v1' > <file>). The sink then runs through its compaction batches and readers through the log work again (real Spark 3.5.9 and 4.1.4 did), but they no longer see the rows of {}: their data files stay in the folder, unlisted (a reader globbing the part files still sees them).",
        super::some_of(&paths, paths.len() as u64),
        if paths.len() > 1 { ", each" } else { "" },
        match compact {
            Some(c) => format!("batches 0..={c} (only the lost {c}.compact listed them) and of the others named"),
            None => "those batches".to_string(),
        }
    ))
}

/// The way out of a sink log that lost files, without a backup. Keeping this checkpoint does not help: a new
/// output path, or this one with its log moved away, starts a log at the restart's batch, whose readers fail at
/// once ("0 doesn't exist") and whose next compaction batch fails with BATCH_METADATA_NOT_FOUND (real Spark 3.5.9
/// and 4.1.4). A new log works only from batch 0: a NEW checkpoint.
fn no_backup_step(log: &FileLog, restart: Option<i64>, interval: i64) -> String {
    let keep = match restart {
        Some(r) if r > 0 => {
            // Readers of a log whose latest batch is r read the newest compaction at or below it and the batches
            // after (`allFiles`): the first of them is the first file such a log lacks.
            let (compact, range) = files_needed(r, interval);
            let first = batch_path_at(log, compact.unwrap_or(*range.start()), interval);
            format!(
                "keeping this checkpoint with a new output path (or with {} moved away) does not work: the sink starts that log at batch {r}, so readers of the output fail at once (\"{first} doesn't exist\") and its next compaction batch fails with BATCH_METADATA_NOT_FOUND. ",
                log.dir
            )
        }
        _ => String::new(),
    };
    let start = if keep.is_empty() { "start" } else { "Start" };
    format!(
        "Without a backup: {keep}{start} a NEW checkpoint writing to a new output path (or to this one after moving {} away), so that its log starts at batch 0; the old output stays readable only as plain files, without the log (partial or duplicate files of failed batches included).",
        log.dir
    )
}

/// True when a file source of the checkpoint reads files of the folder holding `log` (an upstream query's output,
/// zipped with its `_spark_metadata`): the source log's kept entries name a path inside it.
fn read_by_a_source(cp: &Checkpoint, log: &FileLog) -> bool {
    let folder = log.dir.trim_end_matches("_spark_metadata").trim_end_matches('/');
    let name = folder.rsplit('/').next().unwrap_or(folder);
    if name.is_empty() {
        // The output folder is the input's root: no name to tell it by, so it may be what a source reads.
        return true;
    }
    let needle = format!("/{name}/");
    cp.source_logs
        .values()
        .flat_map(|l| l.read.values())
        .filter_map(|f| f.file.content.as_ref().ok())
        .any(|b| b.entries.iter().any(|e| e.path.contains(&needle)))
}

/// A sink log that ends below the checkpoint's latest committed batch (its newest files deleted) while the restart
/// is no compaction batch: the restart goes on, the committed batches' output is not in the log, and the next
/// compaction batch fails. `FileStreamSink.addBatch` writes a batch's log file before the query commits it, and a
/// committed batch is never written again (real Spark 3.5.9, 4.1.4, 4.3.0: `tools/spark-gen/sink_log.py`
/// `sink-log-latest-missing-mid-interval`, its output files after the restart against its log).
fn behind_commits(cp: &Checkpoint, ctx: &Context, log: &FileLog, latest: i64) -> Option<Finding> {
    let committed = cp.last_committed_batch_id().filter(|c| *c > latest)?;
    let interval = restart_interval(log, ctx, SINK_INTERVAL_CONF).max(1);
    let restart = cp.restart_batch()?;
    // The first compaction batch the restarted query runs: it reads every batch since the previous compaction.
    let compaction = restart.checked_add(1)?.checked_add(interval - 1)? / interval * interval - 1;
    let missing: Vec<String> = (latest.saturating_add(1)..=committed).take(20).map(|id| batch_path(log, id)).collect();
    let count = committed.saturating_sub(latest) as u64;
    Some(
        Finding::new(
            Code::SinkLogBatchMissing,
            Severity::Warning,
            format!(
                "File sink log {} {}, but batches up to {committed} are committed: their output is missing from the log, and the compaction batch {compaction} will fail",
                log.dir,
                if latest < 0 { "has no batch file (the output folder has no log)".to_string() } else { format!("ends at batch {latest}") }
            ),
        )
        .classes(&batch_not_found(ctx).0.into_iter().collect::<Vec<_>>())
        .evidence(&log.dir, format!("{}; commits/{committed} is the latest commit; not listed: {}", if latest < 0 { "no batch file".to_string() } else { format!("latest batch {latest}") }, super::some_of(&missing, count)), None)
        .why(format!(
            "A file sink writes each batch's log file before the query commits the batch, so every committed batch had one; {} deleted. The restarted query runs batch {restart} and does not write committed batches again: their data files stay in the output folder (unless it was restored from an older copy too), but once it has written batch {restart}, readers through the log (spark.read on the folder, a file source on it) fail with {} \"... doesn't exist\" (as Spark's reader did after such a restart). The sink's compaction batch {compaction} reads every batch since the previous compaction and fails with {} (\"Unable to find batch {}\").",
            if count == 1 { format!("batch {committed}'s was") } else { "those batches' were".to_string() },
            reader_exception(ctx),
            batch_not_found_words(ctx),
            missing[0]
        ))
        .fix(&[
            SINK_BACKUP.to_string(),
            format!("Before batch {compaction} runs, restore {} from a backup or the storage's versioning.", super::some_of(&missing, count)),
        ]
        .into_iter()
        .chain(placeholder_step(log, &chain_lost(log, committed, interval), interval))
        .chain([no_backup_step(log, Some(restart), interval)])
        .collect::<Vec<_>>()),
    )
}

/// The batches of a sink log the restarted query will skip (`first..=latest`, the log's latest batch), with the
/// restart batch and the latest planned batch: those above both the checkpoint's latest planned batch and
/// the batch the restart runs.
fn ahead_range(cp: &Checkpoint, log: &FileLog) -> Option<(i64, i64, i64, i64)> {
    // A checkpoint with no batch yet (a new one: its query started and wrote `metadata` only) runs batch 0 first.
    // An output folder read as a root of its own has no `metadata`: it is no checkpoint.
    let fresh = cp.offsets.is_empty() && cp.commits.is_empty() && cp.has_file("metadata");
    let restart = cp.restart_batch().or_else(|| fresh.then_some(0))?;
    let planned = cp.last_batch_id().unwrap_or(-1);
    let (&latest, _) = log.listed.iter().next_back()?;
    let first_lost = restart.max(planned + 1);
    (latest >= first_lost).then_some((first_lost, latest, restart, planned))
}

/// What the report shows of each sink log next to the checkpoint's batches ([`SinkLogInfo`]): the same
/// chain and skip rules as the checks.
pub fn sink_log_info(cp: &Checkpoint, ctx: &Context) -> Vec<SinkLogInfo> {
    const MAX_IDS: usize = 10_000;
    sink_logs(cp, ctx)
        .into_iter()
        .map(|log| {
            let ids: Vec<i64> = log.listed.keys().rev().take(MAX_IDS).rev().copied().collect();
            let compact: Vec<i64> = log.listed.iter().filter(|(_, (_, _, c))| *c).map(|(id, _)| *id).collect();
            SinkLogInfo {
                dir: log.dir.clone(),
                compact_interval: log.compact_interval,
                batch_ids_truncated: log.listed.len() > ids.len(),
                batch_ids: ids,
                compact_batch_ids: compact.into_iter().rev().take(MAX_IDS).rev().collect(),
                missing_batch_ids: missing_in_chain(log, log.compact_interval).map(|(_, m)| m).unwrap_or_default(),
                skipped_batch_ids: ahead_range(cp, log)
                    .map(|(a, b, _, _)| (a..=b).take(MAX_IDS).collect())
                    .unwrap_or_default(),
            }
        })
        .collect()
}

/// A sink log with batches the checkpoint never planned: `FileStreamSink.addBatch` skips them silently.
pub fn check_sink_ahead(cp: &Checkpoint, ctx: &Context) -> Vec<Finding> {
    let mut out = Vec::new();
    for log in sink_logs(cp, ctx) {
        let Some((first_lost, latest, restart, planned)) = ahead_range(cp, log) else { continue };
        let Some((_, (path, _, _))) = log.listed.iter().next_back() else { continue };
        out.push(
            Finding::new(
                Code::SinkLogAhead,
                Severity::Warning,
                format!("File sink log {} is ahead of the checkpoint: batches {first_lost}..={latest} will be skipped without error", log.dir),
            )
            .evidence(path, format!("the sink log's latest batch is {latest}; the checkpoint's latest planned batch is {planned} and the restart runs batch {restart}"), None)
            .why(format!(
                "The file sink skips every batch whose id is at or below the latest batch of its log (FileStreamSink.addBatch: \"Skipping already committed batch\"), so the restarted query writes nothing for batches {first_lost}..={latest}: their data is lost, with no error. This happens when a new (or reset) checkpoint writes into an output folder an older query wrote."
            ))
            .fix(&[
                SINK_BACKUP.to_string(),
                if restart == 0 {
                    "Write the new query to a new output path (the safest: the old output and its log stay as they are).".to_string()
                } else {
                    format!("To keep this checkpoint and write batches {first_lost}..={latest} again, restore {} from the backup taken with the checkpoint. A new output path does not help it: the sink would start that log at batch {restart}, and its readers and its next compaction batch fail (BATCH_METADATA_NOT_FOUND).", log.dir)
                },
            ]
            .into_iter()
            .chain(drop_ahead_step(log, first_lost, latest, ctx))
            // Only a log started at batch 0 compacts without the old batches: a restart at a later batch starts it
            // there, and its first compaction batch fails (BATCH_METADATA_NOT_FOUND).
            .chain((restart == 0).then(|| move_log_away_step(log)))
            .chain((restart > 0).then(|| "Else accept the loss of those batches' output, or start a NEW checkpoint writing to a new output path.".to_string()))
            .collect::<Vec<_>>()),
        );
    }
    out
}

/// "Or move the log away" for a query whose next batch is 0 (a new checkpoint): the sink then starts a new log
/// at batch 0 (`FileStreamSinkLog` finds no batch), and readers of the folder list every file in it
/// (`FileStreamSink.hasMetadata` is false, so `spark.read` lists the folder).
fn move_log_away_step(log: &FileLog) -> String {
    format!("Or, to keep this output path, move {} away before the restart: the sink starts a new log at batch 0, and readers of the folder then list every file in it (the old output's files without the log's filtering, so partial files of failed batches show up too).", log.dir)
}

/// The steps a NEW checkpoint needs for the file sink logs given with this one that hold a batch, one per log:
/// a new checkpoint numbers its batches from 0 and `FileStreamSink.addBatch` skips every batch at or below its
/// log's latest ("Skipping already committed batch"), so writing into the same output would lose the new
/// query's first batches without an error (real 3.5.9, 4.1.4, 4.3.0: the records
/// `file-log-restart-sink-ahead-new-checkpoint-*`). Empty when no sink log holds a batch.
pub fn new_checkpoint_sink_steps(cp: &Checkpoint, ctx: &Context) -> Vec<String> {
    sink_logs(cp, ctx)
        .into_iter()
        .filter_map(|log| {
            let (&latest, _) = log.listed.iter().next_back()?;
            Some(format!(
                "Write the new query to a NEW output path too (.option(\"path\", \"{NEW_OUTPUT}\")): the file sink's log {} holds batches up to {latest}, and the sink skips every batch at or below it (FileStreamSink.addBatch: \"Skipping already committed batch\"), so into this output the new query's batches 0..={latest} would write nothing, with no error. Readers then read the new path (the old one keeps the rows written so far). {}",
                log.dir,
                move_log_away_step(log)
            ))
        })
        .collect()
}

/// The placeholder for a new output path (the file sink's `path`) in steps and snippets.
pub const NEW_OUTPUT: &str = "<new output path>";

/// Data files the sink log lists (its `add` entries, less `delete`s) that the output listing lacks.
pub fn check_sink_files(cp: &Checkpoint, ctx: &Context) -> Vec<Finding> {
    let mut out = Vec::new();
    for log in sink_logs(cp, ctx) {
        let Some(present) = &log.output_files else { continue };
        let Some((&latest, _)) = log.listed.iter().next_back() else { continue };
        let (compact, range) = files_needed(latest, log.compact_interval);
        let chain: Vec<(i64, &crate::log::file_log::FileLogBatch)> = compact
            .into_iter()
            .chain(range)
            .filter_map(|id| log.read.get(&id).and_then(|f| f.file.content.as_ref().ok()).map(|b| (id, b)))
            .collect();
        // Entries past the memory budget are not kept (the files read first keep theirs: the newest): an `add`
        // is only known live when every file from its own on is kept whole, as a `delete` after it could be
        // among the others.
        let not_kept: u64 = chain.iter().map(|(_, b)| b.not_kept).sum();
        let known_from = chain.iter().filter(|(_, b)| !b.complete()).map(|(id, _)| *id).max();
        // Every `add` in log order; a `delete` takes back every earlier `add` of its path (`allFiles`), found by
        // an index so that a log of many deletes stays linear.
        let mut added: Vec<(i64, &str, bool)> = Vec::new();
        let mut by_path: std::collections::HashMap<&str, Vec<usize>> = std::collections::HashMap::new();
        for (id, b) in &chain {
            for e in &b.entries {
                if e.action.as_deref() == Some("delete") {
                    for i in by_path.remove(e.path.as_str()).unwrap_or_default() {
                        added[i].2 = false;
                    }
                } else {
                    by_path.entry(e.path.as_str()).or_default().push(added.len());
                    added.push((*id, e.path.as_str(), true));
                }
            }
        }
        let live: Vec<(i64, &str)> =
            added.into_iter().filter(|x| x.2 && known_from.is_none_or(|k| x.0 > k)).map(|(id, p, _)| (id, p)).collect();
        let depth = present.keys().map(|k| k.split('/').count()).max().unwrap_or(0);
        let absent: Vec<&(i64, &str)> = live.iter().filter(|(_, p)| !listed_as(present, depth, p)).collect();
        let Some((id, first)) = absent.first() else { continue };
        out.push(
            Finding::new(
                Code::SinkLogFileMissing,
                Severity::Warning,
                format!("{} data file(s) the file sink log {} lists are not in the output folder", absent.len(), log.dir),
            )
            .evidence(batch_path(log, *id), format!(
                "{} of {} live file(s) listed by the log are absent, e.g. {first}; the output folder holds {} data file(s){}",
                absent.len(), live.len(), present.len(),
                if not_kept > 0 { format!(" (the log's files hold {not_kept} more entries, read and well formed but past this inspector's memory budget for entries: the adds of files up to the last of those were not compared)") } else { String::new() }
            ), None)
            .why("Readers of a file sink's output (spark.read on the folder, or a file source on it) take the file list from _spark_metadata, not from the folder: a listed file that is gone fails the read with a file-not-found error (or is skipped with spark.sql.files.ignoreMissingFiles=true, losing its rows).")
            .fix(&[
                format!("Restore the missing data files (e.g. {first}) from a backup or the storage's versioning."),
                "If they are gone for good: read with spark.sql.files.ignoreMissingFiles=true and accept the lost rows, or copy the remaining files to a new folder without _spark_metadata.".to_string(),
            ]),
        );
    }
    out
}

/// Whether the log entry `uri` names one of the output folder's files (by its path relative to the folder):
/// one of its last `depth` segments on (`depth`: the most segments a present path has), so that a path of
/// thousands of segments costs `depth` lookups.
fn listed_as(present: &std::collections::BTreeMap<String, u64>, depth: usize, uri: &str) -> bool {
    let decoded = crate::checks::metadata::unescape_once(uri);
    let p = decoded.as_deref().unwrap_or(uri);
    // The suffix of the last `depth` segments.
    let start = p.rmatch_indices('/').nth(depth.saturating_sub(1)).map_or(0, |(i, _)| i + 1);
    let mut rest = &p[start..];
    loop {
        if present.contains_key(rest) {
            return true;
        }
        match rest.find('/') {
            Some(i) => rest = &rest[i + 1..],
            None => return false,
        }
    }
}

/// A file source log whose chain misses a file: the source fails when it starts (`FileStreamSource` restores
/// its seen files with `metadataLog.restore()`, i.e. `allFiles`).
pub fn check_source_chain(cp: &Checkpoint, ctx: &Context) -> Vec<Finding> {
    let mut out = Vec::new();
    for (n, log) in &cp.source_logs {
        let interval = restart_interval(log, ctx, SOURCE_INTERVAL_CONF);
        let Some((latest, missing)) = missing_in_chain(log, interval) else { continue };
        let first = batch_path_at(log, missing[0], interval);
        // The source opens its latest batch first (`HDFSMetadataLog.getLatest`): when that file is not under
        // the name the interval gives it, the open fails (java.io.FileNotFoundException "File ... does not
        // exist", real Spark 3.5.9, 4.1.4 and 4.3.0 with a changed interval); a missing file of the chain fails
        // `allFiles` after it.
        let (exception, words) = if missing.contains(&latest) {
            (
                "java.io.FileNotFoundException",
                format!(
                    "java.io.FileNotFoundException \"File {} does not exist\"",
                    batch_path_at(log, latest, interval)
                ),
            )
        } else {
            ("java.lang.IllegalStateException", format!("java.lang.IllegalStateException \"{first} doesn't exist (latestId: {latest}, compactInterval: {interval})\""))
        };
        out.push(
            Finding::new(
                Code::SourceLogBatchMissing,
                Severity::Error,
                format!("File source log of source {n} is missing batch file(s) {} that the source reads when it starts", super::some_of(&missing, missing.len() as u64)),
            )
            .evidence(&log.dir, format!(
                "latest batch {latest}, compaction interval {interval} ({SOURCE_INTERVAL_CONF}, default 10, or inferred from the .compact files listed{}); not listed: {}",
                if interval != log.compact_interval { format!("; written with {}", log.compact_interval) } else { String::new() },
                missing.iter().take(20).map(|i| batch_path_at(log, *i, interval)).collect::<Vec<_>>().join(", ")
            ), None)
            .why(format!(
                "When the query starts, the file source opens its log's latest batch and rebuilds the files it has seen from the newest compaction file and the batches after it (HDFSMetadataLog.getLatest, FileStreamSourceLog.restore → CompactibleFileStreamLog.allFiles). A missing one stops it with {words}.{}",
                interval_change_words(log, interval, SOURCE_INTERVAL_CONF)
            ))
            .fails(RestartStage::SourceOffsets, None, exception)
            .fix(&[BACKUP.to_string()]
                .into_iter()
                .chain(interval_change_step(log, interval, SOURCE_INTERVAL_CONF))
                .chain([
                    format!("Restore {first} (and the other missing files) from a backup of the checkpoint."),
                    super::new_checkpoint_step(cp),
                ])
                .collect::<Vec<_>>()),
        );
    }
    out
}

#[cfg(test)]
mod tests {
    use crate::archive::{Archive, Limits, MemArchive};
    use crate::report::SinkLogInfo;
    use crate::testutil::open_fixture;
    use crate::{diagnose, Context};

    #[test]
    fn a_log_path_of_many_segments_is_matched_by_its_last_ones() {
        let present: std::collections::BTreeMap<String, u64> =
            [("a/b.parquet".to_string(), 1), ("c.parquet".to_string(), 1)].into_iter().collect();
        let deep = format!("file:///{}a/b.parquet", "x/".repeat(100_000));
        assert!(super::listed_as(&present, 2, &deep));
        assert!(super::listed_as(&present, 2, "file:///out/c.parquet"));
        assert!(super::listed_as(&present, 2, "c.parquet"));
        assert!(!super::listed_as(&present, 2, &format!("file:///{}a/d.parquet", "x/".repeat(100_000))));
    }

    fn files(name: &str, prefix: &str) -> Vec<(String, Vec<u8>)> {
        let mut z = open_fixture(name);
        let paths: Vec<String> = z.entries().iter().filter(|e| !e.is_dir).map(|e| e.path.clone()).collect();
        paths.into_iter().map(|p| (format!("{prefix}{p}"), z.read(&p, 1 << 26).expect("reads"))).collect()
    }

    fn sink_logs(files: Vec<(String, Vec<u8>)>) -> Vec<SinkLogInfo> {
        let mut a = MemArchive::new("t", files, Limits::default()).expect("archive");
        let r = diagnose(&mut a, &Context::default());
        let chk = r.checkpoints.iter().find(|c| c.root == "chk").expect("the checkpoint root");
        chk.sink_logs.clone()
    }

    #[test]
    fn the_report_shows_the_sink_log_beside_the_checkpoint() {
        // Real Spark 4.3.0: the checkpoint of batches 0..=3 and its file sink's output, zipped side by side.
        let mut all = files("ss-4.3.0-stateless", "chk/");
        all.extend(files("ss-4.3.0-stateless.sink-output", "out/"));
        let logs = sink_logs(all.clone());
        assert_eq!(logs.len(), 1);
        let l = &logs[0];
        assert_eq!(
            (l.dir.as_str(), l.batch_ids.clone(), l.compact_interval),
            ("out/_spark_metadata", vec![0, 1, 2, 3], 10)
        );
        assert!(l.skipped_batch_ids.is_empty() && l.missing_batch_ids.is_empty() && l.compact_batch_ids.is_empty());
        // A new checkpoint (batch 0 only) writing into the old output: the restart skips sink batches 1..=3.
        let newer: Vec<_> = all
            .iter()
            .filter(|(p, _)| {
                !(p.starts_with("chk/")
                    && ["1", "2", "3"]
                        .iter()
                        .any(|b| p.ends_with(&format!("/{b}")) || p.ends_with(&format!("/.{b}.crc"))))
            })
            .cloned()
            .collect();
        assert_eq!(sink_logs(newer)[0].skipped_batch_ids, vec![1, 2, 3]);
        // A batch file reading the log needs is gone.
        let cut: Vec<_> = all.into_iter().filter(|(p, _)| p != "out/_spark_metadata/1").collect();
        assert_eq!(sink_logs(cut)[0].missing_batch_ids, vec![1]);
    }
}

#[cfg(test)]
#[path = "sink_log_restart_tests.rs"]
mod restart_compaction_tests;

#[cfg(test)]
mod behind_commits_tests {
    use crate::archive::{Limits, MemArchive};
    use crate::report::{Code, RestartOutcome, Severity};
    use crate::testutil::{generated_files, generated_record};
    use crate::{diagnose, Context, SparkVersion};

    /// Real Spark 4.1.4 (`sink_log.py`, `sink-log-latest-missing-mid-interval`): the sink log's newest file (batch
    /// 6) deleted, batch 6 committed, the restart's batch 7 no compaction batch. Spark resumed, and after the
    /// restart its log still has no batch 6 while batch 6's data file is in the folder: a warning names the hole
    /// and the compaction batch that will fail, and the verdict stays Spark's.
    #[test]
    fn a_sink_log_behind_the_commit_log_is_named_before_its_compaction_fails() {
        let name = "sink-log-latest-missing-mid-interval-4.1.4";
        let after = &generated_record(name)["restart_outcome"];
        assert_eq!(after["ok"].as_bool(), Some(true));
        let log: Vec<&str> =
            after["sink_log_after_restart"].as_array().unwrap().iter().filter_map(|v| v.as_str()).collect();
        assert!(log.contains(&"7") && !log.contains(&"6"), "{log:?}");
        let mut a = MemArchive::new(name, generated_files(name), Limits::default()).unwrap();
        let ctx = Context { spark_version: Some(SparkVersion::new(4, 1, 4)), ..Context::default() };
        let r = diagnose(&mut a, &ctx);
        let chk = r.checkpoints.iter().find(|c| c.root == "chk").expect("chk");
        assert_eq!(chk.restart.outcome, RestartOutcome::Resumes);
        let f = chk.findings.iter().find(|f| f.code == Code::SinkLogBatchMissing).expect("sink-log-batch-missing");
        assert_eq!(f.severity, Severity::Warning);
        assert!(
            f.title.contains("compaction batch 8") && f.evidence[0].detail.contains("out/_spark_metadata/6"),
            "{f:?}"
        );
        // Without a backup: a placeholder for batch 6 keeps the checkpoint (real Spark 3.5.9 and 4.1.4 compacted
        // on through such placeholders); keeping it with a new output path does not work.
        let steps = f.fix.join("\n");
        assert!(steps.contains("write out/_spark_metadata/6 with the single line v1"), "{steps}");
        assert!(steps.contains("does not work: the sink starts that log at batch 7"), "{steps}");
    }
}
