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
    /// The batch whose offsets a restart's first `getBatch` starts from: the one before the latest planned batch
    /// (committed or not), else the latest ([`delta_sources`]).
    pub batch: i64,
    /// `offsets/<batch>`.
    pub offsets_path: String,
    /// The offset as Delta reads it, or Delta's rejection.
    pub offset: Result<DeltaSourceOffset, OffsetRejection>,
    /// The last committed batch and the source's offset at its end, when it parses: where its unread data begins,
    /// and where a NEW checkpoint starts ([`crate::restart_plan::start_batch`]). `None` when nothing was
    /// committed ([`DeltaSourceFacts::unread_version`] then falls back to the restart's offset).
    pub unread: Option<(i64, DeltaSourceOffset)>,
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

    /// The version the stream's unread data starts at: [`DeltaSourceFacts::unread`]'s, else the restart's
    /// ([`DeltaSourceFacts::needed_version`]). The restart lists the log from the earlier `needed_version`, but
    /// reads data (and skips, in a new checkpoint) from here.
    pub fn unread_version(&self) -> Option<i64> {
        self.unread.as_ref().map(|(_, o)| o.reservoir_version).or_else(|| self.needed_version())
    }

    /// The offsets file of the unread position (`offsets/<batch>`).
    pub fn unread_path(&self) -> String {
        self.unread.as_ref().map_or_else(|| self.offsets_path.clone(), |(b, _)| format!("offsets/{b}"))
    }

    /// Whether the unread position is still in the table's initial snapshot (`isStartingVersion`).
    pub fn unread_in_initial_snapshot(&self) -> bool {
        match &self.unread {
            Some((_, o)) => o.is_initial_snapshot,
            None => self.offset.as_ref().is_ok_and(|o| o.is_initial_snapshot),
        }
    }

    /// True when the checkpoint holds a schema tracking log of this source's table with an entry: the query
    /// reads with `schemaTrackingLocation`, and Delta then refuses `failOnDataLoss=false`
    /// (`DeltaSource.filterAndIndexDeltaLogs`: "requirement failed: Using schema from schema tracking log cannot
    /// tolerate missing commit files", an IllegalArgumentException).
    pub fn tracks_schema(&self, cp: &Checkpoint) -> bool {
        cp.delta_schema_logs
            .iter()
            .any(|l| Some(l.dir_table_id.as_str()) == self.reservoir_id() && !l.entries.is_empty())
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
    /// recomputed)`: the unread version when the log still holds it, else the earliest retained commit whose
    /// cleanup is at least `margin_ms` away from `now` (`None` without a log or when nothing qualifies).
    pub fn bounded_start(&self, now_ms: i64, margin_ms: i64) -> Option<(i64, Option<i64>, i64)> {
        let log = self.log?;
        let needed = self.unread_version()?;
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

/// The facts of every Delta source of the checkpoint, in source order. Each source's offset is the one a
/// restart's first `getBatch` starts from: Spark's `MicroBatchExecution.populateStartOffsets` takes the
/// offsets of the batch before the latest planned one as committed, and calls `getBatch(that, latest)` on every
/// V1 source (DeltaSource is one) whether or not the latest batch is committed: to run it again, or "because
/// certain sources assume on restart the last batch will be executed before getOffset is called again". Delta's
/// `getBatch` lists the commits from that start's `reservoirVersion` on (`createDataFrame` reads the listing
/// through). With one batch only, or a source the earlier batch has no offset for, the latest offset (Delta
/// then starts from the starting options, or the snapshot at that offset).
pub fn delta_sources<'a>(cp: &Checkpoint, ctx: &'a Context) -> Vec<DeltaSourceFacts<'a>> {
    let Some((latest, latest_seq)) = cp.latest_readable_offsets() else { return vec![] };
    let committed = crate::restart_plan::start_batch(cp);
    let previous = latest
        .checked_sub(1)
        .and_then(|p| cp.offsets.get(&p))
        .and_then(|f| f.file.content.as_ref().ok())
        .map(|o| (latest - 1, o));
    let timestamp = |batch: i64| {
        cp.offsets
            .get(&batch)
            .and_then(|f| f.file.content.as_ref().ok())
            .and_then(|o| o.metadata.as_ref()?.batch_timestamp_ms)
    };
    latest_seq
        .offsets
        .iter()
        .enumerate()
        .filter(|(_, o)| o.kind == SourceKind::Delta)
        .filter_map(|(index, o)| {
            // A named source (Spark 4.3, offsets v2) is the same source by name in the earlier batch.
            let earlier = previous.and_then(|(b, seq)| {
                let prev = match &o.name {
                    Some(n) => seq.offsets.iter().find(|p| p.name.as_ref() == Some(n)),
                    None => seq.offsets.get(index),
                };
                prev?.json.as_ref().map(|j| (b, j))
            });
            let (batch, json) = earlier.or_else(|| o.json.as_ref().map(|j| (latest, j)))?;
            let parsed = offset::parse(json);
            let id = parsed.as_ref().ok().and_then(|p| p.reservoir_id.clone());
            let log = log_for(&ctx.delta_logs, id.as_deref());
            let unread = committed
                .and_then(|(b, seq)| Some((b, seq.get(index)?.json.as_ref()?)))
                .and_then(|(b, j)| Some((b, offset::parse(j).ok()?)));
            Some(DeltaSourceFacts {
                index,
                batch,
                offsets_path: format!("offsets/{batch}"),
                offset: parsed,
                unread,
                batch_timestamp_ms: timestamp(batch),
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
