//! RocksDB state written by real Spark with each SST block compression its conf allows
//! (`spark.sql.streaming.stateStore.rocksdb.compression`; tests/data/spark/sst-compression-*, written by
//! tools/spark-gen/sst_compression.py; Spark restarted each one): each gives Spark's own verdict and the State
//! Data Source's rows. (A compression this inspector does not decode, xpress, which RocksDB writes on Windows
//! only, is "not verified", never damage: `sst_writer_test`.) Before, zlib and bzip2 SSTs were called damaged and
//! the verdict was "will not restart".

#[path = "support/canon.rs"]
mod canon;
mod common;

use canon::row_canon;
use checkpoint_core::report::{CheckpointReport, RestartOutcome, Severity};
use checkpoint_core::state::{read_state, StateQuery};
use checkpoint_core::{Context, Limits, SparkVersion, ZipInput};
use common::spark_gen::{self, data_dir, run};
use serde_json::Value;
use std::path::Path;

fn open(zip: &Path) -> ZipInput<std::fs::File> {
    let f = std::fs::File::open(zip).unwrap();
    let len = f.metadata().unwrap().len();
    ZipInput::open(f, len, &zip.display().to_string(), Limits::default()).unwrap()
}

fn report(zip: &Path, version: &str) -> CheckpointReport {
    let ctx = Context { spark_version: Some(version.parse::<SparkVersion>().unwrap()), ..Default::default() };
    run(zip, &ctx)
}

/// `(compression as the conf names it, record)` of every generated checkpoint.
fn records() -> Vec<(String, Value)> {
    let mut out: Vec<(String, Value)> = spark_gen::records("sst-compression-", 5)
        .into_iter()
        .map(|(_, j)| {
            let c = j["query"]["confs"]["spark.sql.streaming.stateStore.rocksdb.compression"].as_str().unwrap();
            (c.to_string(), j)
        })
        .collect();
    out.sort_by(|a, b| a.0.cmp(&b.0));
    out
}

/// Every record was restarted by Spark without error: the checkpoints are healthy.
#[test]
fn spark_restarted_every_compression() {
    let recs = records();
    let names: Vec<&str> = recs.iter().map(|(c, _)| c.as_str()).collect();
    assert_eq!(names, ["bzip2", "lz4hc", "snappy", "z", "zstd"]);
    for (c, j) in &recs {
        assert_eq!(j["restart_outcome"]["ok"], Value::Bool(true), "{c}: Spark did not restart it");
    }
}

/// zlib (`z`), bzip2, zstd, snappy and LZ4HC blocks decode: the verdict is Spark's (resumes) with no warning,
/// and the rows are the State Data Source's.
#[test]
fn every_compression_gives_sparks_verdict_and_rows() {
    for (c, j) in &records() {
        let name = j["name"].as_str().unwrap();
        let zip = data_dir().join(format!("{name}.zip"));
        let cp = report(&zip, j["spark_version"].as_str().unwrap());
        assert_eq!(cp.restart.outcome, RestartOutcome::Resumes, "{c}: {:?}", cp.restart);
        let bad: Vec<_> = cp.findings.iter().filter(|f| f.severity <= Severity::Warning).map(|f| &f.title).collect();
        assert!(bad.is_empty(), "{c}: {bad:?}");
        let want: Vec<String> = std::fs::read_to_string(data_dir().join(format!("{name}.state.jsonl")))
            .unwrap()
            .lines()
            .map(|l| row_canon(&serde_json::from_str(l).unwrap()))
            .collect();
        assert!(want.len() >= 6, "{c}: {} golden rows", want.len());
        let rows = read_state(&mut open(&zip), "", &StateQuery::default()).unwrap();
        let mut ours: Vec<String> = rows.iter().map(|r| row_canon(&r.to_json())).collect();
        let mut want = want;
        ours.sort();
        want.sort();
        assert_eq!(ours, want, "{c}: rows differ from Spark's State Data Source");
    }
}
