//! Inputs the fuzzers found (fuzz/README.md), kept as regression tests: each must be answered with an error in
//! bounded memory and time, never a panic.

use checkpoint_core::codec;
use checkpoint_core::state::rocksdb::{changelog, sst};

fn input(name: &str) -> Vec<u8> {
    std::fs::read(format!("{}/tests/data/fuzz/{name}", env!("CARGO_MANIFEST_DIR"))).expect("regression input")
}

/// The Delta checkpoint parquet `name` (`len` bytes) read row by row: refused by `delta::parquet_guard`, never a
/// panic caught by the native backstop.
fn refused_by_the_guard(name: &str, len: usize) -> checkpoint_core::delta::parquet::ParquetError {
    use checkpoint_core::delta::parquet::{for_each_row, PANIC_CAUGHT};
    let data = input(name);
    assert_eq!(data.len(), len);
    let e = for_each_row(data, |_| {}).expect_err("corrupt");
    assert!(!e.reason.starts_with(PANIC_CAUGHT), "refused by the guard, not caught: {e:?}");
    e
}

/// `rocksdb_files`, 2026-12-03 (a timeout in a debug build, 290 MB resident in release): 116 bytes whose snappy-java
/// chunk and lz4-java block headers declare far more output than their few compressed bytes can hold; the
/// decoders zero-filled that much before failing. Now the declared length is refused against what the codec can
/// expand (snappy ~32×, LZ4 ~255×) before anything is allocated.
#[test]
fn a_tiny_stream_declaring_a_huge_output_is_refused_before_allocating() {
    let data = input("rocksdb_files-snappy-lz4-declared-length.bin");
    assert_eq!(data.len(), 116);
    let e = codec::decompress(&data, 1 << 30).expect_err("corrupt");
    assert!(e.to_string().contains("declares") || e.to_string().contains("impossible block header"), "{e}");
    // What the fuzz target drives, all answered with an error or a value (no panic).
    let limits = sst::SstLimits { max_block_bytes: 1 << 20, max_total_bytes: 16 << 20, max_entries: 100_000 };
    let _ = sst::read_sst(&data, limits);
    let _ = changelog::parse_changelog(&data, 100_000);
    let s = checkpoint_core::state_integrity::check_stream_file("f.snapshot", &data, true, false);
    assert!(s.problem.is_some(), "a damaged stream is a problem with its offset");
}

/// `delta_parquet`, 2026-12-04 (a panic, `util/bit_util.rs` "range end index 4 out of range for slice of length
/// 0"): a Delta checkpoint parquet whose `PLAIN` byte-array dictionary page holds fewer values than its header
/// declares; the `parquet` crate's plain decoder slices the next 4-byte length without a bound. Now the check pass
/// (`delta::parquet_guard`) refuses it with the crate's "not enough bytes" error, naming the row group and column.
#[test]
fn a_byte_array_page_cut_inside_a_length_is_an_error() {
    let e = refused_by_the_guard("delta_parquet-plain-byte-array-cut-length.bin", 25_929);
    assert!(e.reason.contains("row group 0, column") && e.offset.is_some(), "{e:?}");
}

/// `delta_parquet`, 2026-12-04, the short run of the test command (a panic, `util/bit_util.rs` "range end index 4
/// out of range for slice of length 1"): a dictionary page's byte-array length that leads 3 bytes into the
/// sentinel the check pass appends, so the next length read had one byte. The check pass now walks `PLAIN`
/// byte arrays (dictionary pages, and data pages after their levels) and refuses values that end inside a
/// length before any decoder runs.
#[test]
fn a_byte_array_length_leading_into_the_sentinel_is_an_error() {
    let e = refused_by_the_guard("delta_parquet-length-into-the-sentinel.bin", 14_965);
    assert!(e.reason.contains("row group 0, column") && e.offset.is_some(), "{e:?}");
}

/// `delta_parquet`, 2026-12-04, a by-hand run (out of memory, 2.6 GB): a dictionary page whose header declares
/// hundreds of millions of values in 14 KB; the `parquet` crate's dictionary decoder resizes its value vector to
/// that count before decoding (a 4 GB allocation). The check pass now refuses a dictionary page declaring more
/// values than its bytes can hold.
#[test]
fn a_dictionary_page_declaring_more_values_than_it_holds_is_an_error() {
    let e = refused_by_the_guard("delta_parquet-dictionary-count-oom.bin", 14_258);
    assert!(e.reason.contains("dictionary page declares"), "{e:?}");
}
