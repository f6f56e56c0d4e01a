//! The file log budgets (issue 12, a reviewer's findings on the first streamed version): entries past the
//! memory budget never turn a finding into a wrong answer (the files a restart reads are kept first, what is
//! kept is a prefix in reading order, and a decision that needs an entry not kept is "not verified"), file log
//! bytes are charged before each read, and temp copies compare without their entries. On the real Spark 4.1.4
//! checkpoint `source-path-changed-4.1.4` (a file source and a file sink, written by `tools/spark-gen/`),
//! changed in memory.

use crate::archive::{Archive, Limits, MemArchive};
use crate::checks::catalogue::Code;
use crate::diagnose::report_for;
use crate::log::file_log::FileLogBatch;
use crate::log::LogError;
use crate::model::Checkpoint;
use crate::read::{read_checkpoint_with, ReadOptions};
use crate::report::{CheckpointReport, RestartOutcome, Severity};
use crate::testutil::generated_files;
use crate::Context;

const REAL: &str = "source-path-changed-4.1.4";

/// The folder of the real run's input files (`file:///tmp/spark-gen-…/in-a`) and its sibling `in-b`.
fn in_a_and_b(files: &[(String, Vec<u8>)]) -> (String, String) {
    let log = &files.iter().find(|(p, _)| p == "chk/sources/0/0").expect("sources/0/0").1;
    let first = crate::log::file_log::parse(log).expect("parses").entries[0].path.clone();
    let a = first.rsplit_once('/').expect("folder").0.to_string();
    let b = format!("{}/in-b", a.rsplit_once('/').expect("parent").0);
    (a, b)
}

/// The files with `path` replaced by `bytes` and its Hadoop sidecar dropped.
fn with_file(mut files: Vec<(String, Vec<u8>)>, path: &str, bytes: Vec<u8>) -> Vec<(String, Vec<u8>)> {
    let (dir, name) = path.rsplit_once('/').expect("a folder");
    let crc = format!("{dir}/.{name}.crc");
    files.retain(|(p, _)| *p != crc && p != path);
    files.push((path.to_string(), bytes));
    files
}

/// A source log entry line of batch `batch`.
fn source_line(path: &str, batch: i64) -> String {
    format!("{{\"path\":\"{path}\",\"timestamp\":1796305774218,\"batchId\":{batch}}}\n")
}

/// A sink log entry line.
fn sink_line(path: &str, action: &str) -> String {
    format!("{{\"path\":\"{path}\",\"size\":1,\"isDir\":false,\"modificationTime\":1,\"blockReplication\":1,\"blockSize\":1,\"action\":\"{action}\"}}\n")
}

/// The checkpoint `chk` of `files` read with `opts`.
fn read_chk(files: &[(String, Vec<u8>)], opts: &ReadOptions) -> Checkpoint {
    let mut a = MemArchive::new("t", files.to_vec(), Limits::default()).expect("archive");
    let root = crate::layout::find_roots(a.entries()).into_iter().find(|r| r.path == "chk").expect("chk");
    read_checkpoint_with(&mut a, &root, opts)
}

fn codes(r: &CheckpointReport) -> Vec<(Code, Severity)> {
    r.findings.iter().map(|f| (f.code, f.severity)).collect()
}

#[test]
fn replanned_files_past_the_entry_budget_make_the_verdict_unknown_not_resumes() {
    // Batch 0, which a restart plans again, read 2,000 files under in-b (the path given) and the real run's
    // three under in-a: Spark stops on the wrong basePath. Kept are only the first entries, all under in-b.
    let files = generated_files(REAL);
    let (_, b) = in_a_and_b(&files);
    let real = String::from_utf8(files.iter().find(|(p, _)| p == "chk/sources/0/0").unwrap().1.clone()).unwrap();
    let mut log = String::from("v1\n");
    (0..2000).for_each(|i| log.push_str(&source_line(&format!("{b}/f-{i}.json"), 0)));
    log.push_str(real.split_once('\n').unwrap().1);
    let files = with_file(files, "chk/sources/0/0", log.into_bytes());
    let mut ctx = Context::default();
    ctx.source_paths.insert(0, b.clone());
    let small = ReadOptions { file_log_entry_bytes: 50_000, ..ReadOptions::default() };
    let cp = read_chk(&files, &small);
    let batch = cp.source_logs[&0].read[&0].file.content.as_ref().expect("verified");
    assert!(batch.not_kept > 1000 && batch.entry_count() == 2003, "{} {}", batch.entries.len(), batch.not_kept);
    let r = report_for(&cp, &ctx);
    assert!(codes(&r).contains(&(Code::FileNotVerified, Severity::Warning)), "{:#?}", codes(&r));
    assert!(!codes(&r).contains(&(Code::FileSourcePath, Severity::Error)));
    assert_eq!(r.restart.outcome, RestartOutcome::Unknown, "{}", r.restart.summary);
    // With every entry kept: the failure Spark had.
    let r = report_for(&read_chk(&files, &ReadOptions::default()), &ctx);
    assert!(codes(&r).contains(&(Code::FileSourcePath, Severity::Error)), "{:#?}", codes(&r));
    assert!(!codes(&r).iter().any(|c| c.0 == Code::FileNotVerified));
    assert_eq!(r.restart.outcome, RestartOutcome::Fails);
}

#[test]
fn the_files_a_restart_reads_are_kept_first_newest_first_and_the_kept_entries_are_a_prefix() {
    // A source log of batches 0..=12, compaction every 10: a restart reads 9.compact, 10, 11 and 12.
    let mut files = generated_files(REAL);
    files.retain(|(p, _)| !p.starts_with("chk/sources/0/"));
    for id in 0..=12i64 {
        let n = if id == 9 { 1000 } else { 100 };
        let mut log = String::from("v1\n");
        // The compaction's paths are long, the older batches' short: one of those would fit what is left.
        let folder = if id == 9 { "x".repeat(300) } else { "in".to_string() };
        (0..n).for_each(|i| log.push_str(&source_line(&format!("file:///{folder}/{id}-{i}.json"), id)));
        let name = if id == 9 { "9.compact".to_string() } else { id.to_string() };
        files.push((format!("chk/sources/0/{name}"), log.into_bytes()));
    }
    // Room for about 500 entries (each costs its struct and its path).
    let per = crate::log::file_log::entry_cost(
        &crate::log::file_log::parse(b"v1\n{\"path\":\"file:///in/10-10.json\"}").unwrap().entries[0],
    );
    let opts = ReadOptions { file_log_entry_bytes: 500 * per, ..ReadOptions::default() };
    let cp = read_chk(&files, &opts);
    let log = &cp.source_logs[&0];
    let batch = |id: i64| -> &FileLogBatch { log.read[&id].file.content.as_ref().expect("parsed") };
    for id in [12, 11, 10] {
        assert!(batch(id).complete(), "batch {id}, which a restart plans from, is kept whole");
    }
    assert!(!batch(9).complete() && !batch(9).entries.is_empty(), "the compaction is kept in part");
    assert_eq!(batch(9).entry_count(), 1000);
    for id in 0..9 {
        // Read and verified (a log of at most 64 files is read whole), but past the budget: none kept, even
        // where a short file would fit what the compaction left.
        assert_eq!((batch(id).entries.len(), batch(id).not_kept), (0, 100), "batch {id}");
    }
}

#[test]
fn a_sink_file_deleted_past_the_entry_budget_is_not_reported_missing_and_a_missing_one_still_is() {
    let files = generated_files(REAL);
    let out = |p: &str| format!("file:///tmp/spark-gen-6ca2x_1a/out/{p}");
    // Batch 1 adds 3,000 files that are gone and deletes them again; batch 2 adds one that is gone.
    let mut b1 = String::from("v1\n");
    (0..3000).for_each(|i| b1.push_str(&sink_line(&out(&format!("gone-{i}.parquet")), "add")));
    (0..3000).for_each(|i| b1.push_str(&sink_line(&out(&format!("gone-{i}.parquet")), "delete")));
    let b2 = format!("v1\n{}", sink_line(&out("lost.parquet"), "add"));
    let mut files = with_file(files, "out/_spark_metadata/1", b1.into_bytes());
    files.push(("out/_spark_metadata/2".into(), b2.into_bytes()));
    let missing = |left: (u64, u64)| {
        let mut a = MemArchive::new("t", files.clone(), Limits::default()).expect("archive");
        let mut left = left;
        let logs = super::file_logs::read_sink_logs_outside(&mut a, &["chk/".to_string()], &mut left);
        let ctx = Context { sink_logs: logs, ..Context::default() };
        let r = report_for(&read_chk(&files, &ReadOptions::default()), &ctx);
        r.findings.into_iter().filter(|f| f.code == Code::SinkLogFileMissing).collect::<Vec<_>>()
    };
    // Every entry kept: the one lost file.
    let all = missing((u64::MAX, u64::MAX));
    assert_eq!(all.len(), 1);
    assert!(all[0].title.starts_with("1 data file(s)"), "{}", all[0].title);
    // Room for batch 2 and part of batch 1 (its adds, not its deletes): the lost file is still found, no
    // deleted one is called missing.
    let some = missing((600_000, u64::MAX));
    assert_eq!(some.len(), 1, "{some:#?}");
    assert!(some[0].title.starts_with("1 data file(s)"), "{}", some[0].title);
    assert!(some[0].evidence[0].detail.contains("lost.parquet"), "{:?}", some[0].evidence);
    assert!(some[0].evidence[0].detail.contains("not compared"), "{:?}", some[0].evidence);
}

#[test]
fn a_temp_copy_compares_with_its_renamed_file_by_digest_when_entries_are_not_kept() {
    let files = generated_files(REAL);
    let mut log = String::from("v1\n");
    (0..3000).for_each(|i| log.push_str(&source_line(&format!("file:///in/f-{i}.json"), 0)));
    let files = with_file(files, "chk/sources/0/0", log.clone().into_bytes());
    let temp = "chk/sources/0/.0.3f7c1e2a-9b1d-4c55-8f00-0123456789ab.tmp";
    let small = ReadOptions { file_log_entry_bytes: 20_000, ..ReadOptions::default() };
    let find = |files: Vec<(String, Vec<u8>)>| {
        let r = report_for(&read_chk(&files, &small), &Context::default());
        r.findings
            .into_iter()
            .filter(|f| matches!(f.code, Code::ConcurrentWriterTempFile | Code::LeftoverTempFile))
            .collect::<Vec<_>>()
    };
    // The same list: a leftover of the same write.
    let mut same = files.clone();
    same.push((temp.into(), log.clone().into_bytes()));
    let f = find(same);
    assert_eq!(f.iter().map(|f| f.code).collect::<Vec<_>>(), vec![Code::LeftoverTempFile]);
    // One path differs near the end, past what is kept of the renamed file: another writer's list.
    let mut other = files.clone();
    other.push((temp.into(), log.replace("f-2998.json", "f-x.json").into_bytes()));
    let f = find(other);
    assert_eq!(f.iter().map(|f| f.code).collect::<Vec<_>>(), vec![Code::ConcurrentWriterTempFile]);
    assert!(f[0].evidence[0].detail.contains("not named"), "{:?}", f[0].evidence);
}

#[test]
fn file_log_bytes_are_charged_before_each_read_and_a_restart_file_past_them_is_not_verified() {
    let files = generated_files(REAL);
    let opts = ReadOptions { file_log_bytes: 100, ..ReadOptions::default() };
    let cp = read_chk(&files, &opts);
    let content = &cp.source_logs[&0].read[&0].file.content;
    assert!(
        matches!(content, Err(LogError::NotVerified { reason }) if reason.contains("file source and sink log files")),
        "{content:?}"
    );
    let r = report_for(&cp, &Context::default());
    assert!(codes(&r).contains(&(Code::FileNotVerified, Severity::Warning)), "{:#?}", codes(&r));
    assert_eq!(r.restart.outcome, RestartOutcome::Unknown);
    assert_eq!(cp.file_log_budget_left.1, 100, "nothing charged for a file not read");
    let cp = read_chk(&files, &ReadOptions::default());
    assert_eq!(cp.file_log_budget_left.1, crate::read::MAX_FILE_LOG_TOTAL_BYTES - 299);
}

#[test]
fn a_crc_sidecar_cap_holds_the_sums_of_its_file() {
    for size in [0u64, 1, 511, 512, 513, 128 << 20, 256 << 20, (256 << 20) + 1, 1 << 30] {
        let crc_len = 8 + 4 * size.div_ceil(512);
        assert!(super::sidecar_cap(size) >= crc_len, "{size}");
    }
    assert_eq!(super::sidecar_cap(10), super::MAX_SIDECAR_BYTES);
}
