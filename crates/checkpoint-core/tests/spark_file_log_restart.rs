//! File source and sink logs reopened with another compaction interval, and a new checkpoint writing into an old
//! output, restarted with real Spark 3.5.9, 4.1.4 and 4.3.0 (tests/data/spark/file-log-restart-*, written by
//! tools/spark-gen/compact_interval.py; a newcomer's restarts found the inspector saying "resumes" where Spark
//! failed or lost data). Each log holds one `.compact` file (`9.compact`, `10`, `11`), so the restarted session's
//! `compactInterval` decides the interval Spark reopens it with. `conformance.rs` checks every prediction against
//! Spark's outcome; these tests check the finding that explains each, against the facts Spark's record holds.

mod common;

use checkpoint_core::report::{Code, Severity};
use common::spark_gen::{context, data_dir, generated_files, records, run_at_root};

fn of(kind: &str) -> Vec<(String, serde_json::Value)> {
    let all = records("file-log-restart-", 15);
    let v: Vec<_> = all.into_iter().filter(|(_, j)| j["mutation"]["kind"] == kind).collect();
    assert_eq!(v.len(), 3, "{kind}: one record per release");
    v
}

/// `fileSource.log.compactInterval=2` on a source log with only `9.compact`: Spark derives the interval 2 and the
/// source fails opening `11.compact` (java.io.FileNotFoundException). The finding names that file and the way out,
/// the conf back at 10, after which the same Spark resumed.
#[test]
fn a_smaller_source_interval_fails_opening_the_latest_batch_by_another_name() {
    for (name, j) in of("source-interval-2") {
        let ro = &j["restart_outcome"];
        assert_eq!(ro["exception"].as_str(), Some("java.io.FileNotFoundException"), "{name}");
        assert!(ro["message_head"].as_str().unwrap().contains("sources/0/11.compact does not exist"), "{name}");
        let r = run_at_root(&data_dir().join(format!("{name}.zip")), &j, &context(&j, None));
        let f = r.findings.iter().find(|f| f.code == Code::SourceLogBatchMissing).expect("source-log-batch-missing");
        assert!(f.restart_failure.is_some() && f.title.contains("11"), "{name}: {}", f.title);
        assert!(f.why.contains("derives the interval 2"), "{name}: {}", f.why);
        assert!(
            f.fix.iter().any(|s| s.contains("spark.sql.streaming.fileSource.log.compactInterval=10")),
            "{name}: {:?}",
            f.fix
        );
    }
    for (name, j) in of("source-interval-2-fixed") {
        assert_eq!(j["restart_outcome"]["ok"].as_bool(), Some(true), "{name}: the way out");
        assert_eq!(j["query"]["confs"]["spark.sql.streaming.fileSource.log.compactInterval"], "10", "{name}");
        let r = run_at_root(&data_dir().join(format!("{name}.zip")), &j, &context(&j, None));
        assert!(!r.findings.iter().any(|f| f.code == Code::SourceLogBatchMissing), "{name}");
    }
}

/// `fileSink.log.compactInterval=2` on a sink log with only `9.compact`: the restart's batch runs, but the log's
/// chain under the interval 2 needs `11.compact` (readers of the output fail on it, as Spark's reader did after
/// the restart), and the next compaction batch fails.
#[test]
fn a_smaller_sink_interval_leaves_a_log_readers_fail_on() {
    for (name, j) in of("sink-interval-2") {
        let ro = &j["restart_outcome"];
        assert_eq!(ro["ok"].as_bool(), Some(true), "{name}");
        let reader = ro["reader_error_after_restart"].as_str().expect("the reader failed");
        assert!(reader.contains("11.compact doesn't exist"), "{name}: {reader}");
        let r = run_at_root(&data_dir().join(format!("{name}.zip")), &j, &context(&j, None));
        let f = r.findings.iter().find(|f| f.code == Code::SinkLogBatchMissing).expect("sink-log-batch-missing");
        assert_eq!(f.severity, Severity::Error, "{name}");
        assert!(f.evidence.iter().any(|e| e.detail.contains("11.compact")), "{name}: {:?}", f.evidence);
        assert!(
            f.fix.iter().any(|s| s.contains("spark.sql.streaming.fileSink.log.compactInterval=10")),
            "{name}: {:?}",
            f.fix
        );
        new_checkpoint_writes_a_new_output(&name, &r, "0..=11");
    }
}

/// A new checkpoint (its query started once, no batch) writing into an output whose log is at batch 11: Spark's
/// batch 0 planned every input file and the sink wrote nothing (no output file added): the warning names the
/// batches skipped.
#[test]
fn a_new_checkpoint_into_an_old_output_warns_of_the_skipped_batches() {
    for (name, j) in of("sink-ahead-new-checkpoint") {
        let ro = &j["restart_outcome"];
        assert_eq!(ro["ok"].as_bool(), Some(true), "{name}");
        assert_eq!(ro["output_files_after_restart"], j["mutation"]["output_files_before"], "{name}: nothing written");
        assert!(ro["batches_run_on_restart"].as_array().unwrap().iter().any(|b| b == 0), "{name}");
        let r = run_at_root(&data_dir().join(format!("{name}.zip")), &j, &context(&j, None));
        let f = r.findings.iter().find(|f| f.code == Code::SinkLogAhead).expect("sink-log-ahead");
        assert!(f.title.contains("batches 0..=11"), "{name}: {}", f.title);
        // A new checkpoint's sink starts a new log at batch 0: moving the old log away is a way out here only.
        assert!(f.fix.iter().any(|s| s.contains("_spark_metadata away before the restart")), "{name}: {:?}", f.fix);
        // The plan's NEW-checkpoint way out (nothing committed here) writes to a new output path, for the same cause.
        new_checkpoint_writes_a_new_output(&name, &r, "0..=11");
    }
}

/// The restart plan's NEW-checkpoint way out, with a file sink log given that holds batches up to `upto`'s end:
/// a new output path in its steps and its writer snippet (a new checkpoint's batches at or below the log's
/// latest write nothing into the old output, as Spark's `sink-ahead-new-checkpoint` records show).
fn new_checkpoint_writes_a_new_output(name: &str, r: &checkpoint_core::report::CheckpointReport, upto: &str) {
    use checkpoint_core::restart_plan::WayOutKind;
    let plan = r.restart_plan.as_ref().expect("a plan");
    let w = plan
        .ways_out
        .iter()
        .find(|w| matches!(w.kind, WayOutKind::NewCheckpoint | WayOutKind::NewCheckpointBoundedStart))
        .expect("the NEW-checkpoint way out");
    let step =
        w.steps.iter().find(|s| s.contains("NEW output path")).unwrap_or_else(|| panic!("{name}: {:?}", w.steps));
    assert!(step.contains(&format!("batches {upto} would write nothing")), "{name}: {step}");
    assert!(step.contains("_spark_metadata away before the restart"), "{name}: {step}");
    assert!(w.options.iter().any(|o| o.source_index.is_none() && o.key == "path"), "{name}: {:?}", w.options);
    for s in &w.snippets {
        assert!(
            s.code.contains("'path', '<new output path>'") || s.code.contains("\"path\", \"<new output path>\""),
            "{name}: {}",
            s.code
        );
    }
}

/// The output's whole `_spark_metadata` deleted, the output folder given as the sink's (`--sink-log out`): Spark
/// resumes and starts a new log at the restart's batch, which readers of the output cannot read (as Spark's
/// reader failed after the restart); the warning says the committed batches are missing from the log and which
/// compaction batch will fail.
#[test]
fn an_output_folder_without_its_log_is_read_as_a_log_with_no_batch() {
    for (name, j) in of("sink-log-deleted") {
        let ro = &j["restart_outcome"];
        assert_eq!(ro["ok"].as_bool(), Some(true), "{name}");
        assert!(
            ro["reader_error_after_restart"].as_str().expect("the reader failed").contains("doesn't exist"),
            "{name}"
        );
        let zip = data_dir().join(format!("{name}.zip"));
        let out: Vec<(String, Vec<u8>)> = generated_files(&name)
            .into_iter()
            .filter_map(|(p, b)| p.strip_prefix("out/").map(|r| (r.to_string(), b)))
            .collect();
        let mut a = checkpoint_core::MemArchive::new("out", out, checkpoint_core::Limits::default()).unwrap();
        let mut ctx = context(&j, None);
        ctx.sink_logs = checkpoint_core::read::file_logs::read_sink_logs(&mut a);
        assert_eq!(ctx.sink_logs.len(), 1, "{name}: the output folder is a sink log with no batch");
        let r = run_at_root(&zip, &j, &ctx);
        let f = r.findings.iter().find(|f| f.code == Code::SinkLogBatchMissing).expect("sink-log-batch-missing");
        assert_eq!(f.severity, Severity::Warning, "{name}");
        assert!(f.title.contains("no batch file") && f.title.contains("compaction batch 19"), "{name}: {}", f.title);
        // Spark's log after the restart is batch 12 alone, and its readers failed: keeping this checkpoint without
        // the old log (or with a new output path) is no way out, and the repair in place does not offer it.
        let text = f.fix.join("\n");
        assert!(text.contains("does not work: the sink starts that log at batch 12"), "{name}: {text}");
        // The reader's words, as Spark's reader said after this restart (its record): the newest compaction first.
        assert!(text.contains("_spark_metadata/9.compact doesn't exist"), "{name}: {text}");
        // Placeholders for the files reading the log needs, 9.compact, 10 and 11 (a helper's real 3.5.9 and 4.1.4
        // runs of this repair went through the next compaction), not for the batches the compaction covered.
        let step = f.fix.iter().find(|s| s.contains("placeholder batch files")).expect("the placeholder step");
        assert!(step.contains("_spark_metadata/9.compact, ") && step.contains("_spark_metadata/11, each"), "{step}");
        assert!(!step.contains("_spark_metadata/8") && step.contains("batches 0..=9"), "{step}");
        if let Some(plan) = &r.restart_plan {
            for w in plan.ways_out.iter().filter(|w| w.kind == checkpoint_core::restart_plan::WayOutKind::RepairInPlace)
            {
                assert!(w.steps.iter().all(|s| !s.contains("NEW checkpoint")), "{name}: {:?}", w.steps);
            }
        }
    }
}

/// A sink log batch file whose version line says v2 (no Spark writes one): readers of the output fail on it
/// (real Spark 3.5.9: "UnsupportedLogVersion: maximum supported log version is v1, but encountered v2"), so it
/// is a warning, not a log that reads fine.
#[test]
fn a_sink_log_file_of_another_version_is_flagged() {
    let (name, j) = of("sink-interval-2").remove(0);
    let zip = data_dir().join(format!("{name}.zip"));
    let out: Vec<(String, Vec<u8>)> = generated_files(&name)
        .into_iter()
        .filter_map(|(p, b)| p.strip_prefix("out/").map(|r| (r.to_string(), b)))
        .map(|(p, b)| {
            if p == "_spark_metadata/11" {
                let text = String::from_utf8(b).unwrap();
                (p, text.replacen("v1", "v2", 1).into_bytes())
            } else {
                (p, b)
            }
        })
        .collect();
    let mut a = checkpoint_core::MemArchive::new("out", out, checkpoint_core::Limits::default()).unwrap();
    let mut ctx = context(&j, None);
    ctx.sink_logs = checkpoint_core::read::file_logs::read_sink_logs(&mut a);
    let r = run_at_root(&zip, &j, &ctx);
    let f = r
        .findings
        .iter()
        .find(|f| f.code == Code::SinkLogUnreadable && f.title.contains("v2"))
        .unwrap_or_else(|| panic!("{name}: {:?}", r.findings.iter().map(|f| &f.title).collect::<Vec<_>>()));
    assert_eq!(f.severity, Severity::Warning);
    assert!(f.title.contains("_spark_metadata/11"), "{}", f.title);
}

/// A checkpoint at batch 0 writing into an output whose log is at batch 7 (real Spark 4.1.4 skipped batches 1..7):
/// without a backup of the log, deleting its batches ahead of the checkpoint lets the sink write them again (real
/// Spark 3.5.9 and 4.1.4, a helper's runs: rewritten, compacted on, each row once through the log); the log up to
/// batch 0 reads without them, so the step is offered, naming each file to delete.
#[test]
fn a_sink_log_ahead_of_a_restored_checkpoint_can_drop_its_batches_ahead() {
    let name = "sink-log-ahead-4.1.4";
    let j: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(data_dir().join(format!("{name}.json"))).unwrap()).unwrap();
    let r = run_at_root(&data_dir().join(format!("{name}.zip")), &j, &context(&j, None));
    let f = r.findings.iter().find(|f| f.code == Code::SinkLogAhead).expect("sink-log-ahead");
    let step = f.fix.iter().find(|s| s.starts_with("Without that backup: delete")).expect("the delete step");
    for file in ["_spark_metadata/1,", "_spark_metadata/2.compact", "_spark_metadata/5.compact", "_spark_metadata/7 "] {
        assert!(step.contains(file), "{file}: {step}");
    }
    assert!(!step.contains("_spark_metadata/0,"), "{step}");
    // A repair in place of its own (it keeps this checkpoint), marked as losing data (a reader globbing the part
    // files sees those batches twice); restoring the backup is the lossless one; no NEW-checkpoint step in either.
    let plan = r.restart_plan.expect("a plan for a warning that loses data");
    let repairs: Vec<_> = plan.ways_out.iter().filter(|w| w.answers.contains(&Code::SinkLogAhead)).collect();
    let drop = repairs.iter().find(|w| w.steps.iter().any(|s| s.starts_with("Without that backup: delete"))).unwrap();
    assert!(drop.data_loss && drop.costs.iter().any(|c| c.contains("twice")), "{drop:?}");
    let restore = repairs.iter().find(|w| w.steps.iter().any(|s| s.contains("restore"))).expect("the restore");
    assert!(!restore.data_loss && restore.steps.iter().all(|s| !s.starts_with("Without that backup")));
    assert!(repairs.iter().all(|w| w.steps.iter().all(|s| !s.contains("NEW checkpoint"))));
}
