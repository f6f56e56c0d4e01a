//! [`DirIndex`] against the scans it replaces: `state::store::children` and `state_files::store_files`, on every
//! folder of every shared fixture zip and of this crate's real-Spark zips, and on hand-made listings of the edge
//! cases (the archive top, trailing slashes, folder entries, a file and a folder of one name, names that are
//! prefixes of each other, paths listed twice).

use super::*;
use crate::archive::{Archive, ArchiveError, Limits, ZipInput};
use crate::state::children;
use crate::state_files::{store_files, store_files_in};
use crate::testutil::{fixtures_dir, generated_dir};
use std::collections::BTreeSet;

/// A listing as given, nothing normalised (folder entries, odd paths, a path twice): what `children` scans.
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

fn entry(path: &str, is_dir: bool) -> Entry {
    Entry { path: path.to_string(), size: path.len() as u64, compressed_size: 0, is_dir, modified_ms: None }
}

/// Every folder a question may name in `a`: the top, each entry's path and each of its ancestors, each also with
/// one and two trailing `/`, plus `extra`.
fn folders_of(a: &dyn Archive, extra: &[&str]) -> BTreeSet<String> {
    let mut dirs: BTreeSet<String> = extra.iter().map(|s| s.to_string()).collect();
    dirs.insert(String::new());
    for e in a.entries() {
        let mut at = 0;
        while let Some(i) = e.path[at..].find('/') {
            dirs.insert(e.path[..at + i].to_string());
            at += i + 1;
        }
        dirs.insert(e.path.clone());
    }
    for d in dirs.clone() {
        dirs.insert(format!("{d}/"));
        dirs.insert(format!("{d}//"));
    }
    dirs
}

/// The index's answers equal the scans' on every folder of `a`; returns how many folders were compared.
fn assert_same_answers(what: &str, a: &dyn Archive, extra: &[&str]) -> usize {
    let ix = DirIndex::build(a.entries());
    assert!(ix.fits(a.entries()));
    assert_eq!(ix.len(), a.entries().len());
    let dirs = folders_of(a, extra);
    for d in &dirs {
        assert_eq!(ix.children(a.entries(), d), children(a, d), "{what}: children of {d:?}");
        assert_eq!(store_files_in(a.entries(), &ix, d), store_files(a.entries(), d), "{what}: store files of {d:?}");
    }
    dirs.len()
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
fn the_index_answers_as_the_scans_on_every_folder_of_every_fixture() {
    let (mut zips, mut folders) = (0, 0);
    for path in zips_in(&fixtures_dir()).into_iter().chain(zips_in(&generated_dir())) {
        let f = std::fs::File::open(&path).expect("open zip");
        let len = f.metadata().expect("metadata").len();
        let name = path.display().to_string();
        let z = ZipInput::open(f, len, &name, Limits::default()).expect("zip opens");
        folders += assert_same_answers(&name, &z, &["state/1", "state/10", "nope", "/"]);
        zips += 1;
    }
    assert!(zips > 80 && folders > 10_000, "{zips} zips, {folders} folders");
}

#[test]
fn edge_cases_answer_as_the_scans() {
    let listing = Listing(vec![
        // Names that are prefixes of each other, with characters sorting before and after `/`.
        entry("state/1/0.delta", false),
        entry("state/10/1.delta", false),
        entry("state/1-x/a", false),
        entry("state/1.crc", false),
        entry("state/10", true),
        entry("state/1/left/1.delta", false),
        entry("state/1/left", true),
        entry("state/1/SSTs/a.sst", false),
        entry("state/1/.1.delta.crc", false),
        entry("state/1/1.zip", false),
        // A file and a folder of one name, both orders; a path listed twice, file first then folder and back.
        entry("f", false),
        entry("f/inner", false),
        entry("g/inner", false),
        entry("g", false),
        entry("twice", false),
        entry("twice", true),
        entry("dir-then-file", true),
        entry("dir-then-file", false),
        // Folder entries alone, empty and trailing-slash paths, a leading slash, non-ASCII names.
        entry("empty", true),
        entry("slash/", true),
        entry("slash/x", false),
        entry("", false),
        entry("/abs/x", false),
        entry("é/x", false),
        entry("é", true),
        entry("a", false),
        entry("a/b/c/d", false),
        entry("a/b", false),
        entry("a0", false),
        entry("a-b/c", false),
        entry("ab", false),
    ]);
    let extra =
        ["", "/", "//", "state", "state/", "state//", "state/1", "state/10", "state/1/", "nope", "nope/x", "é/"];
    assert_same_answers("edge cases", &listing, &extra);
    let ix = DirIndex::build(listing.entries());
    let c = ix.children(listing.entries(), "state/1");
    assert_eq!(c.get("left"), Some(&false));
    assert_eq!(c.get("0.delta"), Some(&true));
    assert!(!c.contains_key("1.delta"), "state/10's file is not state/1's");
    let top = ix.children(listing.entries(), "");
    assert_eq!((top.get("f"), top.get("g"), top.get("empty")), (Some(&false), Some(&false), Some(&false)));
    assert_eq!((top.get("twice"), top.get("dir-then-file")), (Some(&true), Some(&false)), "the first listed");
    // A prefix is a string prefix: the folder `state/1` is `state/1/`.
    let paths = |p: &str| -> Vec<&str> {
        ix.under(listing.entries(), p).iter().map(|&i| listing.entries()[i as usize].path.as_str()).collect()
    };
    assert!(paths("state/1").contains(&"state/10/1.delta"));
    assert!(!paths("state/1/").contains(&"state/10/1.delta"));
    assert_eq!(paths("").len(), listing.entries().len());
    assert!(paths("nope").is_empty());
}

#[test]
fn generated_listings_answer_as_the_scans() {
    // Paths over a small alphabet that sorts around `/` (`-` and `.` before it, digits after), folder entries
    // and paths listed twice among them: every run boundary the galloping skip can meet.
    let parts = ["1", "10", "1-", "1.", "a", "ab", "_", "SSTs"];
    let mut seed: u64 = 0x5eed;
    let mut next = |n: usize| {
        seed = seed.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        (seed >> 33) as usize % n
    };
    for round in 0..40 {
        let mut entries = Vec::new();
        for _ in 0..(round * 7 + 1) {
            let depth = 1 + next(4);
            let path: Vec<&str> = (0..depth).map(|_| parts[next(parts.len())]).collect();
            entries.push(entry(&path.join("/"), next(5) == 0));
        }
        let listing = Listing(entries);
        assert_same_answers(&format!("round {round}"), &listing, &[]);
    }
}

#[test]
fn another_list_gets_answers_without_a_panic() {
    let a = Listing(vec![entry("state/0/1.delta", false), entry("state/0/2.delta", false), entry("z", false)]);
    let b = Listing(vec![entry("zz/top/x", false)]);
    let ix = DirIndex::build(a.entries());
    assert!(!ix.fits(b.entries()));
    for d in ["", "state", "state/0", "zz", "zz/top"] {
        let _ = ix.children(b.entries(), d);
        let _ = store_files_in(b.entries(), &ix, d);
    }
    assert!(DirIndex::default().fits(&[]) && DirIndex::default().is_empty());
}
