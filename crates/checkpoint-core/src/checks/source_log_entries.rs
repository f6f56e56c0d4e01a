//! `source-log-entries-lost`: a file of the chain a file source restores (the newest `.compact` and the batches
//! after it) parses, but lacks the entries of some batches: a file cut at a line boundary or to its version line.
//!
//! Spark writes a source log batch only when it found new files (`FileStreamSource.fetchMaxOffset` adds
//! `metadataLogCurrentOffset + 1` when `batchFiles` is not empty), and a compaction file repeats every entry of
//! the batches before it (`FileStreamSourceLog.compactLogs` keeps them all): each batch up to the newest has at
//! least one entry, with its `batchId`. When the query starts, the source knows only the files the chain lists
//! (`SeenFilesMap`, from `metadataLog.restore()`), so the files of a batch without entries are new to it, and the
//! next batch reads them again. Real Spark 3.5.9, 4.1.4 and 4.3.0 resume and read them again
//! (`tools/spark-gen/log_accidents.py` `source-log-compact-header-only`, `source-log-newest-header-only`).

use super::sink_log::{missing_in_chain, restart_interval, SOURCE_INTERVAL_CONF};
use super::BACKUP;
use crate::log::file_log::{batch_id_to_path, files_needed};
use crate::model::{Checkpoint, FileLog};
use crate::report::{Code, Finding, Severity};
use crate::Context;

/// The batch id ranges of `0..=upto` that `ids` (sorted, distinct) do not hold: at most `ids.len() + 1` ranges,
/// whatever `upto` says.
fn gaps(ids: &[i64], upto: i64) -> Vec<(i64, i64)> {
    let mut out = Vec::new();
    let mut next = 0i64;
    for &id in ids.iter().filter(|id| (0..=upto).contains(*id)) {
        if id > next {
            out.push((next, id - 1));
        }
        match id.checked_add(1) {
            Some(n) => next = n,
            None => return out,
        }
    }
    if next <= upto {
        out.push((next, upto));
    }
    out
}

/// `3`, `0..=4`, joined: at most 5 ranges, then how many more.
fn ranges_text(r: &[(i64, i64)]) -> String {
    let mut parts: Vec<String> =
        r.iter().take(5).map(|(a, b)| if a == b { a.to_string() } else { format!("{a}..={b}") }).collect();
    if r.len() > 5 {
        parts.push(format!("{} more ranges", r.len() - 5));
    }
    parts.join(", ")
}

/// One file of the chain without the entries of some batches: its path, those batches (ranges), what it holds.
type Lost = (String, Vec<(i64, i64)>, String);

/// The lost batches of one file of the chain.
fn lost_in(log: &FileLog, id: i64, compact: bool, interval: i64) -> Option<Lost> {
    let b = log.read.get(&id)?.file.content.as_ref().ok()?;
    let path = batch_id_to_path(&log.dir, id, interval);
    if !compact {
        return (b.entry_count() == 0).then(|| (path, vec![(id, id)], "only its version line".to_string()));
    }
    // Every entry must be kept (and carry its batch id) to tell which batches are there.
    if b.not_kept > 0 || b.entries.iter().any(|e| e.batch_id.is_none()) {
        return None;
    }
    let mut ids: Vec<i64> = b.entries.iter().filter_map(|e| e.batch_id).collect();
    ids.sort_unstable();
    ids.dedup();
    let lost = gaps(&ids, id);
    let holds = if ids.is_empty() {
        "only its version line".to_string()
    } else {
        format!("{} entries of {} batch(es)", b.entry_count(), ids.len())
    };
    (!lost.is_empty()).then_some((path, lost, holds))
}

/// Every file source log whose restored chain has a file without the entries of some batches.
pub fn check_source_log_entries(cp: &Checkpoint, ctx: &Context) -> Vec<Finding> {
    let mut out = Vec::new();
    for (n, log) in &cp.source_logs {
        let interval = restart_interval(log, ctx, SOURCE_INTERVAL_CONF);
        // A chain missing a file fails the source first (`check_source_chain`).
        if missing_in_chain(log, interval).is_some() {
            continue;
        }
        let Some(&latest) = log.listed.keys().next_back() else { continue };
        let (compact, range) = files_needed(latest, interval);
        let files: Vec<Lost> = compact
            .map(|c| (c, true))
            .into_iter()
            .chain(range.map(|id| (id, false)))
            .filter_map(|(id, c)| lost_in(log, id, c, interval))
            .collect();
        let Some((first, lost, _)) = files.first() else { continue };
        let mut f = Finding::new(
            Code::SourceLogEntriesLost,
            Severity::Warning,
            format!(
                "File source log of source {n}: {first} lists no file for batch(es) {}: the restart reads their files again (at least those)",
                ranges_text(lost)
            ),
        );
        for (path, lost, holds) in &files {
            f = f.evidence(path, format!("holds {holds}; no entry for batch(es) {}", ranges_text(lost)), None);
        }
        out.push(
            f.why(format!(
                "Spark logs a source batch only when it found new files, and a compaction file repeats every entry before it, so each batch up to {latest} had entries: these were lost (a file cut at a line or to its version line) while the file still parses. When the query starts, the file source knows only the files its log's chain lists (FileStreamSourceLog.restore), so the lost batches' files are new to it and its next batch reads them again (those within maxFileAge, 7 days by default, of the newest file seen; a file cut at a line may also have lost part of one more batch, which cannot be told): duplicates in the sink, and in aggregations and joins unless their watermark drops the rows as late. Real Spark 3.5.9, 4.1.4 and 4.3.0 resumed and read them again."
            ))
            .fix(&[
                BACKUP.to_string(),
                format!("Restore {first} (with its .crc file) from a backup of the checkpoint or from the storage's history (HDFS trash or snapshots, S3 object versions, ADLS or GCS soft delete), then restart."),
                format!("If it cannot be restored: the older batch files of sources/{n}/ may still list those batches' files (Spark deletes them some time after a compaction, and keeps spark.sql.streaming.minBatchesToRetain batches): rebuild {first} from them (the version line, then their entries, each with its batchId), or move those input files out of the source's folder before restarting, or make the sink idempotent for them: the restart's first batch reads them again."),
            ]),
        );
    }
    out
}

#[cfg(test)]
mod tests {
    use super::gaps;

    /// Gaps are ranges, bounded by the ids held, whatever the id a name gives (a compaction named i64::MAX).
    #[test]
    fn gaps_are_ranges_bounded_by_the_ids_held() {
        assert_eq!(gaps(&[], 9), vec![(0, 9)]);
        assert_eq!(gaps(&[0, 1, 5, 9], 9), vec![(2, 4), (6, 8)]);
        assert_eq!(gaps(&[3], i64::MAX), vec![(0, 2), (4, i64::MAX)]);
        assert!(gaps(&[0, 1, 2], 2).is_empty());
        assert_eq!(gaps(&[0, i64::MAX], i64::MAX), vec![(1, i64::MAX - 1)]);
    }
}
