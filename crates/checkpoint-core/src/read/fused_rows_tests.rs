//! The fused row pass (the integrity pass rebuilds HDFS and RocksDB stores' rows from the bytes it checks)
//! against the row stage executing every chain itself: the same model, on every shared fixture and this crate's
//! real-Spark checkpoints, within the default and a tight byte budget.

use super::{read_stages, ReadOptions};
use crate::archive::{Archive, MemArchive};
use crate::read::state_rows::{CHAINS_EXECUTED, FUSED_TAKEN};

/// Reads every root of `a` both ways and compares; returns the stores whose chain the row stage still executed
/// itself in the fused pass.
fn both_ways(a: &mut dyn Archive, what: &str, opts: &ReadOptions) -> usize {
    let mut executed = 0;
    for root in crate::layout::find_roots(a.entries()) {
        let listed = super::listing::list(a.entries(), &root);
        let reference = read_stages(a, &root, listed.clone(), opts, false);
        let before = CHAINS_EXECUTED.with(|n| n.get());
        let fused = read_stages(a, &root, listed, opts, true);
        executed += CHAINS_EXECUTED.with(|n| n.get()) - before;
        assert_eq!(fused.store_rows, reference.store_rows, "{what} {:?}: rows", root.path);
        assert_eq!(fused, reference, "{what} {:?}: the whole model", root.path);
    }
    executed
}

#[test]
fn fused_row_pass_equals_executing_each_chain() {
    let budgets = [ReadOptions::default(), ReadOptions { budget_bytes: 20_000, ..Default::default() }];
    FUSED_TAKEN.with(|n| n.set(0));
    // Per fixture, within the default budget: (stores taken from the integrity pass, chains executed again).
    let mut fused: Vec<(String, usize, usize)> = Vec::new();
    for name in crate::testutil::fixture_names() {
        let mut a = crate::testutil::open_fixture(&name);
        let before = FUSED_TAKEN.with(|n| n.get());
        let executed = both_ways(&mut a, &name, &budgets[0]);
        let taken = FUSED_TAKEN.with(|n| n.get()) - before;
        both_ways(&mut a, &name, &budgets[1]);
        fused.push((name, taken, executed));
    }
    // Every store of a healthy checkpoint comes from the integrity pass: HDFS, RocksDB with changelog
    // checkpointing off and on, and checkpoint format v2.
    for healthy in
        ["ss-4.3.0-agg-hdfs", "ss-4.3.0-agg-rocksdb", "ss-4.3.0-agg-rocksdb-changelog", "ss-4.1.4-agg-rocksdb-ckptv2"]
    {
        let f = fused.iter().find(|(n, ..)| n == healthy).map(|(_, t, e)| (*t > 0, *e));
        assert_eq!(f, Some((true, 0)), "{healthy}: (rows fused, chains the row stage executed itself)");
    }
    let mut generated: Vec<String> = std::fs::read_dir(crate::testutil::generated_dir())
        .expect("tests/data/spark")
        .filter_map(|e| e.ok()?.file_name().to_str()?.strip_suffix(".zip").map(str::to_string))
        .collect();
    generated.sort();
    assert!(generated.len() > 5, "tests/data/spark looks empty");
    for name in generated {
        let files = crate::testutil::generated_files(&name);
        let mut a = MemArchive::new(&name, files, Default::default()).expect("generated checkpoint");
        let run = both_ways(&mut a, &name, &ReadOptions::default());
        // Checkpoint format v2 restarting at a version without a zip: the chain ends in the changelog read first
        // for its lineage, whose records were held for the rebuild.
        if name.starts_with("stray-rocksdb-ckptv2-") {
            assert_eq!(run, 0, "{name}: chains the row stage executed itself in the fused pass");
        }
    }
    let taken = FUSED_TAKEN.with(|n| n.get());
    assert!(taken >= 200, "the row stage took the integrity pass's rows for {taken} stores only");
}
