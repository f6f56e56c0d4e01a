//! The commit log out of step with the offset log: commits beyond the latest offsets file
//! (`commit-ahead-of-offsets`), and the latest planned batch not committed (`last-batch-uncommitted`), which with
//! state checkpoint format v2 loads its state with another version's ids. Mirrors
//! `MicroBatchExecution.populateStartOffsets` (real Spark 3.5.9, 4.1.4, 4.3.0: `tools/spark-gen/log_accidents.py`).

use super::{spark, BACKUP};
use crate::model::Checkpoint;
use crate::report::{Code, Finding, RestartStage, Severity};
use crate::Context;

/// Why a format v2 restart that runs batch `last` after commit `commit` cannot load its state: the ids
/// `commits/<commit>` recorded name version `commit + 1`, not `last`.
fn ids_of_another_version(last: i64, commit: i64) -> String {
    format!(
        "With state checkpoint format v2 it loads state version {last} with the unique ids commits/{commit} recorded, which name version {}: state/<operator>/<partition>/{last}_<id>.changelog does not exist.",
        commit.saturating_add(1)
    )
}

/// `commit-ahead-of-offsets`: commit files beyond the latest offsets file `last` (`ahead`, ascending).
///
/// `MicroBatchExecution.populateStartOffsets` compares the latest offsets file with the latest commit and has no
/// branch for a commit ahead of it: the restart runs batch `last` again, as if it were not committed. With state
/// checkpoint format v2 its state version `last` is loaded with the unique ids of the latest commit, which name a
/// later version, so the file is not found; otherwise the batch runs and writes its output, and `commitLog.add`
/// finds `commits/<last>` there: `CONCURRENT_STREAM_LOG_UPDATE` (a `SparkException` from 3.5; an `AssertionError` before). Real Spark 3.5.9,
/// 4.1.4 and 4.3.0 (`tools/spark-gen/log_accidents.py`, `tests/spark_log_accidents.rs`).
pub(super) fn commit_ahead(cp: &Checkpoint, ctx: &Context, last: i64, ahead: &[i64]) -> Finding {
    let v = spark(ctx);
    let newest = ahead[ahead.len() - 1];
    let ckpt_v2 = loads_with_ids_of(cp, newest);
    let list: Vec<String> = ahead.iter().map(|c| format!("commits/{c}")).collect();
    let f = Finding::new(
        Code::CommitAheadOfOffsets,
        Severity::Error,
        format!("commits/{newest} exists but the offset log ends at {last}: the restart runs batch {last} again and fails"),
    )
    .evidence(format!("commits/{}", ahead[0]), format!("committed batch beyond the latest offsets file offsets/{last}"), None)
    .fix(&[
        BACKUP.to_string(),
        format!(
            "Delete {} (and the .crc files beside them) so that the latest commit is batch {last}'s: the restart then plans batch {} anew from the sources, as after a clean stop. Or restore the deleted offsets files from a backup.",
            super::some_of(&list, list.len() as u64),
            last.saturating_add(1)
        ),
        super::new_checkpoint_step(cp),
    ]);
    let plan = format!("Offsets files were deleted by hand: the offset log ends at {last}, the commit log at {newest}. Spark's restart (MicroBatchExecution.populateStartOffsets) takes the latest offsets file and has no case for a commit ahead of it, so it runs batch {last} again as if it were not committed.");
    if ckpt_v2 {
        let class = "CANNOT_LOAD_STATE_STORE.CANNOT_READ_STREAMING_STATE_FILE";
        f.classes(&[class]).why(format!("{plan} {}", ids_of_another_version(last, newest))).fails(
            RestartStage::StateLoad,
            Some(class),
            "org.apache.spark.SparkException",
        )
    } else {
        // `commitLog.add` refuses a commit file that exists: a SparkException with the class from 3.5 on; before,
        // `MicroBatchExecution` asserted it (real Spark 3.4.4, log_accidents.py offsets-latest-deleted:
        // "java.lang.AssertionError: assertion failed: Concurrent update to the commit log. Multiple streaming
        // jobs detected for 18").
        let class = v.at_least(3, 5).then_some("CONCURRENT_STREAM_LOG_UPDATE");
        let exception = if class.is_some() { "org.apache.spark.SparkException" } else { "java.lang.AssertionError" };
        let words = if class.is_some() {
            "Concurrent update to the log. Multiple streaming jobs detected for"
        } else {
            "assertion failed: Concurrent update to the commit log. Multiple streaming jobs detected for"
        };
        // The first commit that collides: batch `last`'s own, or (its commit gone too) the first one above it,
        // when the restart builds that batch after committing `last`.
        let clash = if cp.commits.contains_key(&last) {
            format!("then writing commits/{last} finds the file there: \"{words} {last}\"")
        } else {
            format!(
                "its commit is written, and the next batch, {}, once it runs, finds commits/{} there: \"{words} {}\"",
                ahead[0], ahead[0], ahead[0]
            )
        };
        f.classes(&class.into_iter().collect::<Vec<_>>())
            .why(format!("{plan} The batch runs and its sink writes the output again (a file sink skips a batch its log has); {clash}. Every restart does the same."))
            .fails(RestartStage::BatchCommit, class, exception)
    }
}

/// With state checkpoint format v2, a restart loads the state version of the batch it runs with the unique ids the
/// latest commit recorded (`currentStateStoreCkptId`, from `commits/<commit>`), which name version `commit + 1`.
/// True when that commit has ids and the query keeps state.
fn loads_with_ids_of(cp: &Checkpoint, commit: i64) -> bool {
    let ids = cp
        .commits
        .get(&commit)
        .and_then(|c| c.file.content.as_ref().ok())
        .is_some_and(|c| !c.state_unique_ids.is_empty());
    ids && !cp.state.operators.is_empty()
}

/// The latest batch planned but not committed (`last-batch-uncommitted`): replayed on restart.
pub(super) fn last_batch_uncommitted(cp: &Checkpoint, last: i64, async_logs: bool) -> Vec<Finding> {
    let mut out = Vec::new();
    let lc = cp.last_committed_batch_id();
    if lc.is_none_or(|c| c < last) {
        let path = format!("offsets/{last}");
        let mut f = Finding::new(
            Code::LastBatchUncommitted,
            Severity::Info,
            format!("Batch {last} was planned but not committed: a restart runs it again"),
        )
        .evidence(&path, format!("offsets/{last} present, commits/{last} absent (last commit: {})", lc.map(|c| c.to_string()).unwrap_or_else(|| "none".into())), None)
        .why("The query stopped after planning the batch and before committing it. On restart Spark re-runs exactly that batch with the recorded offsets (normal after a crash or a stop during a batch); sinks that are not idempotent may see its output twice.")
        .fix(&["Nothing more for the replay itself: the restart runs the batch again (other findings may still stop it)."]);
        if let Some(c) = lc.filter(|c| *c < last - 1 && !async_logs) {
            f.severity = Severity::Warning;
            f.title = format!("The commit log trails the offset log by {} batches", last - c);
            // Checkpoint format v2: state version `last` is loaded with the ids of version `c + 1` (real Spark
            // 4.1.4 and 4.3.0, tools/spark-gen/log_accidents.py `commits-two-deleted-ckptv2`).
            if loads_with_ids_of(cp, c) {
                let class = "CANNOT_LOAD_STATE_STORE.CANNOT_READ_STREAMING_STATE_FILE";
                f = f
                    .classes(&[class])
                    .why(format!("Commit files were deleted: the commit log ends at {c}, the offset log at {last}. Spark runs batch {last} again. {}", ids_of_another_version(last, c)))
                    .fix(&[
                        BACKUP.to_string(),
                        format!("Restore the deleted commit files (commits/{} to commits/{}) from a backup.", c.saturating_add(1), last - 1),
                        super::new_checkpoint_step(cp),
                    ])
                    .fails(RestartStage::StateLoad, Some(class), "org.apache.spark.SparkException");
                f.severity = Severity::Error;
                f.title = format!("{}: with checkpoint format v2 its state cannot be loaded", f.title);
            }
        }
        if f.restart_failure.is_none() {
            f = replayed_input_files(cp, last, f);
        }
        out.push(f);
    }
    out
}

/// The input files a replay of batch `last` reads again, per file source: the entries its log lists after
/// batch `last - 1`'s `logOffset` up to batch `last`'s. `FileStreamSource.getBatch` resolves them with
/// `checkFilesExist = false`, so one deleted or moved since the batch was planned is read as empty, with no
/// error: real Spark 3.5.9, 4.1.4 and 4.3.0 read 0 rows for a replayed batch whose file was deleted
/// (`tools/spark-gen/log_accidents.py uncommitted-input-deleted-stateless`). Named on the finding as evidence,
/// a why and a step first: the inspector cannot list the input folder.
fn replayed_input_files(cp: &Checkpoint, last: i64, mut f: Finding) -> Finding {
    debug_assert!(f.restart_failure.is_none());
    let mut total = 0usize;
    for (&n, log) in &cp.source_logs {
        let r = super::source_path::restored(log);
        let Some((from, files)) = super::source_path::replanned(cp, n, &r.entries) else { continue };
        if files.is_empty() {
            continue;
        }
        total += files.len();
        let names: Vec<&str> = files.iter().take(5).map(|e| e.path.as_str()).collect();
        let more = if files.len() > 5 { format!(" and {} more", files.len() - 5) } else { String::new() };
        let partial = if r.not_kept > 0 { " (as far as this inspector kept the log's entries)" } else { "" };
        // The log batches of the replay, and the newest log file holding them (`<to>` or a `.compact`).
        let to = files.iter().filter_map(|e| e.batch_id).max().unwrap_or(from.saturating_add(1));
        let range = if to == from.saturating_add(1) {
            format!("its batch {to}")
        } else {
            format!("its batches {}..={to}", from.saturating_add(1))
        };
        let path = log
            .read
            .range(from.saturating_add(1)..=to)
            .next_back()
            .map(|(_, lf)| lf.file.path.clone())
            .unwrap_or_else(|| format!("sources/{n}/"));
        f = f.evidence(
            path,
            format!(
                "batch {last} reads again the {} file(s) the log lists for {range}{partial}: {}{more}",
                files.len(),
                names.join(", ")
            ),
            None,
        );
    }
    if total == 0 {
        return f;
    }
    f.why = format!(
        "{} A file source runs it with the files its log lists for it, without checking that they still exist (FileStreamSource.getBatch resolves them with checkFilesExist = false): a file deleted or moved since the batch was planned (a retention job, cleanSource of another query) is read as empty, with no error, and its rows never reach the sink.",
        f.why
    );
    f.fix(&[
        format!("Before restarting, check that the {total} input file(s) batch {last} reads again (the evidence) still exist at the paths recorded: put back any that was deleted or moved, or its rows are lost without an error."),
        "Nothing more for the replay itself: the restart runs the batch again (other findings may still stop it).".to_string(),
    ])
}
