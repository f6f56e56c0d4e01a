//! Where a NEW checkpoint starts: the last committed batch's end offsets, and the one-line per-source
//! instructions the findings' last-resort fix quotes ([`source_plans`]).

use crate::log::offsets::SourceOffset;
use crate::model::Checkpoint;
use crate::source::SourceKind;

/// One source's restart options on a new checkpoint.
#[derive(Debug, Clone, PartialEq)]
pub struct SourcePlan {
    /// Source position in the offset log (`sources/<index>`).
    pub index: usize,
    /// One instruction, with the exact option values where the checkpoint holds them.
    pub step: String,
}

/// The batch whose end offsets a new checkpoint must start from: the last committed batch whose offsets file
/// parsed (`None` when nothing was committed: then the query never completed a batch and the sources' own
/// starting options apply unchanged).
pub fn start_batch(cp: &Checkpoint) -> Option<(i64, &[SourceOffset])> {
    let last_commit = cp.last_committed_batch_id()?;
    cp.offsets
        .range(..=last_commit)
        .rev()
        .find_map(|(id, f)| f.file.content.as_ref().ok().map(|o| (*id, o.offsets.as_slice())))
}

/// The per-source restart options, in source order.
pub fn source_plans(cp: &Checkpoint) -> Vec<SourcePlan> {
    let Some((batch, offsets)) = start_batch(cp) else {
        return Vec::new();
    };
    offsets
        .iter()
        .enumerate()
        .filter_map(|(index, o)| plan_one(batch, index, o).map(|step| SourcePlan { index, step }))
        .collect()
}

fn plan_one(batch: i64, index: usize, o: &SourceOffset) -> Option<String> {
    let json = o.json.as_ref();
    let from = format!("offsets/{batch}");
    match o.kind {
        SourceKind::Kafka => {
            let offsets = o.raw.as_deref()?.trim();
            Some(format!(
                "source #{index} (Kafka): .option(\"startingOffsets\", \"\"\"{offsets}\"\"\") — the end offsets of the \
                 last committed batch ({from}); Spark requires the JSON to name every partition of the subscribed \
                 topics, so add partitions created since with -2 (earliest)"
            ))
        }
        SourceKind::Delta => {
            let v = json?.get("reservoirVersion")?.as_i64()?;
            // Still in the initial snapshot: startingVersion v would read only the changes from v on and skip
            // the rest of the snapshot (DeltaSource.getStartingOffset), so no startingVersion.
            if json.and_then(|j| j.get("isStartingVersion")).and_then(|b| b.as_bool()) == Some(true) {
                return Some(format!(
                    "source #{index} (Delta): no startingVersion — the last committed batch ({from}) was still \
                     reading the table's initial snapshot (version {v}), which a new checkpoint cannot resume: \
                     without startingVersion it reads the current snapshot from the start (rows already written \
                     are written again: deduplicate downstream)"
                ));
            }
            let index_in_version = json.and_then(|j| j.get("index")).and_then(|i| i.as_i64()).unwrap_or(-1);
            let partial = if index_in_version >= 0 {
                format!(
                    "; version {v} was partly processed (up to file index {index_in_version}), so rows of version \
                     {v} already written downstream are read again: make the sink idempotent or deduplicate"
                )
            } else {
                String::new()
            };
            Some(format!(
                "source #{index} (Delta): .option(\"startingVersion\", \"{v}\") — reservoirVersion of the last \
                 committed batch ({from}){partial}"
            ))
        }
        SourceKind::File => Some(format!(
            "source #{index} (file): a new checkpoint has no record of processed files, so every file in the input \
             path is read again; move processed files away (sources/{index}/ lists them up to {from}) or point the \
             query at a path holding only new files (maxFileAge does not limit a new checkpoint's first batch, \
             latestFirst only changes the order)"
        )),
        SourceKind::Rate => {
            let next = json.and_then(|j| j.get("offset")).and_then(|v| v.as_i64());
            Some(match next {
                Some(n) => format!(
                    "source #{index} (rate-micro-batch): .option(\"startingOffset\", \"{n}\") continues the value \
                     sequence after {from}"
                ),
                None => format!("source #{index} (rate): restarts from 0; it is a test source"),
            })
        }
        SourceKind::AutoLoader => Some(format!(
            "source #{index} (Auto Loader): its file-discovery state lives in sources/{index}/ of the old \
             checkpoint; a new checkpoint re-discovers files: use .option(\"cloudFiles.includeExistingFiles\", \
             \"false\") or a modifiedAfter filter to skip files before the stop"
        )),
        SourceKind::Memory | SourceKind::None | SourceKind::Unknown => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::archive::{Archive, Limits, MemArchive};
    use crate::layout::find_roots;

    fn checkpoint(files: Vec<(&str, &str)>) -> Checkpoint {
        let files = files.into_iter().map(|(p, c)| (p.to_string(), c.as_bytes().to_vec())).collect();
        let mut a = MemArchive::new("t", files, Limits::default()).unwrap();
        let roots = find_roots(a.entries());
        crate::read::read_checkpoint(&mut a, &roots[0], false)
    }

    #[test]
    fn kafka_starting_offsets_come_from_the_last_committed_batch() {
        let cp = checkpoint(vec![
            ("metadata", r#"{"id":"q"}"#),
            (
                "offsets/4",
                "v1\n{\"batchWatermarkMs\":0,\"batchTimestampMs\":1,\"conf\":{}}\n{\"t\":{\"0\":40,\"1\":41}}",
            ),
            (
                "offsets/5",
                "v1\n{\"batchWatermarkMs\":0,\"batchTimestampMs\":2,\"conf\":{}}\n{\"t\":{\"0\":50,\"1\":51}}",
            ),
            ("commits/4", "v1\n{\"nextBatchWatermarkMs\":0}"),
        ]);
        let plans = source_plans(&cp);
        assert_eq!(plans.len(), 1);
        assert!(plans[0].step.contains(r#"{"t":{"0":40,"1":41}}"#), "{}", plans[0].step);
        assert!(plans[0].step.contains("offsets/4"));
    }

    #[test]
    fn delta_starting_version_and_partial_version() {
        let cp = checkpoint(vec![
            ("metadata", r#"{"id":"q"}"#),
            (
                "offsets/0",
                "v1\n{\"batchWatermarkMs\":0,\"batchTimestampMs\":1,\"conf\":{}}\n{\"sourceVersion\":1,\"reservoirId\":\"r\",\"reservoirVersion\":12,\"index\":3,\"isStartingVersion\":false}",
            ),
            ("commits/0", "v1\n{\"nextBatchWatermarkMs\":0}"),
        ]);
        let plans = source_plans(&cp);
        assert!(plans[0].step.contains("\"startingVersion\", \"12\""), "{}", plans[0].step);
        assert!(plans[0].step.contains("partly processed"));
        // Still in the initial snapshot: startingVersion 12 would skip the rest of the snapshot (Delta reads only
        // the changes from a startingVersion on), so the step names none.
        let cp = checkpoint(vec![
            ("metadata", r#"{"id":"q"}"#),
            (
                "offsets/0",
                "v1\n{\"batchWatermarkMs\":0,\"batchTimestampMs\":1,\"conf\":{}}\n{\"sourceVersion\":1,\"reservoirId\":\"r\",\"reservoirVersion\":12,\"index\":3,\"isStartingVersion\":true}",
            ),
            ("commits/0", "v1\n{\"nextBatchWatermarkMs\":0}"),
        ]);
        let step = &source_plans(&cp)[0].step;
        assert!(step.contains("no startingVersion") && !step.contains("\"startingVersion\","), "{step}");
    }

    #[test]
    fn nothing_committed_means_no_plan() {
        let cp = checkpoint(vec![
            ("metadata", r#"{"id":"q"}"#),
            ("offsets/0", "v1\n{\"batchWatermarkMs\":0,\"batchTimestampMs\":1,\"conf\":{}}\n{\"t\":{\"0\":1}}"),
        ]);
        assert!(source_plans(&cp).is_empty());
    }
}
