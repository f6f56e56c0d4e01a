//! Issue 12's hostile inputs, each answered with a finding in bounded work: zips made with bzip2 or LZMA (one
//! finding, never "corrupt"), an overlapping-entry bomb (detected at listing, nothing of it inflated), a
//! ratio-1000 file inside a real fixture (listed; refused only when read, and then "not verified"), state
//! folders named by huge numbers, 40 000 roots, 220 000 entries, and the latest log files over the log budget
//! or the per-file cap. Work is asserted on counters and sizes (bytes inflated, findings, roots), not on time.

mod common;
use common::zipcraft;
use common::*;

use checkpoint_core::archive::{Archive, Limits, MemArchive, ZipInput};
use checkpoint_core::layout::find_roots;
use checkpoint_core::log::LogError;
use checkpoint_core::read::{read_checkpoint_with, ReadOptions};
use checkpoint_core::report::{Code, Report, RestartOutcome, Severity};
use checkpoint_core::{diagnose, Context, SparkVersion};
use std::io::Cursor;

const AGG: &str = "ss-4.3.0-agg-hdfs";

fn ctx() -> Context {
    Context { spark_version: Some(SparkVersion::new(4, 3, 0)), now_ms: Some(1_796_083_200_000), ..Default::default() }
}

fn open(z: Vec<u8>) -> ZipInput<Cursor<Vec<u8>>> {
    let len = z.len() as u64;
    ZipInput::open(Cursor::new(z), len, "t.zip", Limits::default()).expect("the zip is listed")
}

fn codes(r: &Report) -> Vec<Code> {
    r.checkpoints.iter().flat_map(|c| &c.findings).map(|f| f.code).collect()
}

fn count(r: &Report, code: Code) -> usize {
    codes(r).iter().filter(|c| **c == code).count()
}

#[test]
fn bzip2_and_lzma_zips_give_one_finding_never_corrupt() {
    for (method, name) in [(12u16, "bzip2"), (14, "LZMA")] {
        let mut z = zipcraft::deflated_zip(&load(AGG));
        zipcraft::set_method(&mut z, method);
        let mut a = open(z);
        let r = diagnose(&mut a, &ctx());
        assert_eq!(a.bytes_inflated(), 0);
        assert_eq!(count(&r, Code::ArchiveCompressionUnsupported), 1, "{:?}", codes(&r));
        let f = r.checkpoints[0].findings.iter().find(|f| f.code == Code::ArchiveCompressionUnsupported).unwrap();
        assert!(f.title.contains(name) && f.title.contains("re-zip with deflate"), "{}", f.title);
        assert_eq!(f.severity, Severity::Warning);
        for damage in
            [Code::StateFileCorrupt, Code::ArchiveEntryUnreadable, Code::MetadataUnreadable, Code::LogFileMalformed]
        {
            assert_eq!(count(&r, damage), 0, "{name}: {:?}", codes(&r));
        }
        assert_eq!(r.checkpoints[0].restart.outcome, RestartOutcome::Unknown);
    }
}

/// 2000 entries aliasing one 16 MiB kernel of zeros (32 GB if each were inflated): detected at listing, named,
/// nothing of them inflated; the checkpoint beside them is diagnosed as without them.
#[test]
fn overlap_bomb_is_detected_at_listing_and_never_inflated() {
    let mut files = load(AGG);
    files.push(("bomb/kernel".into(), vec![0u8; 16 << 20]));
    let z = zipcraft::deflated_zip(&files);
    let kernel = files.len() - 1;
    let names: Vec<String> = (0..2000).map(|i| format!("bomb/{i}")).collect();
    let z = zipcraft::alias(&z, kernel, &names);
    let mut a = open(z);
    let blocked = a.unreadable_entries().len();
    assert!(blocked >= 2000, "{blocked} entries flagged");
    for n in &names[..3] {
        let e = a.read(n, u64::MAX).unwrap_err();
        assert!(e.to_string().contains("overlaps entry"), "{e}");
    }
    let r = diagnose(&mut a, &ctx());
    let plain = diagnose(&mut MemArchive::new("p", load(AGG), Limits::default()).unwrap(), &ctx());
    assert!(a.bytes_inflated() < 1 << 20, "inflated {} bytes", a.bytes_inflated());
    let f = r.checkpoints[0].findings.iter().find(|f| f.code == Code::ArchiveEntriesOverlap).expect("overlap finding");
    assert!(f.title.starts_with("2001 zip entr") || f.title.starts_with("2000 zip entr"), "{}", f.title);
    assert_eq!(f.severity, Severity::Info, "a restart reads none of them");
    assert_eq!(r.checkpoints[0].restart.outcome, plain.checkpoints[0].restart.outcome);
}

/// A zero-filled snapshot compressing 1000:1 inside a real fixture: the archive is listed and diagnosed. Off the
/// restart's chain it changes nothing; as the chain's snapshot it is refused when read (the ratio limit) and
/// reported as not verified, naming the file and the limit (never as damage), with the verdict unknown.
#[test]
fn ratio_1000_file_inside_a_real_fixture() {
    let plain = diagnose(&mut MemArchive::new("p", load(AGG), Limits::default()).unwrap(), &ctx());
    let mut off_chain = load(AGG);
    off_chain.push(("state/0/0/5.snapshot".into(), vec![0u8; 64 << 20]));
    let mut a = open(zipcraft::deflated_zip(&off_chain));
    let r = diagnose(&mut a, &ctx());
    assert_eq!(codes(&r), codes(&plain));
    assert_eq!(r.checkpoints[0].restart.outcome, plain.checkpoints[0].restart.outcome);

    let mut in_chain = load(AGG);
    in_chain.retain(|(p, _)| p != "state/0/0/12.snapshot" && p != "state/0/0/.12.snapshot.crc");
    in_chain.push(("state/0/0/12.snapshot".into(), vec![0u8; 64 << 20]));
    let mut a = open(zipcraft::deflated_zip(&in_chain));
    let r = diagnose(&mut a, &ctx());
    let f = r.checkpoints[0].findings.iter().find(|f| f.code == Code::FileNotVerified).expect("not verified");
    assert_eq!(f.evidence[0].path, "state/0/0/12.snapshot");
    assert!(
        f.evidence[0].detail.contains("compression ratio") && f.evidence[0].detail.contains("250"),
        "{}",
        f.evidence[0].detail
    );
    assert_eq!(count(&r, Code::StateFileCorrupt), 0, "{:?}", codes(&r));
    assert_eq!(r.checkpoints[0].restart.outcome, RestartOutcome::Unknown);
    assert!(a.bytes_inflated() < 1 << 20, "the refused file was not inflated: {}", a.bytes_inflated());
}

/// Folders `state/0/4000000000` and `state/111111111111`: no walk over the ids below them; the missing
/// operator ids in one finding, the number of findings bounded.
#[test]
fn state_folders_named_by_huge_numbers() {
    let mut files = load(AGG);
    files.push(("state/0/4000000000/1.delta".into(), b"x".to_vec()));
    files.push(("state/111111111111/0/1.delta".into(), b"x".to_vec()));
    files.push(("state/4294967296000/4294967295/1.delta".into(), b"x".to_vec()));
    let r = diagnose(&mut MemArchive::new("h", files, Limits::default()).unwrap(), &ctx());
    let missing: Vec<_> = r.checkpoints[0].findings.iter().filter(|f| f.code == Code::StateOperatorMissing).collect();
    assert_eq!(missing.len(), 1);
    assert!(missing[0].title.contains("4294967295998 ids"), "{}", missing[0].title);
    assert!(missing[0].evidence.len() <= 6);
    assert!(r.checkpoints[0].findings.len() < 100, "{} findings", r.checkpoints[0].findings.len());
    // Spark loads partitions 0..2 (recorded); the extra folders (of operator 0 and of the last operator) are named.
    assert_eq!(count(&r, Code::StatePartitionExtra), 2);
}

/// 40 000 roots in one zip: found in one pass (layout), the first 1000 diagnosed, the rest named in one finding.
#[test]
fn forty_thousand_roots() {
    let files: Vec<(String, Vec<u8>)> =
        (0..40_000).map(|i| (format!("r{i:05}/metadata"), b"{\"id\":\"a\"}".to_vec())).collect();
    let a = MemArchive::new("roots", files, Limits::default()).unwrap();
    assert_eq!(find_roots(a.entries()).len(), 40_000);
    let r = diagnose(&mut { a }, &ctx());
    assert_eq!(r.checkpoints.len(), checkpoint_core::diagnose::MAX_ROOTS);
    let f = r.checkpoints[0].findings.iter().find(|f| f.code == Code::RootsNotDiagnosed).expect("roots finding");
    assert!(f.title.starts_with("40000 checkpoint roots"), "{}", f.title);
    assert_eq!(f.evidence[0].path, "r01000");
}

/// 220 000 entries (1000 shuffle partitions x 100 retained versions is ~220 000; a 230-partition join ~203 000)
/// are listed and diagnosed, not refused.
#[test]
fn two_hundred_twenty_thousand_entries_are_read() {
    let mut files = load(AGG);
    for p in 3..2203u32 {
        for v in 1..=100 {
            files.push((format!("state/0/{p}/{v}.delta"), Vec::new()));
        }
    }
    let n = files.len();
    assert!(n > 220_000);
    let z = {
        use std::io::Write;
        let mut w = zip::ZipWriter::new(Cursor::new(Vec::new()));
        let opts = zip::write::SimpleFileOptions::default().compression_method(zip::CompressionMethod::Stored);
        for (p, b) in &files {
            w.start_file(p.as_str(), opts).unwrap();
            w.write_all(b).unwrap();
        }
        w.finish().unwrap().into_inner()
    };
    let mut a = open(z);
    assert_eq!(a.entries().len(), n);
    let r = diagnose(&mut a, &ctx());
    assert_eq!(r.input.entries, n as u64);
    assert_eq!(r.checkpoints.len(), 1);
    assert_eq!(count(&r, Code::StatePartitionExtra), 1);
}

/// The latest two offsets files and the latest commit are read whatever the log budget (a restart reads them);
/// older ones are listed as not read.
#[test]
fn latest_logs_are_read_over_the_log_budget() {
    let mut a = MemArchive::new("b", load(AGG), Limits::default()).unwrap();
    let roots = find_roots(a.entries());
    let cp = read_checkpoint_with(&mut a, &roots[0], &ReadOptions { log_budget_bytes: 0, ..ReadOptions::default() });
    for id in [11, 10] {
        assert!(cp.offsets[&id].file.content.is_ok(), "offsets/{id}");
    }
    assert!(cp.commits[&11].file.content.is_ok());
    assert!(matches!(cp.offsets[&9].file.content, Err(LogError::NotRead { .. })));
    assert!(matches!(cp.commits[&10].file.content, Err(LogError::NotRead { .. })));
}

/// The latest offsets file over the 16 MiB per-file cap: not verified and the verdict unknown, never "resumes
/// from batch 10" nor damage.
#[test]
fn latest_offsets_over_the_file_cap_make_the_verdict_unknown() {
    let mut files = load(AGG);
    let i = files.iter().position(|(p, _)| p == "offsets/11").unwrap();
    let t = String::from_utf8(files[i].1.clone()).unwrap();
    let pad = format!("\"conf\":{{\"x.pad\":\"{}\",", "p".repeat(17 << 20));
    files[i].1 = t.replacen("\"conf\":{", &pad, 1).into_bytes();
    files.retain(|(p, _)| p != "offsets/.11.crc");
    let r = diagnose(&mut MemArchive::new("b", files, Limits::default()).unwrap(), &ctx());
    let c = &r.checkpoints[0];
    assert_eq!(c.restart.outcome, RestartOutcome::Unknown, "{}", c.restart.summary);
    let f = c.findings.iter().find(|f| f.code == Code::FileNotVerified).expect("not verified");
    assert_eq!(f.evidence[0].path, "offsets/11");
    assert!(c.findings.iter().all(|f| f.severity != Severity::Error), "{:?}", codes(&r));
}

/// A log file and a state file a restart reads that the input cannot give when read: one finding naming both,
/// the verdict unknown; never "malformed", "damaged" or "fails".
#[test]
fn files_the_input_does_not_give_when_read_make_the_verdict_unknown_not_damaged() {
    let mut a = common::faulty::Faulty::new(MemArchive::new("t", load(AGG), Limits::default()).unwrap());
    for p in ["offsets/11", "state/0/1/12.snapshot"] {
        let reason = "Permission denied (os error 13)".to_string();
        a.on_read
            .push((p.into(), checkpoint_core::ArchiveError::Inaccessible { path: p.into(), reason, folder: false }));
    }
    let r = diagnose(&mut a, &ctx());
    let c = &r.checkpoints[0];
    assert_eq!(c.restart.outcome, RestartOutcome::Unknown, "{:?}", codes(&r));
    assert!(!codes(&r).iter().any(|c| matches!(c, Code::LogFileMalformed | Code::StateFileCorrupt)), "{:?}", codes(&r));
    let f: Vec<_> = c.findings.iter().filter(|f| f.code == Code::ArchiveEntryUnreadable).collect();
    assert_eq!(f.len(), 1, "{:?}", codes(&r));
    assert_eq!(f[0].severity, Severity::Error);
    let paths: Vec<&str> = f[0].evidence.iter().map(|e| e.path.as_str()).collect();
    assert_eq!(paths, ["offsets/11", "state/0/1/12.snapshot"]);
    assert!(f[0].evidence.iter().all(|e| e.detail.contains("Permission denied")));
}
