//! File source and sink logs read in pieces (issue 12: "compact logs streamed"): the streaming parser equals the
//! whole-file parser on every real log and on the edge cases of line ends, the sidecar sums equal the whole-file
//! sums, zip entries read in pieces equal whole reads, and a `.compact` over the old 16 MiB cap is read and
//! verified, its entries kept within the archive's entry budget and only counted past it.

mod common;

use checkpoint_core::archive::{read_capped, read_capped_each, Archive, ArchiveError, Limits, MemArchive, ZipInput};
use checkpoint_core::log::file_log::{parse, Parser};
use checkpoint_core::log::LogError;
use checkpoint_core::read::{read_checkpoint_with, ReadOptions};
use checkpoint_core::{diagnose, Context};
use std::io::{Cursor, Read};
use std::path::PathBuf;

/// Every zip of the repo's Spark-written test data and of the shared fixtures and cases.
fn real_zips() -> Vec<PathBuf> {
    let here = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let mut out = Vec::new();
    for dir in [here.join("tests/data/spark"), common::fixtures_dir(), here.join("../../../shared/cases")] {
        let Ok(rd) = std::fs::read_dir(&dir) else { continue };
        let mut zips: Vec<PathBuf> =
            rd.filter_map(|e| e.ok().map(|e| e.path())).filter(|p| p.extension().is_some_and(|x| x == "zip")).collect();
        zips.sort();
        out.extend(zips);
    }
    out
}

/// Every entry of a zip, `(path, bytes)`, folders left out.
fn entries(zip: &PathBuf) -> Vec<(String, Vec<u8>)> {
    let mut z = zip::ZipArchive::new(Cursor::new(std::fs::read(zip).unwrap())).unwrap();
    let mut out = Vec::new();
    for i in 0..z.len() {
        let mut f = z.by_index(i).unwrap();
        if f.is_dir() {
            continue;
        }
        let mut b = Vec::new();
        if f.read_to_end(&mut b).is_ok() {
            out.push((f.name().unwrap_or_default().to_string(), b));
        }
    }
    out
}

/// `bytes` through the streaming parser in pieces of `size` bytes.
fn streamed(bytes: &[u8], size: usize) -> Result<checkpoint_core::log::file_log::FileLogBatch, LogError> {
    let mut p = Parser::new(u64::MAX, usize::MAX);
    for piece in bytes.chunks(size.max(1)) {
        p.push(piece);
    }
    p.finish()
}

/// A file log batch file's name: `<id>` or `<id>.compact` in `sources/<n>/` or `_spark_metadata/`.
fn is_file_log(path: &str) -> bool {
    let (dir, name) = path.rsplit_once('/').unwrap_or(("", path));
    let in_log = dir.ends_with("_spark_metadata") || dir.rsplit('/').nth(1) == Some("sources");
    in_log && name.trim_end_matches(".compact").parse::<u64>().is_ok()
}

#[test]
fn the_streaming_parser_equals_the_whole_file_parser_on_every_real_file_log() {
    let mut files = 0;
    for zip in real_zips() {
        for (path, bytes) in entries(&zip).into_iter().filter(|(p, _)| is_file_log(p)) {
            let whole = parse(&bytes);
            for size in [1, 2, 3, 7, 64, 16 * 1024] {
                assert_eq!(streamed(&bytes, size), whole, "{} {path}, pieces of {size}", zip.display());
            }
            // Two pieces, split at every byte.
            for at in 0..=bytes.len() {
                let mut p = Parser::new(u64::MAX, usize::MAX);
                p.push(&bytes[..at]);
                p.push(&bytes[at..]);
                assert_eq!(p.finish(), whole, "{} {path}, split at {at}", zip.display());
            }
            files += 1;
        }
    }
    // The real file source and sink logs of the test data (sources/<n>/, _spark_metadata/, with .compact files).
    assert!(files >= 50, "only {files} file log files found");
}

#[test]
fn the_streaming_parser_equals_the_whole_file_parser_on_line_end_and_error_cases() {
    let e = |p: &str| format!("{{\"path\":\"{p}\",\"timestamp\":1,\"batchId\":0}}");
    let cases: Vec<Vec<u8>> = vec![
        b"".to_vec(),
        b"\n".to_vec(),
        b"v1".to_vec(),
        b"v1\n".to_vec(),
        b"v1\r\n".to_vec(),
        b"v1\r".to_vec(),
        format!("v1\r\n{}\r\n{}", e("a"), e("b")).into_bytes(),
        format!("v1\r{}\r{}\r", e("a"), e("b")).into_bytes(),
        format!("v1\n\r{}", e("a")).into_bytes(),
        format!("v1\n{}\n\n{}", e("a"), e("b")).into_bytes(),
        format!("v1\n{}\n{{\"pa", e("a")).into_bytes(),
        format!("v1\n{}\n{{\"size\":1}}\n", e("a")).into_bytes(),
        format!("v1\n{}\n[1,2]\n", e("a")).into_bytes(),
        b"v0\n{\"path\":\"a\"}".to_vec(),
        b"x1\n".to_vec(),
        // Invalid UTF-8 after a bad line: the whole file is decoded first, so UTF-8 wins.
        [b"v1\n{bad\n{\"path\":\"".as_slice(), &[0xE2, 0x82], b"\"}\n"].concat(),
        // A multi-byte sequence cut by a line end.
        [b"v1\n{\"path\":\"".as_slice(), &[0xE2], b"\n\"}"].concat(),
        [b"v1\n{\"path\":\"\xE2\x82\xAC\"}\n".as_slice()].concat(),
        format!("v1\n{}\n{{\"path\":1}}", e("a")).into_bytes(),
        format!("v1\n{}", e("a")).into_bytes(),
    ];
    for bytes in &cases {
        let whole = parse(bytes);
        for at in 0..=bytes.len() {
            for size in 1..=3 {
                let mut p = Parser::new(u64::MAX, usize::MAX);
                p.push(&bytes[..at]);
                for piece in bytes[at..].chunks(size) {
                    p.push(piece);
                }
                assert_eq!(
                    p.finish(),
                    whole,
                    "{:?} split at {at}, then pieces of {size}",
                    String::from_utf8_lossy(bytes)
                );
            }
        }
    }
    // What the whole-file parser answers for some of them, so that the equality is not of two wrong answers.
    assert_eq!(parse(b""), Err(LogError::Empty));
    assert!(matches!(parse(&cases[15]), Err(LogError::NotUtf8 { offset: 17 })), "{:?}", parse(&cases[15]));
    let crlf = parse(&cases[6]).unwrap();
    assert_eq!(crlf.entries.iter().map(|x| x.path.as_str()).collect::<Vec<_>>(), ["a", "b"]);
    assert!(matches!(parse(&cases[9]), Err(LogError::BadJson { line: 3, eof: true, .. })), "{:?}", parse(&cases[9]));
}

#[test]
fn entries_past_the_budget_are_checked_and_counted_not_kept() {
    let line = |i: usize| format!("{{\"path\":\"file:///in/f-{i:06}.json\",\"timestamp\":1,\"batchId\":0}}\n");
    let body: String = std::iter::once("v1\n".to_string()).chain((0..1000).map(line)).collect();
    let whole = parse(body.as_bytes()).unwrap();
    let one = checkpoint_core::log::file_log::entry_cost(&whole.entries[0]);
    let mut p = Parser::new(one * 10 + one / 2, usize::MAX);
    p.push(body.as_bytes());
    let b = p.finish().unwrap();
    assert_eq!((b.entries.len(), b.not_kept, b.complete()), (10, 990, false));
    assert_eq!(b.entries[..], whole.entries[..10]);
    // A bad line past the budget is still found.
    let bad = format!("{body}{{\"path\":\"x\"\n");
    let mut p = Parser::new(one, usize::MAX);
    p.push(bad.as_bytes());
    assert!(matches!(p.finish(), Err(LogError::BadJson { line: 1002, eof: true, .. })));
    // A line over the line limit is a limit of the inspector, not damage.
    let mut p = Parser::new(u64::MAX, 100);
    p.push(format!("v1\n{{\"path\":\"{}\"}}\n", "a".repeat(200)).as_bytes());
    assert!(matches!(p.finish(), Err(LogError::NotVerified { .. })));
}

#[test]
fn sidecar_sums_in_pieces_equal_the_whole_file_sums() {
    let data: Vec<u8> = (0..5000u32).map(|i| (i.wrapping_mul(2654435761) >> 24) as u8).collect();
    for len in [0, 1, 511, 512, 513, 1024, 5000] {
        let main = &data[..len];
        let sums: Vec<u32> = main.chunks(512).map(crc32fast::hash).collect();
        let good = checkpoint_core::hadoop::HadoopCrc { bytes_per_checksum: 512, sums: sums.clone() };
        let mut flipped = good.clone();
        if let Some(s) = flipped.sums.last_mut() {
            *s ^= 1;
        }
        let short = checkpoint_core::hadoop::HadoopCrc {
            bytes_per_checksum: 512,
            sums: sums[..sums.len().saturating_sub(1)].to_vec(),
        };
        let long =
            checkpoint_core::hadoop::HadoopCrc { bytes_per_checksum: 512, sums: [sums.clone(), vec![7]].concat() };
        for crc in [&good, &flipped, &short, &long] {
            let whole = checkpoint_core::hadoop::verify(crc, main);
            for size in [1, 100, 512, 700] {
                let mut v = checkpoint_core::hadoop::Verifier::new(crc);
                main.chunks(size).for_each(|p| v.update(p));
                assert_eq!(v.finish(), whole, "len {len}, pieces of {size}");
            }
        }
        assert_eq!(checkpoint_core::hadoop::verify(&good, main), Ok(()));
        let sum = checkpoint_core::checksum::SparkChecksum {
            algorithm: "CRC32C".into(),
            value: checkpoint_core::checksum::crc32c(main),
            main_file_size: len as u64,
            timestamp_ms: None,
            creator: None,
        };
        for s in [sum.clone(), checkpoint_core::checksum::SparkChecksum { value: sum.value ^ 1, ..sum.clone() }] {
            let whole = checkpoint_core::checksum::verify(&s, main);
            let mut v = checkpoint_core::checksum::Verifier::new(&s);
            main.chunks(333).for_each(|p| v.update(p));
            assert_eq!(v.finish(), whole);
        }
    }
}

#[test]
fn zip_entries_read_in_pieces_equal_whole_reads() {
    let mut big = 0;
    for zip in real_zips().into_iter().take(40) {
        let bytes = std::fs::read(&zip).unwrap();
        let open = || ZipInput::open(Cursor::new(bytes.clone()), bytes.len() as u64, "z", Limits::default()).unwrap();
        let (mut a, mut b) = (open(), open());
        let paths: Vec<String> = a.entries().iter().filter(|e| !e.is_dir).map(|e| e.path.clone()).collect();
        for p in paths {
            let whole = a.read(&p, 1 << 30);
            let mut pieces = Vec::new();
            let n = b.read_each(&p, 1 << 30, &mut |piece| pieces.extend_from_slice(piece));
            match whole {
                Ok(w) => {
                    assert_eq!(n, Ok(w.len() as u64), "{} {p}", zip.display());
                    big += usize::from(w.len() > 16 * 1024);
                    assert_eq!(pieces, w, "{} {p}", zip.display());
                }
                Err(e) => assert_eq!(n, Err(e), "{} {p}", zip.display()),
            }
        }
        assert_eq!(a.bytes_left(), b.bytes_left());
    }
    // And a deflated entry of many pieces.
    let data: Vec<u8> = (0..200_000u32).flat_map(|i| i.to_string().into_bytes()).collect();
    let z = common::zipcraft::deflated_zip(&[("chk/sources/0/0".to_string(), data.clone())]);
    let mut a = ZipInput::open(Cursor::new(z.clone()), z.len() as u64, "z", Limits::default()).unwrap();
    let (mut pieces, mut count) = (Vec::new(), 0);
    assert_eq!(
        a.read_each("chk/sources/0/0", 1 << 30, &mut |p| {
            count += 1;
            pieces.extend_from_slice(p)
        }),
        Ok(data.len() as u64)
    );
    assert!(count > 10 && pieces == data, "{count} pieces");
    assert!(big > 0 || count > 10);
    // Over the cap: the pieces stop at the cap, the error names it.
    let data = vec![7u8; 40_000];
    let mut handed = 0;
    let e = read_capped_each(&data[..], "f", 30_000, &mut |p| handed += p.len()).unwrap_err();
    assert!(matches!(e, ArchiveError::OverLimit { value: 30_001, limit: 30_000, .. }), "{e:?}");
    assert!(handed <= 30_000);
    assert_eq!(read_capped(&data[..], "f", 40_000).unwrap(), data);
}

/// A file source log line as Spark's `FileStreamSourceLog` writes it.
fn source_line(i: usize) -> String {
    format!(
        "{{\"path\":\"file:///data/landing/year=2026/month=12/day=04/part-{i:07}-3b0c2a8e-5d8e-4b53-9d7e-1f2a3b4c5d6e.json\",\"timestamp\":{},\"batchId\":0}}\n",
        1_764_800_000_000u64 + i as u64
    )
}

/// The Hadoop `.crc` sidecar of `data` (512-byte chunks), as `ChecksumFileSystem` writes it.
fn hadoop_crc(data: &[u8]) -> Vec<u8> {
    let mut out = b"crc\0".to_vec();
    out.extend_from_slice(&512u32.to_be_bytes());
    for c in data.chunks(512) {
        out.extend_from_slice(&crc32fast::hash(c).to_be_bytes());
    }
    out
}

/// A real Spark 4.1.4 file source checkpoint (`source-path-changed-4.1.4`) whose batch 0 source log entry file
/// is replaced by one of `n` entries (its Hadoop sidecar written to match).
fn with_big_source_log(n: usize) -> Vec<(String, Vec<u8>)> {
    let zip = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/data/spark/source-path-changed-4.1.4.zip");
    let mut files = entries(&zip);
    let mut log = b"v1\n".to_vec();
    (0..n).for_each(|i| log.extend_from_slice(source_line(i).as_bytes()));
    let crc = hadoop_crc(&log);
    for (p, b) in &mut files {
        if p == "chk/sources/0/0" {
            *b = log.clone();
        } else if p == "chk/sources/0/.0.crc" {
            *b = crc.clone();
        }
    }
    files
}

#[test]
fn a_source_log_file_over_16_mib_is_read_and_verified() {
    let files = with_big_source_log(150_000);
    let size = files.iter().find(|(p, _)| p == "chk/sources/0/0").unwrap().1.len();
    assert!(size > 16 * 1024 * 1024, "{size}");
    let mut a = MemArchive::new("big", files.clone(), Limits::default()).unwrap();
    let roots = checkpoint_core::layout::find_roots(a.entries());
    let cp = read_checkpoint_with(&mut a, &roots[0], &ReadOptions::default());
    let log = &cp.source_logs[&0].read[&0];
    let batch = log.file.content.as_ref().expect("read and parsed");
    assert_eq!((batch.entries.len(), batch.not_kept), (150_000, 0));
    assert_eq!(batch.entries[149_999].timestamp_ms, Some(1_764_800_149_999));
    assert_eq!(cp.hadoop_crcs.get("sources/0/0").unwrap().verified, Some(Ok(())), "the sidecar is verified in pieces");
    // The report says nothing of a limit; the source's log is compared (the checkpoint's own expectations).
    let mut a = MemArchive::new("big", files, Limits::default()).unwrap();
    let r = diagnose(&mut a, &Context::default());
    let text = serde_json::to_string_pretty(&r).unwrap();
    std::fs::write(std::env::temp_dir().join("big-source-log-report.json"), &text).unwrap();
    assert!(!text.contains("not verified"), "see big-source-log-report.json in the temp folder");
    use checkpoint_core::report::Severity;
    let c = &r.checkpoints[0];
    assert!(c.findings.iter().all(|f| f.severity == Severity::Info), "see big-source-log-report.json");
    assert!(c.findings.iter().any(|f| f.title.contains("150000 file(s) recorded")), "see big-source-log-report.json");
    assert_eq!(c.restart.outcome, checkpoint_core::report::RestartOutcome::Resumes);
}

#[test]
fn a_sidecar_that_does_not_match_a_streamed_log_file_is_found() {
    let mut files = with_big_source_log(1000);
    for (p, b) in &mut files {
        if p == "chk/sources/0/0" {
            b[600] ^= 0x20; // a letter's case in one path: still valid JSON
        }
    }
    let mut a = MemArchive::new("flip", files, Limits::default()).unwrap();
    let roots = checkpoint_core::layout::find_roots(a.entries());
    let cp = read_checkpoint_with(&mut a, &roots[0], &ReadOptions::default());
    assert!(cp.source_logs[&0].read[&0].file.content.is_ok());
    assert!(
        matches!(
            cp.hadoop_crcs.get("sources/0/0").unwrap().verified,
            Some(Err(checkpoint_core::hadoop::CrcError::Mismatch { offset: 512, .. }))
        ),
        "{:?}",
        cp.hadoop_crcs.get("sources/0/0").unwrap().verified
    );
}

#[test]
fn past_the_archive_entry_budget_a_source_log_is_verified_and_its_entries_counted() {
    let files = with_big_source_log(20_000);
    let mut a = MemArchive::new("budget", files, Limits::default()).unwrap();
    let roots = checkpoint_core::layout::find_roots(a.entries());
    let opts = ReadOptions { file_log_entry_bytes: 100_000, ..ReadOptions::default() };
    let cp = read_checkpoint_with(&mut a, &roots[0], &opts);
    let batch = cp.source_logs[&0].read[&0].file.content.as_ref().expect("verified");
    assert!(batch.entries.len() < 1000 && batch.not_kept > 19_000, "{} {}", batch.entries.len(), batch.not_kept);
    assert_eq!(batch.entries.len() as u64 + batch.not_kept, 20_000);
}

#[test]
fn a_sink_log_of_many_deletes_is_compared_in_linear_time() {
    // 40,000 adds, each deleted again: before, each delete scanned every add (1.6 billion comparisons).
    let zip = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/data/spark/source-path-changed-4.1.4.zip");
    let mut files = entries(&zip);
    let add = |i: usize| {
        format!("{{\"path\":\"file:///out/gone-{i}.parquet\",\"size\":1,\"isDir\":false,\"modificationTime\":1,\"blockReplication\":1,\"blockSize\":1,\"action\":\"add\"}}\n")
    };
    let del = |i: usize| add(i).replace("\"add\"", "\"delete\"");
    let mut log = String::from("v1\n");
    (0..40_000).for_each(|i| log.push_str(&add(i)));
    (0..40_000).for_each(|i| log.push_str(&del(i)));
    // Plus the real entries of batch 0, kept.
    let real = files.iter().find(|(p, _)| p == "out/_spark_metadata/0").unwrap().1.clone();
    log.push_str(std::str::from_utf8(&real).unwrap().split_once('\n').unwrap().1);
    files.retain(|(p, _)| p != "out/_spark_metadata/.0.crc");
    for (p, b) in &mut files {
        if p == "out/_spark_metadata/0" {
            *b = log.clone().into_bytes();
        }
    }
    let mut a = MemArchive::new("deletes", files, Limits::default()).unwrap();
    let r = diagnose(&mut a, &Context::default());
    let missing = r
        .checkpoints
        .iter()
        .flat_map(|c| &c.findings)
        .filter(|f| f.code == checkpoint_core::checks::catalogue::Code::SinkLogFileMissing)
        .count();
    assert_eq!(missing, 0, "every deleted file is taken back; the real ones are in the output folder");
}

/// The file log budgets are the caller's ([`Context::file_log_entry_bytes`], the CLI's `--file-log-mib`): with
/// room for fewer entries than the source log holds, an answer that needs them is "not verified"; with the
/// default room the same checkpoint is compared and answered.
#[test]
fn the_file_log_entry_budget_is_the_callers() {
    use checkpoint_core::present::Frontend;
    use checkpoint_core::report::{Code, RestartOutcome};
    let run = |entry_bytes: Option<u64>| {
        let mut a = MemArchive::new("budget", with_big_source_log(20_000), Limits::default()).unwrap();
        let mut ctx = Context { file_log_entry_bytes: entry_bytes, ..Context::default() };
        ctx.source_paths.insert(0, "/data/landing".to_string());
        let r = diagnose(&mut a, &ctx);
        let c = &r.checkpoints[0];
        let codes: Vec<Code> = c.findings.iter().map(|f| f.code).collect();
        let hints: Vec<String> = c.hints.iter().map(|h| h.text(Frontend::Cli)).collect();
        (c.restart.outcome, codes, format!("{} {hints:?}", serde_json::to_string(&c.findings).unwrap()))
    };
    let (small, small_codes, small_text) = run(Some(100_000));
    assert_eq!(small, RestartOutcome::Unknown, "{small_text}");
    assert!(small_codes.contains(&Code::FileNotVerified), "{small_codes:?}");
    assert!(small_text.contains("--file-log-mib"), "the CLI's note names the option: {small_text}");
    let (default, default_codes, default_text) = run(None);
    assert_eq!(default, RestartOutcome::Resumes, "{default_text}");
    assert!(!default_codes.contains(&Code::FileNotVerified), "{default_codes:?}");
    assert!(!default_text.contains("not kept"), "{default_text}");
    assert!(!default_text.contains("--file-log-mib"), "{default_text}");
}
