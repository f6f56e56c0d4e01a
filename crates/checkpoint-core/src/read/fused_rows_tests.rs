//! The fused row pass (the integrity pass rebuilds HDFS and RocksDB stores' rows from the bytes it checks)
//! against the row stage executing every chain itself: the same model, on every shared fixture and this crate's
//! real-Spark checkpoints, within the default and a tight byte budget.

use super::{read_stages, ReadOptions};
use crate::archive::{Archive, MemArchive};
use crate::read::state_rows::FUSED_TAKEN;

fn both_ways(a: &mut dyn Archive, what: &str, opts: &ReadOptions) {
    for root in crate::layout::find_roots(a.entries()) {
        let listed = super::listing::list(a.entries(), &root);
        let reference = read_stages(a, &root, listed.clone(), opts, false);
        let fused = read_stages(a, &root, listed, opts, true);
        assert_eq!(fused.store_rows, reference.store_rows, "{what} {:?}: rows", root.path);
        assert_eq!(fused, reference, "{what} {:?}: the whole model", root.path);
    }
}

#[test]
fn fused_row_pass_equals_executing_each_chain() {
    let budgets = [ReadOptions::default(), ReadOptions { budget_bytes: 20_000, ..Default::default() }];
    FUSED_TAKEN.with(|n| n.set(0));
    let mut rocksdb_taken = Vec::new();
    for name in crate::testutil::fixture_names() {
        let mut a = crate::testutil::open_fixture(&name);
        let before = FUSED_TAKEN.with(|n| n.get());
        for opts in &budgets {
            both_ways(&mut a, &name, opts);
        }
        if name.contains("rocksdb") && FUSED_TAKEN.with(|n| n.get()) > before {
            rocksdb_taken.push(name);
        }
    }
    // Changelog checkpointing (zip + changelogs) and checkpoint format v2 (a zip of the lineage) among them.
    for healthy in ["ss-4.3.0-agg-rocksdb", "ss-4.3.0-agg-rocksdb-changelog", "ss-4.1.4-agg-rocksdb-ckptv2"] {
        assert!(rocksdb_taken.iter().any(|n| n == healthy), "no RocksDB rows fused for {healthy}: {rocksdb_taken:?}");
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
        both_ways(&mut a, &name, &ReadOptions::default());
    }
    let taken = FUSED_TAKEN.with(|n| n.get());
    assert!(taken >= 200, "the row stage took the integrity pass's rows for {taken} stores only");
}
