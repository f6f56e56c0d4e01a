//! The lazy Blob reader in a dedicated Web Worker (where `FileReaderSync` exists), in headless Chromium.
#![cfg(target_arch = "wasm32")]

mod common;

use checkpoint_core::{Archive, ZipInput};
use checkpoint_web::blob::{
    coalesce, BlobReader, BlobZip, FilesArchive, CACHE_BYTES, PREFETCH_SPAN_BYTES, WHOLE_FILE_BYTES,
};
use checkpoint_web::{diagnose_archive, diagnose_zip_bytes, limits, Options};
use common::*;
use js_sys::{Array, Uint8Array};
use std::io::{Read, Seek, SeekFrom};
use wasm_bindgen_test::*;
use web_sys::{Blob, File};

wasm_bindgen_test_configure!(run_in_dedicated_worker);

fn blob_of(bytes: &[u8]) -> Blob {
    let parts = Array::new();
    parts.push(&Uint8Array::from(bytes));
    Blob::new_with_u8_array_sequence(&parts).unwrap()
}

#[wasm_bindgen_test]
fn blob_reader_reads_and_seeks() {
    let fx = healthy_agg();
    let mut r = BlobReader::new(blob_of(fx.zip)).unwrap();
    assert_eq!(r.len(), fx.zip.len() as u64);
    let mut head = [0u8; 4];
    r.read_exact(&mut head).unwrap();
    assert_eq!(&head, b"PK\x03\x04");
    let end = r.seek(SeekFrom::End(-22)).unwrap();
    let mut eocd = Vec::new();
    r.read_to_end(&mut eocd).unwrap();
    assert_eq!(end, fx.zip.len() as u64 - 22);
    assert_eq!(&eocd[..], &fx.zip[fx.zip.len() - 22..]);
    assert!(r.seek(SeekFrom::Current(-(fx.zip.len() as i64) - 1)).is_err());
}

/// A zip of `n` stored entries of `size` bytes each (like a checkpoint with big state files).
fn big_zip(n: usize, size: usize) -> Vec<u8> {
    let mut w = zip::ZipWriter::new(std::io::Cursor::new(Vec::new()));
    let opts = zip::write::SimpleFileOptions::default().compression_method(zip::CompressionMethod::Stored);
    let body = vec![7u8; size];
    for i in 0..n {
        w.start_file(format!("state/0/{i}/1.delta"), opts).unwrap();
        std::io::Write::write_all(&mut w, &body).unwrap();
    }
    w.finish().unwrap().into_inner()
}

#[wasm_bindgen_test]
fn opening_a_big_zip_reads_a_small_part_of_it() {
    let bytes = big_zip(24, 1 << 20);
    let len = bytes.len() as u64;
    let zip = BlobZip::open(blob_of(&bytes), "big.zip", limits()).unwrap();
    assert_eq!(zip.entries().len(), 24);
    let read = zip.stats().bytes.get();
    // The central directory plus at most one small buffer per entry, never the entries' contents.
    assert!(read < len / 20, "opening read {read} of {len} bytes");
}

#[wasm_bindgen_test]
fn lazy_blob_diagnosis_equals_the_in_memory_one() {
    let fx = rocksdb();
    let options = Options { spark_version: Some("4.1.4".into()), ..Options::default() };
    let eager = diagnose_zip_bytes(fx.zip, fx.name, &options).unwrap();
    // Read whole (a small zip, as the page opens it) and in slices (as a big one is read).
    for whole_up_to in [WHOLE_FILE_BYTES, 0] {
        let mut zip = BlobZip::open_reading_whole_up_to(blob_of(fx.zip), fx.name, limits(), whole_up_to).unwrap();
        let lazy = diagnose_archive(&mut zip, &options).unwrap();
        assert_eq!(lazy, eager, "read whole up to {whole_up_to} bytes");
        assert_matches_facts(&serde_json::to_string(&lazy).unwrap(), &fx);
    }
}

/// A zip up to `WHOLE_FILE_BYTES` is read in one read of the whole file when it is opened, and a diagnosis then
/// reads nothing more from the blob; a bigger one only its tail and central directory.
#[wasm_bindgen_test]
fn a_small_zip_is_read_whole_once() {
    let fx = rocksdb();
    assert!((fx.zip.len() as u64) < WHOLE_FILE_BYTES);
    let mut zip = BlobZip::open(blob_of(fx.zip), fx.name, limits()).unwrap();
    assert_eq!((zip.stats().reads.get(), zip.stats().bytes.get()), (1, fx.zip.len() as u64));
    let options = Options { spark_version: Some("4.1.4".into()), ..Options::default() };
    diagnose_archive(&mut zip, &options).unwrap();
    assert_eq!((zip.stats().reads.get(), zip.stats().bytes.get()), (1, fx.zip.len() as u64));
    let bytes = big_zip(4, 1 << 20);
    let len = bytes.len() as u64;
    let whole = BlobZip::open_reading_whole_up_to(blob_of(&bytes), "4.zip", limits(), len).unwrap();
    assert_eq!((whole.stats().reads.get(), whole.stats().bytes.get()), (1, len));
    let smaller = BlobZip::open_reading_whole_up_to(blob_of(&bytes), "4.zip", limits(), len - 1).unwrap();
    let read = smaller.stats().bytes.get();
    assert!(read < len / 20, "one byte over the size read whole: opening read {read} of {len} bytes");
}

#[wasm_bindgen_test]
fn prefetched_neighbours_come_in_few_slices_and_read_the_same_bytes() {
    // 400 small files: one prefetch of all of them is a handful of slices, and every read is then served from
    // the cache with the bytes the plain zip reader gives.
    let mut w = zip::ZipWriter::new(std::io::Cursor::new(Vec::new()));
    let opts = zip::write::SimpleFileOptions::default();
    let names: Vec<String> = (0..400).map(|i| format!("offsets/{i}")).collect();
    for (i, n) in names.iter().enumerate() {
        w.start_file(n.as_str(), opts).unwrap();
        std::io::Write::write_all(&mut w, format!("v1\n{{\"batchWatermarkMs\":{i}}}\n").repeat(20).as_bytes()).unwrap();
    }
    let bytes = w.finish().unwrap().into_inner();
    let mut zip = BlobZip::open_reading_whole_up_to(blob_of(&bytes), "logs.zip", limits(), 0).unwrap();
    let mut plain =
        ZipInput::open(std::io::Cursor::new(bytes.clone()), bytes.len() as u64, "logs.zip", limits()).unwrap();
    let before = zip.stats().reads.get();
    zip.prefetch(&names);
    let prefetch_reads = zip.stats().reads.get() - before;
    assert!((1..=2).contains(&prefetch_reads), "{prefetch_reads} slices for 400 neighbouring entries");
    for n in names.iter().rev() {
        assert_eq!(zip.read(n, 1 << 20).unwrap(), plain.read(n, 1 << 20).unwrap(), "{n}");
    }
    assert_eq!(zip.stats().reads.get() - before, prefetch_reads, "every read came from the prefetched slice");
    // Unknown paths are ignored; a second hint for cached entries reads nothing.
    zip.prefetch(&["no/such/file".to_string()]);
    zip.prefetch(&names);
    assert_eq!(zip.stats().reads.get() - before, prefetch_reads);
}

/// A zip of `n` small entries (`offsets/<i>`), with a comment of `comment` bytes.
fn many_entries(n: usize, comment: usize) -> Vec<u8> {
    let mut w = zip::ZipWriter::new(std::io::Cursor::new(Vec::new()));
    let opts = zip::write::SimpleFileOptions::default().compression_method(zip::CompressionMethod::Stored);
    for i in 0..n {
        w.start_file(format!("offsets/{i}"), opts).unwrap();
        std::io::Write::write_all(&mut w, b"v1\n{}\n").unwrap();
    }
    w.set_comment("c".repeat(comment)).unwrap();
    w.finish().unwrap().into_inner()
}

/// Opening a zip reads its end of central directory record and its central directory ahead, in one slice for
/// the tail and a slice per 2 MiB of the directory: a small zip, one with the longest comment, and a zip64 one
/// (more than 65,535 entries, where the directory's place is in the zip64 record); each lists what the plain
/// zip reader lists.
#[wasm_bindgen_test]
fn opening_reads_the_central_directory_ahead_in_few_slices() {
    for (n, comment, max_slices) in [(400, 0, 1), (400, 65_535, 2), (70_000, 0, 4)] {
        let bytes = many_entries(n, comment);
        let zip = BlobZip::open_reading_whole_up_to(blob_of(&bytes), "many.zip", limits(), 0).unwrap();
        let plain =
            ZipInput::open(std::io::Cursor::new(bytes.clone()), bytes.len() as u64, "many.zip", limits()).unwrap();
        let reads = zip.stats().reads.get();
        assert!(reads <= max_slices, "{n} entries, comment {comment}: {reads} slices");
        assert_eq!(zip.entries(), plain.entries());
    }
    // A hostile end: 65,535 entries claimed and a zip64 locator pointing 4 GiB on (the read-ahead's offsets
    // would overflow a wasm32 usize): a clear error or a listing, never a panic, and no more than the tail read.
    let bytes = many_entries(3, 0);
    let eocd = bytes.len() - 22;
    let mut hostile = bytes[..eocd].to_vec();
    hostile.extend_from_slice(&[0x50, 0x4b, 0x06, 0x07, 0, 0, 0, 0]);
    hostile.extend_from_slice(&0xFFFF_FFFEu64.to_le_bytes());
    hostile.extend_from_slice(&1u32.to_le_bytes());
    let mut end = bytes[eocd..].to_vec();
    end[8..12].copy_from_slice(&[0xff; 4]);
    hostile.extend_from_slice(&end);
    let _ = BlobZip::open_reading_whole_up_to(blob_of(&hostile), "hostile.zip", limits(), 0);
}

#[wasm_bindgen_test]
fn coalescing_joins_neighbours_and_bounds_what_it_fetches() {
    assert_eq!(coalesce(vec![(100, 200), (0, 50), (60_000, 60_100)]), vec![(0, 60_100)]);
    // Farther apart than the gap: two slices.
    assert_eq!(coalesce(vec![(0, 10), (1 << 20, (1 << 20) + 10)]), vec![(0, 10), (1 << 20, (1 << 20) + 10)]);
    // An entry over the span limit is left to its own read; empty ranges are dropped.
    assert_eq!(coalesce(vec![(0, PREFETCH_SPAN_BYTES + 1), (5, 5)]), vec![]);
    // No span grows past the limit, and all together stay within half the cache.
    let many: Vec<(u64, u64)> = (0..100_000u64).map(|i| (i * 1000, i * 1000 + 900)).collect();
    let spans = coalesce(many);
    assert!(spans.iter().all(|(s, e)| e - s <= PREFETCH_SPAN_BYTES));
    let total: u64 = spans.iter().map(|(s, e)| e - s).sum();
    assert!(total <= CACHE_BYTES as u64 / 2 + PREFETCH_SPAN_BYTES, "{total}");
}

#[wasm_bindgen_test]
fn a_dropped_folder_is_read_lazily_and_diagnosed_like_its_zip() {
    let fx = healthy_agg();
    let files: Vec<(String, File)> = unzip(fx.zip)
        .into_iter()
        .map(|(p, b)| {
            let parts = Array::new();
            parts.push(&Uint8Array::from(b.as_slice()));
            let f = File::new_with_u8_array_sequence(&parts, &p).unwrap();
            (p, f)
        })
        .collect();
    let mut folder = FilesArchive::new("chk", files, limits()).unwrap();
    assert_eq!(folder.name(), "chk");
    let options = Options::default();
    let a = diagnose_archive(&mut folder, &options).unwrap();
    let b = diagnose_zip_bytes(fx.zip, "chk.zip", &options).unwrap();
    assert_eq!(a.checkpoints, b.checkpoints);
    assert!(FilesArchive::new("empty", vec![], limits()).is_err());
}

#[wasm_bindgen_test]
fn a_dropped_folders_big_file_is_read_in_slices_equal_to_its_whole() {
    // 2.5 MiB: three slices of at most 1 MiB (a file log's `.compact` is read this way, never held whole).
    let data: Vec<u8> = (0..2_621_440u32).map(|i| (i.wrapping_mul(2_654_435_761) >> 24) as u8).collect();
    let parts = Array::new();
    parts.push(&Uint8Array::from(data.as_slice()));
    let f = File::new_with_u8_array_sequence(&parts, "0.compact").unwrap();
    let mut folder = FilesArchive::new("chk", vec![("chk/sources/0/9.compact".to_string(), f)], limits()).unwrap();
    let mut pieces = Vec::new();
    let mut sizes = Vec::new();
    let n = folder.read_each("chk/sources/0/9.compact", 1 << 30, &mut |p| {
        sizes.push(p.len());
        pieces.extend_from_slice(p)
    });
    assert_eq!(n, Ok(data.len() as u64));
    assert_eq!(sizes, vec![1 << 20, 1 << 20, data.len() - (2 << 20)]);
    assert!(pieces == data);
    assert!(folder.read("chk/sources/0/9.compact", 1 << 30).unwrap() == data);
    // The total read limit counts both reads.
    assert_eq!(folder.bytes_left(), Some(limits().max_total_bytes - 2 * data.len() as u64));
}
