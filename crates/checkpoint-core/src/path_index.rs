//! Finding a path's position in a list the caller holds ([`PathIndex`]): the listing's lookups by path (the
//! archive's reads, the model's sizes and times). A hash table of positions only; the paths are not copied.
//!
//! A binary search over the paths sorted was the index before: each of its ~17 probes on a listing of 100,000
//! files loads another path and compares it from its start, and a checkpoint's paths share long prefixes
//! (`<root>/state/0/123/`), so comparisons were a sixth of a diagnosis's time.

use hashbrown::HashTable;
use std::hash::BuildHasher;

/// Which position a path listed more than once resolves to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Duplicates {
    /// The first listed (a zip reader's choice).
    First,
    /// The last listed (a later entry replaces an earlier one, as when a folder is unpacked).
    Last,
}

/// The positions of a list of paths, found by path: 4 bytes a position and a control byte per slot of the table
/// (at most 8 of 7 slots used), about 6–11 bytes a path. Built once from the list; every lookup is handed the
/// list's accessor, `path_of(position)`.
#[derive(Clone, Default)]
pub struct PathIndex {
    table: HashTable<u32>,
}

/// The hash of a path: fixed seed, so that runs are alike (the table's order never shows).
fn hash(path: &str) -> u64 {
    foldhash::fast::FixedState::with_seed(0x5eed_c0de).hash_one(path)
}

impl PathIndex {
    /// The index of positions `0..n` whose `path_of` is `Some` (a position with `None`, such as a folder
    /// entry, is not indexed); among equal paths the one `keep` says. Positions past `u32::MAX` are not indexed
    /// (listings are bounded far below).
    pub fn build<'a>(n: usize, path_of: impl Fn(u32) -> Option<&'a str>, keep: Duplicates) -> Self {
        let n = u32::try_from(n).unwrap_or(u32::MAX);
        let mut table = HashTable::with_capacity(n as usize);
        for i in 0..n {
            let Some(p) = path_of(i) else { continue };
            let h = hash(p);
            match table.find_mut(h, |&j| path_of(j) == Some(p)) {
                Some(j) => {
                    if keep == Duplicates::Last {
                        *j = i;
                    }
                }
                None => {
                    table.insert_unique(h, i, |&j| hash(path_of(j).unwrap_or("")));
                }
            }
        }
        PathIndex { table }
    }

    /// The position of `path`, `None` when it is not indexed.
    pub fn find<'a>(&self, path: &str, path_of: impl Fn(u32) -> Option<&'a str>) -> Option<usize> {
        self.table.find(hash(path), |&j| path_of(j) == Some(path)).map(|&j| j as usize)
    }

    /// Number of paths indexed.
    pub fn len(&self) -> usize {
        self.table.len()
    }

    /// True when no path is indexed.
    pub fn is_empty(&self) -> bool {
        self.table.is_empty()
    }
}

impl std::fmt::Debug for PathIndex {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "PathIndex({} paths)", self.len())
    }
}

impl PartialEq for PathIndex {
    /// Equal when they index as many paths: an index is a function of the list it was built from, so two
    /// indexes of equal lists are equal (what comparing two `Checkpoint`s needs).
    fn eq(&self, other: &Self) -> bool {
        self.len() == other.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_each_path_first_or_last_among_equal_ones() {
        // Each path repeats every 3,000 positions (duplicates), some positions are folders (`None`), one path is "".
        let paths: Vec<Option<String>> = (0..5_000)
            .map(|i| match i {
                _ if i % 97 == 0 => None,
                4_999 => Some(String::new()),
                _ => Some(format!("root/state/0/{}/{}.delta", i % 1_000, i % 3)),
            })
            .collect();
        let path_of = |i: u32| paths.get(i as usize).and_then(|p| p.as_deref());
        let mut told_apart = 0;
        for keep in [Duplicates::First, Duplicates::Last] {
            let index = PathIndex::build(paths.len(), path_of, keep);
            for p in paths.iter().flatten() {
                let mut at = paths.iter().enumerate().filter(|(_, q)| q.as_deref() == Some(p.as_str())).map(|(i, _)| i);
                let (first, last) = (at.next(), at.next_back());
                let want = if keep == Duplicates::First { first } else { last.or(first) };
                assert_eq!(index.find(p, path_of), want, "{p}");
                told_apart += usize::from(last.is_some());
            }
            assert_eq!(index.find("root/state/0/1/missing.delta", path_of), None);
            assert_eq!(index.find("", path_of), Some(4_999));
            assert_eq!(index.find("root/state/0/0", path_of), None);
            let distinct: std::collections::BTreeSet<&String> = paths.iter().flatten().collect();
            assert_eq!(index.len(), distinct.len());
        }
        assert!(told_apart > 2_000, "{told_apart} paths listed more than once");
        assert!(PathIndex::default().is_empty());
    }
}
