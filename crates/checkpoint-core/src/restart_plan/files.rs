//! The file source's and Auto Loader's start on a new checkpoint.
//!
//! File source (apache/spark sql/core/src/main/scala/org/apache/spark/sql/execution/streaming/
//! FileStreamSource.scala, FileStreamOptions.scala): what was read is recorded only in the checkpoint's
//! `sources/<n>/` log, so a new checkpoint reads every file in the path again. `maxFileAge` does not help
//! there: "For the first batch all files will be considered valid", and with `latestFirst=true` plus
//! `maxFilesPerTrigger`/`maxBytesPerTrigger` it is ignored altogether; `modifiedAfter`/`modifiedBefore` are
//! rejected in file stream sources (`FileStreamOptions.checkDisallowedOptions`). So the way is to move the
//! processed files out of the path, or to take the newest first (`latestFirst` with `maxFilesPerTrigger`) and
//! deduplicate. Auto Loader (`cloudFiles`, Databricks docs; closed source): `cloudFiles.includeExistingFiles`
//! is read only when the stream starts on a new checkpoint, and `modifiedAfter` skips files modified before
//! a timestamp.

use super::{PlanInput, SourceAt, SourceOption, SourcePlanner, SourceStart, WayOut};
use crate::source::SourceKind;
use crate::time::utc;

/// The file source planner.
pub(super) const FILE: SourcePlanner = SourcePlanner { kind: SourceKind::File, ways_out: no_ways, start: file_start };
/// The Auto Loader planner.
pub(super) const AUTO_LOADER: SourcePlanner =
    SourcePlanner { kind: SourceKind::AutoLoader, ways_out: no_ways, start: autoloader_start };

fn no_ways(_: &PlanInput<'_>, _: &SourceAt<'_>) -> Vec<WayOut> {
    Vec::new()
}

/// The newest file modification time the file source log records up to `batch`, and the number of files.
fn files_up_to(input: &PlanInput<'_>, index: usize, batch: i64) -> (usize, Option<i64>) {
    let Some(log) = input.cp.source_logs.get(&(index as u32)) else {
        return (0, None);
    };
    let mut n = 0;
    let mut newest = None;
    for f in log.read.range(..=batch).map(|(_, f)| f) {
        if let Ok(b) = &f.file.content {
            if f.compact {
                n = 0;
            }
            n += b.entry_count() as usize;
            newest = newest.max(b.max_timestamp_ms);
        }
    }
    (n, newest)
}

fn file_start(input: &PlanInput<'_>, at: &SourceAt<'_>) -> Option<SourceStart> {
    let idx = at.index;
    let batch_ts = input
        .cp
        .offsets
        .get(&at.batch)
        .and_then(|f| f.file.content.as_ref().ok())
        .and_then(|o| o.metadata.as_ref())
        .and_then(|m| m.batch_timestamp_ms);
    let (files, newest) = files_up_to(input, idx, at.batch);
    let mut s = SourceStart::default();
    s.costs.push(format!(
        "source #{idx} (file): a new checkpoint has no record of the {files} file(s) sources/{idx}/ lists up to \
         batch {}: every file still in the input path is read again (duplicates in a non-idempotent sink) unless \
         they are moved away or filtered",
        at.batch
    ));
    s.steps.push(format!(
        "source #{idx} (file): safest: move the files already processed (sources/{idx}/ lists them) out of the \
         input path, or point the new query at a path holding only new files, before starting the new checkpoint"
    ));
    s.options.push(SourceOption::new(idx, "latestFirst", "true", false));
    s.options.push(SourceOption::new(idx, "maxFilesPerTrigger", "1000", false));
    s.steps.push(format!(
        "source #{idx} (file): or keep the files and take the newest first: latestFirst=true with \
         maxFilesPerTrigger (1000 here: size it to your batches) reads recent data first, but the backlog of \
         already-processed files is still read again afterwards: deduplicate on a key. maxFileAge does not limit \
         the first batch of a new checkpoint (Spark considers every file valid in it, and ignores maxFileAge with \
         latestFirst and maxFilesPerTrigger); modifiedAfter is rejected by the file stream source"
    ));
    if let Some(newest) = newest.or(batch_ts) {
        s.steps.push(format!(
            "source #{idx} (file): the newest file recorded up to batch {} was modified at {}: files modified \
             after it are new to the query",
            at.batch,
            utc(newest)
        ));
    }
    Some(s)
}

fn autoloader_start(input: &PlanInput<'_>, at: &SourceAt<'_>) -> Option<SourceStart> {
    let idx = at.index;
    let batch_ts = input
        .cp
        .offsets
        .get(&at.batch)
        .and_then(|f| f.file.content.as_ref().ok())
        .and_then(|o| o.metadata.as_ref())
        .and_then(|m| m.batch_timestamp_ms);
    let mut s = SourceStart::default();
    s.options.push(SourceOption::new(idx, "cloudFiles.includeExistingFiles", "false", true));
    s.costs.push(format!(
        "source #{idx} (Auto Loader): with includeExistingFiles=false the new checkpoint skips every file already \
         in the path when it starts, including files that arrived after batch {} and were never read: a gap. \
         Read those once with a batch job filtered by modification time, and deduplicate on a key (or write with \
         MERGE) since a file read by both is written twice",
        at.batch
    ));
    if let Some(ts) = batch_ts {
        s.steps.push(format!(
            "source #{idx} (Auto Loader): or, instead of includeExistingFiles=false, keep existing files and set \
             .option(\"modifiedAfter\", \"{}\") (the last committed batch started then): files modified after it \
             are read again or for the first time; deduplicate, since files of batch {} may be read twice",
            iso(ts),
            at.batch
        ));
    }
    s.steps.push(format!(
        "source #{idx} (Auto Loader): cloudFiles.includeExistingFiles is read only when the stream starts on a new \
         checkpoint; the old checkpoint's file-tracking store (sources/{idx}/rocksdb/) is not carried over"
    ));
    Some(s)
}

/// `yyyy-mm-dd HH:mm:ss` UTC, the timestamp form `modifiedAfter` takes (interpreted in the session time zone:
/// set spark.sql.session.timeZone=UTC or convert).
fn iso(ms: i64) -> String {
    utc(ms).replace(' ', "T")
}
