//! `ZipInput` reads entries itself (local header, then stored or inflated bytes, CRC-32 checked) after dropping
//! the zip crate's reader. These tests hold it to the zip crate's own reading: the same bytes for every entry of
//! every zip the project ships or is tested on, and, for damaged zips, the same error (variant, offset, wording)
//! as the zip-crate read path `ZipInput::read` used before (`by_index`, then `read_capped`).

use checkpoint_core::archive::{normalize_path, read_capped};
use checkpoint_core::{Archive, ArchiveError, Limits, ZipInput};
use std::io::{Cursor, Read, Write};
use std::path::Path;

mod common;
use common::zips_under;

/// Limits that no test input reaches, so only the reading itself is compared.
fn wide() -> Limits {
    Limits {
        max_entries: 1_000_000,
        max_entry_bytes: u64::MAX / 4,
        max_total_bytes: u64::MAX / 2,
        max_ratio: u64::MAX,
        max_depth: 1000,
    }
}

/// The read path `ZipInput::read` had before it dropped the zip crate's reader: `by_index` (its error is
/// `Corrupt` at 0), then the inflating reader through `read_capped`, capped at the declared size.
fn old_read(zip: &mut zip::ZipArchive<Cursor<&[u8]>>, i: usize, path: &str) -> Result<Vec<u8>, ArchiveError> {
    // `ZipInput` adds where the entry's local header is to an entry that does not unpack.
    let header = Some(zip.by_index_data(i).expect("central directory entry").header_start());
    let with_header = |e: ArchiveError| match e {
        ArchiveError::Corrupt { path, offset, reason, .. } => ArchiveError::Corrupt { path, offset, reason, header },
        e => e,
    };
    let f = zip.by_index(i).map_err(|e| ArchiveError::Corrupt {
        path: path.to_string(),
        offset: 0,
        reason: e.to_string(),
        header,
    })?;
    let declared = f.size();
    read_capped(f, path, declared).map_err(with_header)
}

/// Every entry the new `ZipInput` can read, read with it and with the zip crate: the results must be equal
/// (bytes, or the error). Returns (entries read, of which Ok). Entries listed as unreadable are skipped (both
/// sides refuse them before reading).
fn compare(bytes: &[u8], label: &str) -> (usize, usize) {
    let Ok(mut input) = ZipInput::open(Cursor::new(bytes), bytes.len() as u64, label, wide()) else { return (0, 0) };
    let Ok(mut zip) = zip::ZipArchive::new(Cursor::new(bytes)) else { panic!("{label}: ZipInput opened, zip did not") };
    let unreadable: Vec<String> = input.unreadable_entries().iter().map(|(p, _)| p.clone()).collect();
    let mut seen = std::collections::HashSet::new();
    let (mut n, mut ok) = (0, 0);
    for i in 0..zip.len() {
        let (raw, is_dir) = {
            let f = zip.by_index_data(i).expect("central directory entry");
            (f.name().expect("utf-8 name").to_string(), f.is_dir())
        };
        let path = normalize_path(&raw, 1000).expect("safe path");
        // ZipInput reads the first entry listed under a path; dirs are not read.
        if is_dir || path.is_empty() || unreadable.contains(&path) || !seen.insert(path.clone()) {
            continue;
        }
        let new = input.read(&path, u64::MAX / 4);
        let old = old_read(&mut zip, i, &path);
        assert!(new == old, "{label}: {path}: {} vs {}", brief(&new), brief(&old));
        if let Ok(b) = &new {
            // And the zip crate's plain reading, by name.
            let mut direct = Vec::new();
            zip.by_name(&raw).expect("by_name").read_to_end(&mut direct).expect("zip crate reads it");
            assert_eq!(*b, direct, "{label}: {path} (by_name)");
            ok += 1;
        }
        n += 1;
    }
    (n, ok)
}

#[test]
fn every_entry_of_every_shipped_zip_reads_as_the_zip_crate_reads_it() {
    let data = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data");
    let mut zips = Vec::new();
    for d in ["/work/shared/fixtures", "/work/shared/cases", "/work/shared/code-changes", "/work/shared/dstream"] {
        zips_under(Path::new(d), &mut zips);
    }
    zips_under(&data, &mut zips);
    assert!(!zips.is_empty(), "no zips found");
    let (mut entries, mut ok, mut opened) = (0, 0, 0);
    for z in &zips {
        let bytes = std::fs::read(z).expect("read zip");
        let (n, k) = compare(&bytes, &z.display().to_string());
        opened += usize::from(n > 0);
        entries += n;
        ok += k;
    }
    println!("{} zips ({opened} with entries read), {entries} entries compared, {ok} read", zips.len());
    assert!(opened > 50 && ok > 1000, "too little compared: {opened} zips, {ok} entries");
}

/// A small zip: a stored entry, then two deflated ones.
fn sample() -> Vec<u8> {
    let mut w = zip::ZipWriter::new(Cursor::new(Vec::new()));
    let text: Vec<u8> =
        (0..6000u32).flat_map(|i| format!("line {i} of the log {}\n", i * 7919 % 1000).into_bytes()).collect();
    let stored = zip::write::SimpleFileOptions::default().compression_method(zip::CompressionMethod::Stored);
    let deflated = zip::write::SimpleFileOptions::default().compression_method(zip::CompressionMethod::Deflated);
    w.start_file("a/stored.txt", stored).expect("start");
    w.write_all(&text[..5000]).expect("write");
    w.start_file("a/deflated.txt", deflated).expect("start");
    w.write_all(&text).expect("write");
    w.start_file("a/last.txt", deflated).expect("start");
    w.write_all(&text[1000..40000]).expect("write");
    w.finish().expect("finish").into_inner()
}

/// Byte offsets of the central directory headers, in order.
fn cd_headers(z: &[u8]) -> Vec<usize> {
    (0..z.len().saturating_sub(4)).filter(|&i| z[i..i + 4] == *b"PK\x01\x02").collect()
}

fn put_u32(z: &mut [u8], at: usize, v: u32) {
    z[at..at + 4].copy_from_slice(&v.to_le_bytes());
}

fn get_u32(z: &[u8], at: usize) -> u32 {
    u32::from_le_bytes([z[at], z[at + 1], z[at + 2], z[at + 3]])
}

/// A read's result, short (an entry's bytes are not printed).
fn brief(r: &Result<Vec<u8>, ArchiveError>) -> String {
    match r {
        Ok(b) => format!("Ok({} bytes)", b.len()),
        Err(e) => format!("Err({e:?})"),
    }
}

/// `new` and `old` are the same error; returns it.
fn same_error(new: Result<Vec<u8>, ArchiveError>, old: Result<Vec<u8>, ArchiveError>, path: &str) -> ArchiveError {
    assert!(new == old, "{path}: {} vs {}", brief(&new), brief(&old));
    match new {
        Ok(b) => panic!("{path}: the damaged entry was read ({} bytes)", b.len()),
        Err(e) => e,
    }
}

/// Reads `path` of the damaged zip `z` with ZipInput and with the old path: both must fail, identically.
fn both_fail(z: &[u8], path: &str) -> ArchiveError {
    let mut input = ZipInput::open(Cursor::new(z), z.len() as u64, "bad.zip", wide()).expect("opens");
    let new = input.read(path, u64::MAX / 4);
    let mut zip = zip::ZipArchive::new(Cursor::new(z)).expect("zip opens");
    let i = zip.index_for_name(path).expect("listed");
    let old = old_read(&mut zip, i, path);
    same_error(new, old, path)
}

/// An input that ends at `cut` once `armed` (after the central directory was read): a file cut short under
/// a reader that already listed it.
struct Cut {
    inner: Cursor<Vec<u8>>,
    cut: u64,
    armed: std::rc::Rc<std::cell::Cell<bool>>,
}

impl Read for Cut {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let pos = self.inner.position();
        let room = if self.armed.get() { self.cut.saturating_sub(pos) } else { u64::MAX };
        let n = buf.len().min(usize::try_from(room).unwrap_or(usize::MAX));
        self.inner.read(&mut buf[..n])
    }
}

impl std::io::Seek for Cut {
    fn seek(&mut self, to: std::io::SeekFrom) -> std::io::Result<u64> {
        self.inner.seek(to)
    }
}

#[test]
fn the_sample_reads_like_the_zip_crate() {
    let z = sample();
    assert_eq!(compare(&z, "sample"), (3, 3));
}

#[test]
fn a_wrong_crc_is_corrupt_at_the_end_of_the_entry() {
    for (k, path) in [(0, "a/stored.txt"), (1, "a/deflated.txt")] {
        let mut z = sample();
        let h = cd_headers(&z)[k];
        let crc = get_u32(&z, h + 16);
        put_u32(&mut z, h + 16, crc ^ 1);
        let e = both_fail(&z, path);
        assert!(matches!(&e, ArchiveError::Corrupt { reason, .. } if reason == "Invalid checksum"), "{e:?}");
    }
}

#[test]
fn a_cut_short_entry_is_corrupt() {
    // The central directory declares fewer stored bytes than the stream needs: the deflate stream ends early,
    // the stored entry's bytes fail their CRC.
    for (k, path) in [(0, "a/stored.txt"), (1, "a/deflated.txt")] {
        let mut z = sample();
        let h = cd_headers(&z)[k];
        let c = get_u32(&z, h + 20);
        put_u32(&mut z, h + 20, c / 2);
        let e = both_fail(&z, path);
        assert!(matches!(e, ArchiveError::Corrupt { .. }), "{e:?}");
    }
    // The input ends inside an entry's data (after its central directory was read).
    let z = sample();
    let h = cd_headers(&z)[1];
    let local = u64::from(get_u32(&z, h + 42));
    for (path, cut) in [("a/deflated.txt", local + 30 + 200), ("a/deflated.txt", local + 10), ("a/stored.txt", 2000)] {
        let cut_of = |armed: &std::rc::Rc<std::cell::Cell<bool>>| Cut {
            inner: Cursor::new(z.clone()),
            cut,
            armed: armed.clone(),
        };
        let armed = std::rc::Rc::new(std::cell::Cell::new(false));
        let mut input = ZipInput::open(cut_of(&armed), z.len() as u64, "cut.zip", wide()).expect("opens");
        armed.set(true);
        let new = input.read(path, u64::MAX / 4);
        let armed = std::rc::Rc::new(std::cell::Cell::new(false));
        let mut zip = zip::ZipArchive::new(cut_of(&armed)).expect("zip opens");
        armed.set(true);
        let i = zip.index_for_name(path).expect("listed");
        let header = Some(zip.by_index_data(i).expect("listed").header_start());
        let old = zip
            .by_index(i)
            .map_err(|e| ArchiveError::Corrupt { path: path.to_string(), offset: 0, reason: e.to_string(), header })
            .and_then(|f| {
                let declared = f.size();
                read_capped(f, path, declared)
            })
            .map_err(|e| match e {
                ArchiveError::Corrupt { path, offset, reason, .. } => {
                    ArchiveError::Corrupt { path, offset, reason, header }
                }
                e => e,
            });
        let e = same_error(new, old, path);
        assert!(matches!(e, ArchiveError::Corrupt { .. }), "{e:?}");
    }
}

#[test]
fn a_bad_local_header_signature_is_corrupt_at_0() {
    let mut z = sample();
    let h = cd_headers(&z)[1];
    let local = get_u32(&z, h + 42) as usize;
    z[local + 3] = 5;
    let e = both_fail(&z, "a/deflated.txt");
    assert!(
        matches!(&e, ArchiveError::Corrupt { offset: 0, reason, .. } if reason.contains("Invalid local file header")),
        "{e:?}"
    );
}

#[test]
fn a_local_header_past_the_end_is_corrupt_at_0() {
    let mut z = sample();
    let h = cd_headers(&z)[2];
    let at = u32::try_from(z.len() - 10).expect("small");
    put_u32(&mut z, h + 42, at);
    let input = ZipInput::open(Cursor::new(&z[..]), z.len() as u64, "bad.zip", wide()).expect("opens");
    assert!(input.unreadable_entries().is_empty());
    let e = both_fail(&z, "a/last.txt");
    assert!(
        matches!(&e, ArchiveError::Corrupt { offset: 0, reason, .. } if reason.contains("Unexpected end")),
        "{e:?}"
    );
}

#[test]
fn a_stream_longer_than_its_declared_size_is_refused() {
    for (k, path) in [(0, "a/stored.txt"), (1, "a/deflated.txt")] {
        let mut z = sample();
        let h = cd_headers(&z)[k];
        let size = get_u32(&z, h + 24);
        put_u32(&mut z, h + 24, size - 100);
        let e = both_fail(&z, path);
        assert!(
            matches!(&e, ArchiveError::Corrupt { reason, .. } if reason.contains("larger than its declared")),
            "{e:?}"
        );
    }
}

#[test]
fn a_lying_compressed_size_is_refused() {
    // A stored entry declared with more stored bytes than its size: the extra bytes are more than declared.
    let mut z = sample();
    let h = cd_headers(&z)[0];
    let c = get_u32(&z, h + 20);
    put_u32(&mut z, h + 20, c + 10);
    let mut input = ZipInput::open(Cursor::new(&z[..]), z.len() as u64, "bad.zip", wide()).expect("opens");
    // Its data now reaches into the next local header: refused at open as overlapping, before any reading.
    let e = input.read("a/stored.txt", u64::MAX / 4).expect_err("overlapping");
    assert!(matches!(e, ArchiveError::Overlapping { .. }), "{e:?}");
    // The last entry's data reaching into the central directory: a stored one is longer than declared.
    let mut w = zip::ZipWriter::new(Cursor::new(Vec::new()));
    let stored = zip::write::SimpleFileOptions::default().compression_method(zip::CompressionMethod::Stored);
    w.start_file("x.bin", stored).expect("start");
    w.write_all(&[7u8; 3000]).expect("write");
    let mut z = w.finish().expect("finish").into_inner();
    let h = cd_headers(&z)[0];
    put_u32(&mut z, h + 20, 3040);
    let e = both_fail(&z, "x.bin");
    assert!(matches!(e, ArchiveError::Corrupt { .. }), "{e:?}");
}

#[test]
fn reading_the_same_entries_again_and_in_any_order_gives_the_same_bytes() {
    // One inflate state serves every entry: a failed read must not leave it dirty for the next.
    let good = sample();
    let mut bad = good.clone();
    let h = cd_headers(&bad)[1];
    let c = get_u32(&bad, h + 20);
    put_u32(&mut bad, h + 20, c / 2);
    let mut input = ZipInput::open(Cursor::new(&bad[..]), bad.len() as u64, "bad.zip", wide()).expect("opens");
    let mut zip = zip::ZipArchive::new(Cursor::new(&good[..])).expect("zip");
    let mut want = Vec::new();
    zip.by_name("a/last.txt").expect("by_name").read_to_end(&mut want).expect("read");
    for _ in 0..3 {
        assert!(input.read("a/deflated.txt", u64::MAX / 4).is_err());
        assert_eq!(input.read("a/last.txt", u64::MAX / 4).as_deref(), Ok(&want[..]));
    }
}
