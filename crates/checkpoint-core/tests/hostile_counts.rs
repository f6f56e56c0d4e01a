//! Hostile numbers and counts a newcomer's attack found (2026-12-08): a Delta checkpoint part count read from a
//! file name, an offsets file recording 100,000 confs, a pasted error of 300,000 `[`, and sidecars the archive
//! cannot unpack. Each must be answered in bounded time and memory, with what Spark would do, never as damage.

mod common;
use common::*;

use checkpoint_core::archive::{Limits, MemArchive};
use checkpoint_core::delta::reader::{read_delta_logs, MAX_MISSING_NAMED};
use checkpoint_core::report::Code;
use checkpoint_core::{diagnose, Context, SparkVersion};
use std::time::{Duration, Instant};

fn ctx() -> Context {
    Context { spark_version: Some("4.1.4".parse::<SparkVersion>().unwrap()), now_ms: Some(0), ..Default::default() }
}

/// Runs `f` and fails when it takes longer than `limit` (generous: a debug build on a loaded 2-core machine; the
/// defects took seconds to minutes and gigabytes).
fn within<T>(what: &str, limit: Duration, f: impl FnOnce() -> T) -> T {
    let t = Instant::now();
    let v = f();
    assert!(t.elapsed() < limit, "{what}: took {:?}", t.elapsed());
    v
}

/// `00000000000000000010.checkpoint.0000000001.4000000000.parquet`: a multi-part checkpoint declaring four billion
/// parts. The missing parts are named up to a bound and counted (before: one name per part, 3.9 GB at 10^7).
#[test]
fn a_delta_checkpoint_declaring_billions_of_parts_is_counted_not_listed() {
    let files = vec![
        ("_delta_log/00000000000000000000.json".to_string(), b"{\"commitInfo\":{}}\n".to_vec()),
        ("_delta_log/00000000000000000010.checkpoint.0000000001.4000000000.parquet".to_string(), b"PAR1".to_vec()),
    ];
    let mut a = MemArchive::new("t.zip", files, Limits::default()).unwrap();
    let logs = within("read_delta_logs", Duration::from_secs(10), || read_delta_logs(&mut a));
    let k = logs.iter().flat_map(|l| l.checkpoints.values()).next().expect("the checkpoint");
    assert_eq!(k.missing.len(), MAX_MISSING_NAMED + 1, "{:?}", &k.missing[..3]);
    assert_eq!(k.missing.last().map(String::as_str), Some("and 3999999979 more parts of 4000000000"));
    assert!(!k.complete());
}

/// An offsets file whose conf records 100,000 keys: the first 256 are kept (Spark records about twenty and
/// ignores the others), the count is a warning, the report stays small.
#[test]
fn an_offsets_file_with_a_hundred_thousand_confs_keeps_a_bounded_few() {
    let mut files = load("ss-4.1.4-agg-hdfs");
    let conf = offsets_with_confs(100_000, "spark.k", 11);
    let latest = files
        .iter()
        .filter_map(|(p, _)| p.strip_prefix("offsets/").and_then(|n| n.parse::<i64>().ok()))
        .max()
        .expect("an offsets file");
    for (p, b) in files.iter_mut() {
        if *p == format!("offsets/{latest}") {
            *b = conf.clone().into_bytes();
        }
    }
    let mut a = MemArchive::new("t.zip", files, Limits::default()).unwrap();
    let r = within("diagnose", Duration::from_secs(30), || diagnose(&mut a, &ctx()));
    let c = &r.checkpoints[0];
    assert!(c.forced_conf.len() <= checkpoint_core::log::offsets::MAX_KEPT_CONF, "{}", c.forced_conf.len());
    let f = c.findings.iter().find(|f| f.code == Code::OffsetsUnknownKeys).expect("the count is reported");
    assert!(f.title.contains("records 100000 confs"), "{}", f.title);
    assert!(serde_json::to_string(&r).unwrap().len() < 2_000_000);
}

/// A pasted error of 300,000 `[` (and of many matches of the Kafka forms) is read in linear time (before: 14 s;
/// a mebibyte, over two minutes).
#[test]
fn a_pasted_error_of_brackets_and_repeats_is_read_in_linear_time() {
    let mut text = "[".repeat(300_000);
    text.push_str(&"offset was changed from ".repeat(20_000));
    text.push_str(&"Cannot fetch offset 5. (GroupId: g, TopicPartition: t-0). ".repeat(5_000));
    text.push_str(&"[A_B_".repeat(50_000));
    let p = within("parse_error_text", Duration::from_secs(5), || {
        checkpoint_core::checks::error_text::parse_error_text(&text)
    });
    assert!(p.error_classes.is_empty(), "{:?}", p.error_classes);
    let gone = within("aged_out_in_error", Duration::from_secs(5), || {
        checkpoint_core::checks::kafka::aged_out_in_error(&text)
    });
    assert_eq!(gone.get("t", 0), Some(5));
    let changed = within("offsets_changed_in_error", Duration::from_secs(5), || {
        checkpoint_core::checks::kafka::offsets_changed_in_error(&text)
    });
    assert!(changed.topics.is_empty());
}

/// A healthy `.crc` stored with a method the inspector does not unpack (bzip2) is not checked: no
/// `stale-checksum-sidecar` and no step deleting it (before: "the sidecar is stale", and the plan deleted it);
/// the archive's own finding names the file.
#[test]
fn a_sidecar_the_archive_cannot_unpack_is_not_judged() {
    use std::io::Write;
    let files = load("ss-4.1.4-agg-hdfs");
    let crc = files.iter().map(|(p, _)| p.clone()).find(|p| p.starts_with("offsets/.") && p.ends_with(".crc"));
    let crc = crc.expect("a Hadoop sidecar of an offsets file");
    let mut w = zip::ZipWriter::new(std::io::Cursor::new(Vec::new()));
    for (p, b) in &files {
        let method = if *p == crc { zip::CompressionMethod::Stored } else { zip::CompressionMethod::Deflated };
        w.start_file(p.as_str(), zip::write::SimpleFileOptions::default().compression_method(method)).unwrap();
        w.write_all(b).unwrap();
    }
    let mut bytes = w.finish().unwrap().into_inner();
    // The sidecar's method set to 12 (bzip2) in its local and central headers (the zip crate here writes none).
    let name = crc.as_bytes();
    for (sig, name_at, method_at) in [(b"PK\x03\x04", 30, 8), (b"PK\x01\x02", 46, 10)] {
        let at = (0..bytes.len() - name_at - name.len())
            .find(|&i| &bytes[i..i + 4] == sig && &bytes[i + name_at..i + name_at + name.len()] == name)
            .expect("the sidecar's header");
        bytes[at + method_at..at + method_at + 2].copy_from_slice(&12u16.to_le_bytes());
    }
    let n = bytes.len() as u64;
    let mut a = checkpoint_core::ZipInput::open(std::io::Cursor::new(bytes), n, "t.zip", Limits::default()).unwrap();
    let r = diagnose(&mut a, &ctx());
    let c = &r.checkpoints[0];
    assert!(!c.findings.iter().any(|f| f.code == Code::StaleChecksumSidecar), "{:?}", c.findings);
    assert!(c
        .findings
        .iter()
        .any(|f| f.code == Code::ArchiveCompressionUnsupported && f.evidence.iter().any(|e| e.path == crc)));
}
