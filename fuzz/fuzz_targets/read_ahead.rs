//! A zip's entries read with a read-ahead (`ZipInput::set_read_ahead`: the CLI's second thread, here on this
//! thread, each hinted entry inflated when it is hinted) and without: for every entry the same bytes or the same
//! error, and the same bytes booked against the total limit, whatever the zip's bytes. The first byte picks the
//! read cap (bit 0), the total limit (bit 1) and the read order (bit 2: backwards, against the hints' order).
#![no_main]
use checkpoint_core::archive::{Archive, EntryInflater, Limits, ReadAhead, ZipInput};
use libfuzzer_sys::fuzz_target;
use std::collections::HashMap;
use std::io::Cursor;

/// Inflates each hinted entry when it is hinted; a read takes it.
struct SameThread {
    inflater: EntryInflater<Cursor<Vec<u8>>>,
    ready: HashMap<u32, Option<Vec<u8>>>,
}

impl ReadAhead for SameThread {
    fn hint(&mut self, entries: &[u32]) {
        for &e in entries {
            let bytes = self.inflater.inflate(e);
            self.ready.insert(e, bytes);
        }
    }
    fn take(&mut self, entry: u32) -> Option<Vec<u8>> {
        self.ready.remove(&entry).flatten()
    }
}

fuzz_target!(|data: &[u8]| {
    let Some((&pick, zip)) = data.split_first() else { return };
    let max_bytes = if pick & 1 == 1 { 4096 } else { u64::MAX };
    let limits = Limits { max_total_bytes: if pick & 2 == 2 { 1 << 16 } else { 1 << 30 }, ..Limits::default() };
    let len = zip.len() as u64;
    let Ok(mut plain) = ZipInput::open(Cursor::new(zip), len, "fuzz.zip", limits) else { return };
    let mut ahead = ZipInput::open(Cursor::new(zip), len, "fuzz.zip", limits).expect("opens as it did");
    let inflater = ahead.inflater(Cursor::new(zip.to_vec()));
    ahead.set_read_ahead(Box::new(SameThread { inflater, ready: HashMap::new() }));
    let mut paths: Vec<String> = plain.entries().iter().filter(|e| !e.is_dir).map(|e| e.path.clone()).take(256).collect();
    ahead.prefetch(&paths);
    if pick & 4 == 4 {
        paths.reverse();
    }
    for p in &paths {
        let want = plain.read(p, max_bytes);
        let got = ahead.read(p, max_bytes);
        assert!(want == got, "{p}: the read changed");
        assert_eq!(plain.bytes_inflated(), ahead.bytes_inflated(), "{p}: bytes booked");
    }
});
