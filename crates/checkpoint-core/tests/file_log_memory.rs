//! Memory of file log reading on hostile input (issue 12; a reviewer's findings on the first streamed version):
//! a counting allocator measures the peak bytes held while a whole diagnosis runs, over the input held in
//! memory. Temp copies of a file log batch were parsed whole with every entry kept (16 MiB of `{"path":""}`
//! lines are 1.4 million entries: 857 MB for a 19 MB zip of a few), and a 16 MiB entry line with a big field
//! the inspector does not use was built as a `serde_json::Value` (630 MB).

use checkpoint_core::archive::{Limits, MemArchive};
use checkpoint_core::{diagnose, Context};
use std::alloc::{GlobalAlloc, Layout, System};
use std::io::{Cursor, Read};
use std::path::PathBuf;
use std::sync::atomic::{AtomicIsize, Ordering};

struct Counting;
static LIVE: AtomicIsize = AtomicIsize::new(0);
static PEAK: AtomicIsize = AtomicIsize::new(0);

fn grew(by: isize) {
    let now = LIVE.fetch_add(by, Ordering::Relaxed) + by;
    PEAK.fetch_max(now, Ordering::Relaxed);
}

unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, l: Layout) -> *mut u8 {
        grew(l.size() as isize);
        unsafe { System.alloc(l) }
    }
    unsafe fn dealloc(&self, p: *mut u8, l: Layout) {
        LIVE.fetch_sub(l.size() as isize, Ordering::Relaxed);
        unsafe { System.dealloc(p, l) }
    }
    unsafe fn realloc(&self, p: *mut u8, l: Layout, new: usize) -> *mut u8 {
        grew(new as isize - l.size() as isize);
        unsafe { System.realloc(p, l, new) }
    }
}

#[global_allocator]
static A: Counting = Counting;

/// The files of the real Spark 4.1.4 checkpoint with a file source and a file sink (`tools/spark-gen/`).
fn real() -> Vec<(String, Vec<u8>)> {
    let zip = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/data/spark/source-path-changed-4.1.4.zip");
    let mut z = zip::ZipArchive::new(Cursor::new(std::fs::read(zip).unwrap())).unwrap();
    let mut out = Vec::new();
    for i in 0..z.len() {
        let mut f = z.by_index(i).unwrap();
        let mut b = Vec::new();
        f.read_to_end(&mut b).unwrap();
        out.push((f.name().unwrap_or_default().to_string(), b));
    }
    out
}

/// One measurement at a time: the allocator counts every thread's bytes.
static ONE_AT_A_TIME: std::sync::Mutex<()> = std::sync::Mutex::new(());

/// The peak bytes a diagnosis of `files` holds over the input, with the report (the caller holds
/// [`ONE_AT_A_TIME`] from before it makes the input).
fn peak_of(files: Vec<(String, Vec<u8>)>) -> (usize, checkpoint_core::Report) {
    let mut a = MemArchive::new("t.zip", files, Limits::default()).expect("archive");
    let before = LIVE.load(Ordering::Relaxed);
    PEAK.store(before, Ordering::Relaxed);
    let r = diagnose(&mut a, &Context::default());
    ((PEAK.load(Ordering::Relaxed) - before) as usize, r)
}

#[test]
fn temp_copies_of_a_file_log_batch_are_read_within_their_budgets() {
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    let mut files = real();
    let line = b"{\"path\":\"\"}\n";
    let mut copy = b"v1\n".to_vec();
    while copy.len() + line.len() < (16 << 20) - 1024 {
        copy.extend_from_slice(line);
    }
    for i in 0..3 {
        files.push((format!("chk/sources/0/.0.{i:08}-9b1d-4c55-8f00-0123456789ab.tmp"), copy.clone()));
    }
    let (peak, r) = peak_of(files);
    println!("peak {peak} bytes over the input");
    // Each copy lists other files than the renamed batch 0: another writer's, compared by count and digest.
    let c = &r.checkpoints[0];
    let copies: Vec<_> =
        c.findings.iter().filter(|f| f.code == checkpoint_core::report::Code::ConcurrentWriterTempFile).collect();
    assert_eq!(copies.len(), 3, "{:#?}", c.findings.iter().map(|f| &f.title).collect::<Vec<_>>());
    assert!(copies.iter().all(|f| f.evidence[0].detail.contains("not named")), "{:#?}", copies[0].evidence);
    // Each copy was 1.4 million entries held (about 130 MiB); now 4 MiB of entries in all, and a line.
    assert!(peak < 48 << 20, "the diagnosis held {peak} bytes at its peak");
}

#[test]
fn an_entry_line_of_16_mib_is_read_without_building_its_unused_field() {
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    let mut files = real();
    let log = files.iter().find(|(p, _)| p == "chk/sources/0/0").unwrap().1.clone();
    let text = String::from_utf8(log).unwrap();
    let (head, rest) = text.split_once('\n').unwrap();
    let (first, others) = rest.split_once('\n').unwrap();
    // The first entry gets a field Spark's FileEntry does not have: an array of 8 million small numbers.
    let mut big = String::with_capacity(16 << 20);
    big.push_str(&first[..first.len() - 1]);
    big.push_str(",\"junk\":[0");
    while big.len() < (16 << 20) - 1024 {
        big.push_str(",0");
    }
    big.push_str("]}");
    let log = format!("{head}\n{big}\n{others}");
    files.retain(|(p, _)| p != "chk/sources/0/.0.crc" && p != "chk/sources/0/0");
    files.push(("chk/sources/0/0".into(), log.into_bytes()));
    let (peak, r) = peak_of(files);
    println!("peak {peak} bytes over the input");
    let c = &r.checkpoints[0];
    assert!(c.findings.iter().any(|f| f.title.contains("3 file(s) recorded")), "the three entries read");
    // A `serde_json::Value` of the line held about 630 MB; now the line itself (16 MiB, held as it comes).
    assert!(peak < 64 << 20, "the diagnosis held {peak} bytes at its peak");
}
