//! The checkpoints our generators wrote with real Spark (`tools/spark-gen/`, `tests/data/spark/`): each zip with
//! its record (`<name>.json`: the query, its confs, the damage and what Spark did on restart).

use checkpoint_core::report::{CheckpointReport, RestartOutcome};
use checkpoint_core::{diagnose, Context, Limits, SparkVersion, ZipInput};
use serde_json::Value;
use std::path::{Path, PathBuf};

/// `crates/checkpoint-core/tests/data/spark`.
pub fn data_dir() -> PathBuf {
    PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/spark"))
}

/// The one checkpoint's report of the zip at `zip`, read lazily from its file as the CLI reads it.
pub fn run(zip: &Path, ctx: &Context) -> CheckpointReport {
    let f = std::fs::File::open(zip).unwrap();
    let len = f.metadata().unwrap().len();
    let name = zip.file_name().unwrap().to_string_lossy().to_string();
    let mut a = ZipInput::open(std::io::BufReader::new(f), len, &name, Limits::default()).unwrap();
    let mut r = diagnose(&mut a, ctx);
    assert_eq!(r.checkpoints.len(), 1, "{name}");
    r.checkpoints.remove(0)
}

/// The files (path, bytes) of the generated zip `name` in [`data_dir`].
pub fn generated_files(name: &str) -> Vec<(String, Vec<u8>)> {
    use checkpoint_core::archive::Archive;
    let path = data_dir().join(format!("{name}.zip"));
    let f = std::fs::File::open(&path).unwrap();
    let len = f.metadata().unwrap().len();
    let mut z = ZipInput::open(f, len, name, Limits::default()).unwrap();
    let paths: Vec<String> = z.entries().iter().filter(|e| !e.is_dir).map(|e| e.path.clone()).collect();
    paths.into_iter().map(|p| (p.clone(), z.read(&p, 1 << 26).unwrap())).collect()
}

/// The report of the checkpoint at the record's `checkpoint_root` (a zip holding `chk/` beside an output folder
/// `out/`, which is read as a root of its own).
pub fn run_at_root(zip: &Path, j: &Value, ctx: &Context) -> CheckpointReport {
    let f = std::fs::File::open(zip).unwrap();
    let len = f.metadata().unwrap().len();
    let name = zip.file_name().unwrap().to_string_lossy().to_string();
    let mut a = ZipInput::open(std::io::BufReader::new(f), len, &name, Limits::default()).unwrap();
    let root = j["checkpoint_root"].as_str().unwrap_or("");
    diagnose(&mut a, ctx)
        .checkpoints
        .into_iter()
        .find(|c| c.root == root)
        .unwrap_or_else(|| panic!("{name}: no {root}"))
}

/// `(file stem, record)` of every record whose name starts with `prefix`, sorted; at least `min` of them.
pub fn records(prefix: &str, min: usize) -> Vec<(String, Value)> {
    let mut out: Vec<(String, Value)> = std::fs::read_dir(data_dir())
        .unwrap()
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| {
            p.extension().is_some_and(|x| x == "json")
                && p.file_name().is_some_and(|n| n.to_string_lossy().starts_with(prefix))
        })
        .map(|p| {
            let j: Value = serde_json::from_str(&std::fs::read_to_string(&p).unwrap()).unwrap();
            (p.file_stem().unwrap().to_string_lossy().to_string(), j)
        })
        .collect();
    out.sort_by(|a, b| a.0.cmp(&b.0));
    assert!(out.len() >= min, "the {prefix}* records are in {}", data_dir().display());
    out
}

/// The restart's context of a record: its Spark version and confs, and Spark's error text when given.
pub fn context(j: &Value, error_text: Option<String>) -> Context {
    let conf = j["query"]["confs"]
        .as_object()
        .map(|m| m.iter().map(|(k, v)| (k.clone(), v.as_str().unwrap_or_default().to_string())).collect())
        .unwrap_or_default();
    let version: SparkVersion = j["spark_version"].as_str().unwrap().parse().unwrap();
    Context { spark_version: Some(version), session_conf: conf, error_text, ..Default::default() }
}

/// Spark's error as a user pastes it: each exception of the recorded cause chain, `Caused by: ` after the first.
pub fn error_text(ro: &Value) -> String {
    let mut out = String::new();
    for (i, c) in ro["cause_chain"].as_array().into_iter().flatten().enumerate() {
        let prefix = if i > 0 { "Caused by: " } else { "" };
        out.push_str(&format!(
            "{prefix}{}: {}\n",
            c["class"].as_str().unwrap_or(""),
            c["message_head"].as_str().unwrap_or("")
        ));
    }
    out
}

/// The prediction against what Spark did (`restart_outcome`): Spark went on and the prediction resumes or replays,
/// or Spark failed and the prediction fails with Spark's error class, or, when Spark named none, with no class
/// and Spark's exception. `Err` says how they differ.
pub fn check_prediction(cp: &CheckpointReport, ro: &Value) -> Result<(), String> {
    let r = &cp.restart;
    if ro["ok"].as_bool() == Some(true) {
        return match r.outcome {
            RestartOutcome::Resumes | RestartOutcome::ReplaysLastBatch => Ok(()),
            _ => Err(format!("predicted {:?} ({:?}: {}), Spark: ok", r.outcome, r.error_class, r.summary)),
        };
    }
    if r.outcome != RestartOutcome::Fails {
        return Err(format!(
            "predicted {:?}, Spark failed with {} / {}",
            r.outcome, ro["error_class"], ro["exception"]
        ));
    }
    match ro["error_class"].as_str() {
        Some(c) if r.error_class.as_deref() != Some(c) => Err(format!("error class {:?} != {c}", r.error_class)),
        None if r.error_class.is_some() || r.exception.as_deref() != ro["exception"].as_str() => {
            Err(format!("{:?} / exception {:?} != {}", r.error_class, r.exception, ro["exception"]))
        }
        _ => Ok(()),
    }
}
