//! RocksDB's `MANIFEST-<n>` file inside a `<v>.zip`: the log of `VersionEdit`s that says which SST files are
//! live. RocksDB refuses to open a checkpoint whose live files are missing or of another size, so comparing
//! the manifest with Spark's `metadata` finds the mismatches that make `RocksDB.open` fail on restart.
//!
//! Mirrors RocksDB's db/log_format.h + db/log_reader.cc (32 KiB blocks of records with a 7-byte header:
//! masked CRC32C, length, type; 11 bytes for recyclable types) and db/version_edit.cc (`VersionEdit::DecodeFrom`,
//! `DecodeNewFile4From`).

use std::collections::BTreeMap;

const BLOCK_SIZE: usize = 32768;

crate::parse_error::parse_error_type!(
    /// Why a MANIFEST cannot be read; `offset` is the byte offset in the MANIFEST file.
    ManifestError,
    ManifestFormat,
    "at byte"
);

fn merr<T>(offset: usize, message: impl Into<String>) -> Result<T, ManifestError> {
    Err(ManifestError::new(offset, message.into()))
}

/// One live SST file according to the manifest.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LiveFile {
    /// Column family id (0 = `default`).
    pub column_family: u32,
    /// LSM level.
    pub level: u32,
    /// File number (`000018.sst` is 18).
    pub number: u64,
    /// File size in bytes.
    pub size: u64,
}

/// What the manifest says.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Manifest {
    /// Live SST files after applying every edit, ordered by (column family, number).
    pub live_files: Vec<LiveFile>,
    /// Column families added (id → name); `default` (0) is implicit.
    pub column_families: BTreeMap<u32, String>,
    /// Comparator name, when recorded.
    pub comparator: Option<String>,
    /// `kLastSequence` of the last edit that set it.
    pub last_sequence: Option<u64>,
    /// Number of version edits read.
    pub edits: usize,
    /// True when the file ends inside a record (a torn last write that RocksDB ignores).
    pub torn_tail: bool,
}

fn mask_crc(c: u32) -> u32 {
    c.rotate_right(15).wrapping_add(0xa282_ead8)
}

/// Splits the log into records (payloads), checking CRCs. Returns (record start offset, payload).
/// Log records: (offset of the record's first fragment, payload).
type Records = Vec<(usize, Vec<u8>)>;

fn read_log_records(b: &[u8]) -> Result<(Records, bool), ManifestError> {
    const C: crc::Crc<u32> = crc::Crc::<u32>::new(&crc::CRC_32_ISCSI);
    let mut out = Vec::new();
    let mut pending: Option<(usize, Vec<u8>)> = None;
    let mut pos = 0;
    while pos < b.len() {
        let left_in_block = BLOCK_SIZE - pos % BLOCK_SIZE;
        if left_in_block < 7 {
            pos += left_in_block;
            continue;
        }
        if b.len() - pos < 7 {
            return Ok((out, true));
        }
        let stored = u32::from_le_bytes([b[pos], b[pos + 1], b[pos + 2], b[pos + 3]]);
        let len = u16::from_le_bytes([b[pos + 4], b[pos + 5]]) as usize;
        let kind = b[pos + 6];
        if kind == 0 && len == 0 {
            // Zero padding (preallocated space): nothing more in this block.
            pos += left_in_block;
            continue;
        }
        let header = if (5..=8).contains(&kind) || kind == 11 || kind == 131 { 11 } else { 7 };
        if header + len > left_in_block {
            return merr(pos, format!("record of {len} bytes crosses a 32 KiB block boundary"));
        }
        if pos + header + len > b.len() {
            return Ok((out, true));
        }
        let computed = mask_crc(C.checksum(&b[pos + 6..pos + header + len]));
        if computed != stored {
            return merr(
                pos,
                format!("log record checksum mismatch (stored {stored:#010x}, computed {computed:#010x})"),
            );
        }
        let payload = &b[pos + header..pos + header + len];
        match kind {
            1 | 5 => {
                if pending.is_some() {
                    return merr(pos, "a full record follows an unfinished fragmented record");
                }
                out.push((pos, payload.to_vec()));
            }
            2 | 6 => {
                if pending.is_some() {
                    return merr(pos, "a first fragment follows an unfinished fragmented record");
                }
                pending = Some((pos, payload.to_vec()));
            }
            3 | 7 => match pending.as_mut() {
                Some((_, p)) => p.extend_from_slice(payload),
                None => return merr(pos, "a middle fragment without a first fragment"),
            },
            4 | 8 => match pending.take() {
                Some((start, mut p)) => {
                    p.extend_from_slice(payload);
                    out.push((start, p));
                }
                None => return merr(pos, "a last fragment without a first fragment"),
            },
            k if k & 0x80 != 0 => {}
            k => return merr(pos, format!("unknown log record type {k}")),
        }
        pos += header + len;
    }
    Ok((out, pending.is_some()))
}

fn varint(b: &[u8], pos: &mut usize, max_bytes: usize) -> Option<u64> {
    let mut result: u64 = 0;
    for i in 0..max_bytes {
        let byte = *b.get(*pos)?;
        *pos += 1;
        result |= u64::from(byte & 0x7f) << (7 * i);
        if byte & 0x80 == 0 {
            return Some(result);
        }
    }
    None
}

fn v32(b: &[u8], pos: &mut usize) -> Option<u32> {
    varint(b, pos, 5).and_then(|v| u32::try_from(v).ok())
}

fn v64(b: &[u8], pos: &mut usize) -> Option<u64> {
    varint(b, pos, 10)
}

fn slice<'a>(b: &'a [u8], pos: &mut usize) -> Option<&'a [u8]> {
    let n = v32(b, pos)? as usize;
    let s = b.get(*pos..pos.checked_add(n)?)?;
    *pos += n;
    Some(s)
}

/// Parses a MANIFEST file.
///
/// Errors: bad record checksums or framing, a version edit with an unknown non-ignorable tag or undecodable
/// fields (RocksDB: `Corruption: VersionEdit: ...`). A file ending inside a record is not an error
/// (`torn_tail`).
pub fn parse_manifest(b: &[u8]) -> Result<Manifest, ManifestError> {
    let (records, torn_tail) = read_log_records(b)?;
    let mut live: BTreeMap<(u32, u64), LiveFile> = BTreeMap::new();
    let mut m = Manifest { torn_tail, ..Default::default() };
    for (at, rec) in &records {
        let at = *at;
        let bad = |what: &str| ManifestError::new(at, format!("VersionEdit: {what}"));
        let mut cf = 0u32;
        let mut adds = Vec::new();
        let mut dels = Vec::new();
        let mut pos = 0;
        while pos < rec.len() {
            let tag = v32(rec, &mut pos).ok_or_else(|| bad("bad tag"))?;
            match tag {
                1 => {
                    m.comparator = Some(
                        String::from_utf8_lossy(slice(rec, &mut pos).ok_or_else(|| bad("comparator name"))?)
                            .into_owned(),
                    )
                }
                2 | 3 | 9 | 10 => {
                    v64(rec, &mut pos).ok_or_else(|| bad("number field"))?;
                }
                4 => m.last_sequence = Some(v64(rec, &mut pos).ok_or_else(|| bad("last sequence number"))?),
                5 => {
                    v32(rec, &mut pos).ok_or_else(|| bad("compaction cursor level"))?;
                    slice(rec, &mut pos).ok_or_else(|| bad("compaction cursor key"))?;
                }
                6 => {
                    let level = v32(rec, &mut pos).ok_or_else(|| bad("deleted file level"))?;
                    let number = v64(rec, &mut pos).ok_or_else(|| bad("deleted file number"))?;
                    dels.push((level, number));
                }
                7 | 100 | 102 | 103 => {
                    let level = v32(rec, &mut pos).ok_or_else(|| bad("new-file level"))?;
                    let number = v64(rec, &mut pos).ok_or_else(|| bad("new-file number"))?;
                    if tag == 102 {
                        v32(rec, &mut pos).ok_or_else(|| bad("new-file3 path id"))?;
                    }
                    let size = v64(rec, &mut pos).ok_or_else(|| bad("new-file size"))?;
                    slice(rec, &mut pos).ok_or_else(|| bad("new-file smallest key"))?;
                    slice(rec, &mut pos).ok_or_else(|| bad("new-file largest key"))?;
                    if tag != 7 {
                        v64(rec, &mut pos).ok_or_else(|| bad("new-file smallest seqno"))?;
                        v64(rec, &mut pos).ok_or_else(|| bad("new-file largest seqno"))?;
                    }
                    if tag == 103 {
                        loop {
                            let custom = v32(rec, &mut pos).ok_or_else(|| bad("new-file4 custom field"))?;
                            if custom == 1 {
                                break;
                            }
                            slice(rec, &mut pos)
                                .ok_or_else(|| bad("new-file4 custom field length prefixed slice error"))?;
                            if custom & (1 << 6) != 0 && custom != 65 {
                                return Err(bad(&format!("new-file4 custom field {custom} is not understood")));
                            }
                        }
                    }
                    adds.push((level, number, size));
                }
                200 => cf = v32(rec, &mut pos).ok_or_else(|| bad("column family id"))?,
                201 => {
                    let name = slice(rec, &mut pos).ok_or_else(|| bad("column family name"))?;
                    m.column_families.insert(cf, String::from_utf8_lossy(name).into_owned());
                }
                202 => {
                    m.column_families.remove(&cf);
                }
                203 | 300 => {
                    v32(rec, &mut pos).ok_or_else(|| bad("number field"))?;
                }
                t if t & (1 << 13) != 0 => {
                    slice(rec, &mut pos).ok_or_else(|| bad("safely ignoreable tag length error"))?;
                }
                t => return Err(bad(&format!("unknown tag {t}"))),
            }
        }
        for (_, number) in dels {
            live.remove(&(cf, number));
        }
        for (level, number, size) in adds {
            live.insert((cf, number), LiveFile { column_family: cf, level, number, size });
        }
        m.edits += 1;
    }
    m.live_files = live.into_values().collect();
    Ok(m)
}

/// A difference between the manifest's live files and Spark's `metadata` list.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ManifestMismatch {
    /// The manifest needs this SST but Spark's metadata does not list it (RocksDB open would fail).
    NotInMetadata {
        /// File number.
        number: u64,
        /// Size per the manifest.
        size: u64,
    },
    /// Spark's metadata lists an SST the manifest does not consider live.
    NotLive {
        /// Local file name from the metadata.
        local_file_name: String,
    },
    /// Both know the file but with different sizes (`Sst file size mismatch` in RocksDB).
    SizeDiffers {
        /// File number.
        number: u64,
        /// Size per the manifest.
        manifest: u64,
        /// Size per Spark's metadata.
        metadata: u64,
    },
}

/// Compares the manifest's live files (all column families) with Spark's metadata SST list.
pub fn compare_with_metadata(m: &Manifest, meta: &super::zip_meta::CheckpointMetadata) -> Vec<ManifestMismatch> {
    let mut out = Vec::new();
    let listed: Vec<(Option<u64>, &super::zip_meta::ImmutableFile)> = meta
        .sst_files
        .iter()
        .map(|f| (f.local_file_name.strip_suffix(".sst").and_then(|n| n.parse::<u64>().ok()), f))
        .collect();
    for lf in &m.live_files {
        match listed.iter().find(|(n, _)| *n == Some(lf.number)) {
            None => out.push(ManifestMismatch::NotInMetadata { number: lf.number, size: lf.size }),
            Some((_, f)) if f.size_bytes != lf.size => {
                out.push(ManifestMismatch::SizeDiffers { number: lf.number, manifest: lf.size, metadata: f.size_bytes })
            }
            Some(_) => {}
        }
    }
    for (n, f) in &listed {
        if !m.live_files.iter().any(|lf| Some(lf.number) == *n) {
            out.push(ManifestMismatch::NotLive { local_file_name: f.local_file_name.clone() });
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn record(kind: u8, payload: &[u8]) -> Vec<u8> {
        const C: crc::Crc<u32> = crc::Crc::<u32>::new(&crc::CRC_32_ISCSI);
        let mut body = vec![kind];
        body.extend_from_slice(payload);
        let crc = mask_crc(C.checksum(&body));
        let mut out = crc.to_le_bytes().to_vec();
        out.extend_from_slice(&(payload.len() as u16).to_le_bytes());
        out.extend(body);
        out
    }

    #[test]
    fn edits_add_and_delete_files() {
        // edit 1: comparator, new file 4 (level 0, #8, 1200 bytes); edit 2: delete #8, add #9
        let mut e1 = vec![1u8, 26];
        e1.extend_from_slice(b"leveldb.BytewiseComparator");
        e1.extend_from_slice(&[103, 0, 8, 0xb0, 0x09, 1, b'a', 1, b'z', 1, 2, 1]);
        let mut e2 = vec![6u8, 0, 8, 103, 1, 9, 100, 1, b'a', 1, b'b', 3, 4, 1];
        let mut log = record(1, &e1);
        log.extend(record(1, &e2));
        let m = parse_manifest(&log).unwrap();
        assert_eq!(m.comparator.as_deref(), Some("leveldb.BytewiseComparator"));
        assert_eq!(m.live_files, vec![LiveFile { column_family: 0, level: 1, number: 9, size: 100 }]);
        // every truncation: an error or a torn tail, never a panic
        for n in 0..log.len() {
            if let Ok(m) = parse_manifest(&log[..n]) {
                assert!(m.torn_tail || m.edits < 2 || n == log.len(), "cut at {n}");
            }
        }
        e2[0] = 99; // unknown tag
        let mut bad = record(1, &e1);
        bad.extend(record(1, &e2));
        assert!(parse_manifest(&bad).is_err());
    }
}
