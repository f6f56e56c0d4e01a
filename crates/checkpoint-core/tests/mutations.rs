//! Damage applied to real fixtures in memory (the kinds of FORMATS.md §16.1/§16.2 that have no fixture of
//! their own), checking the findings and the restart prediction Spark's observed behaviour implies.

mod common;
use common::*;

use checkpoint_core::report::{CheckpointReport, RestartOutcome, Severity};
use checkpoint_core::{diagnose, Context, Limits, MemArchive, SparkVersion};

fn run(files: Vec<(String, Vec<u8>)>, v: &str) -> Vec<CheckpointReport> {
    let mut a = MemArchive::new("t.zip", files, Limits::default()).unwrap();
    let ctx = Context { spark_version: Some(v.parse::<SparkVersion>().unwrap()), ..Default::default() };
    diagnose(&mut a, &ctx).checkpoints
}

fn set(files: &mut [(String, Vec<u8>)], path: &str, bytes: &[u8]) {
    let f = files.iter_mut().find(|(p, _)| p == path).unwrap();
    f.1 = bytes.to_vec();
}

fn has(cp: &CheckpointReport, code: &str, path: &str) -> bool {
    cp.findings.iter().any(|f| f.code == code && f.evidence.iter().any(|e| e.path == path))
}

#[test]
fn several_roots_in_sub_folders() {
    let mut files: Vec<(String, Vec<u8>)> =
        load("ss-4.3.0-agg-hdfs").into_iter().map(|(p, b)| (format!("a/chk/{p}"), b)).collect();
    files.extend(load("ss-3.5.9-stateless").into_iter().map(|(p, b)| (format!("b/{p}"), b)));
    let cps = run(files, "4.3.0");
    assert_eq!(cps.iter().map(|c| c.root.as_str()).collect::<Vec<_>>(), vec!["a/chk", "b"]);
    assert_eq!(cps[0].operators.len(), 1);
    assert_eq!(cps[1].sources[0].kind, "file");
    assert!(cps.iter().all(|c| c.restart.outcome == RestartOutcome::Resumes));
}

/// The latest batch's source log file deleted, its `.crc` kept: the restart asks the source for that batch's
/// files first (`getBatch` with logOffsets 2 → 3) and fails there, before the orphan `.crc` could stop a write
/// (real Spark 3.5.9–4.3.0 on the same accident with the `.crc` gone too: tests/spark_log_accidents.rs).
#[test]
fn the_latest_file_source_entry_deleted_fails_reading_it_before_its_orphan_crc() {
    let mut files = load("ss-3.5.9-stateless");
    files.retain(|(p, _)| p != "sources/0/3");
    let cps = run(files, "3.5.9");
    let cp = &cps[0];
    assert!(has(cp, "orphan-hadoop-crc", "sources/0/.3.crc"), "{:?}", cp.findings);
    assert!(has(cp, "source-log-batch-missing", "sources/0"), "{:?}", cp.findings);
    assert_eq!(cp.restart.outcome, RestartOutcome::Fails);
    assert_eq!(cp.restart.exception.as_deref(), Some("java.lang.IllegalStateException"));
}

#[test]
fn missing_offsets_before_the_latest_fails() {
    let mut files = load("ss-4.3.0-agg-hdfs");
    files.retain(|(p, _)| p != "offsets/10" && p != "offsets/.10.crc");
    let cp = &run(files, "4.3.0")[0];
    assert!(has(cp, "offsets-gap", "offsets/11"));
    assert_eq!(cp.restart.outcome, RestartOutcome::Fails);
    assert_eq!(cp.restart.exception.as_deref(), Some("java.lang.IllegalStateException"));
}

#[test]
fn version_lines_per_spark_version() {
    let base = load("ss-4.3.0-agg-hdfs");
    let last = 11;
    // offsets v99: 3.5 untyped, 4.x INVALID_LOG_VERSION.MAX_SUPPORTED_VERSION
    let mut f = base.clone();
    let path = format!("offsets/{last}");
    let orig = f.iter().find(|(p, _)| *p == path).unwrap().1.clone();
    let text = String::from_utf8(orig).unwrap().replacen("v1", "v99", 1);
    set(&mut f, &path, text.as_bytes());
    let cp = &run(f.clone(), "3.5.9")[0];
    assert_eq!((cp.restart.outcome, cp.restart.error_class.as_deref()), (RestartOutcome::Fails, None));
    assert_eq!(cp.restart.exception.as_deref(), Some("java.lang.IllegalStateException"));
    let cp = &run(f, "4.0.5")[0];
    assert_eq!(cp.restart.error_class.as_deref(), Some("INVALID_LOG_VERSION.MAX_SUPPORTED_VERSION"));
    // commits v99: 4.x EXACT_MATCH_VERSION
    let mut f = base.clone();
    set(&mut f, &format!("commits/{last}"), b"v99\n{\"nextBatchWatermarkMs\":0}");
    let cp = &run(f, "4.1.4")[0];
    assert_eq!(cp.restart.error_class.as_deref(), Some("INVALID_LOG_VERSION.EXACT_MATCH_VERSION"));
    // malformed version line
    let mut f = base.clone();
    set(&mut f, &path, b"xx\n{}");
    let cp = &run(f, "4.3.0")[0];
    assert_eq!(cp.restart.error_class.as_deref(), Some("MALFORMED_LOG_FILE"));
    assert!(has(cp, "log-version-malformed", &path));
}

#[test]
fn edited_log_with_stale_crc_is_a_warning_only() {
    let mut f = load("ss-4.3.0-agg-hdfs");
    let orig = f.iter().find(|(p, _)| p == "commits/11").unwrap().1.clone();
    let text = String::from_utf8(orig).unwrap().replace("nextBatchWatermarkMs\":1", "nextBatchWatermarkMs\":2");
    set(&mut f, "commits/11", text.as_bytes());
    let cp = &run(f, "4.3.0")[0];
    let crc = cp.findings.iter().find(|x| x.code == "hadoop-crc-mismatch").expect("crc finding");
    assert_eq!(crc.severity, Severity::Warning);
    assert_eq!(cp.restart.outcome, RestartOutcome::Resumes);
}

#[test]
fn missing_rocksdb_zip_without_changelog_names_the_changelog() {
    // Spark falls back to the previous zip + changelogs even with changelog checkpointing off (§16.1).
    let mut f = load("ss-4.3.0-agg-rocksdb");
    f.retain(|(p, _)| p != "state/0/0/12.zip" && p != "state/0/0/.12.zip.crc");
    let cp = &run(f, "4.3.0")[0];
    assert_eq!(cp.restart.outcome, RestartOutcome::Fails);
    assert_eq!(cp.restart.error_class.as_deref(), Some("CANNOT_LOAD_STATE_STORE.CANNOT_READ_STREAMING_STATE_FILE"));
    assert!(
        has(cp, "state-changelog-missing", "state/0/0/12.changelog"),
        "{:?}",
        cp.findings.iter().map(|f| (&f.code, &f.evidence)).collect::<Vec<_>>()
    );
}

#[test]
fn kafka_initial_offsets_are_not_a_file_source_log() {
    // A Kafka source keeps its initial offsets in sources/<n>/0 (version line + topic map), not file entries.
    let mut f: Vec<(String, Vec<u8>)> =
        load("ss-4.3.0-agg-hdfs").into_iter().filter(|(p, _)| !p.starts_with("sources/")).collect();
    for (p, b) in f.iter_mut() {
        if p.starts_with("offsets/") && !p.contains("/.") {
            let text = String::from_utf8(b.clone()).unwrap();
            let mut lines: Vec<&str> = text.split('\n').collect();
            let n = lines.len();
            lines[n - 1] = "{\"clicks\":{\"0\":10,\"1\":7}}";
            *b = lines.join("\n").into_bytes();
        }
    }
    f.push(("sources/0/0".into(), b"v1\n{\"clicks\":{\"0\":0,\"1\":0}}".to_vec()));
    let cp = &run(f, "4.3.0")[0];
    assert_eq!(cp.sources[0].kind, "kafka");
    // Only the stale Hadoop sidecars of the edited offsets files are reported, and the Kafka offsets (an
    // info finding that reads the first batch's starting offsets from sources/0/0).
    assert!(
        cp.findings.iter().all(|x| x.code == "hadoop-crc-mismatch" || x.code == "kafka-source-offsets"),
        "{:?}",
        cp.findings.iter().map(|f| &f.code).collect::<Vec<_>>()
    );
    let k = cp.findings.iter().find(|x| x.code == "kafka-source-offsets").expect("kafka offsets finding");
    assert!(
        k.evidence
            .iter()
            .any(|e| e.path == "sources/0/0" && e.detail.contains("0=0, 1=0") && e.detail.contains("17 records")),
        "{:?}",
        k.evidence
    );
}

#[test]
fn hostile_names_and_values_do_not_panic_or_hang() {
    let t = std::time::Instant::now();
    let offsets = |n: &str| {
        format!("v1\n{{\"batchWatermarkMs\":0,\"batchTimestampMs\":1,\"conf\":{{\"spark.sql.shuffle.partitions\":\"{n}\"}}}}\n{{\"logOffset\":0}}").into_bytes()
    };
    let files: Vec<(String, Vec<u8>)> = vec![
        ("metadata".into(), vec![0xff, 0xfe, 0x00]),
        ("offsets/0".into(), offsets("2000000000")),
        ("offsets/9223372036854775807".into(), offsets("3")),
        ("offsets/1152921504606846975".into(), offsets("3")),
        ("offsets/-1".into(), offsets("3")),
        ("commits/0".into(), b"v1\n{}".to_vec()),
        ("commits/1152921504606846976".into(), b"v1\n{}".to_vec()),
        ("sources/0/9".into(), b"v1".to_vec()),
        ("sources/0/9223372036854775806.compact".into(), b"v1".to_vec()),
        ("sources/0/.tmp".into(), b"".to_vec()),
        (".tmp".into(), b"".to_vec()),
        ("state/0/4294967295/1.delta".into(), b"".to_vec()),
        ("state/0/0/1152921504606846976.delta".into(), b"LZ4Block".to_vec()),
        ("state/99999999999999999999/0/1.delta".into(), b"x".to_vec()),
        ("state/0/0/1_.zip".into(), b"PK".to_vec()),
        ("state/0/0/1.zip".into(), b"PK\x03\x04garbage".to_vec()),
        ("state/0/0/.1.zip.crc".into(), b"crc\0\0\0\0\0".to_vec()),
        ("state/0/_metadata/metadata".into(), b"v1\n[".to_vec()),
        ("state/0/0/_metadata/schema".into(), vec![0; 3]),
        ("checkpoint-1".into(), b"x".to_vec()),
    ];
    let cps = run(files, "4.3.0");
    assert!(!cps.is_empty());
    assert!(t.elapsed() < std::time::Duration::from_secs(10), "{:?}", t.elapsed());
}

/// A stateful query's checkpoint copied without `state/` reads like a stateless one's (the offsets and commits are
/// the same): the verdict says so next to itself (`stateless-assumed`), on both.
#[test]
fn without_state_the_verdict_assumes_a_stateless_query() {
    use checkpoint_core::present::Hint;
    let mut files = load("ss-4.3.0-agg-hdfs");
    files.retain(|(p, _)| !p.starts_with("state/"));
    let cp = &run(files, "4.3.0")[0];
    assert!(cp.hints.contains(&Hint::StatelessAssumed {}), "{:?}", cp.hints);
    assert!(cp.needs.iter().any(|n| n.contains("no state/ folder")), "{:?}", cp.needs);
    let cp = &run(load("ss-3.5.9-stateless"), "3.5.9")[0];
    assert!(cp.hints.contains(&Hint::StatelessAssumed {}), "{:?}", cp.hints);
    let cp = &run(load("ss-4.3.0-agg-hdfs"), "4.3.0")[0];
    assert!(!cp.hints.contains(&Hint::StatelessAssumed {}), "{:?}", cp.hints);
}

/// An emptied `metadata`: json4s reads it through Jackson, which refuses the empty stream itself (a newcomer's
/// restart on 4.1.4: `MismatchedInputException: No content to map due to end-of-input`).
#[test]
fn an_empty_metadata_file_fails_in_jackson() {
    let mut files = load("ss-4.3.0-agg-hdfs");
    set(&mut files, "metadata", b"");
    files.retain(|(p, _)| p != ".metadata.crc");
    let cp = &run(files, "4.1.4")[0];
    assert_eq!(cp.restart.outcome, RestartOutcome::Fails);
    assert_eq!(cp.restart.exception.as_deref(), Some("com.fasterxml.jackson.databind.exc.MismatchedInputException"));
}
