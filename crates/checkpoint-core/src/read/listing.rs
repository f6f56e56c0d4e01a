//! Stage 1, the listing: every file and folder under the root (relative paths, sizes, modification times), the
//! `state/` tree by operator, partition, store and version, the index of `.crc` and checksum sidecars, and the
//! DStream checkpoint times. Nothing is read here, and nothing after this stage lists the archive again.

use super::{dir_of, join, name_of};
use crate::archive::Entry;
use crate::layout::{dstream_time, Root};
use crate::model::{Checkpoint, ChecksumSidecar, CrcSidecar, Kind, SidecarMap};
use crate::report::CheckpointKind;
use crate::state_files::{self, FileRef};
use std::collections::{BTreeMap, BTreeSet};

/// The root's folder with a trailing `/` (`""` = the archive top).
pub(crate) fn prefix_of(root: &Root) -> String {
    if root.path.is_empty() {
        String::new()
    } else {
        format!("{}/", root.path)
    }
}

/// Lists the entries under `root` into a [`Checkpoint`] that holds the listing only (entries outside the root
/// are skipped; a caller with many roots passes each root its own entries, see [`crate::layout::members`]).
pub fn list<'a>(entries: impl IntoIterator<Item = &'a Entry>, root: &Root) -> Checkpoint {
    let prefix = prefix_of(root);
    let mut files = Vec::new();
    let mut dirs = BTreeSet::new();
    let mut file_mtimes = Vec::new();
    let mut listing: Vec<(&str, u64, bool)> = Vec::new();
    // The folder of the file before: a listing comes folder by folder, so most files need no search of `dirs`.
    let mut last_dir: &str = "";
    for e in entries {
        let Some(rel) = e.path.strip_prefix(&prefix) else {
            continue;
        };
        if rel.is_empty() {
            continue;
        }
        if e.is_dir {
            if !dirs.contains(rel) {
                dirs.insert(rel.to_string());
            }
        } else {
            files.push(FileRef { path: rel.to_string(), size: e.size });
            file_mtimes.push(e.modified_ms.unwrap_or(crate::model::NO_MTIME));
            // A file's folders, innermost first, until one is known (no copy of a known folder's name).
            let dir = dir_of(rel);
            if dir != last_dir {
                let mut d = dir;
                while !d.is_empty() && !dirs.contains(d) {
                    dirs.insert(d.to_string());
                    d = dir_of(d);
                }
                last_dir = dir;
            }
        }
        listing.push((rel, e.size, e.is_dir));
    }
    let mut cp =
        Checkpoint { root: root.path.clone(), kind: Kind(root.kind), files, dirs, file_mtimes, ..Default::default() };
    cp.index_files();
    index_sidecars(&mut cp);
    if root.kind == CheckpointKind::Dstream {
        let mut times: Vec<i64> =
            cp.files.iter().filter(|f| !f.path.contains('/')).filter_map(|f| dstream_time(&f.path)).collect();
        times.sort_unstable();
        times.dedup();
        cp.dstream_times_ms = times;
        return cp;
    }
    cp.state = state_files::list_state_of(listing);
    cp
}

/// Hadoop `.<name>.crc` and Spark `<name>.crc` sidecars, by the main file's path (verified later, by
/// [`super::sidecars::verify`], when a stage reads the main file).
fn index_sidecars(cp: &mut Checkpoint) {
    let mut hadoop = Vec::new();
    let mut spark = Vec::new();
    for f in &cp.files {
        let name = name_of(&f.path);
        let dir = dir_of(&f.path);
        if let Some(main) = crate::hadoop::main_name(name) {
            let main = join(dir, main);
            let main_exists = cp.has_file(&main);
            hadoop.push(CrcSidecar { path: f.path.clone(), main, main_exists, verified: None, matches: None });
        } else if let Some(main) = crate::checksum::main_name(name) {
            let main = join(dir, main);
            let main_exists = cp.has_file(&main);
            spark.push(ChecksumSidecar {
                path: f.path.clone(),
                main,
                main_exists,
                verified: None,
                recorded: None,
                matches: None,
            });
        }
    }
    cp.hadoop_crcs = SidecarMap::new(hadoop);
    cp.spark_checksums = SidecarMap::new(spark);
}

/// A file's batch files of one log folder: `(batch id, compact, path, size)`, sorted.
pub(crate) fn batch_files(cp: &Checkpoint, dir: &str, compact: bool) -> Vec<(i64, bool, String, u64)> {
    batch_files_of(cp.files.iter().filter(|f| dir_of(&f.path) == dir), compact)
}

/// [`batch_files`] of the files at `positions` in [`Checkpoint::files`] (one folder's, from [`files_by_dir`]).
pub(crate) fn batch_files_at(cp: &Checkpoint, positions: &[usize], compact: bool) -> Vec<(i64, bool, String, u64)> {
    batch_files_of(positions.iter().filter_map(|&i| cp.files.get(i)), compact)
}

fn batch_files_of<'a>(files: impl Iterator<Item = &'a FileRef>, compact: bool) -> Vec<(i64, bool, String, u64)> {
    let mut v: Vec<(i64, bool, String, u64)> = files
        .filter_map(|f| {
            crate::log::parse_batch_file_name(name_of(&f.path), compact).map(|(id, c)| (id, c, f.path.clone(), f.size))
        })
        .collect();
    v.sort();
    v
}

/// The positions in [`Checkpoint::files`] of the files directly in each folder that `keep` accepts, in listing
/// order, by folder: one pass over the listing for any number of folders (a scan of the listing per folder
/// grows with folders times files).
pub(crate) fn files_by_dir(cp: &Checkpoint, keep: impl Fn(&str) -> bool) -> BTreeMap<String, Vec<usize>> {
    let mut by_dir: BTreeMap<String, Vec<usize>> = BTreeMap::new();
    for (i, f) in cp.files.iter().enumerate() {
        let d = dir_of(&f.path);
        if let Some(v) = by_dir.get_mut(d) {
            v.push(i);
        } else if keep(d) {
            by_dir.insert(d.to_string(), vec![i]);
        }
    }
    by_dir
}

/// The positions of [`Checkpoint::files`] in path order (equal paths in listing order), to find the files
/// below a folder by a binary search ([`files_below`]).
pub(crate) fn paths_sorted(cp: &Checkpoint) -> Vec<usize> {
    let mut v: Vec<usize> = (0..cp.files.len()).collect();
    v.sort_by(|a, b| cp.files[*a].path.cmp(&cp.files[*b].path));
    v
}

/// The files whose path starts with `prefix` (a folder with its trailing `/`, or `""` for all), in path
/// order; `sorted` is [`paths_sorted`]'s.
pub(crate) fn files_below<'c>(
    cp: &'c Checkpoint,
    sorted: &'c [usize],
    prefix: &'c str,
) -> impl Iterator<Item = &'c FileRef> + 'c {
    let path = move |i: &usize| cp.files.get(*i).map(|f| f.path.as_str()).unwrap_or("");
    let start = sorted.partition_point(|i| path(i) < prefix);
    sorted[start..].iter().take_while(move |i| path(i).starts_with(prefix)).filter_map(move |i| cp.files.get(*i))
}
