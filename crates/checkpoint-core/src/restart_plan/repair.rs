//! Repairs in place: for every error or warning finding whose fix keeps this checkpoint (restore a file, put a
//! conf or the query back, remove an orphan temp file or sidecar), one way out with the finding's own steps
//! (the checks word them; this module only ranks them). Source findings whose ways out the source planners
//! write (Kafka) are left to them; a stop that a plain restart clears is a retry. The NEW-checkpoint last resort a finding's fix ends
//! with is planned once, by `new_checkpoint.rs`, not repeated here.

use super::{PlanInput, WayOut, WayOutKind};
use crate::checks::catalogue::Code;
use crate::checks::sink_log::{DROP_AHEAD_STEP, PLACEHOLDER_STEP};
use crate::checks::BACKUP;
use crate::report::Severity;

/// The prefix of the NEW-checkpoint step of a finding's fix list (`checks::new_checkpoint_step`).
const LAST_RESORT: &str = "Last resort: start the query on a NEW checkpoint location";

/// Codes whose fix is not a repair of this checkpoint (the source planners and the prediction speak for
/// them), or that are only notes.
fn not_a_repair(code: Code) -> bool {
    matches!(
        code,
        Code::LastActivityAge
            | Code::ErrorNotExplainedByFiles
            | Code::NoCheckpointFound
            | Code::KafkaOffsetsBelowEarliest
            | Code::KafkaOffsetsAheadOfLatest
            | Code::KafkaPartitionsRemoved
            | Code::KafkaTopicMissing
            | Code::KafkaPartitionsAdded
            // The Delta planner (`delta.rs`) plans these: retention, failOnDataLoss, skipChangeCommits, a start.
            | Code::DeltaRetentionCountdown
            | Code::DeltaVersionExpired
            | Code::DeltaTableReplaced
            | Code::DeltaSchemaChange
            | Code::DeltaNonAppendCommit
            | Code::DeltaDataFilesVacuumable
    )
}

/// Warnings of a restart that goes on but skips data without an error: their repair is what keeps the data.
fn restart_skips_data(code: Code) -> bool {
    matches!(code, Code::SourceFilesSkipped | Code::SinkLogAhead)
}

/// One repair-in-place (or retry) way out per error or warning finding with in-place steps.
pub(super) fn ways_out(input: &PlanInput<'_>) -> Vec<WayOut> {
    let mut out = Vec::new();
    for f in input.findings.iter().filter(|f| f.severity != Severity::Info && !not_a_repair(f.code)) {
        // Only the steps that keep this checkpoint: a NEW checkpoint is the last resort's way out, not a repair
        // (a sink log's fix names it in steps of their own).
        let sink = matches!(f.code, Code::SinkLogBatchMissing | Code::SinkLogAhead);
        let (lossy, steps): (Vec<String>, Vec<String>) = f
            .fix
            .iter()
            .filter(|s| !(s.starts_with(LAST_RESORT) || sink && s.contains("NEW checkpoint") || s.as_str() == BACKUP))
            .cloned()
            .partition(|s| s.starts_with(PLACEHOLDER_STEP) || s.starts_with(DROP_AHEAD_STEP));
        out.extend(lossy_repair(f.code, &f.title, lossy));
        if steps.is_empty() {
            continue;
        }
        let retry = matches!(f.code, Code::LastBatchUncommitted | Code::AutoLoaderSchemaEvolution);
        let kind = if retry { WayOutKind::Retry } else { WayOutKind::RepairInPlace };
        let mut w =
            WayOut::new(kind, format!("{}: {}", if retry { "Restart as is" } else { "Repair in place" }, f.title));
        w.answers.push(f.code);
        if !retry {
            w.steps.push(BACKUP.to_string());
        }
        w.steps.extend(steps);
        w.costs.push(match (f.severity, retry) {
            (_, true) => "None beyond the replayed batch: the checkpoint, its state and the sources' positions are kept.".to_string(),
            (Severity::Error, _) => format!(
                "The checkpoint and its state are kept; the query goes on from {} once this is repaired (nothing replayed beyond the last planned batch).",
                input.restart.first_batch_id.map(|b| format!("batch {b}")).unwrap_or_else(|| "where it stopped".into())
            ),
            _ if f.code == Code::SinkLogBatchMissing => "The checkpoint and its state are kept. Without this step the restart goes on, but readers of the output fail and the sink's next compaction batch fails (the finding says which).".to_string(),
            _ if f.code == Code::SourceLogEntriesLost => "The checkpoint and its state are kept. Without this step the restart goes on too, but reads data again (at least the batches the finding names).".to_string(),
            _ if restart_skips_data(f.code) => "The checkpoint and its state are kept. Without this step the restart goes on too, but skips data without an error (the finding says which).".to_string(),
            _ => "The checkpoint and its state are kept; the restart goes on with or without this step.".to_string(),
        });
        out.push(w);
    }
    out
}

/// A sink log repair that keeps the checkpoint but not every row for every reader, as a way out of its own,
/// marked as losing data: placeholders hide their batches' rows from readers through the log; deleting the
/// batches ahead of the checkpoint leaves the earlier run's files beside the rewritten ones for a reader globbing
/// the part files.
fn lossy_repair(code: Code, title: &str, steps: Vec<String>) -> Option<WayOut> {
    let step = steps.first()?;
    let mut w = WayOut::new(WayOutKind::RepairInPlace, format!("Repair in place without a backup: {title}"));
    w.answers.push(code);
    w.data_loss = true;
    w.steps.push(crate::checks::sink_log::SINK_BACKUP.to_string());
    w.costs.push(if step.starts_with(PLACEHOLDER_STEP) {
        "The checkpoint and its state are kept, and the query goes on, but readers through the log no longer see the rows of the batches the placeholders stand for (their data files stay in the folder, unlisted).".to_string()
    } else {
        "The checkpoint and its state are kept, and the sink writes those batches again; the earlier run's data files of them stay in the folder unlisted, so a reader globbing the part files sees those rows twice.".to_string()
    });
    w.steps.extend(steps);
    Some(w)
}
