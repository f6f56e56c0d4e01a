//! A corrupt Delta checkpoint parquet is a problem naming the file (and its byte offset when known), never a
//! panic: the `parquet` crate's record API panics on some corrupt files (the page, on wasm32, aborts on a panic),
//! so `delta::parquet_guard` refuses them first. The bytes are the real checkpoint Delta Spark wrote for case 13
//! (`../shared/cases`), changed as the breaker run's reproducers (`/tmp/breaker/gen/g12_parquet_panic.py`) and a
//! deterministic sweep of small mutations changed them.

use checkpoint_core::archive::{Archive, MemArchive};
use checkpoint_core::delta::parquet::{for_each_row, PANIC_CAUGHT};
use checkpoint_core::delta::reader::read_delta_logs;
use checkpoint_core::{Limits, ZipInput};
use std::path::PathBuf;

const CHECKPOINT: &str = "_delta_log/00000000000000000050.checkpoint.parquet";

/// Every file of case 13's `_delta_log`, as (path, bytes).
fn case13_log() -> Vec<(String, Vec<u8>)> {
    let zip = PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/../../../shared/cases"))
        .join("case-13-delta-log-expired.delta_log.zip");
    let f = std::fs::File::open(&zip).unwrap_or_else(|e| panic!("{}: {e}", zip.display()));
    let len = f.metadata().unwrap().len();
    let mut a = ZipInput::open(f, len, "delta_log.zip", Limits::default()).expect("zip opens");
    let paths: Vec<String> = a.entries().iter().filter(|e| !e.is_dir).map(|e| e.path.clone()).collect();
    paths.into_iter().map(|p| (p.clone(), a.read(&p, 1 << 30).expect("entry reads"))).collect()
}

fn checkpoint_bytes() -> Vec<u8> {
    case13_log().into_iter().find(|(p, _)| p == CHECKPOINT).expect("case 13 has its checkpoint").1
}

fn mutated(changes: &[(usize, u8)]) -> Vec<u8> {
    let mut b = checkpoint_bytes();
    for &(i, v) in changes {
        b[i] = v;
    }
    b
}

/// The breaker's three reproducers: a definition level above the maximum (`record/triplet.rs` "Cannot extract
/// value"), a negative column chunk length in the footer (`file/metadata/mod.rs` "column start and length should
/// not be negative"), a dictionary-encoded page with no dictionary page (`column/reader/decoder.rs` "Decoder for
/// dict should have been set").
const REPRODUCERS: [&[(usize, u8)]; 3] = [&[(5877, 0xdd)], &[(9423, 0x3b)], &[(3030, 0xab), (6741, 0xca)]];

#[test]
fn the_unmodified_checkpoint_reads() {
    let mut rows = 0;
    assert!(for_each_row(checkpoint_bytes(), |_| rows += 1).is_ok());
    assert!(rows > 0);
}

#[test]
fn the_breaker_reproducers_are_errors_with_what_is_wrong() {
    let expect = ["definition level 3 above the column's maximum 2", "outside the file", "no dictionary page"];
    for (changes, words) in REPRODUCERS.iter().zip(expect) {
        let e = for_each_row(mutated(changes), |_| {}).expect_err("corrupt");
        assert!(!e.reason.starts_with(PANIC_CAUGHT), "{changes:?}: refused by the guard, not caught: {e:?}");
        assert!(e.reason.contains(words), "{changes:?}: {e:?}");
        assert!(e.offset.is_some(), "{changes:?}: the offset is known: {e:?}");
    }
}

#[test]
fn a_corrupt_checkpoint_is_a_problem_of_its_log_naming_the_file() {
    for changes in REPRODUCERS {
        let files = case13_log()
            .into_iter()
            .map(|(p, b)| if p == CHECKPOINT { (p, mutated(changes)) } else { (p, b) })
            .collect();
        let mut a = MemArchive::new("delta_log.zip", files, Limits::default()).unwrap();
        let logs = read_delta_logs(&mut a);
        let problem = logs[0].problems.iter().find(|p| p.path == CHECKPOINT);
        assert!(problem.is_some_and(|p| p.offset.is_some()), "{changes:?}: {:?}", logs[0].problems);
        assert!(logs[0].checkpoints.values().any(|c| c.damaged), "{changes:?}");
    }
}

/// 3,000 deterministic mutations of 1 to 3 bytes (half of them in the footer, where one byte changes the most),
/// each read to the end or refused with an error by the guard; a panic (caught by the native backstop, or not)
/// fails the test.
#[test]
fn small_mutations_of_a_real_checkpoint_never_panic() {
    let original = checkpoint_bytes();
    let footer_len = u32::from_le_bytes(original[original.len() - 8..original.len() - 4].try_into().unwrap()) as usize;
    let footer_at = original.len() - 8 - footer_len;
    let mut seed = 0x9e37_79b9_7f4a_7c15u64;
    let mut next = move |n: usize| {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        (seed % n as u64) as usize
    };
    let (mut refused, mut read) = (0, 0);
    for k in 0..3000 {
        let mut b = original.clone();
        for _ in 0..1 + next(3) {
            let i = if k % 2 == 0 { 4 + next(original.len() - 8) } else { footer_at + next(footer_len) };
            b[i] = [0, 0xff, 0x7f, 0x80, next(256) as u8][next(5)];
        }
        match for_each_row(b, |_| {}) {
            Ok(_) => read += 1,
            // Caught by the native backstop: a panic the guard did not foresee (the page would abort on it).
            Err(e) if e.reason.starts_with(PANIC_CAUGHT) => panic!("mutation {k}: the parquet crate panicked: {e:?}"),
            Err(_) => refused += 1,
        }
    }
    assert!(refused > 100 && read > 100, "refused {refused}, read {read}");
}

/// The kind of `fuzz_regressions.rs`' column that ends before its row group's rows: each column chunk's data page
/// in turn declaring fewer values than it holds (one fewer, and none), read row by row, is an error of the guard
/// every time, never a panic (the row reader advancing a column past its end panics in `record/triplet.rs`).
#[test]
fn a_data_page_declaring_fewer_values_than_its_rows_is_an_error() {
    let original = checkpoint_bytes();
    let reader = parquet::file::reader::SerializedFileReader::new(bytes::Bytes::from(original.clone())).unwrap();
    let mut tried = 0;
    for column in parquet::file::reader::FileReader::metadata(&reader).row_group(0).columns() {
        // PageHeader: the type and both sizes (0x15 and a varint each), the data page header (0x2c), its count.
        let mut i = column.data_page_offset() as usize;
        for _ in 0..3 {
            assert_eq!(original[i], 0x15);
            i += original[i + 1..].iter().position(|b| b & 0x80 == 0).unwrap() + 2;
        }
        assert_eq!(original[i..i + 2], [0x2c, 0x15], "{}", column.column_path());
        let count = original[i + 2];
        if count & 0x80 != 0 || count < 4 {
            continue; // the zigzag varint of a count of 2 or more in one byte
        }
        for fewer in [count - 2, 0] {
            let mut b = original.clone();
            b[i + 2] = fewer;
            let e = for_each_row(b, |_| {}).expect_err("a page short of its rows");
            assert!(!e.reason.starts_with(PANIC_CAUGHT), "{}, {} values: {e:?}", column.column_path(), fewer / 2);
            tried += 1;
        }
    }
    assert!(tried > 40, "{tried}");
}

/// A v2 data page whose level lengths fit its declared uncompressed size but not its bytes (an uncompressed page,
/// which the crate does not size-check): the column reader slices the levels out of the page without a bound
/// (a panic in `Bytes::slice`); the guard refuses the page. The file is written here by the `parquet` crate (one
/// nullable `INT64` column, one v2 page of 6 values), then its header edited in place.
#[test]
fn a_v2_page_whose_levels_run_past_its_bytes_is_an_error() {
    use parquet::basic::{Compression, Encoding};
    use parquet::file::properties::{WriterProperties, WriterVersion};
    use std::sync::Arc;
    let schema = Arc::new(parquet::schema::parser::parse_message_type("message m { optional int64 a; }").unwrap());
    let props = WriterProperties::builder()
        .set_writer_version(WriterVersion::PARQUET_2_0)
        .set_dictionary_enabled(false)
        .set_encoding(Encoding::PLAIN)
        .set_compression(Compression::UNCOMPRESSED)
        .build();
    let mut file = Vec::new();
    let mut w = parquet::file::writer::SerializedFileWriter::new(&mut file, schema, Arc::new(props)).unwrap();
    let mut group = w.next_row_group().unwrap();
    let mut a = group.next_column().unwrap().unwrap();
    let def: Vec<i16> = (0..6).map(|i| i16::from(i % 3 != 0)).collect();
    a.typed::<parquet::data_type::Int64Type>().write_batch(&[0, 1, 2, 3], Some(&def), None).unwrap();
    a.close().unwrap();
    group.close().unwrap();
    w.close().unwrap();
    assert!(for_each_row(file.clone(), |_| {}).is_ok());
    // DATA_PAGE_V2, 34 bytes both sizes, its v2 header: 6 values, 2 nulls, 6 rows, PLAIN, 2 bytes of definition
    // levels, none of repetition levels, not compressed.
    let header = [0x15, 0x06, 0x15, 0x44, 0x15, 0x44, 0x5c, 0x15, 0x0c, 0x15, 0x04, 0x15, 0x0c, 0x15, 0x00, 0x15, 0x04];
    assert_eq!(file[4..21], header);
    (file[7], file[20]) = (0x78, 0x64); // 60 bytes uncompressed, 50 of definition levels
    let e = for_each_row(file, |_| {}).expect_err("levels past the page");
    assert!(!e.reason.starts_with(PANIC_CAUGHT), "refused by the guard, not caught: {e:?}");
    assert!(
        e.reason.contains("column a: row 0 of 6: Parquet error: a v2 data page's levels run past its 34 bytes"),
        "{e:?}"
    );
}

/// case 13's log zipped again with the checkpoint part's entry marked bzip2 (method 12, which the zip reader does
/// not unpack), central and local header both.
fn case13_log_with_a_bzip2_part() -> Vec<u8> {
    use std::io::Write;
    let mut w = zip::ZipWriter::new(std::io::Cursor::new(Vec::new()));
    for (name, data) in case13_log() {
        let o = zip::write::SimpleFileOptions::default().compression_method(zip::CompressionMethod::Deflated);
        w.start_file(name, o).unwrap();
        w.write_all(&data).unwrap();
    }
    let mut z = w.finish().unwrap().into_inner();
    let u16_at = |z: &[u8], o: usize| u16::from_le_bytes([z[o], z[o + 1]]) as usize;
    let mut o = (0..z.len() - 4).find(|&i| z[i..i + 4] == *b"PK\x01\x02").unwrap();
    while z[o..o + 4] == *b"PK\x01\x02" {
        let (n, x, c) = (u16_at(&z, o + 28), u16_at(&z, o + 30), u16_at(&z, o + 32));
        if &z[o + 46..o + 46 + n] == CHECKPOINT.as_bytes() {
            let local = u32::from_le_bytes([z[o + 42], z[o + 43], z[o + 44], z[o + 45]]) as usize;
            z[o + 10..o + 12].copy_from_slice(&12u16.to_le_bytes());
            z[local + 8..local + 10].copy_from_slice(&12u16.to_le_bytes());
        }
        o += 46 + n + x + c;
    }
    z
}

/// A checkpoint part the input cannot give (here its zip entry uses bzip2, which the zip reader does not unpack) or
/// over a limit of this inspector is not verified: the checkpoint stays complete (Delta reads it, so the snapshot is built from it)
/// and the log's `file-not-verified` names it. Before, it was damage: no complete checkpoint, and with the commits
/// before it cleaned up, "the table cannot be reconstructed" (`DELTA_MISSING_PART_FILES`), a failure.
#[test]
fn a_checkpoint_part_over_a_limit_is_not_verified_not_damage() {
    let z = case13_log_with_a_bzip2_part();
    let mut a = ZipInput::open(std::io::Cursor::new(z.clone()), z.len() as u64, "log.zip", Limits::default()).unwrap();
    let logs = read_delta_logs(&mut a);
    let log = &logs[0];
    assert!(log.problems.iter().all(|p| p.path != CHECKPOINT), "{:?}", log.problems);
    assert!(
        log.not_verified.iter().any(|p| p.path == CHECKPOINT && p.reason.contains("compression")),
        "{:?}",
        log.not_verified
    );
    let k = &log.checkpoints[&50];
    assert!(k.complete() && k.not_verified && !k.damaged, "{k:?}");
    assert_eq!(log.snapshot_base(55), Some(50));
    // The diagnosis of the case's checkpoint with that log: no table-unreconstructable failure, the part named.
    let case = PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/../../../shared/cases"))
        .join("case-13-delta-log-expired.zip");
    let f = std::fs::File::open(&case).unwrap();
    let len = f.metadata().unwrap().len();
    let mut input = ZipInput::open(f, len, "case-13.zip", Limits::default()).unwrap();
    let ctx = checkpoint_core::Context { delta_logs: logs, ..Default::default() };
    let r = checkpoint_core::diagnose(&mut input, &ctx);
    let findings = &r.checkpoints[0].findings;
    use checkpoint_core::report::Code;
    assert!(findings.iter().all(|f| f.code != Code::DeltaTableUnreconstructable), "{findings:#?}");
    let nv = findings.iter().find(|f| f.code == Code::FileNotVerified).expect("file-not-verified");
    assert!(nv.evidence.iter().any(|e| e.path.ends_with("00000000000000000050.checkpoint.parquet")), "{nv:?}");
}
