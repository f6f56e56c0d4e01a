//! Lazy reading of browser `Blob`s (a dropped `File`) inside a Web Worker.
//!
//! [`BlobReader`] is `Read + Seek` over a `Blob`: each `read` slices the bytes it needs (`Blob.slice`) and reads
//! them synchronously with `FileReaderSync` (only available in workers). Wrapped in a small `BufReader` and given
//! to [`checkpoint_core::ZipInput`], a diagnosis reads the zip's central directory and the entries it needs, not
//! the whole file. [`FilesArchive`] does the same for a dropped folder: it lists the files and reads each one only
//! when the core asks for it.

use checkpoint_core::archive::normalize_path;
use checkpoint_core::{Archive, ArchiveError, Entry, Limits};
use js_sys::Uint8Array;
use std::cell::Cell;
use std::io::{self, Read, Seek, SeekFrom};
use std::rc::Rc;
use web_sys::{Blob, File, FileReaderSync};

/// Buffer size for the `BufReader` over a [`BlobReader`]: small, because the zip reader touches each entry's
/// local header and a big buffer would read far more than needed (TOOLCHAIN.md measured 64 KiB → 13 MB read).
pub const BLOB_BUFFER_BYTES: usize = 4096;

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
}

/// `Read + Seek` over a `Blob`, reading slices on demand. Counts what it read in [`ReadStats`].
pub struct BlobReader {
    blob: Blob,
    reader: FileReaderSync,
    pos: u64,
    len: u64,
    /// Shared counters of what was read.
    pub stats: Rc<ReadStats>,
}

impl BlobReader {
    /// A reader at position 0. Errors when `FileReaderSync` is unavailable (not in a worker).
    pub fn new(blob: Blob) -> io::Result<Self> {
        let reader = FileReaderSync::new().map_err(|e| js_err("FileReaderSync (only in a Web Worker)", e))?;
        let len = blob.size().max(0.0) as u64;
        Ok(BlobReader { blob, reader, pos: 0, len, stats: Rc::new(ReadStats::default()) })
    }

    /// The blob's size in bytes.
    pub fn len(&self) -> u64 {
        self.len
    }

    /// True for a 0-byte blob.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }
}

impl Read for BlobReader {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let n = read_blob_at(&self.blob, &self.reader, self.pos, self.len, buf)?;
        self.pos += n as u64;
        self.stats.bytes.set(self.stats.bytes.get() + n as u64);
        self.stats.reads.set(self.stats.reads.get() + 1);
        Ok(n)
    }
}

impl Seek for BlobReader {
    fn seek(&mut self, to: SeekFrom) -> io::Result<u64> {
        let target: i128 = match to {
            SeekFrom::Start(p) => p as i128,
            SeekFrom::End(d) => self.len as i128 + d as i128,
            SeekFrom::Current(d) => self.pos as i128 + d as i128,
        };
        if target < 0 {
            return Err(io::Error::new(io::ErrorKind::InvalidInput, "seek before the start of the file"));
        }
        self.pos = target.min(u64::MAX as i128) as u64;
        Ok(self.pos)
    }
}

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
        let i = *self.by_path.get(path).ok_or_else(|| ArchiveError::NotFound { path: path.to_string() })?;
        let size = self.entries[i].size;
        let budget = checkpoint_core::archive::ReadBudget { limits: self.limits, total_read: self.total_read };
        budget.admit(path, size, max_bytes)?;
        let mut out = vec![0u8; size as usize];
        let mut pos = 0u64;
        while pos < size {
            let n = read_blob_at(&self.files[i], &self.reader, pos, size, &mut out[pos as usize..])
                .map_err(|e| ArchiveError::Corrupt { path: path.into(), offset: pos, reason: e.to_string() })?;
            if n == 0 {
                out.truncate(pos as usize);
                break;
            }
            pos += n as u64;
        }
        self.total_read += out.len() as u64;
        Ok(out)
    }

    fn name(&self) -> &str {
        &self.name
    }

    fn input_bytes(&self) -> u64 {
        self.bytes
    }
}
