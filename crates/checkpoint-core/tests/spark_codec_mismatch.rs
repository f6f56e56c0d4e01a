//! State files compressed with another codec than the one a restart reads them with, restarted with real Spark
//! (tests/data/spark/codec-mismatch-*, written by tools/spark-gen/codec_mismatch.py on Spark 3.5, 4.1 and 4.3):
//! the prediction equals what Spark did (outcome, error class, or exception when Spark named no class), from the
//! files alone and with Spark's error text pasted; a failure has one `state-codec-mismatch` finding naming the
//! offsets file and the state files with their codec; and its way out (record the writers' codec in the latest
//! offsets file) is the change after which Spark resumed (`hdfs-snappy-unrecorded-fixed`).

mod common;

use checkpoint_core::report::{CheckpointReport, Code};
use common::spark_gen::{check_prediction, context, data_dir, error_text, records, run};
use serde_json::Value;

const CODEC_CONF: &str = "spark.sql.streaming.stateStore.compression.codec";

/// A failed restart has one `state-codec-mismatch` finding: the latest offsets file, then state files in the codec
/// they were written with at byte 0; its way out records that codec in the latest offsets file. A restart that
/// went on has none.
fn check_finding(cp: &CheckpointReport, j: &Value) -> Result<(), String> {
    let found: Vec<_> = cp.findings.iter().filter(|f| f.code == Code::StateCodecMismatch).collect();
    if j["restart_outcome"]["ok"].as_bool() == Some(true) {
        return match found.as_slice() {
            [] => Ok(()),
            [f, ..] => Err(format!("Spark resumed, yet {:?}", f.title)),
        };
    }
    let [f] = found.as_slice() else { return Err(format!("{} state-codec-mismatch findings, want 1", found.len())) };
    let written = j["mutation"]["written_with"].as_str().unwrap();
    let offsets = format!("offsets/{}", j["facts"]["last_offset_batch"]);
    if f.evidence.first().map(|e| e.path.as_str()) != Some(offsets.as_str()) {
        return Err(format!("the first evidence is not {offsets}: {:?}", f.evidence.first()));
    }
    let state: Vec<_> = f.evidence.iter().skip(1).collect();
    if state.is_empty()
        || !state.iter().all(|e| {
            e.path.starts_with("state/")
                && e.offset == Some(0)
                && e.detail.starts_with(&format!("compressed with {written} "))
        })
    {
        return Err(format!("the state files' evidence: {state:?}"));
    }
    let edit = format!("\"{CODEC_CONF}\":\"{written}\"");
    if !f.fix.iter().any(|s| s.contains(&edit) && s.contains(&offsets)) {
        return Err(format!("no step adds {edit} to {offsets}: {:?}", f.fix));
    }
    Ok(())
}

#[test]
fn predictions_match_what_spark_did() {
    let mut errs = Vec::new();
    let all = records("codec-mismatch-", 15);
    for (name, j) in &all {
        let zip = data_dir().join(format!("{name}.zip"));
        let ro = &j["restart_outcome"];
        let a = run(&zip, &context(j, None));
        if let Err(e) = check_prediction(&a, ro).and_then(|_| check_finding(&a, j)) {
            errs.push(format!("{name} [A]: {e}"));
        }
        if ro["ok"].as_bool() == Some(false) {
            let b = run(&zip, &context(j, Some(error_text(ro))));
            if let Err(e) = check_prediction(&b, ro) {
                errs.push(format!("{name} [B]: {e}"));
            }
            if !b.findings.iter().any(|f| f.code == Code::StateCodecMismatch && f.explains_error_text) {
                errs.push(format!("{name} [B]: state-codec-mismatch does not explain Spark's error text"));
            }
        }
    }
    assert!(errs.is_empty(), "{}", errs.join("\n"));
    // Spark failed on every mismatch and went on after the way out, on each release.
    for (name, j) in &all {
        let fails = name.contains("-unrecorded-") && !name.contains("-lz4-") && !name.contains("-fixed-")
            || name.contains("-recorded-lz4-");
        assert_eq!(j["restart_outcome"]["ok"].as_bool(), Some(!fails), "{name}: what the generator recorded");
    }
}

/// The way out is the very edit after which Spark resumed: the latest offsets file records the writers' codec.
#[test]
fn the_way_out_is_what_spark_resumed_after() {
    let all = records("codec-mismatch-", 15);
    for (name, j) in all.iter().filter(|(n, _)| n.contains("-unrecorded-fixed-")) {
        assert_eq!(j["restart_outcome"]["ok"].as_bool(), Some(true), "{name}");
        let latest = &j["facts"]["last_offset_metadata"]["conf"][CODEC_CONF];
        assert_eq!(latest.as_str(), j["mutation"]["written_with"].as_str(), "{name}");
        // Its checkpoint before the edit is the `-unrecorded-` one of the same release, which Spark failed on.
        let before = name.replace("-unrecorded-fixed-", "-unrecorded-");
        let (_, b) = all.iter().find(|(n, _)| *n == before).expect("the checkpoint before the fix");
        assert_eq!(b["restart_outcome"]["ok"].as_bool(), Some(false), "{before}");
    }
}

/// Before Spark 3.1 state files followed `spark.io.compression.codec`, which no file records: a restart on such a
/// release reads with a codec this inspector cannot know, so it says nothing about the codec.
#[test]
fn before_spark_3_1_the_codec_is_not_known() {
    for (name, j) in records("codec-mismatch-hdfs-snappy-unrecorded-", 1) {
        let mut ctx = context(&j, None);
        ctx.spark_version = Some("3.0.3".parse().unwrap());
        let r = run(&data_dir().join(format!("{name}.zip")), &ctx);
        assert!(r.findings.iter().all(|f| f.code != Code::StateCodecMismatch), "{name}: {:?}", r.findings);
    }
}
