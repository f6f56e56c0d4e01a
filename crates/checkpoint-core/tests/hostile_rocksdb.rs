//! Hostile RocksDB checkpoint metadata inside a real Spark 4.3.0 RocksDB checkpoint: the restart's version zip
//! (`state/0/0/12.zip`) rewritten so that its `metadata` lists one SST file 100,000 times under other local
//! names. Spark's load copies one DFS file per listed entry; the entries are the same file's, so the inspector
//! reads it once, and the diagnosis ends in bounded time with the real checkpoint's verdict.

mod common;
use common::counting::Counting;
use common::*;

use checkpoint_core::archive::{Limits, MemArchive};
use checkpoint_core::report::RestartOutcome;
use checkpoint_core::{diagnose, Context, SparkVersion};
use std::collections::HashMap;
use std::io::{Cursor, Read, Write};

const FIXTURE: &str = "ss-4.3.0-agg-rocksdb";
const ZIP: &str = "state/0/0/12.zip";

/// Diagnoses `files`; returns the outcome and the reads of each SST file.
fn diagnose_counting(files: Vec<(String, Vec<u8>)>) -> (RestartOutcome, HashMap<String, usize>) {
    let mut a = Counting::new(MemArchive::new("t.zip", files, Limits::default()).unwrap());
    let r = diagnose(&mut a, &ctx());
    let ssts = a.reads.into_iter().filter(|(p, _)| p.ends_with(".sst")).collect();
    (r.checkpoints[0].restart.outcome, ssts)
}

/// `zip` with its `metadata` member's `sstFiles` extended by `copies` entries naming the first SST's DFS file.
fn with_repeated_sst(zip: &[u8], copies: usize) -> Vec<u8> {
    let mut inner = zip::ZipArchive::new(Cursor::new(zip)).unwrap();
    let mut w = zip::ZipWriter::new(Cursor::new(Vec::new()));
    let opts = zip::write::SimpleFileOptions::default();
    for i in 0..inner.len() {
        let mut f = inner.by_index(i).unwrap();
        let name = f.name().unwrap().to_string();
        let mut b = Vec::new();
        f.read_to_end(&mut b).unwrap();
        if name == "metadata" {
            let text = String::from_utf8(b).unwrap();
            let (version, json) = text.split_once('\n').unwrap();
            let mut m: serde_json::Value = serde_json::from_str(json).unwrap();
            let ssts = m["sstFiles"].as_array_mut().unwrap();
            let first = ssts[0].clone();
            for n in 0..copies {
                let mut s = first.clone();
                s["localFileName"] = serde_json::Value::String(format!("{:06}.sst", 100_000 + n));
                ssts.push(s);
            }
            b = format!("{version}\n{m}").into_bytes();
        }
        w.start_file(name, opts).unwrap();
        w.write_all(&b).unwrap();
    }
    w.finish().unwrap().into_inner()
}

fn ctx() -> Context {
    Context { spark_version: Some("4.3.0".parse::<SparkVersion>().unwrap()), now_ms: Some(0), ..Default::default() }
}

#[test]
fn one_sst_listed_many_times_is_read_as_often_as_once() {
    let files = load(FIXTURE);
    let (outcome, healthy_reads) = diagnose_counting(files.clone());
    assert_eq!(outcome, RestartOutcome::Resumes);
    let files: Vec<(String, Vec<u8>)> = files
        .into_iter()
        // The zip's Hadoop sidecar would no longer match the rewritten zip.
        .filter(|(p, _)| p != "state/0/0/.12.zip.crc")
        .map(|(p, b)| if p == ZIP { (p, with_repeated_sst(&b, 20_000)) } else { (p, b) })
        .collect();
    let (outcome, reads) = diagnose_counting(files);
    assert_eq!(outcome, RestartOutcome::Resumes);
    // Before, each of the 20,000 entries read and decoded the SST again.
    for (path, n) in &reads {
        assert!(*n <= healthy_reads.get(path).copied().unwrap_or(0), "{path} read {n} times ({healthy_reads:?})");
    }
}
