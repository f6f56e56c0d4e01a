//! The zip file under [`checkpoint_core::ZipInput`]: positioned reads (`pread`) through one buffer that a seek
//! inside it keeps. A zip entry is read as seek to its local header, read 30 bytes, seek past the name to its
//! data, read the data; `std::io::BufReader` drops its buffer on every seek, so each small entry (an
//! `offsets/N`, a `.crc`) cost two `lseek` and two `read` calls, 112,000 system calls for a checkpoint of 20,000
//! batches. Here a seek is no system call, and neighbouring small entries come from one read of the buffer.

use std::fs::File;
use std::io::{self, Read, Seek, SeekFrom};

/// Bytes read at once (one read covers many small neighbouring entries); larger reads go straight to the
/// caller's buffer.
const BUF: usize = 16 * 1024;

/// A file read with positioned reads through one buffer ([`Read`] + [`Seek`]; the file's own offset is never
/// used).
pub struct ZipFile {
    file: File,
    /// The file's length (for [`SeekFrom::End`]).
    len: u64,
    /// The position the next read starts at.
    pos: u64,
    buf: Box<[u8]>,
    /// File offset of `buf[0]`.
    buf_at: u64,
    /// Valid bytes of `buf`.
    filled: usize,
}

impl ZipFile {
    /// A reader of `file`, whose length is `len`.
    pub fn new(file: File, len: u64) -> Self {
        ZipFile { file, len, pos: 0, buf: vec![0u8; BUF].into_boxed_slice(), buf_at: 0, filled: 0 }
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
        let in_buf = self.pos >= self.buf_at && self.pos < self.buf_at + self.filled as u64;
        if !in_buf {
            if dst.len() >= BUF {
                let n = self.read_at(dst, self.pos)?;
                self.pos += n as u64;
                return Ok(n);
            }
            let mut buf = std::mem::take(&mut self.buf);
            let n = self.read_at(&mut buf, self.pos);
            self.buf = buf;
            self.buf_at = self.pos;
            self.filled = 0;
            self.filled = n?;
            if self.filled == 0 {
                return Ok(0);
            }
        }
        let start = (self.pos - self.buf_at) as usize;
        let n = dst.len().min(self.filled - start);
        dst[..n].copy_from_slice(&self.buf[start..start + n]);
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

    /// Any sequence of seeks and reads gives the bytes a `std::io::Cursor` over the same bytes gives.
    #[test]
    fn reads_as_a_cursor_does() {
        let bytes: Vec<u8> = (0..300_000u32).map(|i| (i.wrapping_mul(2654435761) >> 24) as u8).collect();
        let path = std::env::temp_dir().join(format!("zip-file-{}", std::process::id()));
        std::fs::write(&path, &bytes).unwrap();
        let mut ours = ZipFile::new(File::open(&path).unwrap(), bytes.len() as u64);
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
}
