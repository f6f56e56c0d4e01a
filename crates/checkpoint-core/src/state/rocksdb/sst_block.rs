//! Decompression of one SST block (RocksDB's `compress_format_version` 2 framings: a varint32 size, then the
//! codec's stream), bounded by [`SstLimits::max_block_bytes`], every size a block declares checked against what
//! its bytes can expand to before anything is allocated. A compression this reader does not decode is a limit.

use super::sst::{err, limit, varint32, SstError, SstLimits};
use std::io::Read;

/// The uncompressed size a block's varint32 prefix declares (RocksDB's `compress_format_version` 2) and where
/// the compressed stream starts after it; a size over [`SstLimits::max_block_bytes`] is a limit.
fn declared_size(limits: &SstLimits, data: &[u8], at: u64, what: &str, name: &str) -> Result<(usize, usize), SstError> {
    let mut pos = 0;
    let n = varint32(data, &mut pos)
        .ok_or_else(|| SstError::new(at, format!("{what} block: bad {name} uncompressed-size varint")))?
        as usize;
    let max = limits.max_block_bytes;
    if n > max {
        return limit(at, format!("{what} block decompresses to {n} bytes, over the limit of {max}"));
    }
    Ok((n, pos))
}

/// The contents of the block at `at` (`what`: data, index, ...) stored with RocksDB's `compression` type: none,
/// snappy, zlib, bzip2, LZ4/LZ4HC or ZSTD decoded within `limits`; xpress a limit; any other type damage.
pub(super) fn decompress(
    limits: &SstLimits,
    compression: u8,
    data: &[u8],
    at: u64,
    what: &str,
) -> Result<Vec<u8>, SstError> {
    let max = limits.max_block_bytes;
    match compression {
        0 => {
            if data.len() > max {
                return limit(at, format!("{what} block of {} bytes exceeds the limit of {max}", data.len()));
            }
            Ok(data.to_vec())
        }
        1 => {
            let n = snap::raw::decompress_len(data)
                .map_err(|e| SstError::new(at, format!("{what} block: bad snappy length: {e}")))?;
            if n > max {
                return limit(at, format!("{what} block decompresses to {n} bytes, over the limit of {max}"));
            }
            // A snappy copy of at most 64 bytes takes 3 bytes: more than 32 times is a size no writer made.
            if n > data.len().saturating_mul(32) {
                return err(at, format!("{what} block: {} snappy bytes cannot decompress to {n}", data.len()));
            }
            snap::raw::Decoder::new()
                .decompress_vec(data)
                .map_err(|e| SstError::new(at, format!("{what} block: snappy data corrupt: {e}")))
        }
        4 | 5 => {
            let (n, pos) = declared_size(limits, data, at, what, "LZ4")?;
            // LZ4 expands a byte to at most 255 (a match length run): more is a size no writer made.
            if n > data.len().saturating_mul(255).saturating_add(16) {
                return err(at, format!("{what} block: {} LZ4 bytes cannot decompress to {n}", data.len()));
            }
            let mut out = vec![0u8; n];
            let got = lz4_flex::block::decompress_into(&data[pos..], &mut out)
                .map_err(|e| SstError::new(at + pos as u64, format!("{what} block: LZ4 data corrupt: {e}")))?;
            if got != n {
                return err(at, format!("{what} block: LZ4 produced {got} bytes, {n} expected"));
            }
            Ok(out)
        }
        // RocksDB's zlib (compress_format_version 2): the uncompressed size as a varint32, then a raw deflate
        // stream (`CompressionOptions::window_bits` -14, which Spark's RocksDB conf does not change).
        2 => {
            let (n, pos) = declared_size(limits, data, at, what, "zlib")?;
            let stream = flate2::read::DeflateDecoder::new(&data[pos..]);
            decode_exact(stream, n, data.len(), (at, at + pos as u64), what, "zlib")
        }
        7 | 0x40 => {
            let (n, pos) = declared_size(limits, data, at, what, "ZSTD")?;
            let mut src = &data[pos..];
            let max_window = crate::codec::zstd::MAX_WINDOW_BYTES;
            let dec =
                ruzstd::decoding::StreamingDecoder::new_with_max_window_size(&mut src, max_window).map_err(|e| {
                    let message = format!("{what} block: ZSTD frame header corrupt: {e}");
                    match crate::codec::zstd::window_over_limit(&e) {
                        true => SstError::over_limit(at + pos as u64, message.replace("corrupt", "over a limit")),
                        false => SstError::new(at + pos as u64, message),
                    }
                })?;
            decode_exact(dec, n, data.len(), (at, at + pos as u64), what, "ZSTD")
        }
        // RocksDB's bzip2: the uncompressed size as a varint32, then one bzip2 stream (`BZh`).
        3 => {
            let (n, pos) = declared_size(limits, data, at, what, "bzip2")?;
            let stream = bzip2::read::BzDecoder::new(&data[pos..]);
            decode_exact(stream, n, data.len(), (at, at + pos as u64), what, "bzip2")
        }
        6 => limit(at, format!("{what} block uses xpress compression, which this reader does not decode")),
        other => err(at, format!("{what} block has unknown compression type {other}")),
    }
}

/// Exactly the `n` bytes a block declares from its decoder `stream` (never more, whatever the stream holds), with
/// at most 8 × the `compressed` bytes reserved up front. `(block, stream)`: the offsets of the block and of its
/// compressed stream, for the errors (a stream that does not decode, a size other than declared).
fn decode_exact(
    stream: impl Read,
    n: usize,
    compressed: usize,
    (block, stream_at): (u64, u64),
    what: &str,
    name: &str,
) -> Result<Vec<u8>, SstError> {
    let mut out = Vec::with_capacity(n.min(compressed.saturating_mul(8)));
    stream
        .take(n as u64 + 1)
        .read_to_end(&mut out)
        .map_err(|e| SstError::new(stream_at, format!("{what} block: {name} data corrupt: {e}")))?;
    if out.len() != n {
        return err(block, format!("{what} block: {name} produced {} bytes, {n} expected", out.len()));
    }
    Ok(out)
}
