//! Healthy checkpoints at the scale of real ones, and folders in numbers no real one has: 20 000 shuffle
//! partitions, 100 000 `sources/<n>/` folders, 30 000 `_spark_metadata` folders. The work must grow with the
//! files, not with folders times folders or folders times files: each diagnosis is bounded in time (generously,
//! as in `hostile.rs`: these bounds catch quadratic work, which takes minutes here, not slowness).

mod common;
use common::*;

use checkpoint_core::archive::{Limits, MemArchive};
use checkpoint_core::report::{Code, Report, RestartOutcome};
use checkpoint_core::{diagnose, Context, SparkVersion};
use std::time::{Duration, Instant};

const AGG: &str = "ss-4.3.0-agg-hdfs";

/// A loaded 2-core CI machine running a debug build can be several times slower than a developer's.
const SLACK: u32 = 4;

fn ctx() -> Context {
    Context { spark_version: Some(SparkVersion::new(4, 3, 0)), now_ms: Some(1_796_083_200_000), ..Default::default() }
}

/// Diagnoses `files` in memory within `limit` (times [`SLACK`]).
fn diagnose_within(what: &str, files: Vec<(String, Vec<u8>)>, limit: Duration) -> Report {
    let mut a = MemArchive::new("t.zip", files, Limits::default()).expect("listed");
    let t = Instant::now();
    let r = diagnose(&mut a, &ctx());
    let el = t.elapsed();
    assert!(el < limit * SLACK, "{what}: took {el:?} (limit {:?})", limit * SLACK);
    r
}

fn get<'a>(files: &'a [(String, Vec<u8>)], path: &str) -> &'a [u8] {
    &files.iter().find(|(p, _)| p == path).unwrap_or_else(|| panic!("{path} in the fixture")).1
}

fn count(r: &Report, code: Code) -> usize {
    r.checkpoints.iter().flat_map(|c| &c.findings).filter(|f| f.code == code).count()
}

/// A healthy aggregation with 20 000 shuffle partitions, two batches (80 000 state files with their `.crc`s):
/// every store's restart chain is planned and read, and the restart resumes. Planning each store used to walk
/// every partition of its operator (the store names, the provider).
#[test]
fn twenty_thousand_shuffle_partitions_healthy() {
    const PARTS: u32 = 20_000;
    const BATCHES: i64 = 2;
    let fx = load(AGG);
    let offsets = String::from_utf8(get(&fx, "offsets/11").to_vec()).expect("utf8");
    let lines: Vec<&str> = offsets.split('\n').collect();
    let mut meta: serde_json::Value = serde_json::from_str(lines[1]).expect("offset metadata");
    meta["conf"]["spark.sql.shuffle.partitions"] = PARTS.to_string().into();
    let (delta, crc) = (get(&fx, "state/0/0/2.delta").to_vec(), get(&fx, "state/0/0/.2.delta.crc").to_vec());
    let mut files: Vec<(String, Vec<u8>)> = fx
        .iter()
        .filter(|(p, _)| {
            p == "metadata" || p == ".metadata.crc" || p.starts_with("sources/") || p.starts_with("state/0/_metadata")
        })
        .cloned()
        .collect();
    files.extend(fx.iter().filter(|(p, _)| p.starts_with("state/0/0/_metadata")).cloned());
    for b in 0..BATCHES {
        files.push((format!("offsets/{b}"), format!("v1\n{meta}\n{}", lines[2]).into_bytes()));
        files.push((format!("commits/{b}"), get(&fx, "commits/11").to_vec()));
    }
    for p in 0..PARTS {
        for v in 1..=BATCHES {
            files.push((format!("state/0/{p}/{v}.delta"), delta.clone()));
            files.push((format!("state/0/{p}/.{v}.delta.crc"), crc.clone()));
        }
    }
    let r = diagnose_within("20 000 partitions", files, Duration::from_secs(30));
    let c = &r.checkpoints[0];
    assert_eq!(
        c.restart.outcome,
        RestartOutcome::Resumes,
        "{:?}",
        c.findings.iter().map(|f| &f.title).collect::<Vec<_>>()
    );
    assert_eq!(c.operators.len(), 1);
    assert_eq!(c.operators[0].partitions, u64::from(PARTS));
    assert_eq!(count(&r, Code::StateDeltaMissing) + count(&r, Code::StatePartitionMissing), 0);
}

/// 100 000 `sources/<n>/` folders beside a real file source's log: each folder's files were found by a scan of
/// the whole listing (and again for a source that is not a file source). The real source's log is still read.
#[test]
fn hundred_thousand_source_folders() {
    let mut files = load(AGG);
    let log = get(&files, "sources/0/5").to_vec();
    files.extend((1..=100_000).map(|i| (format!("sources/{i}/0"), log.clone())));
    let r = diagnose_within("100 000 source folders", files, Duration::from_secs(30));
    let c = &r.checkpoints[0];
    assert_eq!(c.restart.outcome, RestartOutcome::Resumes);
    let f = c.findings.iter().find(|f| f.code == Code::FileSourceFiles).expect("the file source's log is read");
    assert!(f.title.contains("File source #0: 6 batch file(s) in sources/0/"), "{}", f.title);
}

/// 30 000 `_spark_metadata` folders (`o<i>/_spark_metadata/0`): each sink log's folder and output files were
/// found by a scan of the whole listing. Every one is still read and counted in the report.
#[test]
fn thirty_thousand_sink_log_folders() {
    let mut files = load(AGG);
    let entry = br#"v1
{"path":"file:///o/part-0.parquet","size":10,"isDir":false,"modificationTime":1,"blockReplication":1,"blockSize":1,"action":"add"}"#;
    files.extend((0..30_000).map(|i| (format!("o{i}/_spark_metadata/0"), entry.to_vec())));
    let r = diagnose_within("30 000 sink logs", files, Duration::from_secs(30));
    assert_eq!(r.checkpoints[0].restart.outcome, RestartOutcome::Resumes);
    // A report lists 100 findings of one code and folds the others into one that counts them.
    assert_eq!(count(&r, Code::FileSinkLog), 101);
    let folded = r.checkpoints[0].findings.iter().rfind(|f| f.code == Code::FileSinkLog).unwrap();
    assert!(folded.title.starts_with("29900 more file-sink-log findings"), "{}", folded.title);
}
