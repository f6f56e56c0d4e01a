//! zstd frames as zstd-jni writes them for Spark's `zstd` codec (FORMATS.md §7.3): standard RFC 8878 frames,
//! possibly several in a row (flushes) and possibly skippable frames; decoded with `ruzstd`, bounded.

use super::{check_budget, Codec, CodecError, CodecErrorKind, Decompressed, ZSTD_MAGIC};
use ruzstd::decoding::{BlockDecodingStrategy, FrameDecoder};

pub(crate) fn decompress(input: &[u8], max_out: usize) -> Result<Decompressed, CodecError> {
    let c = Codec::Zstd;
    let err = |at: usize, kind, msg: String| Err(CodecError::new(c, at, kind, msg));
    let mut out = Vec::new();
    let mut frames = 0u64;
    let mut pos = 0usize;
    let mut dec = FrameDecoder::new();
    dec.set_max_window_size((max_out as u64).clamp(8 << 20, 1 << 27));
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
            return fail(cur, format!("zstd frame header: {e}"));
        }
        loop {
            let done = match dec.decode_blocks(&mut cur, BlockDecodingStrategy::UptoBytes(64 * 1024)) {
                Ok(d) => d,
                Err(e) => return fail(cur, format!("zstd frame does not decode: {e}")),
            };
            let n = dec.can_collect();
            check_budget(c, pos, out.len(), n as u64, max_out)?;
            if let Some(chunk) = dec.collect() {
                out.extend_from_slice(&chunk);
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
    Ok(Decompressed { codec: c, data: out, blocks: frames, complete: true })
}
