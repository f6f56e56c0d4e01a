//! The Delta ways out of the restart plan on the shared Delta cases (real `_delta_log`s): what Delta's options
//! mean decides the expectations (a `startingVersion` the log still holds, `failOnDataLoss=false` as a
//! silent gap, `startingVersion` honoured only on a new checkpoint), not our own output.

use checkpoint_core::delta::reader::read_delta_logs;
use checkpoint_core::restart_plan::WayOutKind;
use checkpoint_core::{diagnose, Context, Limits, ZipInput};
use std::path::PathBuf;

fn case(name: &str, now: &str) -> checkpoint_core::report::CheckpointReport {
    let dir = PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/../../../shared/cases"));
    let open = |p: PathBuf| {
        let f = std::fs::File::open(&p).unwrap();
        let len = f.metadata().unwrap().len();
        ZipInput::open(f, len, "case.zip", Limits::default()).unwrap()
    };
    let mut ctx = Context { now_ms: Some(checkpoint_core::time::parse_now(now).unwrap()), ..Default::default() };
    ctx.delta_logs = read_delta_logs(&mut open(dir.join(format!("{name}.delta_log.zip"))));
    let mut r = diagnose(&mut open(dir.join(format!("{name}.zip"))), &ctx);
    r.checkpoints.remove(0)
}

#[test]
fn an_expired_version_gets_a_start_the_log_still_holds_and_a_silent_gap_is_called_one() {
    // Case 13: the stream needs version 40; the log holds commits 50..55 (checkpoint 50).
    let c = case("case-13-delta-log-expired", "2026-11-30T00:00:00Z");
    let plan = c.restart_plan.expect("a failing verdict has a plan");
    let fresh =
        plan.ways_out.iter().find(|w| w.kind == WayOutKind::NewCheckpointBoundedStart).expect("a new checkpoint");
    let start = fresh.options.iter().find(|o| o.key == "startingVersion").expect("startingVersion");
    let v: i64 = start.value.parse().unwrap();
    assert!((50..=55).contains(&v), "startingVersion {v} must be a version the log holds");
    assert!(start.fresh_checkpoint_only, "Delta reads startingVersion only without a checkpoint");
    assert!(fresh.data_loss, "versions 40..49 are skipped");
    assert!(fresh.options.iter().any(|o| o.key == "maxBytesPerTrigger"));
    assert!(fresh.recompute_after_ms.is_some(), "a computed start goes stale");
    let gap = plan.ways_out.iter().find(|w| w.kind == WayOutKind::FailOnDataLossFalse).expect("failOnDataLoss=false");
    assert!(
        gap.data_loss
            && gap.options.iter().any(|o| o.key == "failOnDataLoss" && o.value == "false" && !o.fresh_checkpoint_only)
    );
    assert!(gap.snippets.iter().any(|s| s.language == "pyspark") && gap.snippets.iter().any(|s| s.language == "scala"));
    // Ranked safest first: the silent gap before a new checkpoint, and no "repair in place" for a lost version.
    assert!(gap.rank < fresh.rank);
    assert!(plan.ways_out.iter().all(|w| w.kind != WayOutKind::RepairInPlace));
}

#[test]
fn a_replaced_table_starts_a_new_checkpoint_at_its_first_version() {
    let c = case("case-27-delta-table-recreated", "2026-11-30T12:00:00Z");
    let plan = c.restart_plan.unwrap();
    let fresh = plan.ways_out.iter().find(|w| w.kind == WayOutKind::NewCheckpointBoundedStart).unwrap();
    assert!(fresh.options.iter().any(|o| o.key == "startingVersion" && o.value == "0"));
    assert!(
        plan.ways_out.iter().all(|w| w.kind != WayOutKind::FailOnDataLossFalse),
        "failOnDataLoss does not cross a table id change"
    );
}

#[test]
fn a_drop_on_a_table_without_column_mapping_starts_after_the_change() {
    // Case 28: the drop is at version 7; schemaTrackingLocation needs column mapping, skipChangeCommits does not pass a schema error.
    let c = case("case-28-delta-schema-drop-after-add", "2026-11-30T12:00:00Z");
    let plan = c.restart_plan.unwrap();
    let fresh = plan.ways_out.iter().find(|w| w.kind == WayOutKind::NewCheckpointBoundedStart).unwrap();
    assert!(fresh.options.iter().any(|o| o.key == "startingVersion" && o.value == "8"));
    assert!(plan
        .ways_out
        .iter()
        .all(|w| !w.options.iter().any(|o| o.key == "schemaTrackingLocation" || o.key == "skipChangeCommits")));
    // Case 17 has column mapping: schemaTrackingLocation keeps the checkpoint.
    let c = case("case-17-delta-schema-change-drop-column", "2026-11-30T12:00:00Z");
    let plan = c.restart_plan.unwrap();
    assert!(plan
        .ways_out
        .iter()
        .any(|w| w.kind == WayOutKind::RepairInPlace && w.options.iter().any(|o| o.key == "schemaTrackingLocation")));
}
