//! Entry names a listing cannot take as they stand, so that one odd entry never refuses the zip: a name that
//! cannot be a file of a folder (unsafe, not UTF-8, too deep) is left out with the reason, and a path listed more
//! than once is listed once, from the copy an extracted folder holds.
//!
//! The zip crate keeps one record per exact name (the last in the central directory) and says only that there
//! were more; which names, and where their copies are, takes one more pass over the central directory
//! ([`scan`]), made only when a path is listed more than once.

use super::{normalize_path, ArchiveError, Entry, Limits, Slot};
use crate::path_index::PathIndex;
use std::io::{BufReader, Read, Seek, SeekFrom};

/// One copy of a path that a zip lists more than once, as its central directory declares it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct EntryCopy {
    /// Byte offset of the copy's local header in the input.
    pub header: u64,
    /// Inflated size in bytes.
    pub size: u64,
    /// CRC-32 of the inflated bytes.
    pub crc32: u32,
}

/// A path a zip lists more than once: the same name twice, or names that are one path once `\` is read as `/`
/// and `.` and empty components dropped (as [`normalize_path`] does).
///
/// Which copy is read: the **last in central-directory order**. Extracting the zip writes the copies in that
/// order, each over the one before (Info-ZIP `unzip -o`, Python's `ZipFile.extractall`, Java's `jar x`), so the
/// folder Spark would read holds the last. The archive lists the path once and reads that copy; the copies may
/// differ, so what a restart reads depends on how the folder was made from the zip (a finding says so).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DuplicateEntry {
    /// The path, as listed.
    pub path: String,
    /// Every copy, in central-directory order; the last is the one read.
    pub copies: Vec<EntryCopy>,
}

impl DuplicateEntry {
    /// True when every copy declares the same size and CRC-32: the same bytes, as far as the zip tells.
    pub fn copies_agree(&self) -> bool {
        self.copies.windows(2).all(|w| (w[0].size, w[0].crc32) == (w[1].size, w[1].crc32))
    }
}

/// The listed path of an entry named `raw` (`Err`: the name as stored, when it is not UTF-8), or the record of an
/// entry left out (see [`skipped`]).
pub(super) fn normalize(
    raw: Result<String, String>,
    header: u64,
    max_depth: usize,
) -> Result<String, (String, ArchiveError)> {
    match raw {
        Ok(r) => normalize_path(&r, max_depth).map_err(|e| skipped(&r, e, header)),
        Err(lossy) => Err(skipped(&lossy, ArchiveError::BadPath { path: String::new(), header: None }, header)),
    }
}

/// The [`super::Archive::unreadable_entries`] record of an entry left out of the listing: a name that is not
/// safe or not UTF-8 as stored (with its local header's offset), a path over the depth limit by its path.
fn skipped(raw: &str, e: ArchiveError, header: u64) -> (String, ArchiveError) {
    match e {
        ArchiveError::OverLimit { .. } => (normalize_path(raw, usize::MAX).unwrap_or_else(|_| raw.to_string()), e),
        _ => (raw.to_string(), ArchiveError::BadPath { path: raw.to_string(), header: Some(header) }),
    }
}

/// The entries [`super::Archive::read`] refuses from the listing alone, and the position in `entries` of each
/// listed one: entries of a compression method this inspector does not inflate, entries overlapping the next
/// one (each once), then the entries left out of the listing.
#[allow(clippy::type_complexity)]
pub(super) fn unreadable(
    entries: &[Entry],
    unsupported: Vec<(u32, u16)>,
    overlaps: Vec<(u32, ArchiveError)>,
    skipped: Vec<(String, ArchiveError)>,
) -> (Vec<(String, ArchiveError)>, std::collections::HashMap<u32, usize>) {
    let mut unreadable = Vec::new();
    let mut blocked = std::collections::HashMap::new();
    for (pos, method) in unsupported {
        let path = entries[pos as usize].path.clone();
        blocked.insert(pos, unreadable.len());
        unreadable.push((path.clone(), ArchiveError::UnsupportedCompression { path, method }));
    }
    for (pos, e) in overlaps {
        if let std::collections::hash_map::Entry::Vacant(v) = blocked.entry(pos) {
            v.insert(unreadable.len());
            unreadable.push((entries[pos as usize].path.clone(), e));
        }
    }
    // Entries left out of the listing follow, blocking nothing.
    unreadable.extend(skipped);
    (unreadable, blocked)
}

/// Where the central directory starts in the input, and the bytes before the zip (a self-extracting stub)
/// that its local header offsets do not count.
#[derive(Debug, Clone, Copy)]
pub(super) struct CentralDirectory {
    pub start: u64,
    pub archive_offset: u64,
}

/// The listing being opened: entries, their slots, the offset of each one's central directory record, and
/// the index of the file entries by path (the first among equal paths).
pub(super) struct Listed<'a> {
    pub entries: &'a [Entry],
    pub slots: &'a [Slot],
    pub cd_pos: &'a [u64],
    pub index: &'a PathIndex,
}

/// The paths listed more than once, and which entries to keep (one per path: the last copy's).
pub(super) fn duplicates<R: Read + Seek>(
    r: &mut R,
    bytes: u64,
    cd: CentralDirectory,
    listed: &Listed<'_>,
    limits: Limits,
) -> (Vec<DuplicateEntry>, Vec<bool>) {
    let entries = listed.entries;
    let path_of = |i: u32| entries.get(i as usize).map(|e| e.path.as_str());
    // (position of the path's first entry, order in the central directory, the copy).
    let mut copies: Vec<(u32, u64, EntryCopy)> = Vec::new();
    let scanned = scan(r, bytes, cd, limits.max_entries, SCAN_BUFFER, |name, _, at, copy| {
        let Ok(name) = std::str::from_utf8(name) else { return true };
        if name.ends_with('/') || name.ends_with('\\') {
            return true;
        }
        if let Some(pos) = normalize_path(name, limits.max_depth).ok().and_then(|p| listed.index.find(&p, path_of)) {
            copies.push((pos as u32, at, copy));
        }
        true
    });
    if scanned.is_err() {
        // The central directory the zip crate read does not read again: the listed copies alone.
        copies.clear();
        for (i, e) in entries.iter().enumerate().filter(|(_, e)| !e.is_dir) {
            if let Some(pos) = listed.index.find(&e.path, path_of) {
                let s = listed.slots[i];
                copies.push((
                    pos as u32,
                    listed.cd_pos[i],
                    EntryCopy { header: s.header, size: e.size, crc32: s.crc32 },
                ));
            }
        }
    }
    copies.sort_by_key(|c| (c.0, c.1));
    let mut dups: Vec<DuplicateEntry> = Vec::new();
    for group in copies.chunk_by(|a, b| a.0 == b.0).filter(|g| g.len() > 1) {
        let path = entries[group[0].0 as usize].path.clone();
        dups.push(DuplicateEntry { path, copies: group.iter().map(|c| c.2).collect() });
    }
    // Of the entries listed under a duplicated path (names equal once normalised), keep the last copy's.
    let mut keep = vec![true; entries.len()];
    let wanted: std::collections::HashMap<&str, u64> =
        dups.iter().filter_map(|d| d.copies.last().map(|c| (d.path.as_str(), c.header))).collect();
    let mut listed_under: std::collections::HashMap<&str, Vec<usize>> = std::collections::HashMap::new();
    for (i, e) in entries.iter().enumerate().filter(|(_, e)| !e.is_dir && wanted.contains_key(e.path.as_str())) {
        listed_under.entry(e.path.as_str()).or_default().push(i);
    }
    for (path, at) in listed_under {
        let winner = at
            .iter()
            .copied()
            .find(|&i| Some(&listed.slots[i].header) == wanted.get(path))
            .or_else(|| at.iter().copied().max_by_key(|&i| listed.cd_pos[i]));
        for i in at {
            keep[i] = Some(i) == winner;
        }
    }
    (dups, keep)
}

/// Drops the entries `keep` says not to; returns each old position's new one (`None` when dropped).
pub(super) fn compact(entries: &mut Vec<Entry>, slots: &mut Vec<Slot>, keep: &[bool]) -> Vec<Option<u32>> {
    let mut moved = Vec::with_capacity(keep.len());
    let mut next = 0u32;
    for &k in keep {
        moved.push(k.then_some(next));
        next += u32::from(k);
    }
    let mut i = 0;
    entries.retain(|_| {
        i += 1;
        keep[i - 1]
    });
    let mut i = 0;
    slots.retain(|_| {
        i += 1;
        keep[i - 1]
    });
    moved
}

/// The buffer of a [`scan`] of the whole central directory, in bytes (`BufReader`'s default).
pub(super) const SCAN_BUFFER: usize = 8 << 10;

/// Every record of the central directory in order (at most `max` + 1): its raw name, its extra field, its
/// offset in the input (its order) and the copy it declares, with zip64 sizes and offsets (APPNOTE 4.3.12,
/// 4.5.3). Stops at the first bytes that are not a central directory record (the end records follow the last
/// one), or when `each` returns false. Reads through a buffer of `buffer` bytes.
pub(super) fn scan<R: Read + Seek>(
    r: &mut R,
    bytes: u64,
    cd: CentralDirectory,
    max: usize,
    buffer: usize,
    mut each: impl FnMut(&[u8], &[u8], u64, EntryCopy) -> bool,
) -> std::io::Result<()> {
    let u16_at = |b: &[u8], i: usize| u64::from(u16::from_le_bytes([b[i], b[i + 1]]));
    let u32_at = |b: &[u8], i: usize| u32::from_le_bytes([b[i], b[i + 1], b[i + 2], b[i + 3]]);
    let mut r = BufReader::with_capacity(buffer, r);
    let mut at = cd.start;
    r.seek(SeekFrom::Start(at))?;
    let (mut name, mut extra) = (Vec::new(), Vec::new());
    for _ in 0..=max {
        let mut h = [0u8; 46];
        if at.saturating_add(46) > bytes {
            break;
        }
        r.read_exact(&mut h)?;
        if h[..4] != *b"PK\x01\x02" {
            break;
        }
        let (n, e, c) = (u16_at(&h, 28), u16_at(&h, 30), u16_at(&h, 32));
        name.resize(n as usize, 0);
        r.read_exact(&mut name)?;
        extra.resize(e as usize, 0);
        r.read_exact(&mut extra)?;
        r.seek_relative(c as i64)?;
        let (compressed, mut size, mut header) = (u32_at(&h, 20), u64::from(u32_at(&h, 24)), u64::from(u32_at(&h, 42)));
        // The zip64 extended information field holds, in order, the values whose 32-bit field is 0xFFFFFFFF.
        let mut x = 0;
        while x + 4 <= extra.len() {
            let (id, len) = (u16_at(&extra, x), u16_at(&extra, x + 2) as usize);
            let field = extra.get(x + 4..x + 4 + len).unwrap_or(&[]);
            if id == 1 {
                let mut vals = field.chunks_exact(8).map(|v| u64::from_le_bytes(v.try_into().unwrap_or([0; 8])));
                if size == u64::from(u32::MAX) {
                    size = vals.next().unwrap_or(size);
                }
                if compressed == u32::MAX {
                    vals.next();
                }
                if header == u64::from(u32::MAX) {
                    header = vals.next().unwrap_or(header);
                }
            }
            x += 4 + len;
        }
        let copy = EntryCopy { header: header.saturating_add(cd.archive_offset), size, crc32: u32_at(&h, 16) };
        if !each(&name, &extra, at, copy) {
            break;
        }
        at = at.saturating_add(46 + n + e + c);
    }
    Ok(())
}
