//! The Delta ways out of the restart plan on the shared Delta cases (real `_delta_log`s): what Delta's options
//! mean decides the expectations (a `startingVersion` the log still holds, `failOnDataLoss=false` as a
//! silent gap, `startingVersion` honoured only on a new checkpoint), not our own output.

use checkpoint_core::archive::Archive;
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

/// A replaced table is read from its current snapshot: no startingVersion (Delta's `getStartingVersion` checks
/// a startingVersion exists, DELTA_VERSION_NOT_FOUND once commit 0 is cleaned up, and a start before a commit
/// that removes files stops there).
#[test]
fn a_replaced_table_starts_a_new_checkpoint_from_its_current_snapshot() {
    let c = case("case-27-delta-table-recreated", "2026-11-30T12:00:00Z");
    let plan = c.restart_plan.unwrap();
    let fresh = plan
        .ways_out
        .iter()
        .find(|w| matches!(w.kind, WayOutKind::NewCheckpointBoundedStart | WayOutKind::NewCheckpoint))
        .unwrap();
    assert!(fresh.options.iter().all(|o| o.key != "startingVersion"), "{:?}", fresh.options);
    assert!(fresh.options.iter().any(|o| o.key == "maxBytesPerTrigger"));
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

/// Case 13 with its last committed batch moved past the gap: offsets/12 ends at version 50, which the log holds,
/// and offsets/11 at 39, which it lost. A restart still reads from 39: Spark calls `getBatch(offsets/11,
/// offsets/12)` on every V1 source even when batch 12 is committed (MicroBatchExecution.populateStartOffsets),
/// and DeltaSource.getBatch lists the commits from 39 (DeltaLog.getChangeLogFiles fails on the gap). The unread
/// data starts at 50: a new checkpoint there skips nothing, and failOnDataLoss=false loses no unread version.
/// Case 13's checkpoint files, each `(file, from, to)` edit applied, and its table's log.
fn case13_with(edits: &[(&str, &str, &str)]) -> (Vec<(String, Vec<u8>)>, Vec<checkpoint_core::delta::table::DeltaLog>) {
    case_with("case-13-delta-log-expired", edits)
}

/// A shared case's checkpoint files, each `(file, from, to)` edit applied, and its table's log.
fn case_with(
    name: &str,
    edits: &[(&str, &str, &str)],
) -> (Vec<(String, Vec<u8>)>, Vec<checkpoint_core::delta::table::DeltaLog>) {
    let dir = PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/../../../shared/cases"));
    let zip = |p: PathBuf| {
        let f = std::fs::File::open(&p).unwrap();
        let len = f.metadata().unwrap().len();
        ZipInput::open(f, len, "case.zip", Limits::default()).unwrap()
    };
    let mut z = zip(dir.join(format!("{name}.zip")));
    let names: Vec<String> = z.entries().iter().map(|e| e.path.clone()).collect();
    let mut files = Vec::new();
    for n in names {
        let mut text = String::from_utf8(z.read(&n, 1 << 20).unwrap()).unwrap();
        for (file, from, to) in edits {
            if n == *file {
                assert!(text.contains(from), "{n}: {from}");
                text = text.replace(from, to);
            }
        }
        files.push((n, text.into_bytes()));
    }
    (files, read_delta_logs(&mut zip(dir.join(format!("{name}.delta_log.zip")))))
}

/// Case 28 (a drop at version 7, no column mapping) with its last committed batch past the change (offsets/2 ends
/// at version 9; with Delta's unsafe flags a stream can read across it): the restart re-lists the versions from
/// offsets/1 (2) and fails at 7 as before, but a NEW checkpoint starts where the unread data starts (9), not at 8
/// (version 8 was read), and skips nothing.
#[test]
fn a_schema_change_the_last_batch_read_is_behind_a_new_checkpoint_start() {
    let (files, logs) = case_with(
        "case-28-delta-schema-drop-after-add",
        &[("offsets/2", "\"reservoirVersion\":3", "\"reservoirVersion\":9")],
    );
    let c = diagnose_files(files, logs, "2026-11-30T12:00:00Z");
    let f = c.findings.iter().find(|f| f.code.as_str() == "delta-schema-change").expect("the change at 7");
    assert!(f.restart_failure.is_some() && f.title.contains("version 7"), "{}", f.title);
    let text = f.fix.join("\n");
    assert!(text.contains(".option(\"startingVersion\", \"9\")"), "{text}");
    assert!(text.contains("nothing unread is skipped") && !text.contains("versions 9..7"), "{text}");
    let plan = c.restart_plan.unwrap();
    let fresh = plan.ways_out.iter().find(|w| w.kind == WayOutKind::NewCheckpointBoundedStart).unwrap();
    assert!(fresh.options.iter().any(|o| o.key == "startingVersion" && o.value == "9"), "{:?}", fresh.options);
    assert!(!fresh.data_loss, "{:?}", fresh.costs);
    // Unedited (the batch ends at 3, before the change): versions 3..7 are skipped, from 8 on.
    let (files, logs) = case_with("case-28-delta-schema-drop-after-add", &[]);
    let c = diagnose_files(files, logs, "2026-11-30T12:00:00Z");
    let f = c.findings.iter().find(|f| f.code.as_str() == "delta-schema-change").unwrap();
    assert!(f.fix.join("\n").contains("\"8\") (versions 3..7 are not read)"), "{:?}", f.fix);
}

fn diagnose_files(
    files: Vec<(String, Vec<u8>)>,
    logs: Vec<checkpoint_core::delta::table::DeltaLog>,
    now: &str,
) -> checkpoint_core::report::CheckpointReport {
    diagnose_files_on(files, logs, now, None)
}

/// [`diagnose_files`] with the restart's Spark version given.
fn diagnose_files_on(
    files: Vec<(String, Vec<u8>)>,
    logs: Vec<checkpoint_core::delta::table::DeltaLog>,
    now: &str,
    spark: Option<&str>,
) -> checkpoint_core::report::CheckpointReport {
    let mut ctx = Context {
        now_ms: Some(checkpoint_core::time::parse_now(now).unwrap()),
        spark_version: spark.map(|v| v.parse().unwrap()),
        ..Default::default()
    };
    ctx.delta_logs = logs;
    let mut a = checkpoint_core::archive::MemArchive::new("in.zip", files, Limits::default()).unwrap();
    diagnose(&mut a, &ctx).checkpoints.remove(0)
}

#[test]
fn a_restart_reads_the_log_from_the_batch_before_the_latest() {
    let (files, logs) = case13_with(&[("offsets/12", "\"reservoirVersion\":40", "\"reservoirVersion\":50")]);
    let c = diagnose_files(files, logs, "2026-11-27T00:00:00Z");
    let expired = c.findings.iter().find(|f| f.code.as_str() == "delta-version-expired").expect("version 39 is gone");
    assert!(expired.restart_failure.is_some());
    assert_eq!(c.restart.error_class.as_deref(), Some("DELTA_MISSING_FILES_UNEXPECTED_VERSION"));
    assert!(expired.evidence.iter().any(|e| e.path == "offsets/11"), "{:?}", expired.evidence);
    let text = expired.fix.join("\n");
    assert!(text.contains("no unread version is skipped"), "{text}");
    let plan = c.restart_plan.expect("a failing verdict has a plan");
    let fresh = plan.ways_out.iter().find(|w| w.kind == WayOutKind::NewCheckpointBoundedStart).unwrap();
    assert!(fresh.options.iter().any(|o| o.key == "startingVersion" && o.value == "50"), "{:?}", fresh.options);
    let gap = plan.ways_out.iter().find(|w| w.kind == WayOutKind::FailOnDataLossFalse).unwrap();
    assert!(gap.costs.iter().any(|c| c.starts_with("No unread version is lost")), "{:?}", gap.costs);
    assert!(gap.steps.iter().any(|s| s.contains("two batches have committed")));
}

/// The offsets of the batch before the latest are read back on every restart, so one Delta cannot read fails it
/// even when the latest batch is committed (DeltaSourceOffset's deserializer: sourceVersion 4 is unknown).
#[test]
fn an_unreadable_offset_of_the_batch_before_the_latest_fails_the_restart() {
    let (files, _) = case13_with(&[("offsets/11", "\"sourceVersion\":1", "\"sourceVersion\":4")]);
    let c = diagnose_files(files, Vec::new(), "2026-11-20T00:00:00Z");
    assert_eq!(c.restart.error_class.as_deref(), Some("DELTA_INVALID_FORMAT_FROM_SOURCE_VERSION"));
    let f = c.findings.iter().find(|f| f.code.as_str() == "delta-offset-invalid").unwrap();
    assert_eq!(f.severity, checkpoint_core::report::Severity::Error);
    // An uncommitted batch whose end moved back is re-run without Delta's order check: duplicates, no failure.
    let (mut files, _) = case13_with(&[("offsets/11", "\"reservoirVersion\":39", "\"reservoirVersion\":41")]);
    files.retain(|(n, _)| n != "commits/12");
    let c = diagnose_files(files, Vec::new(), "2026-11-20T00:00:00Z");
    let f = c.findings.iter().find(|f| f.code.as_str() == "delta-offset-moved-back").unwrap();
    assert_eq!(f.severity, checkpoint_core::report::Severity::Warning);
    assert!(f.restart_failure.is_none() && c.restart.error_class.is_none(), "{:?}", c.restart);
}

/// Past its retention window, a version the given log still holds is a warning, not a failure: Delta's cleanup
/// deletes only below the newest checkpoint, after a checkpoint is written (MetadataCleanup.listExpiredDeltaLogs),
/// and case 13's log holds 50..55 with its checkpoint at 50.
#[test]
fn a_version_past_retention_that_the_log_still_holds_is_a_warning() {
    let (files, logs) = case13_with(&[
        ("offsets/11", "\"reservoirVersion\":39", "\"reservoirVersion\":51"),
        ("offsets/12", "\"reservoirVersion\":40", "\"reservoirVersion\":52"),
    ]);
    let c = diagnose_files(files, logs, "2026-12-05T00:00:00Z");
    let f = c.findings.iter().find(|f| f.code.as_str() == "delta-retention-countdown").expect("countdown");
    assert_eq!(f.severity, checkpoint_core::report::Severity::Warning, "{}", f.title);
    assert!(f.restart_failure.is_none() && f.title.contains("the log still holds it"), "{}", f.title);
    assert_eq!(c.restart.outcome, checkpoint_core::report::RestartOutcome::Resumes);
    assert!(f.fix[0].starts_with("Restart now"), "{:?}", f.fix);
}

/// A column-mapping table (delta-rs's `colmap` log) whose commits 0..2 are gone, read by a stream whose restart
/// starts at version 1: Delta checks the schema changes on the snapshot at version 1 before it lists a commit
/// (DeltaSource.checkReadIncompatibleSchemaChangeOnStreamStartOnce) and fails with
/// DELTA_STREAMING_CHECK_COLUMN_MAPPING_NO_SNAPSHOT, which failOnDataLoss=false does not pass (a reviewer's
/// reading of delta-io/delta, DeltaErrors.failedToGetSnapshotDuringColumnMappingStreamingReadCheck).
#[test]
fn a_column_mapping_table_without_the_start_snapshot_fails_its_schema_check_first() {
    let dir = PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/delta"));
    let f = std::fs::File::open(dir.join("colmap.delta_log.zip")).unwrap();
    let len = f.metadata().unwrap().len();
    let mut z = ZipInput::open(f, len, "colmap.zip", Limits::default()).unwrap();
    let names: Vec<String> = z.entries().iter().map(|e| e.path.clone()).collect();
    let kept: Vec<(String, Vec<u8>)> = names
        .into_iter()
        .filter(|n| {
            !["00000000000000000000.json", "00000000000000000001.json", "00000000000000000002.json"]
                .iter()
                .any(|c| n.ends_with(c))
        })
        .map(|n| {
            let b = z.read(&n, 1 << 24).unwrap();
            (n, b)
        })
        .collect();
    let mut a = checkpoint_core::archive::MemArchive::new("log.zip", kept, Limits::default()).unwrap();
    let logs = read_delta_logs(&mut a);
    let id = logs[0].latest_metadata().unwrap().1.id.clone();
    let (files, _) = case13_with(&[
        ("offsets/11", "\"reservoirVersion\":39", "\"reservoirVersion\":1"),
        ("offsets/12", "\"reservoirVersion\":40", "\"reservoirVersion\":2"),
        ("offsets/11", "60ce0cd1-f78e-5eee-8f82-3272d3873391", &id),
        ("offsets/12", "60ce0cd1-f78e-5eee-8f82-3272d3873391", &id),
    ]);
    let c = diagnose_files(files, logs, "2026-12-02T00:00:00Z");
    assert_eq!(
        c.restart.error_class.as_deref(),
        Some("DELTA_STREAMING_CHECK_COLUMN_MAPPING_NO_SNAPSHOT"),
        "{:?}",
        c.restart
    );
    assert_eq!(c.restart.exception.as_deref(), Some("org.apache.spark.sql.delta.DeltaAnalysisException"));
    let plan = c.restart_plan.expect("a plan");
    assert!(
        plan.ways_out.iter().all(|w| w.kind != WayOutKind::FailOnDataLossFalse),
        "failOnDataLoss does not pass the check"
    );
    // The way past it on this checkpoint: the unsafe conf, with failOnDataLoss=false as versions 1..2 are gone.
    let w = plan
        .ways_out
        .iter()
        .find(|w| w.steps.iter().any(|s| s.contains("unsafeReadOnIncompatibleColumnMappingSchemaChanges.enabled=true")))
        .expect("the unsafe conf's way out");
    assert!(w.kind == WayOutKind::RepairInPlace && w.data_loss, "{w:?}");
}

/// With spark.databricks.delta.streaming.schemaTracking.enabled=false Delta raises the plain
/// DELTA_STREAMING_INCOMPATIBLE_SCHEMA_CHANGE and refuses a schemaTrackingLocation
/// (DeltaDataSource.getMetadataTrackingLogForDeltaSource: "Schema tracking location is not supported"): the way
/// out turns tracking back on first (case 17: a column-mapping table with a dropped column).
#[test]
fn schema_tracking_turned_off_is_turned_back_on_first() {
    let dir = PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/../../../shared/cases"));
    let open = |p: PathBuf| {
        let f = std::fs::File::open(&p).unwrap();
        let len = f.metadata().unwrap().len();
        ZipInput::open(f, len, "case.zip", Limits::default()).unwrap()
    };
    let name = "case-17-delta-schema-change-drop-column";
    let mut ctx = Context {
        now_ms: Some(checkpoint_core::time::parse_now("2026-11-30T12:00:00Z").unwrap()),
        ..Default::default()
    };
    ctx.session_conf.insert("spark.databricks.delta.streaming.schemaTracking.enabled".into(), "false".into());
    ctx.delta_logs = read_delta_logs(&mut open(dir.join(format!("{name}.delta_log.zip"))));
    let c = diagnose(&mut open(dir.join(format!("{name}.zip"))), &ctx).checkpoints.remove(0);
    assert_eq!(c.restart.error_class.as_deref(), Some("DELTA_STREAMING_INCOMPATIBLE_SCHEMA_CHANGE"));
    let f = c.findings.iter().find(|f| f.code.as_str() == "delta-schema-change").unwrap();
    assert!(f
        .fix
        .iter()
        .any(|s| s.starts_with("Set spark.databricks.delta.streaming.schemaTracking.enabled back to true")));
    let plan = c.restart_plan.unwrap();
    let w = plan
        .ways_out
        .iter()
        .find(|w| w.options.iter().any(|o| o.key == "schemaTrackingLocation"))
        .expect("the schema tracking way out");
    assert!(w.steps[0].contains("schemaTracking.enabled back to true"), "{:?}", w.steps);
}

/// Case 17 with a schema tracking log of its table whose entries are `entries` (sequence number, text), on the
/// given Spark version: the `delta-schema-tracking-log` finding.
fn schema_log_finding(entries: &[(i64, &str)], spark: &str) -> checkpoint_core::report::Finding {
    let (mut files, logs) = case_with("case-17-delta-schema-change-drop-column", &[]);
    let dir = "_schema_tracking/_schema_log_7cdeb771-6009-5df2-8293-142bb3a91275";
    for (seq, text) in entries {
        files.push((format!("{dir}/{seq}"), text.as_bytes().to_vec()));
    }
    let mut c = diagnose_files_on(files, logs, "2026-11-30T00:00:00Z", Some(spark));
    let i = c.findings.iter().position(|f| f.code.as_str() == "delta-schema-tracking-log").expect("the finding");
    c.findings.remove(i)
}

const ENTRY: &str = "v1\n{\"tableId\":\"7cdeb771-6009-5df2-8293-142bb3a91275\",\"deltaCommitVersion\":3,\"dataSchemaJson\":\"{\\\"type\\\":\\\"struct\\\",\\\"fields\\\":[]}\",\"partitionSchemaJson\":\"{\\\"type\\\":\\\"struct\\\",\\\"fields\\\":[]}\",\"sourceMetadataPath\":\"/chk/sources/0\"}";

/// Delta reads a schema tracking log's latest entry, and the one before it, when the stream starts
/// (`DeltaSourceMetadataTrackingLog.create`); its deserializer raises DELTA_STREAMING_SCHEMA_LOG_DESERIALIZE_FAILED
/// only for an entry with no line (`JsonSchemaSerializer.deserialize`), Spark's version check and Jackson's
/// exceptions otherwise. An older entry that does not read fails nothing.
#[test]
fn a_schema_tracking_log_fails_a_restart_only_on_the_entries_delta_reads() {
    use checkpoint_core::report::Severity;
    let fails = |f: &checkpoint_core::report::Finding| {
        f.restart_failure.as_ref().map(|r| (r.error_class.clone(), r.exception.clone()))
    };
    // An older entry in pieces: read by nobody.
    let f = schema_log_finding(&[(0, ENTRY), (1, "v1\n{\"tableId\":"), (2, ENTRY), (3, ENTRY)], "3.5.7");
    assert_eq!(f.severity, Severity::Info, "{f:?}");
    assert!(fails(&f).is_none());
    assert!(
        f.evidence.iter().any(|e| e.path.ends_with("/1") && e.detail.contains("an older entry")),
        "{:?}",
        f.evidence
    );
    // The latest entry empty: the one class Delta's deserializer raises.
    let f = schema_log_finding(&[(0, ENTRY), (1, "")], "3.5.7");
    assert_eq!(f.severity, Severity::Error);
    assert_eq!(
        fails(&f),
        Some((
            Some("DELTA_STREAMING_SCHEMA_LOG_DESERIALIZE_FAILED".into()),
            "org.apache.spark.sql.delta.DeltaRuntimeException".into()
        ))
    );
    // Its JSON cut: Jackson's exception, no class.
    let f = schema_log_finding(&[(0, ENTRY), (1, "v1\n{\"tableId\":")], "3.5.7");
    assert_eq!(fails(&f), Some((None, "com.fasterxml.jackson.core.JsonParseException".into())));
    // The entry before the latest is read too (to compare the two).
    let f = schema_log_finding(&[(0, "v1\n{\"tableId\":"), (1, ENTRY)], "3.5.7");
    assert_eq!(f.severity, Severity::Error);
    assert!(f.evidence.iter().any(|e| e.detail.starts_with("the entry before the latest")), "{:?}", f.evidence);
    // A version line of a newer writer, by Spark version: the log version check's class on 4.x.
    let v2 = ENTRY.replacen("v1", "v2", 1);
    let f = schema_log_finding(&[(0, &v2)], "4.1.4");
    assert_eq!(
        fails(&f),
        Some((
            Some("INVALID_LOG_VERSION.MAX_SUPPORTED_VERSION".into()),
            "org.apache.spark.SparkIllegalStateException".into()
        ))
    );
    let f = schema_log_finding(&[(0, &v2)], "3.5.7");
    assert_eq!(fails(&f), Some((None, "java.lang.IllegalStateException".into())));
    // Only the version line: Delta reads `{}`, a null tableId, and the latest entry's table id check refuses it.
    let f = schema_log_finding(&[(0, "v1")], "3.5.7");
    assert_eq!(fails(&f).and_then(|c| c.0).as_deref(), Some("DELTA_STREAMING_SCHEMA_LOG_INCOMPATIBLE_DELTA_TABLE_ID"));
}

/// Case 17 (a column dropped on a column-mapping table) and case 28 (a commit that removes files) on each Spark
/// line, with the Delta release it runs (delta-io/delta build files; `delta::release`): the class a restart
/// raises, and ways out that exist on that Delta (reader options to acknowledge a drop only from Delta 4.0, SQL
/// confs before; schema tracking behind an internal conf in 2.4, absent before; skipChangeCommits from 2.4).
#[test]
fn the_delta_release_of_the_spark_line_decides_the_class_and_the_ways_out() {
    let run = |name: &str, spark: &str| {
        let (files, logs) = case_with(name, &[]);
        diagnose_files_on(files, logs, "2026-11-30T00:00:00Z", Some(spark))
    };
    let cm = "case-17-delta-schema-change-drop-column";
    let tracking = |c: &checkpoint_core::report::CheckpointReport| {
        c.restart_plan
            .as_ref()
            .unwrap()
            .ways_out
            .iter()
            .find(|w| w.options.iter().any(|o| o.key == "schemaTrackingLocation"))
            .cloned()
    };
    // Spark 4.1 (Delta 4.x): the reader options.
    let c = run(cm, "4.1.4");
    assert_eq!(c.restart.error_class.as_deref(), Some("DELTA_STREAMING_INCOMPATIBLE_SCHEMA_CHANGE_USE_SCHEMA_LOG"));
    assert!(tracking(&c).unwrap().steps.iter().any(|s| s.contains(".option(\"allowSourceColumnDrop\", \"always\")")));
    // Spark 3.5 (Delta 3.x): the same class; the acknowledgement is a SQL conf (the option does not exist).
    let c = run(cm, "3.5.7");
    assert_eq!(c.restart.error_class.as_deref(), Some("DELTA_STREAMING_INCOMPATIBLE_SCHEMA_CHANGE_USE_SCHEMA_LOG"));
    let steps = tracking(&c).unwrap().steps.join("\n");
    assert!(steps.contains("spark.databricks.delta.streaming.allowSourceColumnDrop=always"), "{steps}");
    assert!(!steps.contains(".option(\"allowSourceColumnDrop\", \"always\")"), "{steps}");
    // Spark 3.4 (Delta 2.4): tracking is off unless its internal conf is set, so the plain class; the way out
    // turns that conf on first.
    let c = run(cm, "3.4.4");
    assert_eq!(c.restart.error_class.as_deref(), Some("DELTA_STREAMING_INCOMPATIBLE_SCHEMA_CHANGE"));
    assert!(tracking(&c).unwrap().steps[0].contains("nonAdditiveSchemaEvolution.enabled=true"));
    // Spark 3.3 (Delta 2.1–2.3): blocked, no schema tracking way out.
    let c = run(cm, "3.3.4");
    assert_eq!(c.restart.error_class.as_deref(), Some("DELTA_BLOCK_COLUMN_MAPPING_SCHEMA_INCOMPATIBLE_OPERATION"));
    assert_eq!(
        c.restart.exception.as_deref(),
        Some("org.apache.spark.sql.delta.DeltaColumnMappingUnsupportedSchemaIncompatibleException")
    );
    assert!(tracking(&c).is_none());
    let f = c.findings.iter().find(|f| f.code.as_str() == "delta-schema-change").unwrap();
    assert!(f.why.contains("On Delta 2.1–2.3 (Spark 3.3; read as 2.3) Delta raises this as"), "{}", f.why);
    // A commit that removes files: skipChangeCommits from Delta 2.4, ignoreChanges (duplicates) before.
    let na = "case-28-delta-schema-drop-after-add";
    for (spark, key) in [("3.5.7", "skipChangeCommits"), ("3.3.4", "ignoreChanges")] {
        let f = run(na, spark);
        let fix = f.findings.iter().find(|f| f.code.as_str() == "delta-schema-change").unwrap().fix.join("\n");
        assert!(fix.contains(&format!(".option(\"{key}\", \"true\")")), "{spark}: {fix}");
    }
}
