//! The NEW-checkpoint way out: a new `checkpointLocation` whose sources start where this checkpoint stopped,
//! assembled from every source planner's [`SourceStart`] (see the module doc of [`super`]).

use super::{planner_for, snippet, start_batch, PlanInput, SourceAt, SourceOption, WayOut, WayOutKind};
use crate::source::SourceKind;

/// The one NEW-checkpoint way out (bounded start when a batch was committed), or none for a checkpoint
/// without sources.
pub(super) fn ways_out(input: &PlanInput<'_>) -> Vec<WayOut> {
    let cp = input.cp;
    let Some((batch, offsets)) = start_batch(cp) else {
        let mut w = WayOut::new(
            WayOutKind::NewCheckpoint,
            "Start the query on a NEW checkpoint location with the sources' own starting options",
        );
        w.steps.push(format!(
            "No batch of this checkpoint was committed, so nothing was processed: a new checkpoint location \
             ({}) loses nothing but the query id.",
            snippet::NEW_CHECKPOINT
        ));
        w.costs.push("The sources start from their own startingOffsets / defaults.".into());
        w.options.push(new_location());
        add_sink_steps(input, &mut w);
        return vec![w];
    };
    let kinds: Vec<SourceKind> = offsets.iter().map(|o| o.kind).collect();
    let mut w = WayOut::new(
        WayOutKind::NewCheckpointBoundedStart,
        format!("Start on a NEW checkpoint location with each source starting after batch {batch}"),
    );
    w.steps.push(format!(
        "Keep this checkpoint as it is (for reference) and set checkpointLocation to a new, empty path; batch {batch} \
         (offsets/{batch}) is the last committed batch, so the new query starts with what came after it."
    ));
    for (index, offset) in offsets.iter().enumerate() {
        let at = SourceAt { index, batch, offset };
        let start = planner_for(offset.kind).and_then(|p| (p.start)(input, &at));
        match start {
            Some(s) => {
                w.options.extend(s.options);
                w.costs.extend(s.costs);
                w.dropped.extend(s.dropped);
                w.steps.extend(s.steps);
                w.data_loss |= s.data_loss;
                w.recompute_after_ms = match (w.recompute_after_ms, s.recompute_after_ms) {
                    (Some(a), Some(b)) => Some(a.min(b)),
                    (a, b) => a.or(b),
                };
            }
            None => w.steps.push(format!(
                "source #{index} ({}): no start can be computed from its offset ({}); it starts from its own options",
                offset.kind.as_str(),
                offset.raw.as_deref().map(|r| clip(r.trim())).unwrap_or_else(|| "-".into())
            )),
        }
    }
    if !cp.state.operators.is_empty() {
        w.costs.push(format!(
            "State starts empty: {} stateful operator(s) (aggregations, deduplication, joins) forget what batches \
             0..={batch} built up.",
            cp.state.operators.len()
        ));
    }
    w.costs.push(
        "A non-idempotent sink may get rows twice where a start re-reads data already written; the new query's \
         first batch reads everything from the start on (limit it with the source's maxOffsetsPerTrigger / \
         maxFilesPerTrigger / maxBytesPerTrigger)."
            .into(),
    );
    w.options.push(new_location());
    add_sink_steps(input, &mut w);
    w.snippets = snippet::source_snippets(&w.options, &kinds, true);
    vec![w]
}

/// A file sink log given with the checkpoint that holds a batch needs a new output path too (see
/// [`crate::checks::sink_log::new_checkpoint_sink_steps`]): its steps, and the writer's `path` option.
fn add_sink_steps(input: &PlanInput<'_>, w: &mut WayOut) {
    let steps = crate::checks::sink_log::new_checkpoint_sink_steps(input.cp, input.ctx);
    if steps.is_empty() {
        return;
    }
    w.steps.extend(steps);
    w.options.push(SourceOption {
        source_index: None,
        key: "path".into(),
        value: crate::checks::sink_log::NEW_OUTPUT.into(),
        fresh_checkpoint_only: false,
    });
}

fn new_location() -> SourceOption {
    SourceOption {
        source_index: None,
        key: "checkpointLocation".into(),
        value: snippet::NEW_CHECKPOINT.into(),
        fresh_checkpoint_only: false,
    }
}

fn clip(s: &str) -> String {
    let c: String = s.chars().take(200).collect();
    if c.len() < s.len() {
        format!("{c}…")
    } else {
        c
    }
}
