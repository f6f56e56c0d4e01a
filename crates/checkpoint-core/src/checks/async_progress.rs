//! `async-progress-tracking`: an offset log written with async progress tracking, and the restart that
//! fails when the option is turned off.
//!
//! Spark's source: `AsyncProgressTrackingMicroBatchExecution` (writes offsets and commits once per
//! `asyncProgressTrackingCheckpointIntervalMs`; on restart it takes the previous *written* batch,
//! `AsyncOffsetSeqLog.getPrevBatchFromStorage`) against `MicroBatchExecution.validateOffsetLogAndGetPrevOffset`
//! (the default execution needs `offsets/<latest - 1>` and throws `IllegalStateException("batch N doesn't
//! exist")`). The documented recovery (Structured Streaming guide, "Async Progress Tracking"): turn it back on
//! with an interval of 0, run at least two micro-batches, then turn it off.

use super::{conf_bool, BACKUP};
use crate::model::Checkpoint;
use crate::report::{CheckpointKind, Code, Finding, RestartStage, Severity};
use crate::Context;

/// The writer option that turns async progress tracking on.
pub const ENABLED: &str = "asyncProgressTrackingEnabled";
/// The writer option that sets how often offsets and commits are written (ms, default 1000).
pub const INTERVAL: &str = "asyncProgressTrackingCheckpointIntervalMs";

/// The async progress tracking shape of the logs ([`Checkpoint::async_progress_tracking`]), unless a file sink
/// log was given beside the checkpoint (`Context::sink_logs`): a file sink cannot run with it.
pub fn shape(cp: &Checkpoint, ctx: &Context) -> Option<crate::model::AsyncProgressLog> {
    cp.async_progress_tracking().filter(|_| ctx.sink_logs.is_empty())
}

/// Reports a checkpoint written with async progress tracking; an error when the batch before the latest
/// was never written and the restart does not say it keeps the option on (`--conf
/// asyncProgressTrackingEnabled=true`).
pub fn check_async_progress(cp: &Checkpoint, ctx: &Context) -> Vec<Finding> {
    if cp.kind.0 != CheckpointKind::StructuredStreaming {
        return vec![];
    }
    let (Some(a), Some(last)) = (shape(cp, ctx), cp.last_batch_id()) else { return vec![] };
    let prev_missing = last > 0 && !cp.offsets.contains_key(&(last - 1));
    let kept_on = conf_bool(&ctx.session_conf, ENABLED, false);
    let prev_written = cp.offsets.range(..last).next_back().map(|(id, _)| *id);
    let fails = prev_missing && !kept_on;
    let title = if fails {
        format!(
            "offsets/{} was never written (async progress tracking): a restart without {ENABLED} fails with \"batch {} doesn't exist\"",
            last - 1,
            last - 1
        )
    } else {
        format!(
            "The offset log was written with async progress tracking ({} of {} batch ids written)",
            a.written,
            a.written as u64 + a.unwritten
        )
    };
    let mut f = Finding::new(Code::AsyncProgressTracking, if fails { Severity::Error } else { Severity::Info }, title)
        .evidence(
            format!("offsets/{last}"),
            match prev_written {
                Some(p) if prev_missing && p + 1 == last - 1 => format!("latest offsets file; the previous written batch is {p}, batch {} has no offsets file", last - 1),
                Some(p) if prev_missing => format!("latest offsets file; the previous written batch is {p}, batches {}..{} have no offsets file", p + 1, last - 1),
                _ => "latest offsets file".to_string(),
            },
            None,
        )
        .evidence(
            "offsets/",
            format!(
                "{} batch ids written, {} not written, in {} gap(s); commits only at written ids (latest commits/{} after a gap){}",
                a.written,
                a.unwritten,
                a.holes,
                a.commit_after_hole,
                a.min_spacing_ms
                    .map(|ms| format!("; written batches at least {ms} ms apart (the checkpoint interval {INTERVAL}, default 1000)"))
                    .unwrap_or_default()
            ),
            None,
        )
        .why(format!(
            "With {ENABLED}=true Spark writes a batch's offsets and its commit only once per {INTERVAL} (AsyncProgressTrackingMicroBatchExecution); the batches between keep their offsets in memory, so the logs have gaps by design and no file is missing. A restart with the option on starts from the previous written batch{}. The default micro-batch execution (the option off) needs the offsets of the batch right before the latest one and throws IllegalStateException(\"batch {} doesn't exist\"){}.",
            prev_written.map(|p| format!(" ({p})")).unwrap_or_default(),
            last - 1,
            if prev_missing { "" } else { " — here that batch was written, so either way the restart works" },
        ));
    if prev_missing {
        f = f.fix(&[
            BACKUP.to_string(),
            format!("To keep async progress tracking: restart with .option(\"{ENABLED}\", \"true\") as before; it resumes from the written batches (sinks: Kafka, console, memory, noop; not for stateful queries)."),
            format!("To turn it off: restart once with .option(\"{ENABLED}\", \"true\").option(\"{INTERVAL}\", \"0\") so that every batch writes its offsets and commit, let it process at least two micro-batches, stop the query, then restart it without the two options."),
            "Do not delete or copy offsets files to close the gaps: the ids without a file are batches whose offsets were never written.".to_string(),
        ]);
    } else {
        f = f.fix(&["Nothing to do for this restart. Before turning async progress tracking off later, run at least two micro-batches with asyncProgressTrackingCheckpointIntervalMs=0 so the latest two batches are written."]);
    }
    if fails {
        f = f.fails(RestartStage::PreviousOffsets, None, "java.lang.IllegalStateException");
    }
    vec![f]
}

#[cfg(test)]
mod tests {
    use crate::archive::{Archive, Limits, MemArchive};
    use crate::layout::find_roots;
    use crate::model::Checkpoint;

    type Files = Vec<(String, Vec<u8>)>;

    /// The files of a checkpoint real Spark 4.1.4 wrote with async progress tracking (tools/spark-gen).
    use crate::testutil::generated_files as generated;

    fn read(files: Files) -> Checkpoint {
        let mut a = MemArchive::new("t", files, Limits::default()).expect("archive");
        let roots = find_roots(a.entries());
        crate::read::read_checkpoint(&mut a, &roots[0], false)
    }

    const GAP: &str = "async-progress-4.1.4-gap-before-latest";

    #[test]
    fn real_async_logs_have_the_shape() {
        let a = read(generated(GAP)).async_progress_tracking().expect("async shape");
        // Spark wrote offsets 0, 1, 3, 4, 5, 6, 8, 9, 10, 12, 13, 14, 15, 17, 19, 21 (the record's facts).
        assert_eq!((a.written, a.unwritten, a.holes, a.commit_after_hole), (16, 6, 6, 21));
        assert!(a.min_spacing_ms.is_some_and(|ms| ms >= 1000), "{:?}", a.min_spacing_ms);
        assert!(read(generated("async-progress-4.1.4-written-tail")).async_progress_tracking().is_some());
    }

    #[test]
    fn a_deleted_offsets_file_is_not_async() {
        // Deleting offsets/12 by hand leaves commits/12 behind.
        let files: Files =
            generated(GAP).into_iter().filter(|(p, _)| p != "offsets/12" && p != "offsets/.12.crc").collect();
        assert!(read(files).async_progress_tracking().is_none());
        // Holes with no commit after them (shared case 7's shape): offsets 17, 19, 21, commits up to 17.
        let batch = |p: &str| p.rsplit(['/', '.']).find_map(|x| x.parse::<i64>().ok());
        let files: Files = generated(GAP)
            .into_iter()
            .filter(|(p, _)| match (p.starts_with("offsets/"), p.starts_with("commits/"), batch(p)) {
                (true, _, Some(b)) => b >= 17,
                (_, true, Some(b)) => b == 17,
                _ => true,
            })
            .collect();
        assert!(read(files).async_progress_tracking().is_none());
    }

    #[test]
    fn a_stateful_checkpoint_is_not_async() {
        // Spark refuses async progress tracking for stateful queries.
        let mut files = generated(GAP);
        files.push(("state/0/0/1.delta".to_string(), vec![0; 8]));
        assert!(read(files).async_progress_tracking().is_none());
    }
}
