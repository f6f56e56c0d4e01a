//! The words of a damaged snapshot's finding when Spark 4.2+'s automatic snapshot repair is on but has nothing to
//! rebuild from: it says so, not that the repair "is disabled in this session" (a newcomer's reading).

mod common;

use checkpoint_core::archive::MemArchive;
use checkpoint_core::report::{Code, RestartOutcome};
use checkpoint_core::{diagnose, Context, Limits};

#[test]
fn repair_on_without_an_intact_older_chain_says_so() {
    // The real fixture: state/0/1/12.snapshot damaged; without 9.snapshot and 7.delta no older snapshot reaches
    // version 12 (3 and 6 need 7.delta).
    let gone = ["7.delta", "9.snapshot"];
    let files: Vec<(String, Vec<u8>)> = common::load("broken-ss-4.1.4-corrupt-state-file")
        .into_iter()
        .filter(|(p, _)| {
            let name = p.strip_prefix("state/0/1/").unwrap_or("").trim_start_matches('.');
            !gone.iter().any(|g| name.starts_with(g))
        })
        .collect();
    let mut a = MemArchive::new("in.zip", files, Limits::default()).unwrap();
    let ctx = Context { spark_version: Some("4.3.0".parse().unwrap()), ..Default::default() };
    let cp = diagnose(&mut a, &ctx).checkpoints.remove(0);
    assert_eq!(cp.restart.outcome, RestartOutcome::Fails, "{:?}", cp.restart);
    let f = cp.findings.iter().find(|f| f.code == Code::StateFileCorrupt).expect("state-file-corrupt");
    assert!(f.why.contains("finds no older snapshot whose chain to this version is intact"), "{}", f.why);
    assert!(!f.why.contains("disabled in this session"), "{}", f.why);
}
