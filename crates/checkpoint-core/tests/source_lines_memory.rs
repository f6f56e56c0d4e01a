//! Memory of a diagnosis whose latest offsets file is 16 MiB of newlines (16 million source lines, the breaker
//! run's item 2): a counting allocator measures the peak bytes held while the whole diagnosis runs. Each line
//! once became a kept source offset, a finding and a restart-plan step (a 1 MiB file reached 3.6 GB); now the
//! lines after the first `MAX_SOURCE_OFFSETS` are only counted.

mod common;
use common::*;

use checkpoint_core::archive::{Limits, MemArchive};
use checkpoint_core::report::Code;
use checkpoint_core::{diagnose, Context, SparkVersion};
use std::alloc::{GlobalAlloc, Layout, System};
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

#[test]
fn sixteen_mebibytes_of_newlines_in_the_latest_offsets_file() {
    let mut files = load("ss-4.3.0-agg-hdfs");
    for (p, b) in files.iter_mut() {
        if p == "offsets/11" {
            b.resize((16 << 20) - 1024, b'\n');
        }
    }
    files.retain(|(p, _)| p != "offsets/.11.crc");
    let mut a = MemArchive::new("t.zip", files, Limits::default()).expect("archive");
    // The input itself (16 MiB in memory) is held before the diagnosis starts.
    let before = LIVE.load(Ordering::Relaxed);
    PEAK.store(before, Ordering::Relaxed);
    let r = diagnose(&mut a, &Context { spark_version: Some(SparkVersion::new(4, 3, 0)), ..Default::default() });
    let json = serde_json::to_string(&r).expect("json");
    let peak = (PEAK.load(Ordering::Relaxed) - before) as usize;
    println!("peak {peak} bytes over the input; {} bytes of JSON", json.len());
    assert!(r.checkpoints[0].findings.iter().any(|f| f.code == Code::SourceLinesNotExamined));
    // The file is read once (16 MiB), its lines not held: measured 2026-12-04 at about 17 MiB.
    assert!(peak < 64 << 20, "the diagnosis held {peak} bytes at its peak");
    assert!(json.len() < 2 << 20, "{} bytes of JSON", json.len());
}
