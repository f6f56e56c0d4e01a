//! Lazy reading of browser `Blob`s (a dropped `File`) inside a Web Worker.
//!
//! [`BlobReader`] is `Read + Seek` over a `Blob`: each `read` slices the bytes it needs (`Blob.slice`) and reads
//! them synchronously with `FileReaderSync` (only available in workers). Wrapped in a small `BufReader` and given
//! to [`checkpoint_core::ZipInput`], a diagnosis reads the zip's central directory and the entries it needs, not
//! the whole file. [`FilesArchive`] does the same for a dropped folder: it lists the files and reads each one only
//! when the core asks for it.

use checkpoint_core::archive::normalize_path;
use checkpoint_core::ZipInput;
use checkpoint_core::{Archive, ArchiveError, Entry, Limits};
use js_sys::Uint8Array;
use std::cell::{Cell, RefCell};
use std::collections::{BTreeMap, VecDeque};
use std::io::{self, Read, Seek, SeekFrom};
use std::rc::Rc;
use web_sys::{Blob, File, FileReaderSync};

/// Smallest slice a read that misses the cache fetches: neighbouring small files (an `offsets/N` and its
/// `.N.crc`) then come with it, and a 16 KiB slice costs a browser about what a 4 KiB one does.
pub const MIN_SLICE_BYTES: u64 = 16 * 1024;
/// Largest slice for sequential reading (the central directory, a big entry): misses at the end of the
/// previous slice double the next one up to this.
pub const MAX_SLICE_BYTES: u64 = 1024 * 1024;
/// Bytes of the file the cache holds at most (slices read on demand and prefetched spans); the oldest go first.
pub const CACHE_BYTES: usize = 8 * 1024 * 1024;
/// Spans [`SpanCache::at`] looks at, nearest start first.
const SPANS_LOOKED_AT: usize = 8;
/// Entries farther apart than this are fetched in separate slices by [`SpanCache::prefetch`].
pub const PREFETCH_GAP_BYTES: u64 = 64 * 1024;
/// Largest single slice [`SpanCache::prefetch`] reads; entries over it are left to on-demand reads.
pub const PREFETCH_SPAN_BYTES: u64 = 2 * 1024 * 1024;
/// A zip up to this size (bytes) is read whole when it is opened, in one read kept outside wasm memory (a JS
/// `ArrayBuffer`), and every later slice is a copy from it. A `Blob` slice costs the worker about a millisecond
/// whatever its size up to hundreds of KiB, and the file reads at about 330 MB/s: a small checkpoint's 40 slices
/// cost more than reading all of it (6 MB: 38 slices, about 40–90 ms, against one read of 10–20 ms).
pub const WHOLE_FILE_BYTES: u64 = 16 * 1024 * 1024;

fn js_err(what: &str, e: wasm_bindgen::JsValue) -> io::Error {
    io::Error::other(format!("{what}: {}", e.as_string().unwrap_or_else(|| format!("{e:?}"))))
}

/// Reads up to `buf.len()` bytes of `blob` at `pos` (bytes); returns how many were read (0 at the end).
fn read_blob_at(blob: &Blob, reader: &FileReaderSync, pos: u64, len: u64, buf: &mut [u8]) -> io::Result<usize> {
    if pos >= len || buf.is_empty() {
        return Ok(0);
    }
    let end = len.min(pos.saturating_add(buf.len() as u64));
    let slice = blob.slice_with_f64_and_f64(pos as f64, end as f64).map_err(|e| js_err("Blob.slice", e))?;
    let ab = reader.read_as_array_buffer(&slice).map_err(|e| js_err("FileReaderSync.readAsArrayBuffer", e))?;
    let arr = Uint8Array::new(&ab);
    let n = (arr.length() as usize).min(buf.len());
    arr.subarray(0, n as u32).copy_to(&mut buf[..n]);
    Ok(n)
}

/// What a [`BlobReader`] has read so far (shared, so it can be looked at while the reader is owned elsewhere).
#[derive(Debug, Default)]
pub struct ReadStats {
    /// Bytes read from the blob.
    pub bytes: Cell<u64>,
    /// Number of slice reads.
    pub reads: Cell<u64>,
    /// Milliseconds spent in those reads (`FileReaderSync`, by the worker's `performance.now()`).
    pub ms: Cell<f64>,
}

/// The worker's clock in milliseconds (`performance.now()`), 0 where there is none.
fn clock_ms() -> f64 {
    use wasm_bindgen::JsCast;
    js_sys::global()
        .dyn_into::<web_sys::WorkerGlobalScope>()
        .ok()
        .and_then(|g| g.performance())
        .map(|p| p.now())
        .unwrap_or(0.0)
}

/// Spans of a blob already read (start offset → bytes), at most [`CACHE_BYTES`] in all, oldest dropped first.
/// Pure bookkeeping: the reads are [`BlobReader`]'s.
#[derive(Debug, Default)]
pub struct SpanCache {
    spans: BTreeMap<u64, Vec<u8>>,
    order: VecDeque<u64>,
    bytes: usize,
}

impl SpanCache {
    /// The cached bytes at `pos` (to the end of the span holding it), if any. Spans may overlap (a slice read on
    /// a miss, then a prefetched span around it): the few spans starting at or before `pos` are looked at, not
    /// only the nearest, which may end before `pos` while an earlier, longer one holds it.
    pub fn at(&self, pos: u64) -> Option<&[u8]> {
        self.spans.range(..=pos).rev().take(SPANS_LOOKED_AT).find_map(|(start, bytes)| {
            // Compared as u64: on wasm32 a usize would wrap for a span 4 GiB before `pos`.
            let off = pos - start;
            (off < bytes.len() as u64).then(|| &bytes[off as usize..])
        })
    }

    /// Keeps a span read at `start`, dropping the oldest spans beyond [`CACHE_BYTES`].
    pub fn insert(&mut self, start: u64, bytes: Vec<u8>) {
        if bytes.is_empty() {
            return;
        }
        if let Some(old) = self.spans.insert(start, bytes) {
            self.bytes -= old.len();
        } else {
            self.order.push_back(start);
        }
        self.bytes += self.spans[&start].len();
        while self.bytes > CACHE_BYTES {
            let Some(oldest) = self.order.pop_front() else { break };
            if let Some(b) = self.spans.remove(&oldest) {
                self.bytes -= b.len();
            }
        }
    }

    /// True when `[start, end)` lies inside one cached span.
    pub fn covers(&self, start: u64, end: u64) -> bool {
        self.at(start).is_some_and(|b| start + b.len() as u64 >= end)
    }

    /// Forgets everything.
    pub fn clear(&mut self) {
        self.spans.clear();
        self.order.clear();
        self.bytes = 0;
    }
}

/// Merges byte ranges into the spans to fetch: sorted, neighbours closer than [`PREFETCH_GAP_BYTES`] joined,
/// no span over [`PREFETCH_SPAN_BYTES`] (a range over it alone is dropped: read on demand), all spans together
/// at most half of [`CACHE_BYTES`] (so that they are still cached when read). Pure, for tests.
pub fn coalesce(mut ranges: Vec<(u64, u64)>) -> Vec<(u64, u64)> {
    ranges.retain(|(s, e)| e > s && e - s <= PREFETCH_SPAN_BYTES);
    ranges.sort_unstable();
    let mut out: Vec<(u64, u64)> = Vec::new();
    let mut total = 0u64;
    for (s, e) in ranges {
        match out.last_mut() {
            Some(last)
                if s <= last.1.saturating_add(PREFETCH_GAP_BYTES) && e.max(last.1) - last.0 <= PREFETCH_SPAN_BYTES =>
            {
                total += e.saturating_sub(last.1);
                last.1 = last.1.max(e);
            }
            _ => {
                total += e - s;
                out.push((s, e));
            }
        }
        if total > CACHE_BYTES as u64 / 2 {
            break;
        }
    }
    out
}

/// A blob, a synchronous reader of it, and the cache and counters its reads share; the whole blob's bytes when
/// it was read whole ([`WHOLE_FILE_BYTES`]).
struct BlobSource {
    blob: Blob,
    reader: FileReaderSync,
    len: u64,
    cache: Rc<RefCell<SpanCache>>,
    stats: Rc<ReadStats>,
    whole: Option<Uint8Array>,
}

impl BlobSource {
    fn new(blob: Blob, cache: Rc<RefCell<SpanCache>>, stats: Rc<ReadStats>) -> io::Result<Self> {
        let reader = FileReaderSync::new().map_err(|e| js_err("FileReaderSync (only in a Web Worker)", e))?;
        let len = blob.size().max(0.0) as u64;
        Ok(BlobSource { blob, reader, len, cache, stats, whole: None })
    }

    /// Reads the whole blob in one read (counted in the stats) when it is at most `up_to` bytes; later fetches
    /// copy from it. A failed read leaves the blob to slices (which then say what failed).
    fn read_whole_up_to(&mut self, up_to: u64) {
        if self.len == 0 || self.len > up_to || self.len > u32::MAX as u64 {
            return;
        }
        let t0 = clock_ms();
        let Ok(ab) = self.reader.read_as_array_buffer(&self.blob) else { return };
        self.stats.ms.set(self.stats.ms.get() + (clock_ms() - t0));
        let arr = Uint8Array::new(&ab);
        self.stats.bytes.set(self.stats.bytes.get() + arr.length() as u64);
        self.stats.reads.set(self.stats.reads.get() + 1);
        if arr.length() as u64 == self.len {
            self.whole = Some(arr);
        }
    }

    /// Reads `[start, end)` in one slice into the cache (counted in the stats), or copies it from the whole
    /// blob's bytes when they were read (not counted: no read of the blob).
    fn fetch(&self, start: u64, end: u64) -> io::Result<()> {
        let end = end.min(self.len);
        if start >= end {
            return Ok(());
        }
        if let Some(w) = &self.whole {
            // `end <= len <= u32::MAX` (read_whole_up_to).
            let mut buf = vec![0u8; (end - start) as usize];
            w.subarray(start as u32, end as u32).copy_to(&mut buf);
            self.cache.borrow_mut().insert(start, buf);
            return Ok(());
        }
        let mut buf = vec![0u8; (end - start) as usize];
        let t0 = clock_ms();
        let n = read_blob_at(&self.blob, &self.reader, start, self.len, &mut buf)?;
        self.stats.ms.set(self.stats.ms.get() + (clock_ms() - t0));
        buf.truncate(n);
        self.stats.bytes.set(self.stats.bytes.get() + n as u64);
        self.stats.reads.set(self.stats.reads.get() + 1);
        self.cache.borrow_mut().insert(start, buf);
        Ok(())
    }
}

/// `Read + Seek` over a `Blob`, reading slices on demand through a [`SpanCache`] (shared with the archive that
/// prefetches into it). Counts what it read in [`ReadStats`].
pub struct BlobReader {
    src: BlobSource,
    pos: u64,
    /// End of the last slice read on a miss, and its size: a miss right there doubles the next slice.
    run: (u64, u64),
}

impl BlobReader {
    /// A reader at position 0. Errors when `FileReaderSync` is unavailable (not in a worker).
    pub fn new(blob: Blob) -> io::Result<Self> {
        let src = BlobSource::new(blob, Rc::default(), Rc::default())?;
        Ok(BlobReader { src, pos: 0, run: (u64::MAX, MIN_SLICE_BYTES) })
    }

    /// The blob's size in bytes.
    pub fn len(&self) -> u64 {
        self.src.len
    }

    /// True for a 0-byte blob.
    pub fn is_empty(&self) -> bool {
        self.src.len == 0
    }

    /// What was read from the blob so far.
    pub fn stats(&self) -> Rc<ReadStats> {
        self.src.stats.clone()
    }
}

impl Read for BlobReader {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        if self.pos >= self.src.len || buf.is_empty() {
            return Ok(0);
        }
        if self.src.cache.borrow().at(self.pos).is_none() {
            // Sequential misses (a central directory, a big entry) double the slice; others start small.
            let size = if self.pos == self.run.0 { (self.run.1 * 2).min(MAX_SLICE_BYTES) } else { MIN_SLICE_BYTES };
            let size = size.max(buf.len() as u64);
            self.src.fetch(self.pos, self.pos.saturating_add(size))?;
            self.run = (self.pos.saturating_add(size).min(self.src.len), size);
        }
        let cache = self.src.cache.borrow();
        let Some(have) = cache.at(self.pos) else { return Ok(0) };
        let n = have.len().min(buf.len());
        buf[..n].copy_from_slice(&have[..n]);
        drop(cache);
        self.pos += n as u64;
        Ok(n)
    }
}

impl Seek for BlobReader {
    fn seek(&mut self, to: SeekFrom) -> io::Result<u64> {
        let target: i128 = match to {
            SeekFrom::Start(p) => p as i128,
            SeekFrom::End(d) => self.src.len as i128 + d as i128,
            SeekFrom::Current(d) => self.pos as i128 + d as i128,
        };
        if target < 0 {
            return Err(io::Error::new(io::ErrorKind::InvalidInput, "seek before the start of the file"));
        }
        self.pos = target.min(u64::MAX as i128) as u64;
        Ok(self.pos)
    }
}

/// Bytes at the end of a zip that hold its end of central directory record: the record (22 bytes) and the
/// longest comment (65,535 bytes).
const EOCD_SEARCH_BYTES: u64 = 22 + 65_535;

/// Reads ahead, into the cache, what opening a zip reads: its last [`EOCD_SEARCH_BYTES`] in one slice, then its
/// central directory in slices of up to [`PREFETCH_SPAN_BYTES`] (as much as the cache holds beside the tail; the
/// rest is read on demand). Read on demand, the end record took four slices (it is looked for backwards) and the
/// central directory of 94,000 entries eleven growing ones. The central directory's place comes from the core's
/// [`checkpoint_core::archive::end_record`], the same reading `ZipInput::open` makes of the tail (zip64
/// included); a record that lies only costs a wasted read. Returns where the read-ahead of the central
/// directory ended, `None` when the tail names no central directory.
fn read_ahead_central_directory(reader: &mut BlobReader) -> io::Result<Option<u64>> {
    let src = &reader.src;
    let tail_start = src.len.saturating_sub(EOCD_SEARCH_BYTES);
    src.fetch(tail_start, src.len)?;
    let len = src.len;
    let Some(end) = checkpoint_core::archive::end_record(reader, len) else { return Ok(None) };
    let (Some(offset), Some(size)) = (end.central_directory_offset, end.central_directory_bytes) else {
        return Ok(None);
    };
    let (start, end) = (offset, offset.saturating_add(size).min(tail_start));
    let room = CACHE_BYTES as u64 - EOCD_SEARCH_BYTES;
    let mut at = start;
    while at < end && at - start + PREFETCH_SPAN_BYTES <= room {
        let to = (at + PREFETCH_SPAN_BYTES).min(end);
        reader.src.fetch(at, to)?;
        at = to;
    }
    Ok(Some(at))
}

/// A zip in a `Blob` as an [`Archive`]: the core's [`ZipInput`] over a [`BlobReader`], whose
/// [`Archive::prefetch`] fetches the hinted entries' stored bytes in coalesced slices into the reader's cache.
pub struct BlobZip {
    zip: ZipInput<BlobReader>,
    src: BlobSource,
}

impl BlobZip {
    /// Opens the zip in `blob`: read whole when it is at most [`WHOLE_FILE_BYTES`], otherwise its central
    /// directory only, in a few slices. Errors: the core's, or `Io` outside a worker.
    pub fn open(blob: Blob, name: &str, limits: Limits) -> Result<Self, ArchiveError> {
        Self::open_reading_whole_up_to(blob, name, limits, WHOLE_FILE_BYTES)
    }

    /// [`BlobZip::open`], reading the zip whole when it is at most `whole_up_to` bytes (0: never; then every
    /// read is a slice of the blob).
    pub fn open_reading_whole_up_to(
        blob: Blob,
        name: &str,
        limits: Limits,
        whole_up_to: u64,
    ) -> Result<Self, ArchiveError> {
        let io = |e: io::Error| ArchiveError::Io { reason: e.to_string() };
        let mut reader = BlobReader::new(blob.clone()).map_err(io)?;
        reader.src.read_whole_up_to(whole_up_to);
        let mut src = BlobSource::new(blob, reader.src.cache.clone(), reader.src.stats.clone()).map_err(io)?;
        src.whole = reader.src.whole.clone();
        let len = reader.len();
        // A failed read-ahead is no error: the zip reader reads what it needs and says what failed. A central
        // directory larger than the read-ahead goes on in the largest slices.
        if let Ok(Some(end)) = read_ahead_central_directory(&mut reader) {
            reader.run = (end, MAX_SLICE_BYTES);
        }
        let zip = ZipInput::open(reader, len, name, limits)?;
        // The central directory is parsed: its slices are not needed again.
        src.cache.borrow_mut().clear();
        Ok(BlobZip { zip, src })
    }

    /// What was read from the blob so far.
    pub fn stats(&self) -> Rc<ReadStats> {
        self.src.stats.clone()
    }
}

impl Archive for BlobZip {
    fn entries(&self) -> &[Entry] {
        self.zip.entries()
    }
    fn read(&mut self, path: &str, max_bytes: u64) -> Result<Vec<u8>, ArchiveError> {
        self.zip.read(path, max_bytes)
    }
    fn read_each(&mut self, path: &str, max_bytes: u64, sink: &mut dyn FnMut(&[u8])) -> Result<u64, ArchiveError> {
        self.zip.read_each(path, max_bytes, sink)
    }
    fn unreadable_entries(&self) -> &[(String, ArchiveError)] {
        self.zip.unreadable_entries()
    }
    fn duplicate_entries(&self) -> &[checkpoint_core::archive::DuplicateEntry] {
        self.zip.duplicate_entries()
    }
    fn name(&self) -> &str {
        self.zip.name()
    }
    fn input_bytes(&self) -> u64 {
        self.zip.input_bytes()
    }
    fn bytes_left(&self) -> Option<u64> {
        self.zip.bytes_left()
    }
    fn prefetch(&mut self, paths: &[String]) {
        for (s, e) in coalesce(self.zip.stored_ranges(paths)) {
            if !self.src.cache.borrow().covers(s, e.min(self.src.len)) {
                // A failed prefetch is no error: the read that needs the bytes fetches them again and says so.
                let _ = self.src.fetch(s, e);
            }
        }
    }
}

/// Bytes of a dropped folder's file read per slice by [`FilesArchive`]'s [`Archive::read_each`].
const PIECE_BYTES: u64 = 1024 * 1024;

/// The files of a dropped folder as an [`Archive`], read lazily (each file only when the core asks for it).
pub struct FilesArchive {
    entries: Vec<Entry>,
    files: Vec<File>,
    reader: FileReaderSync,
    name: String,
    bytes: u64,
    limits: Limits,
    total_read: u64,
    /// Entry index by path: a dropped folder of 150k files is looked up in constant time per read.
    by_path: std::collections::HashMap<String, usize>,
}

impl FilesArchive {
    /// Lists `files` (path relative to the dropped folder, `File`). Paths are normalised and checked like zip
    /// entry names. Errors: `OverLimit` for too many files, `BadPath`, `Empty` for no files, `Io` outside a worker.
    pub fn new(name: &str, files: Vec<(String, File)>, limits: Limits) -> Result<Self, ArchiveError> {
        if files.is_empty() {
            return Err(ArchiveError::Empty);
        }
        if files.len() > limits.max_entries {
            return Err(ArchiveError::OverLimit {
                what: "number of files".into(),
                path: None,
                value: files.len() as u64,
                limit: limits.max_entries as u64,
            });
        }
        let reader =
            FileReaderSync::new().map_err(|e| ArchiveError::Io { reason: js_err("FileReaderSync", e).to_string() })?;
        let mut entries = Vec::with_capacity(files.len());
        let mut out = Vec::with_capacity(files.len());
        let mut bytes: u64 = 0;
        for (p, f) in files {
            let path = normalize_path(&p, limits.max_depth)?;
            if path.is_empty() {
                continue;
            }
            let size = f.size().max(0.0) as u64;
            bytes = bytes.saturating_add(size);
            let modified_ms = Some(f.last_modified() as i64).filter(|ms| *ms > 0);
            entries.push(Entry { path, size, compressed_size: size, is_dir: false, modified_ms });
            out.push(f);
        }
        let by_path = entries.iter().enumerate().map(|(i, e)| (e.path.clone(), i)).collect();
        Ok(FilesArchive { entries, files: out, reader, name: name.to_string(), bytes, limits, total_read: 0, by_path })
    }
}

impl Archive for FilesArchive {
    fn entries(&self) -> &[Entry] {
        &self.entries
    }

    fn read(&mut self, path: &str, max_bytes: u64) -> Result<Vec<u8>, ArchiveError> {
        let size = self.by_path.get(path).map_or(0, |&i| self.entries[i].size);
        // Reserved for at most one slice before the read is admitted; it grows as the slices come.
        let mut out = Vec::with_capacity(size.min(max_bytes).min(PIECE_BYTES) as usize);
        self.read_each(path, max_bytes, &mut |piece| out.extend_from_slice(piece))?;
        Ok(out)
    }

    fn read_each(&mut self, path: &str, max_bytes: u64, sink: &mut dyn FnMut(&[u8])) -> Result<u64, ArchiveError> {
        let i = *self.by_path.get(path).ok_or_else(|| ArchiveError::NotFound { path: path.to_string() })?;
        let size = self.entries[i].size;
        let budget = checkpoint_core::archive::ReadBudget { limits: self.limits, total_read: self.total_read };
        budget.admit(path, size, max_bytes)?;
        // Slices of at most 1 MiB: a big file (a file log's `.compact`) is never held whole.
        let mut buf = vec![0u8; size.min(PIECE_BYTES) as usize];
        let mut pos = 0u64;
        while pos < size {
            // A file of a dropped folder the browser does not give (moved, or not readable): the input's
            // failure, as in the CLI's folder input, not a damaged stream.
            let want = (size - pos).min(PIECE_BYTES) as usize;
            let n = match read_blob_at(&self.files[i], &self.reader, pos, size, &mut buf[..want]) {
                Ok(n) => n,
                Err(e) => {
                    // The slices read before are booked too.
                    self.total_read = self.total_read.saturating_add(pos);
                    return Err(ArchiveError::Inaccessible {
                        path: path.into(),
                        reason: format!("read error at byte {pos}: {e}"),
                        folder: false,
                    });
                }
            };
            if n == 0 {
                break;
            }
            sink(&buf[..n]);
            pos += n as u64;
        }
        self.total_read += pos;
        Ok(pos)
    }

    fn name(&self) -> &str {
        &self.name
    }

    fn input_bytes(&self) -> u64 {
        self.bytes
    }

    fn bytes_left(&self) -> Option<u64> {
        Some(self.limits.max_total_bytes.saturating_sub(self.total_read))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A position inside a long span is found when a shorter span that starts later, and ends before it, was
    /// cached too (a slice read on a miss, then a prefetched span around it): before, only the nearest start was
    /// looked at, and every read after the short span's end missed.
    #[test]
    fn a_position_in_an_earlier_longer_span_is_found() {
        let mut c = SpanCache::default();
        c.insert(100, vec![1; 16]);
        c.insert(0, (0..=255).collect());
        assert_eq!(c.at(105).map(|b| b[0]), Some(1), "the newest span at its own bytes");
        assert_eq!(c.at(150).map(|b| b[0]), Some(150), "past the short span: the long one");
        assert_eq!(c.at(255).map(|b| b.len()), Some(1));
        assert_eq!(c.at(256), None);
        assert!(c.covers(120, 200));
        assert!(!c.covers(200, 300));
    }
}
