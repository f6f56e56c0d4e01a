//! The State tab's Changes view (`stateRows` with `read_change_feed`) against real Spark: for every change-feed
//! case Spark 4.3.0's State Data Source answered over an HDFS, a RocksDB (changelog checkpointing and without) and a
//! stream-stream join fixture (the core's goldens, tests/data/spark/state-change-feed/, written by
//! tools/spark-gen/state_change_feed.py), the rows paged through the worker API equal Spark's rows
//! (order-insensitive; timestamps as instants, numbers by value), each with its `batch_id` and `change_type`, and
//! partition / search filters narrow them as Spark's rows say; an option Spark refuses gives Spark's error class.
//! Runs in Node (`cargo test -p checkpoint-web --target wasm32-unknown-unknown --test state_change_feed`).
#![cfg(target_arch = "wasm32")]

/// The core's canonical row text (one copy for every test that compares rows with Spark's).
#[path = "../../checkpoint-core/tests/support/canon.rs"]
mod canon;

use canon::{canon, multiset};
use checkpoint_web::Inspector;
use serde_json::{json, Map, Value};
use wasm_bindgen::JsValue;
use wasm_bindgen_test::*;

macro_rules! case {
    ($name:literal) => {
        (
            $name,
            include_bytes!(concat!(env!("CARGO_MANIFEST_DIR"), "/../../../shared/fixtures/", $name, ".zip")) as &[u8],
            include_str!(concat!(
                env!("CARGO_MANIFEST_DIR"),
                "/../checkpoint-core/tests/data/spark/state-change-feed/",
                $name,
                ".cases.jsonl"
            )),
        )
    };
}

/// `(fixture, zip bytes, Spark's answers)`: HDFS, RocksDB with and without changelog checkpointing, a join.
const CASES: &[(&str, &[u8], &str)] = &[
    case!("ss-4.3.0-agg-hdfs"),
    case!("ss-4.3.0-agg-rocksdb-changelog"),
    case!("ss-4.3.0-agg-rocksdb"),
    case!("ss-4.3.0-join"),
];

/// Spark's options (strings) as the page's selection JSON; `None` for options the State tab does not offer
/// (`snapshotStartBatchId`, `snapshotPartitionId`).
fn selection(opts: &Map<String, Value>) -> Option<Value> {
    let mut sel = Map::new();
    let num = |v: &Value| v.as_str().and_then(|s| s.parse::<i64>().ok()).map(Value::from);
    for (k, v) in opts {
        let (field, value) = match k.as_str() {
            "operatorId" => ("operator_id", num(v)?),
            "storeName" => ("store_name", v.clone()),
            "batchId" => ("batch_id", num(v)?),
            "joinSide" => ("join_side", v.clone()),
            "readChangeFeed" => ("read_change_feed", Value::Bool(v == "true")),
            "changeStartBatchId" => ("change_start_batch_id", num(v)?),
            "changeEndBatchId" => ("change_end_batch_id", num(v)?),
            _ => return None,
        };
        sel.insert(field.into(), value);
    }
    Some(Value::Object(sel))
}

fn js(sel: &Value) -> JsValue {
    serde::Serialize::serialize(sel, &serde_wasm_bindgen::Serializer::json_compatible()).expect("selection")
}

/// Every row of a selection, page by page (as the page fetches them), with the last page's answer; or the error
/// JSON the worker API throws.
fn all_pages(
    zip: &[u8],
    name: &str,
    sel: &Value,
    part: Option<u32>,
    search: &str,
) -> Result<(Value, Vec<Value>), Value> {
    let mut rows = Vec::new();
    let mut page = 0;
    loop {
        let text = Inspector::default().state_rows(zip, name, js(sel), part, search, page, 7).map_err(|e| {
            let msg = String::from(js_sys::Error::from(e).message());
            serde_json::from_str(&msg).unwrap_or_else(|_| json!({"message": msg}))
        })?;
        let r: Value = serde_json::from_str(&text).expect("page is JSON");
        rows.extend(r["rows"].as_array().cloned().unwrap_or_default());
        page += 1;
        if page as u64 >= r["pages"].as_u64().unwrap_or(1) {
            return Ok((r, rows));
        }
    }
}

/// A string leaf of a key (not a timestamp): text that reads the same in Spark's JSON and ours.
fn leaf(v: &Value) -> Option<String> {
    match v {
        Value::Object(m) => m.values().find_map(leaf),
        Value::String(s) if canon::parse_timestamp(s).is_none() && !s.is_empty() => Some(s.clone()),
        _ => None,
    }
}

/// Spark's rows of one change-feed case against the pages, the range the page reports, and the filters.
fn check_rows(name: &str, zip: &[u8], sel: &Value, spark: &[Value], what: &str) -> usize {
    let (last, ours) = all_pages(zip, name, sel, None, "").unwrap_or_else(|e| panic!("{what}: {e}"));
    assert_eq!(last["total_rows"].as_u64(), Some(spark.len() as u64), "{what}");
    assert_eq!(multiset(ours.iter().map(canon)), multiset(spark.iter().map(canon)), "{what}: rows differ from Spark's");
    for r in &ours {
        assert!(r["batch_id"].is_i64(), "{what}: {r}");
        let t = r["change_type"].as_str().unwrap_or("");
        assert!(t == "update" || t == "delete", "{what}: {r}");
        assert_eq!(t == "delete", r.get("value").is_none(), "{what}: a delete has no value: {r}");
    }
    // The range read: Spark's start, and its end (the last committed batch when not given).
    let feed = &last["change_feed"];
    assert_eq!(feed["start_batch_id"], sel["change_start_batch_id"], "{what}: {feed}");
    let end = feed["end_batch_id"].as_i64().expect("end batch");
    assert!(sel["change_end_batch_id"].as_i64().is_none_or(|e| e == end), "{what}: {feed}");
    assert!(spark.iter().all(|r| r["batch_id"].as_i64().is_some_and(|b| b <= end)), "{what}");
    assert_eq!(last["batch_id"].as_i64(), Some(end), "{what}");
    // Partition filter: exactly Spark's rows of that partition.
    if let Some(p) = spark.first().and_then(|r| r["partition_id"].as_u64()) {
        let (_, rows) = all_pages(zip, name, sel, Some(p as u32), "").expect("partition page");
        let want: Vec<&Value> = spark.iter().filter(|r| r["partition_id"].as_u64() == Some(p)).collect();
        assert_eq!(multiset(rows.iter().map(canon)), multiset(want.into_iter().map(canon)), "{what}: partition {p}");
    }
    // Search by a key's text: exactly Spark's rows whose key holds it.
    if let Some(needle) = spark.get(spark.len() / 2).and_then(|r| leaf(&r["key"])) {
        let (_, rows) = all_pages(zip, name, sel, None, &needle).expect("search page");
        let lower = needle.to_lowercase();
        let want = spark.iter().filter(|r| r["key"].to_string().to_lowercase().contains(&lower));
        assert_eq!(multiset(rows.iter().map(canon)), multiset(want.map(canon)), "{what}: search {needle:?}");
    }
    ours.iter().filter(|r| r["change_type"] == "delete").count()
}

#[wasm_bindgen_test]
fn change_feed_pages_equal_sparks_rows_and_errors() {
    let (mut rows_ok, mut errors_ok, mut deletes) = (0, 0, 0);
    let mut providers = std::collections::BTreeSet::new();
    for (name, zip, answers) in CASES {
        for line in answers.lines().filter(|l| !l.trim().is_empty()) {
            let case: Value = serde_json::from_str(line).expect("Spark's answer is JSON");
            let opts = case["options"].as_object().expect("options");
            let Some(sel) = selection(opts) else { continue };
            let change_opts = ["readChangeFeed", "changeStartBatchId", "changeEndBatchId"];
            if !change_opts.iter().any(|o| opts.contains_key(*o)) {
                continue;
            }
            let what = format!("{name} {}", case["options"]);
            match case.get("rows").and_then(Value::as_array) {
                Some(spark) => {
                    deletes += check_rows(name, zip, &sel, spark, &what);
                    rows_ok += 1;
                    providers.insert(if name.contains("rocksdb") { "rocksdb" } else { "hdfs" });
                }
                None => {
                    let err = all_pages(zip, name, &sel, None, "").expect_err(&what);
                    assert_eq!(err["error_class"].as_str(), case["error_class"].as_str(), "{what}: {err}");
                    assert!(!err["message"].as_str().unwrap_or("").is_empty(), "{what}: {err}");
                    errors_ok += 1;
                }
            }
        }
    }
    assert_eq!(providers.len(), 2, "HDFS and RocksDB change feeds compared: {providers:?}");
    assert!(rows_ok >= 12 && errors_ok >= 18 && deletes >= 8, "too few cases: {rows_ok} {errors_ok} {deletes}");
}
