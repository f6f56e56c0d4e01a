//! Log files and state folders deleted by hand, restarted with real Spark 3.5.9, 4.1.4 and 4.3.0
//! (tests/data/spark/log-accident-*, written by tools/spark-gen/log_accidents.py; a newcomer's restarts found the
//! inspector saying "resumes" where Spark failed): the latest offsets file deleted (the commit log ahead of it),
//! and the way out (the commits above it deleted); a file source log's newest file or whole folder deleted (and,
//! where Spark resumes and skips the files that arrived meanwhile, the way out of that); one
//! stateful operator's whole `state/<id>` deleted; the last two commits deleted (with checkpoint format v2 the state
//! is loaded with another version's ids). The prediction equals what Spark did (outcome, error class, or
//! exception when Spark named no class), from the files alone and with Spark's error text pasted, and a failure
//! is explained by the finding of its kind.

mod common;

use checkpoint_core::report::Code;
use common::spark_gen::{check_prediction, context, data_dir, error_text, generated_files as files_of, records, run};

/// The records of tools/spark-gen/log_accidents.py: 14 accidents (2 of them on Spark 4.x only) on three releases,
/// and the latest offsets file deleted on 3.4.4.
const ACCIDENTS: usize = 41;

/// The finding that explains a failure of this accident.
fn code_of(kind: &str) -> Code {
    match kind {
        k if k.starts_with("offsets-latest-deleted") => Code::CommitAheadOfOffsets,
        k if k.starts_with("source-log") => Code::SourceLogBatchMissing,
        "operator-state-deleted" => Code::StateOperatorMissing,
        k if k.starts_with("commits-two-deleted") || k.starts_with("uncommitted-") => Code::LastBatchUncommitted,
        k => panic!("no code for the accident {k}"),
    }
}

#[test]
fn predictions_match_what_spark_did() {
    let mut errs = Vec::new();
    let all = records("log-accident-", ACCIDENTS);
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
    let all = records("log-accident-", ACCIDENTS);
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

/// The newest file source log file deleted at a committed logOffset (the latest batch read no new file): Spark
/// resumes, and its record shows the loss the warning names: the restart read 0 rows, and the file that arrived
/// before it is logged under the lost batch id. The way out (that file moved aside for a first restart, then back)
/// is what Spark read it after. The warning names the lost file and is given only for that accident.
#[test]
fn a_lost_newest_source_log_file_warns_of_the_files_spark_skips() {
    let logged = |j: &serde_json::Value| j["restart_outcome"]["after_restart"]["files_logged_as_newest_batch"].clone();
    let all = records("log-accident-", ACCIDENTS);
    let mut seen = 0;
    for (name, j) in &all {
        let kind = j["mutation"]["kind"].as_str().unwrap();
        let r = run(&data_dir().join(format!("{name}.zip")), &context(j, None));
        let f = r.findings.iter().find(|f| f.code == Code::SourceFilesSkipped);
        if !kind.starts_with("source-log-latest-deleted") || kind.ends_with("-stateless") {
            assert!(f.is_none(), "{name}: {:?}", f.map(|f| &f.title));
            continue;
        }
        seen += 1;
        let lost = j["mutation"]["removed"][0].as_str().unwrap();
        let f = f.unwrap_or_else(|| panic!("{name}: no source-files-skipped"));
        assert!(f.title.contains(lost) && f.restart_failure.is_none(), "{name}: {}", f.title);
        assert!(f.fix.iter().any(|s| s.starts_with(&format!("Restore {lost}"))), "{name}: {:?}", f.fix);
        // The restart plan's repair says what skipping it costs: the data, not nothing.
        let plan = r.restart_plan.as_ref().expect("a restart plan");
        let repair = plan.ways_out.iter().find(|w| w.answers.contains(&Code::SourceFilesSkipped)).expect("the repair");
        assert!(repair.costs.iter().any(|c| c.contains("skips data without an error")), "{name}: {:?}", repair.costs);
        assert_eq!(j["restart_outcome"]["ok"].as_bool(), Some(true), "{name}");
        let lost_id = lost.trim_start_matches("sources/0/").trim_end_matches(".compact");
        let after = &j["restart_outcome"]["after_restart"];
        if kind.ends_with("-fixed") {
            assert_eq!(input_rows(j), 6, "{name}: the way out reads the new file");
            assert_ne!(
                after["source_log_newest"].as_str().unwrap().trim_start_matches("sources/0/"),
                lost_id,
                "{name}"
            );
        } else {
            assert_eq!(input_rows(j), 0, "{name}: Spark read the new file");
            assert!(
                after["source_log_newest"].as_str().unwrap().trim_start_matches("sources/0/").starts_with(lost_id),
                "{name}"
            );
            assert!(logged(j).as_array().unwrap().iter().any(|p| p == "part-010.json"), "{name}: {}", logged(j));
        }
    }
    assert_eq!(seen, 6, "records of the accident and its way out");
}

/// The file source log's newest file cut to its version line (a `.compact` or a plain batch file, still parsing):
/// Spark resumes and its first batch reads the lost batches' files again (6 rows each, beside the new file's 6).
/// The warning names exactly those batches, and only for this accident.
#[test]
fn lost_source_log_entries_warn_of_the_files_spark_reads_again() {
    let mut seen = 0;
    for (name, j) in &records("log-accident-", ACCIDENTS) {
        let kind = j["mutation"]["kind"].as_str().unwrap();
        let r = run(&data_dir().join(format!("{name}.zip")), &context(j, None));
        let f = r.findings.iter().find(|f| f.code == Code::SourceLogEntriesLost);
        if !kind.ends_with("-header-only") {
            assert!(f.is_none(), "{name}: {:?}", f.map(|f| &f.title));
            continue;
        }
        seen += 1;
        assert_eq!(j["restart_outcome"]["ok"].as_bool(), Some(true), "{name}");
        let f = f.unwrap_or_else(|| panic!("{name}: no source-log-entries-lost"));
        let lost = if kind == "source-log-compact-header-only" { ("0..=9", 10) } else { ("10", 1) };
        assert!(f.title.contains(&format!("batch(es) {}:", lost.0)), "{name}: {}", f.title);
        assert_eq!(
            input_rows(j),
            6 * (lost.1 + 1),
            "{name}: Spark read the lost batches' files again, and the new one"
        );
    }
    assert_eq!(seen, 6, "two accidents, three releases");
}

/// A batch planned, not committed, whose input file was deleted since (a retention job): Spark replays it with
/// the files its source log lists and reads 0 rows of it, with no error, then goes on (the new file's 6 rows).
/// The inspector cannot list the input folder: its last-batch-uncommitted note names exactly the files the
/// replay reads (the deleted one among them), says what a missing one costs, and asks to check them first.
#[test]
fn a_replayed_batch_names_the_input_files_it_reads_again() {
    let mut seen = 0;
    for (name, j) in &records("log-accident-uncommitted-input-deleted", 3) {
        seen += 1;
        let ro = &j["restart_outcome"];
        assert_eq!(ro["ok"].as_bool(), Some(true), "{name}: Spark resumed");
        let last = j["facts"]["last_offset_batch"].as_i64().unwrap();
        let rows = &ro["input_rows_on_restart"];
        assert_eq!(rows[last.to_string()].as_i64(), Some(0), "{name}: the replayed batch read nothing: {rows}");
        assert_eq!(input_rows(j), 6, "{name}: then the new file");
        let deleted: Vec<&str> = j["mutation"]["removed"]
            .as_array()
            .unwrap()
            .iter()
            .filter_map(|p| p.as_str()?.strip_prefix("<input1>/"))
            .collect();
        assert_eq!(deleted.len(), 1, "{name}");
        let r = run(&data_dir().join(format!("{name}.zip")), &context(j, None));
        let f = r.findings.iter().find(|f| f.code == Code::LastBatchUncommitted).expect("last-batch-uncommitted");
        assert_eq!(f.severity, checkpoint_core::report::Severity::Info, "{name}");
        let named = f
            .evidence
            .iter()
            .find(|e| e.path.starts_with("sources/0/"))
            .unwrap_or_else(|| panic!("{name}: no input files named: {:?}", f.evidence));
        assert!(named.detail.contains(&format!("batch {last} reads again the 1 file(s)")), "{name}: {}", named.detail);
        assert!(named.detail.ends_with(&format!("/{}", deleted[0])), "{name}: {}", named.detail);
        assert!(f.why.contains("read as empty, with no error"), "{name}: {}", f.why);
        assert!(f.fix[0].starts_with("Before restarting, check that the 1 input file(s)"), "{name}: {:?}", f.fix);
    }
    assert_eq!(seen, 3, "three releases");
}

/// The rows Spark's restarted batches read (`numInputRows` of each batch's progress, from the record).
fn input_rows(j: &serde_json::Value) -> i64 {
    j["restart_outcome"]["input_rows_on_restart"].as_object().expect("rows").values().map(|v| v.as_i64().unwrap()).sum()
}

/// A diagnosis of a generated zip's files (changed in memory) on Spark `v`, the checkpoint at `root`.
fn diagnose_on(files: Vec<(String, Vec<u8>)>, v: &str, root: &str) -> checkpoint_core::report::CheckpointReport {
    let mut a = checkpoint_core::MemArchive::new("t.zip", files, checkpoint_core::Limits::default()).unwrap();
    let ctx = checkpoint_core::Context { spark_version: Some(v.parse().unwrap()), ..Default::default() };
    checkpoint_core::diagnose(&mut a, &ctx).checkpoints.into_iter().find(|c| c.root == root).unwrap()
}

/// Commits ahead of the offset log with the latest batch's own commit gone too: batch `last` commits, and the
/// collision comes with the next batch, at the first commit above (no commit there to collide with at `last`).
/// What `commitLog.add` throws per release: the class from 3.5 on, `MicroBatchExecution`'s assert before (real
/// Spark 3.4.4: `log-accident-offsets-latest-deleted-3.4.4`, "assertion failed: Concurrent update to the commit
/// log").
#[test]
fn commits_ahead_with_a_gap_collide_at_the_first_commit_above() {
    let name = "log-accident-offsets-latest-deleted-4.1.4";
    let mut files = files_of(name);
    files.retain(|(p, _)| p != "commits/18" && p != "commits/.18.crc");
    let r = diagnose_on(files.clone(), "4.1.4", "");
    let f = r.findings.iter().find(|f| f.code == Code::CommitAheadOfOffsets).expect("commit-ahead-of-offsets");
    assert!(f.why.contains("the next batch, 19") && f.why.contains("detected for 19"), "{}", f.why);
    for (v, exception) in [("3.4.4", "java.lang.AssertionError"), ("3.3.4", "java.lang.AssertionError")] {
        let r = diagnose_on(files.clone(), v, "");
        assert_eq!((r.restart.error_class.as_deref(), r.restart.exception.as_deref()), (None, Some(exception)), "{v}");
    }
}

/// Spark's operator check reads every operator folder's metadata; one without it makes the reader fail and the
/// check is skipped: the missing operator's state load fails instead.
#[test]
fn the_operator_check_needs_every_operators_metadata() {
    let mut files = files_of("log-accident-operator-state-deleted-4.1.4");
    files.retain(|(p, _)| !p.starts_with("state/1/_metadata/"));
    let r = diagnose_on(files, "4.1.4", "");
    assert_eq!(r.restart.error_class.as_deref(), Some("CANNOT_LOAD_STATE_STORE.CANNOT_READ_DELTA_FILE_NOT_EXISTS"));
}

/// A sink log the checkpoint's own file source reads (an upstream query's output zipped with it) is no output of
/// this query: its batches are not compared with this query's commits.
#[test]
fn a_sink_log_the_query_reads_is_not_its_output() {
    let name = "sink-log-latest-missing-mid-interval-4.1.4";
    let own = diagnose_on(files_of(name), "4.1.4", "chk");
    assert!(own.findings.iter().any(|f| f.code == Code::SinkLogBatchMissing), "{:?}", own.findings);
    // The output folder renamed to the folder the source reads (`.../in/part-006.json`).
    let files = files_of(name).into_iter().map(|(p, b)| (p.replacen("out/", "in/", 1), b)).collect();
    let read = diagnose_on(files, "4.1.4", "chk");
    assert!(read.findings.iter().all(|f| f.code != Code::SinkLogBatchMissing), "{:?}", read.findings);
}
