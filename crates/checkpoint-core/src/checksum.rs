//! Spark 4.1+ checkpoint file checksums (FORMATS.md §15): `<name>.crc` (no leading dot) holding JSON
//! `{"algorithm":"CRC32C","value":<signed int>,"mainFileSize":<bytes>,...}` for the whole main file as
//! stored. Mirrors `ChecksumCheckpointFileManager`; a mismatch is Spark's
//! `CHECKPOINT_FILE_CHECKSUM_VERIFICATION_FAILED`.

use crc::{Crc, CRC_32_ISCSI};

const CRC32C: Crc<u32> = Crc::<u32>::new(&CRC_32_ISCSI);

/// A parsed Spark checksum file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SparkChecksum {
    /// `algorithm` (`CRC32C`).
    pub algorithm: String,
    /// `value`: the CRC32C as a signed Java int.
    pub value: i32,
    /// `mainFileSize` in bytes.
    pub main_file_size: u64,
    /// `timestampMs`: when the writer closed the main file (ms since the epoch), when recorded.
    pub timestamp_ms: Option<i64>,
    /// `creator`: `executorId` and `taskInfo` of the writer (`driver, Task= 0.0, Stage= 23.0`), when recorded.
    pub creator: Option<String>,
}

/// A computed-vs-expected mismatch, in the words of Spark's error message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ChecksumMismatch {
    /// Expected (size, checksum) from the sidecar.
    pub expected: (u64, i32),
    /// Computed (size, checksum) from the file.
    pub computed: (u64, i32),
}

/// Parses a checksum file; `Err` carries the byte offset and reason.
pub fn parse(bytes: &[u8]) -> Result<SparkChecksum, (u64, String)> {
    let v: serde_json::Value = serde_json::from_slice(bytes).map_err(|e| {
        let off = bytes.split(|b| *b == b'\n').take(e.line().saturating_sub(1)).map(|l| l.len() + 1).sum::<usize>()
            + e.column().saturating_sub(1);
        (off as u64, e.to_string())
    })?;
    let algorithm = v.get("algorithm").and_then(|x| x.as_str()).unwrap_or("").to_string();
    let value = v.get("value").and_then(|x| x.as_i64()).ok_or((0, "no numeric \"value\"".to_string()))?;
    let size = v.get("mainFileSize").and_then(|x| x.as_u64()).ok_or((0, "no numeric \"mainFileSize\"".to_string()))?;
    if !algorithm.eq_ignore_ascii_case("CRC32C") {
        return Err((0, format!("unknown algorithm {algorithm:?}")));
    }
    let timestamp_ms = v.get("timestampMs").and_then(|x| x.as_i64());
    let creator = v.get("creator").map(|c| {
        let field = |k: &str| c.get(k).and_then(|x| x.as_str()).unwrap_or("").to_string();
        [field("executorId"), field("taskInfo")].into_iter().filter(|s| !s.is_empty()).collect::<Vec<_>>().join(", ")
    });
    Ok(SparkChecksum { algorithm, value: value as i32, main_file_size: size, timestamp_ms, creator })
}

/// The CRC32C of `data` as Spark records it (a signed int).
pub fn crc32c(data: &[u8]) -> i32 {
    CRC32C.checksum(data) as i32
}

/// Verifies `data` against a checksum.
pub fn verify(sum: &SparkChecksum, data: &[u8]) -> Result<(), ChecksumMismatch> {
    let mut v = Verifier::new(sum);
    v.update(data);
    v.finish()
}

/// [`verify`] of a main file handed in pieces ([`Verifier::update`] in order, then [`Verifier::finish`]), in
/// constant memory.
pub struct Verifier<'a> {
    sum: &'a SparkChecksum,
    digest: crc::Digest<'static, u32>,
    len: u64,
}

impl<'a> Verifier<'a> {
    /// A verifier of the main file of `sum`.
    pub fn new(sum: &'a SparkChecksum) -> Self {
        Verifier { sum, digest: CRC32C.digest(), len: 0 }
    }

    /// The next piece of the main file.
    pub fn update(&mut self, data: &[u8]) {
        self.len += data.len() as u64;
        self.digest.update(data);
    }

    /// The answer, once every piece is handed.
    pub fn finish(self) -> Result<(), ChecksumMismatch> {
        let computed = (self.len, self.digest.finalize() as i32);
        if computed == (self.sum.main_file_size, self.sum.value) {
            Ok(())
        } else {
            Err(ChecksumMismatch { expected: (self.sum.main_file_size, self.sum.value), computed })
        }
    }
}

/// For a file name `<name>.crc` that is not a Hadoop sidecar (no leading dot), the main file's name.
pub fn main_name(file: &str) -> Option<&str> {
    if file.starts_with('.') {
        return None;
    }
    file.strip_suffix(".crc").filter(|s| !s.is_empty())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn crc32c_known_value() {
        // CRC-32C check value of "123456789".
        assert_eq!(CRC32C.checksum(b"123456789"), 0xE306_9283);
        let s = parse(br#"{"algorithm":"CRC32C","value":-1830994040,"mainFileSize":130,"timestampMs":1}"#).unwrap();
        assert_eq!((s.main_file_size, s.timestamp_ms, s.creator.as_deref()), (130, Some(1), None));
        assert!(verify(&s, &[0u8; 130]).is_err());
        assert_eq!(main_name("12.snapshot.crc"), Some("12.snapshot"));
        assert_eq!(main_name(".12.snapshot.crc"), None);
    }
}
