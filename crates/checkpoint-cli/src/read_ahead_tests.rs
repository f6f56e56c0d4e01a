//! The read-ahead thread against reads without it: the same reports on the real fixtures, the same bytes in any
//! read order (entries taken back, skipped, read twice or never), and memory held within [`MAX_HELD`].

use super::*;
use checkpoint_core::archive::READ_AHEAD_MAX_ENTRY;
use checkpoint_core::{diagnose, Archive, Context, Limits};
use std::io::{Cursor, Write};
use std::path::PathBuf;

fn fixtures() -> Vec<PathBuf> {
    let dir = PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/../../../shared/fixtures"));
    let mut zips: Vec<PathBuf> = std::fs::read_dir(&dir)
        .expect("shared fixtures")
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x == "zip"))
        .collect();
    zips.sort();
    zips
}

/// The zip at `path` as the CLI opens it, with the read-ahead thread when `ahead`.
fn open(path: &std::path::Path, ahead: bool) -> ZipInput<ZipFile> {
    let f = std::fs::File::open(path).expect("open");
    let len = f.metadata().expect("metadata").len();
    let second = f.try_clone().expect("second handle");
    let mut z = ZipInput::open(ZipFile::new(f, len), len, "x.zip", Limits::default()).expect("a zip");
    if ahead {
        start(&mut z, second, len);
    }
    z
}

#[test]
fn the_reports_of_every_fixture_are_those_without_read_ahead() {
    let zips = fixtures();
    assert!(zips.len() > 30, "fixtures: {}", zips.len());
    let ctx = Context { now_ms: Some(1_800_000_000_000), ..Context::default() };
    for p in &zips {
        let (mut plain, mut ahead) = (open(p, false), open(p, true));
        let want = diagnose(&mut plain, &ctx);
        let got = diagnose(&mut ahead, &ctx);
        assert!(want == got || format!("{want:?}") == format!("{got:?}"), "{}: the report changed", p.display());
        assert_eq!(plain.bytes_inflated(), ahead.bytes_inflated(), "{}", p.display());
    }
}

/// A zip of `n` deflated entries `e/<i>` of `size` bytes each (distinct, barely compressible text).
fn entries_zip(n: usize, size: usize) -> Vec<u8> {
    let mut w = zip::ZipWriter::new(Cursor::new(Vec::new()));
    let o = zip::write::SimpleFileOptions::default().compression_method(zip::CompressionMethod::Deflated);
    let mut x = 0x2545_f491_4f6c_dd1du64;
    for i in 0..n {
        w.start_file(format!("e/{i}"), o).expect("start");
        let bytes: Vec<u8> = (0..size)
            .map(|_| {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                b'a' + (x % 26) as u8
            })
            .collect();
        w.write_all(&bytes).expect("write");
    }
    w.finish().expect("finish").into_inner()
}

/// The thread over a zip held in memory.
fn ahead_over(z: &[u8]) -> (ZipInput<Cursor<Vec<u8>>>, Ahead) {
    let input = ZipInput::open(Cursor::new(z.to_vec()), z.len() as u64, "x.zip", Limits::default()).expect("zip");
    let ahead = spawn(input.inflater(Cursor::new(z.to_vec()))).expect("thread");
    (input, ahead)
}

#[test]
fn entries_come_back_whole_in_any_read_order() {
    let z = entries_zip(300, 3000);
    let (mut plain, mut ahead) = ahead_over(&z);
    let all: Vec<u32> = (0..300).collect();
    ahead.hint(&all);
    // Let the thread inflate them all first (900 KB), as it gets ahead while the diagnosis parses.
    all_done(&ahead);
    // Reads in hint order with gaps, backwards, twice: under the bound nothing is dropped, so each entry comes
    // back at its first read, as the entry's bytes, and never again.
    let mut order: Vec<u32> = (0..300).step_by(3).collect();
    order.extend((0..300).rev().step_by(7));
    order.extend([5, 5, 150, 299, 0]);
    let mut first = std::collections::HashSet::new();
    for e in order {
        let got = ahead.take(e);
        assert_eq!(got.is_some(), first.insert(e), "entry {e}");
        if let Some(b) = got {
            assert_eq!(b, plain.read(&format!("e/{e}"), u64::MAX).expect("reads"), "entry {e}");
        }
    }
    // Read entries hinted again come back once more.
    ahead.hint(&[0, 3]);
    all_done(&ahead);
    for e in [0, 3] {
        let b = ahead.take(e).expect("hinted again, inflated");
        assert_eq!(b, plain.read(&format!("e/{e}"), u64::MAX).expect("reads"));
    }
    let s = ahead.shared.lock();
    assert!(s.held <= MAX_HELD, "held {}", s.held);
}

#[test]
fn inflated_entries_wait_within_the_memory_bound() {
    // 40 entries of 1 MiB hinted and never read: the thread stops once 16 MiB wait.
    let size = 1 << 20;
    let z = entries_zip(40, size);
    let (_plain, mut ahead) = ahead_over(&z);
    ahead.hint(&(0..40).collect::<Vec<u32>>());
    fill_the_bound(&ahead);
    // Reading the 17th (not inflated: the thread waits) reads it here and, at the bound, drops the 16 before it:
    // the thread goes on with the rest (17 to 32, and waits again).
    assert!(ahead.take(16).is_none());
    fill_the_bound(&ahead);
    let b = ahead.take(20).expect("inflated once there was room");
    assert_eq!(b.len(), size);
    drop(ahead); // ends and joins the thread
}

/// Waits until the thread inflated every hinted entry (within 20 s).
fn all_done(ahead: &Ahead) {
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
    while ahead.shared.lock().entries.values().any(|(_, st)| !matches!(st, Status::Done(_))) {
        assert!(std::time::Instant::now() < deadline, "the thread did not inflate the entries hinted");
        std::thread::sleep(std::time::Duration::from_millis(5));
    }
}

/// Waits until the thread holds [`MAX_HELD`] bytes of 1 MiB entries and inflates no more (within 20 s), never
/// holding more than the bound and one entry.
fn fill_the_bound(ahead: &Ahead) {
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
    loop {
        let s = ahead.shared.lock();
        assert!(s.held <= MAX_HELD + READ_AHEAD_MAX_ENTRY, "held {}", s.held);
        if s.held >= MAX_HELD && !s.entries.values().any(|(_, st)| matches!(st, Status::Working)) {
            assert_eq!(s.held, MAX_HELD, "16 entries of 1 MiB");
            return;
        }
        drop(s);
        assert!(std::time::Instant::now() < deadline, "the thread did not fill its bound");
        std::thread::sleep(std::time::Duration::from_millis(5));
    }
}

/// A xorshift generator (deterministic inputs for the tests below).
struct Rng(u64);

impl Rng {
    fn below(&mut self, n: u64) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0 % n.max(1)
    }
}

/// `n` entries of random sizes (empty, under 60 KB, 1–1.5 MB), stored or deflated, compressible or not; in
/// the central directory some have a wrong CRC-32 and some a declared size lying low or high.
fn hostile_zip(seed: u64, n: usize) -> Vec<u8> {
    let mut r = Rng(seed | 1);
    let mut w = zip::ZipWriter::new(Cursor::new(Vec::new()));
    let mut kinds = Vec::new();
    for i in 0..n {
        let m = if r.below(3) == 0 { zip::CompressionMethod::Stored } else { zip::CompressionMethod::Deflated };
        let level = (m == zip::CompressionMethod::Deflated).then_some(1);
        let o = zip::write::SimpleFileOptions::default().compression_method(m).compression_level(level);
        w.start_file(format!("e/{i}"), o).expect("start");
        let size = match r.below(10) {
            0 => 0,
            1 => 1_000_000 + r.below(100_000) as usize,
            2 => 1_500_000,
            _ => r.below(60_000) as usize,
        };
        let flat = r.below(2) == 0;
        let bytes: Vec<u8> = if flat {
            vec![b'x'; size]
        } else {
            (0..size.div_ceil(8)).flat_map(|_| r.below(u64::MAX).to_le_bytes()).take(size).collect()
        };
        w.write_all(&bytes).expect("write");
        kinds.push(r.below(8));
    }
    let mut z = w.finish().expect("finish").into_inner();
    let mut p = central_directory(&z);
    for kind in kinds {
        let size = u32::from_le_bytes([z[p + 24], z[p + 25], z[p + 26], z[p + 27]]);
        match kind {
            0 => z[p + 16] ^= 0x5a,
            1 => z[p + 24..p + 28].copy_from_slice(&(size / 2).to_le_bytes()),
            2 => z[p + 24..p + 28].copy_from_slice(&size.saturating_mul(2).min(4 << 20).to_le_bytes()),
            _ => {}
        }
        p += 46
            + usize::from(u16::from_le_bytes([z[p + 28], z[p + 29]]))
            + usize::from(u16::from_le_bytes([z[p + 30], z[p + 31]]))
            + usize::from(u16::from_le_bytes([z[p + 32], z[p + 33]]));
    }
    z
}

/// Where the central directory of `z` (no zip64, no comment) starts.
fn central_directory(z: &[u8]) -> usize {
    let end = z.len() - 22;
    assert_eq!(&z[end..end + 4], b"PK\x05\x06");
    u32::from_le_bytes([z[end + 16], z[end + 17], z[end + 18], z[end + 19]]) as usize
}

#[test]
fn random_hints_and_reads_of_hostile_zips_read_as_without() {
    // Random hints, reads with random caps under two total limits, and a drop at a random point (perhaps while
    // an entry is inflated or a read waits): every read as without the thread, none slow.
    for seed in 1..=6u64 {
        let z = hostile_zip(seed * 7919, 40);
        let mut r = Rng(seed * 104_729 + 3);
        let total = if seed % 3 == 0 { 20_000_000 } else { Limits::default().max_total_bytes };
        let limits = Limits { max_total_bytes: total, ..Limits::default() };
        let open = || ZipInput::open(Cursor::new(z.clone()), z.len() as u64, "x.zip", limits).expect("a zip");
        let (mut plain, mut ahead) = (open(), open());
        ahead.set_read_ahead(Box::new(spawn(ahead.inflater(Cursor::new(z.clone()))).expect("thread")));
        let names: Vec<String> = plain.entries().iter().filter(|e| !e.is_dir).map(|e| e.path.clone()).collect();
        let pick = |r: &mut Rng| names[r.below(names.len() as u64) as usize].clone();
        for _ in 0..200 + r.below(200) {
            if r.below(4) == 0 {
                let hint: Vec<String> = (0..1 + r.below(30)).map(|_| pick(&mut r)).collect();
                ahead.prefetch(&hint);
            } else {
                let p = pick(&mut r);
                let cap = if r.below(4) == 0 { r.below(2_000_000) } else { u64::MAX };
                let t = std::time::Instant::now();
                let got = ahead.read(&p, cap);
                assert!(t.elapsed() < std::time::Duration::from_secs(10), "seed {seed} {p}: a slow read");
                assert!(got == plain.read(&p, cap), "seed {seed} {p} cap {cap}");
                assert_eq!(ahead.bytes_inflated(), plain.bytes_inflated(), "seed {seed} {p}");
            }
            if r.below(300) == 0 {
                break;
            }
        }
    }
}

#[test]
fn sizes_lying_high_hold_no_memory() {
    // 200 entries of 20 bytes whose central directory declares 1 MiB (their CRC-32 is right): each read-ahead
    // gives the entry back to the archive's read, so nothing is held; before, each held a 1 MiB buffer counted
    // as 20 bytes.
    let mut w = zip::ZipWriter::new(Cursor::new(Vec::new()));
    let o = zip::write::SimpleFileOptions::default().compression_method(zip::CompressionMethod::Deflated);
    for i in 0..200 {
        w.start_file(format!("e/{i}"), o).expect("start");
        w.write_all(format!("checksum-file-{i:06}").as_bytes()).expect("write");
    }
    let mut z = w.finish().expect("finish").into_inner();
    let mut p = central_directory(&z);
    for _ in 0..200 {
        z[p + 24..p + 28].copy_from_slice(&(1u32 << 20).to_le_bytes());
        p += 46 + usize::from(u16::from_le_bytes([z[p + 28], z[p + 29]]));
    }
    let (mut plain, mut ahead) = ahead_over(&z);
    assert_eq!(plain.read("e/0", u64::MAX).expect("reads what is there").len(), 20);
    ahead.hint(&(0..200).collect::<Vec<u32>>());
    all_done(&ahead);
    let s = ahead.shared.lock();
    let allocated: usize =
        s.entries.values().map(|(_, st)| if let Status::Done(Some(b)) = st { b.capacity() } else { 0 }).sum();
    assert_eq!((s.held, allocated), (0, 0));
}
