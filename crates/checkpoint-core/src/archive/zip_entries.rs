//! Reading one zip entry from what [`super::ZipInput::open`] kept of the central directory: a 16-byte
//! [`Slot`] per entry, no zip reader. The only structure parsed here is the 30-byte local file header
//! (APPNOTE 4.3.7: signature, then the name and extra-field lengths at bytes 26..30); sizes and CRC-32 come
//! from the central directory, never from the local header or a data descriptor.
//!
//! Errors keep the zip crate's wording (the reader this replaces), so reports do not change: a damaged local
//! header is `Corrupt` at offset 0 with the zip crate's message, a stream error `Corrupt` at the inflated
//! offset reached, with the messages of the zip crate's CRC reader and of `flate2`'s inflating reader, whose
//! loop (an 8 KiB input buffer, the same reads of the input) is repeated here so the offsets are the same.

use super::{read_capped_each, ArchiveError};
use flate2::{Decompress, FlushDecompress, Status};
use std::io::{self, Read, Seek, SeekFrom};

/// What reading an entry needs from the central directory (its sizes are in its [`super::Entry`]).
#[derive(Debug, Clone, Copy)]
pub(super) struct Slot {
    /// Byte offset of the local file header.
    pub header: u64,
    /// CRC-32 of the inflated bytes, as the central directory gives it.
    pub crc32: u32,
    /// Length of the name in the central directory (for [`super::ZipInput::stored_ranges`]).
    pub name_len: u16,
    /// Method 8 (deflate); otherwise stored (other methods are refused when the zip is opened).
    pub deflated: bool,
}

/// Size of the input buffer of the inflater (`std::io::BufReader`'s default, which the zip crate used).
const IN_BUF: usize = 8 * 1024;

/// The inflate state and input buffer, made once and reused for every entry of a zip.
pub(super) struct EntryReader {
    inflate: Decompress,
    buf: Box<[u8]>,
}

impl EntryReader {
    /// A reader with a fresh raw-deflate state.
    pub fn new() -> Self {
        EntryReader { inflate: Decompress::new(false), buf: vec![0u8; IN_BUF].into_boxed_slice() }
    }

    /// The inflated bytes of the entry at `slot` (`compressed` stored bytes, `declared` inflated), read from
    /// `r` and handed to `sink` in pieces, at most `cap` bytes (see [`read_capped_each`]); the CRC-32 is checked
    /// at the end of the stream. Returns the bytes handed.
    #[allow(clippy::too_many_arguments)]
    pub fn read_each<R: Read + Seek>(
        &mut self,
        r: &mut R,
        slot: Slot,
        path: &str,
        compressed: u64,
        declared: u64,
        cap: u64,
        sink: &mut dyn FnMut(&[u8]),
    ) -> Result<u64, ArchiveError> {
        let corrupt =
            |reason: String| ArchiveError::Corrupt { path: path.to_string(), offset: 0, reason, header: None };
        let data_start = data_start(r, slot.header).map_err(corrupt)?;
        if data_start.checked_add(compressed).is_none() {
            return Err(corrupt("invalid Zip archive: File data end offset overflows u64".into()));
        }
        r.seek(SeekFrom::Start(data_start)).map_err(|e| corrupt(format!("i/o error: {e}")))?;
        let stored = r.take(compressed);
        if slot.deflated {
            self.inflate.reset(false);
            let inflater = Inflater { src: stored, d: &mut self.inflate, buf: &mut self.buf, pos: 0, filled: 0 };
            read_capped_each(Checked::new(inflater, slot.crc32, declared), path, cap, sink)
        } else {
            read_capped_each(Checked::new(stored, slot.crc32, declared), path, cap, sink)
        }
    }
}

/// Where the entry's data starts: after its local header (checked signature, then name and extra field).
fn data_start<R: Read + Seek>(r: &mut R, header: u64) -> Result<u64, String> {
    r.seek(SeekFrom::Start(header)).map_err(|e| format!("i/o error: {e}"))?;
    let mut h = [0u8; 30];
    if let Err(e) = r.read_exact(&mut h) {
        return Err(if e.kind() == io::ErrorKind::UnexpectedEof {
            "invalid Zip archive: Unexpected end of zip::format::blocks::ZipLocalEntryBlock".into()
        } else {
            format!("i/o error: {e}")
        });
    }
    if h[..4] != *b"PK\x03\x04" {
        return Err("invalid Zip archive: Invalid local file header".into());
    }
    let var = u64::from(u16::from_le_bytes([h[26], h[27]])) + u64::from(u16::from_le_bytes([h[28], h[29]]));
    header.checked_add(30 + var).ok_or_else(|| "invalid Zip archive: Local header end offset overflows u64".to_string())
}

/// The stored bytes through a reused raw-deflate state: `flate2`'s `bufread` loop over an 8 KiB buffer.
struct Inflater<'a, S: Read> {
    src: S,
    d: &'a mut Decompress,
    buf: &'a mut [u8],
    pos: usize,
    filled: usize,
}

impl<S: Read> Read for Inflater<'_, S> {
    fn read(&mut self, dst: &mut [u8]) -> io::Result<usize> {
        loop {
            if self.pos >= self.filled {
                self.filled = self.src.read(self.buf)?;
                self.pos = 0;
            }
            let input = &self.buf[self.pos..self.filled];
            let eof = input.is_empty();
            let (before_in, before_out) = (self.d.total_in(), self.d.total_out());
            let flush = if eof { FlushDecompress::Finish } else { FlushDecompress::None };
            let ret = self.d.decompress(input, dst, flush);
            let read = (self.d.total_out() - before_out) as usize;
            let consumed = (self.d.total_in() - before_in) as usize;
            self.pos = (self.pos + consumed).min(self.filled);
            match ret {
                Ok(Status::Ok | Status::BufError) if read == 0 && !eof && !dst.is_empty() => continue,
                Ok(Status::Ok | Status::BufError) if read == 0 && eof && !dst.is_empty() => {
                    return Err(io::Error::new(io::ErrorKind::UnexpectedEof, "incomplete deflate stream"))
                }
                Ok(Status::Ok | Status::BufError | Status::StreamEnd) => return Ok(read),
                Err(_) => return Err(io::Error::new(io::ErrorKind::InvalidInput, "corrupt deflate stream")),
            }
        }
    }
}

/// The inflated bytes with the central directory's checks: more than `declared` bytes is an error, and at the
/// end of the stream its CRC-32 must be the declared one (the zip crate's messages).
struct Checked<I: Read> {
    inner: I,
    hasher: crc32fast::Hasher,
    crc32: u32,
    declared: u64,
    read: u64,
}

impl<I: Read> Checked<I> {
    fn new(inner: I, crc32: u32, declared: u64) -> Self {
        Checked { inner, hasher: crc32fast::Hasher::new(), crc32, declared, read: 0 }
    }
}

impl<I: Read> Read for Checked<I> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let n = self.inner.read(buf)?;
        self.read = self.read.saturating_add(n as u64);
        if self.read > self.declared {
            return Err(io::Error::new(
                io::ErrorKind::InvalidData,
                "File is larger than its declared uncompressed size",
            ));
        }
        if n == 0 && !buf.is_empty() && self.hasher.clone().finalize() != self.crc32 {
            return Err(io::Error::new(io::ErrorKind::InvalidData, "Invalid checksum"));
        }
        self.hasher.update(&buf[..n]);
        Ok(n)
    }
}
