//! A checkpoint of a newer Spark restarted on an older one, where a conf the latest offsets file records (and a
//! restart applies) has a value the older release cannot honour. The expectations are real restarts a newcomer
//! ran on 3.5.9 and 4.1.4 of checkpoints written by 4.1.4 and 4.3.0 (2026-12-08): see
//! `checks/recorded_conf.rs`. The inputs are real 4.3.0 fixtures; for the join the recorded format is set as
//! 4.1 (3) and 4.3 (4) wrote it in those runs.

mod common;
use common::*;

use checkpoint_core::archive::{Limits, MemArchive};
use checkpoint_core::report::{CheckpointReport, Code, Severity};
use checkpoint_core::{diagnose, Context};

fn run(files: Vec<(String, Vec<u8>)>, spark: &str, conf: &[(&str, &str)]) -> CheckpointReport {
    let mut ctx = Context { spark_version: Some(spark.parse().unwrap()), now_ms: Some(0), ..Default::default() };
    for (k, v) in conf {
        ctx.session_conf.insert(k.to_string(), v.to_string());
    }
    let mut a = MemArchive::new("t.zip", files, Limits::default()).unwrap();
    diagnose(&mut a, &ctx).checkpoints.remove(0)
}

fn finding(c: &CheckpointReport) -> Option<&checkpoint_core::report::Finding> {
    c.findings.iter().find(|f| f.code == Code::RecordedConfUnsupported)
}

/// The latest offsets file's recorded `key` set to `value`.
fn with_recorded(mut files: Vec<(String, Vec<u8>)>, key: &str, value: &str) -> Vec<(String, Vec<u8>)> {
    let latest =
        files.iter().filter_map(|(p, _)| p.strip_prefix("offsets/").and_then(|n| n.parse::<i64>().ok())).max().unwrap();
    for (p, b) in files.iter_mut().filter(|(p, _)| *p == format!("offsets/{latest}")) {
        let text = String::from_utf8(b.clone()).unwrap();
        let from = format!("\"{key}\":\"");
        let at = text.find(&from).unwrap_or_else(|| panic!("{p} records {key}")) + from.len();
        let end = at + text[at..].find('"').unwrap();
        *b = format!("{}{value}{}", &text[..at], &text[end..]).into_bytes();
    }
    files
}

#[test]
fn row_checksums_of_4_3_fail_an_older_release_and_corrupt_it_without_validation() {
    let files = load("ss-4.3.0-agg-rocksdb-ckptv2-rowchecksum");
    let c = run(files.clone(), "4.1.4", &[("spark.sql.streaming.stateStore.checkpointFormatVersion", "2")]);
    let f = finding(&c).expect("the finding");
    assert_eq!(f.severity, Severity::Error);
    assert_eq!(
        c.restart.error_class.as_deref(),
        Some("CANNOT_LOAD_STATE_STORE.VALUE_ROW_FORMAT_VALIDATION_FAILURE"),
        "{:?}",
        c.restart
    );
    let c = run(files.clone(), "3.5.9", &[]);
    let f = finding(&c).expect("the finding on 3.5");
    assert!(f.restart_failure.as_ref().is_some_and(|r| r.error_class.is_none()));
    // Validation off: no failure, and the title says the values are read wrong.
    let c = run(files.clone(), "4.1.4", &[("spark.sql.streaming.stateStore.formatValidation.enabled", "false")]);
    let f = finding(&c).expect("the finding without validation");
    assert!(f.restart_failure.is_none() && f.title.contains("reads every one of them wrong"), "{}", f.title);
    assert_eq!(f.severity, Severity::Error);
    // The release that wrote it reads it.
    assert!(finding(&run(files, "4.3.0", &[])).is_none());
}

#[test]
fn a_join_state_format_the_older_release_does_not_accept_fails_when_the_query_starts() {
    let key = "spark.sql.streaming.join.stateFormatVersion";
    let j4 = with_recorded(load("ss-4.3.0-join"), key, "4");
    let c = run(j4.clone(), "4.1.4", &[]);
    assert_eq!(c.restart.error_class.as_deref(), Some("INVALID_CONF_VALUE.REQUIREMENT"), "{:?}", c.restart);
    assert!(finding(&c).unwrap().title.contains("valid: 1 to 3"));
    let c = run(j4.clone(), "3.5.9", &[]);
    assert_eq!(c.restart.exception.as_deref(), Some("java.lang.IllegalArgumentException"));
    assert!(finding(&run(j4, "4.3.0", &[])).is_none());
    let j3 = with_recorded(load("ss-4.3.0-join"), key, "3");
    assert!(finding(&run(j3.clone(), "4.1.4", &[])).is_none(), "4.1 accepts 3");
    assert!(finding(&run(j3, "3.5.9", &[])).is_some());
}

#[test]
fn a_transform_with_state_checkpoint_of_4_3_warns_of_its_list_state_format_on_4_1() {
    let c = run(load("ss-4.3.0-tws-pandas"), "4.1.4", &[]);
    let f = finding(&c).expect("the warning");
    assert_eq!(f.severity, Severity::Warning);
    assert!(f.title.contains("mergeOperatorVersion=2"));
    // An aggregation's 4.3 checkpoint records the same conf, and has no list state: no finding.
    assert!(finding(&run(load("ss-4.3.0-agg-hdfs"), "4.1.4", &[])).is_none());
}
