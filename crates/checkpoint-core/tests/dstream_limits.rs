//! A DStream checkpoint file that a limit of this inspector stops (the serialization parser's values, depth,
//! handles or bytes; the decompressed stream's size) is "not verified", never "cannot be read": Spark's
//! `ObjectInputStream` has none of these limits and may well recover from it. Before, such a newest file made the
//! verdict "resumes from the older file", and such a file alone "fails: none of the files can be read".

mod common;

use checkpoint_core::archive::MemArchive;
use checkpoint_core::report::{CheckpointReport, Code, RestartOutcome, Severity};
use checkpoint_core::{diagnose, Context, Limits};

/// A Java serialization stream of `n` arrays of `len` nulls: over the parser's 2^20 values from the eleventh
/// array of 100,000 on, though every byte of it is valid.
fn many_values(n: usize, len: i32) -> Vec<u8> {
    let mut b = vec![0xAC, 0xED, 0x00, 0x05];
    // TC_ARRAY, TC_CLASSDESC "[Ljava.lang.Object;" (uid 1, serializable, no fields, no annotation, no super).
    b.extend_from_slice(&[0x75, 0x72]);
    let name = b"[Ljava.lang.Object;";
    b.extend_from_slice(&(name.len() as u16).to_be_bytes());
    b.extend_from_slice(name);
    b.extend_from_slice(&1u64.to_be_bytes());
    b.extend_from_slice(&[0x02, 0x00, 0x00, 0x78, 0x70]);
    for i in 0..n {
        if i > 0 {
            // TC_ARRAY with a reference to the class descriptor (handle 0x7E0000).
            b.extend_from_slice(&[0x75, 0x71, 0x00, 0x7E, 0x00, 0x00]);
        }
        b.extend_from_slice(&len.to_be_bytes());
        b.extend(std::iter::repeat_n(0x70u8, len as usize));
    }
    b
}

fn report(files: Vec<(String, Vec<u8>)>) -> CheckpointReport {
    let mut a = MemArchive::new("dstream.zip", files, Limits::default()).unwrap();
    // The release that wrote the fixture (Spark 4.x cannot read its Scala 2.12 classes at all).
    let ctx = Context { spark_version: Some("3.5.9".parse().unwrap()), ..Default::default() };
    let mut r = diagnose(&mut a, &ctx);
    assert_eq!(r.checkpoints.len(), 1);
    r.checkpoints.remove(0)
}

fn fixture() -> Vec<(String, Vec<u8>)> {
    common::load_path("../dstream/dstream-3.5.9-updatestatebykey.zip")
}

const NEWEST: &str = "checkpoint-1796030999000";

#[test]
fn a_newest_file_over_a_limit_is_not_verified_and_the_verdict_unknown() {
    let mut files = fixture();
    let before = report(files.clone());
    assert_eq!(before.restart.outcome, RestartOutcome::Resumes, "{:?}", before.restart);
    files.push((NEWEST.to_string(), many_values(64, 100_000)));
    let r = report(files);
    assert_eq!(r.restart.outcome, RestartOutcome::Unknown, "{:?}", r.restart);
    let nv = r.findings.iter().find(|f| f.code == Code::FileNotVerified).expect("file-not-verified");
    assert_eq!(nv.severity, Severity::Warning);
    assert!(nv.evidence.iter().any(|e| e.path == NEWEST && e.detail.contains("more than")), "{:?}", nv.evidence);
    assert!(nv
        .evidence
        .iter()
        .any(|e| e.detail.contains("at byte") && e.detail.contains("of the decompressed stream")));
    let rec = r.findings.iter().find(|f| f.code == Code::DstreamRecovery).expect("dstream-recovery");
    assert!(rec.title.ends_with(&format!("unless {NEWEST} (not verified) reads")), "{}", rec.title);
    let unreadable: Vec<_> = r.findings.iter().filter(|f| f.code == Code::DstreamCheckpointUnreadable).collect();
    assert!(unreadable.is_empty(), "{:?}", unreadable.iter().map(|f| &f.title).collect::<Vec<_>>());
}

#[test]
fn a_lone_file_over_a_limit_does_not_fail_the_restart() {
    let mut files: Vec<(String, Vec<u8>)> =
        fixture().into_iter().filter(|(p, _)| !p.rsplit('/').next().unwrap_or(p).contains("checkpoint-")).collect();
    files.push((NEWEST.to_string(), many_values(64, 100_000)));
    let r = report(files);
    assert_ne!(r.restart.outcome, RestartOutcome::Fails, "{:?}", r.restart);
    assert!(r.findings.iter().all(|f| f.severity != Severity::Error), "{:?}", r.findings);
    assert!(r.findings.iter().any(|f| f.code == Code::FileNotVerified));
    // A file whose bytes are damaged (cut mid-array) still cannot be read, and alone fails the restart.
    let mut files: Vec<(String, Vec<u8>)> =
        fixture().into_iter().filter(|(p, _)| !p.rsplit('/').next().unwrap_or(p).contains("checkpoint-")).collect();
    let mut cut = many_values(1, 1000);
    cut.truncate(500);
    files.push((NEWEST.to_string(), cut));
    let r = report(files);
    assert_eq!(r.restart.outcome, RestartOutcome::Fails, "{:?}", r.restart);
    assert!(r.findings.iter().any(|f| f.code == Code::DstreamCheckpointUnreadable && f.severity == Severity::Error));
}
