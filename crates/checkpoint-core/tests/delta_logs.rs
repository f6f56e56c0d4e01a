//! The `_delta_log` reader on real bytes: the Delta logs of `../shared/cases` (written by Delta Spark for cases
//! 13-17, by delta-rs 1.6.6 for 25-28) and those `tools/delta-logs/gen.py` wrote with delta-rs (`tests/data/delta`).
//! Each is compared with the writer's own record (`<case>.delta_table.json`, `<name>.record.json`) or with what
//! the case's README says the log holds, never with our own output.

use checkpoint_core::delta::reader::read_delta_logs;
use checkpoint_core::delta::table::{CheckpointLayout, DeltaLog};
use checkpoint_core::{Limits, ZipInput};
use serde_json::Value;
use std::path::{Path, PathBuf};

fn shared_cases() -> PathBuf {
    PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/../../../shared/cases"))
}

fn generated() -> PathBuf {
    PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/delta"))
}

fn read(zip: &Path) -> DeltaLog {
    let f = std::fs::File::open(zip).unwrap_or_else(|e| panic!("{}: {e}", zip.display()));
    let len = f.metadata().unwrap().len();
    let mut a = ZipInput::open(f, len, "delta_log.zip", Limits::default()).expect("zip opens");
    let mut logs = read_delta_logs(&mut a);
    assert_eq!(logs.len(), 1, "{}: one _delta_log", zip.display());
    let log = logs.remove(0);
    assert!(log.problems.is_empty(), "{}: {:?}", zip.display(), log.problems);
    log
}

fn json(p: &Path) -> Value {
    serde_json::from_slice(&std::fs::read(p).unwrap()).unwrap()
}

#[test]
fn delta_rs_case_logs_match_the_writers_record() {
    for case in
        ["case-25-delta-busy-version-available", "case-27-delta-table-recreated", "case-28-delta-schema-drop-after-add"]
    {
        let log = read(&shared_cases().join(format!("{case}.delta_log.zip")));
        let rec = json(&shared_cases().join(format!("{case}.delta_table.json")));
        let (_, meta) = log.latest_metadata().expect("metaData");
        assert_eq!(meta.id, rec["table_id"].as_str().unwrap(), "{case}");
        assert_eq!(log.latest_version(), rec["latest_version"].as_i64(), "{case}");
        assert_eq!(log.earliest_commit(), rec["earliest_commit_file"].as_i64(), "{case}");
        assert_eq!(log.earliest_reconstructable(), rec["earliest_available_version"].as_i64(), "{case}");
        let cps: Vec<i64> = rec["checkpoints"].as_array().unwrap().iter().map(|v| v.as_i64().unwrap()).collect();
        assert_eq!(log.checkpoints.keys().copied().collect::<Vec<_>>(), cps, "{case}");
        assert!(log.checkpoints.values().all(|c| c.complete() && c.layout == CheckpointLayout::Classic), "{case}");
        assert_eq!(
            log.last_checkpoint.as_ref().map(|l| l.version),
            rec["last_checkpoint"]["version"].as_i64(),
            "{case}"
        );
        if let Some(n) = rec["last_checkpoint"]["numOfAddFiles"].as_u64() {
            let v = rec["last_checkpoint"]["version"].as_i64().unwrap();
            assert_eq!(log.checkpoints[&v].num_adds, n, "{case}: live files in the checkpoint");
        }
        for (v, ts) in rec["commit_timestamps_ms"].as_object().unwrap() {
            let v: i64 = v.parse().unwrap();
            assert_eq!(log.commits[&v].timestamp(), ts.as_i64(), "{case}: commit {v}");
        }
        for (k, v) in rec["table_properties"].as_object().unwrap() {
            assert_eq!(meta.conf(k), v.as_str(), "{case}: {k}");
        }
        for (v, id) in rec["metadata_ids_in_log"].as_object().unwrap() {
            let v: i64 = v.parse().unwrap();
            assert_eq!(
                log.commits[&v].metadata.as_ref().map(|m| m.id.as_str()),
                id.as_str(),
                "{case}: metaData at {v}"
            );
        }
        for change in rec["schema_changes"].as_array().unwrap() {
            let v = change["version"].as_i64().unwrap();
            let col = change["column"].as_str().unwrap();
            let (_, before) = log.metadata_at(v - 1).unwrap();
            let after = log.commits[&v].metadata.as_ref().unwrap();
            let d = checkpoint_core::delta::schema::diff(&before.schema_string, &after.schema_string, &[], &[], false)
                .unwrap();
            let want = match change["kind"].as_str().unwrap() {
                "add_column" => checkpoint_core::delta::schema::SchemaChange::Added(col.into()),
                "drop_column" => checkpoint_core::delta::schema::SchemaChange::Dropped(col.into()),
                k => panic!("{k}"),
            };
            assert!(d.contains(&want), "{case}: version {v}: {d:?}");
            assert_eq!(want.non_additive(), !change["additive"].as_bool().unwrap());
        }
    }
}

#[test]
fn delta_spark_case_logs_hold_what_the_cases_say() {
    // case 13: "needed v40 vs oldest v50", a 7-day log retention, checkpoint 50 (pyarrow-written v1 layout).
    let log = read(&shared_cases().join("case-13-delta-log-expired.delta_log.zip"));
    assert_eq!(log.earliest_commit(), Some(50));
    assert_eq!(log.earliest_reconstructable(), Some(50));
    assert_eq!(log.checkpoints[&50].num_adds, 50);
    let (_, m) = log.latest_metadata().unwrap();
    assert_eq!(m.id, "60ce0cd1-f78e-5eee-8f82-3272d3873391");
    assert_eq!(m.conf("delta.logRetentionDuration"), Some("interval 7 days"));
    // case 14: "versions 1..2 only, no version 0 and no checkpoint".
    let log = read(&shared_cases().join("case-14-delta-log-truncated-no-checkpoint.delta_log.zip"));
    assert_eq!(log.commits.keys().copied().collect::<Vec<_>>(), vec![1, 2]);
    assert!(log.checkpoints.is_empty() && log.last_checkpoint.is_none());
    assert_eq!(log.earliest_reconstructable(), None);
    // case 16: metaData.id 3998e75d-… in 00000000000000000000.json.
    let log = read(&shared_cases().join("case-16-delta-table-replaced.delta_log.zip"));
    assert_eq!(log.commits[&0].metadata.as_ref().unwrap().id, "3998e75d-2e83-5d3f-a7f8-0b566d598536");
    // case 17: column mapping (name); version 4 is DROP COLUMNS reading.
    let log = read(&shared_cases().join("case-17-delta-schema-change-drop-column.delta_log.zip"));
    assert_eq!(log.latest_metadata().unwrap().1.column_mapping_mode(), "name");
    assert_eq!(log.commits[&4].operation(), "DROP COLUMNS");
    assert_eq!(log.protocol_at(4).map(|(_, p)| (p.min_reader_version, p.min_writer_version)), Some((2, 5)));
}

#[test]
fn generated_delta_rs_logs_match_their_records() {
    for name in ["colmap", "checkpointed"] {
        let log = read(&generated().join(format!("{name}.delta_log.zip")));
        let rec = json(&generated().join(format!("{name}.record.json")));
        let (_, meta) = log.latest_metadata().unwrap();
        assert_eq!(meta.id, rec["table_id"].as_str().unwrap(), "{name}");
        assert_eq!(log.latest_version(), rec["latest_version"].as_i64(), "{name}");
        for (k, v) in rec["configuration"].as_object().unwrap() {
            assert_eq!(meta.conf(k), v.as_str(), "{name}: {k}");
        }
        let (_, p) = log.protocol_at(log.latest_version().unwrap()).unwrap();
        assert_eq!(p.min_reader_version, rec["protocol"]["minReaderVersion"].as_i64().unwrap(), "{name}");
        assert_eq!(p.min_writer_version, rec["protocol"]["minWriterVersion"].as_i64().unwrap(), "{name}");
        let feats = |k: &str| -> Vec<String> {
            rec["protocol"][k]
                .as_array()
                .map(|a| a.iter().map(|x| x.as_str().unwrap().to_string()).collect())
                .unwrap_or_default()
        };
        assert_eq!(p.reader_features, feats("readerFeatures"), "{name}");
        assert_eq!(p.writer_features, feats("writerFeatures"), "{name}");
        for h in rec["history"].as_array().unwrap() {
            let v = h["version"].as_i64().unwrap();
            if let Some(c) = log.commits.get(&v) {
                assert_eq!(c.timestamp(), h["timestamp"].as_i64(), "{name}: commit {v}");
                assert_eq!(
                    c.commit_info.as_ref().and_then(|i| i.operation.as_deref()),
                    h["operation"].as_str(),
                    "{name}: {v}"
                );
            }
        }
        let files: Vec<String> =
            rec["log_files"].as_array().unwrap().iter().map(|f| f.as_str().unwrap().to_string()).collect();
        let commits: Vec<i64> =
            files.iter().filter_map(|f| f.strip_prefix("_delta_log/")?.strip_suffix(".json")?.parse().ok()).collect();
        assert_eq!(log.commits.keys().copied().collect::<Vec<_>>(), commits, "{name}");
        let cps: Vec<i64> = files
            .iter()
            .filter_map(|f| f.strip_prefix("_delta_log/")?.strip_suffix(".checkpoint.parquet")?.parse().ok())
            .collect();
        assert_eq!(log.checkpoints.keys().copied().collect::<Vec<_>>(), cps, "{name}");
        assert!(
            log.checkpoints.values().all(|c| c.complete() && c.metadata.is_some() && c.protocol.is_some()),
            "{name}"
        );
    }
    // `checkpointed`: log cleanup left the checkpoint at 10 and commit 10 only, so 10 is the earliest version.
    let log = read(&generated().join("checkpointed.delta_log.zip"));
    assert_eq!(log.earliest_reconstructable(), Some(10));
    assert_eq!(log.commits[&10].operation(), "DELETE");
    // `colmap`: column mapping by name: physical names in the schema.
    let log = read(&generated().join("colmap.delta_log.zip"));
    let cols = checkpoint_core::delta::schema::columns(&log.latest_metadata().unwrap().1.schema_string).unwrap();
    assert!(cols.iter().all(|c| c.physical_name.as_deref().is_some_and(|p| p.starts_with("col-"))), "{cols:?}");
}
