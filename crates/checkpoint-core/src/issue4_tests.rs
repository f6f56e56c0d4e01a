//! Issue 4's checks on real fixtures, damaged in memory: every test starts from a zip Spark wrote, changes
//! one file the way a failure would, and expects the finding naming that file. Golden numbers come from
//! Spark's own `.state.jsonl` dumps.

use crate::archive::{Archive, Limits, MemArchive};
use crate::read::{read_checkpoint_with, ReadOptions};
use crate::report::{Finding, Report, Severity};
use crate::restart_chain::{plan, ChainFileKind, PlanInput};
use crate::testutil::{fixtures_dir, open_fixture};
use crate::{diagnose, Context, SparkVersion};
use std::collections::BTreeMap;

/// Every file of a fixture zip, in memory.
fn files_of(name: &str) -> Vec<(String, Vec<u8>)> {
    let mut z = open_fixture(name);
    let paths: Vec<String> = z.entries().iter().filter(|e| !e.is_dir).map(|e| e.path.clone()).collect();
    paths.into_iter().map(|p| (p.clone(), z.read(&p, 1 << 30).expect("fixture entry reads"))).collect()
}

fn mem(files: Vec<(String, Vec<u8>)>) -> MemArchive {
    MemArchive::new("test", files, Limits::default()).expect("mem archive")
}

fn run(files: Vec<(String, Vec<u8>)>, ctx: &Context) -> Report {
    diagnose(&mut mem(files), ctx)
}

fn ctx(v: &str) -> Context {
    Context { spark_version: Some(v.parse::<SparkVersion>().expect("version")), ..Default::default() }
}

fn findings<'a>(r: &'a Report, code: &str) -> Vec<&'a Finding> {
    r.checkpoints.iter().flat_map(|c| c.findings.iter()).filter(|f| f.code == code).collect()
}

/// Files of the chain a restart loads for operator 0, partition `part`, default store.
fn chain_of(files: &[(String, Vec<u8>)], part: u32) -> Vec<(String, ChainFileKind)> {
    let mut a = mem(files.to_vec());
    let roots = crate::layout::find_roots(a.entries());
    let cp = read_checkpoint_with(
        &mut a,
        &roots[0],
        &ReadOptions { verify_state: false, check_rows: false, budget_bytes: 0, ..ReadOptions::default() },
    );
    let version = cp.restart_version().expect("restart version");
    let provider = cp.operator_provider(0);
    let store = &cp.state.operators[&0].partitions[&part].stores["default"];
    let chain = plan(store, version, &PlanInput::new(&provider));
    assert!(chain.missing.is_none(), "fixture chain is complete");
    chain.steps.into_iter().map(|s| (s.path, s.kind)).collect()
}

fn replace(files: &mut Vec<(String, Vec<u8>)>, path: &str, f: impl FnOnce(&mut Vec<u8>)) {
    let e = files.iter_mut().find(|(p, _)| p == path).expect("file to damage exists");
    f(&mut e.1);
    // The damage is in the file itself: drop its Hadoop sidecar so only the reader can notice.
    let (dir, name) = path.rsplit_once('/').unwrap_or(("", path));
    let crc = format!("{dir}/.{name}.crc");
    files.retain(|(p, _)| *p != crc);
}

#[test]
fn truncated_delta_in_the_chain_is_named_with_its_offset() {
    // A real HDFS fixture whose restart chain replays a delta.
    let (mut files, path) =
        ["ss-4.3.0-agg-hdfs", "ss-4.1.4-agg-hdfs", "ss-4.0.5-agg-hdfs", "ss-3.5.9-dedup", "ss-4.3.0-dedup"]
            .iter()
            .find_map(|name| {
                let files = files_of(name);
                let parts =
                    crate::testutil::fixture_record(name)["facts"]["state_partitions"].as_u64().unwrap_or(3) as u32;
                let path = (0..parts).flat_map(|p| chain_of(&files, p)).rfind(|(_, k)| *k == ChainFileKind::Delta)?.0;
                Some((files, path))
            })
            .expect("a fixture whose chain has a delta");
    let mut cut = 0;
    replace(&mut files, &path, |b| {
        cut = b.len() / 2;
        b.truncate(cut);
    });
    for v in ["3.5.9", "4.0.5", "4.3.0"] {
        let r = run(files.clone(), &ctx(v));
        let f = findings(&r, "state-file-corrupt");
        let f = f
            .iter()
            .find(|f| f.evidence.iter().any(|e| e.path == path))
            .unwrap_or_else(|| panic!("{v}: no finding for {path}"));
        assert_eq!(f.severity, Severity::Error, "{v}");
        let e = f.evidence.iter().find(|e| e.path == path).expect("evidence");
        assert!(e.offset.is_some_and(|o| o <= cut as u64), "{v}: offset {:?} within the cut file", e.offset);
        assert_eq!(r.checkpoints[0].restart.outcome, crate::report::RestartOutcome::Fails, "{v}");
        if v != "3.5.9" {
            assert!(
                f.error_classes.iter().any(|c| c.starts_with("CANNOT_LOAD_STATE_STORE")),
                "{v}: {:?}",
                f.error_classes
            );
        }
    }
}

#[test]
fn bad_lz4_block_checksum_is_reported() {
    let mut files = files_of("ss-4.3.0-agg-hdfs");
    let chain = chain_of(&files, 0);
    let (path, _) = chain.last().cloned().expect("chain");
    // lz4-java block header: magic (8), token (1), compressed length (4), original length (4), checksum (4).
    replace(&mut files, &path, |b| b[17] ^= 0xFF);
    let r = run(files, &ctx("4.3.0"));
    let all: Vec<&Finding> = findings(&r, "state-file-corrupt");
    let f = all.iter().find(|f| f.evidence.iter().any(|e| e.path == path)).expect("finding for the damaged file");
    let e = f.evidence.iter().find(|e| e.path == path).expect("evidence");
    assert!(e.detail.to_lowercase().contains("checksum"), "{}", e.detail);
    assert_eq!(e.offset, Some(0), "the first block fails");
}

#[test]
fn zip_missing_a_listed_sst_names_the_sst() {
    let mut files = files_of("ss-4.3.0-agg-rocksdb");
    // The first partition whose chain starts with a zip that lists SST files.
    let mut hit = None;
    for part in 0..8u32 {
        let Some((zip, ChainFileKind::Zip)) = chain_of(&files, part).first().cloned() else { continue };
        let bytes = &files.iter().find(|(p, _)| *p == zip).expect("zip").1;
        let z =
            crate::state::rocksdb::zip_meta::read_version_zip(bytes, Default::default()).expect("fixture zip reads");
        if let Some(sst) = z.metadata.sst_files.first() {
            let dir = zip.rsplit_once('/').map(|x| x.0).unwrap_or("");
            hit = Some((zip.clone(), format!("{dir}/SSTs/{}", sst.dfs_file_name)));
            break;
        }
    }
    let (zip, sst) = hit.expect("a zip listing SSTs");
    files.retain(|(p, _)| *p != sst);
    let r = run(files, &ctx("4.3.0"));
    // The SST is blamed first, then the zip whose metadata lists it (rocksdb-sst-missing; Spark 4.1.4 raised
    // CANNOT_LOAD_STATE_STORE.UNCATEGORIZED on FileNotFoundException, tests/data/spark/rocksdb-sst-missing-*).
    let f = findings(&r, "rocksdb-sst-missing");
    let f = f.iter().find(|f| f.evidence[0].path == sst).expect("finding on the SST");
    assert!(f.evidence.iter().any(|e| e.path == format!("{zip}!/metadata")), "{:?}", f.evidence);
    assert_eq!(f.error_classes, vec!["CANNOT_LOAD_STATE_STORE.UNCATEGORIZED".to_string()]);
}

/// Rows per partition of operator 0's default store in Spark's dump.
fn golden_rows(name: &str) -> BTreeMap<u32, (u64, Option<i64>)> {
    let text = std::fs::read_to_string(fixtures_dir().join(format!("{name}.state.jsonl"))).expect("dump");
    let mut out: BTreeMap<u32, (u64, Option<i64>)> = BTreeMap::new();
    for line in text.lines().filter(|l| !l.trim().is_empty()) {
        let j: serde_json::Value = serde_json::from_str(line).expect("jsonl");
        if j["operatorId"] != 0 || j["storeName"] != "default" {
            continue;
        }
        let p = j["partition_id"].as_u64().expect("partition") as u32;
        let e = out.entry(p).or_default();
        e.0 += 1;
        if let Some(end) = j["key"]["window"]["end"].as_str() {
            let ms = parse_iso_ms(end);
            e.1 = Some(e.1.map_or(ms, |m: i64| m.min(ms)));
        }
    }
    out
}

/// `2024-01-01T00:00:40.000Z` → ms since the epoch.
fn parse_iso_ms(s: &str) -> i64 {
    let n = |a: usize, b: usize| s[a..b].parse::<i64>().expect("digits");
    let (y, mo, d, h, mi, sec, ms) = (n(0, 4), n(5, 7), n(8, 10), n(11, 13), n(14, 16), n(17, 19), n(20, 23));
    let y2 = if mo <= 2 { y - 1 } else { y };
    let era = y2.div_euclid(400);
    let yoe = y2 - era * 400;
    let doy = (153 * (mo + if mo > 2 { -3 } else { 9 }) + 2) / 5 + d - 1;
    let days = era * 146_097 + yoe * 365 + yoe / 4 - yoe / 100 + doy - 719_468;
    ((days * 24 + h) * 60 + mi) * 60_000 + sec * 1000 + ms
}

#[test]
fn rows_at_the_restart_version_match_sparks_dump_and_none_is_behind_the_watermark() {
    for name in [
        "ss-4.0.5-agg-hdfs",
        "ss-4.0.5-agg-rocksdb-changelog",
        "ss-4.1.4-agg-hdfs",
        "ss-4.1.4-agg-rocksdb",
        "ss-4.1.4-agg-rocksdb-ckptv2",
        "ss-4.3.0-agg-hdfs",
        "ss-4.3.0-agg-rocksdb",
        "ss-4.3.0-agg-rocksdb-changelog",
        "ss-4.3.0-agg-rocksdb-ckptv2",
        "ss-4.3.0-agg-rocksdb-ckptv2-rowchecksum",
        "ss-4.1.4-dedup",
        "ss-4.3.0-dedup",
    ] {
        let mut a = open_fixture(name);
        let roots = crate::layout::find_roots(a.entries());
        let cp = read_checkpoint_with(&mut a, &roots[0], &ReadOptions::default());
        assert_eq!(cp.last_batch_id(), cp.last_committed_batch_id(), "{name}: dump is of the restart version");
        let golden = golden_rows(name);
        assert!(!golden.is_empty(), "{name}");
        for (part, (rows, min_end)) in &golden {
            let dir = format!("state/0/{part}");
            let s = cp.store_rows.get(&dir).unwrap_or_else(|| panic!("{name}: {dir} not read"));
            assert_eq!(s.rows, *rows, "{name} {dir}");
            assert_eq!(s.bad_rows, 0, "{name} {dir}: {:?} {:?}", s.bad_key, s.bad_value);
            assert_eq!(s.window_end_min_ms, *min_end, "{name} {dir}");
            // Spark evicted every window the watermark passed (update mode).
            assert_eq!(s.keys_behind_watermark, 0, "{name} {dir}");
        }
        let r = diagnose(&mut open_fixture(name), &Context::default());
        // RocksDB snapshots at the restart version: the zips' numKeys add up to Spark's row count.
        let version = cp.last_committed_batch_id().expect("committed") + 1;
        let op0 = &r.checkpoints[0].operators[0];
        if let Some(p) = op0.state_size.iter().find(|p| p.version == version && p.snapshot_keys.is_some()) {
            if u64::from(p.snapshot_partitions) == op0.partitions {
                let total: u64 = golden.values().map(|g| g.0).sum();
                assert_eq!(p.snapshot_keys, Some(total as i64), "{name}: numKeys at version {version}");
            }
        }
        assert!(findings(&r, "state-row-schema-violation").is_empty(), "{name}");
        assert!(findings(&r, "state-keys-behind-watermark").is_empty(), "{name}");
    }
}

#[test]
fn a_watermark_past_the_windows_reports_keys_not_evicted() {
    let mut files = files_of("ss-4.3.0-agg-hdfs");
    let mut a = mem(files.clone());
    let roots = crate::layout::find_roots(a.entries());
    let cp = read_checkpoint_with(&mut a, &roots[0], &ReadOptions::default());
    let last = cp.last_committed_batch_id().expect("committed");
    // As if batch `last` had a watermark far in the future while its state kept the windows (complete mode).
    let path = format!("offsets/{last}");
    let e = files.iter_mut().find(|(p, _)| *p == path).expect("offsets");
    let text = String::from_utf8(e.1.clone()).expect("utf8");
    let old = cp.offsets[&last]
        .file
        .content
        .as_ref()
        .expect("parsed")
        .metadata
        .as_ref()
        .expect("md")
        .batch_watermark_ms
        .expect("wm");
    e.1 = text.replacen(&format!("\"batchWatermarkMs\":{old}"), "\"batchWatermarkMs\":4102444800000", 1).into_bytes();
    files.retain(|(p, _)| *p != format!("offsets/.{last}.crc"));
    let r = run(files, &ctx("4.3.0"));
    let f = findings(&r, "state-keys-behind-watermark");
    assert_eq!(f.len(), 1, "{:?}", r.checkpoints[0].findings.iter().map(|f| &f.code).collect::<Vec<_>>());
    let total: u64 = golden_rows("ss-4.3.0-agg-hdfs").values().map(|x| x.0).sum();
    assert!(f[0].title.starts_with(&format!("{total} of {total} state keys")), "{}", f[0].title);
}

/// `ss-4.3.0-agg-hdfs` with the key row of record `nth` (0-based) of partition 0's first chain file marked
/// null in field 0 although its slot is set.
fn with_bad_key_row(nth: usize) -> (Vec<(String, Vec<u8>)>, String) {
    let mut files = files_of("ss-4.3.0-agg-hdfs");
    let chain = chain_of(&files, 0);
    let (path, _) = chain.first().cloned().expect("chain");
    replace(&mut files, &path, |b| {
        let mut data = crate::codec::decompress(b, 1 << 30).expect("fixture file decompresses");
        let mut at = 0usize;
        for _ in 0..nth {
            let ks = i32::from_be_bytes(data[at..at + 4].try_into().expect("4 bytes")) as usize;
            let vs = i32::from_be_bytes(data[at + 4 + ks..at + 8 + ks].try_into().expect("4 bytes")) as usize;
            at += 8 + ks + vs;
        }
        data[at + 4] |= 1;
        *b = crate::codec::write::lz4_block_stream(&data, 32 * 1024);
    });
    (files, path)
}

#[test]
fn the_first_row_spark_validates_fails_the_restart_per_version() {
    let (files, path) = with_bad_key_row(0);
    for (v, class, exc) in [
        ("4.3.0", Some("CANNOT_LOAD_STATE_STORE.KEY_ROW_FORMAT_VALIDATION_FAILURE"), "org.apache.spark.SparkException"),
        (
            "4.0.5",
            Some("STATE_STORE_KEY_ROW_FORMAT_VALIDATION_FAILURE"),
            "org.apache.spark.sql.execution.streaming.state.StateStoreKeyRowFormatValidationFailure",
        ),
        ("3.5.9", None, "org.apache.spark.sql.execution.streaming.state.InvalidUnsafeRowException"),
    ] {
        let r = run(files.clone(), &ctx(v));
        let f = findings(&r, "state-row-schema-violation");
        assert_eq!(f.len(), 1, "{v}");
        assert_eq!(f[0].severity, Severity::Error, "{v}");
        assert!(f[0].evidence.iter().any(|e| e.path == path), "{v}: {:?}", f[0].evidence);
        assert!(
            f[0].evidence.iter().any(|e| e.path == "state/0/0" && e.detail.contains("key row")),
            "{:?}",
            f[0].evidence
        );
        let rf = f[0].restart_failure.as_ref().expect("predicted failure");
        assert_eq!(rf.error_class.as_deref(), class, "{v}");
        assert_eq!(rf.exception, exc, "{v}");
        assert_eq!(r.checkpoints[0].restart.outcome, crate::report::RestartOutcome::Fails, "{v}");
    }
    // Validation turned off: Spark loads the row as is.
    let mut off = ctx("4.3.0");
    off.session_conf.insert("spark.sql.streaming.stateStore.formatValidation.enabled".into(), "false".into());
    let r = run(files, &off);
    let f = findings(&r, "state-row-schema-violation");
    assert_eq!(f[0].severity, Severity::Warning);
    assert!(f[0].restart_failure.is_none());
}

#[test]
fn a_bad_row_spark_does_not_validate_is_a_warning() {
    let (files, _) = with_bad_key_row(1);
    let r = run(files, &ctx("4.3.0"));
    let f = findings(&r, "state-row-schema-violation");
    assert_eq!(f.len(), 1);
    assert_eq!(f[0].severity, Severity::Warning);
    assert!(f[0].restart_failure.is_none());
    assert!(f[0].title.starts_with("1 state row(s)"), "{}", f[0].title);
}

#[test]
fn the_byte_budget_skips_state_files_and_says_so() {
    let mut files = files_of("ss-4.3.0-agg-hdfs");
    let chain = chain_of(&files, 1);
    let (path, _) = chain.last().cloned().expect("chain");
    replace(&mut files, &path, |b| b.truncate(b.len() / 2));
    let small = Context { verify_budget_bytes: Some(0), ..ctx("4.3.0") };
    let r = run(files.clone(), &small);
    assert!(findings(&r, "state-file-corrupt").is_empty(), "nothing read, nothing found");
    let b = findings(&r, "state-verification-budget");
    assert_eq!(b.len(), 1);
    assert_eq!(b[0].severity, Severity::Info);
    assert!(b[0].evidence.iter().any(|e| e.path == path));
    let deep = Context { verify_budget_bytes: Some(u64::MAX), ..ctx("4.3.0") };
    let r = run(files, &deep);
    assert!(!findings(&r, "state-file-corrupt").is_empty());
    assert!(findings(&r, "state-verification-budget").is_empty());
}

#[test]
fn zip_entry_times_are_read_and_a_rewritten_offsets_file_is_flagged() {
    let name = "ss-4.3.0-agg-hdfs";
    let z = open_fixture(name);
    let off = z.entries().iter().find(|e| e.path == "offsets/3").and_then(|e| e.modified_ms).expect("zip entry time");
    let com = z.entries().iter().find(|e| e.path == "commits/3").and_then(|e| e.modified_ms).expect("zip entry time");
    // Spark wrote offsets/3 before commits/3.
    assert!(off <= com + 2000, "{off} {com}");
    let r = diagnose(&mut open_fixture(name), &Context::default());
    assert!(findings(&r, "offsets-rewritten-after-commit").is_empty());
    let mut a = mem(files_of(name));
    for e in z.entries() {
        a.set_modified(&e.path, e.modified_ms);
    }
    assert!(a.set_modified("offsets/3", Some(com + 3_600_000)));
    let r = diagnose(&mut a, &ctx("4.3.0"));
    let f = findings(&r, "offsets-rewritten-after-commit");
    assert_eq!(f.len(), 1);
    assert!(f[0].evidence.iter().any(|e| e.path == "offsets/3") && f[0].evidence.iter().any(|e| e.path == "commits/3"));
    // Times from a copy that did not keep them (every offsets file newer than its commit) say nothing.
    let mut a = mem(files_of(name));
    for e in z.entries() {
        let shifted = e.modified_ms.map(|t| if e.path.starts_with("offsets/") { t + 60_000 } else { t });
        a.set_modified(&e.path, shifted);
    }
    assert!(findings(&diagnose(&mut a, &ctx("4.3.0")), "offsets-rewritten-after-commit").is_empty());
    // Ages against --now.
    let now = Context { now_ms: Some(com + 3 * 86_400_000), ..ctx("4.3.0") };
    let r = diagnose(&mut open_fixture(name), &now);
    let age = findings(&r, "last-activity-age");
    assert_eq!(age.len(), 1);
    assert!(age[0].title.contains("last committed"), "{}", age[0].title);
}

/// An archive that records which entries were read.
struct Recording<A: Archive> {
    inner: A,
    reads: Vec<String>,
}

impl<A: Archive> Archive for Recording<A> {
    fn entries(&self) -> &[crate::archive::Entry] {
        self.inner.entries()
    }
    fn read(&mut self, path: &str, max_bytes: u64) -> Result<Vec<u8>, crate::archive::ArchiveError> {
        self.reads.push(path.to_string());
        self.inner.read(path, max_bytes)
    }
    fn name(&self) -> &str {
        self.inner.name()
    }
    fn input_bytes(&self) -> u64 {
        self.inner.input_bytes()
    }
}

#[test]
fn with_budget_zero_only_the_listing_and_small_log_files_are_read() {
    for name in ["ss-4.3.0-agg-hdfs", "ss-4.3.0-agg-rocksdb", "ss-4.3.0-join", "ss-4.1.4-agg-rocksdb-ckptv2"] {
        let mut a = Recording { inner: open_fixture(name), reads: vec![] };
        let r = diagnose(&mut a, &Context { verify_budget_bytes: Some(0), ..Default::default() });
        assert_eq!(r.checkpoints.len(), 1);
        for p in &a.reads {
            let file = p.rsplit('/').next().unwrap_or("");
            let state_data = p.starts_with("state/")
                && (file.ends_with(".delta")
                    || file.ends_with(".snapshot")
                    || file.ends_with(".zip")
                    || file.ends_with(".changelog")
                    || file.ends_with(".sst"));
            assert!(!state_data, "{name}: {p} read although the budget is 0");
        }
        assert!(a.reads.iter().any(|p| p.starts_with("offsets/")), "{name}: logs are read");
    }
}

#[test]
fn healthy_checkpoints_spark_wrote_raise_none_of_the_new_warnings() {
    for name in crate::testutil::fixture_names().into_iter().filter(|n| n.starts_with("ss-")) {
        let r = diagnose(&mut open_fixture(&name), &Context::default());
        for code in [
            "state-row-schema-violation",
            "state-keys-behind-watermark",
            "offsets-rewritten-after-commit",
            "state-verification-budget",
            "state-file-corrupt",
        ] {
            assert!(findings(&r, code).is_empty(), "{name}: {code}");
        }
    }
}

#[test]
fn growth_and_a_stuck_watermark_are_judged_from_the_series() {
    use crate::model::{Checkpoint, GrowthPoint};
    let mut cp = Checkpoint {
        kind: crate::model::Kind(crate::report::CheckpointKind::StructuredStreaming),
        ..Default::default()
    };
    let pt = |v: i64, bytes: u64| GrowthPoint {
        version: v,
        partitions: 2,
        snapshot_bytes: bytes,
        keys: None,
        delta_bytes: 0,
    };
    cp.state_growth.insert(0, vec![pt(10, 2000), pt(20, 3000), pt(30, 5000)]);
    let f = crate::checks::state_growth::check_growth(&cp, &Context::default());
    assert_eq!(f.len(), 1);
    assert!(f[0].title.contains("2.5x"), "{}", f[0].title);
    // Not monotone: state shrank once, so eviction works.
    cp.state_growth.insert(0, vec![pt(10, 2000), pt(20, 1000), pt(30, 5000)]);
    assert!(crate::checks::state_growth::check_growth(&cp, &Context::default()).is_empty());
    // Keys win over bytes when every point has them.
    let kp =
        |v: i64, k: i64| GrowthPoint { version: v, partitions: 1, snapshot_bytes: 100, keys: Some(k), delta_bytes: 0 };
    cp.state_growth.insert(0, vec![kp(1, 10), kp(2, 15), kp(3, 30)]);
    let f = crate::checks::state_growth::check_growth(&cp, &Context::default());
    assert!(f.len() == 1 && f[0].title.contains("keys"), "{f:?}");
}

#[test]
fn a_watermark_frozen_for_many_batches_is_reported() {
    // A real windowed aggregation; the last six batches rewritten to keep the watermark of the sixth-last.
    let name = "ss-4.3.0-agg-hdfs";
    let mut files = files_of(name);
    let mut a = mem(files.clone());
    let roots = crate::layout::find_roots(a.entries());
    let cp = read_checkpoint_with(&mut a, &roots[0], &ReadOptions::default());
    let last = cp.last_batch_id().expect("batches");
    let wm_of = |b: i64| {
        cp.offsets[&b]
            .file
            .content
            .as_ref()
            .ok()
            .and_then(|o| o.metadata.as_ref())
            .and_then(|m| m.batch_watermark_ms)
            .unwrap_or(0)
    };
    let frozen = wm_of(last - 5);
    for b in (last - 4)..=last {
        let path = format!("offsets/{b}");
        let e = files.iter_mut().find(|(p, _)| *p == path).expect("offsets");
        let text = String::from_utf8(e.1.clone()).expect("utf8");
        e.1 = text
            .replacen(&format!("\"batchWatermarkMs\":{}", wm_of(b)), &format!("\"batchWatermarkMs\":{frozen}"), 1)
            .into_bytes();
        files.retain(|(p, _)| *p != format!("offsets/.{b}.crc"));
    }
    let r = run(files, &ctx("4.3.0"));
    let f = findings(&r, "watermark-not-advancing");
    assert_eq!(f.len(), 1, "{:?}", r.checkpoints[0].findings.iter().map(|f| &f.code).collect::<Vec<_>>());
    let n: usize = f[0]
        .title
        .split("for the last ")
        .nth(1)
        .and_then(|t| t.split(' ').next())
        .and_then(|n| n.parse().ok())
        .expect("count");
    assert!(n >= 6, "{}", f[0].title);
    // The real checkpoint's watermark moved.
    let r = diagnose(&mut open_fixture(name), &Context::default());
    assert!(findings(&r, "watermark-not-advancing").is_empty());
}

#[test]
fn a_truncated_changelog_in_the_chain_fails_the_restart_naming_it() {
    let name = "ss-4.3.0-agg-rocksdb-changelog";
    let mut files = files_of(name);
    // Without the newest snapshot (uploaded asynchronously, so legitimately absent) the restart replays
    // changelogs on top of an older zip.
    let newest = chain_of(&files, 0).first().cloned().expect("chain").0;
    let (dir, file) = newest.rsplit_once('/').expect("path");
    let sidecar = format!("{dir}/.{file}.crc");
    files.retain(|(p, _)| *p != newest && *p != sidecar);
    let (path, _) =
        chain_of(&files, 0).into_iter().rfind(|(_, k)| *k == ChainFileKind::Changelog).expect("a changelog");
    replace(&mut files, &path, |b| b.truncate(b.len() - 8));
    for v in ["3.5.9", "4.3.0"] {
        let r = run(files.clone(), &ctx(v));
        let f = findings(&r, "state-file-corrupt");
        let f = f.iter().find(|f| f.evidence.iter().any(|e| e.path == path)).unwrap_or_else(|| panic!("{v}: {path}"));
        assert_eq!(f.severity, Severity::Error, "{v}");
        assert!(f.evidence.iter().any(|e| e.path == path && e.offset.is_some()), "{v}");
        let rf = f.restart_failure.as_ref().expect("fails");
        if v == "4.3.0" {
            assert_eq!(rf.error_class.as_deref(), Some("CANNOT_LOAD_STATE_STORE.UNCATEGORIZED"));
        } else {
            assert_eq!(rf.error_class, None);
        }
    }
}

#[test]
fn damaged_chain_files_never_panic_the_row_and_growth_checks() {
    for (name, step) in
        [("ss-4.3.0-agg-hdfs", 3usize), ("ss-4.3.0-agg-rocksdb", 61), ("ss-4.3.0-agg-rocksdb-changelog", 61)]
    {
        let files = files_of(name);
        for (path, _) in chain_of(&files, 0) {
            let len = files.iter().find(|(p, _)| *p == path).map(|(_, b)| b.len()).unwrap_or(0);
            for at in (0..len).step_by(step) {
                let mut f = files.clone();
                replace(&mut f, &path, |b| b[at] ^= 0x5A);
                let r = run(f, &ctx("4.3.0"));
                assert_eq!(r.checkpoints.len(), 1, "{name} {path} @{at}");
            }
            let mut f = files.clone();
            replace(&mut f, &path, |b| b.truncate(len / 3));
            let r = run(f, &ctx("3.5.9"));
            assert_eq!(r.checkpoints.len(), 1);
        }
    }
}

#[test]
fn an_lz4_block_that_does_not_decode_names_where_the_block_starts() {
    let mut files = files_of("ss-4.3.0-agg-hdfs");
    let chain = chain_of(&files, 0);
    let (path, _) = chain.last().cloned().expect("chain");
    // lz4-java block: magic (8), token (1), compressed length (4), original length (4), checksum (4), payload.
    replace(&mut files, &path, |b| {
        let clen = u32::from_le_bytes([b[9], b[10], b[11], b[12]]) as usize;
        for x in b.iter_mut().skip(21).take(clen) {
            *x = 0xF0;
        }
    });
    let r = run(files, &ctx("4.3.0"));
    let texts: Vec<String> = r
        .checkpoints
        .iter()
        .flat_map(|c| c.findings.iter())
        .flat_map(|f| f.evidence.iter().filter(|e| e.path == path).map(|e| e.detail.clone()))
        .collect();
    assert!(texts.iter().any(|t| t.contains("lz4 block starting at byte 0 d")), "{texts:?}");
    assert!(!texts.iter().any(|t| t.contains("(byte 0)")), "{texts:?}");
}
