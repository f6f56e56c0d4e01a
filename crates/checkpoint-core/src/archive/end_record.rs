//! The zip's own account of its central directory (its end records), read before any parser sizes anything by
//! it: the entry count [`super::ZipInput::open`] checks first, the place the page reads ahead.

use std::io::{Read, Seek};

/// What a zip's end-of-central-directory record declares (its zip64 record's where the classic one defers to
/// it): the zip's own account of its central directory, read before any parser sizes anything by it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct EndRecord {
    /// Total number of entries.
    pub entries: u64,
    /// The central directory's size in bytes, when declared (`None`: `0xFFFFFFFF` with no zip64 record).
    pub central_directory_bytes: Option<u64>,
    /// The central directory's offset from the start of the input, in bytes, when declared.
    pub central_directory_offset: Option<u64>,
}

/// Finds the end record in the last 22 bytes of the input (the last 64 KiB when the zip has a comment: the last
/// record whose comment reaches exactly to the end) and, when its entry count is `0xFFFF`, the zip64 end record
/// its locator points at. `None` when no end record is found there, or a zip64 locator points at no zip64
/// record (the zip reader then reports the damage). Leaves `r` at its start. APPNOTE.TXT 4.3.14–4.3.16.
pub fn end_record<R: Read + Seek>(r: &mut R, len: u64) -> Option<EndRecord> {
    use std::io::SeekFrom;
    // Most zips have no comment: try the last 22 bytes first, then the largest possible comment.
    let mut found = None;
    for tail_len in [len.min(22), len.min(22 + 65535)] {
        let mut tail = vec![0u8; tail_len as usize];
        r.seek(SeekFrom::Start(len - tail_len)).ok()?;
        r.read_exact(&mut tail).ok()?;
        // The last end record whose comment reaches exactly to the end of the input.
        let at = (0..tail.len().saturating_sub(21)).rev().find(|&i| {
            tail[i..i + 4] == *b"PK\x05\x06"
                && i + 22 + usize::from(u16::from_le_bytes([tail[i + 20], tail[i + 21]])) == tail.len()
        });
        if let Some(at) = at {
            found = Some((tail, at, len - tail_len));
            break;
        }
    }
    let _ = r.seek(SeekFrom::Start(0));
    let (tail, at, tail_start) = found?;
    let u32_at = |i: usize| u32::from_le_bytes([tail[i], tail[i + 1], tail[i + 2], tail[i + 3]]);
    let declared = |v: u32| (v != u32::MAX).then_some(u64::from(v));
    let n = u64::from(u16::from_le_bytes([tail[at + 10], tail[at + 11]]));
    let classic = EndRecord {
        entries: n,
        central_directory_bytes: declared(u32_at(at + 12)),
        central_directory_offset: declared(u32_at(at + 16)),
    };
    if n != 0xFFFF {
        return Some(classic);
    }
    // zip64: the locator sits right before the end record and points at the zip64 end record.
    let loc_at = (tail_start + at as u64).checked_sub(20)?;
    let mut loc = [0u8; 20];
    r.seek(SeekFrom::Start(loc_at)).ok()?;
    let ok = r.read_exact(&mut loc).is_ok();
    let _ = r.seek(SeekFrom::Start(0));
    if !ok || loc[..4] != *b"PK\x06\x07" {
        return Some(classic);
    }
    let u64_at = |b: &[u8], i: usize| {
        let mut v = [0u8; 8];
        v.copy_from_slice(&b[i..i + 8]);
        u64::from_le_bytes(v)
    };
    let mut rec = [0u8; 56];
    r.seek(SeekFrom::Start(u64_at(&loc, 8))).ok()?;
    let ok = r.read_exact(&mut rec).is_ok();
    let _ = r.seek(SeekFrom::Start(0));
    if !ok || rec[..4] != *b"PK\x06\x06" {
        return None;
    }
    Some(EndRecord {
        entries: u64_at(&rec, 32),
        central_directory_bytes: Some(u64_at(&rec, 40)),
        central_directory_offset: Some(u64_at(&rec, 48)),
    })
}
