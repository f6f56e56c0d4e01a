//! What the checkpoint and the table's log say about each Delta source, for the checks and the restart
//! plan: the version a restart reads from, the retention that applies (the table's own, or Delta's
//! defaults when no log was given), when that version becomes eligible for log cleanup, and a bounded
//! start for a new checkpoint.
//!
//! Log cleanup (delta-io/delta `MetadataCleanup.cleanUpExpiredLogs`) runs after a checkpoint is written and
//! deletes commits and checkpoints older than `now - delta.logRetentionDuration` truncated to the UTC day,
//! only below the newest checkpoint. A file written at `t` is therefore deleted no earlier than the UTC
//! midnight after `t` plus the retention.

use super::interval::{
    parse_interval_ms, DAY_MS, DEFAULT_DELETED_FILE_RETENTION_MS, DEFAULT_LOG_RETENTION_MS, DELETED_FILE_RETENTION_KEY,
    LOG_RETENTION_KEY,
};
use super::offset::{self, DeltaSourceOffset, OffsetRejection};
use super::table::DeltaLog;
use crate::model::Checkpoint;
use crate::source::SourceKind;
use crate::Context;

/// A retention setting and where it came from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Retention {
    /// The interval in ms.
    pub ms: i64,
    /// The table property's text when the table sets it; `None` = Delta's default applies (or no log).
    pub table_value: Option<String>,
}

/// Everything known about one Delta source of a checkpoint.
#[derive(Debug, Clone)]
pub struct DeltaSourceFacts<'a> {
    /// The source's position in the offset log.
    pub index: usize,
    /// The batch whose offsets a restart starts from (the last committed one, else the latest).
    pub batch: i64,
    /// `offsets/<batch>`.
    pub offsets_path: String,
    /// The offset as Delta reads it, or Delta's rejection.
    pub offset: Result<DeltaSourceOffset, OffsetRejection>,
    /// `batchTimestampMs` of that batch.
    pub batch_timestamp_ms: Option<i64>,
    /// The table's `_delta_log`, when given and it belongs to this source (or is the only one given).
    pub log: Option<&'a DeltaLog>,
    /// `delta.logRetentionDuration`.
    pub log_retention: Retention,
    /// `delta.deletedFileRetentionDuration`.
    pub deleted_file_retention: Retention,
}

/// The UTC midnight after `t` (log cleanup truncates its cutoff to the day).
pub fn next_utc_midnight(t: i64) -> i64 {
    t.div_euclid(DAY_MS).saturating_mul(DAY_MS).saturating_add(DAY_MS)
}

/// The earliest time log cleanup can delete a log file written at `t` under `retention_ms`.
pub fn cleanup_eligible_at(t: i64, retention_ms: i64) -> i64 {
    next_utc_midnight(t).saturating_add(retention_ms)
}

fn retention(log: Option<&DeltaLog>, key: &str, default: i64) -> Retention {
    let value = log.and_then(|l| l.latest_metadata()).and_then(|(_, m)| m.conf(key).map(str::to_string));
    match value.as_deref().and_then(parse_interval_ms) {
        Some(ms) => Retention { ms, table_value: value },
        None => Retention { ms: default, table_value: None },
    }
}

impl<'a> DeltaSourceFacts<'a> {
    /// The version a restart reads first (`reservoirVersion`), when the offset is valid.
    pub fn needed_version(&self) -> Option<i64> {
        self.offset.as_ref().ok().map(|o| o.reservoir_version)
    }

    /// The table id the checkpoint recorded.
    pub fn reservoir_id(&self) -> Option<&str> {
        self.offset.as_ref().ok().and_then(|o| o.reservoir_id.as_deref())
    }

    /// When the needed version was committed: its commit's time from the log, else `None`.
    pub fn needed_commit_ms(&self) -> Option<i64> {
        let v = self.needed_version()?;
        self.log?.commits.get(&v)?.timestamp()
    }

    /// The time the countdown runs from: the needed version's commit time (log), else the batch's start
    /// (the latest a version read by that batch can have been committed).
    pub fn countdown_start_ms(&self) -> Option<i64> {
        self.needed_commit_ms().or(self.batch_timestamp_ms)
    }

    /// The earliest time log cleanup may delete the needed version's commit file.
    pub fn cleanup_eligible_ms(&self) -> Option<i64> {
        Some(cleanup_eligible_at(self.countdown_start_ms()?, self.log_retention.ms))
    }

    /// A bounded start for a new checkpoint: `(startingVersion, its commit time, date after which it must be
    /// recomputed)`: the needed version when the log still holds it, else the earliest retained commit whose
    /// cleanup is at least `margin_ms` away from `now` (`None` without a log or when nothing qualifies).
    pub fn bounded_start(&self, now_ms: i64, margin_ms: i64) -> Option<(i64, Option<i64>, i64)> {
        let log = self.log?;
        let needed = self.needed_version()?;
        let latest = log.latest_version()?;
        let eligible = |v: i64| {
            log.commits.get(&v).and_then(|c| c.timestamp()).map(|t| cleanup_eligible_at(t, self.log_retention.ms))
        };
        let candidate = if log.commits_contiguous(needed, latest) && log.commits.contains_key(&needed) {
            needed
        } else {
            let first = log.commits.keys().copied().filter(|&v| log.commits_contiguous(v, latest)).min()?;
            (first..=latest)
                .find(|&v| eligible(v).is_none_or(|e| e >= now_ms.saturating_add(margin_ms)))
                .unwrap_or(latest)
        };
        let ts = log.commits.get(&candidate).and_then(|c| c.timestamp());
        let stale = eligible(candidate).unwrap_or_else(|| now_ms.saturating_add(self.log_retention.ms));
        Some((candidate, ts, stale))
    }
}

/// Picks the log of a table id: the one whose latest `metaData.id` is `id`; else, when exactly one log was
/// given, that one (it is the source's table at the path, whatever its id).
fn log_for<'a>(logs: &'a [DeltaLog], id: Option<&str>) -> Option<&'a DeltaLog> {
    let by_id = logs.iter().find(|l| id.is_some() && l.latest_metadata().map(|(_, m)| m.id.as_str()) == id);
    by_id.or(if logs.len() == 1 { logs.first() } else { None })
}

/// The facts of every Delta source of the checkpoint, in source order.
pub fn delta_sources<'a>(cp: &Checkpoint, ctx: &'a Context) -> Vec<DeltaSourceFacts<'a>> {
    let start = crate::restart_plan::start_batch(cp).or_else(|| {
        cp.offsets.iter().rev().find_map(|(id, f)| f.file.content.as_ref().ok().map(|o| (*id, o.offsets.as_slice())))
    });
    let Some((batch, offsets)) = start else { return vec![] };
    let batch_timestamp_ms = cp
        .offsets
        .get(&batch)
        .and_then(|f| f.file.content.as_ref().ok())
        .and_then(|o| o.metadata.as_ref()?.batch_timestamp_ms);
    offsets
        .iter()
        .enumerate()
        .filter(|(_, o)| o.kind == SourceKind::Delta)
        .filter_map(|(index, o)| {
            let json = o.json.as_ref()?;
            let parsed = offset::parse(json);
            let id = parsed.as_ref().ok().and_then(|p| p.reservoir_id.clone());
            let log = log_for(&ctx.delta_logs, id.as_deref());
            Some(DeltaSourceFacts {
                index,
                batch,
                offsets_path: format!("offsets/{batch}"),
                offset: parsed,
                batch_timestamp_ms,
                log,
                log_retention: retention(log, LOG_RETENTION_KEY, DEFAULT_LOG_RETENTION_MS),
                deleted_file_retention: retention(log, DELETED_FILE_RETENTION_KEY, DEFAULT_DELETED_FILE_RETENTION_MS),
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cleanup_waits_for_the_next_utc_midnight() {
        // 2026-11-18 09:21 UTC + 30 days → from 2026-12-19 00:00 UTC.
        let t = crate::time::parse_now("2026-11-18T09:21:00Z").unwrap();
        let e = cleanup_eligible_at(t, 30 * DAY_MS);
        assert_eq!(crate::time::utc(e), "2026-12-19T00:00:00.000Z");
    }
}
