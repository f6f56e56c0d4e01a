//! Log files and state folders deleted by hand, restarted with real Spark 3.5.9, 4.1.4 and 4.3.0
//! (tests/data/spark/log-accident-*, written by tools/spark-gen/log_accidents.py; a newcomer's restarts found the
//! inspector saying "resumes" where Spark failed): the latest offsets file deleted (the commit log ahead of it),
//! and the way out (the commits above it deleted); a file source log's newest file or whole folder deleted; one
//! stateful operator's whole `state/<id>` deleted; the last two commits deleted (with checkpoint format v2 the state
//! is loaded with another version's ids). The prediction equals what Spark did (outcome, error class, or
//! exception when Spark named no class), from the files alone and with Spark's error text pasted, and a failure
//! is explained by the finding of its kind.

mod common;

use checkpoint_core::report::Code;
use common::spark_gen::{check_prediction, context, data_dir, error_text, records, run};

/// The finding that explains a failure of this accident.
fn code_of(kind: &str) -> Code {
    match kind {
        k if k.starts_with("offsets-latest-deleted") => Code::CommitAheadOfOffsets,
        k if k.starts_with("source-log") => Code::SourceLogBatchMissing,
        "operator-state-deleted" => Code::StateOperatorMissing,
        k if k.starts_with("commits-two-deleted") => Code::LastBatchUncommitted,
        k => panic!("no code for the accident {k}"),
    }
}

#[test]
fn predictions_match_what_spark_did() {
    let mut errs = Vec::new();
    let all = records("log-accident-", 28);
    for (name, j) in &all {
        let zip = data_dir().join(format!("{name}.zip"));
        let ro = &j["restart_outcome"];
        let a = run(&zip, &context(j, None));
        if let Err(e) = check_prediction(&a, ro) {
            errs.push(format!("{name} [A]: {e}"));
        }
        let code = code_of(j["mutation"]["kind"].as_str().unwrap());
        if ro["ok"].as_bool() == Some(false) {
            if !a.findings.iter().any(|f| f.code == code && f.restart_failure.is_some()) {
                errs.push(format!("{name} [A]: no failing {code} finding"));
            }
            let b = run(&zip, &context(j, Some(error_text(ro))));
            if let Err(e) = check_prediction(&b, ro) {
                errs.push(format!("{name} [B]: {e}"));
            }
            if !b.findings.iter().any(|f| f.code == code && f.explains_error_text) {
                errs.push(format!("{name} [B]: {code} does not explain Spark's error text"));
            }
            // Commits ahead of the offsets are no second writer: the concurrent-writers advice ("restart once")
            // would send the user round the loop.
            if b.findings.iter().any(|f| f.code == Code::ConcurrentWriters) {
                errs.push(format!("{name} [B]: concurrent-writers"));
            }
        }
    }
    assert!(errs.is_empty(), "{}", errs.join("\n"));
}

/// The way out of commits ahead of the offset log is the very edit after which Spark resumed: the commit files
/// above the latest offsets file deleted. Its step names them.
#[test]
fn the_way_out_of_commits_ahead_is_what_spark_resumed_after() {
    let all = records("log-accident-", 28);
    let mut seen = 0;
    for (name, j) in all.iter().filter(|(n, _)| n.contains("-offsets-latest-deleted-fixed-")) {
        seen += 1;
        assert_eq!(j["restart_outcome"]["ok"].as_bool(), Some(true), "{name}");
        let before = name.replace("-fixed-", "-");
        let (_, b) = all.iter().find(|(n, _)| *n == before).expect("the checkpoint before the fix");
        assert_eq!(b["restart_outcome"]["ok"].as_bool(), Some(false), "{before}");
        let r = run(&data_dir().join(format!("{before}.zip")), &context(b, None));
        let f = r.findings.iter().find(|f| f.code == Code::CommitAheadOfOffsets).expect("commit-ahead-of-offsets");
        let removed: Vec<&str> =
            j["mutation"]["removed"].as_array().unwrap().iter().filter_map(|v| v.as_str()).collect();
        for c in removed.iter().filter(|p| p.starts_with("commits/") && !p.contains(".crc")) {
            assert!(
                f.fix.iter().any(|s| s.contains(&format!("Delete {c}"))),
                "{before}: no step deletes {c}: {:?}",
                f.fix
            );
        }
    }
    assert!(seen >= 3, "fixed records: {seen}");
}
