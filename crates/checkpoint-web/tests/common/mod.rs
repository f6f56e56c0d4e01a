//! Shared helpers of the wasm tests: real fixtures from ../shared/fixtures (embedded at compile time, since a wasm
//! test cannot open files) and their golden facts (written by the fixture generator from Spark's files).
#![allow(dead_code)]

use std::io::{Cursor, Read};

/// A fixture zip and its `.json` record.
pub struct Fixture {
    pub name: &'static str,
    pub zip: &'static [u8],
    pub record: serde_json::Value,
}

macro_rules! fixture {
    ($name:literal) => {
        Fixture {
            name: $name,
            zip: include_bytes!(concat!(env!("CARGO_MANIFEST_DIR"), "/../../../shared/fixtures/", $name, ".zip")),
            record: serde_json::from_str(include_str!(concat!(
                env!("CARGO_MANIFEST_DIR"),
                "/../../../shared/fixtures/",
                $name,
                ".json"
            )))
            .expect("fixture record is JSON"),
        }
    };
}

pub fn missing_delta() -> Fixture {
    fixture!("broken-ss-4.1.4-missing-delta")
}
pub fn healthy_agg() -> Fixture {
    fixture!("ss-4.3.0-agg-hdfs")
}
pub fn missing_last_commit() -> Fixture {
    fixture!("broken-ss-4.3.0-missing-last-commit")
}
pub fn rocksdb() -> Fixture {
    fixture!("ss-4.1.4-agg-rocksdb")
}

/// Every file of a zip as (path, bytes), as a dropped folder would give them.
pub fn unzip(bytes: &[u8]) -> Vec<(String, Vec<u8>)> {
    let mut z = zip::ZipArchive::new(Cursor::new(bytes)).expect("fixture is a zip");
    let mut out = Vec::new();
    for i in 0..z.len() {
        let mut f = z.by_index(i).expect("entry");
        if f.is_dir() {
            continue;
        }
        let name = f.name().expect("utf-8 name").to_string();
        let mut v = Vec::new();
        f.read_to_end(&mut v).expect("inflate");
        out.push((name, v));
    }
    out
}

/// Checks the report JSON against the fixture's golden facts (from Spark's files, not from our code).
pub fn assert_matches_facts(report_json: &str, fx: &Fixture) {
    let r: serde_json::Value = serde_json::from_str(report_json).expect("report is JSON");
    let facts = &fx.record["facts"];
    let c = &r["checkpoints"][0];
    assert_eq!(r["checkpoints"].as_array().map(|a| a.len()), Some(1), "{}: one checkpoint root", fx.name);
    assert_eq!(c["root"], "", "{}: root at the archive top", fx.name);
    assert_eq!(c["kind"], "structured_streaming", "{}", fx.name);
    assert_eq!(c["last_batch_id"], facts["last_offset_batch"], "{}: last batch id", fx.name);
    assert_eq!(c["last_committed_batch_id"], facts["last_committed_batch"], "{}: last committed", fx.name);
    assert_eq!(c["query_id"], facts["metadata"]["id"], "{}: query id", fx.name);
    let shuffle = facts["shuffle_partitions_in_offsets"].as_str().expect("fact");
    assert_eq!(c["conf"]["spark.sql.shuffle.partitions"], shuffle, "{}: recorded conf", fx.name);
}
