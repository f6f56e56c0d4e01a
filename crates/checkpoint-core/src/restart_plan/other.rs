//! Rate, memory, socket and unknown sources. Only `rate-micro-batch` has a start to carry over
//! (`startingOffset`, apache/spark sql/core/src/main/scala/org/apache/spark/sql/execution/streaming/sources/
//! RatePerMicroBatchProvider.scala); memory and socket sources hold no data across runs, and an unknown
//! source (Event Hubs, a custom source) is listed with its raw offset by `new_checkpoint.rs`.

use super::{PlanInput, SourceAt, SourceOption, SourcePlanner, SourceStart, WayOut};
use crate::source::SourceKind;

/// The rate source planner.
pub(super) const RATE: SourcePlanner = SourcePlanner { kind: SourceKind::Rate, ways_out: no_ways, start: rate_start };

fn no_ways(_: &PlanInput<'_>, _: &SourceAt<'_>) -> Vec<WayOut> {
    Vec::new()
}

fn rate_start(_: &PlanInput<'_>, at: &SourceAt<'_>) -> Option<SourceStart> {
    let idx = at.index;
    let json = at.offset.json.as_ref()?;
    let next = json.get("offset").and_then(|v| v.as_i64());
    let mut s = SourceStart::default();
    match next {
        Some(n) => {
            s.options.push(SourceOption::new(idx, "startingOffset", n.to_string(), true));
            s.steps.push(format!(
                "source #{idx} (rate-micro-batch): startingOffset={n} continues the value sequence after \
                 offsets/{}",
                at.batch
            ));
        }
        None => s.steps.push(format!("source #{idx} (rate): a test source; it starts again from 0")),
    }
    Some(s)
}
