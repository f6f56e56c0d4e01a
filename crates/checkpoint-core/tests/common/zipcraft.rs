// Crafting hostile zips for tests (included by `checks/snapshots.rs` and the hostile tests; plain comments,
// no inner attributes, so that `include!` works): walk a zip's central directory, change entries' compression
// method, and add central directory entries that alias another entry's local header (an overlap bomb).

/// The end of central directory record: (its offset, entry count, central directory offset, size).
pub fn end_record(z: &[u8]) -> (usize, usize, usize, usize) {
    let at = (0..z.len().saturating_sub(21)).rev().find(|&i| z[i..i + 4] == *b"PK\x05\x06").expect("end record");
    let u16_at = |o: usize| u16::from_le_bytes([z[o], z[o + 1]]) as usize;
    let u32_at = |o: usize| u32::from_le_bytes([z[o], z[o + 1], z[o + 2], z[o + 3]]) as usize;
    (at, u16_at(at + 10), u32_at(at + 16), u32_at(at + 12))
}

/// Offsets of every central directory header, in order.
pub fn central_headers(z: &[u8]) -> Vec<usize> {
    let (_, n, mut o, _) = end_record(z);
    let mut out = Vec::with_capacity(n);
    for _ in 0..n {
        assert_eq!(z[o..o + 4], *b"PK\x01\x02", "central header at {o}");
        out.push(o);
        let len = |k: usize| u16::from_le_bytes([z[o + k], z[o + k + 1]]) as usize;
        o += 46 + len(28) + len(30) + len(32);
    }
    out
}

/// Sets the compression method of every entry (central and local headers), as a zip made with bzip2 (12)
/// or LZMA (14) lists it.
pub fn set_method(z: &mut [u8], method: u16) {
    for o in central_headers(z) {
        z[o + 10..o + 12].copy_from_slice(&method.to_le_bytes());
        let local = u32::from_le_bytes([z[o + 42], z[o + 43], z[o + 44], z[o + 45]]) as usize;
        z[local + 8..local + 10].copy_from_slice(&method.to_le_bytes());
    }
}

/// Adds a central directory entry per name, each a copy of entry `target`'s (same local header, same data,
/// same declared sizes) under the new name: the entries share their compressed bytes.
pub fn alias(z: &[u8], target: usize, names: &[String]) -> Vec<u8> {
    let (_, n, cd_off, cd_size) = end_record(z);
    let heads = central_headers(z);
    let o = heads[target];
    let len = |k: usize| u16::from_le_bytes([z[o + k], z[o + k + 1]]) as usize;
    let name_len = len(28);
    let mut out = z[..cd_off + cd_size].to_vec();
    for name in names {
        let mut h = z[o..o + 46].to_vec();
        h[28..30].copy_from_slice(&(name.len() as u16).to_le_bytes());
        h[30..32].copy_from_slice(&0u16.to_le_bytes());
        h[32..34].copy_from_slice(&0u16.to_le_bytes());
        h.extend_from_slice(name.as_bytes());
        out.extend_from_slice(&h);
    }
    let _ = name_len;
    let new_size = out.len() - cd_off;
    let count = n + names.len();
    assert!(count < 0xFFFF, "aliases fit a classic end record");
    let mut end = vec![0u8; 22];
    end[..4].copy_from_slice(b"PK\x05\x06");
    end[8..10].copy_from_slice(&(count as u16).to_le_bytes());
    end[10..12].copy_from_slice(&(count as u16).to_le_bytes());
    end[12..16].copy_from_slice(&(new_size as u32).to_le_bytes());
    end[16..20].copy_from_slice(&(cd_off as u32).to_le_bytes());
    out.extend_from_slice(&end);
    out
}

/// A deflated zip of `files`, in order.
pub fn deflated_zip(files: &[(String, Vec<u8>)]) -> Vec<u8> {
    use std::io::Write;
    let mut w = zip::ZipWriter::new(std::io::Cursor::new(Vec::new()));
    let opts = zip::write::SimpleFileOptions::default().compression_method(zip::CompressionMethod::Deflated);
    for (p, b) in files {
        w.start_file(p.as_str(), opts).expect("start file");
        w.write_all(b).expect("write");
    }
    w.finish().expect("finish").into_inner()
}
