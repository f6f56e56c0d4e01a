//! The read stage: builds a [`Checkpoint`] from an [`Archive`] for one root. It lists everything once, reads
//! the small log files, verifies the sidecars of what it reads, and reads the state files a restart would load
//! (for their checksums and integrity, and their rows within a byte budget). Per-file reads are capped; a file
//! that cannot be read becomes a problem (path, offset, reason) and reading goes on.
//!
//! The stages, in order (each its own file): [`listing`] (files, folders, the `state/` tree, the sidecar
//! index), [`log_files`] (metadata, offsets, commits, temp files), [`file_logs`] (`sources/<n>/`,
//! `_spark_metadata/`), [`state_meta`] (operator metadata, schema files), [`state_chains`] (every store's
//! restart chain, planned once into the model; when asked, its files read), [`state_rows`] (row checks) and [`state_growth`].
//! [`sidecars`] verifies the `.crc` and checksum files of every file a stage reads. A DStream root has one
//! stage after the listing: [`dstream`] (its `checkpoint-<ms>` files).
//!
//! The read stage reads; it never judges (that is `checks/`).

use crate::archive::{Archive, ArchiveError};
use crate::layout::Root;
use crate::log::LogError;
use crate::model::Checkpoint;
use crate::report::CheckpointKind;

pub mod delta_schema_log;
pub mod dstream;
pub mod file_logs;
pub mod listing;
pub mod log_files;
pub mod sidecars;
pub mod state_chains;
pub mod state_growth;
pub mod state_meta;
pub mod state_rows;

/// Cap for one log file (offsets, commits, file logs, metadata).
pub const MAX_LOG_BYTES: u64 = 16 * 1024 * 1024;
/// Budget for the offsets and commits files read per checkpoint (newest batches first); files beyond it are
/// listed with [`LogError::NotRead`].
pub const MAX_TOTAL_LOG_BYTES: u64 = crate::log::MAX_TOTAL_LOG_BYTES;
/// Number of newest readable offsets files whose source offsets are kept whole (a restart reads the latest and
/// the one before it); older ones are elided.
pub const KEEP_FULL_OFFSETS: usize = 2;
/// Largest file source or sink log file read (a `.compact` of a source that read a few hundred thousand files
/// is tens of MB; Spark's own logs of long-running queries reach hundreds). It is read in pieces, line by line,
/// never whole; the archive's own per-entry limit ([`crate::archive::Limits::max_entry_bytes`]) applies too.
pub const MAX_FILE_LOG_BYTES: u64 = 1024 * 1024 * 1024;
/// Longest line of a file source or sink log read (one entry: a path and a few numbers).
pub const MAX_FILE_LOG_LINE: usize = MAX_LOG_BYTES as usize;
/// Bytes of file log entries kept in memory per archive ([`ReadOptions::file_log_entry_bytes`]): about
/// 300,000 entries of 100-byte paths.
pub const MAX_FILE_LOG_ENTRY_BYTES: u64 = 64 * 1024 * 1024;
/// Bytes of file source and sink log files read per input ([`ReadOptions::file_log_bytes`]), charged as listed
/// before each is read, whether the read succeeds or not: the files a restart reads come first
/// (`file_logs`), past this they are not verified. As much as the zip's per-entry limit (one `.compact` of
/// that size is still read), and about a second of inflating and parsing on the 2-core build machine (a
/// hostile zip of many 200 MB logs is answered in that time, at the speed of `unzip -p`).
pub const MAX_FILE_LOG_TOTAL_BYTES: u64 = 256 * 1024 * 1024;
/// Cap for one sidecar file; a Hadoop `.crc` of a bigger file gets room for its sums
/// ([`sidecar_cap`]).
pub const MAX_SIDECAR_BYTES: u64 = 1024 * 1024;

/// The cap for a sidecar of a main file of `main_size` bytes (as listed): a Hadoop `.crc` holds a 4-byte
/// sum per 512 bytes of its file (`ChecksumFileSystem`, the default `bytesPerChecksum`) after an 8-byte
/// header, so a 256 MiB file has a 2 MiB `.crc`; never less than [`MAX_SIDECAR_BYTES`].
pub fn sidecar_cap(main_size: u64) -> u64 {
    MAX_SIDECAR_BYTES.max((main_size / 128).saturating_add(64))
}
/// Cap for one state file read for integrity checks.
pub const MAX_STATE_FILE_BYTES: u64 = 256 * 1024 * 1024;

/// Default byte budget for reading state files (chain verification and row checks) in one diagnosis.
pub const DEFAULT_VERIFY_BUDGET: u64 = 256 * 1024 * 1024;

/// What [`read_checkpoint_with`] reads beyond the listing and the small log files.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ReadOptions {
    /// Read the state files a restart loads (integrity, sidecars).
    pub verify_state: bool,
    /// Decode the rows of the stores a restart loads (schema validation, event-time keys).
    pub check_rows: bool,
    /// Bytes of state that may be processed for both: stored bytes read, or decompressed bytes when larger
    /// (`u64::MAX` = no budget). Files beyond it are listed in [`Checkpoint::unverified`].
    pub budget_bytes: u64,
    /// Bytes of offsets and commits files that may be read, newest batches first (default
    /// [`MAX_TOTAL_LOG_BYTES`]); older files are listed with [`LogError::NotRead`].
    pub log_budget_bytes: u64,
    /// Offsets and commits files read before the verdict at least, by [`read_root_verdict_first`] (default
    /// [`log_files::VERDICT_LOG_FILES`]).
    pub verdict_log_files: usize,
    /// Bytes of file source and sink log entries kept in memory (default [`MAX_FILE_LOG_ENTRY_BYTES`]): every
    /// line of a file log a restart reads is checked, but entries past this are only counted
    /// ([`crate::log::file_log::FileLogBatch::not_kept`]).
    pub file_log_entry_bytes: u64,
    /// Bytes of file source and sink log files that may be read (default [`MAX_FILE_LOG_TOTAL_BYTES`]).
    pub file_log_bytes: u64,
}

impl Default for ReadOptions {
    fn default() -> Self {
        ReadOptions {
            verify_state: true,
            check_rows: true,
            budget_bytes: DEFAULT_VERIFY_BUDGET,
            log_budget_bytes: MAX_TOTAL_LOG_BYTES,
            verdict_log_files: log_files::VERDICT_LOG_FILES,
            file_log_entry_bytes: MAX_FILE_LOG_ENTRY_BYTES,
            file_log_bytes: MAX_FILE_LOG_TOTAL_BYTES,
        }
    }
}

/// Reads one checkpoint root. `verify_state` = also read the state files a restart loads (and their rows),
/// within [`DEFAULT_VERIFY_BUDGET`].
pub fn read_checkpoint(archive: &mut dyn Archive, root: &Root, verify_state: bool) -> Checkpoint {
    read_checkpoint_with(
        archive,
        root,
        &ReadOptions { verify_state, check_rows: verify_state, ..ReadOptions::default() },
    )
}

/// Reads one checkpoint root: the listing, the small log files (metadata, offsets, commits, file source and
/// sink logs, operator metadata, schema files) and, per `opts`, the state files a restart loads, within the
/// byte budget.
pub fn read_checkpoint_with(archive: &mut dyn Archive, root: &Root, opts: &ReadOptions) -> Checkpoint {
    let cp = listing::list(archive.entries(), root);
    read_listed(archive, root, cp, opts)
}

/// [`read_checkpoint_with`] for one of many roots: `members` are the positions of the root's entries in
/// [`Archive::entries`] (from [`crate::layout::members`]), so each root lists only its own entries.
pub fn read_root_members(archive: &mut dyn Archive, root: &Root, members: &[usize], opts: &ReadOptions) -> Checkpoint {
    let all = archive.entries();
    let cp = listing::list(members.iter().filter_map(|&i| all.get(i)), root);
    read_listed(archive, root, cp, opts)
}

fn read_listed(archive: &mut dyn Archive, root: &Root, cp: Checkpoint, opts: &ReadOptions) -> Checkpoint {
    read_stages(archive, root, cp, opts, true)
}

/// The older offsets and commits files of a checkpoint read by [`read_root_verdict_first`], still to read:
/// give it to [`read_history`].
pub struct History(log_files::LogReading);

impl History {
    /// Offsets and commits files not read yet.
    pub fn files_left(&self) -> usize {
        self.0.left()
    }
}

/// [`read_root_members`] with the verdict first: every stage runs, but the offset and commit logs only as far
/// as what a restart reads (the latest two offsets files, the latest commit, the offsets of the batch it
/// starts from) and the newest [`log_files::VERDICT_LOG_FILES`]; the older files are listed with
/// [`LogError::Deferred`]. [`read_history`] then reads them: the checkpoint ends as [`read_root_members`]'s
/// would (the same files, order and log budget), as long as the archive's own total read limit is not reached
/// ([`crate::diagnose_progressive`] checks that it cannot be).
pub fn read_root_verdict_first(
    archive: &mut dyn Archive,
    root: &Root,
    members: &[usize],
    opts: &ReadOptions,
) -> (Checkpoint, Option<History>) {
    let all = archive.entries();
    let cp = listing::list(members.iter().filter_map(|&i| all.get(i)), root);
    let (cp, history) = read_stages_with(archive, root, cp, opts, true, true);
    (cp, history.map(History))
}

/// Reads the offsets and commits files [`read_root_verdict_first`] left for later into `cp`.
pub fn read_history(archive: &mut dyn Archive, root: &Root, cp: &mut Checkpoint, history: History) {
    let mut reading = history.0;
    // Only log files and their sidecars are read here: no state, so no state budget.
    let mut rd = Reader {
        archive,
        prefix: listing::prefix_of(root),
        budget_left: 0,
        rows_read: Default::default(),
        inaccessible: Vec::new(),
        entries_left: 0,
        file_log_bytes_left: 0,
    };
    reading.read_rest(cp, &mut rd);
    rd.note_inaccessible(cp);
}

/// The read stages in order. `fused_rows`: the integrity pass rebuilds HDFS and RocksDB stores' rows from the
/// bytes it checks (each file read once); `false` (tests only) makes the row stage execute every chain itself, the
/// reference the fused pass must equal.
fn read_stages(
    archive: &mut dyn Archive,
    root: &Root,
    cp: Checkpoint,
    opts: &ReadOptions,
    fused_rows: bool,
) -> Checkpoint {
    read_stages_with(archive, root, cp, opts, fused_rows, false).0
}

/// [`read_stages`]; `verdict_first`: the offset and commit logs only as far as the verdict needs, the rest
/// returned to read later ([`log_files::LogReading`]).
fn read_stages_with(
    archive: &mut dyn Archive,
    root: &Root,
    mut cp: Checkpoint,
    opts: &ReadOptions,
    fused_rows: bool,
    verdict_first: bool,
) -> (Checkpoint, Option<log_files::LogReading>) {
    let prefix = listing::prefix_of(root);
    note_archive_entries(&mut cp, archive, &prefix);
    let mut rd = Reader {
        archive,
        prefix,
        budget_left: opts.budget_bytes,
        rows_read: Default::default(),
        inaccessible: Vec::new(),
        entries_left: opts.file_log_entry_bytes,
        file_log_bytes_left: opts.file_log_bytes,
    };
    // A DStream root reads no file log: it leaves the budgets whole.
    cp.file_log_budget_left = (opts.file_log_entry_bytes, opts.file_log_bytes);
    if root.kind == CheckpointKind::Dstream {
        dstream::read_dstream_files(&mut cp, &mut rd);
        return (cp, None);
    }
    // Temp files first: a sidecar that does not match its file is tried on them (`sidecars`).
    let file_log_temp_targets = log_files::read_temp_files(&mut cp, &mut rd);
    log_files::read_metadata(&mut cp, &mut rd);
    let mut logs = log_files::LogReading::new(&cp, opts.log_budget_bytes);
    if verdict_first {
        logs.read_verdict(&mut cp, &mut rd, opts.verdict_log_files);
    } else {
        logs.read_rest(&mut cp, &mut rd);
    }
    log_files::note_unlisted_log_files(&mut cp);
    file_logs::read_file_logs(&mut cp, &mut rd, &file_log_temp_targets);
    file_logs::read_schema_log(&mut cp, &mut rd);
    state_meta::read_operator_metadata(&mut cp, &mut rd);
    state_meta::read_schema_files(&mut cp, &mut rd);
    delta_schema_log::read_delta_schema_logs(&mut cp, &mut rd);
    state_chains::plan_state_chains(&mut cp);
    if opts.verify_state {
        state_chains::read_state_chains(&mut cp, &mut rd, opts.check_rows && fused_rows);
        if opts.check_rows {
            state_rows::read_store_rows(&mut cp, &mut rd);
        }
        rd.rows_read.clear();
        state_growth::read_state_growth(&mut cp, &mut rd);
    }
    rd.note_inaccessible(&mut cp);
    cp.verify_budget = (opts.budget_bytes, opts.budget_bytes.saturating_sub(rd.budget_left));
    cp.file_log_budget_left = (rd.entries_left, rd.file_log_bytes_left);
    let history = (logs.left() > 0).then_some(logs);
    (cp, history)
}

/// What the archive knows from its listing about the root's entries: entries it cannot deliver, entries it
/// left out (a name that is unsafe or not UTF-8: every root is told, since such a name is no file of any; a
/// path over the depth limit: not verified), and paths it lists more than once.
fn note_archive_entries(cp: &mut Checkpoint, archive: &dyn Archive, prefix: &str) {
    for (path, e) in archive.unreadable_entries() {
        if matches!(e, ArchiveError::BadPath { .. }) {
            cp.archive_unreadable.insert(path.clone(), e.clone());
            continue;
        }
        let Some(rel) = path.strip_prefix(prefix).filter(|r| !r.is_empty()) else { continue };
        if matches!(e, ArchiveError::OverLimit { what, .. } if what == "path depth") {
            // Not listed, so no stage sees it: a file a restart may read (the logs, state, source logs) is
            // not verified, and the verdict is unknown.
            let top = rel.split('/').next().unwrap_or("");
            let restart_reads = matches!(top, "metadata" | "offsets" | "commits" | "state" | "sources");
            let reason = format!("{e}: not listed");
            cp.not_verified.push(crate::model::NotVerified { path: rel.to_string(), reason, restart_reads });
            continue;
        }
        cp.archive_unreadable.insert(rel.to_string(), e.clone());
    }
    for d in archive.duplicate_entries() {
        if let Some(rel) = d.path.strip_prefix(prefix).filter(|r| !r.is_empty()) {
            cp.archive_duplicates
                .push(crate::archive::DuplicateEntry { path: rel.to_string(), copies: d.copies.clone() });
        }
    }
}

/// The archive of one root as the stages read it: paths relative to the root, and the state byte budget left.
pub(crate) struct Reader<'a> {
    pub(crate) archive: &'a mut dyn Archive,
    /// The root's folder with a trailing `/` (`""` = the archive top).
    pub(crate) prefix: String,
    /// Bytes of state files that may still be read.
    pub(crate) budget_left: u64,
    /// Rows of stores (HDFS and RocksDB) the integrity pass (stage 5) rebuilt from the bytes it checked, by store
    /// folder, for the row stage (stage 6) to take instead of reading the chain again.
    pub(crate) rows_read: std::collections::HashMap<String, crate::model::StoreRows>,
    /// Files the input listed but could not give when read ([`ArchiveError::Inaccessible`]: a file of a
    /// directory input that does not open), by relative path; they join `Checkpoint::archive_unreadable`
    /// ([`Reader::note_inaccessible`]), as if the listing had known.
    pub(crate) inaccessible: Vec<(String, ArchiveError)>,
    /// Bytes of file log entries ([`crate::log::file_log::entry_cost`]) that may still be kept in memory.
    pub(crate) entries_left: u64,
    /// Bytes of file log files ([`MAX_FILE_LOG_TOTAL_BYTES`]) that may still be read.
    pub(crate) file_log_bytes_left: u64,
}

impl Reader<'_> {
    /// The archive path of a path relative to the root.
    pub(crate) fn abs(&self, rel: &str) -> String {
        format!("{}{}", self.prefix, rel)
    }
    /// Reads a file by its path relative to the root, at most `cap` bytes.
    pub(crate) fn read(&mut self, rel: &str, cap: u64) -> Result<Vec<u8>, ArchiveError> {
        let p = self.abs(rel);
        let out = self.archive.read(&p, cap);
        if let Err(e @ ArchiveError::Inaccessible { .. }) = &out {
            self.inaccessible.push((rel.to_string(), e.clone()));
        }
        out
    }
    /// [`Reader::read`] in pieces ([`Archive::read_each`]).
    pub(crate) fn read_each(&mut self, rel: &str, cap: u64, sink: &mut dyn FnMut(&[u8])) -> Result<u64, ArchiveError> {
        let p = self.abs(rel);
        let out = self.archive.read_each(&p, cap, sink);
        if let Err(e @ ArchiveError::Inaccessible { .. }) = &out {
            self.inaccessible.push((rel.to_string(), e.clone()));
        }
        out
    }
    /// Moves the files found inaccessible when read into `cp.archive_unreadable` (reported with the listing's).
    pub(crate) fn note_inaccessible(&mut self, cp: &mut Checkpoint) {
        for (rel, e) in self.inaccessible.drain(..) {
            cp.archive_unreadable.entry(rel).or_insert(e);
        }
    }
    /// Tells the archive ([`Archive::prefetch`]) that the files `rels` (relative paths) and their sidecars are
    /// read next, so that a browser `Blob` fetches neighbours in one slice. A hint only: nothing is read here.
    pub(crate) fn prefetch<'s>(&mut self, cp: &Checkpoint, rels: impl IntoIterator<Item = &'s str>) {
        let mut paths = Vec::new();
        for rel in rels {
            paths.push(self.abs(rel));
            if let Some(c) = cp.hadoop_crcs.get(rel) {
                paths.push(self.abs(&c.path));
            }
            if let Some(c) = cp.spark_checksums.get(rel) {
                paths.push(self.abs(&c.path));
            }
        }
        if !paths.is_empty() {
            self.archive.prefetch(&paths);
        }
    }
}

/// Files named in one [`Reader::prefetch`] hint at most (an archive may hold the hinted bytes until they are
/// read; log files are ~1 KiB).
pub(crate) const PREFETCH_FILES: usize = 512;

/// The [`LogError`] of a log file the archive could not give.
pub(crate) fn unreadable(e: &ArchiveError) -> LogError {
    unreadable_capped(e, MAX_LOG_BYTES)
}

/// [`unreadable`] of a file read with the cap `cap`.
pub(crate) fn unreadable_capped(e: &ArchiveError, cap: u64) -> LogError {
    match e {
        // The path is the evidence's; the reason says where the inflated stream broke.
        ArchiveError::Corrupt { offset, reason, .. } => LogError::Unreadable {
            reason: format!("the zip entry does not unpack: inflated stream broken at byte {offset}: {reason}"),
            archive_damaged: true,
        },
        // The input's reader failed (a folder's file that cannot be opened): the file was not seen.
        ArchiveError::Io { .. } => LogError::Unreadable { reason: e.to_string(), archive_damaged: true },
        // Inflates past the size the zip declares (below the read cap): the entry's header lies.
        ArchiveError::OverLimit { what, limit, .. } if what.contains("declares") && *limit < cap => {
            LogError::Unreadable { reason: e.to_string(), archive_damaged: true }
        }
        _ => match not_verified_reason(e) {
            Some(reason) => LogError::NotVerified { reason },
            None => LogError::Unreadable { reason: e.to_string(), archive_damaged: false },
        },
    }
}

/// Why a file was not verified when the archive error is a limit of this inspector or an entry it cannot
/// inflate, not damage: `None` for damage (a stream that does not inflate, a size that lies) and absence.
pub(crate) fn not_verified_reason(e: &ArchiveError) -> Option<String> {
    e.is_not_verified().then(|| e.to_string())
}

/// The file name of a relative path.
pub(crate) fn name_of(path: &str) -> &str {
    path.rsplit('/').next().unwrap_or(path)
}

/// The folder of a relative path (`""` for a file at the root).
pub(crate) fn dir_of(path: &str) -> &str {
    path.rfind('/').map(|i| &path[..i]).unwrap_or("")
}

/// `dir/name`, or `name` when `dir` is the root.
pub(crate) fn join(dir: &str, name: &str) -> String {
    if dir.is_empty() {
        name.to_string()
    } else {
        format!("{dir}/{name}")
    }
}

#[cfg(test)]
mod file_log_budget_tests;
#[cfg(test)]
mod fused_rows_tests;
