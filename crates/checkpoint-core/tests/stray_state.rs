//! Folders and files in `state/` that a restart never loads must not change its verdict. Spark builds every path
//! it loads from numbers (`StateStoreId.storeCheckpointLocation`: `state/<operatorId>/<partitionId>[/<storeName>]`,
//! `HDFSBackedStateStoreProvider.deltaFile`: `<version>.delta`), loads the partitions `0..n` of the recorded
//! `spark.sql.shuffle.partitions`, and the stores its operator uses. A real healthy checkpoint (Spark 4.3.0, HDFS,
//! 3 partitions, operator metadata written) with garbage in such places must still resume, as Spark would.

mod common;
use common::*;

use checkpoint_core::archive::{Limits, ZipInput};
use checkpoint_core::report::{Report, RestartOutcome};
use checkpoint_core::{diagnose, Context, SparkVersion};
use std::io::{Cursor, Write};

const FIXTURE: &str = "ss-4.3.0-agg-hdfs";
const GARBAGE: &[u8] = b"not a state file at all";

/// The fixture's files plus `extra` (a path ending in `/` is an empty folder), diagnosed as a zip.
fn diagnose_with(extra: &[&str]) -> Report {
    diagnose_without(&[], extra)
}

/// The fixture as a zip, without its files under the prefixes `drop`, with `extra` (a path ending in `/` is an
/// empty folder, any other a file of [`GARBAGE`]).
fn open_without(drop: &[&str], extra: &[&str]) -> ZipInput<Cursor<Vec<u8>>> {
    let mut w = zip::ZipWriter::new(Cursor::new(Vec::new()));
    let opts = zip::write::SimpleFileOptions::default();
    for (p, b) in load(FIXTURE).into_iter().filter(|(p, _)| !drop.iter().any(|d| p.starts_with(d))) {
        w.start_file(p.as_str(), opts).unwrap();
        w.write_all(&b).unwrap();
    }
    for p in extra {
        if let Some(dir) = p.strip_suffix('/') {
            w.add_directory(dir, opts).unwrap();
        } else {
            w.start_file(*p, opts).unwrap();
            w.write_all(GARBAGE).unwrap();
        }
    }
    let bytes = w.finish().unwrap().into_inner();
    let n = bytes.len() as u64;
    ZipInput::open(Cursor::new(bytes), n, "stray.zip", Limits::default()).unwrap()
}

/// [`diagnose_with`], without the fixture's files under the prefixes `drop`.
fn diagnose_without(drop: &[&str], extra: &[&str]) -> Report {
    let mut a = open_without(drop, extra);
    let ctx = Context {
        spark_version: Some("4.1.4".parse::<SparkVersion>().unwrap()),
        now_ms: Some(0),
        ..Default::default()
    };
    diagnose(&mut a, &ctx)
}

fn outcome(r: &Report) -> RestartOutcome {
    r.checkpoints[0].restart.outcome
}

fn codes(r: &Report) -> Vec<String> {
    r.checkpoints[0].findings.iter().map(|f| f.code.to_string()).collect()
}

#[test]
fn the_fixture_resumes() {
    assert_eq!(outcome(&diagnose_with(&[])), RestartOutcome::Resumes);
}

/// `01`, `+1`, `00`, `0012` are not `1`, `0`, `12`: Spark never reads them, so their garbage is not the state a
/// restart loads.
#[test]
fn names_spark_does_not_write_do_not_alias_its_numbers() {
    for extra in [
        "state/0/01/12.snapshot",
        "state/0/+1/12.delta",
        "state/00/1/12.delta",
        "state/0/0/0012.snapshot",
        "state/0/0/012.delta",
        "state/0/0/+12.delta",
    ] {
        let r = diagnose_with(&[extra]);
        assert_eq!(outcome(&r), RestartOutcome::Resumes, "{extra}: {:?}", codes(&r));
        assert!(!codes(&r).iter().any(|c| c == "state-file-corrupt"), "{extra}: {:?}", codes(&r));
    }
}

/// A partition folder at or above the recorded `spark.sql.shuffle.partitions` (3 here) is one Spark ignores:
/// it is reported as extra, not planned as a store that cannot be rebuilt.
#[test]
fn a_partition_beyond_the_recorded_count_is_extra_not_loaded() {
    let r = diagnose_with(&["state/0/7/1.delta", "state/0/3/12.snapshot"]);
    assert_eq!(outcome(&r), RestartOutcome::Resumes, "{:?}", codes(&r));
    assert!(codes(&r).iter().any(|c| c == "state-partition-extra"), "{:?}", codes(&r));
}

/// Folders beside a partition's files that are no store of the operator (its metadata names `default` only):
/// an empty one, and one holding a snapshot.
#[test]
fn a_folder_that_is_no_store_of_the_operator_is_not_loaded() {
    for extra in [&["state/0/0/tmp/"][..], &["state/0/1/backup/12.snapshot"], &["state/0/2/x/"]] {
        let r = diagnose_with(extra);
        assert_eq!(outcome(&r), RestartOutcome::Resumes, "{extra:?}: {:?}", codes(&r));
    }
}

/// Without operator metadata (Spark before 3.5 writes none), an aggregation's stores are `default` only: a
/// `backup/` folder with a snapshot in it is still no store.
#[test]
fn without_operator_metadata_a_stray_folder_is_no_store_either() {
    let r = diagnose_without(&["state/0/_metadata/"], &[]);
    assert_eq!(outcome(&r), RestartOutcome::Resumes, "{:?}", codes(&r));
    let r = diagnose_without(&["state/0/_metadata/"], &["state/0/1/backup/12.snapshot", "state/0/1/backup/1.delta"]);
    assert_eq!(outcome(&r), RestartOutcome::Resumes, "{:?}", codes(&r));
}

/// The State Data Source side names the same stores: `default`, not a stray `backup/` or RocksDB-style `logs/`
/// folder, with operator metadata and without it (`state --metadata` then infers the stores from folders).
#[test]
fn the_state_readers_name_no_stray_folder_as_a_store() {
    use checkpoint_core::state::{read_state_metadata, store_names};
    let extra = ["state/0/1/backup/12.snapshot", "state/0/1/backup/1.delta", "state/0/2/logs/000001.log"];
    for drop in [&[][..], &["state/0/_metadata/"]] {
        let mut a = open_without(drop, &extra);
        assert_eq!(store_names(&a, "", 0), ["default"], "{drop:?}");
        let meta = read_state_metadata(&mut a, "").unwrap();
        let names: Vec<&str> = meta.iter().map(|m| m.state_store_name.as_str()).collect();
        assert_eq!(names, ["default"], "{drop:?}");
    }
}
