//! Benchmark: `diagnose` on the largest fixture (by zip size), the whole pipeline from the zip's bytes.

use checkpoint_core::{diagnose, Context, Limits, ZipInput};
use criterion::{criterion_group, criterion_main, Criterion};
use std::io::Cursor;

fn largest_fixture() -> (String, Vec<u8>) {
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/../../../shared/fixtures");
    let mut best: Option<(u64, std::path::PathBuf)> = None;
    for e in std::fs::read_dir(dir).expect("fixtures folder").flatten() {
        let p = e.path();
        if p.extension().is_some_and(|x| x == "zip") {
            let len = e.metadata().map(|m| m.len()).unwrap_or(0);
            if best.as_ref().is_none_or(|(l, _)| len > *l) {
                best = Some((len, p));
            }
        }
    }
    let (_, p) = best.expect("a fixture zip");
    (p.file_name().unwrap_or_default().to_string_lossy().to_string(), std::fs::read(&p).expect("read fixture"))
}

fn bench(c: &mut Criterion) {
    let (name, bytes) = largest_fixture();
    let ctx = Context::default();
    c.bench_function(&format!("diagnose {name}"), |b| {
        b.iter(|| {
            let len = bytes.len() as u64;
            let mut a = ZipInput::open(Cursor::new(&bytes[..]), len, &name, Limits::default()).expect("zip");
            let r = diagnose(&mut a, &ctx);
            assert_eq!(r.checkpoints.len(), 1);
            r
        })
    });
}

criterion_group!(benches, bench);
criterion_main!(benches);
