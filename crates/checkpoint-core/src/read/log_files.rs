//! Stage 2, the log files: `metadata`, the offset and commit logs (newest batches first, within a byte budget,
//! with bounded memory), the files in `offsets/` and `commits/` that Spark's listing ignores, and the leftover
//! `.<name>.<uuid>.tmp` files of interrupted atomic writes anywhere under the root.

use super::listing::batch_files;
use super::{dir_of, name_of, sidecars, unreadable, Reader, KEEP_FULL_OFFSETS, MAX_LOG_BYTES};
use crate::log::{self, LogError};
use crate::model::{Checkpoint, LogFile, Problem, ReadFile, TempFile};
use crate::state_files::{self, FileRef};
use std::collections::{BTreeMap, BTreeSet};

/// Reads `metadata`, when listed.
pub(crate) fn read_metadata(cp: &mut Checkpoint, rd: &mut Reader<'_>) {
    if let Some(size) = cp.file_size("metadata") {
        let content = match rd.read("metadata", MAX_LOG_BYTES) {
            Ok(b) => {
                sidecars::verify(cp, rd, "metadata", &b);
                log::metadata::parse(&b)
            }
            Err(e) => Err(unreadable(&e)),
        };
        cp.metadata = Some(ReadFile { path: "metadata".into(), size, content });
    }
}

/// `.<batch>.<uuid>.tmp` → the batch id an offsets temp file was meant to become.
fn temp_target_batch(name: &str) -> Option<i64> {
    if !state_files::is_temp_file(name) {
        return None;
    }
    let inner = name.get(1..name.len().saturating_sub(4))?;
    let target = match inner.rfind('.') {
        Some(i) if i > 0 => &inner[..i],
        _ => inner,
    };
    log::parse_batch_file_name(target, false).map(|(b, _)| b)
}

/// Keeps memory bounded by what a check needs, per offsets file as it is read (newest first): the source
/// offsets of the newest [`KEEP_FULL_OFFSETS`] readable files, of the last committed batch (the restart plan's
/// start) and of the batches an `offsets/` temp file targets stay whole (`whole`); elsewhere valid JSON offsets
/// are dropped (`elided`) and invalid ones cut to 1 KiB (still reported). Recorded confs are kept only for the
/// latest readable file (`drop_conf` for the others).
fn elide(o: &mut crate::log::offsets::OffsetSeq, drop_conf: bool, whole: bool) {
    if drop_conf {
        if let Some(m) = &mut o.metadata {
            m.conf = BTreeMap::new();
        }
    }
    if whole {
        return;
    }
    for s in &mut o.offsets {
        if s.json.is_some() {
            s.json = None;
            s.raw = None;
            s.elided = true;
        } else if let Some(r) = &mut s.raw {
            if r.len() > 1024 {
                let mut end = 1024;
                while !r.is_char_boundary(end) {
                    end -= 1;
                }
                r.truncate(end);
            }
        }
    }
}

/// Source offsets of older batches kept one by one in all (besides the files kept whole): far more than the
/// handful of sources of a query times the thousands of batches the log budget reads, while a log budget of
/// offsets files made of short source lines (one byte each) would otherwise hold millions of them (about 100
/// bytes each). The source lines of files read after it is spent are counted ([`log::offsets::OffsetSeq::not_kept`]).
pub const MAX_KEPT_SOURCE_OFFSETS: usize = 200_000;

/// Offsets and commits files of the newest batches read before the verdict at least
/// (`LogReading::read_verdict`): the latest batches' files, which a restart and the checks of recent
/// history read. Older ones are read after it.
pub const VERDICT_LOG_FILES: usize = 64;

/// Reads `offsets/` and `commits/`: newest batches first, a batch's commit before its offsets, within the log
/// budget. A restart reads only the latest offsets/commits, so older ones beyond the budget are listed
/// ([`LogError::NotRead`]), not read.
///
/// The files in the order they are read and how far reading got, so that reading can stop once what a restart reads is in
/// ([`LogReading::read_verdict`]) and go on later where it stopped ([`LogReading::read_rest`]): read in two
/// calls or in one, the files end the same (the second call is the first one's continuation, in the same
/// order and with the same budget).
pub(crate) struct LogReading {
    /// `(batch id, is offsets, path, size)`, in reading order.
    todo: Vec<(i64, bool, String, u64)>,
    /// Position in `todo` of the next file to read.
    next: usize,
    log_budget: u64,
    /// Bytes of the budget left.
    left: u64,
    last_commit_listed: Option<i64>,
    /// Batches an `offsets/` temp file targets: their offsets are kept whole.
    temp_targets: BTreeSet<i64>,
    /// The two newest offsets files and the newest commit: read whatever the budget.
    must_offsets: [Option<i64>; 2],
    readable_seen: usize,
    start_found: bool,
    /// Source offsets kept one by one so far, in all offsets files read ([`MAX_KEPT_SOURCE_OFFSETS`]).
    sources_kept: usize,
    /// Position in `todo` up to which the archive was told what is read next ([`Reader::prefetch`]).
    hinted_to: usize,
    /// Bytes (as listed) of the next prefetch hint's files: [`FIRST_HINT_BYTES`], doubling up to
    /// [`MAX_HINT_BYTES`].
    hint_bytes: u64,
}

/// The first prefetch hint of the log stage names files of about this many bytes (as listed): what the verdict
/// needs, about 50 offsets and commits files.
const FIRST_HINT_BYTES: u64 = 64 * 1024;
/// Each hint names twice the bytes of the one before, up to this (and at most [`MAX_HINT_FILES`] files). A
/// browser pays about a millisecond per `Blob` slice whatever its size up to hundreds of KiB: hints of 512
/// files made 158 slices of the logs of a 20,000-batch checkpoint, these make about 16. With their zip headers
/// and sidecars, the files of a hint stay within what the page fetches for one hint (half its 8 MiB cache), even
/// when the zip stores them uncompressed.
const MAX_HINT_BYTES: u64 = 2 * 1024 * 1024;
/// Files one hint names at most.
const MAX_HINT_FILES: usize = 8192;

impl LogReading {
    /// The files of `cp`'s listing, none read yet.
    pub(crate) fn new(cp: &Checkpoint, log_budget: u64) -> Self {
        let mut todo: Vec<(i64, bool, String, u64)> = batch_files(cp, "offsets", false)
            .into_iter()
            .map(|(id, _, p, s)| (id, true, p, s))
            .chain(batch_files(cp, "commits", false).into_iter().map(|(id, _, p, s)| (id, false, p, s)))
            .collect();
        todo.sort_by(|a, b| b.0.cmp(&a.0).then(a.1.cmp(&b.1)));
        let last_commit_listed = todo.iter().filter(|t| !t.1).map(|t| t.0).max();
        let temp_targets: BTreeSet<i64> = cp
            .files
            .iter()
            .filter(|f| dir_of(&f.path) == "offsets")
            .filter_map(|f| temp_target_batch(name_of(&f.path)))
            .collect();
        // What a restart reads is always read, whatever the budget (else the verdict would rest on older files):
        // the latest two offsets files and the latest commit.
        let mut newest_offsets = todo.iter().filter(|t| t.1).map(|t| t.0);
        let must_offsets = [newest_offsets.next(), newest_offsets.next()];
        LogReading {
            todo,
            next: 0,
            log_budget,
            left: log_budget,
            last_commit_listed,
            temp_targets,
            must_offsets,
            readable_seen: 0,
            start_found: false,
            sources_kept: 0,
            hinted_to: 0,
            hint_bytes: FIRST_HINT_BYTES,
        }
    }

    /// Reads the files a restart reads (the latest two offsets files, the latest commit, the offsets of the
    /// batch it starts from), the newest offsets file that parses (later stages take the source kinds and the
    /// recorded confs from it), and the newest `at_least` (default [`VERDICT_LOG_FILES`]); the others are
    /// listed with [`LogError::Deferred`] until [`LogReading::read_rest`] reads them.
    pub(crate) fn read_verdict(&mut self, cp: &mut Checkpoint, rd: &mut Reader<'_>, at_least: usize) {
        let must_end = self
            .todo
            .iter()
            .rposition(
                |t| if t.1 { self.must_offsets.contains(&Some(t.0)) } else { Some(t.0) == self.last_commit_listed },
            )
            .map_or(0, |i| i + 1);
        let end = must_end.max(at_least);
        // Later stages read the newest readable offsets file (its source kinds, its recorded confs): it is read
        // before the verdict too, however many newer ones do not parse.
        while self.next < self.todo.len()
            && (self.next < end || self.readable_seen == 0 || (!self.start_found && self.last_commit_listed.is_some()))
        {
            self.read_next(cp, rd);
        }
        for (id, is_offsets, path, size) in self.todo[self.next..].iter().cloned() {
            let file = ReadFile { path, size, content: Err(LogError::Deferred) };
            if is_offsets {
                cp.offsets.insert(id, LogFile { batch_id: id, compact: false, file });
            } else {
                let file = ReadFile { path: file.path, size, content: Err(LogError::Deferred) };
                cp.commits.insert(id, LogFile { batch_id: id, compact: false, file });
            }
        }
    }

    /// Reads every file not read yet, in order.
    pub(crate) fn read_rest(&mut self, cp: &mut Checkpoint, rd: &mut Reader<'_>) {
        // Files hinted before the verdict and not read then are hinted again: the archive may have dropped what
        // it fetched for them while the later stages read.
        self.hinted_to = self.hinted_to.min(self.next);
        while self.next < self.todo.len() {
            self.read_next(cp, rd);
        }
    }

    /// Files of `offsets/` and `commits/` not read yet.
    pub(crate) fn left(&self) -> usize {
        self.todo.len() - self.next
    }

    /// True for a file read whatever the budget: one of the two newest offsets files, the newest commit.
    fn must(&self, id: i64, is_offsets: bool) -> bool {
        if is_offsets {
            self.must_offsets.contains(&Some(id))
        } else {
            Some(id) == self.last_commit_listed
        }
    }

    /// Tells the archive which files from `todo[i]` on are read next: those the budget admits (the reading's own
    /// rule, run ahead), up to `hint_bytes` of them as listed. Each file is looked at by one hint only, so the
    /// hints of a whole log are linear in its files however few the budget admits.
    fn hint(&mut self, cp: &Checkpoint, rd: &mut Reader<'_>, i: usize) {
        let mut left = self.left;
        let (mut bytes, mut files) = (0u64, 0usize);
        let mut end = i;
        let mut paths = Vec::new();
        while end < self.todo.len() && files < MAX_HINT_FILES && bytes < self.hint_bytes {
            let (id, is_offsets, ref path, size) = self.todo[end];
            end += 1;
            if size > left && !self.must(id, is_offsets) {
                continue;
            }
            left = left.saturating_sub(size);
            bytes = bytes.saturating_add(size);
            files += 1;
            paths.push(path.as_str());
        }
        rd.prefetch(cp, paths);
        self.hinted_to = end;
        self.hint_bytes = (self.hint_bytes * 2).min(MAX_HINT_BYTES);
    }

    /// Reads the file at `next`, first telling the archive the next files it reads when it was not told yet.
    fn read_next(&mut self, cp: &mut Checkpoint, rd: &mut Reader<'_>) {
        let i = self.next;
        self.next += 1;
        if i >= self.hinted_to {
            self.hint(cp, rd, i);
        }
        let (id, is_offsets, path, size) = self.todo[i].clone();
        let must = self.must(id, is_offsets);
        let bytes = if size > self.left && !must {
            Err(LogError::NotRead { budget: self.log_budget })
        } else {
            self.left = self.left.saturating_sub(size);
            rd.read(&path, MAX_LOG_BYTES).map_err(|e| unreadable(&e))
        };
        if let Ok(b) = &bytes {
            sidecars::verify(cp, rd, &path, b);
        }
        if is_offsets {
            // The recorded confs are kept for the latest readable file only (`elide`): older ones are checked,
            // not built.
            // Source offsets are kept one by one up to `MAX_SOURCE_OFFSETS` per file and, beyond the files kept
            // whole, `MAX_KEPT_SOURCE_OFFSETS` in all; the other source lines are counted.
            let is_start = !self.start_found && self.last_commit_listed.is_some_and(|c| id <= c);
            let whole = self.readable_seen < KEEP_FULL_OFFSETS || is_start || self.temp_targets.contains(&id);
            let max_sources = if whole {
                log::offsets::MAX_SOURCE_OFFSETS
            } else {
                MAX_KEPT_SOURCE_OFFSETS.saturating_sub(self.sources_kept)
            };
            let mut content = bytes.and_then(|b| log::offsets::parse_with(&b, self.readable_seen == 0, max_sources));
            if let Ok(o) = &mut content {
                self.start_found |= is_start;
                self.sources_kept += o.offsets.len();
                // Bounded memory: decided per file while reading, so at most the kept batches and one being
                // parsed are held whole.
                elide(o, self.readable_seen > 0, whole);
                self.readable_seen += 1;
            }
            cp.offsets.insert(id, LogFile { batch_id: id, compact: false, file: ReadFile { path, size, content } });
        } else {
            let content = bytes.and_then(|b| log::commits::parse(&b));
            cp.commits.insert(id, LogFile { batch_id: id, compact: false, file: ReadFile { path, size, content } });
        }
    }
}

/// Files in `offsets/` and `commits/` that Spark's listing ignores (not a batch id, not a sidecar or temp
/// file): a problem each.
pub(crate) fn note_unlisted_log_files(cp: &mut Checkpoint) {
    for f in &cp.files {
        let dir = dir_of(&f.path);
        let name = name_of(&f.path);
        if (dir == "offsets" || dir == "commits")
            && log::parse_batch_file_name(name, false).is_none()
            && !name.ends_with(".crc")
            && !state_files::is_temp_file(name)
        {
            cp.problems.push(Problem {
                path: f.path.clone(),
                offset: None,
                reason: if name.parse::<i64>().is_ok() {
                    format!(
                        "{name:?} is a batch id Spark never writes (outside 0..2^60); a hand-made file, not read here"
                    )
                } else {
                    format!("{name:?} is not a batch file name; Spark's log listing ignores it")
                },
            });
        }
    }
}

/// Bytes of temp files (`offsets/` and file log copies) read per checkpoint, as listed; the others are not
/// read ([`LogError::NotVerified`]). A real leftover is one or two files of a few KiB.
pub const MAX_TEMP_BYTES_READ: u64 = 64 * 1024 * 1024;
/// Bytes of entries ([`log::file_log::entry_cost`]) of file log temp copies kept in all: they name the files a
/// losing writer listed; the comparison with the renamed file needs none ([`log::file_log::FileLogBatch::paths_digest`]).
pub const MAX_TEMP_ENTRY_BYTES: u64 = 4 * 1024 * 1024;

/// Temp files anywhere under the root; those in `offsets/` and in file logs are parsed. Returns, per file log
/// folder, the batch ids its temp files target (the file log stage reads those batches too).
pub(crate) fn read_temp_files(cp: &mut Checkpoint, rd: &mut Reader<'_>) -> BTreeMap<String, BTreeSet<i64>> {
    let temps: Vec<FileRef> =
        cp.files.iter().filter(|f| state_files::is_temp_file(name_of(&f.path))).cloned().collect();
    let mut temp_targets: BTreeMap<String, BTreeSet<i64>> = BTreeMap::new();
    let mut bytes_left = MAX_TEMP_BYTES_READ;
    let mut keep_left = MAX_TEMP_ENTRY_BYTES;
    for t in temps {
        let name = name_of(&t.path);
        let dir = dir_of(&t.path).to_string();
        // `.<final>.<uuid>[.TID<n>].tmp` (`CheckpointFileManager.generateTempPath`: a task adds its attempt id)
        let inner = name.get(1..name.len().saturating_sub(4)).unwrap_or("");
        let inner = match inner.rfind(".TID") {
            Some(i) if i > 0 && inner[i + 4..].bytes().all(|b| b.is_ascii_digit()) && inner.len() > i + 4 => {
                &inner[..i]
            }
            _ => inner,
        };
        let target = match inner.rfind('.') {
            Some(i) if i > 0 => inner[..i].to_string(),
            _ => inner.to_string(),
        };
        let in_file_log = dir.starts_with("sources/") || dir.ends_with("_spark_metadata");
        let target_batch = log::parse_batch_file_name(&target, in_file_log).map(|(b, _)| b);
        let mut tf = TempFile {
            path: t.path.clone(),
            size: t.size,
            dir: dir.clone(),
            target,
            target_batch,
            offsets: None,
            file_log: None,
        };
        if in_file_log {
            if let Some(b) = target_batch {
                temp_targets.entry(dir.clone()).or_default().insert(b);
            }
        }
        if dir == "offsets" || in_file_log {
            let over = t.size > bytes_left;
            bytes_left = bytes_left.saturating_sub(t.size);
            let not_read = || LogError::NotVerified {
                reason: format!(
                    "not read: past the {} MiB of temp files this inspector reads per checkpoint",
                    MAX_TEMP_BYTES_READ >> 20
                ),
            };
            if dir == "offsets" {
                let parsed =
                    if over { Err(not_read()) } else { rd.read(&t.path, MAX_LOG_BYTES).map_err(|e| unreadable(&e)) };
                tf.offsets = Some(parsed.and_then(|b| log::offsets::parse(&b)));
            } else if over {
                tf.file_log = Some(Err(not_read()));
            } else {
                // Read in pieces; its entries kept within a small budget of their own (two copies of a batch
                // compare by their paths' digest).
                let mut parser = log::file_log::Parser::new(keep_left, super::MAX_FILE_LOG_LINE);
                let read = rd.read_each(&t.path, MAX_LOG_BYTES, &mut |piece| parser.push(piece));
                let parsed = read.map_err(|e| unreadable(&e)).and_then(|_| parser.finish());
                if let Ok(b) = &parsed {
                    let kept: u64 = b.entries.iter().map(log::file_log::entry_cost).sum();
                    keep_left = if b.complete() { keep_left.saturating_sub(kept) } else { 0 };
                }
                tf.file_log = Some(parsed);
            }
        }
        cp.temp_files.push(tf);
    }
    temp_targets
}
