//! `ZipInput` with a read-ahead (`ZipInput::set_read_ahead`: the CLI's second thread inflates the entries the
//! diagnosis hints it reads next) reads what it reads without one: the same report on every zip the project
//! ships or is tested on, the same bytes booked against the read limit, and, for an entry that is damaged, over
//! its read's cap or past the total limit, the same error.

use checkpoint_core::archive::{EntryInflater, ReadAhead, READ_AHEAD_MAX_ENTRY};
use checkpoint_core::{diagnose, Archive, ArchiveError, Context, Limits, ZipInput};
use std::collections::HashMap;
use std::io::{Cursor, Write};
use std::path::Path;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

mod common;
use common::zips_under;

/// A read-ahead on the same thread: each hinted entry is inflated when it is hinted (as if the other thread
/// were infinitely fast), and counted when a read takes it.
struct SameThread {
    inflater: EntryInflater<Cursor<Vec<u8>>>,
    ready: HashMap<u32, Option<Vec<u8>>>,
    /// Entries hinted; entries taken inflated; hinted entries over `READ_AHEAD_MAX_ENTRY`.
    counts: Counts,
}

impl ReadAhead for SameThread {
    fn hint(&mut self, entries: &[u32]) {
        for &e in entries {
            self.counts[0].fetch_add(1, Ordering::Relaxed);
            if self.inflater.declared(e).is_none_or(|d| d > READ_AHEAD_MAX_ENTRY) {
                self.counts[2].fetch_add(1, Ordering::Relaxed);
            }
            let bytes = self.inflater.inflate(e);
            self.ready.insert(e, bytes);
        }
    }
    fn take(&mut self, entry: u32) -> Option<Vec<u8>> {
        let b = self.ready.remove(&entry).flatten();
        if b.is_some() {
            self.counts[1].fetch_add(1, Ordering::Relaxed);
        }
        b
    }
}

/// The counts of a [`SameThread`]: entries hinted, entries taken inflated, hinted entries over the limit.
type Counts = Arc<[AtomicUsize; 3]>;

/// `bytes` opened as a zip under `limits`, with a same-thread read-ahead; and its counts.
fn with_read_ahead(bytes: &[u8], limits: Limits) -> Option<(ZipInput<Cursor<Vec<u8>>>, Counts)> {
    let mut z = ZipInput::open(Cursor::new(bytes.to_vec()), bytes.len() as u64, "x.zip", limits).ok()?;
    let counts: Counts = Arc::new(Default::default());
    let ahead = SameThread {
        inflater: z.inflater(Cursor::new(bytes.to_vec())),
        ready: HashMap::new(),
        counts: Arc::clone(&counts),
    };
    z.set_read_ahead(Box::new(ahead));
    Some((z, counts))
}

#[test]
fn a_read_ahead_changes_no_report_and_no_byte_booked() {
    let shared = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared");
    let mut zips = Vec::new();
    for d in ["fixtures", "cases", "code-changes"] {
        zips_under(&shared.join(d), &mut zips);
    }
    zips_under(&Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data"), &mut zips);
    zips.sort();
    assert!(zips.len() > 50, "too few zips: {}", zips.len());
    let (mut compared, mut taken) = (0, 0);
    for path in &zips {
        let bytes = std::fs::read(path).expect("read zip");
        let Ok(mut plain) =
            ZipInput::open(Cursor::new(bytes.as_slice()), bytes.len() as u64, "x.zip", Limits::default())
        else {
            continue;
        };
        let (mut ahead, counts) = with_read_ahead(&bytes, Limits::default()).expect("opens as without");
        let ctx = Context { now_ms: Some(1_800_000_000_000), ..Context::default() };
        let want = diagnose(&mut plain, &ctx);
        let got = diagnose(&mut ahead, &ctx);
        let label = path.display();
        assert!(want == got || format!("{want:?}") == format!("{got:?}"), "{label}: the report changed");
        assert_eq!(plain.bytes_inflated(), ahead.bytes_inflated(), "{label}: bytes booked");
        assert_eq!(counts[2].load(Ordering::Relaxed), 0, "{label}: an entry over the read-ahead limit was hinted");
        compared += 1;
        taken += counts[1].load(Ordering::Relaxed);
    }
    println!("{compared} zips compared, {taken} entries taken from the read-ahead");
    assert!(compared > 50 && taken > 5_000, "too little compared: {compared} zips, {taken} entries taken");
}

/// A zip of three deflated entries (`a/0.txt`.. `a/2.txt`, ~40 KB each) and one stored entry.
fn sample() -> Vec<u8> {
    let mut w = zip::ZipWriter::new(Cursor::new(Vec::new()));
    let text: Vec<u8> =
        (0..3000u32).flat_map(|i| format!("line {i} of the log {}\n", i * 7919 % 1000).into_bytes()).collect();
    let deflated = zip::write::SimpleFileOptions::default().compression_method(zip::CompressionMethod::Deflated);
    let stored = zip::write::SimpleFileOptions::default().compression_method(zip::CompressionMethod::Stored);
    for i in 0..3 {
        w.start_file(format!("a/{i}.txt"), deflated).expect("start");
        w.write_all(&text).expect("write");
    }
    w.start_file("a/stored.txt", stored).expect("start");
    w.write_all(&text[..5000]).expect("write");
    w.finish().expect("finish").into_inner()
}

/// Reads `paths` in order from `z` with and without a read-ahead hinted all of them first: the same results
/// (bytes or error) and the same bytes booked. Returns the results and the read-ahead's counts.
fn both_ways(z: &[u8], limits: Limits, max_bytes: u64, paths: &[&str]) -> (Vec<Result<Vec<u8>, ArchiveError>>, Counts) {
    let mut plain = ZipInput::open(Cursor::new(z), z.len() as u64, "x.zip", limits).expect("opens");
    let (mut ahead, counts) = with_read_ahead(z, limits).expect("opens");
    let all: Vec<String> = paths.iter().map(|p| p.to_string()).collect();
    ahead.prefetch(&all);
    let mut out = Vec::new();
    for p in paths {
        let want = plain.read(p, max_bytes);
        let got = ahead.read(p, max_bytes);
        assert!(want == got, "{p}: {want:?} vs {got:?}");
        assert_eq!(plain.bytes_inflated(), ahead.bytes_inflated(), "{p}: bytes booked");
        out.push(got);
    }
    (out, counts)
}

#[test]
fn entries_read_ahead_read_as_without() {
    let z = sample();
    let paths = ["a/0.txt", "a/1.txt", "a/stored.txt", "a/2.txt"];
    let (out, counts) = both_ways(&z, Limits::default(), u64::MAX, &paths);
    assert!(out.iter().all(|r| r.as_ref().is_ok_and(|b| !b.is_empty())));
    assert_eq!(counts[1].load(Ordering::Relaxed), 4, "every entry came from the read-ahead");
}

#[test]
fn a_damaged_entry_read_ahead_fails_as_without() {
    // A wrong CRC-32 in the central directory of the second entry: its read ahead fails, the read reads it
    // itself and names the same error at the same offset.
    let mut z = sample();
    let cd: Vec<usize> = (0..z.len() - 4).filter(|&i| z[i..i + 4] == *b"PK\x01\x02").collect();
    z[cd[1] + 16] ^= 1;
    let (out, counts) = both_ways(&z, Limits::default(), u64::MAX, &["a/0.txt", "a/1.txt", "a/2.txt"]);
    assert!(
        matches!(&out[1], Err(ArchiveError::Corrupt { reason, header: Some(_), .. }) if reason.contains("checksum"))
    );
    assert_eq!(counts[1].load(Ordering::Relaxed), 2, "the damaged entry is read again, the others taken");
}

#[test]
fn an_entry_over_its_reads_cap_or_past_the_total_is_refused_as_without() {
    let z = sample();
    // The read's own cap below the entry's size: refused before anything is taken.
    let (out, counts) = both_ways(&z, Limits::default(), 1000, &["a/0.txt", "a/1.txt"]);
    assert!(out.iter().all(|r| matches!(r, Err(ArchiveError::OverLimit { what, .. }) if what == "entry size")));
    assert_eq!(counts[1].load(Ordering::Relaxed), 0);
    // The total read limit reached at the third entry.
    let limits = Limits { max_total_bytes: 200_000, ..Limits::default() };
    let (out, counts) = both_ways(&z, limits, u64::MAX, &["a/0.txt", "a/1.txt", "a/2.txt"]);
    assert!(out[0].is_ok() && out[1].is_ok());
    assert!(matches!(&out[2], Err(ArchiveError::OverLimit { what, .. }) if what == "total bytes read"));
    assert_eq!(counts[1].load(Ordering::Relaxed), 2);
}

#[test]
fn an_entry_declaring_more_than_it_holds_is_read_by_the_archive() {
    // The second entry's central directory says 1 MiB; it holds ~75 KB whose CRC-32 matches. The read-ahead
    // gives it back to the archive's own read (which reads what is there), and reserved no more than it read.
    let mut z = sample();
    let cd: Vec<usize> = (0..z.len() - 4).filter(|&i| z[i..i + 4] == *b"PK\x01\x02").collect();
    z[cd[1] + 24..cd[1] + 28].copy_from_slice(&(1u32 << 20).to_le_bytes());
    let (out, counts) = both_ways(&z, Limits::default(), u64::MAX, &["a/0.txt", "a/1.txt", "a/2.txt"]);
    assert!(out.iter().all(Result::is_ok));
    assert_eq!((counts[0].load(Ordering::Relaxed), counts[1].load(Ordering::Relaxed)), (3, 2));
}

#[test]
fn entries_a_read_refuses_from_the_listing_are_not_hinted() {
    // A 2 MiB run of zeros (a ratio over 250: a likely bomb), and entries past what the total limit has left.
    let mut w = zip::ZipWriter::new(Cursor::new(Vec::new()));
    let deflated = zip::write::SimpleFileOptions::default().compression_method(zip::CompressionMethod::Deflated);
    w.start_file("bomb", deflated).expect("start");
    w.write_all(&vec![0u8; 2 << 20]).expect("write");
    w.start_file("small", deflated).expect("start");
    w.write_all(b"a small file").expect("write");
    let z = w.finish().expect("finish").into_inner();
    let (out, counts) = both_ways(&z, Limits::default(), u64::MAX, &["bomb", "small"]);
    assert!(matches!(&out[0], Err(ArchiveError::OverLimit { what, .. }) if what.contains("ratio")));
    assert_eq!(counts[0].load(Ordering::Relaxed), 1, "only the small file is hinted");
    let limits = Limits { max_total_bytes: 5, ..Limits::default() };
    let (_, counts) = both_ways(&z, limits, u64::MAX, &["small"]);
    assert_eq!(counts[0].load(Ordering::Relaxed), 0, "past the total limit: not hinted");
}
