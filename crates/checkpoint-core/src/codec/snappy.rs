//! snappy-java `SnappyInputStream` framing (FORMATS.md §7.2): a 16-byte header (magic `82 'SNAPPY' 00`,
//! big-endian int32 version, big-endian int32 minimum compatible version), then chunks of big-endian int32
//! compressed length + raw Snappy data. A second header may follow (concatenated streams, which snappy-java
//! recognises by the first 4 magic bytes where a chunk length is expected). No checksum.

use super::{check_budget, Codec, CodecError, CodecErrorKind, Decompressed, SNAPPY_MAGIC};

pub(crate) const HEADER_LEN: usize = 16;

pub(crate) fn decompress(input: &[u8], max_out: usize) -> Result<Decompressed, CodecError> {
    let c = Codec::Snappy;
    let err = |at: usize, kind, msg: String| Err(CodecError::new(c, at, kind, msg));
    let mut out = Vec::new();
    let mut pos = 0usize;
    let mut blocks = 0u64;
    let mut need_header = true;
    while pos < input.len() {
        let rest = &input[pos..];
        if need_header || rest.starts_with(&SNAPPY_MAGIC[..4]) {
            if rest.len() < HEADER_LEN {
                return err(
                    pos,
                    CodecErrorKind::Truncated,
                    format!("stream header cut after {} of {HEADER_LEN} bytes", rest.len()),
                );
            }
            if &rest[..8] != SNAPPY_MAGIC {
                return err(pos, CodecErrorKind::BadMagic, "no snappy-java stream header".into());
            }
            need_header = false;
            pos += HEADER_LEN;
            continue;
        }
        if rest.len() < 4 {
            return err(pos, CodecErrorKind::Truncated, format!("chunk length cut after {} of 4 bytes", rest.len()));
        }
        let len = i32::from_be_bytes([rest[0], rest[1], rest[2], rest[3]]);
        if len < 0 {
            return err(pos, CodecErrorKind::Corrupt, format!("negative chunk length {len}"));
        }
        let len = len as usize;
        let Some(chunk) = rest.get(4..4usize.saturating_add(len)) else {
            return err(
                pos,
                CodecErrorKind::Truncated,
                format!("chunk of {len} bytes cut after {} bytes", rest.len() - 4),
            );
        };
        let olen = match snap::raw::decompress_len(chunk) {
            Ok(n) => n,
            Err(e) => return err(pos, CodecErrorKind::Corrupt, format!("snappy chunk header does not decode: {e}")),
        };
        check_budget(c, pos, out.len(), olen as u64, max_out)?;
        // A snappy element of 2–5 bytes emits at most 64 bytes, so a chunk cannot expand more than ~32×: a larger
        // declared length is corrupt, refused before its output is allocated.
        if olen as u64 > (len as u64).saturating_mul(32).saturating_add(64) {
            return err(
                pos,
                CodecErrorKind::Corrupt,
                format!("snappy chunk of {len} bytes declares {olen} decompressed bytes, more than snappy can expand"),
            );
        }
        let start = out.len();
        out.resize(start + olen, 0);
        match snap::raw::Decoder::new().decompress(chunk, &mut out[start..]) {
            Ok(n) if n == olen => {}
            Ok(n) => {
                return err(pos, CodecErrorKind::Corrupt, format!("snappy chunk decoded to {n} bytes, expected {olen}"))
            }
            Err(e) => return err(pos, CodecErrorKind::Corrupt, format!("snappy chunk does not decode: {e}")),
        }
        blocks += 1;
        pos += 4 + len;
    }
    if need_header {
        return err(0, CodecErrorKind::Truncated, "empty input: no snappy-java stream header".into());
    }
    Ok(Decompressed { codec: c, data: out, blocks, complete: true })
}
