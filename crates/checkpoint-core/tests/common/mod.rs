//! Helpers shared by the integration tests: the real fixtures in `../shared/fixtures`, read into memory.

#![allow(dead_code)]

use std::io::{Cursor, Read};
use std::path::PathBuf;

/// The shared fixtures folder (`<repo>/../shared/fixtures`).
pub fn fixtures_dir() -> PathBuf {
    PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/../../../shared/fixtures"))
}

/// The bytes of `<name>` (with or without its `.zip` suffix) in the fixtures folder.
pub fn fixture_zip(name: &str) -> Vec<u8> {
    let file = if name.ends_with(".zip") { name.to_string() } else { format!("{name}.zip") };
    std::fs::read(fixtures_dir().join(&file)).unwrap_or_else(|e| panic!("fixture {file}: {e}"))
}

/// A fixture zip opened lazily from its file, as the CLI opens one (`<name>` without `.zip`).
pub fn open_fixture(name: &str) -> checkpoint_core::ZipInput<std::fs::File> {
    let path = fixtures_dir().join(format!("{name}.zip"));
    let f = std::fs::File::open(&path).unwrap_or_else(|e| panic!("fixture {}: {e}", path.display()));
    let len = f.metadata().map(|m| m.len()).unwrap_or(0);
    checkpoint_core::ZipInput::open(f, len, name, checkpoint_core::Limits::default()).unwrap()
}

/// Every file of a fixture zip as `(path, bytes)`, in archive order, folders left out: the input of a `MemArchive`.
pub fn load(name: &str) -> Vec<(String, Vec<u8>)> {
    load_bytes(fixture_zip(name))
}

/// Every file of the zip at `path` relative to the shared fixtures folder (`../cases/<name>.zip` for a case), as
/// [`load`] gives them.
pub fn load_path(path: &str) -> Vec<(String, Vec<u8>)> {
    let p = fixtures_dir().join(path);
    load_bytes(std::fs::read(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display())))
}

/// Every file of the zip `bytes`, as [`load`] gives them.
pub fn load_bytes(bytes: Vec<u8>) -> Vec<(String, Vec<u8>)> {
    let mut z = zip::ZipArchive::new(Cursor::new(bytes)).unwrap();
    let mut files = Vec::new();
    for i in 0..z.len() {
        let mut f = z.by_index(i).unwrap();
        if f.is_dir() {
            continue;
        }
        let mut b = Vec::new();
        f.read_to_end(&mut b).unwrap();
        files.push((f.name().unwrap().to_string(), b));
    }
    files
}

/// Each checkpoint's report, as JSON, of `files` diagnosed at a fixed now (2027-01-15T08:00:00Z): for comparing the
/// reports of two inputs.
pub fn checkpoint_reports(files: Vec<(String, Vec<u8>)>) -> Vec<serde_json::Value> {
    let ctx = checkpoint_core::Context { now_ms: Some(1_800_000_000_000), ..Default::default() };
    let mut a = checkpoint_core::archive::MemArchive::new("in.zip", files, checkpoint_core::Limits::default()).unwrap();
    let r = checkpoint_core::diagnose(&mut a, &ctx);
    r.checkpoints.iter().map(|c| serde_json::to_value(c).unwrap()).collect()
}

/// An archive counting its reads.
pub mod counting;
pub mod faulty;
/// The checkpoints and records our generators wrote with real Spark (`tests/data/spark/`).
pub mod spark_gen;
/// Crafting hostile zips: compression methods, aliased entries (an overlap bomb).
pub mod zipcraft;

/// Every `.zip` under `dir` (its subfolders too), appended to `out`; a folder that cannot be read adds nothing.
pub fn zips_under(dir: &std::path::Path, out: &mut Vec<PathBuf>) {
    let Ok(rd) = std::fs::read_dir(dir) else { return };
    for e in rd.flatten() {
        let p = e.path();
        if p.is_dir() {
            zips_under(&p, out);
        } else if p.extension().is_some_and(|x| x.eq_ignore_ascii_case("zip")) {
            out.push(p);
        }
    }
}

/// A v1 offsets file whose metadata records `n` confs `<prefix><i>` = `v` and one file source offset
/// (`logOffset` = `log_offset`): hostile tests of the conf map's size.
pub fn offsets_with_confs(n: usize, prefix: &str, log_offset: i64) -> String {
    let mut conf = String::from("v1\n{\"batchWatermarkMs\":0,\"batchTimestampMs\":1,\"conf\":{");
    for i in 0..n {
        if i > 0 {
            conf.push(',');
        }
        conf.push_str(&format!("\"{prefix}{i}\":\"v\""));
    }
    conf.push_str(&format!("}}}}\n{{\"logOffset\":{log_offset}}}"));
    conf
}
