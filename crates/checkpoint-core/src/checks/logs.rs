//! Offset, commit, file-source and operator-metadata log files: malformed, truncated, empty, written by a
//! newer Spark (FORMATS.md §2, §3, §5, §6); gaps and mismatches between the offset and commit logs.

use super::{legacy, spark, BACKUP};
use crate::log::{max_supported, LogError, LogKind};
use crate::model::Checkpoint;
use crate::report::{CheckpointKind, Code, Finding, RestartStage, Severity};
use crate::Context;

/// What Spark throws reading a log file with damage `e`, as (error class, exception).
pub(super) fn spark_error(e: &LogError, ctx: &Context) -> (Option<&'static str>, &'static str) {
    let class = match e {
        LogError::MalformedVersion { .. } if !legacy(ctx) => Some("MALFORMED_LOG_FILE"),
        _ => None,
    };
    (class, e.spark_exception())
}

fn describe(e: &LogError) -> String {
    match e {
        LogError::Empty => "the file is empty (0 bytes): Spark reports \"Incomplete log file\"".into(),
        other => other.to_string(),
    }
}

struct VersionIssue {
    class: Option<&'static str>,
    message: String,
}

/// A version that the assumed Spark cannot read (UnsupportedLogVersion), with Spark's class and words.
fn version_issue(kind: LogKind, found: u32, cp: &Checkpoint, ctx: &Context) -> Option<VersionIssue> {
    let v = spark(ctx);
    if kind == LogKind::Commits && v.at_least(4, 3) {
        // 4.3 reads a commit file of any version up to its maximum and keeps the checkpoint's own format,
        // whatever the session sets (`CommitLog.readCommitMetadata`): real 4.3.0 restarts of v1 and v2 checkpoints
        // with the conf set to the other version resumed (a newcomer's runs, 2026-12-08).
        let max = max_supported(kind, v);
        return (found > max).then(|| VersionIssue {
            class: Some("INVALID_LOG_VERSION.MAX_SUPPORTED_VERSION"),
            message: format!(
                "UnsupportedLogVersion: maximum supported log version is v{max}, but encountered v{found}"
            ),
        });
    }
    if kind == LogKind::Commits && v.at_least(4, 0) {
        // The commit log accepts exactly the configured state checkpoint format version. It is not
        // recorded in the offset log; without the user's session conf we assume it matches the files, unless
        // the pasted error names the version the restart accepted (a session without the conf reads only v1:
        // a newcomer's real Spark 4.1.4 restart of a format v2 checkpoint with default confs).
        let configured: u32 =
            super::effective_conf_value(cp, ctx, "spark.sql.streaming.stateStore.checkpointFormatVersion")
                .and_then(|s| s.trim().parse().ok())
                .or_else(|| ctx.error_text.as_deref().and_then(exact_version_in_error))
                .unwrap_or(if found <= 2 { found } else { 1 });
        if found != configured {
            return Some(VersionIssue {
                class: Some("INVALID_LOG_VERSION.EXACT_MATCH_VERSION"),
                message: format!(
                    "UnsupportedLogVersion. The only supported log version is v{configured}, but encountered v{found} \
                     (the commit log version is the state checkpoint format version; the restarted session uses \
                     spark.sql.streaming.stateStore.checkpointFormatVersion={configured})"
                ),
            });
        }
        return None;
    }
    let max = max_supported(kind, v);
    if found > max {
        return Some(VersionIssue {
            class: if legacy(ctx) { None } else { Some("INVALID_LOG_VERSION.MAX_SUPPORTED_VERSION") },
            message: format!(
                "UnsupportedLogVersion: maximum supported log version is v{max}, but encountered v{found}. The log \
                 file was produced by a newer version of Spark and cannot be read by this version"
            ),
        });
    }
    None
}

/// The version `INVALID_LOG_VERSION.EXACT_MATCH_VERSION` says the restart accepted: "The only supported log version
/// is v1, but encountered v2" (`HDFSMetadataLog.validateVersionExactMatch`).
pub(crate) fn exact_version_in_error(text: &str) -> Option<u32> {
    let key = "only supported log version is v";
    let at = text.find(key)? + key.len();
    let digits: String = text[at..].chars().take_while(|c| c.is_ascii_digit()).take(9).collect();
    digits.parse().ok()
}

/// A zip entry the archive reader cannot inflate (`ArchiveError::Corrupt`; [`crate::ArchiveError::is_entry_damage`],
/// also a folder's file the reader cannot open): the zip is broken, which says nothing about the checkpoint
/// file (a log file, or a state file of a restart chain). `needed` = a restart reads the file, so the diagnosis is incomplete:
/// severity error (the verdict cannot be trusted, and the exit status must say so) and the prediction becomes
/// `unknown` (see `predict`); otherwise a warning.
pub(crate) fn archive_entry_unreadable(path: &str, size: u64, reason: &str, needed: bool) -> Finding {
    // `ArchiveError::Io`: the input's reader failed (a folder's file that cannot be opened), not a zip entry.
    let title = if reason.starts_with("read error:") {
        format!("{path} cannot be read from the input, so this file was not checked")
    } else {
        format!("{path}: the zip entry cannot be unpacked, so this file was not checked")
    };
    Finding::new(Code::ArchiveEntryUnreadable, if needed { Severity::Error } else { Severity::Warning }, title)
    .evidence_sized(path, size, reason.to_string(), None)
    .why(if needed {
        "The zip is damaged (the entry does not inflate, or its stored sizes or CRC do not match), not necessarily the checkpoint. A restart reads this file, so the restart prediction is unknown until it can be read."
    } else {
        "The zip is damaged (the entry does not inflate, or its stored sizes or CRC do not match), not necessarily the checkpoint. A restart does not read this file; other checks are unaffected."
    })
    .fix(&[
        "Re-create the zip from the checkpoint folder (e.g. `cd <checkpoint> && zip -r ../checkpoint.zip .`) and run the inspector again.",
        "If the folder itself is damaged (the file cannot be copied or read there either), restore that file from a backup or another copy of the checkpoint.",
    ])
}

/// The repair step for a damaged `offsets/<id>`, from what the checkpoint shows: a committed batch's offsets
/// must be restored (never deleted); the latest, uncommitted batch's may be deleted so Spark re-plans it.
pub(super) fn offsets_repair_step(cp: &Checkpoint, id: i64, path: &str) -> String {
    let last = cp.last_batch_id();
    let last_commit = cp.last_committed_batch_id();
    if cp.commits.contains_key(&id) {
        format!("Batch {id} is committed: do not delete {path}; restore it from a backup or another copy of the checkpoint (Spark needs a committed batch's end offsets to plan the next one).")
    } else if Some(id) == last && last_commit.is_none_or(|c| c < id) {
        let from = match last_commit {
            Some(c) => format!("from the committed offsets of batch {c}"),
            None => "from the sources' starting options (nothing is committed)".to_string(),
        };
        format!("Batch {id} was planned but never committed: delete {path} (and its .crc sidecar `offsets/.{id}.crc` if present), or restore it from a backup; Spark then re-plans batch {id} {from}.")
    } else {
        format!("Batch {id} is not committed but later batches exist: do not delete {path}; restore it from a backup or another copy of the checkpoint.")
    }
}

/// Damaged or too-new log files. The latest offsets file, the one before it and the latest commit file are
/// read at restart (a problem there fails it); older ones are reported as warnings.
pub fn check_log_files(cp: &Checkpoint, ctx: &Context) -> Vec<Finding> {
    if cp.kind.0 != CheckpointKind::StructuredStreaming {
        return check_sink_logs(cp, ctx);
    }
    let mut out = batch_log_files(cp, ctx);
    out.extend(source_log_files(cp, ctx));
    out.extend(check_sink_logs(cp, ctx));
    out.extend(other_log_files(cp));
    out
}

/// The offsets and commits files: one finding per damaged or too-new file, and one for those over the budget.
fn batch_log_files(cp: &Checkpoint, ctx: &Context) -> Vec<Finding> {
    let mut out = Vec::new();
    let last = cp.last_batch_id();
    let last_commit = cp.last_committed_batch_id();
    let read_stage = |kind: LogKind, id: i64| -> Option<RestartStage> {
        match kind {
            LogKind::Offsets if Some(id) == last => Some(RestartStage::LatestOffsets),
            LogKind::Offsets if last.is_some_and(|l| l != 0 && id == l - 1) => Some(RestartStage::PreviousOffsets),
            LogKind::Commits if Some(id) == last_commit => Some(RestartStage::LatestCommit),
            _ => None,
        }
    };
    let mut not_read: Vec<String> = Vec::new();
    // Version-line warnings per (log folder, version), folded below.
    let mut too_new: std::collections::BTreeMap<(&str, u32), Vec<Finding>> = std::collections::BTreeMap::new();
    let offsets = cp.offsets.iter().map(|(id, f)| {
        (
            LogKind::Offsets,
            *id,
            &f.file.path,
            f.file.size,
            f.file.content.as_ref().err(),
            f.file.content.as_ref().ok().map(|o| o.version),
        )
    });
    let commits = cp.commits.iter().map(|(id, f)| {
        (
            LogKind::Commits,
            *id,
            &f.file.path,
            f.file.size,
            f.file.content.as_ref().err(),
            f.file.content.as_ref().ok().map(|o| o.version),
        )
    });
    for (kind, id, path, size, err, version) in offsets.chain(commits) {
        if let Some(LogError::NotRead { .. }) = err {
            not_read.push(format!("{path} ({size} bytes)"));
            continue;
        }
        // A limit of this inspector, not damage: reported by `budgets::check_not_verified`. A file read after
        // the verdict: nothing to say of it yet.
        if let Some(LogError::NotVerified { .. } | LogError::Deferred) = err {
            continue;
        }
        let file = LogFileAt { kind, id, path, size, stage: read_stage(kind, id) };
        let Some(f) = log_file_finding(cp, ctx, &file, err, version) else { continue };
        // A log written by a newer Spark has the version in every file: the files a restart does not read
        // are one warning per log and version, not one each.
        match version {
            Some(v) if f.code == Code::LogVersionUnsupported && f.restart_failure.is_none() => {
                too_new.entry((if kind == LogKind::Offsets { "offsets" } else { "commits" }, v)).or_default().push(f)
            }
            _ => out.push(f),
        }
    }
    for ((dir, v), mut fs) in too_new {
        if fs.len() == 1 {
            out.extend(fs);
            continue;
        }
        let n = fs.len();
        let paths: Vec<String> = fs.iter().filter_map(|f| f.evidence.first().map(|e| e.path.clone())).collect();
        let mut f = fs.swap_remove(0);
        f.title = format!(
            "{n} other {dir} files, {} to {}, have log version v{v}, which Spark {} cannot read (a restart does not read them)",
            paths.first().map(String::as_str).unwrap_or(dir),
            paths.last().map(String::as_str).unwrap_or(dir),
            spark(ctx)
        );
        f.evidence.truncate(1);
        f = f.evidence(
            dir,
            format!("the same first line \"v{v}\" in {}", super::some_of(&paths[1..], (n - 1) as u64)),
            None,
        );
        out.push(f);
    }
    if !not_read.is_empty() {
        out.push(
            Finding::new(
                Code::LogFilesNotRead,
                Severity::Info,
                format!("{} older offsets/commits file(s) were listed but not read", not_read.len()),
            )
            .evidence(
                "offsets",
                format!(
                    "over the {} MiB budget for log files, newest read first: {}",
                    crate::log::MAX_TOTAL_LOG_BYTES / (1024 * 1024),
                    super::some_of(&not_read, not_read.len() as u64)
                ),
                None,
            )
            .why("A restart reads only the latest offsets and commits files; to keep memory bounded the inspector reads log files newest first up to a total byte budget, so damage in these older files is not reported.")
            .fix(&["Nothing to do for the restart. To check these files too, remove old batches Spark no longer needs (spark.sql.streaming.minBatchesToRetain) or inspect a zip holding only them."]),
        );
    }
    out
}

/// One offsets or commits file and where a restart reads it.
struct LogFileAt<'a> {
    kind: LogKind,
    id: i64,
    path: &'a str,
    size: u64,
    /// The restart stage that reads it; `None` when a restart does not.
    stage: Option<RestartStage>,
}

/// The finding for one offsets or commits file that does not parse, or whose version Spark cannot read.
fn log_file_finding(
    cp: &Checkpoint,
    ctx: &Context,
    file: &LogFileAt<'_>,
    err: Option<&LogError>,
    version: Option<u32>,
) -> Option<Finding> {
    let v = spark(ctx);
    let LogFileAt { kind, id, path, size, stage } = *file;
    let dir = if kind == LogKind::Offsets { "offsets" } else { "commits" };
    if let Some(LogError::Unreadable { reason, archive_damaged: true }) = err {
        return Some(archive_entry_unreadable(path, size, reason, stage.is_some()));
    }
    if let Some(e) = err {
        let (class, exc) = spark_error(e, ctx);
        let code = match e {
            // An empty commits file: `CommitLog.deserialize` words it "Incomplete log file in the offset
            // commit log" (no first line; the file's length, 0, is where it is missing), but it is empty.
            LogError::Empty | LogError::MissingLine { offset: 0, .. } => Code::LogFileEmpty,
            LogError::MalformedVersion { .. } => Code::LogVersionMalformed,
            LogError::BadJson { eof: true, .. } | LogError::MissingLine { .. } => Code::LogFileTruncated,
            _ => Code::LogFileMalformed,
        };
        let mut f = Finding::new(
            code,
            if stage.is_some() { Severity::Error } else { Severity::Warning },
            format!("{path} cannot be read: {}", describe(e)),
        )
        .evidence_sized(path, size, describe(e), Some(e.offset()))
        .why(if stage.is_some() {
            format!(
                "On restart Spark reads the latest {dir} file{} and fails when it does not parse (\"Failed to read log file {path}\" for version-line and incomplete-file errors; JSON errors surface as the parser's exception).",
                if kind == LogKind::Offsets { " and the one before it" } else { "" }
            )
        } else {
            format!("A restart does not read this {dir} file, but anything that does (the state data source, a later range read) fails on it.")
        });
        if let Some(c) = class {
            f = f.classes(&[c]);
        }
        let step = match kind {
            LogKind::Offsets => offsets_repair_step(cp, id, path),
            _ => format!("Restore {path} from a backup or another copy of the checkpoint."),
        };
        let fixes = vec![BACKUP.to_string(), step, super::new_checkpoint_step(cp)];
        f = f.fix(&fixes);
        if let Some(s) = stage {
            f = f.fails(s, class, exc);
        }
        return Some(f);
    } else if let Some(found) = version {
        if let Some(issue) = version_issue(kind, found, cp, ctx) {
            let mut f = Finding::new(
                Code::LogVersionUnsupported,
                if stage.is_some() { Severity::Error } else { Severity::Warning },
                format!("{path} has log version v{found}, which Spark {v} cannot read"),
            )
            .evidence(path, format!("first line \"v{found}\"; {}", issue.message), Some(0))
            .classes(&issue.class.map(|c| vec![c]).unwrap_or_default())
            .why(format!(
                "Spark validates the version line of every log file it reads (MetadataVersionUtil): {}.",
                issue.message
            ))
            .fix(&if kind == LogKind::Commits && found == 1 && spark(ctx).at_least(4, 0) {
                // Written with format v1, restarted asking for v2.
                vec![
                    "A v1 commit log means the checkpoint was written with state checkpoint format v1: restart without spark.sql.streaming.stateStore.checkpointFormatVersion=2 (or with it set to 1), as it was written.".to_string(),
                    super::new_checkpoint_step(cp),
                ]
            } else if kind == LogKind::Commits && found == 2 && spark(ctx).at_least(4, 0) {
                // Spark reads v2 commits: only the session's format conf is wrong.
                vec![
                    "A v2 commit log means the checkpoint was written with state checkpoint format v2: restart with .config(\"spark.sql.streaming.stateStore.checkpointFormatVersion\", \"2\") (and the RocksDB state store provider), as it was written.".to_string(),
                    super::new_checkpoint_step(cp),
                ]
            } else {
                vec![
                    format!("Restart with the Spark version (or newer) that wrote this checkpoint; a v{found} {dir} file is written by a newer Spark or by a different state checkpoint format."),
                    if kind == LogKind::Commits && found == 2 {
                        "A v2 commit log means spark.sql.streaming.stateStore.checkpointFormatVersion=2 (RocksDB checkpoint format v2): restart with Spark 4.0+ and that conf set.".to_string()
                    } else {
                        "Do not edit the version line by hand: the content after it is in the newer format.".to_string()
                    },
                    super::new_checkpoint_step(cp),
                ]
            });
            if let Some(s) = stage {
                f = f.fails(s, issue.class, "java.lang.IllegalStateException");
            }
            return Some(f);
        }
    }
    None
}

/// File source logs: Spark reads the newest compaction and the batches after it when the source starts.
fn source_log_files(cp: &Checkpoint, ctx: &Context) -> Vec<Finding> {
    let mut out = Vec::new();
    for (n, log) in &cp.source_logs {
        let latest = log.listed.keys().next_back().copied().unwrap_or(0);
        let (compact, range) = crate::log::file_log::files_needed(latest, log.compact_interval);
        for (id, f) in &log.read {
            let needed = Some(*id) == compact || range.contains(id);
            let err = f.file.content.as_ref().err();
            let ver = f.file.content.as_ref().ok().map(|b| b.version);
            if let Some(LogError::Unreadable { reason, archive_damaged: true }) = err {
                out.push(archive_entry_unreadable(&f.file.path, f.file.size, reason, needed));
                continue;
            }
            if let Some(LogError::NotVerified { .. }) = err {
                continue;
            }
            if let Some(e) = err {
                let mut fd = Finding::new(
                    if matches!(e, LogError::Empty) { Code::LogFileEmpty } else { Code::LogFileMalformed },
                    if needed { Severity::Error } else { Severity::Warning },
                    format!("{} (file source log of source {n}) cannot be read: {}", f.file.path, describe(e)),
                )
                .evidence_sized(&f.file.path, f.file.size, describe(e), Some(e.offset()))
                .why("The file source rebuilds its list of seen files from sources/<n>/ (the newest .compact file and the batches after it) when the query starts.")
                .fix(&[BACKUP.to_string(), format!("Restore {} from a backup.", f.file.path), super::new_checkpoint_step(cp)]);
                if needed {
                    let (class, exc) = spark_error(e, ctx);
                    if let Some(c) = class {
                        fd = fd.classes(&[c]);
                    }
                    fd = fd.fails(RestartStage::SourceOffsets, class, exc);
                }
                out.push(fd);
            } else if let Some(found) = ver {
                if let Some(issue) = version_issue(LogKind::FileSource, found, cp, ctx) {
                    let mut fd = Finding::new(
                        Code::LogVersionUnsupported,
                        Severity::Error,
                        format!("{} has log version v{found}", f.file.path),
                    )
                    .evidence(&f.file.path, issue.message.clone(), Some(0))
                    .classes(&issue.class.map(|c| vec![c]).unwrap_or_default())
                    .why(issue.message.clone())
                    .fix(&["Restart with the Spark version that wrote the checkpoint.".to_string()]);
                    if needed {
                        fd = fd.fails(RestartStage::SourceOffsets, issue.class, "java.lang.IllegalStateException");
                    }
                    out.push(fd);
                }
            }
        }
    }
    out
}

/// Files in the log folders that are not batch files, and unreadable operator metadata.
fn other_log_files(cp: &Checkpoint) -> Vec<Finding> {
    let mut out = Vec::new();
    for p in &cp.problems {
        out.push(
            Finding::new(Code::UnexpectedLogFile, Severity::Info, format!("{} is not a log batch file", p.path))
                .evidence(&p.path, &p.reason, p.offset)
                .why("Only files named by a batch id are batch files; Spark ignores anything else in the log directories, so a renamed or copied-in file here is not read.")
                .fix(&["Remove the file if it was left by a manual repair, or rename it to the batch id it was meant to be."]),
        );
    }
    for (op, m) in &cp.operator_metadata {
        if let Err(e) = &m.content {
            if matches!(e, LogError::NotVerified { .. }) {
                continue;
            }
            out.push(
                Finding::new(Code::OperatorMetadataUnreadable, Severity::Warning, format!("Operator metadata of operator {op} cannot be read"))
                    .evidence(&m.path, describe(e), Some(e.offset()))
                    .why("Spark 4.0+ reads operator metadata to compare the restarted plan with the recorded operators and for the state data sources.")
                    .fix(&[BACKUP.to_string(), format!("Restore {} from a backup.", m.path)]),
            );
        }
    }
    out
}

/// File sink logs (`_spark_metadata/`) found in the input: unreadable or too-new batch files.
fn check_sink_logs(cp: &Checkpoint, ctx: &Context) -> Vec<Finding> {
    let mut out = Vec::new();
    let logs = super::sink_log::sink_logs(cp, ctx);
    for log in logs.iter().copied() {
        let Some((&latest, (path, _, _))) = log.listed.iter().next_back() else { continue };
        let files = log.read.get(&latest).and_then(|f| f.file.content.as_ref().ok()).map(|b| b.entry_count());
        out.push(
            Finding::new(Code::FileSinkLog, Severity::Info, format!("File sink log {} (batches up to {latest})", log.dir))
                .evidence(path, format!(
                    "{} batch file(s) listed, compaction interval {}{}",
                    log.listed.len(),
                    log.compact_interval,
                    files.map(|n| format!("; the latest lists {n} file(s)")).unwrap_or_default()
                ), None)
                .why("A file sink records the files of every batch in <output>/_spark_metadata; readers of the output use it to see only committed files, and the sink skips batches it already wrote.")
                .fix(&["Keep _spark_metadata with the output; deleting it makes readers see uncommitted or duplicate files."]),
        );
    }
    for log in logs {
        for f in log.read.values() {
            // FileStreamSinkLog.VERSION is 1 in every release: a higher version line is an edit, and readers fail
            // (HDFSMetadataLog.validateVersion: "maximum supported log version is v1, but encountered v2", real
            // Spark 3.5.9) while the restarted query goes on.
            if let Some(v) = f.file.content.as_ref().ok().map(|b| b.version).filter(|v| *v > 1) {
                out.push(
                    Finding::new(Code::SinkLogUnreadable, Severity::Warning, format!("{} (file sink log) has log version v{v}, which no Spark reads", f.file.path))
                        .evidence(&f.file.path, format!("version line v{v}; a file sink log is v1"), Some(0))
                        .why(format!("Every Spark writes a file sink's log as v1 and reads no other version: readers of the output fail with \"UnsupportedLogVersion: maximum supported log version is v1, but encountered v{v}\" (INVALID_LOG_VERSION.MAX_SUPPORTED_VERSION from Spark 4.0); the restarted query goes on until it compacts the log."))
                        .fix(&[BACKUP.to_string(), format!("Restore {} from a backup, or put its version line back to v1 if only that line was changed.", f.file.path)]),
                );
                continue;
            }
            if let Err(e) = &f.file.content {
                if matches!(e, LogError::NotVerified { .. }) {
                    continue;
                }
                out.push(
                    Finding::new(Code::SinkLogUnreadable, Severity::Warning, format!("{} (file sink log) cannot be read: {}", f.file.path, describe(e)))
                        .evidence(&f.file.path, describe(e), Some(e.offset()))
                        .why("The file sink's _spark_metadata log lists the files of each batch; readers of the output (and the sink on restart) read it.")
                        .fix(&[BACKUP.to_string(), format!("Restore {} from a backup.", f.file.path)]),
                );
            }
        }
    }
    out
}

/// Ids missing between the smallest and the largest of `ids` (ascending), at most 10 000 of them, the
/// highest gaps first kept (they matter for a restart).
fn missing_ids(ids: impl Iterator<Item = i64>) -> Vec<i64> {
    let ids: Vec<i64> = ids.collect();
    let mut out = Vec::new();
    for w in ids.windows(2).rev() {
        let mut m = w[1] - 1;
        while m > w[0] && out.len() < 10_000 {
            out.push(m);
            m -= 1;
        }
        if out.len() >= 10_000 {
            break;
        }
    }
    out.sort_unstable();
    out
}

/// Gaps and mismatches between the offset and commit logs, and the replay of an uncommitted batch.
pub fn check_continuity(cp: &Checkpoint, ctx: &Context) -> Vec<Finding> {
    if cp.kind.0 != CheckpointKind::StructuredStreaming {
        return vec![];
    }
    let mut out = super::source_offset_lines::source_offset_lines(cp);
    let (Some(first), Some(last)) = (cp.offsets.keys().next().copied(), cp.last_batch_id()) else {
        if let Some((id, c)) = cp.commits.iter().next() {
            out.push(
                Finding::new(Code::CommitWithoutOffsets, Severity::Warning, format!("Commit for batch {id} but no offsets file at all"))
                    .evidence(&c.file.path, "commits/ has files but offsets/ is empty", None)
                    .why("Without offsets Spark starts the query from the beginning (as a new query) although commits say batches ran.")
                    .fix(&[BACKUP, "Restore offsets/ from a backup, or start over with a new checkpoint."]),
            );
        }
        return out;
    };
    // Gaps are by design under async progress tracking (`async-progress-tracking` reports them).
    if super::async_progress::shape(cp, ctx).is_none() {
        out.extend(offsets_gap(cp, first, last));
        out.extend(commit_log_continuity(cp, ctx, first, last));
    }
    out.extend(super::commit_lag::last_batch_uncommitted(cp, last, super::async_progress::shape(cp, ctx).is_some()));
    out
}

/// Missing offsets files between the first and the latest (`offsets-gap`).
fn offsets_gap(cp: &Checkpoint, first: i64, last: i64) -> Vec<Finding> {
    let mut out = Vec::new();
    let mut missing: Vec<i64> = missing_ids(cp.offsets.keys().copied());
    // Spark's rule (MicroBatchExecution.validateOffsetLogAndGetPrevOffset): a restart needs
    // `offsets/<latest - 1>` whatever the files below it, so the latest file alone is a gap before it too.
    let before_latest = last != 0 && !cp.offsets.contains_key(&(last - 1));
    if before_latest && !missing.contains(&(last - 1)) {
        missing.push(last - 1);
    }
    if !missing.is_empty() {
        let mut f = Finding::new(
            Code::OffsetsGap,
            if before_latest { Severity::Error } else { Severity::Warning },
            if before_latest {
                format!("offsets/{} is missing: a restart needs the batch before the latest ({last})", last - 1)
            } else {
                format!("Gap in the offset log: {} batch file(s) missing between {first} and {last}", missing.len())
            },
        );
        let shown: Vec<String> = missing.iter().take(20).map(|m| m.to_string()).collect();
        f = f.evidence(
            format!("offsets/{last}"),
            format!(
                "latest offsets file; missing ids: {}{}",
                shown.join(", "),
                if missing.len() > 20 { ", ..." } else { "" }
            ),
            None,
        );
        for m in missing.iter().take(5) {
            f = f.evidence(format!("offsets/{m}"), "absent", None);
        }
        if before_latest {
            let committed = cp.last_committed_batch_id();
            f = f
                .why(format!(
                    "On restart Spark reads the latest offsets file ({last}) and the one before it ({}) to know where batch {last} starts; without it Spark throws IllegalStateException(\"batch {} doesn't exist\").",
                    last - 1,
                    last - 1
                ))
                .fix(&[
                    BACKUP.to_string(),
                    format!("Restore offsets/{} from a backup if you have one.", last - 1),
                    if committed.is_some_and(|c| c < last) {
                        format!("Batch {last} is not committed (last commit: {}): delete offsets/{last} (and offsets/.{last}.crc) so the latest batch becomes {}, which can restart; Spark re-plans the rest.", committed.map(|c| c.to_string()).unwrap_or_default(), last - 2)
                    } else {
                        format!("Delete offsets/{last} (and offsets/.{last}.crc) only if you accept re-running batch {last}; its commit then no longer matches.")
                    },
                    super::new_checkpoint_step(cp),
                ])
                .fails(RestartStage::PreviousOffsets, None, "java.lang.IllegalStateException");
        } else {
            f = f
                .why("A restart only reads the latest two offsets files, so older gaps do not stop it; they show files were deleted by hand or by a broken copy.")
                .fix(&[BACKUP, "No action needed for the restart; restore the files if other tools (state data source) need those batches."]);
        }
        out.push(f);
    }
    out
}

/// Gaps in the commit log, and commits without (or beyond) their offsets file.
fn commit_log_continuity(cp: &Checkpoint, ctx: &Context, first: i64, last: i64) -> Vec<Finding> {
    let mut out = Vec::new();
    if let (Some(cf), Some(cl)) = (cp.commits.keys().next().copied(), cp.last_committed_batch_id()) {
        let _ = (cf, cl);
        let cmissing: Vec<i64> = missing_ids(cp.commits.keys().copied());
        if !cmissing.is_empty() {
            out.push(
                Finding::new(
                    Code::CommitsGap,
                    Severity::Warning,
                    format!("Gap in the commit log: {} file(s) missing between {cf} and {cl}", cmissing.len()),
                )
                .evidence(format!("commits/{}", cmissing[0]), "absent", None)
                .why("A restart only reads the latest commit; gaps show files were deleted or a copy is incomplete.")
                .fix(&[BACKUP, "Restore the missing commit files from the source copy."]),
            );
        }
        let orphan: Vec<i64> =
            cp.commits.keys().filter(|c| !cp.offsets.contains_key(c) && **c >= first).copied().collect();
        let ahead: Vec<i64> = cp.commits.keys().filter(|c| **c > last).copied().collect();
        if !ahead.is_empty() {
            out.push(super::commit_lag::commit_ahead(cp, ctx, last, &ahead));
        } else if !orphan.is_empty() {
            out.push(
                Finding::new(Code::CommitWithoutOffsets, Severity::Warning, format!("commits/{} has no offsets file", orphan[0]))
                    .evidence(format!("commits/{}", orphan[0]), "no matching offsets file", None)
                    .why("Every committed batch was planned first; a commit without its offsets file means offsets were deleted.")
                    .fix(&[BACKUP, "Restore the offsets files from a backup."]),
            );
        }
    }
    out
}

#[cfg(test)]
#[path = "logs_version_tests.rs"]
mod version_tests;

#[cfg(test)]
mod tests {
    use crate::archive::{Archive, Limits, MemArchive};
    use crate::report::{Code, RestartOutcome};
    use crate::testutil::open_fixture;
    use crate::{diagnose, Context};

    #[test]
    fn the_latest_offsets_file_alone_is_a_gap_before_it() {
        // Real Spark 3.5.9 stateless checkpoint (batches 0..=3) with only offsets/3 and commits/3 left: Spark
        // needs offsets/2 (validateOffsetLogAndGetPrevOffset: "batch 2 doesn't exist").
        let mut z = open_fixture("ss-3.5.9-stateless");
        let paths: Vec<String> = z.entries().iter().filter(|e| !e.is_dir).map(|e| e.path.clone()).collect();
        let files: Vec<(String, Vec<u8>)> = paths
            .into_iter()
            .filter(|p| !(p.starts_with("offsets/") || p.starts_with("commits/")) || p.ends_with("/3"))
            .map(|p| (p.clone(), z.read(&p, 1 << 26).expect("reads")))
            .collect();
        let mut a = MemArchive::new("t", files, Limits::default()).expect("archive");
        let c = &diagnose(&mut a, &Context::default()).checkpoints[0];
        assert_eq!(
            (c.restart.outcome, c.restart.exception.as_deref()),
            (RestartOutcome::Fails, Some("java.lang.IllegalStateException"))
        );
        assert!(
            c.findings.iter().any(|f| f.code == Code::OffsetsGap && f.title.contains("offsets/2")),
            "{:?}",
            c.findings
        );
    }

    /// An empty latest offsets or commits file is `log-file-empty`, whichever log it is in, with Spark's own
    /// words for each (`OffsetSeqLog`: "Incomplete log file"; `CommitLog`: "... in the offset commit log").
    #[test]
    fn an_empty_latest_log_file_is_empty_in_either_log() {
        for (dir, words) in
            [("offsets", "Incomplete log file"), ("commits", "Incomplete log file in the offset commit log")]
        {
            let mut z = open_fixture("ss-3.5.9-stateless");
            let paths: Vec<String> = z.entries().iter().filter(|e| !e.is_dir).map(|e| e.path.clone()).collect();
            let files: Vec<(String, Vec<u8>)> = paths
                .into_iter()
                .map(|p| {
                    let b = if p == format!("{dir}/3") { Vec::new() } else { z.read(&p, 1 << 26).expect("reads") };
                    (p, b)
                })
                .collect();
            let mut a = MemArchive::new("t", files, Limits::default()).expect("archive");
            let c = &diagnose(&mut a, &Context::default()).checkpoints[0];
            let f = c.findings.iter().find(|f| f.title.starts_with(&format!("{dir}/3 "))).expect("a finding");
            assert_eq!(f.code, Code::LogFileEmpty, "{dir}: {}", f.title);
            assert!(f.title.contains(words), "{dir}: {}", f.title);
            assert_eq!(c.restart.outcome, RestartOutcome::Fails, "{dir}");
        }
    }

    /// A checkpoint with thousands of old log files beyond the budget names a few of them, not all.
    #[test]
    fn files_not_read_are_named_up_to_a_bound() {
        let few: Vec<String> = (0..3).map(|i| format!("offsets/{i}")).collect();
        assert_eq!(crate::checks::some_of(&few, 3), "offsets/0, offsets/1, offsets/2");
        let many: Vec<String> = (0..36_000).map(|i| format!("offsets/{i}")).collect();
        let s = crate::checks::some_of(&many, many.len() as u64);
        assert!(s.starts_with("offsets/0, offsets/1, "), "{s}");
        assert!(s.ends_with("offsets/19 and 35980 more"), "{s}");
    }
}
