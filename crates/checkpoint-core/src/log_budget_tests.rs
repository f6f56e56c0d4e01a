//! Bounded reading of the offsets and commits logs (total byte budget, elided old source offsets) and zip
//! entries that cannot be unpacked (`archive-entry-unreadable`), on real fixtures changed in memory.

use crate::archive::{Archive, ArchiveError, Entry, Limits, MemArchive};
use crate::diagnose::report_for;
use crate::layout::find_roots;
use crate::log::LogError;
use crate::model::Checkpoint;
use crate::read::{read_checkpoint_with, ReadOptions};
use crate::report::{CheckpointReport, RestartOutcome, Severity};
use crate::testutil::{open_fixture, Recorder};
use crate::{diagnose, Context};

fn files_of(name: &str) -> Vec<(String, Vec<u8>)> {
    let mut z = open_fixture(name);
    let paths: Vec<String> = z.entries().iter().filter(|e| !e.is_dir).map(|e| e.path.clone()).collect();
    paths.into_iter().map(|p| (p.clone(), z.read(&p, 1 << 30).expect("fixture entry reads"))).collect()
}

fn read(a: &mut dyn Archive, opts: &ReadOptions) -> Checkpoint {
    let roots = find_roots(a.entries());
    assert_eq!(roots.len(), 1);
    read_checkpoint_with(a, &roots[0], opts)
}

/// Pads the JSON source offset line of every offsets file but the latest with a `pad` field of `pad` bytes
/// (json4s ignores unknown fields) and drops their `.crc` sidecars.
fn padded(name: &str, pad: usize) -> Vec<(String, Vec<u8>)> {
    let files = files_of(name);
    let latest = files
        .iter()
        .filter_map(|(p, _)| p.strip_prefix("offsets/").and_then(|n| n.parse::<i64>().ok()))
        .max()
        .expect("offsets");
    let mut out = Vec::new();
    for (p, mut b) in files {
        let id = p.strip_prefix("offsets/").and_then(|n| n.parse::<i64>().ok());
        if p.starts_with("offsets/.") && p.ends_with(".crc") {
            continue;
        }
        if id.is_some_and(|i| i < latest) {
            let text = String::from_utf8(b).expect("utf8");
            let (head, last) = text.rsplit_once('\n').expect("3 lines");
            assert!(last.starts_with('{'), "{last}");
            b = format!("{head}\n{{\"pad\":\"{}\",{}", "x".repeat(pad), &last[1..]).into_bytes();
        }
        out.push((p, b));
    }
    out
}

#[test]
fn log_files_beyond_the_budget_are_listed_not_read_and_old_offsets_are_elided() {
    let name = "ss-4.3.0-agg-hdfs";
    let pad = 100_000;
    let files = padded(name, pad);
    let mut a = MemArchive::new("t", files.clone(), Limits::default()).expect("mem");
    // Room for the latest few offsets files only.
    let opts = ReadOptions { log_budget_bytes: 5 * pad as u64, ..ReadOptions::default() };
    let cp = read(&mut a, &opts);
    let last = cp.last_batch_id().expect("batches");
    assert!(last >= 6, "fixture has {last} batches");
    let not_read: Vec<i64> = cp
        .offsets
        .iter()
        .filter(|(_, f)| matches!(f.file.content, Err(LogError::NotRead { .. })))
        .map(|(id, _)| *id)
        .collect();
    assert!(!not_read.is_empty() && not_read.contains(&0), "{not_read:?}");
    // Newest first: every file not read is older than every file read.
    let read_ids: Vec<i64> = cp.offsets.iter().filter(|(_, f)| f.file.content.is_ok()).map(|(id, _)| *id).collect();
    assert!(not_read.iter().max() < read_ids.iter().min(), "{not_read:?} vs {read_ids:?}");
    assert!(read_ids.contains(&last));
    // All commits are small and read.
    assert!(cp.commits.values().all(|f| f.file.content.is_ok()));
    // The latest three readable offsets and the last committed batch keep their source offsets; older read
    // ones are elided, and only the latest keeps its confs.
    let keep: Vec<i64> = read_ids.iter().rev().take(crate::read::KEEP_FULL_OFFSETS).copied().collect();
    let start = crate::restart_plan::start_batch(&cp).expect("committed batch").0;
    let mut elided = 0;
    for id in &read_ids {
        let o = cp.offsets[id].file.content.as_ref().expect("read");
        let whole = keep.contains(id) || *id == start;
        for s in &o.offsets {
            assert_eq!(s.elided, !whole, "batch {id}");
            assert_eq!(s.raw.is_some(), whole, "batch {id}");
            elided += usize::from(s.elided);
        }
        let conf = o.metadata.as_ref().map(|m| m.conf.len()).unwrap_or(0);
        assert_eq!(conf > 0, *id == last, "batch {id} conf {conf}");
    }
    assert!(elided > 0, "no read offsets file was elided");

    // The report: an info finding naming the files not read, no finding about their content, and the same
    // prediction as with everything read.
    let ctx = Context::default();
    let limited = report_for(&cp, &ctx);
    let mut a = MemArchive::new("t", files, Limits::default()).expect("mem");
    let full = report_for(&read(&mut a, &ReadOptions::default()), &ctx);
    let nr: Vec<_> = limited.findings.iter().filter(|f| f.code == "log-files-not-read").collect();
    assert_eq!(nr.len(), 1);
    assert_eq!(nr[0].severity, Severity::Info);
    let detail = &nr[0].evidence[0].detail;
    for id in &not_read {
        assert!(detail.contains(&format!("offsets/{id} (")), "{detail}");
    }
    assert!(!limited.findings.iter().any(|f| f.code.as_str().starts_with("log-file-")));
    assert!(!full.findings.iter().any(|f| f.code == "log-files-not-read"));
    assert_eq!(limited.restart, full.restart);
}

/// An archive whose entry `bad` does not inflate, as a damaged zip's would.
struct CorruptEntry<A: Archive> {
    inner: A,
    bad: String,
}

impl<A: Archive> Archive for CorruptEntry<A> {
    fn entries(&self) -> &[Entry] {
        self.inner.entries()
    }
    fn read(&mut self, path: &str, max_bytes: u64) -> Result<Vec<u8>, ArchiveError> {
        if path == self.bad {
            return Err(ArchiveError::Corrupt {
                path: path.into(),
                offset: 0,
                reason: "invalid deflate stream".into(),
                header: None,
            });
        }
        self.inner.read(path, max_bytes)
    }
    fn name(&self) -> &str {
        self.inner.name()
    }
    fn input_bytes(&self) -> u64 {
        self.inner.input_bytes()
    }
}

fn with_corrupt(name: &str, bad: &str) -> CheckpointReport {
    let mut a = CorruptEntry { inner: open_fixture(name), bad: bad.into() };
    let mut r = diagnose(&mut a, &Context::default());
    assert_eq!(r.checkpoints.len(), 1);
    r.checkpoints.remove(0)
}

#[test]
fn a_zip_entry_that_does_not_inflate_is_an_archive_problem_not_a_damaged_log() {
    for name in ["ss-4.3.0-agg-hdfs", "ss-3.5.9-agg-rocksdb"] {
        let healthy = with_corrupt(name, "-");
        assert_eq!(healthy.restart.outcome, RestartOutcome::Resumes, "{name}");
        let mut a = open_fixture(name);
        let cp = read(&mut a, &ReadOptions::default());
        let last = cp.last_batch_id().expect("batches");
        let last_commit = cp.last_committed_batch_id().expect("commits");
        // Entries a restart reads: the prediction is unknown and the finding an error.
        for bad in ["metadata".to_string(), format!("offsets/{last}"), format!("commits/{last_commit}")] {
            let r = with_corrupt(name, &bad);
            let f: Vec<_> = r.findings.iter().filter(|f| f.code == "archive-entry-unreadable").collect();
            assert_eq!(f.len(), 1, "{name} {bad}");
            assert_eq!(f[0].severity, Severity::Error, "{name} {bad}");
            assert!(f[0].evidence[0].path == bad);
            assert!(f[0].fix.iter().any(|s| s.contains("zip -r")), "{:?}", f[0].fix);
            assert!(!r
                .findings
                .iter()
                .any(|f| f.code.as_str().starts_with("log-file-") || f.code == "metadata-unreadable"));
            assert_eq!(r.restart.outcome, RestartOutcome::Unknown, "{name} {bad}");
            assert!(r.restart.exception.is_none());
        }
        // An old offsets file a restart does not read: a warning, and the prediction stands.
        let r = with_corrupt(name, "offsets/0");
        let f: Vec<_> = r.findings.iter().filter(|f| f.code == "archive-entry-unreadable").collect();
        assert_eq!(f.len(), 1);
        assert_eq!(f[0].severity, Severity::Warning);
        assert_eq!(r.restart, healthy.restart, "{name}");
    }
}

fn replace(files: &mut [(String, Vec<u8>)], path: &str, f: impl FnOnce(&mut Vec<u8>)) {
    let e = files.iter_mut().find(|(p, _)| p == path).expect("file in fixture");
    f(&mut e.1);
}

fn report(files: Vec<(String, Vec<u8>)>, ctx: &Context) -> CheckpointReport {
    let mut a = MemArchive::new("t", files, Limits::default()).expect("mem");
    let mut r = diagnose(&mut a, ctx);
    r.checkpoints.remove(0)
}

#[test]
fn a_damaged_offsets_file_names_its_size_apart_and_the_fix_follows_whether_it_is_committed() {
    let name = "ss-4.3.0-agg-hdfs";
    let mut a = open_fixture(name);
    let cp = read(&mut a, &ReadOptions::default());
    let last_commit = cp.last_committed_batch_id().expect("commits");
    let last = cp.last_batch_id().expect("offsets");
    for id in [last_commit, 0] {
        let path = format!("offsets/{id}");
        let mut files = files_of(name);
        files.retain(|(p, _)| *p != format!("offsets/.{id}.crc"));
        let mut size = 0;
        // Cut the metadata line (line 2) inside its JSON.
        replace(&mut files, &path, |b| {
            let text = String::from_utf8(b.clone()).expect("utf8");
            *b = text.replacen("{\"batchWatermarkMs\":", "{\"batchWatermarkMs\":{{", 1).into_bytes();
            size = b.len() as u64;
        });
        let r = report(files, &Context::default());
        let f = r
            .findings
            .iter()
            .find(|f| f.code.as_str().starts_with("log-file-") && f.evidence[0].path == path)
            .unwrap_or_else(|| panic!("finding for {path}: {:?}", r.findings));
        assert_eq!(f.evidence[0].size, Some(size));
        assert!(!f.evidence[0].detail.contains("bytes;"), "{}", f.evidence[0].detail);
        assert!(f.evidence[0].detail.starts_with("line 2:"), "{}", f.evidence[0].detail);
        let fixes = f.fix.join("\n");
        assert!(!fixes.contains("If batch"), "{fixes}");
        assert!(fixes.contains(&format!("Batch {id} is committed: do not delete {path}")), "{fixes}");
    }
    assert!(last >= last_commit);
}

#[test]
fn the_source_count_error_is_quoted_with_both_numbers() {
    let ctx = Context {
        error_text: Some(
            "java.lang.AssertionError: assertion failed: There are [1] sources in the checkpoint offsets and now there are [3] sources requested by the query. Cannot continue.".into(),
        ),
        ..Default::default()
    };
    let r = report(files_of("ss-4.3.0-agg-hdfs"), &ctx);
    let f = r.findings.iter().find(|f| f.code == "source-count-changed").expect("finding");
    let d = &f.evidence[0].detail;
    assert!(d.contains("(the error: 1 source(s) in the checkpoint, 3 in the query)"), "{d}");
}

/// 3,000 batches of the 4.3 HDFS fixture's offsets and commits files, with a log budget for about half of them.
fn three_thousand_batches() -> (Vec<(String, Vec<u8>)>, u64) {
    let base = files_of("ss-4.3.0-agg-hdfs");
    let offsets = base.iter().find(|(p, _)| p == "offsets/11").expect("offsets/11").1.clone();
    let commit = base.iter().find(|(p, _)| p == "commits/11").expect("commits/11").1.clone();
    let mut files: Vec<(String, Vec<u8>)> =
        base.into_iter().filter(|(p, _)| !p.starts_with("offsets/") && !p.starts_with("commits/")).collect();
    for b in 0..3000 {
        files.push((format!("offsets/{b}"), offsets.clone()));
        files.push((format!("commits/{b}"), commit.clone()));
    }
    (files, 1500 * (offsets.len() + commit.len()) as u64)
}

/// The 3,000 batches in a recording archive, and read options with their log budget.
fn recorded_batches() -> (Recorder<MemArchive>, ReadOptions) {
    let (files, budget) = three_thousand_batches();
    let a = Recorder::new(MemArchive::new("t", files, Limits::default()).expect("mem"));
    (a, ReadOptions { log_budget_bytes: budget, ..ReadOptions::default() })
}

fn is_log(p: &str) -> bool {
    (p.starts_with("offsets/") || p.starts_with("commits/")) && !p.ends_with(".crc")
}

/// Each log file read from read number `from` on was named by a hint given from hint number `hints_from` on and
/// before it was read.
fn hinted_before_read(a: &Recorder<MemArchive>, from: usize, hints_from: usize) {
    for (r, path) in a.reads.iter().enumerate().skip(from).filter(|(_, p)| is_log(p)) {
        let hints = &a.hints[hints_from.min(a.hints_before_read[r])..a.hints_before_read[r]];
        assert!(hints.iter().any(|h| h.contains(path)), "{path} read without a hint before it");
    }
}

/// The log stage's prefetch hints name exactly the offsets and commits files it then reads, each once, before
/// it reads them, in a few growing hints (a browser pays per slice), also when the budget runs out part way and
/// later files are only listed: 3,000 batches, a budget for about half of them.
#[test]
fn log_hints_name_the_files_read_once_each_in_few_hints() {
    let (mut a, opts) = recorded_batches();
    let cp = read(&mut a, &opts);
    let log_hints: Vec<&Vec<String>> = a.hints.iter().filter(|h| h.iter().any(|p| is_log(p))).collect();
    let hinted: Vec<&String> = log_hints.iter().flat_map(|h| h.iter()).filter(|p| is_log(p)).collect();
    let read_logs: Vec<&String> = a.reads.iter().filter(|p| is_log(p)).collect();
    let not_read = cp.offsets.values().filter(|f| matches!(f.file.content, Err(LogError::NotRead { .. }))).count();
    assert!(not_read > 1000, "the budget leaves files unread: {not_read}");
    let unique: std::collections::BTreeSet<&String> = hinted.iter().copied().collect();
    assert_eq!(unique.len(), hinted.len(), "a file hinted twice");
    let read_set: std::collections::BTreeSet<&String> = read_logs.iter().copied().collect();
    let differ = unique.symmetric_difference(&read_set).count();
    assert_eq!(differ, 0, "{differ} files hinted and not read or read and not hinted");
    hinted_before_read(&a, 0, 0);
    assert!(log_hints.len() <= 12, "{} hints for {} files", log_hints.len(), read_logs.len());
}

/// The verdict first (the page's path): the files read after the verdict are hinted after it, before their
/// reads (what was hinted before the verdict and left for later may have been dropped by the archive since).
#[test]
fn log_hints_after_the_verdict_name_what_is_read_after_it() {
    let (mut a, opts) = recorded_batches();
    let roots = find_roots(a.entries());
    let members: Vec<usize> = (0..a.entries().len()).collect();
    let (mut cp, history) = crate::read::read_root_verdict_first(&mut a, &roots[0], &members, &opts);
    let (reads, hints) = (a.reads.len(), a.hints.len());
    crate::read::read_history(&mut a, &roots[0], &mut cp, history.expect("history left to read"));
    assert!(a.reads[reads..].iter().filter(|p| is_log(p)).count() > 1000, "most of the logs read after the verdict");
    hinted_before_read(&a, reads, hints);
    let one_pass = read(&mut MemArchive::new("t", three_thousand_batches().0, Limits::default()).unwrap(), &opts);
    assert_eq!(cp.offsets, one_pass.offsets);
}
