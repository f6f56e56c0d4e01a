//! A store's schema file that this inspector does not read whole (over its 1 MiB cap) or does not parse (JSON nested
//! past serde_json's 128 levels, within the 1,000 Spark's Jackson reads) is "not verified": the verdict unknown, the
//! file named. Before, the first was no finding at all and the second `state-schema-file-unreadable`, a failure.

mod common;

use checkpoint_core::archive::MemArchive;
use checkpoint_core::report::{CheckpointReport, Code, RestartOutcome};
use checkpoint_core::{diagnose, Context, Limits};

const FIXTURE: &str = "broken-ss-4.1.4-changed-shuffle-partitions";
const SCHEMA: &str = "state/0/0/_metadata/schema";

/// Java's `writeUTF`.
fn utf(s: &str) -> Vec<u8> {
    let mut b = (s.len() as u16).to_be_bytes().to_vec();
    b.extend_from_slice(s.as_bytes());
    b
}

/// A v2 schema file whose key schema is `key` (one chunk) and whose value schema is an empty struct.
fn schema_file(key: &str) -> Vec<u8> {
    let mut f = utf("v2");
    f.extend(1i32.to_be_bytes());
    f.extend(utf(key));
    f.extend(1i32.to_be_bytes());
    f.extend(utf(r#"{"type":"struct","fields":[]}"#));
    f
}

/// The fixture with its schema file (and no `.crc` of it) replaced by `bytes`.
fn report(bytes: Vec<u8>) -> CheckpointReport {
    let mut files: Vec<(String, Vec<u8>)> =
        common::load(FIXTURE).into_iter().filter(|(p, _)| !p.ends_with("/.schema.crc")).collect();
    files.iter_mut().filter(|(p, _)| p == SCHEMA).for_each(|(_, b)| *b = bytes.clone());
    let mut a = MemArchive::new("in.zip", files, Limits::default()).unwrap();
    let ctx = Context { spark_version: Some("4.1.4".parse().unwrap()), ..Default::default() };
    diagnose(&mut a, &ctx).checkpoints.remove(0)
}

fn assert_not_verified(cp: &CheckpointReport, words: &str) {
    assert_eq!(cp.restart.outcome, RestartOutcome::Unknown, "{:?}", cp.restart);
    let f = cp.findings.iter().find(|f| f.code == Code::FileNotVerified).expect("file-not-verified");
    assert!(f.evidence.iter().any(|e| e.path == SCHEMA && e.detail.contains(words)), "{:?}", f.evidence);
    assert!(cp.findings.iter().all(|f| f.code != Code::StateSchemaFileUnreadable), "{:?}", cp.findings);
}

#[test]
fn a_schema_file_over_the_read_cap_is_not_verified() {
    // 1.2 MB of chunks of spaces before the JSON: a file Spark reads.
    let mut f = utf("v2");
    let chunk = " ".repeat(60_000);
    f.extend(21i32.to_be_bytes());
    for _ in 0..20 {
        f.extend(utf(&chunk));
    }
    f.extend(utf(r#"{"type":"struct","fields":[]}"#));
    f.extend(1i32.to_be_bytes());
    f.extend(utf(r#"{"type":"struct","fields":[]}"#));
    assert!(f.len() > 1 << 20);
    assert_not_verified(&report(f), "limit");
}

#[test]
fn a_schema_nested_past_this_parser_but_within_jacksons_is_not_verified() {
    let depth = 200;
    let mut key = String::from(r#"{"type":"struct","fields":[{"name":"k","type":"#);
    key.push_str(&r#"{"type":"array","containsNull":true,"elementType":"#.repeat(depth));
    key.push_str(r#""integer""#);
    key.push_str(&"}".repeat(depth));
    key.push_str(r#","nullable":true,"metadata":{}}]}"#);
    assert_not_verified(&report(schema_file(&key)), "levels deep");
    // The same file with a key that is no JSON at all is Spark's failure.
    let cp = report(schema_file("not json"));
    assert_eq!(cp.restart.outcome, RestartOutcome::Fails, "{:?}", cp.restart);
    assert!(cp.findings.iter().any(|f| f.code == Code::StateSchemaFileUnreadable));
}
