//! lz4-java `LZ4BlockInputStream` framing (FORMATS.md §7.1), as Spark's `LZ4CompressionCodec` reads it:
//! `new LZ4BlockInputStream(in, /* stopOnEmptyBlock = */ false)`, so several streams may be concatenated and
//! the reader goes on after each end-of-stream block until EOF.
//!
//! Block header (21 bytes): magic `LZ4Block`, token (method `0x10` RAW / `0x20` LZ4 in the high nibble,
//! compression level `log2(blockSize) - 10` in the low nibble), compressed length (LE i32), decompressed
//! length (LE i32), checksum (LE i32: xxHash32 seed `0x9747B28C` of the decompressed bytes, masked `0x0FFFFFFF`).

use super::{check_budget, Codec, CodecError, CodecErrorKind, Decompressed, LZ4_MAGIC};

/// Header length of one lz4-java block.
pub(crate) const HEADER_LEN: usize = 21;
/// Seed of lz4-java's `XXHashFactory.newStreamingHash32(DEFAULT_SEED)`.
pub(crate) const XXHASH_SEED: u32 = 0x9747_B28C;
/// lz4-java masks the 32-bit hash to 28 bits (`StreamingXXHash32.asChecksum`).
pub(crate) const CHECKSUM_MASK: u32 = 0x0FFF_FFFF;
const METHOD_RAW: u8 = 0x10;
const METHOD_LZ4: u8 = 0x20;
const LEVEL_BASE: u32 = 10;

fn le_i32(b: &[u8], at: usize) -> i32 {
    let mut w = [0u8; 4];
    w.copy_from_slice(&b[at..at + 4]);
    i32::from_le_bytes(w)
}

/// lz4-java's block checksum of decompressed bytes.
pub(crate) fn checksum(data: &[u8]) -> u32 {
    xxhash_rust::xxh32::xxh32(data, XXHASH_SEED) & CHECKSUM_MASK
}

pub(crate) fn decompress(input: &[u8], max_out: usize) -> Result<Decompressed, CodecError> {
    let mut out: Vec<u8> = Vec::with_capacity(declared_output(input).min(max_out));
    let (blocks, complete) = run(input, max_out, &mut out, None)?;
    Ok(Decompressed { codec: Codec::Lz4Block, data: out, blocks, complete })
}

/// Decodes block by block, handing each block's bytes to `emit` (at most one block, 32 KiB in Spark, is held).
/// Returns (blocks, complete) as [`Decompressed`] has them.
pub(crate) fn stream(input: &[u8], max_out: usize, emit: &mut dyn FnMut(&[u8])) -> Result<(u64, bool), CodecError> {
    let mut scratch = Vec::new();
    run(input, max_out, &mut scratch, Some(emit))
}

/// Receives each decoded block when streaming.
type Emit<'e> = &'e mut dyn FnMut(&[u8]);

fn run(input: &[u8], max_out: usize, out: &mut Vec<u8>, mut emit: Option<Emit<'_>>) -> Result<(u64, bool), CodecError> {
    let c = Codec::Lz4Block;
    let err = |at: usize, kind, msg: String| Err(CodecError::new(c, at, kind, msg));
    let mut emitted = 0usize;
    let mut pos = 0usize;
    let mut blocks = 0u64;
    // true right after an end-of-stream block (or at the start of an empty input).
    let mut at_stream_end = false;
    while pos < input.len() {
        let rest = &input[pos..];
        if rest.len() < HEADER_LEN {
            return err(
                pos,
                CodecErrorKind::Truncated,
                format!(
                    "block header cut after {} of {HEADER_LEN} bytes (lz4-java: Stream ended prematurely)",
                    rest.len()
                ),
            );
        }
        if &rest[..8] != LZ4_MAGIC {
            return err(
                pos,
                CodecErrorKind::BadMagic,
                "block does not start with `LZ4Block` (lz4-java: Stream is corrupted)".into(),
            );
        }
        let token = rest[8];
        let method = token & 0xF0;
        let level = LEVEL_BASE + u32::from(token & 0x0F);
        let clen = le_i32(rest, 9);
        let olen = le_i32(rest, 13);
        let check = le_i32(rest, 17) as u32;
        if method != METHOD_RAW && method != METHOD_LZ4 {
            return err(pos, CodecErrorKind::Corrupt, format!("unknown block method in token 0x{token:02x}"));
        }
        if clen < 0 || olen < 0 {
            return err(
                pos,
                CodecErrorKind::Corrupt,
                format!("negative block length (compressed {clen}, decompressed {olen})"),
            );
        }
        // A header no writer makes (a block over its token's size, gigabytes from bytes) is damage, as lz4-java
        // says; only then is a block that would take the stream past the caller's limit over that limit (a limit
        // of the reader, not damage). Neither allocates.
        if (olen as u64) > (1u64 << level)
            || (olen == 0 && clen != 0)
            || (olen != 0 && clen == 0)
            || (method == METHOD_RAW && olen != clen)
            || (olen as u64) > max_expansion(clen as u64)
        {
            return err(
                pos,
                CodecErrorKind::Corrupt,
                format!("impossible block header: token 0x{token:02x}, compressed {clen}, decompressed {olen} bytes"),
            );
        }
        check_budget(c, pos, emitted + out.len(), olen as u64, max_out)?;
        if olen == 0 {
            // End-of-stream block.
            if check != 0 {
                return err(
                    pos,
                    CodecErrorKind::Corrupt,
                    format!("end-of-stream block with non-zero checksum 0x{check:08x}"),
                );
            }
            pos += HEADER_LEN;
            at_stream_end = true;
            continue;
        }
        at_stream_end = false;
        let (clen, olen) = (clen as usize, olen as usize);
        let payload_at = pos + HEADER_LEN;
        let Some(payload) = input.get(payload_at..payload_at.saturating_add(clen)) else {
            return err(
                pos,
                CodecErrorKind::Truncated,
                format!(
                    "block payload of {clen} bytes cut after {} bytes (lz4-java: Stream ended prematurely)",
                    input.len() - payload_at
                ),
            );
        };
        let start = out.len();
        decode_block(pos, method == METHOD_RAW, payload, olen, out)?;
        let got = checksum(&out[start..]);
        if got != check {
            return err(
                pos,
                CodecErrorKind::ChecksumMismatch,
                format!(
                    "block checksum 0x{check:08x} in header, 0x{got:08x} computed (xxHash32 of the decompressed bytes)"
                ),
            );
        }
        blocks += 1;
        pos = payload_at + clen;
        if let Some(e) = emit.as_mut() {
            e(out);
            emitted += out.len();
            out.clear();
        }
    }
    Ok((blocks, at_stream_end))
}

/// Decodes one block's payload (raw or LZ4) onto the end of `out`; the block starts at byte `pos` of the input.
fn decode_block(pos: usize, raw: bool, payload: &[u8], olen: usize, out: &mut Vec<u8>) -> Result<(), CodecError> {
    let c = Codec::Lz4Block;
    let start = out.len();
    if raw {
        out.extend_from_slice(payload);
        return Ok(());
    }
    out.resize(start + olen, 0);
    match lz4_flex::block::decompress_into(payload, &mut out[start..]) {
        Ok(n) if n == olen => Ok(()),
        Ok(n) => Err(CodecError::new(
            c,
            pos,
            CodecErrorKind::Corrupt,
            format!("lz4 block starting at byte {pos} decoded to {n} bytes, header says {olen}"),
        )),
        Err(e) => Err(CodecError::new(
            c,
            pos,
            CodecErrorKind::Corrupt,
            format!("lz4 block starting at byte {pos} does not decode: {e}"),
        )),
    }
}

/// Sum of the decompressed lengths the block headers declare (walking headers only, stopping at the first one that
/// does not look right), so that the output is allocated once; the real checks happen while decoding.
///
/// Only blocks whose payload is present and whose length fits the header's own block size count, so a few lying
/// 21-byte headers cannot make us reserve up to `max_out` bytes (which a wasm build would really commit).
/// The most bytes `clen` compressed bytes can decode to: an LZ4 sequence's match length grows by 255 per
/// extension byte, so no block expands more than ~255× (plus a few bytes of the last literals). A header that
/// declares more is corrupt, and is refused before anything is allocated for it.
fn max_expansion(clen: u64) -> u64 {
    clen.saturating_mul(256).saturating_add(64)
}

fn declared_output(input: &[u8]) -> usize {
    let mut pos = 0usize;
    let mut total = 0usize;
    while let Some(h) = input.get(pos..pos + HEADER_LEN) {
        if &h[..8] != LZ4_MAGIC {
            break;
        }
        let (clen, olen) = (le_i32(h, 9), le_i32(h, 13));
        let level = LEVEL_BASE + u32::from(h[8] & 0x0F);
        if clen < 0 || olen < 0 || (olen as u64) > (1u64 << level) || (olen as u64) > max_expansion(clen as u64) {
            break;
        }
        let next = pos.saturating_add(HEADER_LEN).saturating_add(clen as usize);
        if next > input.len() {
            break;
        }
        total = total.saturating_add(olen as usize);
        pos = next;
    }
    total
}
