//! Extra source lines in the latest offsets file (the breaker run's item 2): Spark reads one line per source
//! after the version and metadata lines (`-` = no offset, anything else an offset, an empty line an empty one)
//! and compares their number with the restarted query's sources. 300,000 `-` lines, 1 MiB of newlines or 30,000
//! empty lines once made a finding, a `sources` entry and a restart-plan step per line (287 MB of JSON, 3.6 GB and
//! an abort); now the first `MAX_SOURCE_OFFSETS` sources are examined one by one, the rest counted in one
//! `source-lines-not-examined` finding, and no code has more than `MAX_FINDINGS_PER_CODE` + 1 findings.

mod common;
use common::*;

use checkpoint_core::archive::{Limits, MemArchive};
use checkpoint_core::checks::MAX_FINDINGS_PER_CODE;
use checkpoint_core::log::offsets::MAX_SOURCE_OFFSETS;
use checkpoint_core::report::{CheckpointReport, Code, Report, RestartOutcome, Severity};
use checkpoint_core::{diagnose, Context, SparkVersion};
use std::collections::BTreeMap;

const AGG: &str = "ss-4.3.0-agg-hdfs";

fn ctx() -> Context {
    Context { spark_version: Some(SparkVersion::new(4, 3, 0)), now_ms: Some(1_796_083_200_000), ..Default::default() }
}

/// The fixture with `tail` appended to `offsets/11` (its `.crc` sidecar removed), diagnosed in memory.
fn with_tail(tail: &str) -> Report {
    let mut files = load(AGG);
    for (p, b) in files.iter_mut() {
        if p == "offsets/11" {
            b.extend_from_slice(tail.as_bytes());
        }
    }
    files.retain(|(p, _)| p != "offsets/.11.crc");
    let mut a = MemArchive::new("t.zip", files, Limits::default()).expect("archive");
    diagnose(&mut a, &ctx())
}

/// Every bound the report must keep whatever the number of source lines: findings per code, sources listed, JSON
/// size; returns the one checkpoint.
fn bounded(r: &Report) -> &CheckpointReport {
    assert_eq!(r.checkpoints.len(), 1);
    let c = &r.checkpoints[0];
    let mut per_code: BTreeMap<Code, usize> = BTreeMap::new();
    for f in &c.findings {
        *per_code.entry(f.code).or_default() += 1;
    }
    assert!(per_code.values().all(|n| *n <= MAX_FINDINGS_PER_CODE + 1), "{per_code:?}");
    assert!(c.sources.len() <= MAX_SOURCE_OFFSETS, "{} sources listed", c.sources.len());
    let json = serde_json::to_string(r).expect("json");
    assert!(json.len() < 2 << 20, "{} bytes of JSON", json.len());
    c
}

fn finding(c: &CheckpointReport, code: Code) -> &checkpoint_core::report::Finding {
    c.findings.iter().find(|f| f.code == code).unwrap_or_else(|| panic!("no {code}: {:?}", c.findings))
}

#[test]
fn three_hundred_thousand_dash_lines() {
    let r = with_tail(&"\n-".repeat(300_000));
    let c = bounded(&r);
    let f = finding(c, Code::SourceLinesNotExamined);
    assert_eq!(f.severity, Severity::Warning);
    assert!(
        f.title.starts_with("offsets/11 has 300001 source lines: the first 1000 were examined one by one"),
        "{}",
        f.title
    );
    assert!(
        f.evidence[0].detail.contains("299001 \"-\" (no offset), 0 valid JSON, 0 not valid JSON"),
        "{:?}",
        f.evidence
    );
    assert!(f.why.contains("There are [300001] sources in the checkpoint offsets"), "{}", f.why);
    let count = finding(c, Code::SourceCountDiffers);
    assert!(count.title.contains("offsets/11 lists 300001 source(s)"), "{}", count.title);
    // The count decides: Spark stops at it before any source reads its offset.
    assert_eq!(c.restart.outcome, RestartOutcome::Fails);
    assert_eq!(c.restart.exception.as_deref(), Some("java.lang.AssertionError"));
    // The findings folded beyond the cap say how many there were.
    let shapes: Vec<_> = c.findings.iter().filter(|f| f.code == Code::SourceOffsetShape).collect();
    assert_eq!(shapes.len(), MAX_FINDINGS_PER_CODE + 1);
    assert!(shapes.iter().any(|f| f.title.starts_with("899 more source-offset-shape findings")), "{shapes:?}");
}

#[test]
fn one_mebibyte_of_newlines() {
    let r = with_tail(&"\n".repeat(1 << 20));
    let c = bounded(&r);
    // The fixture's one source, then 2^20 - 1 empty lines (the last newline ends the file).
    let n = 1u64 << 20;
    let f = finding(c, Code::SourceLinesNotExamined);
    assert!(f.title.starts_with(&format!("offsets/11 has {n} source lines")), "{}", f.title);
    assert!(f.evidence[0].detail.ends_with(&format!("{} not valid JSON", n - 1000)), "{:?}", f.evidence);
    // 20 empty offsets named one by one, the others in one finding with their number and the first one's line.
    let bad: Vec<_> = c.findings.iter().filter(|f| f.code == Code::SourceOffsetUnparsable).collect();
    assert_eq!(bad.len(), 21, "{bad:?}");
    let rest = bad.iter().find(|f| f.title.contains("more source offset(s)")).expect("the aggregated finding");
    assert_eq!(rest.title, format!("{} more source offset(s) in offsets/11 are not valid JSON", n - 1 - 20));
    assert_eq!(rest.severity, Severity::Error);
    assert!(rest.evidence[0].detail.starts_with("line 24: "), "{:?}", rest.evidence);
    assert_eq!(c.restart.outcome, RestartOutcome::Fails);
}

#[test]
fn thirty_thousand_empty_lines_in_the_middle() {
    // The empty lines between the fixture's source line and one more valid file-source offset.
    let r = with_tail(&format!("{}\n{{\"logOffset\":5}}", "\n".repeat(30_000)));
    let c = bounded(&r);
    assert!(c.findings.len() < 300, "{} findings", c.findings.len());
    let f = finding(c, Code::SourceLinesNotExamined);
    assert!(f.evidence[0].detail.contains("1 valid JSON"), "{:?}", f.evidence);
}

/// A query with more sources than are examined one by one, the same in both offsets files a restart reads: the
/// count agrees, so the sources beyond the bound decide, and they were not verified: unknown, not a verdict.
#[test]
fn many_sources_in_both_files_is_not_verified() {
    let extra = "\n-".repeat(1500);
    let mut files = load(AGG);
    for (p, b) in files.iter_mut() {
        if p == "offsets/11" || p == "offsets/10" {
            b.extend_from_slice(extra.as_bytes());
        }
    }
    files.retain(|(p, _)| p != "offsets/.11.crc" && p != "offsets/.10.crc");
    let mut a = MemArchive::new("t.zip", files, Limits::default()).expect("archive");
    let r = diagnose(&mut a, &ctx());
    let c = bounded(&r);
    let counts = c.findings.iter().filter(|f| f.code == Code::SourceCountDiffers);
    assert!(
        counts.clone().all(|f| f.severity != Severity::Error && !f.title.starts_with("offsets/11")),
        "{:?}",
        c.findings
    );
    assert_eq!(finding(c, Code::SourceLinesNotExamined).severity, Severity::Warning);
    assert_eq!(c.restart.outcome, RestartOutcome::Unknown, "{}", c.restart.summary);
}

#[test]
fn older_files_counted_past_the_bound_of_all_kept_offsets_are_no_finding() {
    // 300 batches of a union of 900 sources (none with an offset yet): the offsets kept one by one in all reach
    // `MAX_KEPT_SOURCE_OFFSETS` after 222 files, so the older ones are only counted. That is this inspector's
    // bound on files no restart reads, with as many sources as the latest: no finding (before, one per file).
    let mut files = vec![("chk/metadata".to_string(), b"{\"id\":\"6f1c3a52-5b0e-4c3e-9d7a-2b8f0e4d1c9a\"}".to_vec())];
    for b in 0..300 {
        let meta =
            format!("{{\"batchWatermarkMs\":0,\"batchTimestampMs\":{},\"conf\":{{}}}}", 1_796_000_000_000u64 + b);
        files.push((format!("chk/offsets/{b}"), format!("v1\n{meta}{}", "\n-".repeat(900)).into_bytes()));
        files.push((format!("chk/commits/{b}"), b"v1\n{\"nextBatchWatermarkMs\":0}".to_vec()));
    }
    let mut a = MemArchive::new("union.zip", files, Limits::default()).expect("archive");
    let r = diagnose(&mut a, &ctx());
    let c = bounded(&r);
    assert_eq!(c.last_batch_id, Some(299));
    let noise: Vec<&str> =
        c.findings.iter().filter(|f| f.code == Code::SourceLinesNotExamined).map(|f| f.title.as_str()).collect();
    assert!(noise.is_empty(), "{noise:?}");
    assert!(!c.findings.iter().any(|f| f.code == Code::SourceCountDiffers), "{:?}", c.findings);
}

/// A share link of such a report fits its budget: the restart plan's way out that starts a new checkpoint has a
/// step per examined source (a thousand), and the sources list a thousand; both are cut, with notes, like the
/// other long lists (the link was refused, 17,204 bytes over a 16,384-byte budget).
#[test]
fn the_share_link_of_ten_thousand_source_lines_fits_its_budget() {
    use checkpoint_core::share::{open_fragment, share_report, ShareOptions, DEFAULT_BUDGET_BYTES};
    let r = with_tail(&"\n-".repeat(10_000));
    let c = bounded(&r);
    let plan = c.restart_plan.as_ref().expect("a plan");
    assert!(plan.ways_out.iter().any(|w| w.steps.len() > 1000), "a step per source");
    let link = share_report(&r, &ShareOptions::default()).expect("a link within the budget");
    assert!(link.bytes <= DEFAULT_BUDGET_BYTES, "{}", link.bytes);
    assert!(link.cut_notes.iter().any(|n| n.starts_with("restart plan: only the first")), "{:?}", link.cut_notes);
    let opened = open_fragment(&link.fragment).expect("opens");
    assert_eq!(opened.cut_notes, link.cut_notes);
    let back = opened.typed().expect("a report");
    let plan = back.checkpoints[0].restart_plan.as_ref().expect("a plan");
    let cut = plan.ways_out.iter().find(|w| w.steps.iter().any(|s| s.contains("more steps not in this link")));
    assert!(cut.is_some(), "the cut way out says how many steps it lost");
    assert_eq!(back.checkpoints[0].restart.outcome, c.restart.outcome);
}
