//! Finds every checkpoint root in an archive and its kind (FORMATS.md §1, §17): a Structured Streaming
//! root has `metadata`, `offsets/<id>`, `commits/<id>` or `state/<op>/`; a DStream root has
//! `checkpoint-<ms>` files; a folder holding only a file sink's `_spark_metadata/` is reported as kind
//! `unknown`. Candidates nested inside another root are part of it (`state/0/_metadata/metadata`, a backup of
//! `offsets/`), except a folder with its own `metadata` outside Spark's folders: a checkpoint kept inside
//! another (`<ckpt>/old/`) is a root of its own.

use crate::archive::Entry;
use crate::report::CheckpointKind;
use std::collections::{BTreeMap, HashSet};

/// One checkpoint root found in the archive.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Root {
    /// Folder inside the archive, `""` = the archive top.
    pub path: String,
    /// Its kind.
    pub kind: CheckpointKind,
}

/// True for an entry of the `__MACOSX/` tree macOS Finder adds to a zip it makes ("Compress"): AppleDouble
/// `._<name>` files holding each file's resource fork and extended attributes, in a copy of the zipped
/// folders. They are no part of a checkpoint, a Delta log or a sink log: no root, member or log is made of
/// them (a `__MACOSX/<ckpt>/state/0/._1.delta` made a second checkpoint that "will not restart").
pub fn is_finder_metadata(path: &str) -> bool {
    path.split('/').next() == Some("__MACOSX")
}

fn is_batch_name(s: &str) -> bool {
    !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit())
}

/// `checkpoint-<ms>` or `checkpoint-<ms>.bk`.
pub fn dstream_time(name: &str) -> Option<i64> {
    let rest = name.strip_prefix("checkpoint-")?;
    let rest = rest.strip_suffix(".bk").unwrap_or(rest);
    if is_batch_name(rest) {
        rest.parse().ok()
    } else {
        None
    }
}

/// Every folder an entry makes a candidate root (with its kind; a DStream `checkpoint-<ms>` file's folder is
/// a DStream candidate even when another entry made it a Structured Streaming one), and the folders holding a
/// `_spark_metadata/` entry (consecutive repeats once).
fn candidates(entries: &[Entry]) -> (BTreeMap<String, CheckpointKind>, Vec<String>, HashSet<String>) {
    let mut cands: BTreeMap<String, CheckpointKind> = BTreeMap::new();
    // Candidates holding their own `metadata` file (a query's `StreamMetadata`).
    let mut with_metadata: HashSet<String> = HashSet::new();
    let mut sinks: Vec<String> = Vec::new();
    // The parts of the entry's path (one buffer for every entry), and the last candidate added: neighbouring
    // entries name the same root, which is then neither copied nor looked up again.
    let mut parts: Vec<&str> = Vec::new();
    let mut last_cand: Option<String> = None;
    let mut add_cand = |cands: &mut BTreeMap<String, CheckpointKind>, key: &str| {
        if last_cand.as_deref() != Some(key) {
            if !cands.contains_key(key) {
                cands.insert(key.to_string(), CheckpointKind::StructuredStreaming);
            }
            let last = last_cand.get_or_insert_with(String::new);
            last.clear();
            last.push_str(key);
        }
    };
    for e in entries {
        let path = e.path.as_str();
        if is_finder_metadata(path) {
            continue;
        }
        parts.clear();
        parts.extend(path.split('/'));
        let n = parts.len();
        let name = parts[n - 1];
        // The first `k` parts joined by '/': the path up to the separator before part `k`.
        let join = |k: usize| -> &str {
            let end = parts[..k].iter().map(|p| p.len()).sum::<usize>() + k.saturating_sub(1);
            path.get(..end).unwrap_or(path)
        };
        if !e.is_dir && name == "metadata" {
            // `state/<op>/_metadata/metadata` and RocksDB zip internals are not roots.
            if !(n >= 2 && parts[n - 2] == "_metadata") {
                add_cand(&mut cands, join(n - 1));
                with_metadata.insert(join(n - 1).to_string());
            }
        }
        if n >= 2 && (parts[n - 2] == "offsets" || parts[n - 2] == "commits") && is_batch_name(name) && !e.is_dir {
            add_cand(&mut cands, join(n - 2));
        }
        if let Some(i) = parts.iter().position(|p| *p == "state") {
            if i + 1 < n && is_batch_name(parts[i + 1]) {
                add_cand(&mut cands, join(i));
            }
        }
        if !e.is_dir && dstream_time(name).is_some() {
            cands.insert(join(n - 1).to_string(), CheckpointKind::Dstream);
        }
        if let Some(i) = parts.iter().position(|p| *p == "_spark_metadata") {
            if i + 1 < n && sinks.last().map(String::as_str) != Some(join(i)) {
                sinks.push(join(i).to_string());
            }
        }
    }
    (cands, sinks, with_metadata)
}

/// Top-level folders of a Structured Streaming checkpoint that Spark writes (FORMATS.md §1), and a file sink's
/// log: a candidate below one of them is part of its checkpoint (`state/0/_metadata/metadata`), never a root.
const SPARK_FOLDERS: &[&str] = &["offsets", "commits", "sources", "state", "_spark_metadata", "metadata"];

/// Finds the roots, ordered by path.
pub fn find_roots(entries: &[Entry]) -> Vec<Root> {
    let (cands, sinks, with_metadata) = candidates(entries);
    // Drop candidates nested inside another candidate: look up each candidate's ancestors (linear in the
    // number of candidates times the path depth; 40 000 roots in one zip are found in milliseconds). A nested
    // candidate with its own `metadata` outside Spark's folders (an old checkpoint kept in `<ckpt>/old/`) is a
    // checkpoint of its own, diagnosed on its own; a nested one without (a backup of `offsets/` in
    // `<ckpt>/backup/`) stays content of the outer checkpoint.
    let has_ancestor = |c: &str, set: &dyn Fn(&str) -> bool| -> bool {
        if c.is_empty() {
            return false;
        }
        if set("") {
            return true;
        }
        c.match_indices('/').any(|(i, _)| set(&c[..i]))
    };
    let is_cand = |p: &str| cands.contains_key(p);
    // Below an ancestor candidate `a`, `c` is its own checkpoint when it has its own metadata and the path from
    // `a` does not go through one of Spark's folders.
    let own_checkpoint = |c: &str| {
        with_metadata.contains(c) && {
            let ancestors = std::iter::once("").chain(c.match_indices('/').map(|(i, _)| &c[..i]));
            ancestors.filter(|a| *a != c && is_cand(a)).all(|a| {
                let rel = if a.is_empty() { c } else { &c[a.len() + 1..] };
                !SPARK_FOLDERS.contains(&rel.split('/').next().unwrap_or(rel))
            })
        }
    };
    let mut roots: Vec<Root> = cands
        .iter()
        .filter(|(c, _)| !has_ancestor(c, &is_cand) || own_checkpoint(c))
        .map(|(c, k)| Root { path: c.clone(), kind: *k })
        .collect();
    let root_paths: std::collections::HashSet<String> = roots.iter().map(|r| r.path.clone()).collect();
    let is_root = |p: &str| root_paths.contains(p);
    let mut sink_roots: BTreeMap<String, ()> = BTreeMap::new();
    for s in sinks {
        if is_root(&s) || has_ancestor(&s, &is_root) {
            continue;
        }
        sink_roots.insert(s, ());
    }
    let is_sink = |p: &str| sink_roots.contains_key(p);
    let outer_sinks: Vec<String> = sink_roots.keys().filter(|s| !has_ancestor(s, &is_sink)).cloned().collect();
    roots.extend(outer_sinks.into_iter().map(|path| Root { path, kind: CheckpointKind::Unknown }));
    roots.sort_by(|a, b| a.path.cmp(&b.path));
    roots.dedup_by(|a, b| a.path == b.path);
    roots
}

/// The entries of each root (positions in `entries`, in archive order): an entry belongs to the root that is
/// its ancestor folder (roots are never nested). One pass over the entries, each looked up by its ancestor
/// folders, so many roots cost no more than one.
pub fn members(entries: &[Entry], roots: &[Root]) -> Vec<Vec<usize>> {
    let by_path: std::collections::HashMap<&str, usize> =
        roots.iter().enumerate().map(|(i, r)| (r.path.as_str(), i)).collect();
    let mut out = vec![Vec::new(); roots.len()];
    for (i, e) in entries.iter().enumerate() {
        let p = e.path.as_str();
        if is_finder_metadata(p) {
            continue;
        }
        // The nearest root above the entry (a checkpoint kept inside another is its own).
        let owner =
            p.rmatch_indices('/').find_map(|(k, _)| by_path.get(&p[..k]).copied()).or_else(|| by_path.get("").copied());
        if let Some(r) = owner {
            out[r].push(i);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn e(p: &str) -> Entry {
        Entry { path: p.into(), size: 1, compressed_size: 1, is_dir: false, modified_ms: None }
    }

    #[test]
    fn a_checkpoint_kept_inside_another_is_its_own_root() {
        let entries = [
            e("ckpt/metadata"),
            e("ckpt/offsets/0"),
            e("ckpt/state/0/_metadata/metadata"),
            e("ckpt/old/metadata"),
            e("ckpt/old/offsets/0"),
            e("ckpt/old/older/metadata"),
            e("ckpt/backup/offsets/7"),
            e("ckpt/sources/0/metadata"),
        ];
        let r = find_roots(&entries);
        let paths: Vec<&str> = r.iter().map(|r| r.path.as_str()).collect();
        assert_eq!(paths, vec!["ckpt", "ckpt/old", "ckpt/old/older"]);
        // Each entry belongs to the nearest root.
        assert_eq!(members(&entries, &r), vec![vec![0, 1, 2, 6, 7], vec![3, 4], vec![5]]);
        // At the archive top too.
        let top = [e("metadata"), e("offsets/0"), e("old/metadata"), e("old/commits/0")];
        let r = find_roots(&top);
        assert_eq!(r.iter().map(|r| r.path.as_str()).collect::<Vec<_>>(), vec!["", "old"]);
        assert_eq!(members(&top, &r), vec![vec![0, 1], vec![2, 3]]);
    }

    #[test]
    fn finders_macosx_tree_is_no_root_and_no_member() {
        let entries = [
            e("ckpt/metadata"),
            e("__MACOSX/ckpt/._metadata"),
            e("ckpt/state/0/0/1.delta"),
            e("__MACOSX/ckpt/state/0/0/._1.delta"),
            e("__MACOSX/ckpt/offsets/._0"),
            e("__MACOSX/out/_spark_metadata/._0"),
        ];
        let r = find_roots(&entries);
        assert_eq!(r, vec![Root { path: "ckpt".into(), kind: CheckpointKind::StructuredStreaming }]);
        // At the archive top, the root's members leave the tree out too.
        let top = [e("metadata"), e("offsets/0"), e("__MACOSX/._metadata"), e("__MACOSX/offsets/._0")];
        let r = find_roots(&top);
        assert_eq!(r, vec![Root { path: String::new(), kind: CheckpointKind::StructuredStreaming }]);
        assert_eq!(members(&top, &r), vec![vec![0, 1]]);
        assert!(is_finder_metadata("__MACOSX"));
        assert!(!is_finder_metadata("ckpt/__MACOSX/x"));
    }

    #[test]
    fn finds_nested_and_multiple_roots() {
        let r = find_roots(&[
            e("a/metadata"),
            e("a/offsets/0"),
            e("a/state/0/_metadata/metadata"),
            e("b/c/commits/3"),
            e("d/checkpoint-1796030387000"),
            e("out/_spark_metadata/0"),
        ]);
        let got: Vec<(&str, CheckpointKind)> = r.iter().map(|r| (r.path.as_str(), r.kind)).collect();
        assert_eq!(
            got,
            vec![
                ("a", CheckpointKind::StructuredStreaming),
                ("b/c", CheckpointKind::StructuredStreaming),
                ("d", CheckpointKind::Dstream),
                ("out", CheckpointKind::Unknown)
            ]
        );
        let top = find_roots(&[e("metadata"), e("offsets/0"), e("sources/0/0")]);
        assert_eq!(top, vec![Root { path: "".into(), kind: CheckpointKind::StructuredStreaming }]);
    }

    /// The candidates as the first version of `find_roots` collected them (a `String` and a map lookup per
    /// entry): the reference for [`candidates`], which skips both.
    fn reference_candidates(entries: &[Entry]) -> (BTreeMap<String, CheckpointKind>, Vec<String>) {
        let mut cands: BTreeMap<String, CheckpointKind> = BTreeMap::new();
        let mut sinks: Vec<String> = Vec::new();
        for e in entries {
            let parts: Vec<&str> = e.path.split('/').collect();
            let n = parts.len();
            let name = parts[n - 1];
            let join = |k: usize| parts[..k].join("/");
            if !e.is_dir && name == "metadata" && !(n >= 2 && parts[n - 2] == "_metadata") {
                cands.entry(join(n - 1)).or_insert(CheckpointKind::StructuredStreaming);
            }
            if n >= 2 && (parts[n - 2] == "offsets" || parts[n - 2] == "commits") && is_batch_name(name) && !e.is_dir {
                cands.entry(join(n - 2)).or_insert(CheckpointKind::StructuredStreaming);
            }
            if let Some(i) = parts.iter().position(|p| *p == "state") {
                if i + 1 < n && is_batch_name(parts[i + 1]) {
                    cands.entry(join(i)).or_insert(CheckpointKind::StructuredStreaming);
                }
            }
            if !e.is_dir && dstream_time(name).is_some() {
                cands.insert(join(n - 1), CheckpointKind::Dstream);
            }
            if let Some(i) = parts.iter().position(|p| *p == "_spark_metadata") {
                if i + 1 < n {
                    sinks.push(join(i));
                }
            }
        }
        (cands, sinks)
    }

    /// [`candidates`] gives the reference's candidates and sink folders for random entry lists built from the
    /// names that make roots, in every order (a DStream file before a top-level `metadata` among them: the
    /// archive-top root must survive the candidate cache).
    #[test]
    fn candidates_match_the_reference() {
        let top = [e("x/checkpoint-1796030387000"), e("metadata")];
        assert_eq!(candidates(&top).0, reference_candidates(&top).0);
        assert!(find_roots(&top).iter().any(|r| r.path.is_empty() && r.kind == CheckpointKind::StructuredStreaming));
        let parts = [
            "",
            "a",
            "b",
            "state",
            "0",
            "1",
            "offsets",
            "commits",
            "metadata",
            "_metadata",
            "_spark_metadata",
            "checkpoint-1796030387000",
            "checkpoint-17.bk",
            "sources",
        ];
        let mut seed = 5u64;
        let mut next = |m: usize| {
            seed = seed.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            (seed >> 33) as usize % m
        };
        for round in 0..3_000 {
            let entries: Vec<Entry> = (0..1 + next(12))
                .map(|_| {
                    let path = (0..1 + next(5)).map(|_| parts[next(parts.len())]).collect::<Vec<_>>().join("/");
                    Entry { is_dir: next(6) == 0, ..e(&path) }
                })
                .collect();
            let (cands, sinks, _) = candidates(&entries);
            let (want, want_sinks) = reference_candidates(&entries);
            assert_eq!(cands, want, "round {round}: {entries:?}");
            let set = |v: Vec<String>| v.into_iter().collect::<std::collections::BTreeSet<_>>();
            assert_eq!(set(sinks), set(want_sinks), "round {round}");
        }
    }
}
