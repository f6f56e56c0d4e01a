//! [`SidecarMap`]: the sidecars of a checkpoint's files (Hadoop `.<name>.crc`, Spark 4.1+ `<name>.crc`), found
//! by their main file's path.

use crate::path_index::{Duplicates, PathIndex};

/// A sidecar that names its main file.
pub trait Sidecar {
    /// The main file's path, relative to the root.
    fn main(&self) -> &str;
}

impl Sidecar for super::CrcSidecar {
    fn main(&self) -> &str {
        &self.main
    }
}

impl Sidecar for super::ChecksumSidecar {
    fn main(&self) -> &str {
        &self.main
    }
}

/// Sidecars by their main file's path: a list in main-path order (what [`SidecarMap::values`] gives) and a
/// hash table of positions (what [`SidecarMap::get`] looks in). A map keyed by path held each path twice and
/// compared the long shared prefixes of checkpoint paths at every lookup; this holds it once.
#[derive(Debug, Clone)]
pub struct SidecarMap<T> {
    items: Vec<T>,
    index: PathIndex,
}

impl<T> Default for SidecarMap<T> {
    fn default() -> Self {
        SidecarMap { items: Vec::new(), index: PathIndex::default() }
    }
}

impl<T: Sidecar> SidecarMap<T> {
    /// The map of `items`, in any order; of two with the same main file, the later one is kept (as a map's
    /// insert keeps the last value).
    pub fn new(mut items: Vec<T>) -> Self {
        // Stable, and close to linear on a listing's order (each folder's sidecars come mostly in order).
        items.sort_by(|a, b| a.main().cmp(b.main()));
        // Keep the last of equal mains: `dedup_by` keeps the first of a run, so compare from the end.
        items.reverse();
        items.dedup_by(|a, b| a.main() == b.main());
        items.reverse();
        let index = PathIndex::build(items.len(), |i| items.get(i as usize).map(|s| s.main()), Duplicates::Last);
        SidecarMap { items, index }
    }

    fn position(&self, main: &str) -> Option<usize> {
        self.index.find(main, |i| self.items.get(i as usize).map(|s| s.main()))
    }

    /// The sidecar of `main`, when listed.
    pub fn get(&self, main: &str) -> Option<&T> {
        self.position(main).map(|i| &self.items[i])
    }

    /// The sidecar of `main`, to record what verifying it found.
    pub fn get_mut(&mut self, main: &str) -> Option<&mut T> {
        self.position(main).map(|i| &mut self.items[i])
    }

    /// True when `main` has a sidecar.
    pub fn contains_key(&self, main: &str) -> bool {
        self.position(main).is_some()
    }

    /// Every sidecar, in the order of their main files' paths.
    pub fn values(&self) -> std::slice::Iter<'_, T> {
        self.items.iter()
    }

    /// Number of sidecars.
    pub fn len(&self) -> usize {
        self.items.len()
    }

    /// True when there is none.
    pub fn is_empty(&self) -> bool {
        self.items.is_empty()
    }
}

impl<T: PartialEq> PartialEq for SidecarMap<T> {
    /// Equal when they hold the same sidecars (the index is a function of them).
    fn eq(&self, other: &Self) -> bool {
        self.items == other.items
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::CrcSidecar;
    use std::collections::BTreeMap;

    fn crc(path: &str, main: &str) -> CrcSidecar {
        CrcSidecar { path: path.into(), main: main.into(), main_exists: true, verified: None, matches: None }
    }

    /// The map answers as a `BTreeMap` filled in the same order would: lookups, the last of equal mains, and
    /// the order of `values` (main paths whose sidecar names sort otherwise included: `.a.crc` and
    /// `.a-b.crc`).
    #[test]
    fn answers_as_a_btree_map() {
        let mains = ["offsets/1", "offsets/10", "offsets/2", "a", "a-b", "a.b", "state/0/1/2.delta", "", "a"];
        let items: Vec<CrcSidecar> = mains.iter().enumerate().map(|(i, m)| crc(&format!("side{i}"), m)).collect();
        let mut want = BTreeMap::new();
        for s in &items {
            want.insert(s.main.clone(), s.clone());
        }
        let mut map = SidecarMap::new(items);
        assert_eq!(map.values().collect::<Vec<_>>(), want.values().collect::<Vec<_>>());
        assert_eq!(map.len(), want.len());
        for m in mains.iter().chain(&["b", "offsets/3", "offsets"]) {
            assert_eq!(map.get(m), want.get(*m), "{m}");
            assert_eq!(map.contains_key(m), want.contains_key(*m));
        }
        assert_eq!(map.get("a").map(|s| s.path.as_str()), Some("side8"));
        map.get_mut("a-b").unwrap().matches = Some("x".into());
        assert_eq!(map.get("a-b").unwrap().matches.as_deref(), Some("x"));
        assert!(SidecarMap::<CrcSidecar>::new(vec![]).is_empty());
    }
}
