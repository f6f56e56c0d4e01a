//! Inputs the fuzzers found (fuzz/README.md), kept as regression tests: each must be answered with an error in
//! bounded memory and time, never a panic.

use checkpoint_core::codec;
use checkpoint_core::state::rocksdb::{changelog, sst};
use serde_json::json;

fn input(name: &str) -> Vec<u8> {
    std::fs::read(format!("{}/tests/data/fuzz/{name}", env!("CARGO_MANIFEST_DIR"))).expect("regression input")
}

/// The Delta checkpoint parquet `name` (`len` bytes) read row by row: refused by `delta::parquet_guard`, never a
/// panic caught by the native backstop; as the checkpoint of a Delta log, the same refusal is a problem of the log
/// naming the file.
fn refused_by_the_guard(name: &str, len: usize) -> checkpoint_core::delta::parquet::ParquetError {
    use checkpoint_core::archive::MemArchive;
    use checkpoint_core::delta::parquet::{for_each_row, PANIC_CAUGHT};
    let data = input(name);
    assert_eq!(data.len(), len);
    let e = for_each_row(data.clone(), |_| {}).expect_err("corrupt");
    assert!(!e.reason.starts_with(PANIC_CAUGHT), "refused by the guard, not caught: {e:?}");
    let path = "_delta_log/00000000000000000010.checkpoint.parquet";
    let files = vec![(path.to_string(), data)];
    let mut log = MemArchive::new("delta_log.zip", files, checkpoint_core::Limits::default()).expect("archive");
    let logs = checkpoint_core::delta::reader::read_delta_logs(&mut log);
    let problem = logs[0].problems.iter().find(|p| p.path == path);
    assert!(problem.is_some_and(|p| p.offset == e.offset && p.reason == e.reason), "{e:?}: {:?}", logs[0].problems);
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
    let limits = sst::SstLimits {
        max_block_bytes: 1 << 20,
        max_total_bytes: 16 << 20,
        max_entries: 100_000,
        max_entry_expansion: 32,
        max_copied_bytes: 64 << 20,
    };
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
/// values than its bytes can hold. The fuzzer lengthened that page's header by 4 bytes, so the data page after it
/// ends 4 bytes past the column chunk: since 2026-12-05 the page-header walk (`delta::page_headers`) refuses that
/// first, before any page is read; with the data page cut to fit, the dictionary check still refuses the file.
#[test]
fn a_dictionary_page_declaring_more_values_than_it_holds_is_an_error() {
    let e = refused_by_the_guard("delta_parquet-dictionary-count-oom.bin", 14_258);
    assert!(e.reason.contains("the page header at byte 1927: a page of 7 bytes (7 uncompressed), 3 bytes left"));
    // The same count in a page whose header grows in place: colmap's checkpoint (tests/data/delta), its first
    // dictionary page (add.path, 4 values in 284 bytes at byte 4) declaring 134,217,727 values, the 3 more bytes of
    // the count's varint taken from the end of the page, so that every page stays where it was.
    let zip = format!("{}/tests/data/delta/colmap.delta_log.zip", env!("CARGO_MANIFEST_DIR"));
    let f = std::fs::File::open(&zip).expect("colmap");
    let len = f.metadata().unwrap().len();
    let mut log = checkpoint_core::ZipInput::open(f, len, "colmap", checkpoint_core::Limits::default()).unwrap();
    let path = "_delta_log/00000000000000000003.checkpoint.parquet";
    let mut b = checkpoint_core::Archive::read(&mut log, path, 1 << 20).unwrap();
    let header = [0x15, 0x04, 0x15, 0xb8, 0x04, 0x15, 0xb8, 0x04, 0x4c, 0x15, 0x08, 0x15, 0x00, 0x12, 0x00, 0x00];
    assert_eq!(b[4..20], header);
    let grown = [0x15, 0x04, 0x15, 0xb2, 0x04, 0x15, 0xb2, 0x04, 0x4c, 0x15, 0xfe, 0xff, 0xff, 0x7f];
    b.splice(4..20, grown.into_iter().chain([0x15, 0x00, 0x12, 0x00, 0x00]));
    b.drain(304..307);
    let e = checkpoint_core::delta::parquet::for_each_row(b, |_| {}).expect_err("corrupt");
    let words = "a dictionary page declares 134217727 values in 281 bytes";
    assert!(e.reason.contains("column add.path: ") && e.reason.contains(words), "{e:?}");
}

/// `delta_parquet`, the hang an earlier session's run found (its fix was lost; this session's runs did not find it
/// again, so it is made again by hand from colmap's checkpoint in `tests/data/delta`): the header of `add.stats`'s
/// data page (byte 1066) starts with an unknown field, a list declaring 2,147,483,647 doubles. The `parquet` crate
/// skips an unknown field by its declared type, reading the header from a reader that runs to the end of the file,
/// and past the end a double costs it no byte: two billion turns of its loop for each read of the header (15 s in
/// a release build; the check pass and the row reader each read it). The guard now walks every page header within
/// its column chunk first (`delta::page_headers`) and refuses the list, naming its byte. (No timing asserted: the
/// test has to end.)
#[test]
fn a_page_header_declaring_a_list_past_its_column_chunk_is_refused() {
    let e = refused_by_the_guard("delta_parquet-page-header-list-past-its-chunk.bin", 14_965);
    let words = "column add.stats: the page header at byte 1066: a collection at byte 1067 declaring 2147483647 \
                 elements, 21 bytes left";
    assert!(e.reason.contains(words), "{e:?}");
    assert_eq!(e.offset, Some(1067));
}

/// `delta_parquet`, 2026-12-05, a run on the guard without its page-header walk (a timeout: 3.9 s of CPU for the
/// input alone in the release fuzz build, far more in a debug build): the footer (`FileMetaData`) holds an unknown
/// field declaring a map of 260,046,847 pairs of booleans. The `parquet` crate parses the footer before anything
/// is checked, skips an unknown field by its declared type, and skips a boolean element without reading a byte.
/// The footer is now walked first, by its declared types (`delta::page_headers::check_footer`), and the map refused
/// at its byte. (No timing asserted: the test has to end.)
#[test]
fn a_footer_declaring_a_map_of_booleans_is_refused() {
    let e = refused_by_the_guard("delta_parquet-footer-map-of-booleans.bin", 10_318);
    assert!(e.reason.starts_with("footer: a collection of 260046847 booleans at byte 7947"), "{e:?}");
    assert_eq!(e.offset, Some(7947));
}

/// `delta_parquet`, 2026-12-05 (a panic, `record/triplet.rs:270` "index out of bounds: the len is 0 but the index is
/// 2", in `current_def_level`): one byte of a real checkpoint changed, the data page of `metaData.createdTime`
/// declaring 4 values where the row group has 12 rows. The column ends after 4 rows; the row reader then advances it
/// as a null field of `metaData` once more, and the triplet iterator, which keeps the length of its last batch, says
/// it has a level again, over an empty buffer. The guard now replays the row reader's walk over the levels
/// (`delta::row_walk`) and refuses a column advanced past its end, naming the row, the column and its first byte.
#[test]
fn a_column_ending_before_its_row_groups_rows_is_an_error() {
    let e = refused_by_the_guard("delta_parquet-column-ends-before-its-rows.bin", 13_731);
    let words = "row group 0, column metaData.createdTime: row 4 of 12: the rows run past the end of its levels";
    assert!(e.reason.contains(words), "{e:?}");
    assert_eq!(e.offset, Some(3839), "{e:?}");
}

/// `delta_parquet`, 2026-12-05, a run on the guard without its page-header walk (a panic,
/// `encodings/decoding/byte_stream_split_decoder.rs:67` "index out of bounds: the len is 2 but the index is 2"): a
/// data page's encoding changed to `BYTE_STREAM_SPLIT`, whose decoder reads value `k` at bytes `k + j × (len /
/// width)` without a bound, over 3 bytes of dictionary indices. The fuzzer's input also has a page header the walk
/// now refuses, so the input kept is the same fault made with one byte of colmap's checkpoint (`add.size`'s data
/// page, byte 461: `RLE_DICTIONARY` to `BYTE_STREAM_SPLIT`). The check pass now reads such a page as `PLAIN` zeros,
/// as many as its bytes hold, so the plain decoder fails where the split one would read past the page.
#[test]
fn a_byte_stream_split_page_shorter_than_its_values_is_an_error() {
    let e = refused_by_the_guard("delta_parquet-byte-stream-split-short.bin", 14_965);
    let words = "row group 0, column add.size: row 0 of 6: EOF: Not enough bytes to decode";
    assert!(e.reason.contains(words), "{e:?}");
    assert_eq!(e.offset, Some(421), "{e:?}");
}

/// What the `BYTE_STREAM_SPLIT` check must keep reading: a file of nullable `INT64` and `DOUBLE` columns in that
/// encoding (written here by the `parquet` crate, v1 and v2 data pages, a null in every third row), whose pages hold
/// only the non-null values.
#[test]
fn valid_byte_stream_split_pages_with_nulls_read() {
    use parquet::basic::Encoding;
    use parquet::data_type::{DoubleType, Int64Type};
    use parquet::file::properties::{WriterProperties, WriterVersion};
    use parquet::file::writer::SerializedFileWriter;
    use std::sync::Arc;
    let schema = Arc::new(
        parquet::schema::parser::parse_message_type("message m { optional int64 a; optional double b; }").unwrap(),
    );
    for version in [WriterVersion::PARQUET_1_0, WriterVersion::PARQUET_2_0] {
        let props = WriterProperties::builder()
            .set_writer_version(version)
            .set_dictionary_enabled(false)
            .set_encoding(Encoding::BYTE_STREAM_SPLIT)
            .build();
        let mut file = Vec::new();
        let mut w = SerializedFileWriter::new(&mut file, schema.clone(), Arc::new(props)).unwrap();
        let mut group = w.next_row_group().unwrap();
        let def: Vec<i16> = (0..30).map(|i| i16::from(i % 3 != 0)).collect();
        let mut a = group.next_column().unwrap().unwrap();
        a.typed::<Int64Type>().write_batch(&(0..20).collect::<Vec<i64>>(), Some(&def), None).unwrap();
        a.close().unwrap();
        let mut b = group.next_column().unwrap().unwrap();
        b.typed::<DoubleType>().write_batch(&(0..20).map(f64::from).collect::<Vec<_>>(), Some(&def), None).unwrap();
        b.close().unwrap();
        group.close().unwrap();
        w.close().unwrap();
        let written = parquet::file::reader::SerializedFileReader::new(bytes::Bytes::from(file.clone())).unwrap();
        let meta = parquet::file::reader::FileReader::metadata(&written).row_group(0).clone();
        assert!(meta.columns().iter().all(|c| c.encodings().any(|e| e == Encoding::BYTE_STREAM_SPLIT)));
        let mut rows = Vec::new();
        let n = checkpoint_core::delta::parquet::for_each_row(file, |r| rows.push(r)).expect("reads");
        assert_eq!(n, 30);
        assert_eq!(
            (rows[0]["a"].clone(), rows[1]["a"].clone(), rows[29]["b"].clone()),
            (json!(null), json!(0), json!(19.0))
        );
    }
}

/// `delta_parquet`, 2026-12-05, the long run on the fixed code (a panic, `bytes.rs:374` "range end out of bounds: 16
/// <= 10", from the column reader's `parse_v1_level`): a v1 data page of a list column whose repetition levels are
/// `RLE` and whose definition levels claim `BIT_PACKED`, which the column reader slices without a bound. The check
/// of `BIT_PACKED` levels took them from the page's first byte, not from after the `RLE` levels before them; it now
/// follows both.
#[test]
fn bit_packed_levels_after_rle_levels_past_the_page_are_an_error() {
    let e = refused_by_the_guard("delta_parquet-bit-packed-levels-after-rle-levels.bin", 26_992);
    let words =
        "column protocol.readerFeatures.list.element: row 0 of 62: Parquet error: 16 bytes of levels and 10 left";
    assert!(e.reason.contains(words), "{e:?}");
    assert_eq!(e.offset, Some(16567), "{e:?}");
}
