//! Finds every checkpoint root in an archive and its kind (FORMATS.md §1, §17): a Structured Streaming
//! root has `metadata`, `offsets/<id>`, `commits/<id>` or `state/<op>/`; a DStream root has
//! `checkpoint-<ms>` files; a folder holding only a file sink's `_spark_metadata/` is reported as kind
//! `unknown`. Roots nested inside another root (e.g. `state/0/_metadata/metadata`) are not roots.

use crate::archive::Entry;
use crate::report::CheckpointKind;
use std::collections::BTreeMap;

/// One checkpoint root found in the archive.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Root {
    /// Folder inside the archive, `""` = the archive top.
    pub path: String,
    /// Its kind.
    pub kind: CheckpointKind,
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

/// Finds the roots, ordered by path.
pub fn find_roots(entries: &[Entry]) -> Vec<Root> {
    let mut cands: BTreeMap<String, CheckpointKind> = BTreeMap::new();
    let mut sinks: Vec<String> = Vec::new();
    for e in entries {
        let path = e.path.as_str();
        let parts: Vec<&str> = path.split('/').collect();
        let n = parts.len();
        let name = parts[n - 1];
        let join = |k: usize| parts[..k].join("/");
        if !e.is_dir && name == "metadata" {
            // `state/<op>/_metadata/metadata` and RocksDB zip internals are not roots.
            if !(n >= 2 && parts[n - 2] == "_metadata") {
                cands.entry(join(n - 1)).or_insert(CheckpointKind::StructuredStreaming);
            }
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
    // Drop candidates nested inside another candidate.
    let keys: Vec<String> = cands.keys().cloned().collect();
    let inside = |c: &str, a: &str| c != a && (a.is_empty() || c.starts_with(&format!("{a}/")));
    let mut roots: Vec<Root> = Vec::new();
    for c in &keys {
        if keys.iter().any(|a| inside(c, a)) {
            continue;
        }
        roots.push(Root { path: c.clone(), kind: cands[c] });
    }
    for s in sinks {
        if roots.iter().any(|r| r.path == s || inside(&s, &r.path)) {
            continue;
        }
        if !roots.iter().any(|r| r.path == s) {
            roots.push(Root { path: s, kind: CheckpointKind::Unknown });
        }
    }
    roots.sort_by(|a, b| a.path.cmp(&b.path));
    roots.dedup_by(|a, b| a.path == b.path);
    roots
}

#[cfg(test)]
mod tests {
    use super::*;

    fn e(p: &str) -> Entry {
        Entry { path: p.into(), size: 1, compressed_size: 1, is_dir: false, modified_ms: None }
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
}
