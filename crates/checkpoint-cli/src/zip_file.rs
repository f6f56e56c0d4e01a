//! The zip file under [`checkpoint_core::ZipInput`]: positioned reads (`pread`) through a few buffers that a
//! seek inside them keeps. A zip entry is read as seek to its local header, read 30 bytes, seek past the name to
//! its data, read the data; `std::io::BufReader` drops its buffer on every seek, so each small entry (an
//! `offsets/N`, a `.crc`) cost two `lseek` and two `read` calls, 112,000 system calls for a checkpoint of 20,000
//! batches. Here a seek is no system call, and neighbouring small entries come from one read of a buffer.
//!
//! The read stage reads the offset and commit logs newest first, side by side (`offsets/N`, its `.crc`,
//! `commits/N`, ...): two backward scans of two regions of the zip. So there are several buffers ([`WINDOWS`],
//! the least recently used one refilled), and a read just before a buffer fills the bytes before it.

use std::fs::File;
use std::io::{self, Read, Seek, SeekFrom};

/// Bytes read at once (one read covers many small neighbouring entries); larger reads go straight to the
/// caller's buffer.
const BUF: usize = 16 * 1024;

/// Buffers kept: the regions read in turn (the offset log, the commit log, a state file and its sidecar).
const WINDOWS: usize = 4;

/// In a backward scan, the bytes a fill keeps after the position read (an entry's local header, name and the
/// data of a small log file or sidecar; a larger entry reads on with a forward fill).
const LOOKAHEAD: u64 = 2 * 1024;

/// One buffer: the bytes of the file at `at..at + filled`.
struct Window {
    buf: Box<[u8]>,
    /// File offset of `buf[0]`.
    at: u64,
    /// Valid bytes of `buf`.
    filled: usize,
    /// When it was last read from (a tick of [`ZipFile::ticks`]).
    used: u64,
}

impl Window {
    fn holds(&self, pos: u64) -> bool {
        pos >= self.at && pos < self.at + self.filled as u64
    }
}

/// A file read with positioned reads through a few buffers ([`Read`] + [`Seek`]; the file's own offset is never
/// used).
pub struct ZipFile {
    file: File,
    /// The file's length (for [`SeekFrom::End`]).
    len: u64,
    /// The position the next read starts at.
    pos: u64,
    windows: Vec<Window>,
    /// Reads from the windows so far (their `used` clock).
    ticks: u64,
    /// Positioned reads into a window so far.
    fills: u64,
}

impl ZipFile {
    /// A reader of `file`, whose length is `len`.
    pub fn new(file: File, len: u64) -> Self {
        ZipFile { file, len, pos: 0, windows: Vec::with_capacity(WINDOWS), ticks: 0, fills: 0 }
    }

    /// Where a fill for a read at `pos` that missed every window starts. Forward, at `pos`. A read just before a
    /// window (less than a buffer's length before it) is a backward scan, the order the read stage reads a log
    /// in: the fill then ends [`LOOKAHEAD`] past `pos`, so that the entry read there and the many small entries
    /// before it come from one read. On a checkpoint of 20,000 batches, one positioned read per log file
    /// became one per ~25.
    fn fill_start(&self) -> u64 {
        let pos = self.pos;
        let backward = self.windows.iter().any(|w| w.filled > 0 && pos < w.at && w.at - pos < BUF as u64);
        if backward {
            (pos + LOOKAHEAD).saturating_sub(BUF as u64)
        } else {
            pos
        }
    }

    /// Fills a window with the bytes at `at` (one positioned read): a new one while fewer than [`WINDOWS`] are
    /// kept, else the least recently used. Returns its index.
    fn fill(&mut self, at: u64) -> io::Result<usize> {
        let i = if self.windows.len() < WINDOWS {
            self.windows.push(Window { buf: vec![0u8; BUF].into_boxed_slice(), at, filled: 0, used: 0 });
            self.windows.len() - 1
        } else {
            (0..self.windows.len()).min_by_key(|&i| self.windows[i].used).unwrap_or(0)
        };
        let mut buf = std::mem::take(&mut self.windows[i].buf);
        let n = self.read_at(&mut buf, at);
        let w = &mut self.windows[i];
        w.buf = buf;
        w.at = at;
        w.filled = 0;
        w.filled = n?;
        self.fills += 1;
        Ok(i)
    }

    /// Reads at `at` into `dst` (one positioned read; fewer bytes at the end of the file).
    fn read_at(&self, dst: &mut [u8], at: u64) -> io::Result<usize> {
        #[cfg(unix)]
        {
            std::os::unix::fs::FileExt::read_at(&self.file, dst, at)
        }
        #[cfg(windows)]
        {
            std::os::windows::fs::FileExt::seek_read(&self.file, dst, at)
        }
    }
}

impl Read for ZipFile {
    fn read(&mut self, dst: &mut [u8]) -> io::Result<usize> {
        // Nothing past the end (a `Cursor`'s answer; also no positioned read at an offset the OS refuses).
        if dst.is_empty() || self.pos >= self.len {
            return Ok(0);
        }
        let pos = self.pos;
        let i = match self.windows.iter().position(|w| w.holds(pos)) {
            Some(i) => i,
            None => {
                if dst.len() >= BUF {
                    let n = self.read_at(dst, pos)?;
                    self.pos += n as u64;
                    return Ok(n);
                }
                let i = self.fill(self.fill_start())?;
                if self.windows[i].holds(pos) {
                    i
                } else {
                    // A short read before `pos` (never seen on a regular file): read forward from `pos` instead.
                    let i = self.fill(pos)?;
                    if !self.windows[i].holds(pos) {
                        return Ok(0);
                    }
                    i
                }
            }
        };
        self.ticks += 1;
        let w = &mut self.windows[i];
        w.used = self.ticks;
        let start = (pos - w.at) as usize;
        let n = dst.len().min(w.filled - start);
        dst[..n].copy_from_slice(&w.buf[start..start + n]);
        self.pos += n as u64;
        Ok(n)
    }
}

impl Seek for ZipFile {
    fn seek(&mut self, to: SeekFrom) -> io::Result<u64> {
        let target = match to {
            SeekFrom::Start(n) => Some(n),
            SeekFrom::End(d) => self.len.checked_add_signed(d),
            SeekFrom::Current(d) => self.pos.checked_add_signed(d),
        };
        self.pos = target.ok_or_else(|| {
            io::Error::new(io::ErrorKind::InvalidInput, "invalid seek to a negative or overflowing position")
        })?;
        Ok(self.pos)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `n` bytes of a scrambled sequence written to a temp file named after `tag`, and a reader of it.
    fn scrambled_file(n: u32, tag: &str) -> (Vec<u8>, std::path::PathBuf, ZipFile) {
        let bytes: Vec<u8> = (0..n).map(|i| (i.wrapping_mul(2654435761) >> 24) as u8).collect();
        let path = std::env::temp_dir().join(format!("{tag}-{}", std::process::id()));
        std::fs::write(&path, &bytes).unwrap();
        let reader = ZipFile::new(File::open(&path).unwrap(), bytes.len() as u64);
        (bytes, path, reader)
    }

    /// Any sequence of seeks and reads gives the bytes a `std::io::Cursor` over the same bytes gives.
    #[test]
    fn reads_as_a_cursor_does() {
        let (bytes, path, mut ours) = scrambled_file(300_000, "zip-file");
        let mut want = std::io::Cursor::new(&bytes);
        let mut seed = 11u64;
        let mut next = |m: u64| {
            seed = seed.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            (seed >> 33) % m
        };
        for _ in 0..5_000 {
            match next(4) {
                0 => {
                    let to = SeekFrom::Start(match next(50) {
                        0 => u64::MAX - next(10),
                        1 => 1 << 63,
                        _ => next(bytes.len() as u64 + 10),
                    });
                    assert_eq!(ours.seek(to).unwrap(), want.seek(to).unwrap());
                }
                1 => {
                    let to = SeekFrom::Current(next(20_000) as i64 - 10_000);
                    assert_eq!(ours.seek(to).ok(), want.seek(to).ok());
                }
                2 => {
                    let to = SeekFrom::End(-(next(70_000) as i64));
                    assert_eq!(ours.seek(to).unwrap(), want.seek(to).unwrap());
                }
                _ => {
                    let len = [1, 30, 500, 8_192, 65_536, 100_000][next(6) as usize];
                    let (mut a, mut b) = (vec![0u8; len], vec![0u8; len]);
                    let n = ours.read(&mut a).unwrap();
                    let m = want.read(&mut b).unwrap();
                    // A read may return fewer bytes (the end of the buffer): the bytes it gives are the same.
                    assert!(n <= m && a[..n] == b[..n] && (n > 0 || m == 0), "{n} {m}");
                    want.seek(SeekFrom::Current(n as i64 - m as i64)).unwrap();
                }
            }
        }
        let _ = std::fs::remove_file(&path);
    }

    /// Small entries read from the end of the file to its start (the log stage's order) come from one positioned
    /// read per buffer, not one per entry; and each gives the file's bytes.
    #[test]
    fn a_backward_scan_reads_a_buffer_at_a_time() {
        let (bytes, path, mut ours) = scrambled_file(400_000, "zip-file-back");
        // An "entry" of 500 bytes every 600 bytes, read as a zip entry is: its header, then its data.
        let starts: Vec<u64> = (0..bytes.len() as u64 / 600).rev().map(|i| i * 600).collect();
        for &at in &starts {
            ours.seek(SeekFrom::Start(at)).unwrap();
            let mut header = [0u8; 30];
            ours.read_exact(&mut header).unwrap();
            let mut data = vec![0u8; 470];
            ours.read_exact(&mut data).unwrap();
            assert_eq!(&header[..], &bytes[at as usize..at as usize + 30]);
            assert_eq!(data, bytes[at as usize + 30..at as usize + 500]);
        }
        let per_fill = starts.len() as u64 / ours.fills;
        // (BUF - LOOKAHEAD) / 600 = 23 entries per fill, less the first one's.
        assert!(per_fill >= 20, "{} fills for {} entries", ours.fills, starts.len());
        // Two such scans side by side (the offset log's and the commit log's) keep a buffer each.
        let before = ours.fills;
        let half = bytes.len() as u64 / 2;
        for &at in starts.iter().filter(|&&a| a + 600 < half) {
            for base in [0, half] {
                ours.seek(SeekFrom::Start(base + at)).unwrap();
                let mut data = vec![0u8; 500];
                ours.read_exact(&mut data).unwrap();
                assert_eq!(data, bytes[(base + at) as usize..(base + at) as usize + 500]);
            }
        }
        assert!(ours.fills - before <= 2 * (half / (BUF as u64 - LOOKAHEAD) + 2), "{}", ours.fills - before);
        // A forward scan is one fill per buffer too.
        let before = ours.fills;
        ours.seek(SeekFrom::Start(0)).unwrap();
        let mut all = Vec::new();
        ours.read_to_end(&mut all).unwrap();
        assert_eq!(all, bytes);
        assert!(ours.fills - before <= 1 + bytes.len() as u64 / BUF as u64 + 1);
        let _ = std::fs::remove_file(&path);
    }
}
