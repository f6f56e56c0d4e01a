//! A state file's record stream is walked as it is decompressed: a small zstd `.delta` that unpacks to tens of
//! megabytes (500 MiB in a newcomer's run: 1 GB held, the whole stream and a copy of it) is never held whole. A
//! counting allocator measures the peak bytes held during the walk.

#[path = "support/peak_alloc.rs"]
mod peak_alloc;
use peak_alloc::{one_at_a_time, peak_during};

use checkpoint_core::state::hdfs::{for_each_record_in_file_at, RecordFileKind};

/// `n` records of a 4-byte key and a 48-byte value, then the `-1` end marker: the HDFS provider's record stream.
fn records(n: usize) -> Vec<u8> {
    let mut out = Vec::with_capacity(n * 60 + 4);
    for i in 0..n {
        out.extend_from_slice(&4i32.to_be_bytes());
        out.extend_from_slice(&(i as u32 % 1000).to_be_bytes());
        out.extend_from_slice(&48i32.to_be_bytes());
        out.extend_from_slice(&[7u8; 48]);
    }
    out.extend_from_slice(&(-1i32).to_be_bytes());
    out
}

#[test]
fn a_zstd_stream_is_walked_without_holding_it() {
    let _one = one_at_a_time();
    let raw = records(300_000); // 18 MB
    let file = ruzstd::encoding::compress_to_vec(&raw[..], ruzstd::encoding::CompressionLevel::Fastest);
    drop(raw);
    assert!(file.len() < 1 << 20, "{} bytes", file.len());
    let (stats, peak) = peak_during(|| {
        let mut puts = 0u64;
        let st = for_each_record_in_file_at(&file, RecordFileKind::Delta, 512 << 20, |_, _, _| puts += 1).unwrap();
        (st, puts)
    });
    assert_eq!(stats.1, 300_000);
    assert_eq!(stats.0.puts, 300_000);
    assert!(peak < 4 << 20, "{peak} bytes held while walking an 18 MB stream");
}
