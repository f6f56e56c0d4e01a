//! Delta Lake source checks without the table's log: the offset as Delta reads it back
//! ([`crate::delta::offset`]) and the retention countdown from the last batch's time. The checks that need
//! the table's `_delta_log` are in [`super::delta_log`].
//!
//! The spec is delta-io/delta: `DeltaSourceOffset.scala` (the offset and its rejections), `DeltaSource.scala`
//! (what a restart reads: the commits from `reservoirVersion` on, or the snapshot at it while
//! `isStartingVersion`), `DeltaLog.getChangeLogFiles` (`DELTA_MISSING_FILES_UNEXPECTED_VERSION` when the
//! first commit file listed is past the one expected), `MetadataCleanup.scala` (log cleanup).

use super::BACKUP;
use crate::delta::facts::{delta_sources, DeltaSourceFacts};
use crate::delta::interval::{describe_ms, DAY_MS};
use crate::model::Checkpoint;
use crate::report::{Code, Finding, RestartStage, Severity};
use crate::source::SourceKind;
use crate::time::utc;
use crate::Context;

/// The exception of Delta's `IllegalStateException`-kind errors.
pub const DELTA_ILLEGAL_STATE: &str = "org.apache.spark.sql.delta.DeltaIllegalStateException";
/// The exception of Delta's missing-file errors.
pub const DELTA_FILE_NOT_FOUND: &str = "org.apache.spark.sql.delta.DeltaFileNotFoundException";
/// Thrown when the log lost the version a tailing stream reads next.
pub const MISSING_FILES: &str = "DELTA_MISSING_FILES_UNEXPECTED_VERSION";
/// Thrown when the snapshot a stream in its initial snapshot reads cannot be rebuilt.
pub const LOG_FILE_NOT_FOUND_FOR_STREAMING: &str = "DELTA_LOG_FILE_NOT_FOUND_FOR_STREAMING_SOURCE";

/// The date part of a UTC time.
pub fn date(ms: i64) -> String {
    utc(ms).split([' ', 'T']).next().unwrap_or_default().to_string()
}

/// "12 days left" / "3 days overdue" between `now` and `at` (whole days, rounded towards the safe side).
pub fn days_left(now: i64, at: i64) -> String {
    if at >= now {
        let d = at.saturating_sub(now) / DAY_MS;
        if d == 1 {
            "1 day left".into()
        } else {
            format!("{d} days left")
        }
    } else {
        let d = now.saturating_sub(at).saturating_add(DAY_MS - 1) / DAY_MS;
        if d == 1 {
            "1 day overdue".into()
        } else {
            format!("{d} days overdue")
        }
    }
}

/// A Delta offset that Delta refuses to read back, in the offsets a restart reads.
pub fn check_offsets(cp: &Checkpoint, _ctx: &Context) -> Vec<Finding> {
    let mut out = Vec::new();
    let latest = cp.latest_readable_offsets().map(|(id, _)| id);
    let previous = latest.and_then(|l| {
        cp.offsets.range(..l).next_back().and_then(|(id, f)| f.file.content.as_ref().ok().map(|o| (*id, o)))
    });
    let uncommitted = latest.is_some_and(|l| cp.last_committed_batch_id().is_none_or(|c| c < l));
    for (id, seq) in
        [latest.and_then(|l| cp.offsets.get(&l).and_then(|f| f.file.content.as_ref().ok()).map(|o| (l, o))), previous]
            .into_iter()
            .flatten()
    {
        for (i, o) in seq.offsets.iter().enumerate().filter(|(_, o)| o.kind == SourceKind::Delta) {
            let Some(json) = o.json.as_ref() else { continue };
            let Err(rej) = crate::delta::offset::parse(json) else { continue };
            // A restart reads the latest offsets and the ones before (`getBatch(previous, latest)` whether or not
            // the latest batch is committed: MicroBatchExecution.populateStartOffsets).
            let read = latest.is_some_and(|l| id == l || id == l - 1);
            let sev = if read { Severity::Error } else { Severity::Warning };
            let mut f = Finding::new(
                Code::DeltaOffsetInvalid,
                sev,
                format!("Delta source #{i} in offsets/{id}: {}", rej.describe()),
            )
            .evidence(format!("offsets/{id}"), format!("source #{i}: {}", o.raw.as_deref().unwrap_or("")), Some(o.offset))
            .why("Delta reads each source offset back with its own deserializer (DeltaSourceOffset.Deserializer) and refuses a sourceVersion it does not know (2 is reserved; 3 adds the schema-change indexes -20/-19 and is written only by Delta versions that track schema changes) or fields that do not parse. An offset Delta cannot read means the file was edited, cut, or written by a newer Delta than the one on the cluster.")
            .fix(&[
                BACKUP.to_string(),
                "If a newer Delta wrote it, restart with that Delta version (or newer).".to_string(),
                format!("Otherwise restore offsets/{id} from a backup, or start a new checkpoint (see the restart plan)."),
            ]);
            if let Some(c) = rej.error_class() {
                f = f.classes(&[c]);
            }
            if read {
                f = f.fails(RestartStage::SourceOffsets, rej.error_class(), rej.exception());
            }
            out.push(f);
        }
    }
    // An uncommitted batch whose end is behind its start: Delta checks the order (DeltaSourceOffset
    // .validateOffsets) only of an offset it computes (`latestOffsetInternal`), never of two read back, so the
    // batch runs again with what lies between (nothing, or part) and the next batch reads on from the moved-back
    // end: rows read twice.
    if let (Some(l), Some((p, prev)), true) = (latest, previous, uncommitted) {
        let cur = cp.offsets.get(&l).and_then(|f| f.file.content.as_ref().ok());
        for (i, (a, b)) in prev.offsets.iter().zip(cur.map(|c| c.offsets.as_slice()).unwrap_or(&[])).enumerate() {
            let (Some(Ok(a)), Some(Ok(b))) =
                (a.json.as_ref().map(crate::delta::offset::parse), b.json.as_ref().map(crate::delta::offset::parse))
            else {
                continue;
            };
            if let Some(why) = b.moved_back_from(&a) {
                out.push(
                    Finding::new(
                        Code::DeltaOffsetMovedBack,
                        Severity::Warning,
                        format!("Delta source #{i}: offsets/{l} moves back from offsets/{p} ({why}): the restart reads those rows again"),
                    )
                    .evidence(format!("offsets/{p}"), format!("reservoirVersion {}, index {}", a.reservoir_version, a.index), None)
                    .evidence(format!("offsets/{l}"), format!("reservoirVersion {}, index {}", b.reservoir_version, b.index), None)
                    .why("Delta checks that an end offset is not behind its start (DeltaSourceOffset.validateOffsets) only for an offset it computes itself (latestOffsetInternal), never for the two a restart reads back. The uncommitted batch runs again between them (nothing, or part of a version), and the next batch reads on from the moved-back end: the rows between the two offsets reach the sink twice. An offset that moved back was edited or copied from another run.")
                    .fix(&[BACKUP.to_string(), format!("Restore offsets/{l} from a backup, or delete it (the uncommitted batch {l} is then planned again from offsets/{p}, and nothing is read twice).")]),
                );
            }
        }
    }
    out
}

/// The countdown for one source: when log cleanup may remove the version it needs.
fn countdown(s: &DeltaSourceFacts<'_>, now: i64) -> Option<Finding> {
    let v = s.needed_version()?;
    let start = s.countdown_start_ms()?;
    let eligible = s.cleanup_eligible_ms()?;
    let initial = s.offset.as_ref().is_ok_and(|o| o.is_initial_snapshot);
    let log = s.log;
    if let Some(l) = log {
        // With the log: only a version it still holds counts down (a lost one is `delta-version-expired`),
        // and a version not committed yet has nothing to lose.
        if !l.commits.contains_key(&v) {
            return None;
        }
        // Another table now, or no table that reads: the countdown would be about nothing (the log checks say why).
        let same_table = l.latest_metadata().is_some_and(|(_, m)| Some(m.id.as_str()) == s.reservoir_id());
        if !same_table || l.latest_version().and_then(|lv| l.snapshot_base(lv)).is_none() {
            return None;
        }
    }
    let window = s.log_retention.ms.max(1);
    let used = now.saturating_sub(start);
    // Past the window with the table's log given, the log still holds the version (else this is
    // `delta-version-expired`): cleanup deletes only below the newest checkpoint, after a checkpoint is written
    // (MetadataCleanup.listExpiredDeltaLogs), so the restart reads it unless a checkpoint comes first.
    let held_past = now >= eligible && log.is_some();
    let past = now >= eligible && !held_past;
    let sev = if past {
        Severity::Error
    } else if held_past || used.saturating_mul(3) > window.saturating_mul(2) {
        Severity::Warning
    } else {
        Severity::Info
    };
    let setting = match &s.log_retention.table_value {
        Some(t) => format!("the table's delta.logRetentionDuration = {t:?}"),
        None if log.is_some() => format!(
            "Delta's default delta.logRetentionDuration of {} (the table does not set it)",
            describe_ms(s.log_retention.ms)
        ),
        None => format!("Delta's default delta.logRetentionDuration of {}", describe_ms(s.log_retention.ms)),
    };
    let class = if initial { LOG_FILE_NOT_FOUND_FOR_STREAMING } else { MISSING_FILES };
    let title = countdown_title(s.index, v, eligible, now, &setting, class, held_past, past);
    let from = match s.needed_commit_ms() {
        Some(t) => format!("version {v} was committed at {}", utc(t)),
        None => format!(
            "counted from batch {}'s start (batchTimestampMs {}, {}): version {v} {}",
            s.batch,
            s.batch_timestamp_ms.unwrap_or(start),
            utc(start),
            if initial || s.offset.as_ref().is_ok_and(|o| o.index >= 0) {
                "was committed no later than that"
            } else {
                "is the version after the last one the batch read, so it was committed then or later (this is the earliest date)"
            }
        ),
    };
    let mut f = Finding::new(Code::DeltaRetentionCountdown, sev, title).evidence(
        &s.offsets_path,
        format!(
            "source #{}: reservoirVersion {v}{}; {from}",
            s.index,
            if initial { ", isStartingVersion true (initial snapshot)" } else { "" }
        ),
        None,
    );
    if let Some(l) = log {
        if let Some(c) = l.commits.get(&v) {
            f = f.evidence(
                l.display_path(&c.path),
                format!("committed {}", c.timestamp().map(utc).unwrap_or_else(|| "at an unknown time".into())),
                None,
            );
        }
    }
    let deleted = crate::delta::facts::next_utc_midnight(start).saturating_add(s.deleted_file_retention.ms);
    f = f.why(format!(
        "A restart reads the table's commits from version {v} on{} (the offsets of the batch before the latest: Spark's restart calls getBatch from them, whether or not the latest batch is committed). Delta's log cleanup (run after each checkpoint of the table) deletes commit files older than now minus delta.logRetentionDuration, cut to the UTC day, below the newest checkpoint; once version {v} is gone the stream stops with {class}. {} Data files are a second clock: files the stream has not read yet and that were rewritten since (OPTIMIZE, overwrite, delete) can be removed by VACUUM delta.deletedFileRetentionDuration ({}{}) after the rewrite, from {} on at the earliest. Window used: {} of {} ({} elapsed).",
        if initial { " after rebuilding the snapshot at that version (it is still reading the initial snapshot)" } else { "" },
        if log.is_some() { "These dates come from the table's own log." } else { "Without the table's _delta_log these dates use Delta's defaults: the table's own setting decides (give the table's _delta_log to check it)." },
        describe_ms(s.deleted_file_retention.ms),
        if s.deleted_file_retention.table_value.is_some() { ", the table's setting" } else { ", the default" },
        date(deleted),
        crate::checks::timing::human_age(used.max(0)),
        describe_ms(window),
        if used < 0 { "none yet".to_string() } else { format!("{}%", (used as i128 * 100 / window as i128).min(999)) }
    ));
    let mut steps = vec![
        "Restart the query before that date, or raise the table's retention: ALTER TABLE <table> SET TBLPROPERTIES ('delta.logRetentionDuration' = 'interval 60 days') keeps more log files (a little storage and longer log listings; it does not keep data files, for those raise delta.deletedFileRetentionDuration, which keeps removed data files longer and costs their storage).".to_string(),
    ];
    if log.is_none() {
        steps.push("Give the table's _delta_log to check the table's own retention and what changed since (zip it: cd <table path> && zip -r delta_log.zip _delta_log).".to_string());
    }
    if past {
        steps.push(format!("If version {v} is gone: a new checkpoint with .option(\"startingVersion\", <the earliest version the log still holds, plus a margin>) and .option(\"maxBytesPerTrigger\", \"1g\") for a bounded first batch (versions in between are skipped), or .option(\"failOnDataLoss\", \"false\") on this checkpoint, which silently skips the lost versions."));
        f = f.classes(&[class]).fails(
            RestartStage::SourceOffsets,
            Some(class),
            if initial { DELTA_FILE_NOT_FOUND } else { DELTA_ILLEGAL_STATE },
        );
    } else if sev == Severity::Warning {
        f = f.classes(&[class]);
    }
    if held_past {
        steps.insert(0, format!("Restart now, before the table's next checkpoint (every 10 commits by default): log cleanup runs after a checkpoint and may then delete version {v}."));
    }
    Some(f.fix(&steps))
}

/// The countdown's title: past the window (the log still holds the version, or not known), or when it will be.
#[allow(clippy::too_many_arguments, reason = "the title's facts, each one line of it")]
fn countdown_title(
    index: usize,
    v: i64,
    eligible: i64,
    now: i64,
    setting: &str,
    class: &str,
    held_past: bool,
    past: bool,
) -> String {
    if held_past {
        format!(
            "Delta source #{index}: table version {v} has been eligible for log cleanup since {} ({}), under {setting}: the log still holds it, but the table's next checkpoint lets cleanup delete it, and then the restart fails with {class}",
            date(eligible),
            days_left(now, eligible)
        )
    } else if past {
        format!(
            "Delta source #{index}: log cleanup may have removed table version {v} since {} ({}), under {setting}; the restart may fail with {class}",
            date(eligible),
            days_left(now, eligible)
        )
    } else {
        format!(
            "Delta source #{index}: table version {v} becomes eligible for log cleanup on {} ({}), under {setting}",
            date(eligible),
            days_left(now, eligible)
        )
    }
}

/// The retention countdown of every Delta source (uses the user's clock, `Context::now_ms`).
pub fn check_retention_countdown(cp: &Checkpoint, ctx: &Context) -> Vec<Finding> {
    let Some(now) = ctx.now_ms else { return vec![] };
    delta_sources(cp, ctx).iter().filter_map(|s| countdown(s, now)).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn days_read_naturally() {
        assert_eq!(days_left(0, 12 * DAY_MS + 5), "12 days left");
        assert_eq!(days_left(3 * DAY_MS - 5, 0), "3 days overdue");
        assert_eq!(days_left(DAY_MS, 0), "1 day overdue");
        assert_eq!(date(1_796_032_397_716), "2026-11-30");
    }
}
