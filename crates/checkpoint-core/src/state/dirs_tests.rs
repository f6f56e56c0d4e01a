//! The readers' folder questions through a [`DirIndex`] (`*_in`) against their one-scan forms, on every state
//! root of every shared fixture zip and of this crate's real-Spark zips; and the store-name check of
//! [`super::store_schemas_in`], which answers from partition 0 when it can, against the whole rule.

use super::store::{check_store_name, children, spark_store_names};
use super::*;
use crate::archive::{Archive, ArchiveError, Entry, Limits, ZipInput};
use crate::dir_index::DirIndex;
use crate::testutil::{fixtures_dir, generated_dir};
use std::collections::BTreeSet;

/// The store names of an operator by scans only (the rule of [`store_names`], before the index).
fn scanned_store_names(a: &dyn Archive, root: &str, op: i64) -> Vec<String> {
    let mut stores = BTreeSet::new();
    for p in list_partitions(a, root, op) {
        for (name, is_file) in children(a, &store_dir(root, op, p, "default")) {
            if is_file {
                if !name.starts_with('.') {
                    stores.insert("default".to_string());
                }
            } else if name != "_metadata" && name != "SSTs" {
                stores.insert(name);
            }
        }
    }
    spark_store_names(stores)
}

/// Every `*_in` answer equals its scan's on `a`'s state roots (the top too) and operators (one more that is
/// not there); the store-name check equals the whole rule on every store name and a few that are not.
fn assert_same_answers(what: &str, a: &dyn Archive) -> usize {
    let dirs = DirIndex::build(a.entries());
    let mut roots = find_state_roots(a);
    roots.push(String::new());
    let mut asked = 0;
    for root in &roots {
        let mut ops = list_operators(a, root);
        ops.push(99);
        for op in ops {
            let parts = list_partitions(a, root, op);
            assert_eq!(list_partitions_in(a, &dirs, root, op), parts, "{what} {root:?} {op}: partitions");
            let meta = operator_metadata_path(a, root, op);
            assert_eq!(operator_metadata_path_in(a, &dirs, root, op), meta, "{what} {root:?} {op}: metadata");
            let names = scanned_store_names(a, root, op);
            assert_eq!(store_names_in(a, &dirs, root, op), names, "{what} {root:?} {op}: store names");
            assert_eq!(store_names(a, root, op), names, "{what} {root:?} {op}: store names");
            let mut asked_names: Vec<String> = names.clone();
            asked_names.extend(["default", "nope", "_metadata", "SSTs", ""].map(String::from));
            for s in &asked_names {
                let expected = if !names.is_empty() && !names.contains(s) { Err(names.clone()) } else { Ok(()) };
                assert_eq!(check_store_name(a, &dirs, root, op, s), expected, "{what} {root:?} {op} {s:?}");
                for &p in &parts {
                    let dir = store_dir(root, op, p, s);
                    assert_eq!(detect_provider_in(a, &dirs, &dir), detect_provider(a, &dir), "{what} {dir}");
                    asked += 1;
                }
            }
        }
    }
    asked
}

fn zips_in(dir: &std::path::Path) -> Vec<std::path::PathBuf> {
    let mut v: Vec<_> = std::fs::read_dir(dir)
        .expect("zip folder")
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "zip"))
        .collect();
    v.sort();
    v
}

#[test]
fn indexed_folder_questions_answer_as_the_scans_on_every_fixture() {
    let mut asked = 0;
    for path in zips_in(&fixtures_dir()).into_iter().chain(zips_in(&generated_dir())) {
        let f = std::fs::File::open(&path).expect("open zip");
        let len = f.metadata().expect("metadata").len();
        let name = path.display().to_string();
        let z = ZipInput::open(f, len, &name, Limits::default()).expect("zip opens");
        asked += assert_same_answers(&name, &z);
    }
    assert!(asked > 1_000, "{asked} provider questions");
}

/// A listing as given (folder entries and odd paths kept).
struct Listing(Vec<Entry>);

impl Archive for Listing {
    fn entries(&self) -> &[Entry] {
        &self.0
    }
    fn read(&mut self, path: &str, _max_bytes: u64) -> Result<Vec<u8>, ArchiveError> {
        Err(ArchiveError::NotFound { path: path.to_string() })
    }
    fn name(&self) -> &str {
        "listing"
    }
    fn input_bytes(&self) -> u64 {
        0
    }
}

#[test]
fn the_store_name_check_answers_as_the_whole_rule_on_edge_cases() {
    let e = |path: &str, is_dir: bool| Entry {
        path: path.to_string(),
        size: 1,
        compressed_size: 1,
        is_dir,
        modified_ms: None,
    };
    let listings = [
        // Partition 0 without the store that partition 1 has; a default store only in partition 2.
        vec![e("state/0/0/left/1.delta", false), e("state/0/1/right/1.delta", false), e("state/0/2/1.delta", false)],
        // Partition 0 as a folder entry alone (a trailing `/`), or only `_metadata` and a dot file.
        vec![e("state/0/0/", true), e("state/0/1/1.delta", false)],
        vec![e("state/0/0/_metadata/schema", false), e("state/0/0/.1.delta.crc", false), e("state/0/3/x/1.zip", false)],
        // `00` and `0` side by side, a file named like partition 0, no partition at all.
        vec![e("state/0/00/1.delta", false), e("state/0/0", false), e("state/0/1/SSTs/a.sst", false)],
        vec![e("state/0/_metadata/metadata", false)],
        vec![],
    ];
    for (i, l) in listings.into_iter().enumerate() {
        assert_same_answers(&format!("listing {i}"), &Listing(l));
    }
}
