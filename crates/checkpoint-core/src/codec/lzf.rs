//! ning compress-lzf `LZFInputStream` chunks (Spark's `lzf` codec): each chunk is `ZV`, a type byte, then
//! type 0 (uncompressed): big-endian u16 length + the bytes; type 1 (compressed): big-endian u16 compressed
//! length, big-endian u16 uncompressed length, then LZF data (liblzf format). The stream ends at EOF.

use super::{check_budget, Codec, CodecError, CodecErrorKind, Decompressed, LZF_MAGIC};

pub(crate) fn decompress(input: &[u8], max_out: usize) -> Result<Decompressed, CodecError> {
    let c = Codec::Lzf;
    let err = |at: usize, kind, msg: String| Err(CodecError::new(c, at, kind, msg));
    let mut out = Vec::new();
    let mut pos = 0usize;
    let mut blocks = 0u64;
    while pos < input.len() {
        let rest = &input[pos..];
        if rest.len() < 5 {
            return err(pos, CodecErrorKind::Truncated, format!("chunk header cut after {} bytes", rest.len()));
        }
        if &rest[..2] != LZF_MAGIC {
            return err(pos, CodecErrorKind::BadMagic, "chunk does not start with `ZV`".into());
        }
        let be16 = |i: usize| usize::from(u16::from_be_bytes([rest[i], rest[i + 1]]));
        match rest[2] {
            0 => {
                let len = be16(3);
                let Some(data) = rest.get(5..5 + len) else {
                    return err(
                        pos,
                        CodecErrorKind::Truncated,
                        format!("uncompressed chunk of {len} bytes cut after {} bytes", rest.len() - 5),
                    );
                };
                check_budget(c, pos, out.len(), len as u64, max_out)?;
                out.extend_from_slice(data);
                pos += 5 + len;
            }
            1 => {
                if rest.len() < 7 {
                    return err(
                        pos,
                        CodecErrorKind::Truncated,
                        format!("chunk header cut after {} of 7 bytes", rest.len()),
                    );
                }
                let (clen, olen) = (be16(3), be16(5));
                let Some(data) = rest.get(7..7 + clen) else {
                    return err(
                        pos,
                        CodecErrorKind::Truncated,
                        format!("compressed chunk of {clen} bytes cut after {} bytes", rest.len() - 7),
                    );
                };
                check_budget(c, pos, out.len(), olen as u64, max_out)?;
                let start = out.len();
                if let Err(m) = lzf_block(data, olen, &mut out) {
                    return err(pos, CodecErrorKind::Corrupt, format!("LZF chunk does not decode: {m}"));
                }
                if out.len() - start != olen {
                    return err(
                        pos,
                        CodecErrorKind::Corrupt,
                        format!("LZF chunk decoded to {} bytes, header says {olen}", out.len() - start),
                    );
                }
                pos += 7 + clen;
            }
            t => return err(pos, CodecErrorKind::Corrupt, format!("unknown LZF chunk type {t}")),
        }
        blocks += 1;
    }
    Ok(Decompressed { codec: c, data: out, blocks, complete: true })
}

/// Decodes one liblzf block, appending at most `olen` bytes to `out` (back references may only reach bytes of
/// this block, as ning's `ChunkDecoder` requires).
pub(crate) fn lzf_block(data: &[u8], olen: usize, out: &mut Vec<u8>) -> Result<(), String> {
    let base = out.len();
    let limit = base + olen;
    let mut ip = 0usize;
    while ip < data.len() {
        let ctrl = usize::from(data[ip]);
        ip += 1;
        if ctrl < 32 {
            let n = ctrl + 1;
            let Some(lit) = data.get(ip..ip + n) else {
                return Err(format!("literal run of {n} bytes at input byte {} runs past the chunk", ip - 1));
            };
            if out.len() + n > limit {
                return Err("output longer than the chunk header says".into());
            }
            out.extend_from_slice(lit);
            ip += n;
        } else {
            let mut len = ctrl >> 5;
            if len == 7 {
                let Some(&b) = data.get(ip) else {
                    return Err("back reference cut".into());
                };
                len += usize::from(b);
                ip += 1;
            }
            let Some(&lo) = data.get(ip) else {
                return Err("back reference cut".into());
            };
            ip += 1;
            let dist = ((ctrl & 0x1f) << 8) + usize::from(lo) + 1;
            len += 2;
            if dist > out.len() - base {
                return Err(format!("back reference {dist} bytes behind, only {} decoded", out.len() - base));
            }
            if out.len() + len > limit {
                return Err("output longer than the chunk header says".into());
            }
            let from = out.len() - dist;
            for i in 0..len {
                let b = out[from + i];
                out.push(b);
            }
        }
    }
    Ok(())
}
