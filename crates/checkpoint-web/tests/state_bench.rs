//! State decoding speed in the browser (headless Chromium): a large generated lz4-java framed `.delta` of an
//! aggregation store (key `struct<key:string, window:struct<start,end:timestamp>>`, value `struct<count,sum:bigint>`),
//! framed with the core's writer, decoded with the core's codec, record walker and UnsafeRow decoder — the same
//! work the State tab does per file. Prints rows/s and MB/s (of decompressed bytes) next to raw LZ4 block
//! decompression of the same blocks (the codec's own speed).
//!
//! Numbers: `cargo test --release -p checkpoint-web --target wasm32-unknown-unknown --test state_bench --
//! --nocapture` (1,000,000 rows). Debug builds (CI) run 50,000 rows, to check the work is done, not its speed.
#![cfg(target_arch = "wasm32")]

use checkpoint_core::codec::{self, write::lz4_block_stream};
use checkpoint_core::state::hdfs::{for_each_record, RecordFileKind};
use checkpoint_core::state::schema::StructType;
use checkpoint_core::state::unsafe_row::{decode_row, write_row_json};
use wasm_bindgen_test::*;

wasm_bindgen_test_configure!(run_in_browser);

fn put(out: &mut [u8], at: usize, v: u64) {
    out[at..at + 8].copy_from_slice(&v.to_le_bytes());
}

/// UnsafeRow of the key: null bits, a string slot (offset<<32 | size), a struct slot, then the variable part.
fn key_row(i: u64) -> Vec<u8> {
    let s = format!("key-{i:08}");
    let mut out = vec![0u8; 24];
    let soff = out.len() as u64;
    out.extend_from_slice(s.as_bytes());
    out.resize(out.len().div_ceil(8) * 8, 0);
    put(&mut out, 8, (soff << 32) | s.len() as u64);
    let woff = out.len() as u64;
    let start = 1_704_067_200_000_000u64 + (i % 1000) * 10_000_000;
    let mut w = vec![0u8; 24];
    put(&mut w, 8, start);
    put(&mut w, 16, start + 10_000_000);
    out.extend_from_slice(&w);
    put(&mut out, 16, (woff << 32) | 24);
    out
}

fn value_row(i: u64) -> Vec<u8> {
    let mut out = vec![0u8; 24];
    put(&mut out, 8, i % 97 + 1);
    put(&mut out, 16, i * 3);
    out
}

/// The decompressed `.delta` record stream: (key size, key, value size, value)*, then -1.
fn delta(rows: u64) -> Vec<u8> {
    let mut d = Vec::with_capacity(rows as usize * 96);
    for i in 0..rows {
        let (k, v) = (key_row(i), value_row(i));
        d.extend_from_slice(&(k.len() as i32).to_be_bytes());
        d.extend_from_slice(&k);
        d.extend_from_slice(&(v.len() as i32).to_be_bytes());
        d.extend_from_slice(&v);
    }
    d.extend_from_slice(&(-1i32).to_be_bytes());
    d
}

/// Payloads of the LZ4 blocks of an lz4-java `LZ4BlockOutputStream` stream (21-byte headers), for the baseline.
fn lz4_blocks(framed: &[u8]) -> Vec<(&[u8], usize)> {
    let mut out = Vec::new();
    let mut pos = 0;
    while pos + 21 <= framed.len() {
        let le = |at: usize| u32::from_le_bytes([framed[at], framed[at + 1], framed[at + 2], framed[at + 3]]) as usize;
        let (clen, olen) = (le(pos + 9), le(pos + 13));
        if olen > 0 && framed[pos + 8] & 0xF0 == 0x20 {
            out.push((&framed[pos + 21..pos + 21 + clen], olen));
        }
        pos += 21 + clen;
    }
    out
}

/// Best of three runs, in milliseconds.
fn best_ms(mut f: impl FnMut() -> u64) -> (f64, u64) {
    let mut best = f64::INFINITY;
    let mut out = 0;
    for _ in 0..3 {
        let t = js_sys::Date::now();
        out = f();
        best = best.min((js_sys::Date::now() - t).max(0.5));
    }
    (best, out)
}

#[wasm_bindgen_test]
fn state_decode_speed_in_the_browser() {
    let rows: u64 = if cfg!(debug_assertions) { 50_000 } else { 1_000_000 };
    let data = delta(rows);
    let framed = lz4_block_stream(&data, 32 * 1024);
    let blocks = lz4_blocks(&framed);
    let ks = StructType::from_json_str(
        r#"{"type":"struct","fields":[{"name":"key","type":"string","nullable":true,"metadata":{}},
        {"name":"window","type":{"type":"struct","fields":[{"name":"start","type":"timestamp","nullable":true,"metadata":{}},
        {"name":"end","type":"timestamp","nullable":true,"metadata":{}}]},"nullable":true,"metadata":{}}]}"#,
    )
    .expect("key schema");
    let vs = StructType::from_json_str(
        r#"{"type":"struct","fields":[{"name":"count","type":"long","nullable":true,"metadata":{}},
        {"name":"sum","type":"long","nullable":true,"metadata":{}}]}"#,
    )
    .expect("value schema");
    let mb = data.len() as f64 / 1e6;
    let report = |what: &str, ms: f64| {
        console_log!(
            "state_decode_browser {what}: {ms:.0} ms, {:.1} MB/s, {:.2} M rows/s ({rows} rows, {mb:.1} MB decompressed, {:.1} MB lz4)",
            mb / (ms / 1e3),
            rows as f64 / 1e6 / (ms / 1e3),
            framed.len() as f64 / 1e6
        )
    };

    let (ms, n) = best_ms(|| {
        let mut buf = vec![0u8; 32 * 1024];
        blocks.iter().map(|(p, olen)| lz4_flex::block::decompress_into(p, &mut buf[..*olen]).unwrap_or(0) as u64).sum()
    });
    assert_eq!(n, data.len() as u64, "raw blocks give the whole stream");
    report("raw_lz4_blocks (baseline)", ms);

    let (ms, n) = best_ms(|| codec::decompress(&framed, 1 << 30).expect("decompresses").len() as u64);
    assert_eq!(n, data.len() as u64, "the framing round-trips");
    report("lz4java_framing_with_checksums", ms);

    let (ms, n) = best_ms(|| {
        let d = codec::decompress(&framed, 1 << 30).expect("decompresses");
        let mut n = 0u64;
        for_each_record(&d, RecordFileKind::Delta, |r| {
            let k = decode_row(r.key, &ks).expect("key decodes");
            let v = decode_row(r.value.unwrap_or(&[]), &vs).expect("value decodes");
            n += u64::from(k.get("key").is_some() && v.get("count").is_some());
        })
        .expect("records");
        n
    });
    assert_eq!(n, rows, "every row decoded");
    report("decompress_scan_decode_rows_to_json_values", ms);

    let (ms, n) = best_ms(|| {
        let d = codec::decompress(&framed, 1 << 30).expect("decompresses");
        let mut line = String::with_capacity(256);
        let mut n = 0u64;
        for_each_record(&d, RecordFileKind::Delta, |r| {
            line.clear();
            write_row_json(r.key, &ks, &mut line).expect("key");
            write_row_json(r.value.unwrap_or(&[]), &vs, &mut line).expect("value");
            n += u64::from(line.contains("key-"));
        })
        .expect("records");
        n
    });
    assert_eq!(n, rows);
    report("decompress_scan_write_rows_as_json_text", ms);
}
