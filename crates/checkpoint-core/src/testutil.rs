//! Test helpers: the shared fixtures folder and opening its zips through the core's own [`ZipInput`]; the
//! real-Spark checkpoints of this crate (`tests/data/spark/`, written by `tools/spark-gen/`).

use crate::archive::{Archive, Limits, ZipInput};
use std::path::PathBuf;

/// `/work/shared/fixtures` as seen from the crate (`../../../shared/fixtures`).
pub fn fixtures_dir() -> PathBuf {
    PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/../../../shared/fixtures"))
}

/// Every fixture name (`<name>.zip` without the extension), sorted.
pub fn fixture_names() -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(fixtures_dir())
        .expect("fixtures folder")
        .filter_map(|e| e.ok())
        .filter_map(|e| e.file_name().to_str().map(str::to_string))
        .filter(|n| n.ends_with(".zip") && !n.ends_with(".sink-output.zip"))
        .map(|n| n.trim_end_matches(".zip").to_string())
        .collect();
    v.sort();
    assert!(v.len() > 10, "fixtures folder looks empty");
    v
}

/// Opens `<name>.zip` with default limits.
pub fn open_fixture(name: &str) -> ZipInput<std::fs::File> {
    let path = fixtures_dir().join(format!("{name}.zip"));
    let f = std::fs::File::open(&path).expect("open fixture zip");
    let len = f.metadata().expect("metadata").len();
    ZipInput::open(f, len, name, Limits::default()).expect("fixture zip opens")
}

/// Opens `tests/data/spark/<name>.zip` with default limits.
pub fn open_generated(name: &str) -> ZipInput<std::fs::File> {
    let f = std::fs::File::open(generated_dir().join(format!("{name}.zip"))).expect("open generated zip");
    let len = f.metadata().expect("metadata").len();
    ZipInput::open(f, len, name, Limits::default()).expect("generated zip opens")
}

/// The folder of this crate's own real-Spark checkpoints (`tests/data/spark/`, `tools/spark-gen/`).
pub fn generated_dir() -> PathBuf {
    PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/spark"))
}

/// Every file of `tests/data/spark/<name>.zip` (path, bytes), in zip order, read through [`ZipInput`].
pub fn generated_files(name: &str) -> Vec<(String, Vec<u8>)> {
    let f = std::fs::File::open(generated_dir().join(format!("{name}.zip"))).expect("open generated zip");
    let len = f.metadata().expect("metadata").len();
    let mut z = ZipInput::open(f, len, name, Limits::default()).expect("generated zip opens");
    let paths: Vec<String> = z.entries().iter().filter(|e| !e.is_dir).map(|e| e.path.clone()).collect();
    paths.into_iter().map(|p| (p.clone(), z.read(&p, 1 << 26).expect("entry reads"))).collect()
}

/// The `<name>.json` record of a checkpoint of `tests/data/spark/` (what Spark did on restart).
pub fn generated_record(name: &str) -> serde_json::Value {
    let p = generated_dir().join(format!("{name}.json"));
    serde_json::from_slice(&std::fs::read(p).expect("record")).expect("record parses")
}

/// The fixture's `<name>.json` record.
pub fn fixture_record(name: &str) -> serde_json::Value {
    let p = fixtures_dir().join(format!("{name}.json"));
    serde_json::from_slice(&std::fs::read(p).expect("fixture json")).expect("fixture json parses")
}

/// Paths of all state record files (`.delta`, `.snapshot`, `.changelog`) of an archive.
pub fn state_record_files(a: &dyn Archive) -> Vec<String> {
    a.entries()
        .iter()
        .filter(|e| !e.is_dir)
        .map(|e| e.path.clone())
        .filter(|p| {
            let file = p.rsplit('/').next().unwrap_or("");
            !file.starts_with('.')
                && (p.starts_with("state/") || p.contains("/state/"))
                && (file.ends_with(".delta") || file.ends_with(".snapshot") || file.ends_with(".changelog"))
        })
        .collect()
}

/// An archive that records what a reader does with it: how often it is listed, each prefetch hint
/// ([`Archive::prefetch`]), each read and how many hints came before it.
pub struct Recorder<A: Archive> {
    /// The archive read.
    pub inner: A,
    /// Calls of `entries`.
    pub listed: std::cell::Cell<usize>,
    /// Each hint's paths, in order.
    pub hints: Vec<Vec<String>>,
    /// Each path read, in order.
    pub reads: Vec<String>,
    /// For each read (same index as `reads`), how many hints came before it.
    pub hints_before_read: Vec<usize>,
}

impl<A: Archive> Recorder<A> {
    /// A recorder of `inner`, nothing recorded yet.
    pub fn new(inner: A) -> Self {
        Recorder { inner, listed: Default::default(), hints: vec![], reads: vec![], hints_before_read: vec![] }
    }

    /// Every path hinted, in order.
    pub fn hinted(&self) -> Vec<String> {
        self.hints.concat()
    }
}

impl<A: Archive> Archive for Recorder<A> {
    fn entries(&self) -> &[crate::archive::Entry] {
        self.listed.set(self.listed.get() + 1);
        self.inner.entries()
    }
    fn read(&mut self, path: &str, max_bytes: u64) -> Result<Vec<u8>, crate::archive::ArchiveError> {
        self.reads.push(path.to_string());
        self.hints_before_read.push(self.hints.len());
        self.inner.read(path, max_bytes)
    }
    fn name(&self) -> &str {
        self.inner.name()
    }
    fn input_bytes(&self) -> u64 {
        self.inner.input_bytes()
    }
    fn prefetch(&mut self, paths: &[String]) {
        self.hints.push(paths.to_vec());
    }
}
