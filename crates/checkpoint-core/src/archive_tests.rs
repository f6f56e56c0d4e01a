//! Tests of `archive`: zip listing, paths, limits and budgets.
use super::*;
use std::io::{Cursor, Write};

fn zip_of(files: &[(&str, &[u8])]) -> Vec<u8> {
    let mut w = zip::ZipWriter::new(Cursor::new(Vec::new()));
    let opts: zip::write::SimpleFileOptions =
        zip::write::SimpleFileOptions::default().compression_method(zip::CompressionMethod::Deflated);
    for (p, b) in files {
        w.start_file(*p, opts).unwrap();
        w.write_all(b).unwrap();
    }
    w.finish().unwrap().into_inner()
}

#[test]
fn lists_and_reads_lazily() {
    let z = zip_of(&[("chk/metadata", b"{\"id\":\"x\"}"), ("chk/offsets/0", b"v1\n{}")]);
    let len = z.len() as u64;
    let mut a = ZipInput::open(Cursor::new(z), len, "t.zip", Limits::default()).unwrap();
    assert_eq!(a.entries().len(), 2);
    assert_eq!(a.entries()[0].path, "chk/metadata");
    assert_eq!(a.bytes_inflated(), 0);
    assert_eq!(a.read("chk/offsets/0", 100).unwrap(), b"v1\n{}");
    assert!(matches!(a.read("nope", 10), Err(ArchiveError::NotFound { .. })));
}

#[test]
fn rejects_garbage_and_empty() {
    assert!(matches!(
        ZipInput::open(Cursor::new(b"hello".to_vec()), 5, "x", Limits::default()),
        Err(ArchiveError::NotAZip { .. })
    ));
    assert!(matches!(ZipInput::open(Cursor::new(Vec::new()), 0, "x", Limits::default()), Err(ArchiveError::Empty)));
}

/// A zip cut short (its end missing) and a gzip file say what they are, not the zip reader's internals.
#[test]
fn a_cut_zip_and_a_gzip_file_say_what_they_are() {
    let z = std::fs::read(crate::testutil::fixtures_dir().join("ss-4.0.5-agg-hdfs.zip")).expect("fixture");
    let cut = z[..z.len() / 2].to_vec();
    let reason =
        |bytes: Vec<u8>| match ZipInput::open(Cursor::new(bytes.clone()), bytes.len() as u64, "x", Limits::default()) {
            Err(ArchiveError::NotAZip { reason }) => reason,
            other => panic!("not refused as not a zip: {:?}", other.map(|a| a.entries().len())),
        };
    let r = reason(cut);
    assert!(r.contains("cut short") && !r.contains("EOCD"), "{r}");
    let mut gz = vec![0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 3];
    gz.extend_from_slice(&z[..100]);
    assert!(reason(gz).starts_with("it is a gzip file"));
}

/// A ratio-1000 entry is listed (one odd file must not stop the diagnosis of the others) and refused
/// when read, naming the entry and the limit.
#[test]
fn refuses_bomb_by_ratio_when_read() {
    let big = vec![0u8; 8 * 1024 * 1024];
    let z = zip_of(&[("bomb", &big), ("ok", b"fine")]);
    let len = z.len() as u64;
    let mut a = ZipInput::open(Cursor::new(z), len, "b.zip", Limits::default()).expect("listed");
    assert_eq!(a.entries().len(), 2);
    let r = a.read("bomb", u64::MAX);
    assert!(
        matches!(&r, Err(ArchiveError::OverLimit { what, path: Some(p), .. }) if what.contains("ratio") && p == "bomb"),
        "{r:?}"
    );
    assert_eq!(a.bytes_inflated(), 0);
    assert_eq!(a.read("ok", 100).unwrap(), b"fine");
}

#[test]
fn rejects_escaping_and_deep_paths() {
    assert!(matches!(normalize_path("../etc/passwd", 10), Err(ArchiveError::BadPath { .. })));
    assert!(matches!(normalize_path("a/b/c/d", 3), Err(ArchiveError::OverLimit { .. })));
    assert_eq!(normalize_path("./a//b/", 3).unwrap(), "a/b");
}

/// Counts the bytes pulled through it, to show that opening reads the central directory only.
struct Counting<R> {
    inner: R,
    read: std::rc::Rc<std::cell::Cell<u64>>,
}
impl<R: Read> Read for Counting<R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = self.inner.read(buf)?;
        self.read.set(self.read.get() + n as u64);
        Ok(n)
    }
}
impl<R: Seek> Seek for Counting<R> {
    fn seek(&mut self, pos: std::io::SeekFrom) -> std::io::Result<u64> {
        self.inner.seek(pos)
    }
}

#[test]
fn open_reads_only_the_central_directory() {
    let payload = vec![42u8; 4096];
    let names: Vec<String> = (0..500).map(|i| format!("state/0/{}/{i}.delta", i % 7)).collect();
    let files: Vec<(&str, &[u8])> = names.iter().map(|n| (n.as_str(), payload.as_slice())).collect();
    let z = zip_of(&files);
    let len = z.len() as u64;
    let counter = std::rc::Rc::new(std::cell::Cell::new(0));
    let reader = Counting { inner: Cursor::new(z), read: counter.clone() };
    let a = ZipInput::open(reader, len, "many.zip", Limits::default()).unwrap();
    assert_eq!(a.entries().len(), 500);
    // Listing must cost the central directory plus the end record search, not a local header per entry
    // (with `by_index_raw` this read ~48 KB instead of ~33 KB).
    let central = names.iter().map(|n| 46 + n.len() as u64).sum::<u64>() + 22;
    assert!(
        counter.get() < central + 8 * 1024,
        "read {} bytes to list {} of central directory",
        counter.get(),
        central
    );
}

#[test]
fn read_respects_cap() {
    let z = zip_of(&[("f", &[7u8; 1000])]);
    let len = z.len() as u64;
    let mut a = ZipInput::open(Cursor::new(z), len, "t.zip", Limits::default()).unwrap();
    assert!(matches!(a.read("f", 10), Err(ArchiveError::OverLimit { .. })));
    assert_eq!(a.read("f", 1000).unwrap().len(), 1000);
}

/// `end_record` gives the entry count and the central directory's place the zip writer recorded: with no
/// comment, with a comment, and in a zip64 archive (more than 65,535 entries), where the classic record
/// defers to the zip64 one. The directory starts with a central header and ends where the end records begin.
#[test]
fn end_record_places_the_central_directory() {
    for (n, comment) in [(3usize, 0usize), (3, 1000), (70_000, 0)] {
        let mut w = zip::ZipWriter::new(Cursor::new(Vec::new()));
        let opts = zip::write::SimpleFileOptions::default().compression_method(zip::CompressionMethod::Stored);
        for i in 0..n {
            w.start_file(format!("offsets/{i}"), opts).unwrap();
            w.write_all(b"v1\n{}\n").unwrap();
        }
        w.set_comment("c".repeat(comment)).unwrap();
        let z = w.finish().unwrap().into_inner();
        let len = z.len() as u64;
        let e = end_record(&mut Cursor::new(&z), len).expect("an end record");
        assert_eq!(e.entries, n as u64);
        let (at, size) = (e.central_directory_offset.unwrap() as usize, e.central_directory_bytes.unwrap() as usize);
        assert_eq!(&z[at..at + 4], b"PK\x01\x02", "{n} entries: a central header at the offset");
        let after = &z[at + size..at + size + 4];
        assert!(after == b"PK\x06\x06" || after == b"PK\x05\x06", "{n} entries: an end record after the directory");
    }
    assert_eq!(end_record(&mut Cursor::new(b"not a zip at all".to_vec()), 16), None);
}

#[test]
fn a_read_that_fails_at_its_end_is_booked_in_the_total() {
    // An entry whose bytes inflate but whose CRC-32 does not match (both headers changed): the whole entry is
    // inflated before the mismatch shows, and those bytes count against the archive's total read limit.
    let body = vec![b'a'; 100_000];
    let mut z = zip_of(&[("chk/sources/0/0", &body)]);
    for sig in [&b"PK\x03\x04"[..], &b"PK\x01\x02"[..]] {
        let at = z.windows(4).position(|w| w == sig).unwrap();
        let crc = at + if sig[2] == 3 { 14 } else { 16 };
        z[crc] ^= 0xff;
    }
    let len = z.len() as u64;
    let mut a = ZipInput::open(Cursor::new(z), len, "t.zip", Limits::default()).unwrap();
    let before = a.bytes_left().unwrap();
    let mut handed = 0u64;
    let r = a.read_each("chk/sources/0/0", 1 << 20, &mut |p| handed += p.len() as u64);
    assert!(matches!(r, Err(ArchiveError::Corrupt { .. })), "{r:?}");
    assert_eq!(handed, 100_000);
    assert_eq!(before - a.bytes_left().unwrap(), 100_000);
}
