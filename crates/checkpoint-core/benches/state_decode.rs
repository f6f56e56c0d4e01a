//! Decoding speed of a large generated HDFS state file (FORMATS.md §8): an lz4-java framed `.delta` with millions
//! of aggregation rows (key `struct<key:string, window:struct<start:timestamp,end:timestamp>>`, value
//! `struct<count:bigint,sum:bigint>`), measured against raw LZ4 block decompression of the same bytes.
//!
//! `cargo bench -p checkpoint-core --bench state_decode` (rows: `STATE_BENCH_ROWS`, default 2,000,000).
//! Reports MB/s of decompressed bytes and rows/s. The last two steps are what `state` does with a store: the
//! HDFS provider's rebuild (the same records as a `.snapshot`, sorted by key) and, on top, every row written as
//! its JSON line by the compiled writer (`RowJsonWriter`); the whole command on a generated checkpoint is
//! `tools/scale-bench/state.sh`.

use checkpoint_core::archive::{Limits, MemArchive};
use checkpoint_core::codec::{self, write::lz4_block_stream};
use checkpoint_core::restart_chain::{ChainFileKind, ChainStep, LoadChain};
use checkpoint_core::state::hdfs::load_chain;
use checkpoint_core::state::hdfs::{for_each_record, for_each_record_in_file, scan_records, RecordFileKind};
use checkpoint_core::state::schema::StructType;
use checkpoint_core::state::unsafe_row::{decode_row, write_row_json, RowJsonWriter};
use criterion::{black_box, criterion_group, criterion_main, Criterion, Throughput};

fn slot(out: &mut [u8], at: usize, v: u64) {
    out[at..at + 8].copy_from_slice(&v.to_le_bytes());
}

/// key row: [bitset 8][key slot 8][window slot 8] + string (padded) + nested window row (bitset 8, 2 slots).
fn key_row(i: u64) -> Vec<u8> {
    let s = format!("key-{i:08}");
    let mut out = vec![0u8; 24];
    let soff = out.len() as u64;
    out.extend_from_slice(s.as_bytes());
    while !out.len().is_multiple_of(8) {
        out.push(0);
    }
    slot(&mut out, 8, (soff << 32) | s.len() as u64);
    let woff = out.len() as u64;
    let start = 1_704_067_200_000_000u64 + (i % 1000) * 10_000_000;
    let mut w = vec![0u8; 24];
    slot(&mut w, 8, start);
    slot(&mut w, 16, start + 10_000_000);
    out.extend_from_slice(&w);
    slot(&mut out, 16, (woff << 32) | 24);
    out
}

fn value_row(i: u64) -> Vec<u8> {
    let mut out = vec![0u8; 24];
    slot(&mut out, 8, i % 97 + 1);
    slot(&mut out, 16, i * 3);
    out
}

fn generate(rows: u64) -> Vec<u8> {
    let mut data = Vec::with_capacity(rows as usize * 96);
    for i in 0..rows {
        let (k, v) = (key_row(i), value_row(i));
        data.extend_from_slice(&(k.len() as i32).to_be_bytes());
        data.extend_from_slice(&k);
        data.extend_from_slice(&(v.len() as i32).to_be_bytes());
        data.extend_from_slice(&v);
    }
    data.extend_from_slice(&(-1i32).to_be_bytes());
    data
}

/// The LZ4 block payloads of a framed stream, for the raw-decompression baseline.
fn blocks(framed: &[u8]) -> Vec<(&[u8], usize)> {
    let mut out = Vec::new();
    let mut pos = 0;
    while pos + 21 <= framed.len() {
        let clen = i32::from_le_bytes(framed[pos + 9..pos + 13].try_into().unwrap()) as usize;
        let olen = i32::from_le_bytes(framed[pos + 13..pos + 17].try_into().unwrap()) as usize;
        if olen > 0 && framed[pos + 8] & 0xF0 == 0x20 {
            out.push((&framed[pos + 21..pos + 21 + clen], olen));
        }
        pos += 21 + clen;
    }
    out
}

fn bench(c: &mut Criterion) {
    let rows: u64 = std::env::var("STATE_BENCH_ROWS").ok().and_then(|v| v.parse().ok()).unwrap_or(2_000_000);
    let data = generate(rows);
    let framed = lz4_block_stream(&data, 32 * 1024);
    let raw = blocks(&framed);
    eprintln!(
        "state_decode: {rows} rows, {} MB decompressed, {} MB lz4-framed, {} LZ4 blocks",
        data.len() >> 20,
        framed.len() >> 20,
        raw.len()
    );
    let ks = StructType::from_json_str(
        r#"{"type":"struct","fields":[{"name":"key","type":"string","nullable":true,"metadata":{}},
        {"name":"window","type":{"type":"struct","fields":[{"name":"start","type":"timestamp","nullable":true,"metadata":{}},
        {"name":"end","type":"timestamp","nullable":true,"metadata":{}}]},"nullable":true,"metadata":{}}]}"#,
    )
    .unwrap();
    let vs = StructType::from_json_str(
        r#"{"type":"struct","fields":[{"name":"count","type":"long","nullable":true,"metadata":{}},
        {"name":"sum","type":"long","nullable":true,"metadata":{}}]}"#,
    )
    .unwrap();

    let mut g = c.benchmark_group("state_decode");
    g.sample_size(10);
    g.throughput(Throughput::Bytes(data.len() as u64));
    g.bench_function("raw_lz4_blocks (baseline)", |b| {
        let mut buf = vec![0u8; 32 * 1024];
        b.iter(|| {
            let mut n = 0;
            for (p, olen) in &raw {
                n += lz4_flex::block::decompress_into(p, &mut buf[..*olen]).unwrap();
            }
            black_box(n)
        })
    });
    g.bench_function("raw_lz4_blocks_into_one_output (baseline)", |b| {
        b.iter(|| {
            let mut out = vec![0u8; data.len()];
            let mut at = 0;
            for (p, olen) in &raw {
                at += lz4_flex::block::decompress_into(p, &mut out[at..at + *olen]).unwrap();
            }
            black_box(out.len() + at)
        })
    });
    g.bench_function("lz4java_framing_with_checksums", |b| {
        b.iter(|| black_box(codec::decompress(&framed, 1 << 31).unwrap().len()))
    });
    g.bench_function("decompress_and_scan_records", |b| {
        b.iter(|| black_box(scan_records(&codec::decompress(&framed, 1 << 31).unwrap()).unwrap().puts))
    });
    g.bench_function("streamed_blocks_and_records (no full buffer)", |b| {
        b.iter(|| {
            let mut n = 0u64;
            let st = for_each_record_in_file(&framed, RecordFileKind::Delta, 1 << 31, |k, _| n += k.len() as u64);
            black_box((st.unwrap().puts, n))
        })
    });
    g.throughput(Throughput::Elements(rows));
    g.bench_function("decompress_scan_decode_rows_to_json (rows)", |b| {
        b.iter(|| {
            let d = codec::decompress(&framed, 1 << 31).unwrap();
            let mut n = 0u64;
            for_each_record(&d, RecordFileKind::Delta, |r| {
                let k = decode_row(r.key, &ks).unwrap();
                let v = decode_row(r.value.unwrap_or(&[]), &vs).unwrap();
                n += u64::from(!k.is_null() && !v.is_null());
            })
            .unwrap();
            black_box(n)
        })
    });
    g.bench_function("stream_records_write_rows_as_json_text (rows)", |b| {
        b.iter(|| {
            let mut line = String::with_capacity(256);
            let mut bytes = 0usize;
            for_each_record_in_file(&framed, RecordFileKind::Delta, 1 << 31, |k, v| {
                line.clear();
                line.push_str("{\"key\":");
                write_row_json(k, &ks, &mut line).unwrap();
                line.push_str(",\"value\":");
                write_row_json(v.unwrap_or(&[]), &vs, &mut line).unwrap();
                line.push('}');
                bytes += line.len();
            })
            .unwrap();
            black_box(bytes)
        })
    });
    // The provider's rebuild of a snapshot holding the same records (a key → value map, sorted by key).
    let mut archive =
        MemArchive::new("bench", vec![("s/1.snapshot".into(), framed.clone())], Limits::default()).unwrap();
    let chain = LoadChain {
        version: 1,
        steps: vec![ChainStep { version: 1, kind: ChainFileKind::Snapshot, path: "s/1.snapshot".into() }],
        ..Default::default()
    };
    let limits = Default::default();
    g.bench_function("rebuild_store_from_snapshot (rows)", |b| {
        b.iter(|| black_box(load_chain(&mut archive, &chain, &limits).unwrap().len()))
    });
    g.bench_function("rebuild_store_write_rows_as_json_lines (rows, what `state` does)", |b| {
        let (mut kw, mut vw) = (RowJsonWriter::new(&ks), RowJsonWriter::new(&vs));
        let mut line = String::with_capacity(256);
        b.iter(|| {
            let store = load_chain(&mut archive, &chain, &limits).unwrap();
            let mut bytes = 0usize;
            for (k, v) in store.iter() {
                line.clear();
                line.push_str("{\"key\":");
                kw.write(k, &mut line).unwrap();
                line.push_str(",\"value\":");
                vw.write(v, &mut line).unwrap();
                line.push_str(",\"partition_id\":0}");
                bytes += line.len() + 1;
            }
            black_box(bytes)
        })
    });
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
