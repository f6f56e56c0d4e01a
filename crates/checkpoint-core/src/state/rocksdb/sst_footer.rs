//! The footer, block handles, varints and block checksums of RocksDB's block-based table format
//! (`table/format.cc`, `util/coding.h`, `table/block_based/block_based_table_reader.cc`), used by [`super::sst`].

use super::sst::*;

// ---------------------------------------------------------------- primitive decoding

pub(super) fn fixed32(b: &[u8], at: usize) -> Option<u32> {
    let s = b.get(at..at.checked_add(4)?)?;
    Some(u32::from_le_bytes([s[0], s[1], s[2], s[3]]))
}

pub(super) fn fixed64(b: &[u8], at: usize) -> Option<u64> {
    let s = b.get(at..at.checked_add(8)?)?;
    let mut a = [0u8; 8];
    a.copy_from_slice(s);
    Some(u64::from_le_bytes(a))
}

/// Decodes a varint of at most `max_bytes` bytes from `b[*pos..]`, advancing `pos`.
pub(super) fn varint(b: &[u8], pos: &mut usize, max_bytes: usize) -> Option<u64> {
    let mut result: u64 = 0;
    for i in 0..max_bytes {
        let byte = *b.get(*pos)?;
        *pos += 1;
        result |= u64::from(byte & 0x7f) << (7 * i);
        if byte & 0x80 == 0 {
            if max_bytes == 5 && result > u64::from(u32::MAX) {
                return None;
            }
            return Some(result);
        }
    }
    None
}

pub(super) fn varint32(b: &[u8], pos: &mut usize) -> Option<u32> {
    varint(b, pos, 5).map(|v| v as u32)
}

pub(super) fn varint64(b: &[u8], pos: &mut usize) -> Option<u64> {
    varint(b, pos, 10)
}

pub(super) fn block_handle(b: &[u8], pos: &mut usize) -> Option<BlockHandle> {
    let offset = varint64(b, pos)?;
    let size = varint64(b, pos)?;
    Some(BlockHandle { offset, size })
}

// ---------------------------------------------------------------- checksums

pub(super) fn crc32c_masked(data: &[u8]) -> u32 {
    const CRC32C: crc::Crc<u32> = crc::Crc::<u32>::new(&crc::CRC_32_ISCSI);
    let c = CRC32C.checksum(data);
    (c.rotate_right(15)).wrapping_add(0xa282_ead8)
}

/// `ComputeBuiltinChecksum` of table/format.cc over `data` (which includes the compression-type byte).
pub fn builtin_checksum(kind: ChecksumType, data: &[u8]) -> u32 {
    match kind {
        ChecksumType::None => 0,
        ChecksumType::Crc32c => crc32c_masked(data),
        ChecksumType::XxHash32 => xxhash_rust::xxh32::xxh32(data, 0),
        ChecksumType::XxHash64 => xxhash_rust::xxh64::xxh64(data, 0) as u32,
        ChecksumType::Xxh3 => match data.split_last() {
            None => 0,
            Some((last, rest)) => {
                let v = xxhash_rust::xxh3::xxh3_64(rest) as u32;
                v ^ u32::from(*last).wrapping_mul(0x6b90_83d9)
            }
        },
    }
}

/// `ChecksumModifierForContext` of table/format.h: 0 when `base` is 0 (format_version < 6).
pub(super) fn context_modifier(base: u32, offset: u64) -> u32 {
    if base == 0 {
        return 0;
    }
    base ^ ((offset as u32).wrapping_add((offset >> 32) as u32))
}

// ---------------------------------------------------------------- footer

/// Decodes the footer at the end of `file`.
///
/// Errors: too short, unknown or legacy magic, unsupported format_version or checksum type, bad extended magic
/// or footer checksum (format_version >= 6), undecodable block handles.
pub fn read_footer(file: &[u8]) -> Result<Footer, SstError> {
    let len = file.len();
    if len < FOOTER_LEN {
        return err(0, format!("file is too short ({len} bytes) to be an sstable"));
    }
    let magic_at = len - 8;
    let magic = fixed64(file, magic_at).unwrap_or(0);
    match magic {
        BLOCK_BASED_TABLE_MAGIC => {}
        LEGACY_BLOCK_BASED_TABLE_MAGIC => {
            return err(
                magic_at as u64,
                "unsupported legacy magic number for block-based SST format (format_version < 2)",
            )
        }
        PLAIN_TABLE_MAGIC | LEGACY_PLAIN_TABLE_MAGIC => {
            return err(magic_at as u64, "plain table SST files are not supported (not a block-based table)")
        }
        CUCKOO_TABLE_MAGIC => return err(magic_at as u64, "cuckoo table SST files are not supported"),
        other => return err(magic_at as u64, format!("bad table magic number 0x{other:016x}: not an SST file")),
    }
    let fv_at = len - 12;
    let format_version = fixed32(file, fv_at).unwrap_or(u32::MAX);
    if !(2..=7).contains(&format_version) {
        return err(fv_at as u64, format!("corrupt or unsupported format_version {format_version}"));
    }
    let footer_at = len - FOOTER_LEN;
    let footer = &file[footer_at..];
    let checksum = match ChecksumType::from_byte(footer[0]) {
        Some(c) => c,
        None => return err(footer_at as u64, format!("corrupt or unsupported checksum type {}", footer[0])),
    };
    if format_version >= 6 {
        if footer[1..5] != EXTENDED_MAGIC {
            return err(footer_at as u64 + 1, "bad extended magic number in footer");
        }
        let stored = fixed32(footer, 5).unwrap_or(0);
        let base = fixed32(footer, 9).unwrap_or(0);
        if context_modifier(base, 0) == 0 {
            return err(footer_at as u64 + 9, "invalid base context checksum");
        }
        if checksum != ChecksumType::None {
            let mut copy = [0u8; FOOTER_LEN];
            copy.copy_from_slice(footer);
            copy[5..9].fill(0);
            let computed = builtin_checksum(checksum, &copy).wrapping_add(context_modifier(base, footer_at as u64));
            if computed != stored {
                return err(
                    footer_at as u64,
                    format!("footer checksum mismatch (stored {stored}, computed {computed})"),
                );
            }
        }
        let metaindex_size = u64::from(fixed32(footer, 13).unwrap_or(0));
        if fixed64(footer, 33).unwrap_or(1) != 0 {
            return err(footer_at as u64 + 33, "file uses a future feature not supported (reserved footer bytes set)");
        }
        let metaindex_end = (footer_at as u64).saturating_sub(BLOCK_TRAILER_LEN as u64);
        if metaindex_size > metaindex_end {
            return err(footer_at as u64 + 13, format!("metaindex size {metaindex_size} exceeds the file"));
        }
        Ok(Footer {
            format_version,
            checksum,
            metaindex: BlockHandle { offset: metaindex_end - metaindex_size, size: metaindex_size },
            index: None,
            base_context_checksum: base,
        })
    } else {
        let mut pos = 1;
        let part2 = &footer[..41];
        let metaindex = block_handle(part2, &mut pos);
        let index = block_handle(part2, &mut pos);
        match (metaindex, index) {
            (Some(m), Some(i)) => {
                Ok(Footer { format_version, checksum, metaindex: m, index: Some(i), base_context_checksum: 0 })
            }
            _ => err(footer_at as u64 + 1, "bad block handle in footer"),
        }
    }
}
