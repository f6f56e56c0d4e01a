//! The State tab's worker API (`stateOverview` / `stateRows`) on every fixture with Spark's own State Data Source
//! output: the rows we page through equal Spark's `<fixture>.state.jsonl` rows for the same options
//! (order-insensitive; timestamps as instants, numbers by value), and search / partition filters / paging narrow
//! them consistently. Runs in Node (`cargo test -p checkpoint-web --target wasm32-unknown-unknown --test state`).
#![cfg(target_arch = "wasm32")]

/// The core's canonical row text (one copy for every test that compares rows with Spark's).
#[path = "../../checkpoint-core/tests/support/canon.rs"]
mod canon;

use canon::{multiset, row_canon};
use checkpoint_web::Inspector;
use serde_json::{json, Value};
use std::collections::BTreeMap;
use wasm_bindgen::JsValue;
use wasm_bindgen_test::*;

/// `(fixture name, zip bytes, golden .state.jsonl text)` for every fixture that has one (see build.rs).
const FIXTURES: &[(&str, &[u8], &str)] = include!(concat!(env!("OUT_DIR"), "/state_fixtures.rs"));

/// The golden rows grouped by the options Spark read them with: (operatorId, storeName, stateVarName).
fn golden_groups(text: &str) -> BTreeMap<(i64, String, Option<String>), Vec<Value>> {
    let mut g: BTreeMap<_, Vec<Value>> = BTreeMap::new();
    for line in text.lines().filter(|l| !l.trim().is_empty()) {
        let r: Value = serde_json::from_str(line).expect("golden row is JSON");
        let key = (
            r["operatorId"].as_i64().unwrap_or(0),
            r["storeName"].as_str().unwrap_or("default").to_string(),
            r["stateVarName"].as_str().map(str::to_string),
        );
        g.entry(key).or_default().push(r);
    }
    g
}

fn selection(op: i64, store: &str, var: &Option<String>) -> JsValue {
    let sel = json!({"operator_id": op, "store_name": store, "state_var": var});
    serde::Serialize::serialize(&sel, &serde_wasm_bindgen::Serializer::json_compatible()).expect("selection")
}

/// Every row of a selection, fetched page by page (as the page does) with a small page size.
fn all_pages(zip: &[u8], name: &str, sel: &JsValue, search: &str) -> (Value, Vec<Value>) {
    let mut rows = Vec::new();
    let mut page = 0;
    loop {
        let text = Inspector::default()
            .state_rows(zip, name, sel.clone(), None, search, page, 3)
            .unwrap_or_else(|e| panic!("{name}: state rows: {:?}", js_sys::Error::from(e).message()));
        let r: Value = serde_json::from_str(&text).expect("page is JSON");
        rows.extend(r["rows"].as_array().cloned().unwrap_or_default());
        page += 1;
        if page as u64 >= r["pages"].as_u64().unwrap_or(1) {
            return (r, rows);
        }
    }
}

#[wasm_bindgen_test]
fn paged_rows_equal_sparks_statestore_rows() {
    assert!(FIXTURES.len() >= 10, "fixtures with .state.jsonl not found: {}", FIXTURES.len());
    let mut compared = 0;
    for (name, zip, golden) in FIXTURES {
        for ((op, store, var), want) in golden_groups(golden) {
            let sel = selection(op, &store, &var);
            let (last, rows) = all_pages(zip, name, &sel, "");
            assert_eq!(last["total_rows"].as_u64(), Some(want.len() as u64), "{name} op {op} {store} {var:?}");
            assert_eq!(rows.len(), want.len(), "{name} op {op} {store} {var:?}: rows over all pages");
            assert_eq!(
                multiset(rows.iter().map(row_canon)),
                multiset(want.iter().map(row_canon)),
                "{name} op {op} {store} {var:?}: rows differ from Spark's"
            );
            // Per-partition counts add up to the total and match Spark's partition_id of each row.
            let parts = last["partitions"].as_array().expect("partitions");
            let sum: u64 = parts.iter().map(|p| p["rows"].as_u64().unwrap_or(0)).sum();
            assert_eq!(sum, want.len() as u64, "{name}: partition rows add up");
            for p in parts {
                let n = want.iter().filter(|r| r["partition_id"] == p["partition"]).count() as u64;
                assert_eq!(p["rows"].as_u64(), Some(n), "{name}: rows of partition {}", p["partition"]);
                assert!(
                    p["file_bytes"].as_u64().unwrap_or(0) > 0 || n == 0,
                    "{name}: file bytes of {}",
                    p["partition"]
                );
            }
            compared += 1;
        }
    }
    assert!(compared >= FIXTURES.len());
}

/// The first leaf of a key that is the same text in Spark's JSON and ours: a string that is not a timestamp, or an
/// integer.
fn leaf(v: &Value) -> Option<String> {
    match v {
        Value::Object(m) => m.values().find_map(leaf),
        Value::Array(a) => a.iter().find_map(leaf),
        Value::String(s) if canon::parse_timestamp(s).is_none() && !s.is_empty() => Some(s.clone()),
        Value::Number(n) if n.is_i64() => Some(n.to_string()),
        _ => None,
    }
}

#[wasm_bindgen_test]
fn search_and_partition_narrow_the_rows() {
    let mut narrowed = 0;
    for (name, zip, golden) in FIXTURES {
        let ((op, store, var), want) = golden_groups(golden).into_iter().next().expect("golden rows");
        let sel = selection(op, &store, &var);
        // Search by a leaf of one of Spark's keys (a string that is not a timestamp, or a number): the rows whose
        // key JSON holds it, and only those.
        let Some(needle) = leaf(&want[want.len() / 2]["key"]) else { continue };
        let (r, rows) = all_pages(zip, name, &sel, &needle);
        let lower = needle.to_lowercase();
        let expected = want.iter().filter(|w| w["key"].to_string().to_lowercase().contains(&lower)).count();
        assert!(expected >= 1);
        assert_eq!(rows.len(), expected, "{name}: search {needle:?}");
        assert_eq!(r["matching_rows"].as_u64(), Some(expected as u64), "{name}");
        for row in &rows {
            assert!(row["key"].to_string().to_lowercase().contains(&lower), "{name}: {row}");
        }
        let none =
            Inspector::default().state_rows(zip, name, sel.clone(), None, "no key holds this \u{1}", 0, 100).unwrap();
        let none: Value = serde_json::from_str(&none).unwrap();
        assert_eq!(none["matching_rows"], 0, "{name}");
        assert_eq!(none["total_rows"].as_u64(), Some(want.len() as u64), "{name}");
        if rows.len() < want.len() {
            narrowed += 1;
        }
        // Partition filter: exactly Spark's rows of that partition.
        let p = want[0]["partition_id"].as_u64().expect("partition_id") as u32;
        let text = Inspector::default().state_rows(zip, name, sel, Some(p), "", 0, 1000).unwrap();
        let r: Value = serde_json::from_str(&text).unwrap();
        let n = want.iter().filter(|w| w["partition_id"].as_u64() == Some(u64::from(p))).count();
        assert_eq!(r["matching_rows"].as_u64(), Some(n as u64), "{name}: partition {p}");
        assert!(r["rows"].as_array().unwrap().iter().all(|row| row["partition_id"].as_u64() == Some(u64::from(p))));
    }
    assert!(narrowed > 0, "search narrowed no fixture's rows");
}

#[wasm_bindgen_test]
fn overview_lists_stores_schemas_and_sizes_by_version() {
    let mut hdfs_sizes_checked = 0;
    for (name, zip, golden) in FIXTURES {
        let o: Value = serde_json::from_str(&Inspector::default().state_overview(zip, name).unwrap()).unwrap();
        for ((op, store, var), _) in golden_groups(golden) {
            let ops = o["operators"].as_array().expect("operators");
            let opv = ops.iter().find(|x| x["operator_id"] == op).unwrap_or_else(|| panic!("{name}: operator {op}"));
            let st = opv["stores"].as_array().unwrap().iter().find(|s| s["name"] == store.as_str());
            let st = st.unwrap_or_else(|| panic!("{name}: store {store} in {}", opv["stores"]));
            if let Some(v) = &var {
                assert!(st["state_vars"].as_array().unwrap().iter().any(|x| x == v.as_str()), "{name}: var {v}");
            } else {
                assert!(st["schema"]["key"]["fields"].as_array().is_some_and(|f| !f.is_empty()), "{name}: key schema");
                assert!(st["schema"]["value"]["fields"].as_array().is_some(), "{name}: value schema");
            }
            let versions = st["versions"].as_array().expect("versions");
            assert!(!versions.is_empty(), "{name}: sizes by version");
            assert!(versions.iter().all(|v| v["bytes"].as_u64().unwrap_or(0) > 0), "{name}: {versions:?}");
            // Delta and snapshot bytes per version equal the zip's own listing (read here with the zip crate).
            let mut want: BTreeMap<i64, u64> = BTreeMap::new();
            let mut z = zip::ZipArchive::new(std::io::Cursor::new(*zip)).expect("zip");
            for i in 0..z.len() {
                let f = z.by_index(i).expect("entry");
                let path = f.name().map(|n| n.to_string()).unwrap_or_default();
                let segs: Vec<&str> = path.split('/').collect();
                let in_store = match segs.as_slice() {
                    ["state", o, _, _] => *o == op.to_string() && store == "default",
                    ["state", o, _, s, _] => *o == op.to_string() && *s == store,
                    _ => false,
                };
                let name = segs.last().copied().unwrap_or("");
                let stem = name.strip_suffix(".delta").or_else(|| name.strip_suffix(".snapshot"));
                if let (true, Some(v)) = (in_store, stem.and_then(|v| v.parse::<i64>().ok())) {
                    *want.entry(v).or_default() += f.size();
                }
            }
            let got: BTreeMap<i64, u64> = versions
                .iter()
                .filter_map(|v| {
                    let k = &v["by_kind"];
                    let b = k["delta"].as_u64().unwrap_or(0) + k["snapshot"].as_u64().unwrap_or(0);
                    (b > 0).then(|| (v["version"].as_i64().unwrap_or(-1), b))
                })
                .collect();
            assert_eq!(got, want, "{name} {store}: delta+snapshot bytes by version");
            hdfs_sizes_checked += usize::from(!want.is_empty());
            // The last committed batch's version is on disk.
            let last = o["committed_batches"]["last"].as_i64().expect("a committed batch");
            assert!(versions.iter().any(|v| v["version"].as_i64() == Some(last + 1)), "{name}: version {}", last + 1);
        }
    }
    assert!(hdfs_sizes_checked >= 3, "HDFS fixtures with sizes compared: {hdfs_sizes_checked}");
}

#[wasm_bindgen_test]
fn a_state_that_does_not_decode_names_the_file() {
    // An HDFS fixture's zip with its delta and snapshot files' bytes replaced by garbage: the reader fails with the file's path.
    let (name, zip, golden) = FIXTURES.iter().find(|(n, _, _)| n.contains("hdfs")).expect("an HDFS fixture");
    let ((op, store, var), _) = golden_groups(golden).into_iter().next().unwrap();
    let mut z = zip::ZipArchive::new(std::io::Cursor::new(*zip)).unwrap();
    let mut w = zip::ZipWriter::new(std::io::Cursor::new(Vec::new()));
    let mut broken = Vec::new();
    for i in 0..z.len() {
        let mut f = z.by_index(i).unwrap();
        let path = f.name().unwrap().to_string();
        let mut bytes = Vec::new();
        std::io::Read::read_to_end(&mut f, &mut bytes).unwrap();
        if (path.ends_with(".delta") || path.ends_with(".snapshot")) && bytes.len() > 8 {
            for b in bytes.iter_mut().skip(4) {
                *b ^= 0x5a;
            }
            broken.push(path.clone());
        }
        w.start_file(path, zip::write::SimpleFileOptions::default()).unwrap();
        std::io::Write::write_all(&mut w, &bytes).unwrap();
    }
    let bytes = w.finish().unwrap().into_inner();
    assert!(!broken.is_empty(), "{name}: no delta file");
    let err = Inspector::default()
        .state_rows(&bytes, name, selection(op, &store, &var), None, "", 0, 100)
        .expect_err("must fail");
    let err = js_sys::Error::from(err);
    let e: Value = serde_json::from_str(&String::from(err.message())).expect("error JSON");
    let path = e["path"].as_str().unwrap_or("");
    assert!(broken.iter().any(|b| b == path), "{e} names one of the damaged files {broken:?}");
    assert!(e["offset"].is_u64(), "{e}: the byte offset where decoding failed");
    assert!(!e["message"].as_str().unwrap_or("").is_empty());
}
