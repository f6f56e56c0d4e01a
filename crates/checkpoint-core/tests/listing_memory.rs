//! Memory per listed entry (issue 12: "listing memory per entry measured and bounded"): a counting allocator
//! measures the bytes held by a `ZipInput` over 100 000 entries with checkpoint-like paths (once opened: the zip
//! reader's copy of the central directory is dropped by then), and by the listing stage's `Checkpoint` on top.

use checkpoint_core::archive::{Archive, Limits, ZipInput};
use std::alloc::{GlobalAlloc, Layout, System};
use std::io::{Cursor, Write};
use std::sync::atomic::{AtomicIsize, Ordering};

struct Counting;
static LIVE: AtomicIsize = AtomicIsize::new(0);

unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, l: Layout) -> *mut u8 {
        LIVE.fetch_add(l.size() as isize, Ordering::Relaxed);
        unsafe { System.alloc(l) }
    }
    unsafe fn dealloc(&self, p: *mut u8, l: Layout) {
        LIVE.fetch_sub(l.size() as isize, Ordering::Relaxed);
        unsafe { System.dealloc(p, l) }
    }
    unsafe fn realloc(&self, p: *mut u8, l: Layout, new: usize) -> *mut u8 {
        LIVE.fetch_add(new as isize - l.size() as isize, Ordering::Relaxed);
        unsafe { System.realloc(p, l, new) }
    }
}

#[global_allocator]
static A: Counting = Counting;

#[test]
fn bytes_per_listed_entry() {
    const N: u32 = 100_000;
    let mut w = zip::ZipWriter::new(Cursor::new(Vec::new()));
    let opts = zip::write::SimpleFileOptions::default().compression_method(zip::CompressionMethod::Stored);
    for i in 0..N {
        w.start_file(format!("state/0/{}/{}.delta", i % 200, i / 200), opts).unwrap();
        w.write_all(b"").unwrap();
    }
    let z = w.finish().unwrap().into_inner();
    let len = z.len() as u64;
    let input = Cursor::new(z);
    let before = LIVE.load(Ordering::Relaxed);
    let a = ZipInput::open(input, len, "m.zip", Limits::default()).unwrap();
    let zip_input = (LIVE.load(Ordering::Relaxed) - before) as usize / N as usize;
    let roots = checkpoint_core::layout::find_roots(a.entries());
    let before = LIVE.load(Ordering::Relaxed);
    let cp = checkpoint_core::read::listing::list(a.entries(), &roots[0]);
    let listing = (LIVE.load(Ordering::Relaxed) - before) as usize / N as usize;
    assert_eq!(cp.files.len(), N as usize);
    println!("ZipInput: {zip_input} bytes per entry; listing stage: {listing} bytes per entry");
    // Measured 2026-12-02: 285 and 298 bytes, the zip reader's own record of each entry most of the first;
    // 2026-12-03, the zip reader dropped once open returns (a 16-byte record per entry kept): 106 and 181.
    // `Limits::max_entries` is sized from these.
    assert!(zip_input <= 140, "ZipInput holds {zip_input} bytes per entry");
    assert!(listing <= 320, "the listing holds {listing} bytes per entry");
}
