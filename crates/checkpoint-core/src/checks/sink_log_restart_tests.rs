//! Tests of `sink_log.rs`: a restart's compaction batch against real Spark's sink logs.

use crate::archive::{Limits, MemArchive};
use crate::report::{CheckpointReport, RestartOutcome};
use crate::{diagnose, Context};

type Files = Vec<(String, Vec<u8>)>;

use crate::testutil::generated_files as generated;

/// Real Spark 4.1.4: the checkpoint (chk/, committed up to batch 7) and its intact output (out/, log 0..=7,
/// 2.compact and 5.compact), with `change` applied to the output.
fn chk_and_out(change: impl Fn(&mut Files)) -> CheckpointReport {
    chk_and_out_on("4.1.4", change)
}

fn chk_and_out_on(v: &str, change: impl Fn(&mut Files)) -> CheckpointReport {
    let mut files: Files = generated("sink-log-batch-after-compact-missing-4.1.4")
        .into_iter()
        .filter(|(p, _)| p.starts_with("chk/"))
        .chain(generated("sink-log-ahead-4.1.4").into_iter().filter(|(p, _)| p.starts_with("out/")))
        .collect();
    change(&mut files);
    let mut a = MemArchive::new("t", files, Limits::default()).expect("archive");
    let ctx = Context { spark_version: Some(v.parse().expect("v")), ..Default::default() };
    diagnose(&mut a, &ctx).checkpoints.into_iter().find(|c| c.root == "chk").expect("chk")
}

/// The output folder given alone (`--sink-log`) with its whole `_spark_metadata` deleted: a log with no batch.
/// With `compactInterval=3` the restart's batch 8 is a compaction batch and fails at once, as real Spark 4.1.4
/// did (BATCH_METADATA_NOT_FOUND, a newcomer's restart); the words name that batch, not a latest batch -1.
/// A Delta table or a folder without a sink's `part-` file is no sink output.
#[test]
fn an_output_folder_without_its_log_compacting_at_the_restart_fails() {
    let all = generated("sink-log-batch-after-compact-missing-4.1.4");
    let chk: Files = all.iter().filter(|(p, _)| p.starts_with("chk/")).cloned().collect();
    let out: Files = all
        .iter()
        .filter_map(|(p, b)| p.strip_prefix("out/").map(|r| (r.to_string(), b.clone())))
        .filter(|(p, _)| !p.starts_with("_spark_metadata"))
        .collect();
    let mut o = MemArchive::new("out", out.clone(), Limits::default()).expect("archive");
    let mut ctx = Context { spark_version: Some("4.1.4".parse().expect("v")), ..Default::default() };
    ctx.session_conf.insert(super::SINK_INTERVAL_CONF.into(), "3".into());
    ctx.sink_logs = crate::read::file_logs::read_sink_logs(&mut o);
    assert_eq!(ctx.sink_logs.len(), 1);
    let mut a = MemArchive::new("t", chk, Limits::default()).expect("archive");
    let r = diagnose(&mut a, &ctx).checkpoints.into_iter().find(|c| c.root == "chk").expect("chk");
    assert_eq!(r.restart.error_class.as_deref(), Some("BATCH_METADATA_NOT_FOUND"), "{:?}", r.restart);
    let f = r.findings.iter().find(|f| f.code == crate::report::Code::SinkLogBatchMissing).expect("finding");
    assert!(f.why.contains("has no log") && f.why.contains("batch, 8,") && !f.why.contains("-1"), "{}", f.why);
    // Not a sink's output: a Delta table; a folder of files no sink names part-...
    let mut delta = out.clone();
    delta.push(("_delta_log/00000000000000000000.json".into(), b"{}".to_vec()));
    let mut d = MemArchive::new("d", delta, Limits::default()).expect("archive");
    assert!(crate::read::file_logs::read_sink_logs(&mut d).is_empty());
    let mut i =
        MemArchive::new("i", vec![("input-1.json".into(), b"{}".to_vec())], Limits::default()).expect("archive");
    assert!(crate::read::file_logs::read_sink_logs(&mut i).is_empty());
}

/// The compaction's failure on an absent batch file per release (QueryExecutionErrors
/// .batchMetadataFileNotFoundError): named BATCH_METADATA_NOT_FOUND in 3.5 (SPARK-42299), a legacy class in
/// 3.4, a plain FileNotFoundException before the error classes.
#[test]
fn the_compactions_missing_batch_error_is_each_releases() {
    let gone =
        |f: &mut Files| f.retain(|(p, _)| !p.ends_with("_spark_metadata/7") && !p.ends_with("_spark_metadata/.7.crc"));
    for (v, class, exception) in [
        ("3.5.0", Some("BATCH_METADATA_NOT_FOUND"), "org.apache.spark.SparkFileNotFoundException"),
        ("3.4.1", Some("_LEGACY_ERROR_TEMP_2206"), "org.apache.spark.SparkFileNotFoundException"),
        ("3.3.2", None, "java.io.FileNotFoundException"),
    ] {
        let r = chk_and_out_on(v, gone);
        assert_eq!(r.restart.error_class.as_deref(), class, "{v}: {:?}", r.restart);
        assert_eq!(r.restart.exception.as_deref(), Some(exception), "{v}: {:?}", r.restart);
        let f = r.findings.iter().find(|f| f.code == crate::report::Code::SinkLogBatchMissing).expect("finding");
        assert!(f.why.contains(class.unwrap_or(exception)), "{v}: {}", f.why);
    }
}

#[test]
fn the_restarts_compaction_batch_needs_the_batches_the_log_never_got() {
    let intact = chk_and_out(|_| {});
    assert_eq!(intact.restart.outcome, RestartOutcome::Resumes, "{:?}", intact.restart);
    // Batch 7 committed in the checkpoint, its sink log file gone: batch 8 (a compaction batch, interval 3)
    // reads 5.compact, 6 and 7 (as real Spark did with 6 gone: BATCH_METADATA_NOT_FOUND).
    let r =
        chk_and_out(|f| f.retain(|(p, _)| !p.ends_with("_spark_metadata/7") && !p.ends_with("_spark_metadata/.7.crc")));
    assert_eq!(r.restart.error_class.as_deref(), Some("BATCH_METADATA_NOT_FOUND"), "{:?}", r.restart);
    assert!(r.findings.iter().any(|f| f.code == crate::report::Code::SinkLogBatchMissing));
    // The same file present but empty: the log reader fails on it (IllegalStateException, no class).
    let r = chk_and_out(|f| {
        for (p, b) in f.iter_mut() {
            if p.ends_with("_spark_metadata/7") {
                b.clear();
            }
        }
        f.retain(|(p, _)| !p.ends_with("_spark_metadata/.7.crc"));
    });
    assert_eq!(
        (r.restart.outcome, r.restart.exception.as_deref()),
        (RestartOutcome::Fails, Some("java.lang.IllegalStateException"))
    );
    // Cut in the middle of its JSON line: Jackson's end-of-input (real Spark 4.1.4 failed the compaction of a
    // `.compact` cut so with com.fasterxml.jackson.core.io.JsonEOFException), not "Unable to find batch".
    let r = chk_and_out(|f| {
        for (p, b) in f.iter_mut() {
            if p.ends_with("_spark_metadata/7") {
                let cut = b.len() - 20;
                b.truncate(cut);
            }
        }
        f.retain(|(p, _)| !p.ends_with("_spark_metadata/.7.crc"));
    });
    assert_eq!(
        (r.restart.outcome, r.restart.exception.as_deref()),
        (RestartOutcome::Fails, Some("com.fasterxml.jackson.core.io.JsonEOFException"))
    );
    let f = r.findings.iter().find(|f| f.code == crate::report::Code::SinkLogBatchMissing).expect("finding");
    assert!(f.why.contains("fails reading") && !f.why.contains("Unable to find batch"), "{}", f.why);
}

#[test]
fn a_file_sink_beside_the_checkpoint_rules_out_async_progress_tracking() {
    // A hand-deleted batch (offsets/6 and commits/6) with a file sink: an offset-log gap, not async.
    let mut files = generated("sink-log-batch-after-compact-missing-4.1.4");
    files.retain(|(p, _)| {
        !["chk/offsets/6", "chk/offsets/.6.crc", "chk/commits/6", "chk/commits/.6.crc"].contains(&p.as_str())
    });
    let mut a = MemArchive::new("t", files, Limits::default()).expect("archive");
    let r = diagnose(&mut a, &Context::default());
    let c = r.checkpoints.iter().find(|c| c.root == "chk").expect("chk");
    let codes: Vec<_> = c.findings.iter().map(|f| f.code).collect();
    assert!(!codes.contains(&crate::report::Code::AsyncProgressTracking), "{codes:?}");
    assert!(codes.contains(&crate::report::Code::OffsetsGap), "{codes:?}");
}
