//! The `readChangeFeed` and `snapshotStartBatchId` options against real Spark: for every case Spark 4.3.0's State
//! Data Source answered over the shared fixtures (tools/spark-gen/state_change_feed.py, answers in
//! tests/data/spark/state-change-feed/), our rows equal Spark's (order-insensitive, timestamps as instants) or
//! our error has Spark's error class.

#[path = "support/canon.rs"]
mod canon;
use canon::multiset;

mod common;

use checkpoint_core::state::{read_state, JoinSide, StateQuery};
use serde_json::Value;
use std::path::PathBuf;

fn answers() -> PathBuf {
    PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/spark/state-change-feed"))
}

/// Spark's options (all strings) as a [`StateQuery`]; every option the generator uses is mapped.
fn query(opts: &serde_json::Map<String, Value>) -> StateQuery {
    let mut q = StateQuery::default();
    let num = |v: &Value| v.as_str().unwrap().parse::<i64>().unwrap();
    for (k, v) in opts {
        match k.as_str() {
            "operatorId" => q.operator_id = num(v),
            "storeName" => q.store_name = v.as_str().unwrap().to_string(),
            "batchId" => q.batch_id = Some(num(v)),
            "joinSide" => q.join_side = Some(if v == "right" { JoinSide::Right } else { JoinSide::Left }),
            "readChangeFeed" => q.read_change_feed = v == "true",
            "changeStartBatchId" => q.change_start_batch_id = Some(num(v)),
            "changeEndBatchId" => q.change_end_batch_id = Some(num(v)),
            "snapshotStartBatchId" => q.snapshot_start_batch_id = Some(num(v)),
            "snapshotPartitionId" => q.snapshot_partition_id = Some(num(v)),
            other => panic!("option {other} is not mapped"),
        }
    }
    q
}

#[test]
fn change_feed_and_snapshot_start_match_spark() {
    let mut files: Vec<PathBuf> = std::fs::read_dir(answers()).unwrap().map(|e| e.unwrap().path()).collect();
    files.sort();
    assert!(files.len() >= 15, "Spark's answers not found");
    let (mut rows_ok, mut errors_ok, mut change_rows) = (0, 0, 0);
    let mut failures = Vec::new();
    for f in &files {
        for line in std::fs::read_to_string(f).unwrap().lines().filter(|l| !l.trim().is_empty()) {
            let case: Value = serde_json::from_str(line).unwrap();
            let name = case["fixture"].as_str().unwrap();
            let q = query(case["options"].as_object().unwrap());
            let what = format!("{name} {}", case["options"]);
            let mut a = common::open_fixture(name);
            match (read_state(&mut a, "", &q), case.get("rows")) {
                (Ok(ours), Some(Value::Array(spark))) => {
                    let o = multiset(ours.iter().map(|r| canon::canon(&r.to_json())));
                    let s = multiset(spark.iter().map(canon::canon));
                    if o == s {
                        rows_ok += 1;
                        change_rows += ours.iter().filter(|r| r.change_type.is_some()).count();
                    } else {
                        failures.push(format!("{what}: rows differ\n  ours:  {o:?}\n  spark: {s:?}"));
                    }
                }
                (Err(e), None) => {
                    let want = case["error_class"].as_str();
                    if e.error_class.as_deref() == want && !e.path.is_empty() {
                        errors_ok += 1;
                    } else {
                        failures.push(format!("{what}: our error {e} vs Spark's {want:?} ({})", case["message_head"]));
                    }
                }
                (Ok(ours), _) => {
                    failures.push(format!("{what}: we gave {} rows, Spark failed: {}", ours.len(), case["error_class"]))
                }
                (Err(e), _) => failures.push(format!("{what}: we failed ({e}), Spark gave rows")),
            }
        }
    }
    println!("{rows_ok} row answers, {errors_ok} error answers match Spark ({change_rows} change rows)");
    assert!(failures.is_empty(), "{} cases differ from Spark:\n{}", failures.len(), failures.join("\n"));
    assert!(
        rows_ok >= 40 && errors_ok >= 60 && change_rows >= 300,
        "too few cases: {rows_ok} {errors_ok} {change_rows}"
    );
}
