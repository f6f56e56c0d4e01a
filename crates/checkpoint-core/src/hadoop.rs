//! Hadoop `ChecksumFileSystem` sidecars `.<name>.crc` (FORMATS.md §18): magic `crc\0`, big-endian int32
//! bytesPerChecksum, then one big-endian CRC32 (IEEE, `java.util.zip.CRC32`) per chunk of the main file.
//! Mirrors `org.apache.hadoop.fs.ChecksumFileSystem` / `FSInputChecker`. CRC32 with `crc32fast` (SIMD).

/// A parsed `.crc` sidecar.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HadoopCrc {
    /// Bytes covered by each checksum (512 by default).
    pub bytes_per_checksum: u32,
    /// One CRC32 per chunk.
    pub sums: Vec<u32>,
}

/// Why a sidecar is unusable or does not match.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CrcError {
    /// Not a sidecar: wrong magic, zero chunk size, or a partial trailing checksum. `offset` in the sidecar.
    Malformed {
        /// Byte offset in the sidecar.
        offset: u64,
        /// Reason.
        reason: String,
    },
    /// The main file's length does not match the number of checksums.
    LengthMismatch {
        /// Chunks the sidecar covers.
        chunks: usize,
        /// Chunks the main file has.
        expected_chunks: usize,
    },
    /// A chunk's CRC differs, like Hadoop's `ChecksumException: Checksum error: <file> at <pos> exp: <x> got: <y>`.
    Mismatch {
        /// Byte offset in the main file where the bad chunk starts.
        offset: u64,
        /// CRC recorded in the sidecar.
        expected: u32,
        /// CRC computed from the main file.
        actual: u32,
    },
}

impl std::fmt::Display for CrcError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            CrcError::Malformed { offset, reason } => write!(f, "malformed .crc sidecar at byte {offset}: {reason}"),
            CrcError::LengthMismatch { chunks, expected_chunks } => write!(
                f,
                "the sidecar covers {chunks} chunk(s) but the file has {expected_chunks}: the file changed size after it was written"
            ),
            CrcError::Mismatch { offset, expected, actual } => {
                write!(f, "Checksum error at {offset} exp: {} got: {}", *expected as i32, *actual as i32)
            }
        }
    }
}

/// Parses a sidecar.
pub fn parse(bytes: &[u8]) -> Result<HadoopCrc, CrcError> {
    if bytes.len() < 8 || &bytes[0..4] != b"crc\0" {
        return Err(CrcError::Malformed { offset: 0, reason: "no 'crc\\0' header".into() });
    }
    let bpc = u32::from_be_bytes([bytes[4], bytes[5], bytes[6], bytes[7]]);
    if bpc == 0 || bpc > (1 << 30) {
        return Err(CrcError::Malformed { offset: 4, reason: format!("bytesPerChecksum {bpc}") });
    }
    let body = &bytes[8..];
    if !body.len().is_multiple_of(4) {
        return Err(CrcError::Malformed {
            offset: 8 + (body.len() - body.len() % 4) as u64,
            reason: "partial checksum at the end".into(),
        });
    }
    let sums = body.chunks_exact(4).map(|c| u32::from_be_bytes([c[0], c[1], c[2], c[3]])).collect();
    Ok(HadoopCrc { bytes_per_checksum: bpc, sums })
}

/// Verifies `data` against a parsed sidecar.
pub fn verify(crc: &HadoopCrc, data: &[u8]) -> Result<(), CrcError> {
    let mut v = Verifier::new(crc);
    v.update(data);
    v.finish()
}

/// [`verify`] of a main file handed in pieces ([`Verifier::update`] in order, then [`Verifier::finish`]): the
/// same answer, in constant memory (the CRC of the current chunk is computed as its bytes come).
#[derive(Debug)]
pub struct Verifier<'a> {
    crc: &'a HadoopCrc,
    /// The CRC of the current chunk so far, and its bytes.
    hasher: crc32fast::Hasher,
    in_chunk: u64,
    /// Chunks checked.
    done: usize,
    /// Bytes handed.
    len: u64,
    /// The first failure: a chunk's mismatch, or `None` inside `Some` for a chunk past the sidecar's sums (the
    /// length is only known at the end).
    failed: Option<Option<CrcError>>,
}

impl<'a> Verifier<'a> {
    /// A verifier of the main file of `crc`.
    pub fn new(crc: &'a HadoopCrc) -> Self {
        Verifier { crc, hasher: crc32fast::Hasher::new(), in_chunk: 0, done: 0, len: 0, failed: None }
    }

    /// The next piece of the main file.
    pub fn update(&mut self, mut data: &[u8]) {
        self.len += data.len() as u64;
        let bpc = u64::from(self.crc.bytes_per_checksum);
        while !data.is_empty() && self.failed.is_none() {
            let take = (bpc - self.in_chunk).min(data.len() as u64) as usize;
            self.hasher.update(&data[..take]);
            self.in_chunk += take as u64;
            data = &data[take..];
            if self.in_chunk == bpc {
                self.end_chunk();
            }
        }
    }

    /// Checks the chunk whose bytes were hashed.
    fn end_chunk(&mut self) {
        let actual = std::mem::replace(&mut self.hasher, crc32fast::Hasher::new()).finalize();
        self.in_chunk = 0;
        match self.crc.sums.get(self.done) {
            Some(&exp) if exp == actual => {}
            Some(&exp) => {
                let offset = (self.done as u64) * u64::from(self.crc.bytes_per_checksum);
                self.failed = Some(Some(CrcError::Mismatch { offset, expected: exp, actual }));
            }
            None => self.failed = Some(None),
        }
        self.done += 1;
    }

    /// The answer, once every piece is handed.
    pub fn finish(mut self) -> Result<(), CrcError> {
        if self.failed.is_none() && self.in_chunk > 0 {
            self.end_chunk();
        }
        let expected_chunks = self.len.div_ceil(u64::from(self.crc.bytes_per_checksum)) as usize;
        match self.failed {
            Some(Some(mismatch)) => Err(mismatch),
            _ if self.crc.sums.len() != expected_chunks => {
                Err(CrcError::LengthMismatch { chunks: self.crc.sums.len(), expected_chunks })
            }
            _ => Ok(()),
        }
    }
}

/// For a file name `.<name>.crc`, the main file's name `<name>`; `None` when the name is not a sidecar's.
pub fn main_name(sidecar: &str) -> Option<&str> {
    let inner = sidecar.strip_prefix('.')?.strip_suffix(".crc")?;
    if inner.is_empty() {
        None
    } else {
        Some(inner)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The table-driven CRC32 of the `crc` crate: the sidecars are built with it, so `crc32fast` is checked
    /// against a second implementation.
    const CRC32: crc::Crc<u32> = crc::Crc::<u32>::new(&crc::CRC_32_ISO_HDLC);

    #[test]
    fn verifies_chunks() {
        let data = vec![7u8; 600];
        let mut side = b"crc\0".to_vec();
        side.extend_from_slice(&512u32.to_be_bytes());
        side.extend_from_slice(&CRC32.checksum(&data[..512]).to_be_bytes());
        side.extend_from_slice(&CRC32.checksum(&data[512..]).to_be_bytes());
        let c = parse(&side).unwrap();
        assert_eq!(verify(&c, &data), Ok(()));
        let mut bad = data.clone();
        bad[513] = 0;
        assert!(matches!(verify(&c, &bad), Err(CrcError::Mismatch { offset: 512, .. })));
        assert!(verify(&c, &data[..100]).is_err());
        assert!(matches!(parse(b"nope"), Err(CrcError::Malformed { .. })));
        assert_eq!(main_name(".12.snapshot.crc"), Some("12.snapshot"));
        assert_eq!(main_name("12.snapshot.crc"), None);
    }
}
