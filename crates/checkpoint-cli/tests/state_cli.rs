//! CLI `state`: Spark's statestore / state-metadata rows for the fixtures that have Spark's own output, errors
//! naming the file for damaged ones.

mod common;
use common::*;

use serde_json::Value;

fn lines(bytes: &[u8]) -> Vec<Value> {
    String::from_utf8_lossy(bytes).lines().map(|l| serde_json::from_str(l).unwrap()).collect()
}

/// Canonical text: object keys sorted at every level.
fn sorted(v: &Value) -> String {
    match v {
        Value::Object(m) => {
            let mut parts: Vec<String> = m.iter().map(|(k, v)| format!("{k:?}:{}", sorted(v))).collect();
            parts.sort();
            format!("{{{}}}", parts.join(","))
        }
        Value::Array(a) => format!("[{}]", a.iter().map(sorted).collect::<Vec<_>>().join(",")),
        other => other.to_string(),
    }
}

/// Rows without the tags Spark's dump added, as sorted canonical text.
fn canon(rows: &[Value]) -> Vec<String> {
    let mut v: Vec<String> =
        rows.iter().map(|r| format!("{}|{}|{}", sorted(&r["key"]), sorted(&r["value"]), r["partition_id"])).collect();
    v.sort();
    v
}

fn golden(name: &str) -> Vec<Value> {
    let text = std::fs::read_to_string(fixtures().join(name)).unwrap();
    text.lines().filter(|l| !l.trim().is_empty()).map(|l| serde_json::from_str(l).unwrap()).collect()
}

#[test]
fn state_rows_equal_sparks_for_an_hdfs_aggregation() {
    let zip = fixtures().join("ss-4.3.0-agg-hdfs.zip");
    let out = bin().args(["state", zip.to_str().unwrap(), "--json"]).output().unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    assert_eq!(canon(&lines(&out.stdout)), canon(&golden("ss-4.3.0-agg-hdfs.state.jsonl")));
    // One partition only.
    let out = bin().args(["state", zip.to_str().unwrap(), "--partition", "1"]).output().unwrap();
    let rows = lines(&out.stdout);
    assert!(!rows.is_empty() && rows.iter().all(|r| r["partition_id"] == 1));
}

#[test]
fn join_side_and_store_options() {
    let zip = fixtures().join("ss-4.3.0-join.zip");
    let out = bin().args(["state", zip.to_str().unwrap(), "--join-side", "left"]).output().unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    assert_eq!(canon(&lines(&out.stdout)), canon(&golden("ss-4.3.0-join.state-joinside-left.jsonl")));
    let out = bin().args(["state", zip.to_str().unwrap(), "--store", "right-keyToNumValues"]).output().unwrap();
    let want: Vec<Value> =
        golden("ss-4.3.0-join.state.jsonl").into_iter().filter(|r| r["storeName"] == "right-keyToNumValues").collect();
    assert_eq!(canon(&lines(&out.stdout)), canon(&want));
}

#[test]
fn metadata_view() {
    let zip = fixtures().join("ss-4.3.0-join.zip");
    let out = bin().args(["state", zip.to_str().unwrap(), "--metadata"]).output().unwrap();
    assert_eq!(out.status.code(), Some(0));
    let mut ours: Vec<String> = lines(&out.stdout).iter().map(|v| v.to_string()).collect();
    let mut want: Vec<String> = golden("ss-4.3.0-join.state-metadata.jsonl").iter().map(|v| v.to_string()).collect();
    ours.sort();
    want.sort();
    assert_eq!(ours, want);
}

#[test]
fn damaged_state_exits_1_naming_the_file() {
    let zip = fixtures().join("broken-ss-4.1.4-missing-delta.zip");
    let out = bin().args(["state", zip.to_str().unwrap()]).output().unwrap();
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(err.trim().lines().count(), 1, "{err}");
    assert!(err.contains("state/0/1/7.delta") && err.contains("CANNOT_READ_DELTA_FILE_NOT_EXISTS"), "{err}");
    // Rows are streamed: those of the partitions before the damaged one (partition 0) are already printed, each a
    // whole JSON line; none of the damaged partition.
    let printed = lines(&out.stdout);
    assert!(printed.iter().all(|r| r["partition_id"] == 0), "{printed:?}");
    let out = bin().args(["state", "/nonexistent/x.zip"]).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
}

#[test]
fn transform_with_state_options() {
    let zip = fixtures().join("ss-4.3.0-tws-pandas.zip");
    let p = zip.to_str().unwrap();
    // A value state reads the same flattened or not (flattenCollectionTypes only reshapes lists and maps).
    let want: Vec<Value> = golden("ss-4.3.0-tws-pandas.state.jsonl");
    for flatten in ["true", "false"] {
        let out = bin().args(["state", p, "--state-var", "cnt", "--flatten-collections", flatten]).output().unwrap();
        assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
        assert_eq!(canon(&lines(&out.stdout)), canon(&want));
    }
    // No timers in time mode None (Spark's error), and the two options conflict.
    let out = bin().args(["state", p, "--read-timers"]).output().unwrap();
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("TimeMode=None") && err.contains("STDS_INVALID_OPTION_VALUE"), "{err}");
    let out = bin().args(["state", p, "--read-timers", "--state-var", "cnt"]).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    // A transformWithState operator needs a state variable.
    let out = bin().args(["state", p]).output().unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("STDS_REQUIRED_OPTION_UNSPECIFIED"));
}
