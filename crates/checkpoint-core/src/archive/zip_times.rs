//! Entries' modification times in UTC, where the zip recorded one: the DOS date-time of a zip header is the
//! zipping machine's local time, in no stated zone, so an age computed from it is off by that zone ("committed
//! -7 hours ago" for a zip made in UTC+8). Info-ZIP's `zip` (Linux, macOS) and Java's zip writers add an
//! extended timestamp (0x5455: Unix seconds, UTC), 7-Zip and Windows tools an NTFS field (0x000a: FILETIME,
//! UTC); their central directory copies are read here. APPNOTE.TXT 4.5.5, Info-ZIP `extrafld.txt`.

use super::zip_names::{scan, CentralDirectory};
use super::Entry;
use std::io::{Read, Seek};

/// The UTC modification time, in ms since the epoch, of a central directory record's extra field `extra`:
/// its extended timestamp's (0x5455, flag bit 0: the modification time, 4 bytes of Unix seconds) or its NTFS
/// field's (0x000a, tag 1: modification, access and creation FILETIMEs of 100 ns since 1601-01-01). `None`
/// when it has neither or they are cut short.
pub fn utc_modified_ms(extra: &[u8]) -> Option<i64> {
    let u16_at = |i: usize| extra.get(i..i + 2).map(|b| u16::from_le_bytes([b[0], b[1]]));
    let mut x = 0;
    while let (Some(id), Some(len)) = (u16_at(x), u16_at(x + 2)) {
        let field = extra.get(x + 4..x + 4 + len as usize)?;
        match id {
            0x5455 if field.first().is_some_and(|flags| flags & 1 == 1) => {
                let secs = field.get(1..5)?;
                return Some(i64::from(u32::from_le_bytes([secs[0], secs[1], secs[2], secs[3]])) * 1000);
            }
            0x000a => {
                // 4 reserved bytes, then (tag, size, data) attributes.
                let mut a = 4;
                while let Some(h) = field.get(a..a + 4) {
                    let (tag, size) = (u16::from_le_bytes([h[0], h[1]]), u16::from_le_bytes([h[2], h[3]]) as usize);
                    let data = field.get(a + 4..a + 4 + size)?;
                    if tag == 1 && size >= 8 {
                        let ft = u64::from_le_bytes(data[..8].try_into().ok()?);
                        // 100 ns ticks since 1601-01-01 to ms since 1970-01-01.
                        return Some((ft / 10_000) as i64 - 11_644_473_600_000);
                    }
                    a += 4 + size;
                }
            }
            _ => {}
        }
        x += 4 + len as usize;
    }
    None
}

/// Sets `entries[i].modified_ms` to the UTC time of the central directory record at `cd_pos[i]` (one offset
/// per entry; nothing is set when the lengths differ), for the records that carry one ([`utc_modified_ms`]);
/// the others keep their DOS time. One more pass over the central directory, sequential (the page's reader
/// still holds it), and none when its first record carries no such field (only that record is read): zips
/// are written by one tool, and Python's and Windows Explorer's carry none. A read error leaves the DOS times.
pub(super) fn set_utc_times<R: Read + Seek>(
    r: &mut R,
    bytes: u64,
    cd: CentralDirectory,
    cd_pos: &[u64],
    entries: &mut [Entry],
    max: usize,
) {
    if cd_pos.len() != entries.len() {
        return;
    }
    // The first record alone, through a small buffer: a zip without such times costs no more reading than its
    // listing.
    let mut first = false;
    let _ = scan(r, bytes, cd, 0, 512, |_, extra, _, _| {
        first = utc_modified_ms(extra).is_some();
        false
    });
    if !first {
        return;
    }
    // Positions in central directory order (the zip reader's order, so mostly sorted already).
    let mut order: Vec<u32> = (0..entries.len() as u32).collect();
    order.sort_by_key(|&i| cd_pos[i as usize]);
    let mut next = 0;
    let _ = scan(r, bytes, cd, max, super::zip_names::SCAN_BUFFER, |_, extra, at, _| {
        let t = utc_modified_ms(extra);
        while next < order.len() && cd_pos[order[next] as usize] < at {
            next += 1;
        }
        if let (Some(t), Some(&i)) = (t, order.get(next)) {
            if cd_pos[i as usize] == at {
                entries[i as usize].modified_ms = Some(t);
            }
        }
        true
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_the_extended_timestamp_and_the_ntfs_time() {
        // Info-ZIP's central copy: flags 3 (mtime, atime), the mtime only.
        let ut = [0x55, 0x54, 5, 0, 3, 0x80, 0x3c, 0x0f, 0x6b];
        assert_eq!(utc_modified_ms(&ut), Some(0x6b0f_3c80 * 1000));
        // After a Unix ids field (0x7875).
        let mut both = vec![0x75, 0x78, 3, 0, 1, 0, 0];
        both.extend_from_slice(&ut);
        assert_eq!(utc_modified_ms(&both), Some(0x6b0f_3c80 * 1000));
        // NTFS: 2026-12-01T00:00:00Z = 134_090_784_000_000_000 ticks.
        let ft: u64 = (1_796_083_200_000 + 11_644_473_600_000) * 10_000;
        let mut ntfs = vec![0x0a, 0x00, 32, 0, 0, 0, 0, 0, 1, 0, 24, 0];
        ntfs.extend_from_slice(&ft.to_le_bytes());
        ntfs.extend_from_slice(&[0; 16]);
        assert_eq!(utc_modified_ms(&ntfs), Some(1_796_083_200_000));
        // No time, flags without the mtime bit, fields cut short.
        assert_eq!(utc_modified_ms(&[]), None);
        assert_eq!(utc_modified_ms(&[0x55, 0x54, 1, 0, 2]), None);
        assert_eq!(utc_modified_ms(&[0x55, 0x54, 5, 0, 1, 0]), None);
        assert_eq!(utc_modified_ms(&[0x0a, 0x00, 8, 0, 0, 0, 0, 0, 1, 0, 24, 0]), None);
    }
}
