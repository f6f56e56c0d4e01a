//! The shape async progress tracking leaves in the offset and commit logs.
//!
//! With `asyncProgressTrackingEnabled` (Spark 3.4+, `AsyncProgressTrackingMicroBatchExecution`), the offsets
//! of a batch are written to `offsets/` only when `asyncProgressTrackingCheckpointIntervalMs` (default 1000)
//! has passed since the last write (`AsyncOffsetSeqLog.addAsync`); the other batches keep their offsets in
//! memory. A commit file is written only for a batch whose offsets were written, or for the first batch of a
//! run (`markMicroBatchEnd`). Stateful queries are refused ("Stateful streaming queries does not support async
//! progress tracking"), so such a checkpoint has no state files. On disk: an offset log with holes, and a
//! commit log whose ids are offsets ids, with commits written after the holes.

use super::Checkpoint;

/// What the logs show of async progress tracking ([`Checkpoint::async_progress_tracking`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AsyncProgressLog {
    /// Batch ids (between the first and the latest offsets file) whose offsets were written.
    pub written: usize,
    /// Batch ids in that range whose offsets were never written (kept in memory only).
    pub unwritten: u64,
    /// Runs of consecutive unwritten batch ids.
    pub holes: usize,
    /// The largest committed batch id that follows an unwritten one: the run went on past the holes.
    pub commit_after_hole: i64,
    /// The smallest `batchTimestampMs` difference between two written batches with unwritten ones between
    /// them, in ms: at least the checkpoint interval of the run (`None` when no such pair has timestamps).
    pub min_spacing_ms: Option<i64>,
}

impl Checkpoint {
    /// The async progress tracking shape of the logs, when they have it: at least one hole in the offset
    /// log, every commit (from the first offsets file on) at a batch id that has offsets, a commit after a
    /// hole, no state operator folder and no file sink log beside it (Spark refuses both). A hand-deleted offsets file leaves its commit behind (or, at the end of the
    /// log, no commit after it), so it does not match.
    pub fn async_progress_tracking(&self) -> Option<AsyncProgressLog> {
        let first = *self.offsets.keys().next()?;
        let ids: Vec<i64> = self.offsets.keys().copied().collect();
        let (mut unwritten, mut holes, mut first_hole, mut min_spacing) = (0u64, 0usize, None, None::<i64>);
        for w in ids.windows(2) {
            if w[1] > w[0] + 1 {
                unwritten += (w[1] - w[0] - 1) as u64;
                holes += 1;
                first_hole.get_or_insert(w[0] + 1);
                let ts =
                    |id: i64| self.offsets.get(&id)?.file.content.as_ref().ok()?.metadata.as_ref()?.batch_timestamp_ms;
                if let (Some(a), Some(b)) = (ts(w[0]), ts(w[1])) {
                    min_spacing = Some(min_spacing.map_or(b - a, |m| m.min(b - a)));
                }
            }
        }
        let first_hole = first_hole?;
        if self.commits.keys().any(|c| *c >= first && !self.offsets.contains_key(c)) {
            return None;
        }
        let commit_after_hole = *self.commits.keys().next_back().filter(|c| **c > first_hole)?;
        // Spark refuses stateful queries and file sinks (only Kafka, console, memory and noop sinks): any state
        // operator folder, or a file sink log found beside the checkpoint, rules it out.
        if !self.state.operators.is_empty() || !self.sink_logs.is_empty() {
            return None;
        }
        Some(AsyncProgressLog { written: ids.len(), unwritten, holes, commit_after_hole, min_spacing_ms: min_spacing })
    }
}
