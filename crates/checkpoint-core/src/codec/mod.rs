//! The compression framings Spark writes state files (`.delta`, `.snapshot`, `.changelog`) and DStream checkpoints
//! with, decoded as Spark's `CompressionCodec` reads them (FORMATS.md §7).
//!
//! Spark records the codec nowhere reliable (`spark.sql.streaming.stateStore.compression.codec` in the offset log
//! is only the setting of the last run), so [`sniff`] picks it from the first bytes:
//!
//! | codec | magic | Spark class (core/src/main/scala/org/apache/spark/io/CompressionCodec.scala) |
//! |---|---|---|
//! | [`Codec::Lz4Block`] | `LZ4Block` | `LZ4CompressionCodec` → lz4-java `LZ4BlockInputStream` (concatenation allowed) |
//! | [`Codec::Snappy`] | `82 'SNAPPY' 00` | `SnappyCompressionCodec` → snappy-java `SnappyInputStream` |
//! | [`Codec::Zstd`] | `28 B5 2F FD` | `ZStdCompressionCodec` → zstd-jni `ZstdInputStreamNoFinalizer` |
//! | [`Codec::Lzf`] | `ZV` | `LZFCompressionCodec` → ning compress-lzf `LZFInputStream` |
//!
//! The framing code is ours; the payloads are decoded by well-kept pure-Rust crates (`lz4_flex`, `snap`,
//! `ruzstd`) except LZF, whose 30-line decompressor is written here. Every decoder is bounded by `max_out`
//! (no decompression bomb), never panics on any input, and reports errors with the byte offset in the
//! **compressed** input.

use std::fmt;

mod lz4;
mod lzf;
mod snappy;
pub mod write;
pub(crate) mod zstd;

/// Which framing a compressed Spark file uses (sniffed from its first bytes, FORMATS.md §7).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Codec {
    /// lz4-java `LZ4BlockOutputStream` blocks (magic `LZ4Block`), Spark's default (`lz4`).
    Lz4Block,
    /// snappy-java `SnappyOutputStream` (magic `0x82 SNAPPY 0x00`), Spark's `snappy`.
    Snappy,
    /// Standard zstd frames (magic `28 B5 2F FD`), Spark's `zstd`.
    Zstd,
    /// ning compress-lzf chunks (magic `ZV`), Spark's `lzf`.
    Lzf,
    /// None of the above (for example an uncompressed or empty file).
    Unknown,
}

impl Codec {
    /// Spark's short name of the codec (`lz4`, `snappy`, `zstd`, `lzf`), or `unknown`.
    pub fn short_name(self) -> &'static str {
        match self {
            Codec::Lz4Block => "lz4",
            Codec::Snappy => "snappy",
            Codec::Zstd => "zstd",
            Codec::Lzf => "lzf",
            Codec::Unknown => "unknown",
        }
    }

    /// The codec a Spark conf value names, as `CompressionCodec.createCodec` resolves it (no trimming): a short
    /// name in any case (`lz4`, `LZ4`, `lzf`, `snappy`, `zstd`) or the codec's full class name
    /// (`org.apache.spark.io.LZ4CompressionCodec`, ...). `None` for any other value (Spark would load that class
    /// by name; this inspector does not know what it writes).
    pub fn from_spark_name(name: &str) -> Option<Codec> {
        Some(match name.to_ascii_lowercase().as_str() {
            "lz4" => Codec::Lz4Block,
            "lzf" => Codec::Lzf,
            "snappy" => Codec::Snappy,
            "zstd" => Codec::Zstd,
            _ => match name {
                "org.apache.spark.io.LZ4CompressionCodec" => Codec::Lz4Block,
                "org.apache.spark.io.LZFCompressionCodec" => Codec::Lzf,
                "org.apache.spark.io.SnappyCompressionCodec" => Codec::Snappy,
                "org.apache.spark.io.ZStdCompressionCodec" => Codec::Zstd,
                _ => return None,
            },
        })
    }
}

impl fmt::Display for Codec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.short_name())
    }
}

/// Magic bytes of lz4-java's block stream.
pub const LZ4_MAGIC: &[u8; 8] = b"LZ4Block";
/// Magic bytes of snappy-java's stream header.
pub const SNAPPY_MAGIC: &[u8; 8] = b"\x82SNAPPY\x00";
/// Magic bytes of a zstd frame (little-endian `0xFD2FB528`).
pub const ZSTD_MAGIC: &[u8; 4] = b"\x28\xB5\x2F\xFD";
/// Magic bytes of an LZF chunk.
pub const LZF_MAGIC: &[u8; 2] = b"ZV";

/// Picks the codec from the first bytes of a file (FORMATS.md §7). Never fails: unrecognised → [`Codec::Unknown`].
pub fn sniff(bytes: &[u8]) -> Codec {
    if bytes.starts_with(LZ4_MAGIC) {
        Codec::Lz4Block
    } else if bytes.starts_with(SNAPPY_MAGIC) {
        Codec::Snappy
    } else if bytes.starts_with(ZSTD_MAGIC) || is_zstd_skippable(bytes) {
        Codec::Zstd
    } else if bytes.starts_with(LZF_MAGIC) && matches!(bytes.get(2), Some(0) | Some(1)) {
        Codec::Lzf
    } else {
        Codec::Unknown
    }
}

fn is_zstd_skippable(bytes: &[u8]) -> bool {
    bytes.len() >= 4 && bytes[1..4] == [0x2A, 0x4D, 0x18] && (0x50..=0x5F).contains(&bytes[0])
}

/// What went wrong while decompressing.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum CodecErrorKind {
    /// The input ended mid-header or mid-block, or (lz4) without the end-of-stream block: the writer stopped early.
    /// lz4-java reports this as `java.io.EOFException: Stream ended prematurely`.
    Truncated,
    /// The input does not start with (or a later block does not carry) the codec's magic bytes.
    BadMagic,
    /// A block decoded, but its checksum (lz4-java xxHash32, zstd content checksum) does not match.
    ChecksumMismatch,
    /// A header field is impossible or the payload does not decode (lz4-java: `Stream is corrupted`).
    Corrupt,
    /// The output would exceed the caller's `max_out` bound.
    OverLimit,
}

/// Error with the byte offset in the **compressed** input where decoding failed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CodecError {
    /// The framing being decoded.
    pub codec: Codec,
    /// Byte offset in the compressed input of the header or block that failed.
    pub offset: u64,
    /// Kind of failure.
    pub kind: CodecErrorKind,
    /// Plain-words explanation (what was expected, what was found).
    pub message: String,
}

impl CodecError {
    pub(crate) fn new(codec: Codec, offset: usize, kind: CodecErrorKind, message: impl Into<String>) -> Self {
        CodecError { codec, offset: offset as u64, kind, message: message.into() }
    }
}

impl fmt::Display for CodecError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} stream, byte {}: {}", self.codec, self.offset, self.message)
    }
}

impl std::error::Error for CodecError {}

/// A decompressed file with what the framing told about it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Decompressed {
    /// The codec that was sniffed.
    pub codec: Codec,
    /// The decompressed bytes.
    pub data: Vec<u8>,
    /// Number of compressed blocks/chunks/frames decoded (lz4 end-of-stream blocks not counted).
    pub blocks: u64,
    /// `false` when an lz4 stream ended at a block boundary without its 21-byte end-of-stream block. Spark's
    /// reader (lz4-java with concatenation enabled) accepts that, but Spark's writer never produces it: the
    /// file was cut. The strict [`decompress`] reports it as [`CodecErrorKind::Truncated`] at the input length.
    pub complete: bool,
}

/// Decompresses a whole file as Spark's `CompressionCodec` wrote it; output bounded by `max_out` bytes.
///
/// Strict: a missing lz4 end-of-stream block is an error ([`CodecErrorKind::Truncated`] at the input length);
/// use [`decompress_detailed`] to read such a file the way Spark does. An input whose codec is
/// [`Codec::Unknown`] is [`CodecErrorKind::BadMagic`] at offset 0.
pub fn decompress(bytes: &[u8], max_out: usize) -> Result<Vec<u8>, CodecError> {
    let d = decompress_detailed(bytes, max_out)?;
    if !d.complete {
        return Err(CodecError::new(
            d.codec,
            bytes.len(),
            CodecErrorKind::Truncated,
            "stream ended without the lz4 end-of-stream block (21 bytes `LZ4Block` 0x1? 0 0 0): the file was cut",
        ));
    }
    Ok(d.data)
}

/// Like [`decompress`] but tolerant as Spark's reader is: an lz4 stream that ends at a block boundary without the
/// end-of-stream block is returned with `complete: false` instead of an error.
pub fn decompress_detailed(bytes: &[u8], max_out: usize) -> Result<Decompressed, CodecError> {
    let codec = sniff(bytes);
    match codec {
        Codec::Lz4Block => lz4::decompress(bytes, max_out),
        Codec::Snappy => snappy::decompress(bytes, max_out),
        Codec::Zstd => zstd::decompress(bytes, max_out),
        Codec::Lzf => lzf::decompress(bytes, max_out),
        Codec::Unknown => {
            let head: Vec<String> = bytes.iter().take(8).map(|b| format!("{b:02x}")).collect();
            Err(CodecError::new(
                Codec::Unknown,
                0,
                CodecErrorKind::BadMagic,
                format!(
                    "first bytes [{}] match no Spark compression codec (lz4 `LZ4Block`, snappy, zstd, lzf `ZV`)",
                    head.join(" ")
                ),
            ))
        }
    }
}

/// Decompresses a whole file like [`decompress`] (strict: a missing lz4 end-of-stream block is an error) but hands
/// the output to `emit` piece by piece instead of returning it: lz4 streams one block (≤ 32 KiB in Spark) at a
/// time and zstd one collected piece at a time, so a large state file is never held decompressed in memory;
/// snappy and lzf are decoded whole and emitted in 64 KiB pieces. Pieces are
/// emitted before a later block fails: callers must treat an `Err` as the end of the data.
pub fn decompress_chunks(bytes: &[u8], max_out: usize, emit: &mut dyn FnMut(&[u8])) -> Result<(), CodecError> {
    match sniff(bytes) {
        Codec::Lz4Block => {}
        // zstd streams too: a 48 KB file unpacking to 500 MiB is never held whole.
        Codec::Zstd => return zstd::stream(bytes, max_out, emit).map(|_| ()),
        // snappy, lzf, none: decoded whole, handed on in pieces (a consumer keeping a window copies no more).
        _ => {
            let data = decompress(bytes, max_out)?;
            for piece in data.chunks(64 << 10) {
                emit(piece);
            }
            return Ok(());
        }
    }
    let (_, complete) = lz4::stream(bytes, max_out, emit)?;
    if !complete {
        return Err(CodecError::new(
            Codec::Lz4Block,
            bytes.len(),
            CodecErrorKind::Truncated,
            "stream ended without the lz4 end-of-stream block (21 bytes `LZ4Block` 0x1? 0 0 0): the file was cut",
        ));
    }
    Ok(())
}

/// Fails with [`CodecErrorKind::OverLimit`] when `have + add` would exceed `max_out`.
pub(crate) fn check_budget(
    codec: Codec,
    offset: usize,
    have: usize,
    add: u64,
    max_out: usize,
) -> Result<(), CodecError> {
    if (have as u64).saturating_add(add) > max_out as u64 {
        return Err(CodecError::new(
            codec,
            offset,
            CodecErrorKind::OverLimit,
            format!("block would decompress to {add} more bytes after {have}, over the limit of {max_out} bytes"),
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests;
