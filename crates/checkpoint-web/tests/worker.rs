//! The lazy Blob reader in a dedicated Web Worker (where `FileReaderSync` exists), in headless Chromium.
#![cfg(target_arch = "wasm32")]

mod common;

use checkpoint_core::{Archive, ZipInput};
use checkpoint_web::blob::{BlobReader, FilesArchive, BLOB_BUFFER_BYTES};
use checkpoint_web::{diagnose_archive, diagnose_zip_bytes, limits, Options};
use common::*;
use js_sys::{Array, Uint8Array};
use std::io::{BufReader, Read, Seek, SeekFrom};
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
    let reader = BlobReader::new(blob_of(&bytes)).unwrap();
    let stats = reader.stats.clone();
    let len = reader.len();
    let zip = ZipInput::open(BufReader::with_capacity(BLOB_BUFFER_BYTES, reader), len, "big.zip", limits()).unwrap();
    assert_eq!(zip.entries().len(), 24);
    let read = stats.bytes.get();
    // The central directory plus at most one small buffer per entry, never the entries' contents.
    assert!(read < len / 20, "opening read {read} of {len} bytes");
}

#[wasm_bindgen_test]
fn lazy_blob_diagnosis_equals_the_in_memory_one() {
    let fx = rocksdb();
    let reader = BlobReader::new(blob_of(fx.zip)).unwrap();
    let len = reader.len();
    let mut zip = ZipInput::open(BufReader::with_capacity(BLOB_BUFFER_BYTES, reader), len, fx.name, limits()).unwrap();
    let options = Options { spark_version: Some("4.1.4".into()), ..Options::default() };
    let lazy = diagnose_archive(&mut zip, &options).unwrap();
    let eager = diagnose_zip_bytes(fx.zip, fx.name, &options).unwrap();
    assert_eq!(lazy, eager);
    assert_matches_facts(&serde_json::to_string(&lazy).unwrap(), &fx);
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
