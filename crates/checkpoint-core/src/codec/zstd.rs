//! zstd frames as zstd-jni writes them for Spark's `zstd` codec (FORMATS.md §7.3): standard RFC 8878 frames,
//! possibly several in a row (flushes) and possibly skippable frames; decoded with `ruzstd`, bounded.

use super::{check_budget, Codec, CodecError, CodecErrorKind, Decompressed, ZSTD_MAGIC};
use ruzstd::decoding::errors::FrameDecoderError;
use ruzstd::decoding::{BlockDecodingStrategy, FrameDecoder};

/// Largest zstd window a frame may declare, in bytes: the decoder reserves the window when it reads the frame
/// header, whatever the frame holds, so a 10-byte frame declaring 128 MiB took 128 MiB (and a page's worker keeps
/// the memory it grew). zstd-jni's levels up to 19 use at most 8 MiB (window log 23; Spark's default
/// `spark.io.compression.zstd.level` 1 uses 512 KiB); a larger window is a limit of this reader, not damage.
pub(crate) const MAX_WINDOW_BYTES: u64 = 8 << 20;

/// True when `e` is a frame whose window is over [`MAX_WINDOW_BYTES`] (a limit, not damage).
pub(crate) fn window_over_limit(e: &FrameDecoderError) -> bool {
    matches!(e, FrameDecoderError::WindowSizeTooBig { .. })
}

pub(crate) fn decompress(input: &[u8], max_out: usize) -> Result<Decompressed, CodecError> {
    let mut out = Vec::new();
    let frames = stream(input, max_out, &mut |chunk| out.extend_from_slice(chunk))?;
    Ok(Decompressed { codec: Codec::Zstd, data: out, blocks: frames, complete: true })
}

/// [`decompress`] handing the output to `emit` as it is decoded (pieces of at most 64 KiB), never holding it:
/// the number of frames.
pub(crate) fn stream(input: &[u8], max_out: usize, emit: &mut dyn FnMut(&[u8])) -> Result<u64, CodecError> {
    let c = Codec::Zstd;
    let err = |at: usize, kind, msg: String| Err(CodecError::new(c, at, kind, msg));
    let mut emitted = 0usize;
    let mut frames = 0u64;
    let mut pos = 0usize;
    let mut dec = FrameDecoder::new();
    dec.set_max_window_size(MAX_WINDOW_BYTES);
    while pos < input.len() {
        let rest = &input[pos..];
        if rest.len() < 4 {
            return err(pos, CodecErrorKind::Truncated, format!("frame magic cut after {} bytes", rest.len()));
        }
        if rest[1..4] == [0x2A, 0x4D, 0x18] && (0x50..=0x5F).contains(&rest[0]) {
            if rest.len() < 8 {
                return err(pos, CodecErrorKind::Truncated, "skippable frame header cut".into());
            }
            let len = u32::from_le_bytes([rest[4], rest[5], rest[6], rest[7]]) as usize;
            if rest.len() - 8 < len {
                return err(pos, CodecErrorKind::Truncated, format!("skippable frame of {len} bytes cut"));
            }
            pos += 8 + len;
            continue;
        }
        if &rest[..4] != ZSTD_MAGIC {
            return err(pos, CodecErrorKind::BadMagic, "no zstd frame magic 28 b5 2f fd".into());
        }
        let mut cur: &[u8] = rest;
        let fail = |cur: &[u8], e: String| {
            let at = pos + (rest.len() - cur.len());
            let kind = if cur.is_empty() { CodecErrorKind::Truncated } else { CodecErrorKind::Corrupt };
            Err(CodecError::new(c, if cur.is_empty() { pos } else { at }, kind, e))
        };
        if let Err(e) = dec.reset(&mut cur) {
            if window_over_limit(&e) {
                return err(pos, CodecErrorKind::OverLimit, format!("zstd frame header: {e} (a limit of this reader)"));
            }
            return fail(cur, format!("zstd frame header: {e}"));
        }
        loop {
            let done = match dec.decode_blocks(&mut cur, BlockDecodingStrategy::UptoBytes(64 * 1024)) {
                Ok(d) => d,
                Err(e) => return fail(cur, format!("zstd frame does not decode: {e}")),
            };
            let n = dec.can_collect();
            check_budget(c, pos, emitted, n as u64, max_out)?;
            if let Some(chunk) = dec.collect() {
                emitted += chunk.len();
                emit(&chunk);
            }
            if done {
                break;
            }
        }
        if let (Some(want), Some(got)) = (dec.get_checksum_from_data(), dec.get_calculated_checksum()) {
            if want != got {
                return err(
                    pos,
                    CodecErrorKind::ChecksumMismatch,
                    format!("frame content checksum 0x{want:08x}, computed 0x{got:08x}"),
                );
            }
        }
        frames += 1;
        pos += rest.len() - cur.len();
    }
    Ok(frames)
}
