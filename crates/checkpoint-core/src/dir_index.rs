//! Finding what a folder of an archive holds without scanning every entry ([`DirIndex`]): the State Data Source
//! readers ask for the children of one folder per partition and store (`state/<op>/<part>[/<store>]`), and a scan
//! of the whole listing per question made a checkpoint of 10,000 partitions quadratic (seconds of prefix
//! comparisons before a row was read).
//!
//! The index is the entries' positions sorted by path: the paths under a folder are one contiguous range of it,
//! found by binary search, so a question costs the entries under that folder (and, for [`DirIndex::children`],
//! only about one probe per child folder), not the whole listing. It holds positions only (4 bytes an entry);
//! every question is handed the list it was built from.
//!
//! A read that asks every partition the same question of one log entry (checkpoint format v2: the unique id that
//! `commits/<version - 1>` records for the store; the offset log entry's conf) parses that entry once and keeps
//! the answer with the index ([`LogMemo`]): parsed per partition, a commit that lists every partition's ids
//! made 4,500 partitions cost 5 s of JSON parsing.

use crate::archive::Entry;
use std::cell::RefCell;
use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;

/// An archive's entry positions in path order (ties, a path listed twice, in listing order), built once from
/// [`crate::Archive::entries`] and asked with the same list: the entries under a folder ([`DirIndex::under`]),
/// a folder's children ([`DirIndex::children`]).
///
/// Building sorts the positions: O(n log n) path comparisons for n entries, 4 bytes an entry. Every question
/// takes the entry list the index was built from; handed another list it answers for positions that list does
/// not hold as for empty paths (never panics), so its answers are then meaningless: [`DirIndex::fits`] tells
/// whether a list is (by its length) the one it was built from.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct DirIndex {
    /// Positions into the entry list, sorted by (path, position).
    order: Vec<u32>,
    /// Length of the list it was built from.
    listed: usize,
    /// Log entries of the same archive parsed once for the read that built the index (boxed: the index is kept
    /// in the readers' state, where its size counts).
    memo: Box<LogMemo>,
}

/// Log entries a read parses once though many stores ask, by path: the `stateUniqueIds` object of a commit log
/// entry (`None`: the file is unreadable, or not JSON, or has none) and the `conf` of an offset log entry.
/// Valid for as long as the index is (the same archive); it answers nothing the index's questions depend on, so
/// two indexes compare equal whatever their memos hold.
#[derive(Debug, Clone, Default)]
pub struct LogMemo {
    unique_ids: RefCell<HashMap<String, Arc<Option<serde_json::Value>>>>,
    confs: RefCell<HashMap<String, Arc<BTreeMap<String, String>>>>,
}

impl PartialEq for LogMemo {
    fn eq(&self, _: &Self) -> bool {
        true
    }
}

impl Eq for LogMemo {}

impl LogMemo {
    /// The `stateUniqueIds` object of the commit log entry at `path`, `parse`d on the first question.
    pub fn unique_ids(
        &self,
        path: &str,
        parse: impl FnOnce() -> Option<serde_json::Value>,
    ) -> Arc<Option<serde_json::Value>> {
        if let Some(v) = self.unique_ids.borrow().get(path) {
            return v.clone();
        }
        let v = Arc::new(parse());
        self.unique_ids.borrow_mut().insert(path.to_string(), v.clone());
        v
    }

    /// The `conf` of the offset log entry at `path`, `parse`d on the first question.
    pub fn conf(&self, path: &str, parse: impl FnOnce() -> BTreeMap<String, String>) -> Arc<BTreeMap<String, String>> {
        if let Some(v) = self.confs.borrow().get(path) {
            return v.clone();
        }
        let v = Arc::new(parse());
        self.confs.borrow_mut().insert(path.to_string(), v.clone());
        v
    }
}

impl DirIndex {
    /// The index of `entries`. Positions past `u32::MAX` are not indexed (listings are bounded far below, by
    /// [`crate::Limits::max_entries`]).
    pub fn build(entries: &[Entry]) -> Self {
        let n = u32::try_from(entries.len()).unwrap_or(u32::MAX);
        let mut order: Vec<u32> = (0..n).collect();
        order.sort_unstable_by(|&x, &y| entries[x as usize].path.cmp(&entries[y as usize].path).then(x.cmp(&y)));
        DirIndex { order, listed: entries.len(), memo: Box::default() }
    }

    /// The log entries parsed once for this read ([`LogMemo`]).
    pub fn memo(&self) -> &LogMemo {
        &self.memo
    }

    /// True when `entries` has as many entries as the list the index was built from (the one check an index
    /// can make of the list it is handed).
    pub fn fits(&self, entries: &[Entry]) -> bool {
        entries.len() == self.listed
    }

    /// Number of entries indexed.
    pub fn len(&self) -> usize {
        self.order.len()
    }

    /// True when no entry is indexed.
    pub fn is_empty(&self) -> bool {
        self.order.is_empty()
    }

    /// Positions in `entries` of every entry whose path starts with `prefix` (as a string: `state/1` also
    /// matches `state/10/x`; give `state/1/` for a folder's contents), in path order, ties in listing order.
    /// `""` gives every entry. O(log n) to find, the range itself borrowed.
    pub fn under(&self, entries: &[Entry], prefix: &str) -> &[u32] {
        let path = |i: u32| entries.get(i as usize).map_or("", |e| e.path.as_str());
        // Paths starting with `prefix` are all >= it and form one contiguous run of the sorted order.
        let start = self.order.partition_point(|&i| path(i) < prefix);
        let rest = &self.order[start..];
        &rest[..rest.partition_point(|&i| path(i).starts_with(prefix))]
    }

    /// Names of the direct children (files and folders) of folder `dir` (`""` = the archive top; trailing `/`s
    /// ignored), each with whether it is a file: a name is a folder (`false`) when some entry lies below it,
    /// else it is the first listed entry of that path's `!is_dir`. Exactly the answer of a scan of the whole
    /// listing (`state::store::children`), at the cost of about one binary search per child folder plus one
    /// step per direct entry.
    pub fn children(&self, entries: &[Entry], dir: &str) -> BTreeMap<String, bool> {
        let prefix = if dir.is_empty() { String::new() } else { format!("{}/", dir.trim_end_matches('/')) };
        let under = self.under(entries, &prefix);
        let path = |i: u32| entries.get(i as usize).map_or("", |e| e.path.as_str());
        let mut out = BTreeMap::new();
        let mut k = 0;
        while k < under.len() {
            let Some(e) = entries.get(under[k] as usize) else {
                k += 1;
                continue;
            };
            // Always true of a list the index was built from; another list is answered without panicking.
            let Some(rest) = e.path.strip_prefix(&prefix) else {
                k += 1;
                continue;
            };
            match rest.split_once('/') {
                Some((first, _)) => {
                    out.insert(first.to_string(), false);
                    // Everything below `first` is one run of the order: it says nothing more, skip it.
                    let folder = &e.path[..prefix.len() + first.len() + 1];
                    k += run_len(&under[k..], |i| path(i).starts_with(folder));
                }
                None => {
                    if !rest.is_empty() {
                        out.entry(rest.to_string()).or_insert(!e.is_dir);
                    }
                    k += 1;
                }
            }
        }
        out
    }
}

/// Length of the leading run of `s` whose items satisfy `pred`, when they do in one run from the start (true,
/// then only false) and `s[0]` does: galloping (1, 2, 4, … ahead, then a binary search), O(log run).
fn run_len(s: &[u32], pred: impl Fn(u32) -> bool) -> usize {
    let mut known = 1; // s[..known] satisfy
    let mut step = 1;
    while known + step <= s.len() && pred(s[known + step - 1]) {
        known += step;
        step *= 2;
    }
    let end = (known + step - 1).min(s.len());
    known + s[known..end].partition_point(|&i| pred(i))
}

#[cfg(test)]
mod tests;
