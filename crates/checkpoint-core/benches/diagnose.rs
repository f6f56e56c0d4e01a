//! Benchmarks of `diagnose`:
//! * the largest fixture (by zip size), the whole pipeline from the zip's bytes;
//! * a generated large checkpoint in a `MemArchive`: 200 partitions × 50 batches of HDFS state (10 000
//!   deltas of ~16 KiB, ~160 MB), built from a real fixture's files (its metadata, logs, schema and the
//!   records of a real delta, repeated), diagnosed with the default 256 MiB budget, with a 16 MiB budget, and
//!   with budget 0 (listing and logs only). It shows what the budget buys: time grows with the bytes verified,
//!   not with the size of the checkpoint.

use checkpoint_core::archive::Archive;
use checkpoint_core::{diagnose, Context, Limits, MemArchive, ZipInput};
use criterion::{criterion_group, criterion_main, Criterion};
use std::io::Cursor;

fn fixtures() -> std::path::PathBuf {
    std::path::PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/../../../shared/fixtures"))
}

fn largest_fixture() -> (String, Vec<u8>) {
    let mut best: Option<(u64, std::path::PathBuf)> = None;
    for e in std::fs::read_dir(fixtures()).expect("fixtures folder").flatten() {
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

const PARTITIONS: u32 = 200;
const BATCHES: i64 = 50;
const DELTA_TARGET: usize = 16 * 1024;

/// A large HDFS-state checkpoint generated from `ss-4.3.0-agg-hdfs`.
fn large_checkpoint() -> Vec<(String, Vec<u8>)> {
    let path = fixtures().join("ss-4.3.0-agg-hdfs.zip");
    let bytes = std::fs::read(&path).expect("fixture");
    let len = bytes.len() as u64;
    let mut z = ZipInput::open(Cursor::new(bytes), len, "gen", Limits::default()).expect("zip");
    let mut read = |p: &str| z.read(p, 1 << 26).expect("fixture entry");
    let mut files = vec![("metadata".to_string(), read("metadata"))];
    let fix = |t: Vec<u8>| {
        String::from_utf8(t)
            .expect("utf8")
            .replace("\"spark.sql.shuffle.partitions\":\"3\"", "\"spark.sql.shuffle.partitions\":\"200\"")
            .into_bytes()
    };
    let offsets = fix(read("offsets/11"));
    let commit = read("commits/11");
    for b in 0..BATCHES {
        files.push((format!("offsets/{b}"), offsets.clone()));
        files.push((format!("commits/{b}"), commit.clone()));
    }
    files.push(("state/0/0/_metadata/schema".to_string(), read("state/0/0/_metadata/schema")));
    // Records of a real delta, repeated to ~16 KiB, framed as lz4-java blocks.
    let raw = checkpoint_core::codec::decompress(&read("state/0/0/12.delta"), 1 << 26).expect("delta");
    let records = &raw[..raw.len() - 4];
    let mut body = Vec::new();
    while body.len() < DELTA_TARGET {
        body.extend_from_slice(records);
    }
    body.extend_from_slice(&(-1i32).to_be_bytes());
    let delta = checkpoint_core::codec::write::lz4_block_stream(&body, 32 * 1024);
    for p in 0..PARTITIONS {
        for v in 1..=BATCHES {
            files.push((format!("state/0/{p}/{v}.delta"), delta.clone()));
        }
    }
    files
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

    let files = large_checkpoint();
    let total: usize = files.iter().map(|(_, b)| b.len()).sum();
    let state_mb = (PARTITIONS as usize * BATCHES as usize * DELTA_TARGET) >> 20;
    let mut archive = MemArchive::new("large", files, Limits::default()).expect("mem");
    let mut g = c.benchmark_group(format!(
        "diagnose generated {PARTITIONS}x{BATCHES} deltas (~{state_mb} MiB of state, {} KiB stored)",
        total >> 10
    ));
    g.sample_size(10);
    for (label, budget) in
        [("budget 0 (overview)", Some(0u64)), ("budget 16 MiB", Some(16 << 20)), ("default 256 MiB", None)]
    {
        let ctx = Context { verify_budget_bytes: budget, ..Default::default() };
        g.bench_function(label, |b| {
            b.iter(|| {
                let r = diagnose(&mut archive, &ctx);
                assert_eq!(r.checkpoints.len(), 1);
                r
            })
        });
    }
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
