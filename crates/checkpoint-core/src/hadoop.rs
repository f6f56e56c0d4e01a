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
    let bpc = crc.bytes_per_checksum as usize;
    let expected_chunks = data.len().div_ceil(bpc);
    for (i, chunk) in data.chunks(bpc).enumerate() {
        let actual = crc32fast::hash(chunk);
        match crc.sums.get(i) {
            Some(&exp) if exp == actual => {}
            Some(&exp) => return Err(CrcError::Mismatch { offset: (i * bpc) as u64, expected: exp, actual }),
            None => return Err(CrcError::LengthMismatch { chunks: crc.sums.len(), expected_chunks }),
        }
    }
    if crc.sums.len() != expected_chunks {
        return Err(CrcError::LengthMismatch { chunks: crc.sums.len(), expected_chunks });
    }
    Ok(())
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
