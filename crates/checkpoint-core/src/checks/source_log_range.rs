//! `source-log-batch-missing` for the batch a restart runs or re-reads: the file source log's files from the
//! previous batch's `logOffset` + 1 to the latest batch's `logOffset` must be there; and `source-files-skipped`
//! when the newest file, at the committed `logOffset`, is gone (`files_skipped`).
//!
//! On restart Spark calls `getBatch(start, end)` of a file source with the offsets of the latest two offsets files
//! (`MicroBatchExecution.populateStartOffsets` for a committed latest batch; running the batch again for an
//! uncommitted one). `FileStreamSource.getBatch` reads `metadataLog.get(start.logOffset + 1, end.logOffset)`;
//! `FileStreamSourceLog.get` takes each batch from its file, or from the latest compaction file when the batch's
//! own file was removed by compaction, and `HDFSMetadataLog.verifyBatchIds` fails on any batch of the range it
//! does not find: `java.lang.IllegalStateException: batch <n> doesn't exist`. The chain the source restores when
//! it starts (the latest `.compact` and the batches after it) is `sink_log::check_source_chain`'s.

use super::source_files::{log_offset, log_offset_of};
use super::{new_checkpoint_step, some_of, BACKUP};
use crate::log::file_log::{batch_id_to_path, is_compaction_batch};
use crate::log::offsets::OffsetSeq;
use crate::model::{Checkpoint, FileLog};
use crate::report::{CheckpointKind, Code, Finding, RestartStage, Severity};
use crate::source::SourceKind;
use crate::Context;

/// Spark's default `spark.sql.streaming.fileSource.log.compactInterval`, for a source log with no file left.
const DEFAULT_INTERVAL: i64 = 10;

/// The batches of `start..=end` the source log cannot give: neither listed nor covered by the latest compaction
/// file (which holds every batch up to its own).
fn unavailable(log: Option<&FileLog>, start: i64, end: i64) -> Vec<i64> {
    let (listed, interval) = match log {
        Some(l) => (Some(&l.listed), l.compact_interval),
        None => (None, DEFAULT_INTERVAL),
    };
    let latest = listed.and_then(|l| l.keys().next_back().copied());
    // `getAllValidBatches(latest, interval).head`: the newest compaction batch at or below the latest batch.
    let compaction = latest.and_then(|l| {
        let c = l.checked_add(1)?.rem_euclid(interval.max(1));
        let c = l - c;
        (c >= 0 && is_compaction_batch(c, interval) && listed.is_some_and(|m| m.contains_key(&c))).then_some(c)
    });
    let from = compaction.map_or(start, |c| start.max(c.saturating_add(1)));
    // Every id walked is either listed (as many as the listing holds) or missing (at most 1000 kept): the walk is
    // bounded by the listing, whatever the logOffsets say.
    let mut out = Vec::new();
    let mut id = from;
    while id <= end && out.len() < 1000 {
        if !listed.is_some_and(|l| l.contains_key(&id)) {
            out.push(id);
        }
        match id.checked_add(1) {
            Some(n) => id = n,
            None => break,
        }
    }
    out
}

/// Every file source of the latest offsets file whose range for the restart's batch misses a log file.
pub fn check_source_range(cp: &Checkpoint, ctx: &Context) -> Vec<Finding> {
    if cp.kind.0 != CheckpointKind::StructuredStreaming {
        return vec![];
    }
    let Some((last, latest)) = cp.latest_readable_offsets() else { return vec![] };
    let mut out = Vec::new();
    for (i, o) in latest.offsets.iter().enumerate() {
        let index = o.folder_number(i);
        let (Some(index), SourceKind::File) = (index, o.kind) else { continue };
        let Some(end) = log_offset(cp, last, i) else { continue };
        // The previous offsets file gives the start; without it (batch 0 aside) the restart fails reading it first.
        let start = match last {
            0 => -1,
            _ if !cp.offsets.contains_key(&(last - 1)) => continue,
            _ => match log_offset_of(cp, last - 1, o.name.as_deref(), i) {
                Some(s) => s,
                None => continue,
            },
        };
        let log = cp.source_logs.get(&index);
        // A chain the source restores first is missing a file: Spark stops there (`check_source_chain`).
        if log.is_some_and(|l| {
            let interval = super::sink_log::restart_interval(l, ctx, super::sink_log::SOURCE_INTERVAL_CONF);
            super::sink_log::missing_in_chain(l, interval).is_some()
        }) {
            continue;
        }
        if start >= end {
            out.extend(
                offset_goes_back(cp, index, log, last, end).or_else(|| files_skipped(index, log, last, latest, end)),
            );
            continue;
        }
        let missing = unavailable(log, start.saturating_add(1), end);
        let Some(first) = missing.first() else { continue };
        let dir = log.map(|l| l.dir.clone()).unwrap_or_else(|| format!("sources/{index}"));
        let interval = log.map(|l| l.compact_interval).unwrap_or(DEFAULT_INTERVAL);
        let name = |id: &i64| batch_id_to_path(&dir, *id, interval);
        let names: Vec<String> = missing.iter().map(name).collect();
        let named = some_of(&names, names.len() as u64);
        out.push(
            Finding::new(
                Code::SourceLogBatchMissing,
                Severity::Error,
                format!(
                    "File source log of source {index} is missing {} that batch {last} reads (its files from logOffset {} to {end})",
                    named,
                    start.saturating_add(1)
                ),
            )
            .evidence(
                &dir,
                format!(
                    "offsets/{last} records logOffset {end}{}; {}",
                    if last > 0 { format!(", offsets/{} logOffset {start}", last - 1) } else { String::new() },
                    match log {
                        Some(l) => format!(
                            "the log lists batches up to {}, not {}",
                            l.listed.keys().next_back().map(|x| x.to_string()).unwrap_or_else(|| "none".into()),
                            named
                        ),
                        None => format!("{dir}/ has no file"),
                    }
                ),
                None,
            )
            .why(format!(
                "On restart Spark asks the file source for batch {last}'s files again (FileStreamSource.getBatch with the offsets of offsets/{} and offsets/{last}): it reads its log's batches {} to {end}, each from its file or from the latest compaction file, and fails on one it cannot find with java.lang.IllegalStateException \"batch {first} doesn't exist\" (HDFSMetadataLog.verifyBatchIds).",
                last - 1,
                start.saturating_add(1)
            ))
            .fails(RestartStage::SourceOffsets, None, "java.lang.IllegalStateException")
            .fix(&[
                BACKUP.to_string(),
                format!("Restore {named} from a backup of the checkpoint (with the .crc files)."),
                new_checkpoint_step(cp),
            ]),
        );
    }
    out
}

/// A latest batch that read no new file (`logOffset` unchanged) from a source whose log now ends more than one
/// batch below that `logOffset` (its newest files deleted, or the whole `sources/<n>/`): when new files arrive,
/// the source logs them as the batch after its newest file, whose `logOffset` is below the committed one, and
/// `FileStreamSource.getBatch` fails on `assert(startOffset <= endOffset)` (real Spark 3.5.9, 4.1.4, 4.3.0:
/// `java.lang.AssertionError: assertion failed`).
fn offset_goes_back(cp: &Checkpoint, index: u32, log: Option<&FileLog>, last: i64, end: i64) -> Option<Finding> {
    let newest = log.and_then(|l| l.listed.keys().next_back().copied()).unwrap_or(-1);
    if newest.saturating_add(1) >= end {
        return None;
    }
    let dir = log.map(|l| l.dir.clone()).unwrap_or_else(|| format!("sources/{index}"));
    let ends = if newest < 0 { format!("{dir}/ has no file") } else { format!("the log ends at batch {newest}") };
    Some(
        Finding::new(
            Code::SourceLogBatchMissing,
            Severity::Error,
            format!("File source log of source {index} ends below the logOffset {end} the checkpoint committed: the next new files fail the batch"),
        )
        .evidence(&dir, format!("offsets/{last} records logOffset {end}; {ends}"), None)
        .why(format!(
            "When the query runs again and new files arrive, the file source writes them to its log as batch {} (after the newest file it finds) and offers that as its offset; the batch then asks for the files from logOffset {end} to {}, which goes backwards, and FileStreamSource.getBatch fails with java.lang.AssertionError: assertion failed. The log's files above {newest} were deleted.",
            newest.saturating_add(1),
            newest.saturating_add(1)
        ))
        .fails(RestartStage::LogWrite, None, "java.lang.AssertionError")
        .fix(&[
            BACKUP.to_string(),
            format!("Restore {dir}/ (its files up to batch {end}, with their .crc files) from a backup of the checkpoint."),
            new_checkpoint_step(cp),
        ]),
    )
}

/// A latest batch that read no new file (`logOffset` unchanged) from a source whose log ends exactly one batch
/// below that `logOffset`: the newest file, at the committed `logOffset`, is gone. Spark resumes, but the source
/// restarts its log at that batch id (`metadataLogCurrentOffset`, from `metadataLog.getLatest()`) and knows only
/// the files the remaining log lists (`SeenFilesMap`, from `metadataLog.restore()`): its first listing logs the
/// lost batch's own files, and every file that arrived meanwhile, as that batch again (`fetchMaxOffset`), whose
/// offset equals the committed one, so no batch reads them. Real Spark 3.5.9, 4.1.4 and 4.3.0 resume and read
/// 0 rows of a file that arrived before the restart (`tools/spark-gen/log_accidents.py`
/// `source-log-latest-deleted`); `-fixed` records the way out, moving such files aside for a first restart.
fn files_skipped(index: u32, log: Option<&FileLog>, last: i64, latest: &OffsetSeq, end: i64) -> Option<Finding> {
    let newest = log.and_then(|l| l.listed.keys().next_back().copied()).unwrap_or(-1);
    if newest.checked_add(1)? != end {
        return None;
    }
    let dir = log.map(|l| l.dir.clone()).unwrap_or_else(|| format!("sources/{index}"));
    let interval = log.map(|l| l.compact_interval).unwrap_or(DEFAULT_INTERVAL);
    let lost = batch_id_to_path(&dir, end, interval);
    let ends = if newest < 0 { format!("{dir}/ has no file") } else { format!("the log ends at batch {newest}") };
    let since = latest.metadata.as_ref().and_then(|m| m.batch_timestamp_ms).map(crate::time::utc);
    let arrived = match &since {
        Some(t) => format!("the files of the source's folder that {dir}/ does not list (those that arrived after batch {last} ran, {t}; a file renamed into the folder keeps its older modification time)"),
        None => format!("the files of the source's folder that {dir}/ does not list (those that arrived after batch {last} ran)"),
    };
    Some(
        Finding::new(
            Code::SourceFilesSkipped,
            Severity::Warning,
            format!("File source log of source {index} lost {lost}: the query resumes, but the files that arrived while it was down will be skipped"),
        )
        .evidence(
            &dir,
            format!("offsets/{last} records logOffset {end}, as offsets/{} did (batch {last} read no new file); {ends}", last - 1),
            None,
        )
        .why(format!(
            "The file source restarts its log after the newest file it finds (batch {newest}) and knows only the files that log lists. Its first listing logs batch {end}'s own files, with every file that arrived meanwhile, as batch {end} again; that is the logOffset the checkpoint committed, so the offset does not move and no batch reads them (FileStreamSource.fetchMaxOffset). Real Spark 3.5.9, 4.1.4 and 4.3.0 resume and read none of a file that arrived before the restart."
        ))
        .fix(&[
            BACKUP.to_string(),
            format!("Restore {lost} (with its .crc file) from a backup of the checkpoint or from the storage's history (HDFS trash or snapshots, S3 object versions, ADLS or GCS soft delete), then restart."),
            format!("If it cannot be restored: before restarting, move {arrived} out of that folder; restart and let one trigger pass: it logs batch {end}'s own files, read before, as batch {end} again. Check that {lost} is there again before moving the files back (when batch {end}'s own files are gone from the folder, nothing is logged: then put one empty file in the folder first, so that {lost} is written for it); then the next batch reads the files moved back."),
        ]),
    )
}

#[cfg(test)]
mod tests {
    use crate::archive::{Archive, Limits, MemArchive};
    use crate::report::Code;
    use crate::testutil::open_fixture;
    use crate::{diagnose, Context};

    /// The files (path, bytes) of a shared fixture.
    fn fixture_files(name: &str) -> Vec<(String, Vec<u8>)> {
        let mut z = open_fixture(name);
        let paths: Vec<String> = z.entries().iter().filter(|e| !e.is_dir).map(|e| e.path.clone()).collect();
        paths.into_iter().map(|p| (p.clone(), z.read(&p, 1 << 26).unwrap())).collect()
    }

    /// A file source's logOffsets from a stranger: a range of 2^63 batches, and a log file named the largest id.
    /// The walk is bounded by the listing (no hang, no overflow), and the finding names the first missing ones.
    #[test]
    fn a_huge_log_offset_range_is_walked_no_further_than_the_listing() {
        let mut files = fixture_files("ss-3.5.9-stateless");
        let set_offset = |files: &mut Vec<(String, Vec<u8>)>, path: &str, offset: &str| {
            let f = files.iter_mut().find(|(p, _)| p == path).unwrap();
            let text = String::from_utf8(f.1.clone()).unwrap();
            let mut lines: Vec<&str> = text.lines().collect();
            lines[2] = offset;
            f.1 = lines.join("\n").into_bytes();
        };
        set_offset(&mut files, "offsets/3", &format!("{{\"logOffset\":{}}}", i64::MAX));
        set_offset(&mut files, "offsets/2", "{\"logOffset\":0}");
        files.retain(|(p, _)| !p.starts_with("offsets/.") && p != "sources/0/3" && p != "sources/0/.3.crc");
        files.push((format!("sources/0/{}", i64::MAX), b"v1\n".to_vec()));
        let mut a = MemArchive::new("t", files, Limits::default()).unwrap();
        let r = diagnose(&mut a, &Context::default());
        let f = r.checkpoints[0].findings.iter().find(|f| f.code == Code::SourceLogBatchMissing).expect("the finding");
        assert!(f.title.contains("sources/0/3") && f.title.contains("more"), "{}", f.title);
    }

    /// Offsets files in the v2 layout name their sources, in map order: the previous batch's logOffset is the
    /// same-named source's, wherever its line is (a pairing by position would read another source's offset and
    /// miss the deleted batch file).
    #[test]
    fn a_v2_layout_source_is_paired_by_name_with_the_previous_offsets_file() {
        let mut files = fixture_files("ss-3.5.9-stateless");
        let kafka = "9:{\"t\":{\"0\":5}}";
        for (path, other_first) in [("offsets/2", true), ("offsets/3", false)] {
            let f = files.iter_mut().find(|(p, _)| p == path).unwrap();
            let text = String::from_utf8(f.1.clone()).unwrap();
            let lines: Vec<&str> = text.lines().collect();
            let file = format!("0:{}", lines[2]);
            let (a, b) = if other_first { (kafka, file.as_str()) } else { (file.as_str(), kafka) };
            f.1 = format!("v2\n{}\n{a}\n{b}", lines[1]).into_bytes();
        }
        files.retain(|(p, _)| !p.starts_with("offsets/.") && p != "sources/0/3" && p != "sources/0/.3.crc");
        let mut a = MemArchive::new("t", files, Limits::default()).unwrap();
        let ctx = Context { spark_version: Some("4.3.0".parse().unwrap()), ..Default::default() };
        let r = diagnose(&mut a, &ctx);
        let f = r.checkpoints[0].findings.iter().find(|f| f.code == Code::SourceLogBatchMissing).expect("the finding");
        assert!(f.title.contains("sources/0/3") && f.title.contains("from logOffset 3 to 3"), "{}", f.title);
    }
}
