//! Stage 3, the file logs: `sources/<n>/` of file sources and any `_spark_metadata/` below the root (a file
//! sink's log). Small logs are read whole; big ones as Spark reads them on restart (the newest compaction and
//! the batches after it) plus the latest two files and the batches a temp file targets.

use super::listing::{batch_files, batch_files_at, files_below, files_by_dir, paths_sorted};
use super::{dir_of, sidecars, unreadable, Reader, MAX_LOG_BYTES};
use crate::log;
use crate::log::file_log::FileLogBatch;
use crate::log::LogError;
use crate::model::{Checkpoint, FileLog, LogFile, ReadFile};
use std::collections::{BTreeMap, BTreeSet};

/// Reads the file logs; `temp_targets` = per log folder, the batch ids its temp files target.
pub(crate) fn read_file_logs(cp: &mut Checkpoint, rd: &mut Reader<'_>, temp_targets: &BTreeMap<String, BTreeSet<i64>>) {
    // Spark 4.3's named sources (`.name("src_a")`, offsets v2 lines `src_a:{...}`) keep their log in
    // `sources/<name>/`: the name's position in the latest readable offsets is the source's number.
    let names: BTreeMap<String, u32> = cp
        .latest_readable_offsets()
        .map(|(_, o)| {
            // A numeric name is the folder's number already (`sources/<n>`).
            let named = o
                .offsets
                .iter()
                .enumerate()
                .filter(|(_, s)| s.name.as_deref().is_some_and(|n| n.parse::<u32>().is_err()));
            named.filter_map(|(i, s)| Some((s.name.clone()?, s.folder_number(i)?))).collect()
        })
        .unwrap_or_default();
    let source_of = |d: &str| source_index(d, &names);
    // The files of every log folder, found in one pass over the listing.
    let log_dirs = files_by_dir(cp, |d| source_of(d).is_some() || is_sink_log_dir(d));
    // The output files of the sink logs are found by prefix in the listing sorted once.
    let sorted = if log_dirs.keys().any(|d| is_sink_log_dir(d)) { paths_sorted(cp) } else { Vec::new() };
    // Which sources are file sources: from the latest readable offsets; without one, by sniffing the
    // newest file of the directory (file source entries carry a "path").
    let source_kinds: BTreeMap<u32, crate::source::SourceKind> = cp
        .latest_readable_offsets()
        .map(|(_, o)| o.offsets.iter().enumerate().map(|(i, s)| (i as u32, s.kind)).collect())
        .unwrap_or_default();
    for (d, positions) in log_dirs {
        let listed_v = batch_files_at(cp, &positions, true);
        if let Some(n) = source_of(&d) {
            use crate::source::SourceKind as K;
            let is_file_source = match source_kinds.get(&n) {
                Some(K::File) => true,
                Some(K::None) | None => match listed_v.last() {
                    Some((_, _, p, _)) => {
                        rd.read(p, MAX_LOG_BYTES).map(|b| b.windows(7).any(|w| w == b"\"path\"")).unwrap_or(true)
                    }
                    None => false,
                },
                Some(_) => false,
            };
            if !is_file_source {
                // Kafka's initial offsets (`sources/<n>/0`) are read; other sources' own metadata is listed.
                let files = positions.iter().filter_map(|&i| cp.files.get(i)).cloned().collect();
                cp.other_source_dirs.insert(n, files);
                if source_kinds.get(&n) == Some(&K::Kafka) {
                    read_initial_offsets(cp, rd, n);
                }
                continue;
            }
        }
        let fl = read_file_log(cp, rd, &d, &listed_v, temp_targets.get(&d), &sorted);
        if let Some(n) = source_of(&d) {
            cp.source_logs.insert(n, fl);
        } else {
            cp.sink_logs.push(fl);
        }
    }
}

/// The source number of `sources/<n>` (`n` a number) or `sources/<name>` (a name of the latest offsets, v2, at
/// its position there): a source's own log folder.
fn source_index(d: &str, names: &BTreeMap<String, u32>) -> Option<u32> {
    let n = d.strip_prefix("sources/").filter(|n| !n.contains('/'))?;
    n.parse::<u32>().ok().or_else(|| names.get(n).copied())
}

/// `_spark_metadata` at any depth: a file sink's log.
fn is_sink_log_dir(d: &str) -> bool {
    d == "_spark_metadata" || d.ends_with("/_spark_metadata")
}

/// Reads a Kafka source's `sources/<n>/0` (its starting offsets), when present.
fn read_initial_offsets(cp: &mut Checkpoint, rd: &mut Reader<'_>, n: u32) {
    let path = format!("sources/{n}/0");
    let Some(size) = cp.file_size(&path) else { return };
    let content = match rd.read(&path, MAX_LOG_BYTES) {
        Ok(b) => log::source_meta::parse_initial_offsets(&b),
        Err(e) => Err(unreadable(&e)),
    };
    cp.source_initial_offsets.insert(n, ReadFile { path, size, content });
}

/// Reads Auto Loader schema files (`_schemas/<n>`, at any depth under the root; the newest 100 versions).
pub(crate) fn read_schema_log(cp: &mut Checkpoint, rd: &mut Reader<'_>) {
    let mut found: Vec<(i64, String, u64)> = cp
        .files
        .iter()
        .filter(|f| {
            let d = dir_of(&f.path);
            d == "_schemas" || d.ends_with("/_schemas")
        })
        .filter_map(|f| super::name_of(&f.path).parse::<i64>().ok().map(|v| (v, f.path.clone(), f.size)))
        .collect();
    found.sort();
    let skip = found.len().saturating_sub(100);
    for (v, path, size) in found.into_iter().skip(skip) {
        let content = match rd.read(&path, MAX_LOG_BYTES) {
            Ok(b) => log::source_meta::parse_schema_file(&b),
            Err(e) => Err(unreadable(&e)),
        };
        cp.schema_log.insert(v, ReadFile { path, size, content });
    }
}

/// Reads one file log folder `d` whose batch files are `listed_v`.
fn read_file_log(
    cp: &mut Checkpoint,
    rd: &mut Reader<'_>,
    d: &str,
    listed_v: &[(i64, bool, String, u64)],
    temp_targets: Option<&BTreeSet<i64>>,
    sorted: &[usize],
) -> FileLog {
    let compact_ids: Vec<i64> = listed_v.iter().filter(|x| x.1).map(|x| x.0).collect();
    let interval = log::file_log::infer_compact_interval(&compact_ids, 10);
    let listed: BTreeMap<i64, (String, u64, bool)> =
        listed_v.iter().map(|(id, c, p, s)| (*id, (p.clone(), *s, *c))).collect();
    let want = reading_order(&listed, interval, temp_targets);
    let mut read = BTreeMap::new();
    let hinted: Vec<&str> = want.iter().filter_map(|id| listed.get(id)).map(|(p, _, _)| p.as_str()).collect();
    for (i, id) in want.iter().copied().enumerate() {
        if i % super::PREFETCH_FILES == 0 {
            rd.prefetch(cp, hinted.iter().skip(i).take(super::PREFETCH_FILES).copied());
        }
        let Some((path, size, compact)) = listed.get(&id).cloned() else {
            continue;
        };
        let content = read_streamed(cp, rd, &path, size);
        read.insert(id, LogFile { batch_id: id, compact, file: ReadFile { path, size, content } });
    }
    let output_files = if d.starts_with("sources/") { None } else { output_files(cp, sorted, d) };
    FileLog { dir: d.to_string(), listed, compact_interval: interval, read, output_files }
}

/// The batch files of a file log to read, in the order they are read (the entry and byte budgets go to the
/// first): the files Spark reads on restart (`allFiles` up to the latest batch: the newest `.compact` and the
/// batches after it), newest first, so that the last batches, which a restart plans again, are kept whole
/// before an older compaction; then the batches temp files target; then, in a log of at most 64 files, every
/// other file, else the latest two; newest first.
fn reading_order(
    listed: &BTreeMap<i64, (String, u64, bool)>,
    interval: i64,
    temp_targets: Option<&BTreeSet<i64>>,
) -> Vec<i64> {
    let Some(&latest) = listed.keys().next_back() else { return Vec::new() };
    let (compact, range) = log::file_log::files_needed(latest, interval);
    let mut order: Vec<i64> = Vec::new();
    let mut seen = BTreeSet::new();
    let mut add = |id: i64, order: &mut Vec<i64>| {
        if listed.contains_key(&id) && seen.insert(id) {
            order.push(id);
        }
    };
    if range.start() <= range.end() {
        for id in listed.range(range).rev().map(|(i, _)| *i).take(1000) {
            add(id, &mut order);
        }
    }
    if let Some(c) = compact {
        add(c, &mut order);
    }
    for &t in temp_targets.into_iter().flatten() {
        add(t, &mut order);
    }
    let rest = if listed.len() <= 64 { listed.len() } else { 2 };
    for &id in listed.keys().rev().take(rest) {
        add(id, &mut order);
    }
    order
}

/// Reads one batch file of a file log in pieces, line by line (a `.compact` can be hundreds of MB): its sidecars
/// first, then its bytes handed to the sidecar sums and the parser together. `size` (as listed) is charged to
/// the input's file log bytes ([`Reader::file_log_bytes_left`]) before reading; past them the file is not read
/// ([`LogError::NotVerified`]). Its entries are kept while `rd.entries_left` lasts, then only counted; once one
/// is not kept, no later file keeps any (what is kept is a prefix in reading order).
fn read_streamed(cp: &mut Checkpoint, rd: &mut Reader<'_>, path: &str, size: u64) -> Result<FileLogBatch, LogError> {
    charge_file_log_bytes(rd, size)?;
    let side = sidecars::Sidecars::read(cp, rd, path);
    let mut sums = side.verifier();
    let mut parser = log::file_log::Parser::new(rd.entries_left, super::MAX_FILE_LOG_LINE);
    let read = rd.read_each(path, super::MAX_FILE_LOG_BYTES, &mut |piece| {
        sums.update(piece);
        parser.push(piece);
    });
    match read {
        Ok(_) => {
            let results = sums.finish();
            side.record(cp, rd, path, results);
            let batch = parser.finish();
            if let Ok(b) = &batch {
                let kept: u64 = b.entries.iter().map(log::file_log::entry_cost).sum();
                rd.entries_left = if b.complete() { rd.entries_left.saturating_sub(kept) } else { 0 };
            }
            batch
        }
        Err(e) => Err(super::unreadable_capped(&e, super::MAX_FILE_LOG_BYTES)),
    }
}

/// What a file log file past the input's file log bytes ([`crate::Context::file_log_bytes`]) is said to be.
pub const PAST_FILE_LOG_BYTES: &str = "past the bytes of file source and sink log files this inspector reads per input";

/// Charges a file log file of `size` bytes (as listed) to the input's file log bytes before it is read, or
/// says it is past them.
pub(crate) fn charge_file_log_bytes(rd: &mut Reader<'_>, size: u64) -> Result<(), LogError> {
    let cost = size.min(super::MAX_FILE_LOG_BYTES);
    if cost > rd.file_log_bytes_left {
        return Err(LogError::NotVerified { reason: format!("not read: {PAST_FILE_LOG_BYTES}") });
    }
    rd.file_log_bytes_left -= cost;
    Ok(())
}

/// The data files of the output folder holding the sink log `d` (`<out>/_spark_metadata`): every listed file
/// below `<out>` outside `_spark_metadata`, without hidden (`.`) or metadata (`_`) names at any level, as
/// Spark's `InMemoryFileIndex` skips them. `None` when there is none. `sorted` is [`paths_sorted`]'s.
fn output_files(cp: &Checkpoint, sorted: &[usize], d: &str) -> Option<BTreeMap<String, u64>> {
    let out = d.strip_suffix("_spark_metadata").unwrap_or(d);
    let files: BTreeMap<String, u64> = files_below(cp, sorted, out)
        .filter_map(|f| f.path.strip_prefix(out).map(|rel| (rel, f.size)))
        .filter(|(rel, _)| !rel.split('/').any(|c| c.starts_with('.') || c.starts_with('_') || c.is_empty()))
        .map(|(rel, size)| (rel.to_string(), size))
        .collect();
    (!files.is_empty()).then_some(files)
}

/// Every file sink log (`_spark_metadata/`) of an archive given beside the checkpoint (the CLI's sink-log
/// option), read as stage 3 reads one inside a root, with the input's whole file log budgets. Dirs are archive
/// paths.
pub fn read_sink_logs(archive: &mut dyn crate::archive::Archive) -> Vec<FileLog> {
    read_sink_logs_within(archive, (super::MAX_FILE_LOG_ENTRY_BYTES, super::MAX_FILE_LOG_TOTAL_BYTES))
}

/// [`read_sink_logs`] within `budget`: bytes of entries that may be kept, bytes of file log files that may be
/// read ([`crate::Context::file_log_entry_bytes`], [`crate::Context::file_log_bytes`]).
///
/// An input with neither a `_spark_metadata/` folder nor batch files at its top but with a sink's data files
/// (`part-...`: the output folder of a sink whose log was deleted) gives one sink log with no batch,
/// `_spark_metadata`, with those files as its output: a file sink writes its log anew there, and its next
/// compaction batch fails. A Delta table (`_delta_log/`) or a checkpoint (`metadata`, `offsets/`, `commits/`) gives
/// none.
pub fn read_sink_logs_within(archive: &mut dyn crate::archive::Archive, budget: (u64, u64)) -> Vec<FileLog> {
    let mut left = budget;
    let logs = read_sink_logs_outside(archive, &[], &mut left);
    if !logs.is_empty() {
        return logs;
    }
    let root = crate::layout::Root { path: String::new(), kind: crate::report::CheckpointKind::Unknown };
    let cp = super::listing::list(archive.entries(), &root);
    // Not a file sink's output: a Delta table, a checkpoint, or a folder without a data file a sink names
    // `part-<n>-<uuid>...` (FileFormatWriter), such as a source's input folder.
    let top = |name: &str| cp.files.iter().any(|f| f.path == name || f.path.starts_with(&format!("{name}/")));
    if top("_delta_log") || top("metadata") || top("offsets") || top("commits") {
        return Vec::new();
    }
    let sorted = paths_sorted(&cp);
    match output_files(&cp, &sorted, "_spark_metadata")
        .filter(|files| files.keys().any(|p| p.rsplit('/').next().is_some_and(|n| n.starts_with("part-"))))
    {
        Some(files) => vec![FileLog {
            dir: "_spark_metadata".into(),
            listed: BTreeMap::new(),
            compact_interval: 10,
            read: BTreeMap::new(),
            output_files: Some(files),
        }],
        None => Vec::new(),
    }
}

/// [`read_sink_logs`] of the sink logs that are not below one of `inside` (checkpoint roots' folders with a
/// trailing `/`, `""` = the archive top: a root reads its own), within `left` (bytes of entries that may be
/// kept, bytes of file log files that may be read; what is spent is taken off).
pub fn read_sink_logs_outside(
    archive: &mut dyn crate::archive::Archive,
    inside: &[String],
    left: &mut (u64, u64),
) -> Vec<FileLog> {
    let root = crate::layout::Root { path: String::new(), kind: crate::report::CheckpointKind::Unknown };
    let mut cp = super::listing::list(archive.entries(), &root);
    let mut rd = Reader {
        archive,
        prefix: String::new(),
        budget_left: 0,
        rows_read: Default::default(),
        inaccessible: Vec::new(),
        entries_left: left.0,
        file_log_bytes_left: left.1,
    };
    let below_root = |d: &str| inside.iter().any(|p| d.starts_with(p.as_str()));
    let dirs = files_by_dir(&cp, |d| is_sink_log_dir(d) && !below_root(d) && !crate::layout::is_finder_metadata(d));
    let sorted = if dirs.is_empty() { Vec::new() } else { paths_sorted(&cp) };
    let mut out = Vec::new();
    for (d, positions) in &dirs {
        let listed_v = batch_files_at(&cp, positions, true);
        out.push(read_file_log(&mut cp, &mut rd, d, &listed_v, None, &sorted));
    }
    // The `_spark_metadata` folder itself was given: its batch files are at the top.
    let top = if inside.iter().any(String::is_empty) { Vec::new() } else { batch_files(&cp, "", true) };
    if dirs.is_empty() && !top.is_empty() {
        let mut log = read_file_log(&mut cp, &mut rd, "", &top, None, &sorted);
        log.dir = "_spark_metadata".into();
        log.output_files = None;
        out.push(log);
    }
    *left = (rd.entries_left, rd.file_log_bytes_left);
    out
}
