//! The State Data Source reader asks every partition of a checkpoint format v2 RocksDB store which unique id
//! `commits/<version - 1>` records for it, and the offset log entry's conf: each of those log entries is read
//! once per read, whatever the number of partitions (it lists every partition's ids, so a read per partition
//! grew with the square of the partitions: 4,500 partitions took 5 s of JSON parsing).
//!
//! The input: the real Spark 4.1.4 checkpoint format v2 fixture (3 partitions) scaled to more partitions the way
//! `tools/scale-bench/ckptv2_partitions.py` does: partition `p` holds a copy of partition `p % 3`'s files, the
//! commits list those copies' ids for every partition, the offset log and operator metadata say the new count.

mod common;
use common::counting::Counting;
use common::*;

use checkpoint_core::archive::{Limits, MemArchive};
use checkpoint_core::state::{read_state, StateQuery};
use std::collections::HashMap;

const FIXTURE: &str = "ss-4.1.4-agg-rocksdb-ckptv2";

/// The fixture with `n` partitions (a multiple of nothing in particular; `n >= 3`).
fn scaled(n: u32) -> Vec<(String, Vec<u8>)> {
    let mut out = Vec::new();
    for (path, bytes) in load(FIXTURE) {
        if let Some(rest) = path.strip_prefix("state/0/") {
            if let Some((part, file)) = rest.split_once('/') {
                if let Ok(p) = part.parse::<u32>() {
                    for q in (p..n).step_by(3) {
                        out.push((format!("state/0/{q}/{file}"), bytes.clone()));
                    }
                    continue;
                }
            }
        }
        let text = String::from_utf8_lossy(&bytes).to_string();
        let bytes = if path.starts_with("commits/") && !path.contains("/.") {
            let (head, body) = text.split_once('\n').unwrap();
            let mut j: serde_json::Value = serde_json::from_str(body).unwrap();
            if let Some(ids) = j.get_mut("stateUniqueIds").and_then(|m| m.get_mut("0")) {
                let three = ids.as_array().unwrap().clone();
                *ids = serde_json::Value::Array((0..n as usize).map(|p| three[p % 3].clone()).collect());
            }
            format!("{head}\n{j}").into_bytes()
        } else if path.starts_with("offsets/") && !path.contains("/.") {
            text.replace("\"spark.sql.shuffle.partitions\":\"3\"", &format!("\"spark.sql.shuffle.partitions\":\"{n}\""))
                .into_bytes()
        } else if path == "state/0/_metadata/metadata" {
            text.replace("\"numPartitions\":3", &format!("\"numPartitions\":{n}")).into_bytes()
        } else if (path.starts_with("commits/.") || path.starts_with("offsets/.")) && path.ends_with(".crc") {
            continue; // the file it sums changed
        } else {
            bytes
        };
        out.push((path, bytes));
    }
    out
}

#[test]
fn a_format_v2_read_reads_the_commit_and_offsets_once_whatever_the_partitions() {
    let read = |n: u32| {
        let mut a = Counting::new(MemArchive::new("v2.zip", scaled(n), Limits::default()).unwrap());
        let rows = read_state(&mut a, "", &StateQuery::default()).unwrap();
        (rows, a.reads)
    };
    let (three, reads3) = read(3);
    let (many, reads300) = read(300);
    assert!(!three.is_empty());
    // The last commit is batch 11: version 12's ids are in commits/11, its conf in offsets/11.
    for log in ["commits/11", "offsets/11"] {
        assert!(reads3.get(log).copied().unwrap_or(0) >= 1, "{log} is read");
        assert_eq!(reads300.get(log), reads3.get(log), "{log}: read as often with 300 partitions as with 3");
    }
    assert_eq!(reads3.get("commits/11"), Some(&1));
    // Every partition was loaded with its own unique id: partition p holds partition p % 3's rows.
    let by_part = |rows: &[checkpoint_core::state::StateRow]| {
        let mut m: HashMap<u32, Vec<String>> = HashMap::new();
        for r in rows {
            m.entry(r.partition_id).or_default().push(format!("{} {}", r.key, r.value));
        }
        m
    };
    let (small, big) = (by_part(&three), by_part(&many));
    assert_eq!(big.len(), (0..300).filter(|p| small.contains_key(&(p % 3))).count());
    for (p, rows) in &big {
        assert_eq!(Some(rows), small.get(&(p % 3)), "partition {p}");
    }
}
