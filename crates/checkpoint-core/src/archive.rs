//! Read-only view of the bytes a checkpoint arrives in: a zip (the product's main input) or, through the
//! same trait, anything a front end can list and read (a directory natively, a dropped folder in the browser).
//!
//! The core never does I/O itself: a front end hands it a `Read + Seek` (a `std::fs::File`, a `Blob`-slicing
//! reader in a Web Worker) or its own [`Archive`] implementation. Reading is lazy: listing needs only the zip's
//! central directory, and each entry is inflated only when a reader asks for it, bounded by [`Limits`].
//!
//! Every zip is treated as hostile: entry count, path depth, inflated size per entry and in total, and the
//! compression ratio are checked against [`Limits`] before anything is inflated, and the inflating reader stops
//! at the declared size, so a lying header cannot make us allocate more.

use std::io::{Read, Seek};

mod end_record;
mod error;
pub mod not_a_zip;
mod read_ahead;
mod read_budget;
mod zip_entries;
mod zip_names;
pub mod zip_times;
pub use end_record::{end_record, EndRecord};
pub use error::{method_name, ArchiveError};
pub use read_ahead::{EntryInflater, ReadAhead, READ_AHEAD_MAX_ENTRY};
pub use read_budget::{read_capped, read_capped_each, ReadBudget};
use zip_entries::{EntryReader, Slot};
pub use zip_names::{DuplicateEntry, EntryCopy};

/// The index of the file entries of `entries` by path (the first listed among equal paths).
fn file_index(entries: &[Entry]) -> crate::path_index::PathIndex {
    crate::path_index::PathIndex::build(
        entries.len(),
        |i| entries.get(i as usize).filter(|e| !e.is_dir).map(|e| e.path.as_str()),
        crate::path_index::Duplicates::First,
    )
}

/// Bounds applied to an archive. All sizes are in bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    /// Maximum number of entries (files and folders) listed in the archive. The default is sized from memory:
    /// a listed entry costs ~290 bytes in a [`ZipInput`] while it is opened (the zip reader's record of the
    /// central directory, dropped once open returns; ~110 held after) and under 300 in the listing stage
    /// (measured by `tests/listing_memory.rs`), so 400 000 entries take under 240 MB; real checkpoints
    /// (1000 partitions x 100 retained versions, ~220 000 files) fit.
    pub max_entries: usize,
    /// Maximum inflated size of one entry that a reader may load into memory.
    pub max_entry_bytes: u64,
    /// Maximum inflated bytes read from the archive over one diagnosis.
    pub max_total_bytes: u64,
    /// Maximum ratio inflated / compressed for a deflated entry (zip bombs compress at 1000:1 and more).
    pub max_ratio: u64,
    /// Maximum number of path components of an entry.
    pub max_depth: usize,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            max_entries: 400_000,
            max_entry_bytes: 256 * 1024 * 1024,
            max_total_bytes: 2 * 1024 * 1024 * 1024,
            max_ratio: 250,
            max_depth: 32,
        }
    }
}

/// One file or folder of an archive, as listed (nothing read yet).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Entry {
    /// Path inside the archive, `/`-separated, no leading `/`, no trailing `/` (folders are flagged instead).
    pub path: String,
    /// Inflated size in bytes as the archive declares it (0 for folders).
    pub size: u64,
    /// Stored (compressed) size in bytes.
    pub compressed_size: u64,
    /// True for a folder entry.
    pub is_dir: bool,
    /// Last-modified time in ms since the epoch, when the input records one: a zip entry's UTC time from its
    /// central directory's extended timestamp or NTFS field ([`zip_times`]: Info-ZIP, Java, 7-Zip), else its
    /// DOS date-time (2 s resolution, local time of the zipping machine, taken as UTC, so ages may be off
    /// by its time zone; ordering between entries is exact to 2 s); a directory's file mtime; a dropped
    /// browser file's `lastModified`. Used as ordering evidence between log files and for ages.
    pub modified_ms: Option<i64>,
}

/// A zip entry's DOS date-time as ms since the epoch (taken as UTC).
fn dos_ms(t: zip::DateTime) -> i64 {
    let days = crate::time::days_from_civil(t.year() as i64, t.month() as i64, t.day() as i64);
    ((days * 24 + t.hour() as i64) * 60 + t.minute() as i64) * 60_000 + t.second() as i64 * 1000
}

/// The method number of an entry the inspector cannot inflate (`None` = stored or deflated).
// The zip crate gives the number of a method its build does not decode only through the deprecated variant.
#[allow(deprecated)]
fn unsupported_method(m: zip::CompressionMethod, encrypted: bool) -> Option<u16> {
    if encrypted {
        return Some(u16::MAX);
    }
    match m {
        zip::CompressionMethod::Stored | zip::CompressionMethod::Deflated => None,
        zip::CompressionMethod::Unsupported(n) => Some(n),
        // Methods the zip crate names but this build does not inflate (no such feature is enabled).
        _ => Some(u16::MAX - 1),
    }
}

/// A listable, lazily readable set of files.
///
/// Implementations must bound what they read by `max_bytes` and by their own [`Limits`].
pub trait Archive {
    /// Every entry, in archive order. Listing must not read entry contents.
    fn entries(&self) -> &[Entry];
    /// The whole inflated content of one file entry, at most `max_bytes` bytes (more is an
    /// [`ArchiveError::OverLimit`]).
    fn read(&mut self, path: &str, max_bytes: u64) -> Result<Vec<u8>, ArchiveError>;
    /// [`Archive::read`] without holding the whole file: hands `sink` consecutive pieces of the inflated
    /// content, at most `max_bytes` in all, and returns the bytes handed. The same bytes, limits and errors as
    /// [`Archive::read`]; an error may come after pieces were handed (a zip entry's CRC-32 is known at its end),
    /// so a caller keeps nothing it built from the pieces when this fails. Default: [`Archive::read`], then one
    /// piece (a wrapper around another archive forwards it, so that the inner one streams).
    fn read_each(&mut self, path: &str, max_bytes: u64, sink: &mut dyn FnMut(&[u8])) -> Result<u64, ArchiveError> {
        let bytes = self.read(path, max_bytes)?;
        sink(&bytes);
        Ok(bytes.len() as u64)
    }
    /// Entries known, from the listing alone, not to be readable by [`Archive::read`], by path: listed ones
    /// ([`ArchiveError::UnsupportedCompression`], [`ArchiveError::Overlapping`]) and ones left out of
    /// [`Archive::entries`] because their name cannot be a file of a folder ([`ArchiveError::BadPath`], keyed by
    /// the name as stored; [`ArchiveError::OverLimit`] for a path deeper than [`Limits::max_depth`], keyed by its
    /// path). One such entry never refuses the archive. Default: none.
    fn unreadable_entries(&self) -> &[(String, ArchiveError)] {
        &[]
    }
    /// Paths the archive lists more than once (a zip's central directory can): each with its copies, in the
    /// order extracting the archive writes them. [`Archive::entries`] lists the path once and [`Archive::read`]
    /// gives the last copy, the one an extracted folder holds. Default: none. A wrapper forwards it.
    fn duplicate_entries(&self) -> &[DuplicateEntry] {
        &[]
    }
    /// A short name for the input (file name), for reports.
    fn name(&self) -> &str;
    /// The size of the input in bytes (the zip file's length), when known.
    fn input_bytes(&self) -> u64;
    /// A hint: these entries (archive paths) are about to be read, in any order. An archive over a medium where
    /// each request costs (a browser `Blob`, one slice per read) may fetch their stored bytes together, one
    /// request for neighbouring entries. It must not change what [`Archive::read`] returns, and never fails;
    /// unknown paths are ignored. Default: nothing. A wrapper around another archive forwards it.
    fn prefetch(&mut self, _paths: &[String]) {}
    /// Bytes of content the archive's total read limit ([`Limits::max_total_bytes`]) still admits (`u64::MAX`
    /// without one); `None` when unknown. [`crate::diagnose_progressive`] reads in another order than
    /// [`crate::diagnose`](fn@crate::diagnose), so it takes its verdict-first path only when this leaves room to spare (the limit
    /// then refuses no file in either order). Default: `None`. A wrapper around another archive forwards it.
    fn bytes_left(&self) -> Option<u64> {
        None
    }
}

/// Checks an entry path for safety and normalises it: `/`-separated, no leading `./` or `/`.
///
/// Errors: [`ArchiveError::BadPath`] for `..` components or absolute Windows paths,
/// [`ArchiveError::OverLimit`] when deeper than `max_depth`.
pub fn normalize_path(raw: &str, max_depth: usize) -> Result<String, ArchiveError> {
    let unified = raw.replace('\\', "/");
    let mut parts = Vec::new();
    for part in unified.split('/') {
        match part {
            "" | "." => continue,
            ".." => return Err(ArchiveError::BadPath { path: raw.to_string(), header: None }),
            p if p.len() >= 2 && p.as_bytes()[1] == b':' && parts.is_empty() && unified.starts_with(p) => {
                return Err(ArchiveError::BadPath { path: raw.to_string(), header: None })
            }
            p => parts.push(p),
        }
    }
    if parts.len() > max_depth {
        return Err(ArchiveError::OverLimit {
            what: "path depth".into(),
            path: Some(raw.to_string()),
            value: parts.len() as u64,
            limit: max_depth as u64,
        });
    }
    Ok(parts.join("/"))
}

/// The end record's account checked before the zip reader parses (and allocates for) every entry: the entry
/// count against [`Limits::max_entries`], and against what its central directory can hold.
fn check_end_record<R: Read + Seek>(reader: &mut R, bytes: u64, limits: &Limits) -> Result<(), ArchiveError> {
    // Count the entries from the end record before the zip reader parses (and allocates for) every one.
    if let Some(EndRecord { entries: n, central_directory_bytes: cd_size, .. }) = end_record(reader, bytes) {
        if n > limits.max_entries as u64 {
            return Err(ArchiveError::OverLimit {
                what: "number of entries".into(),
                path: None,
                value: n,
                limit: limits.max_entries as u64,
            });
        }
        // Every central directory header takes at least 46 bytes: a count beyond that is a lie (and
        // would size allocations from a number in a header).
        if let Some(cd) = cd_size.filter(|cd| *cd > bytes) {
            return Err(ArchiveError::NotAZip {
                reason: format!("the end record declares a central directory of {cd} bytes in an input of {bytes}"),
            });
        }
        if let Some(cd) = cd_size.filter(|cd| n > cd / 46) {
            return Err(ArchiveError::NotAZip {
                reason: format!(
                    "the end record declares {n} entries, but its central directory of {cd} bytes holds at most {}",
                    cd / 46
                ),
            });
        }
    }
    Ok(())
}

/// Bytes [`ZipInput::stored_ranges`] adds for an entry's local extra field (the central directory gives only its
/// own): zip tools write up to ~36 (extended timestamp, Unix ids, zip64 sizes); a longer one costs one more read.
pub const LOCAL_EXTRA_SLACK: u64 = 64;

/// A zip archive over any `Read + Seek`, read lazily.
///
/// Memory per entry is the [`Entry`] (its path and sizes), 4 bytes of index and a 16-byte record of what reading
/// needs (local header offset, CRC-32, method): the zip reader parses the central directory in
/// [`ZipInput::open`] and is then dropped, keeping only the input.
pub struct ZipInput<R: Read + Seek> {
    reader: R,
    entries: Vec<Entry>,
    /// Positions in `entries` of the file entries by path (one per path: of a path listed more than once, only
    /// the last copy is kept).
    index: crate::path_index::PathIndex,
    /// What reading needs of each entry of `entries`, from the central directory.
    slots: Vec<Slot>,
    /// The inflate state, reused for every entry.
    inflater: EntryReader,
    /// Entries known from the listing not to be readable, and why.
    unreadable: Vec<(String, ArchiveError)>,
    /// Position in `entries` → position in `unreadable`.
    blocked: std::collections::HashMap<u32, usize>,
    /// Paths listed more than once in the central directory (see [`DuplicateEntry`]).
    duplicates: Vec<DuplicateEntry>,
    name: String,
    bytes: u64,
    limits: Limits,
    total_read: u64,
    /// Entries inflated ahead of their reads elsewhere, when a front end set it ([`ZipInput::set_read_ahead`]).
    ahead: Option<Box<dyn ReadAhead>>,
}

impl<R: Read + Seek> ZipInput<R> {
    /// Opens a zip: reads only its central directory and checks the listing against `limits`.
    ///
    /// `bytes` is the input's length (0 is rejected as [`ArchiveError::Empty`]); `name` is shown in reports.
    /// Entry sizes and compression ratios are checked when an entry is read, not here, so one odd file does
    /// not stop the diagnosis of the others. Nor does one entry's name: an entry whose name is unsafe (`..`, an
    /// absolute or drive path), not UTF-8 or deeper than [`Limits::max_depth`] is left out of the listing and
    /// named in [`Archive::unreadable_entries`] (nothing is ever extracted or written). A path listed more than
    /// once is listed once, read from its last copy (see [`DuplicateEntry`]), and named in
    /// [`Archive::duplicate_entries`]. Errors: [`ArchiveError::NotAZip`] (also when the end record declares
    /// more entries than its central directory can hold), [`ArchiveError::Empty`], [`ArchiveError::OverLimit`]
    /// (entry count).
    pub fn open(reader: R, bytes: u64, name: &str, limits: Limits) -> Result<Self, ArchiveError> {
        if bytes == 0 {
            return Err(ArchiveError::Empty);
        }
        let mut reader = reader;
        check_end_record(&mut reader, bytes, &limits)?;
        let zip = match zip::ZipArchive::new(&mut reader) {
            Ok(z) => z,
            Err(e) => return Err(not_a_zip::error(&mut reader, bytes, &e.to_string())),
        };
        let n = zip.len();
        if n > limits.max_entries {
            return Err(ArchiveError::OverLimit {
                what: "number of entries".into(),
                path: None,
                value: n as u64,
                limit: limits.max_entries as u64,
            });
        }
        let mut entries = Vec::with_capacity(n);
        let mut slots = Vec::with_capacity(n);
        // Where each entry's header sits in the central directory (its order), while opening.
        let mut cd_pos: Vec<u64> = Vec::with_capacity(n);
        // Entries left out of the listing (a name that is unsafe, not UTF-8 or too deep), and why.
        let mut skipped: Vec<(String, ArchiveError)> = Vec::new();
        // (position in `entries`, method) of every file entry this inspector does not inflate.
        let mut unsupported: Vec<(u32, u16)> = Vec::new();
        // (local header offset, least end of its data, position in `entries`) of every file entry.
        let mut spans: Vec<(u64, u64, u32)> = Vec::with_capacity(n);
        for i in 0..n {
            // Central-directory data only: `by_index_raw` would also read each entry's local header, one
            // small random read per entry, which through a browser `Blob` costs ~4 KiB per entry.
            let f = zip.by_index_data(i).map_err(|e| ArchiveError::NotAZip { reason: e.to_string() })?;
            let raw_name =
                f.name().map(|n| n.to_string()).map_err(|_| String::from_utf8_lossy(f.name_raw()).into_owned());
            let is_dir = f.is_dir();
            let size = f.size();
            let compressed_size = f.compressed_size();
            // The central directory's DOS date-time; a UTC time in its extra field replaces it below
            // (`zip_times`: the zip crate does not expose the central copy).
            let modified_ms = f.last_modified().map(dos_ms);
            let method = unsupported_method(f.compression(), f.encrypted());
            let deflated = f.compression() == zip::CompressionMethod::Deflated;
            let crc32 = f.crc32();
            let name_len = u16::try_from(f.name_raw().len()).unwrap_or(u16::MAX);
            // A local header is at least 30 bytes, then the name, then the data.
            let start = f.header_start();
            let end = start.saturating_add(30 + f.name_raw().len() as u64).saturating_add(compressed_size);
            let central = f.central_header_start();
            drop(f);
            // One entry whose name cannot be a file of a folder is left out, with the reason: the rest is read.
            let path = match zip_names::normalize(raw_name, start, limits.max_depth) {
                Ok(p) => p,
                Err(s) => {
                    skipped.push(s);
                    continue;
                }
            };
            if path.is_empty() {
                continue;
            }
            let pos = entries.len() as u32;
            if !is_dir {
                if let Some(method) = method {
                    unsupported.push((pos, method));
                }
                spans.push((start, end, pos));
            }
            entries.push(Entry { path, size: if is_dir { 0 } else { size }, compressed_size, is_dir, modified_ms });
            slots.push(Slot { header: start, crc32, name_len, deflated });
            cd_pos.push(central);
        }
        // Overlapping entries (entries sharing compressed bytes): sorted by local header, an entry whose data
        // reaches past the next local header overlaps it. Linear after the sort.
        spans.sort_unstable();
        let mut overlaps: Vec<(u32, ArchiveError)> = Vec::new();
        for w in spans.windows(2) {
            let ((start, end, pos), (next_start, _, next_pos)) = (w[0], w[1]);
            if end > next_start && overlaps.last().is_none_or(|o| o.0 != pos) {
                let path = entries[pos as usize].path.clone();
                let other = entries[next_pos as usize].path.clone();
                overlaps.push((pos, ArchiveError::Overlapping { path, offset: start, other }));
            }
        }
        drop(spans);
        let files = entries.iter().filter(|e| !e.is_dir).count();
        let cd = zip_names::CentralDirectory { start: zip.central_directory_start(), archive_offset: zip.offset() };
        let exact_duplicates = zip.has_duplicate_names();
        drop(zip);
        zip_times::set_utc_times(&mut reader, bytes, cd, &cd_pos, &mut entries, limits.max_entries);
        let mut index = file_index(&entries);
        let mut duplicates = Vec::new();
        if index.len() < files || exact_duplicates {
            // A path listed more than once: the copy read is the one extracting the zip leaves on disk.
            let listed = zip_names::Listed { entries: &entries, slots: &slots, cd_pos: &cd_pos, index: &index };
            let keep;
            (duplicates, keep) = zip_names::duplicates(&mut reader, bytes, cd, &listed, limits);
            let moved = zip_names::compact(&mut entries, &mut slots, &keep);
            unsupported.retain_mut(|(p, _)| moved[*p as usize].map(|n| *p = n).is_some());
            overlaps.retain_mut(|(p, _)| moved[*p as usize].map(|n| *p = n).is_some());
            index = file_index(&entries);
        }
        drop(cd_pos);
        let (unreadable, blocked) = zip_names::unreadable(&entries, unsupported, overlaps, skipped);
        Ok(ZipInput {
            reader,
            entries,
            index,
            slots,
            inflater: EntryReader::new(),
            unreadable,
            blocked,
            duplicates,
            name: name.to_string(),
            bytes,
            limits,
            total_read: 0,
            ahead: None,
        })
    }

    /// A second reader of this zip's entries over `reader`, the same bytes read another way (the CLI's second
    /// file handle): see [`EntryInflater`]. Copies 32 bytes an entry.
    pub fn inflater<R2: Read + Seek>(&self, reader: R2) -> EntryInflater<R2> {
        let sizes = self.entries.iter().map(|e| (e.compressed_size, e.size)).collect();
        EntryInflater::new(reader, self.slots.clone(), sizes)
    }

    /// From now on, tells `ahead` what [`Archive::prefetch`] names (entries of at most [`READ_AHEAD_MAX_ENTRY`]
    /// declared bytes that a read does not refuse from the listing alone: see [`ReadAhead::hint`]), and takes from it each entry it inflated ahead, when
    /// this archive's own read would inflate the whole entry. What a read returns, its errors and the bytes
    /// booked against [`Limits::max_total_bytes`] stay those of a read without it.
    pub fn set_read_ahead(&mut self, ahead: Box<dyn ReadAhead>) {
        self.ahead = Some(ahead);
    }

    /// Bytes inflated so far by [`Archive::read`].
    pub fn bytes_inflated(&self) -> u64 {
        self.total_read
    }

    /// Where the stored bytes of each file entry of `paths` lie in the input: `(start, end)` byte offsets from its
    /// local header to the end of its compressed data plus [`LOCAL_EXTRA_SLACK`] bytes for the local header's
    /// extra field (which only the local header gives). From the central directory alone: nothing is read.
    /// Unknown and unreadable paths are left out; the order is `paths`'.
    pub fn stored_ranges(&self, paths: &[String]) -> Vec<(u64, u64)> {
        let mut out = Vec::with_capacity(paths.len());
        for p in paths {
            let Some(pos) = self.position(p) else { continue };
            if self.blocked.contains_key(&(pos as u32)) {
                continue;
            }
            let slot = self.slots[pos];
            let start = slot.header;
            let end = start
                .saturating_add(30 + u64::from(slot.name_len) + LOCAL_EXTRA_SLACK)
                .saturating_add(self.entries[pos].compressed_size)
                .min(self.bytes);
            out.push((start, end));
        }
        out
    }

    /// The position in `entries` of the first file entry named `path`.
    fn position(&self, path: &str) -> Option<usize> {
        self.index.find(path, |i| self.entries.get(i as usize).map(|e| e.path.as_str()))
    }
}

/// The compression ratio limit checked when a zip entry is read (its declared size is [`ReadBudget::admit`]'s):
/// a deflate stream can inflate 1000:1; past `max_ratio` for an entry over 1 MiB the entry is a likely bomb and
/// is not inflated. Errors: `OverLimit` naming the path, the ratio and the limit.
fn check_entry_ratio(path: &str, size: u64, compressed: u64, limits: &Limits) -> Result<(), ArchiveError> {
    if size > 1024 * 1024 && size / compressed.max(1) > limits.max_ratio {
        return Err(ArchiveError::OverLimit {
            what: "compression ratio (possible zip bomb)".into(),
            path: Some(path.to_string()),
            value: size / compressed.max(1),
            limit: limits.max_ratio,
        });
    }
    Ok(())
}

impl<R: Read + Seek> Archive for ZipInput<R> {
    fn entries(&self) -> &[Entry] {
        &self.entries
    }

    fn bytes_left(&self) -> Option<u64> {
        Some(self.limits.max_total_bytes.saturating_sub(self.total_read))
    }

    fn read(&mut self, path: &str, max_bytes: u64) -> Result<Vec<u8>, ArchiveError> {
        // Room for the whole entry up to 1 MiB, as `read_capped` reserves.
        let declared = self.position(path).map_or(0, |p| self.entries[p].size);
        let mut out = Vec::with_capacity(declared.min(max_bytes).min(1 << 20) as usize);
        self.read_each(path, max_bytes, &mut |piece| out.extend_from_slice(piece))?;
        Ok(out)
    }

    fn read_each(&mut self, path: &str, max_bytes: u64, sink: &mut dyn FnMut(&[u8])) -> Result<u64, ArchiveError> {
        let pos = self.position(path).ok_or_else(|| ArchiveError::NotFound { path: path.to_string() })?;
        if let Some(&u) = self.blocked.get(&(pos as u32)) {
            return Err(self.unreadable[u].1.clone());
        }
        let entry = &self.entries[pos];
        let budget = ReadBudget { limits: self.limits, total_read: self.total_read };
        let cap = budget.admit(path, entry.size, max_bytes)?;
        check_entry_ratio(path, entry.size, entry.compressed_size, &self.limits)?;
        let (declared, compressed) = (entry.size, entry.compressed_size);
        // Inflated ahead (by the very reading code, with this read's cap: `admit` refused an entry over it).
        if let Some(bytes) = self.ahead.as_mut().filter(|_| declared <= cap).and_then(|a| a.take(pos as u32)) {
            for piece in bytes.chunks(16 * 1024) {
                sink(piece);
            }
            self.total_read = self.total_read.saturating_add(bytes.len() as u64);
            return Ok(bytes.len() as u64);
        }
        // Never trust the declared size beyond the cap, nor the stream beyond the declared size: read at most
        // min(cap, declared) + 1 bytes (a deflate stream that inflates past its declared size is a lying bomb).
        let slot = self.slots[pos];
        // Every byte inflated is booked, also of a read that fails later (a stream broken at its end still cost
        // its inflation).
        let mut handed = 0u64;
        let mut counted = |piece: &[u8]| {
            handed += piece.len() as u64;
            sink(piece)
        };
        let out = self.inflater.read_each(
            &mut self.reader,
            slot,
            path,
            compressed,
            declared,
            declared.min(cap),
            &mut counted,
        );
        self.total_read = self.total_read.saturating_add(handed);
        match out {
            Ok(n) => Ok(n),
            Err(ArchiveError::Corrupt { path, offset, reason, .. }) => {
                Err(ArchiveError::Corrupt { path, offset, reason, header: Some(slot.header) })
            }
            Err(e) => Err(e),
        }
    }

    fn unreadable_entries(&self) -> &[(String, ArchiveError)] {
        &self.unreadable
    }

    fn duplicate_entries(&self) -> &[DuplicateEntry] {
        &self.duplicates
    }

    fn name(&self) -> &str {
        &self.name
    }

    fn input_bytes(&self) -> u64 {
        self.bytes
    }

    fn prefetch(&mut self, paths: &[String]) {
        let Some(ahead) = self.ahead.as_mut() else { return };
        // Only entries a read may take: not refused from the listing (blocked, a likely bomb, past the total).
        let left = self.limits.max_total_bytes.saturating_sub(self.total_read);
        let entries: Vec<u32> = paths
            .iter()
            .filter_map(|p| self.index.find(p, |i| self.entries.get(i as usize).map(|e| e.path.as_str())))
            .filter(|&pos| {
                let e = &self.entries[pos];
                !self.blocked.contains_key(&(pos as u32))
                    && e.size <= READ_AHEAD_MAX_ENTRY.min(left)
                    && check_entry_ratio(&e.path, e.size, e.compressed_size, &self.limits).is_ok()
            })
            .map(|pos| pos as u32)
            .collect();
        if !entries.is_empty() {
            ahead.hint(&entries);
        }
    }
}

/// An in-memory archive: a list of (path, bytes). Used by tests and by front ends that already hold files
/// (a dropped folder in the browser, a directory natively).
#[derive(Debug, Clone, Default)]
pub struct MemArchive {
    entries: Vec<Entry>,
    by_path: std::collections::HashMap<String, usize>,
    data: Vec<Vec<u8>>,
    name: String,
}

impl MemArchive {
    /// Sets the last-modified time (ms since the epoch) of a file, as a front end that knows it would
    /// (a dropped folder's `File.lastModified`); `false` when the path is not in the archive.
    pub fn set_modified(&mut self, path: &str, modified_ms: Option<i64>) -> bool {
        match self.by_path.get(path) {
            Some(&i) => {
                self.entries[i].modified_ms = modified_ms;
                true
            }
            None => false,
        }
    }

    /// Builds an archive from files; paths are normalised like zip entry names (errors as [`normalize_path`]).
    pub fn new(name: &str, files: Vec<(String, Vec<u8>)>, limits: Limits) -> Result<Self, ArchiveError> {
        if files.len() > limits.max_entries {
            return Err(ArchiveError::OverLimit {
                what: "number of entries".into(),
                path: None,
                value: files.len() as u64,
                limit: limits.max_entries as u64,
            });
        }
        let mut entries = Vec::with_capacity(files.len());
        let mut data = Vec::with_capacity(files.len());
        for (p, bytes) in files {
            let path = normalize_path(&p, limits.max_depth)?;
            entries.push(Entry {
                path,
                size: bytes.len() as u64,
                compressed_size: bytes.len() as u64,
                is_dir: false,
                modified_ms: None,
            });
            data.push(bytes);
        }
        let mut by_path = std::collections::HashMap::with_capacity(entries.len());
        for (i, e) in entries.iter().enumerate() {
            by_path.entry(e.path.clone()).or_insert(i);
        }
        Ok(MemArchive { entries, by_path, data, name: name.to_string() })
    }
}

impl Archive for MemArchive {
    fn entries(&self) -> &[Entry] {
        &self.entries
    }
    fn read(&mut self, path: &str, max_bytes: u64) -> Result<Vec<u8>, ArchiveError> {
        let i = *self.by_path.get(path).ok_or_else(|| ArchiveError::NotFound { path: path.to_string() })?;
        if self.entries[i].size > max_bytes {
            return Err(ArchiveError::OverLimit {
                what: "entry size".into(),
                path: Some(path.to_string()),
                value: self.entries[i].size,
                limit: max_bytes,
            });
        }
        Ok(self.data[i].clone())
    }
    fn name(&self) -> &str {
        &self.name
    }
    fn input_bytes(&self) -> u64 {
        self.data.iter().map(|d| d.len() as u64).sum()
    }
    fn bytes_left(&self) -> Option<u64> {
        Some(u64::MAX)
    }
}

#[cfg(test)]
#[path = "archive_tests.rs"]
mod tests;
