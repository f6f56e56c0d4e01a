//! Truncates every log file (metadata, offsets, commits, file source logs) of real fixtures at every byte
//! and checks the diagnosis names the damaged file in a finding, without panicking.

mod common;
use common::*;

use checkpoint_core::{diagnose, Context, Limits, MemArchive};

fn is_log(p: &str) -> bool {
    let name = p.rsplit('/').next().unwrap_or(p);
    let dir = p.rfind('/').map(|i| &p[..i]).unwrap_or("");
    p == "metadata"
        || ((dir == "offsets" || dir == "commits" || (dir.starts_with("sources/") && !dir[8..].contains('/')))
            && name.trim_end_matches(".compact").parse::<i64>().is_ok())
}

fn truncate_all(fixture: &str) {
    let files = load(fixture);
    let mut runs = 0;
    for (i, (path, bytes)) in files.iter().enumerate() {
        if !is_log(path) {
            continue;
        }
        for len in 0..bytes.len() {
            let mut fs = files.clone();
            fs[i].1.truncate(len);
            let mut a = MemArchive::new(fixture, fs, Limits::default()).unwrap();
            let r = diagnose(&mut a, &Context::default());
            assert_eq!(r.checkpoints.len(), 1, "{fixture}: {path} cut at {len}");
            let cp = &r.checkpoints[0];
            let named = cp.findings.iter().any(|f| f.evidence.iter().any(|e| &e.path == path));
            assert!(
                named,
                "{fixture}: {path} cut to {len} bytes: no finding names it; findings: {:?}",
                cp.findings.iter().map(|f| &f.code).collect::<Vec<_>>()
            );
            runs += 1;
        }
    }
    assert!(runs > 100, "{fixture}: only {runs} truncations");
}

#[test]
fn truncated_logs_stateless_file_source() {
    truncate_all("ss-3.5.9-stateless.zip");
}

#[test]
fn truncated_logs_stateful_v2_commits() {
    truncate_all("ss-4.3.0-union-offsetlog-v2.zip");
}

/// Every byte of every log file replaced (one at a time): no panic, the report serialises, and the file is
/// named by a finding (its Hadoop sidecar no longer matches even when Spark would accept the content).
#[test]
fn flipped_bytes_in_logs_are_named() {
    let fixture = "ss-3.5.9-stateless.zip";
    let files = load(fixture);
    let mut runs = 0;
    for (i, (path, bytes)) in files.iter().enumerate() {
        if !is_log(path) {
            continue;
        }
        for (at, b) in bytes.iter().enumerate() {
            let mut fs = files.clone();
            fs[i].1[at] = if *b == b'x' { b'y' } else { b'x' };
            let mut a = MemArchive::new(fixture, fs, Limits::default()).unwrap();
            let r = diagnose(&mut a, &Context::default());
            serde_json::to_string(&r).unwrap();
            let cp = &r.checkpoints[0];
            assert!(
                cp.findings.iter().any(|f| f.evidence.iter().any(|e| &e.path == path)),
                "{path} byte {at} replaced: no finding names it"
            );
            runs += 1;
        }
    }
    assert!(runs > 100);
}
