//! The verdict first (`diagnose_progressive`, what the page's worker runs) against the one-pass `diagnose` (the
//! CLI's), on every shared checkpoint and repo test zip, with the verdict pass cut to one log file so that it
//! runs on small fixtures too: the final report is the same value, the verdict's restart prediction is the
//! final one's, and the verdict lists every batch id with its older log files not read yet.

use checkpoint_core::log::LogError;
use checkpoint_core::{diagnose, diagnose_progressive, Context, Limits, Report, ZipInput};
use std::path::PathBuf;

fn inputs() -> Vec<PathBuf> {
    let repo = PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/../.."));
    let mut v = Vec::new();
    let mut walk = vec![repo.join("../shared"), repo.join("crates/checkpoint-core/tests/data")];
    while let Some(dir) = walk.pop() {
        let Ok(rd) = std::fs::read_dir(&dir) else { continue };
        for e in rd.flatten() {
            let p = e.path();
            if p.is_dir() {
                walk.push(p);
            } else if p.extension().is_some_and(|x| x == "zip") {
                v.push(p);
            }
        }
    }
    v.sort();
    assert!(v.len() > 100, "inputs found: {}", v.len());
    v
}

fn open(p: &PathBuf) -> Option<ZipInput<std::io::Cursor<Vec<u8>>>> {
    let bytes = std::fs::read(p).unwrap();
    let len = bytes.len() as u64;
    ZipInput::open(std::io::Cursor::new(bytes), len, "in.zip", Limits::default()).ok()
}

#[test]
fn the_verdict_first_ends_in_the_one_pass_report() {
    let ctx = Context { now_ms: Some(1_795_996_800_000), verdict_log_files: Some(1), ..Default::default() };
    let mut with_verdict = 0;
    for p in inputs() {
        let Some(mut a) = open(&p) else { continue };
        let one_pass = diagnose(&mut a, &ctx);
        let Some(mut a) = open(&p) else { continue };
        let mut verdicts: Vec<Report> = Vec::new();
        let last = diagnose_progressive(&mut a, &ctx, &mut |r| verdicts.push(r.clone()));
        let name = p.display();
        assert_eq!(
            serde_json::to_value(&last).unwrap(),
            serde_json::to_value(&one_pass).unwrap(),
            "{name}: the final report differs from diagnose's"
        );
        assert!(verdicts.len() <= 1, "{name}: {} verdicts", verdicts.len());
        let Some(v) = verdicts.pop() else { continue };
        with_verdict += 1;
        assert_eq!(v.checkpoints.len(), 1, "{name}");
        let (v, f) = (&v.checkpoints[0], &last.checkpoints[0]);
        assert_eq!(v.restart, f.restart, "{name}: the verdict's restart prediction is not the final one's");
        let ids =
            |c: &checkpoint_core::report::CheckpointReport| c.batches.iter().map(|b| b.batch_id).collect::<Vec<_>>();
        assert_eq!(ids(v), ids(f), "{name}: the verdict lists other batch ids");
        assert_eq!(v.last_batch_id, f.last_batch_id, "{name}");
        assert_eq!(v.last_committed_batch_id, f.last_committed_batch_id, "{name}");
        // Nothing is said of a file not read yet.
        for finding in &v.findings {
            for e in &finding.evidence {
                assert!(
                    !e.detail.contains("not read yet"),
                    "{name}: {} names a deferred file: {}",
                    finding.code,
                    e.detail
                );
            }
        }
    }
    // Most real checkpoints have more than the verdict's one file (and its must-reads) of history.
    assert!(with_verdict > 50, "verdict-first runs: {with_verdict}");
}

#[test]
fn the_verdict_defers_older_log_files_and_the_history_reads_them() {
    use checkpoint_core::archive::Archive;
    use checkpoint_core::layout::{find_roots, members};
    use checkpoint_core::read::{read_history, read_root_members, read_root_verdict_first, ReadOptions};
    let p = PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/../../../shared/fixtures/ss-4.3.0-agg-hdfs.zip"));
    let mut a = open(&p).unwrap();
    let roots = find_roots(a.entries());
    let m = members(a.entries(), &roots);
    let opts = ReadOptions { verdict_log_files: 2, ..ReadOptions::default() };
    let whole = read_root_members(&mut a, &roots[0], &m[0], &opts);
    let (mut cp, history) = read_root_verdict_first(&mut a, &roots[0], &m[0], &opts);
    let history = history.expect("older batches are left for later");
    let deferred = |cp: &checkpoint_core::model::Checkpoint| {
        cp.offsets.values().filter(|f| matches!(f.file.content, Err(LogError::Deferred))).count()
            + cp.commits.values().filter(|f| matches!(f.file.content, Err(LogError::Deferred))).count()
    };
    assert_eq!(deferred(&cp), history.files_left());
    assert!(history.files_left() > 0);
    // The latest offsets file, the one before it and the latest commit are read before the verdict.
    let last = *cp.offsets.keys().next_back().unwrap();
    assert!(cp.offsets[&last].file.content.is_ok() && cp.offsets[&(last - 1)].file.content.is_ok());
    assert!(cp.commits.values().next_back().unwrap().file.content.is_ok());
    assert_eq!(cp.offsets.keys().collect::<Vec<_>>(), whole.offsets.keys().collect::<Vec<_>>());
    read_history(&mut a, &roots[0], &mut cp, history);
    assert_eq!(deferred(&cp), 0);
    assert_eq!(format!("{:?}", cp.offsets), format!("{:?}", whole.offsets));
    assert_eq!(format!("{:?}", cp.commits), format!("{:?}", whole.commits));
}
