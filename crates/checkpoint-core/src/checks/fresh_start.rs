//! Starting over on a checkpoint whose logs are gone but whose state is not: no offsets file while `state/`
//! (or `commits/`) still holds files.
//!
//! Spark 4.1+ (`MicroBatchExecution.populateStartOffsets`, `case None`): with
//! `spark.sql.streaming.verifyCheckpointDirectoryEmptyOnStart` (default true) a query that finds no offsets
//! file checks that `offsets/`, `state/` and `commits/` are absent or empty (`verifyNewCheckpointDirectory`)
//! and otherwise throws `STATE_STORE_CHECKPOINT_LOCATION_NOT_EMPTY`. Spark 3.5 and 4.0 have no such check:
//! they start a new query at batch 0, every store loads version 0 (always empty) and batch N commits state
//! version N+1 over the old files of that version.

use super::{conf_bool, spark, BACKUP};
use crate::model::Checkpoint;
use crate::report::{CheckpointKind, Code, Finding, RestartStage, Severity};
use crate::Context;

/// The directories `verifyNewCheckpointDirectory` requires empty, in its order.
const MUST_BE_EMPTY: [&str; 3] = ["offsets", "state", "commits"];

const VERIFY_CONF: &str = "spark.sql.streaming.verifyCheckpointDirectoryEmptyOnStart";

/// The first entry under `dir/` (a file, else a folder), and the number of files under it.
fn first_entry(cp: &Checkpoint, dir: &str) -> Option<(String, usize)> {
    let prefix = format!("{dir}/");
    let files: Vec<&str> = cp.files.iter().map(|f| f.path.as_str()).filter(|p| p.starts_with(&prefix)).collect();
    // A data file rather than a hidden sidecar when there is one.
    let shown = files.iter().find(|p| !p.rsplit('/').next().unwrap_or("").starts_with('.')).or(files.first());
    if let Some(first) = shown {
        return Some((first.to_string(), files.len()));
    }
    cp.dirs.iter().find(|d| d.starts_with(&prefix)).map(|d| (d.clone(), 0))
}

/// No offsets file while `state/` or `commits/` holds entries.
pub fn check_logs_gone(cp: &Checkpoint, ctx: &Context) -> Vec<Finding> {
    if cp.kind.0 != CheckpointKind::StructuredStreaming || !cp.offsets.is_empty() {
        return vec![];
    }
    let non_empty: Vec<(&str, String, usize)> =
        MUST_BE_EMPTY.iter().filter_map(|d| first_entry(cp, d).map(|(p, n)| (*d, p, n))).collect();
    // Only offsets/ leftovers (no batch file, e.g. a temp file) are another finding's business.
    let Some((dir, _, _)) = non_empty.iter().find(|(d, _, _)| *d != "offsets").cloned() else {
        return vec![];
    };
    let v = spark(ctx);
    let checks = v.at_least(4, 1) && conf_bool(&ctx.session_conf, VERIFY_CONF, true);
    let title = if checks {
        format!("No offsets file but {dir}/ is not empty: Spark {v} refuses to start the query")
    } else {
        format!("No offsets file but {dir}/ is not empty: Spark {v} starts over and overwrites the old state")
    };
    let why = if checks {
        "Without an offsets file Spark starts a new query at batch 0. Since 4.1 it first checks that offsets/, state/ and commits/ are empty (spark.sql.streaming.verifyCheckpointDirectoryEmptyOnStart, default true) and fails with STATE_STORE_CHECKPOINT_LOCATION_NOT_EMPTY naming the first non-empty one: state left without the logs it was written with belongs to another run."
    } else if v.at_least(4, 1) {
        "Without an offsets file Spark starts a new query at batch 0. The 4.1+ check that offsets/, state/ and commits/ are empty is turned off in the session (spark.sql.streaming.verifyCheckpointDirectoryEmptyOnStart=false), so, as in 3.5 and 4.0, every state store loads version 0 (always empty), the old state is not used, and each new batch writes its state version over the old file of that version; old files of versions not rewritten yet stay and can be mixed into a later restart."
    } else {
        "Without an offsets file Spark starts a new query at batch 0. Spark 3.5 and 4.0 do not check the other folders (4.1 added that check): every state store loads version 0 (always empty), the old state is not used, and each new batch writes its state version over the old file of that version; old files of versions not rewritten yet stay and can be mixed into a later restart."
    };
    let mut f = Finding::new(Code::LogsGoneStateKept, if checks { Severity::Error } else { Severity::Warning }, title)
        .evidence("offsets", "no offsets/<batchId> file", None);
    if cp.commits.is_empty() {
        f = f.evidence("commits", "no commits/<batchId> file", None);
    }
    for (d, p, n) in non_empty.iter().filter(|(d, _, _)| *d != "offsets") {
        f = f.evidence(p.clone(), format!("{d}/ holds {n} file(s)"), None);
    }
    f = f
        .why(why)
        .fix(&[
            BACKUP.to_string(),
            "If the offset and commit logs were deleted by mistake, restore offsets/ (and commits/) from the same copy as state/: the state only fits the logs it was written with.".to_string(),
            "To start over, use a NEW checkpoint location (option(\"checkpointLocation\", \"<new path>\")); do not delete more files in this one to make Spark accept it: state/ of an earlier run left beside fresh logs is silently wrong state.".to_string(),
        ]);
    if checks {
        f = f.classes(&["STATE_STORE_CHECKPOINT_LOCATION_NOT_EMPTY"]).fails(
            RestartStage::LatestOffsets,
            Some("STATE_STORE_CHECKPOINT_LOCATION_NOT_EMPTY"),
            "org.apache.spark.SparkUnsupportedOperationException",
        );
    }
    vec![f]
}
