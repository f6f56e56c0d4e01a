//! Time evidence from the files' last-modified times ([`crate::model::Checkpoint::modified_ms`], from the zip
//! entries' timestamps or the directory's mtimes) and the user's clock ([`crate::Context::now_ms`]).
//!
//! Spark writes `offsets/N` before it runs batch N and `commits/N` after (MicroBatchExecution: `offsetLog.add`
//! in `constructNextBatch`, `commitLog.add` at the end of `runBatch`), so `offsets/N` is never newer than
//! `commits/N`, and `commits/N` never newer than `offsets/N+1`. An `offsets/N` written after `commits/N` (or
//! after `commits/N+1`) was rewritten by a second writer of the same checkpoint.

use super::BACKUP;
use crate::model::Checkpoint;
use crate::report::{CheckpointKind, Code, Finding, Severity};
use crate::Context;

/// Tolerance for timestamp comparisons: DOS times in zips have 2-second resolution.
const SLACK_MS: i64 = 2_000;

use crate::time::utc;

/// An age for a sentence: "3 days ago", or, for a time after `now` (a clock ahead of the reader's, a zip's local
/// DOS time without a UTC one, a `--now` in the past), "3 days after now (a clock or time zone ahead of this
/// one)": never a negative age.
pub fn ago(ms: i64) -> String {
    if ms >= 0 {
        format!("{} ago", human_age(ms))
    } else {
        format!("{} after now (a clock or time zone ahead of this one)", human_age(ms.saturating_neg()))
    }
}

/// `3 days`, `5 hours`, `12 minutes`, `40 seconds`.
pub fn human_age(ms: i64) -> String {
    let s = ms / 1000;
    let (n, unit) = if s >= 2 * 86_400 {
        (s / 86_400, "days")
    } else if s >= 2 * 3600 {
        (s / 3600, "hours")
    } else if s >= 120 {
        (s / 60, "minutes")
    } else {
        (s, "seconds")
    };
    format!("{n} {unit}")
}

/// Offsets rewritten after their batch was committed; ages of the last batch and commit.
pub fn check_timing(cp: &Checkpoint, ctx: &Context) -> Vec<Finding> {
    if cp.kind.0 != CheckpointKind::StructuredStreaming {
        return vec![];
    }
    let mut out = Vec::new();
    let mt = |p: &str| cp.modified_ms(p);
    let mut rewritten: Vec<(i64, String, i64, String, i64)> = Vec::new();
    let mut pairs = 0usize;
    for (&n, o) in &cp.offsets {
        let Some(off) = mt(&o.file.path) else { continue };
        // An offsets file that does not parse is reported by the log checks already.
        if o.file.content.is_err() {
            continue;
        }
        if cp.commits.get(&n).and_then(|c| mt(&c.file.path)).is_some() {
            pairs += 1;
        }
        for (c_id, rule) in [(n, "the commit of the same batch"), (n + 1, "the commit of the next batch")] {
            let Some(c) = cp.commits.get(&c_id) else { continue };
            let Some(com) = mt(&c.file.path) else { continue };
            if off > com.saturating_add(SLACK_MS) {
                rewritten.push((n, c.file.path.clone(), com, rule.to_string(), off));
                break;
            }
        }
    }
    // A copy that did not keep modification times (cp -r copies commits/ before offsets/) makes most
    // offsets look newer than their commits: the times then say nothing about the writers.
    let copied = pairs >= 3 && rewritten.len() * 2 > pairs;
    if let Some((n, cpath, com, rule, off)) = rewritten.first().cloned().filter(|_| !copied) {
        let mut f = Finding::new(
            Code::OffsetsRewrittenAfterCommit,
            Severity::Warning,
            format!(
                "offsets/{n} was modified {} after {cpath}: a committed batch's offsets were rewritten",
                human_age(off.saturating_sub(com))
            ),
        )
        .evidence(format!("offsets/{n}"), format!("last modified {}", utc(off)), None)
        .evidence(&cpath, format!("last modified {} ({rule})", utc(com)), None);
        for (n, cpath, com, _, off) in rewritten.iter().skip(1).take(5) {
            f = f.evidence(
                format!("offsets/{n}"),
                format!("last modified {}, after {cpath} ({})", utc(*off), utc(*com)),
                None,
            );
        }
        out.push(
            f.why("Spark writes offsets/N before running batch N and commits/N after it, and never rewrites a committed batch's offsets. A newer offsets file means a second query (or a copy of this checkpoint restored over it) wrote to the same checkpoint, or the file was edited by hand: the sources' positions recorded for that batch may not be what was processed, so data can be skipped or read twice after a restart. Timestamps come from the zip entries (or file mtimes) and are only as reliable as the copy that made them.")
                .fix(&[
                    BACKUP.to_string(),
                    "Make sure only one query uses this checkpoint location (stop other jobs or notebooks started with it).".to_string(),
                    format!("Compare offsets/{n} with the source's data for that batch; if it was re-planned, restore the original offsets/{n} from a backup or reprocess from a new checkpoint."),
                ]),
        );
    }
    if let Some(now) = ctx.now_ms {
        let last_batch =
            cp.latest_readable_offsets().and_then(|(id, o)| Some((id, o.metadata.as_ref()?.batch_timestamp_ms?)));
        let last_commit = cp.commits.iter().next_back().and_then(|(id, c)| Some((*id, mt(&c.file.path)?)));
        if last_batch.is_some() || last_commit.is_some() {
            let mut parts = Vec::new();
            let mut f = Finding::new(Code::LastActivityAge, Severity::Info, "");
            if let Some((id, ts)) = last_batch {
                parts.push(format!("the last batch ({id}) started {}", ago(now.saturating_sub(ts))));
                f = f.evidence(format!("offsets/{id}"), format!("batchTimestampMs = {ts} ({})", utc(ts)), None);
            }
            if let Some((id, ms)) = last_commit {
                parts.push(format!("the query last committed {} (batch {id})", ago(now.saturating_sub(ms))));
                f = f.evidence(format!("commits/{id}"), format!("last modified {}", utc(ms)), None);
            }
            let mut title = parts.join("; ");
            if let Some(c) = title.get(0..1) {
                title = c.to_uppercase() + &title[1..];
            }
            f.title = title;
            out.push(
                f.why(format!(
                    "Ages are computed against now = {}. Sources retain data for a limited time (Kafka retention, file cleanup, Delta VACUUM): the longer a query was stopped, the likelier the data its next batch needs is gone.",
                    utc(now)
                ))
                .fix(&["Check that the sources still hold the data from the last committed offsets on (Kafka: the topic's retention against the offsets of the last batch)."]),
            );
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ages_read_naturally() {
        assert_eq!(human_age(3 * 86_400_000 + 5), "3 days");
        assert_eq!(human_age(5 * 3_600_000), "5 hours");
        assert_eq!(human_age(40_000), "40 seconds");
        assert_eq!(ago(40_000), "40 seconds ago");
        assert_eq!(ago(-3 * 86_400_000), "3 days after now (a clock or time zone ahead of this one)");
        assert_eq!(ago(i64::MIN), "106751991167 days after now (a clock or time zone ahead of this one)");
    }
}
