//! Conformance over the WHOLE shared fixtures folder: every zip is read without error, its report agrees
//! with the facts Spark's files show (the fixture's `.json`), and the restart prediction matches what Spark
//! really did on restart (`restart_outcome`): mode A from the files only (plus the restarted session's
//! confs and Spark version), mode B with the error text Spark printed pasted in. New fixtures need no
//! new code.

mod common;
use common::fixtures_dir;

use checkpoint_core::report::{CheckpointReport, RestartOutcome};
use checkpoint_core::{diagnose, Context, Limits, Report, SparkVersion, ZipInput};
use serde_json::Value;
use std::path::{Path, PathBuf};

fn run(zip: &Path, ctx: &Context) -> Report {
    let f = std::fs::File::open(zip).unwrap();
    let len = f.metadata().unwrap().len();
    let name = zip.file_name().unwrap().to_string_lossy().to_string();
    let mut a = ZipInput::open(std::io::BufReader::new(f), len, &name, Limits::default())
        .unwrap_or_else(|e| panic!("{name}: cannot open: {e}"));
    diagnose(&mut a, ctx)
}

/// The Spark version a fixture was restarted with.
fn restarted_version(name: &str, j: &Value) -> SparkVersion {
    if let Some(v) = name.split("-restarted-on-").nth(1) {
        return v.parse().unwrap();
    }
    if let Some(v) = j.pointer("/mutation/restarted_with").and_then(|v| v.as_str()) {
        return v.parse().unwrap();
    }
    j["spark_version"].as_str().unwrap().parse().unwrap()
}

/// The restarted query's session confs (`spark.*` keys of `query.confs`) and, for our generated records, the
/// writer options it was restarted with (`query.restart_writer_options`, e.g. asyncProgressTrackingEnabled).
fn session_conf(j: &Value) -> std::collections::BTreeMap<String, String> {
    let pairs = |ptr: &str, spark_only: bool| -> Vec<(String, String)> {
        j.pointer(ptr)
            .and_then(|c| c.as_object())
            .map(|m| {
                m.iter()
                    .filter(|(k, _)| !spark_only || k.starts_with("spark."))
                    .map(|(k, v)| (k.clone(), v.as_str().map(str::to_string).unwrap_or_else(|| v.to_string())))
                    .collect()
            })
            .unwrap_or_default()
    };
    let mut c: std::collections::BTreeMap<String, String> = pairs("/query/confs", true).into_iter().collect();
    c.extend(pairs("/query/restart_writer_options", false));
    c
}

/// The path a restart of `tools/spark-gen/source_path.py` read (`mutation.kind` "source-path"): the folder or
/// glob `mutation.new_path` beside the folder of the files batch 0 read (from the zip's own `sources/0/0`), as
/// source 0's path; no paths for any other record.
fn source_paths(j: &Value, zip: &Path) -> std::collections::BTreeMap<u32, String> {
    let mut out = std::collections::BTreeMap::new();
    if j.pointer("/mutation/kind").and_then(|k| k.as_str()) != Some("source-path") {
        return out;
    }
    let f = std::fs::File::open(zip).unwrap();
    let len = f.metadata().unwrap().len();
    let mut z = ZipInput::open(f, len, "zip", Limits::default()).unwrap();
    let root = j["checkpoint_root"].as_str().unwrap_or("");
    let log = checkpoint_core::Archive::read(&mut z, &format!("{root}/sources/0/0"), 1 << 20).unwrap();
    let text = String::from_utf8(log).unwrap();
    let entry: Value = serde_json::from_str(text.lines().nth(1).unwrap()).unwrap();
    let file = checkpoint_core::checks::source_path::normalize(entry["path"].as_str().unwrap());
    let folder = file.rsplit_once('/').unwrap().0;
    let parent = folder.rsplit_once('/').unwrap().0;
    out.insert(0, format!("{parent}/{}", j["mutation"]["new_path"].as_str().unwrap()));
    out
}

/// The error text a user would paste: the cause chain as Java prints it.
fn error_text(ro: &Value) -> String {
    let mut out = String::new();
    for (i, c) in ro["cause_chain"].as_array().into_iter().flatten().enumerate() {
        let class = c["class"].as_str().unwrap_or("");
        let msg = c["message_head"].as_str().unwrap_or("");
        if i > 0 {
            out.push_str("Caused by: ");
        }
        out.push_str(&format!("{class}: {msg}\n"));
    }
    if out.is_empty() {
        if let Some(m) = ro["message_head"].as_str() {
            out = format!("{}: {m}\n", ro["exception"].as_str().unwrap_or(""));
        }
    }
    out
}

fn check_facts(name: &str, j: &Value, cp: &CheckpointReport, errs: &mut Vec<String>) {
    let f = &j["facts"];
    let ids = |k: &str| -> Vec<i64> {
        f[k].as_array().map(|a| a.iter().filter_map(|x| x.as_i64()).collect()).unwrap_or_default()
    };
    let offs: Vec<i64> = cp.batches.iter().filter(|b| b.has_offsets).map(|b| b.batch_id).collect();
    let coms: Vec<i64> = cp.batches.iter().filter(|b| b.committed).map(|b| b.batch_id).collect();
    if offs != ids("offsets_batches") {
        errs.push(format!("{name}: offsets batches {offs:?} != {:?}", ids("offsets_batches")));
    }
    if coms != ids("commits_batches") {
        errs.push(format!("{name}: commit batches {coms:?} != {:?}", ids("commits_batches")));
    }
    if cp.last_batch_id != f["last_offset_batch"].as_i64() {
        errs.push(format!("{name}: last_batch_id {:?} != {}", cp.last_batch_id, f["last_offset_batch"]));
    }
    if cp.last_committed_batch_id != f["last_committed_batch"].as_i64() {
        errs.push(format!("{name}: last_committed {:?} != {}", cp.last_committed_batch_id, f["last_committed_batch"]));
    }
    let qid = f.pointer("/metadata/id").and_then(|v| v.as_str()).map(str::to_string);
    if cp.query_id != qid {
        errs.push(format!("{name}: query_id {:?} != {qid:?}", cp.query_id));
    }
    if let Some(conf) = f["last_offset_conf"].as_object() {
        let want: std::collections::BTreeMap<String, String> =
            conf.iter().map(|(k, v)| (k.clone(), v.as_str().unwrap_or_default().to_string())).collect();
        if cp.conf != want {
            errs.push(format!("{name}: conf differs"));
        }
    }
    if let Some(n) = f["num_sources"].as_u64() {
        if cp.sources.len() as u64 != n {
            errs.push(format!("{name}: {} sources != {n}", cp.sources.len()));
        }
        let raw: Vec<Value> = f["source_offsets_last_batch"]
            .as_array()
            .map(|a| {
                a.iter()
                    .map(|s| {
                        let s = s.as_str().unwrap_or("null");
                        // v2 offset log lines are `<sourceName>:<offset>`.
                        let s = if f["offset_log_version_line"] == "v2" {
                            s.split_once(':').map(|x| x.1).unwrap_or(s)
                        } else {
                            s
                        };
                        serde_json::from_str(s).unwrap_or(Value::Null)
                    })
                    .collect()
            })
            .unwrap_or_default();
        for (i, s) in cp.sources.iter().enumerate() {
            if raw.get(i).is_some_and(|r| Some(r) != s.latest_offset.as_ref()) {
                errs.push(format!("{name}: source {i} offset {:?} != {:?}", s.latest_offset, raw.get(i)));
            }
        }
    }
    let ops = f["state_operators"].as_object().cloned().unwrap_or_default();
    let mut want_ops: Vec<(i64, u64)> = ops
        .iter()
        .map(|(k, v)| (k.parse().unwrap(), v["partitions"].as_array().map(|a| a.len() as u64).unwrap_or(0)))
        .collect();
    want_ops.sort();
    let got_ops: Vec<(i64, u64)> = cp.operators.iter().map(|o| (o.operator_id, o.partitions)).collect();
    if got_ops != want_ops {
        errs.push(format!("{name}: operators/partitions {got_ops:?} != {want_ops:?}"));
    }
    if let Some(p) = f["state_store_provider"].as_str() {
        let want = if p.contains("RocksDB") { "rocksdb" } else { "hdfs" };
        for o in &cp.operators {
            if o.provider != want {
                errs.push(format!("{name}: operator {} provider {} != {want}", o.operator_id, o.provider));
            }
        }
    }
}

fn check_prediction(name: &str, mode: &str, j: &Value, cp: &CheckpointReport, errs: &mut Vec<String>) {
    let ro = &j["restart_outcome"];
    let r = &cp.restart;
    if ro["ok"].as_bool() == Some(true) {
        let f = &j["facts"];
        let replay = match (f["last_offset_batch"].as_i64(), f["last_committed_batch"].as_i64()) {
            (Some(l), Some(c)) => c < l,
            (Some(_), None) => true,
            _ => false,
        };
        let want = if replay { RestartOutcome::ReplaysLastBatch } else { RestartOutcome::Resumes };
        if r.outcome != want {
            errs.push(format!(
                "{name} [{mode}]: predicted {:?} ({:?} {:?}: {}), Spark: ok ({want:?})",
                r.outcome, r.error_class, r.exception, r.summary
            ));
        }
        return;
    }
    if r.outcome != RestartOutcome::Fails {
        errs.push(format!(
            "{name} [{mode}]: predicted {:?}, Spark failed with {} {}",
            r.outcome, ro["error_class"], ro["exception"]
        ));
        return;
    }
    match ro["error_class"].as_str() {
        Some(c) => {
            if r.error_class.as_deref() != Some(c) {
                errs.push(format!("{name} [{mode}]: error class {:?} != {c}", r.error_class));
            }
        }
        None => {
            let e = ro["exception"].as_str().unwrap_or("");
            if r.exception.as_deref() != Some(e) || r.error_class.is_some() {
                errs.push(format!(
                    "{name} [{mode}]: exception {:?} / class {:?} != {e} / none",
                    r.exception, r.error_class
                ));
            }
        }
    }
    if mode == "B" && !cp.findings.iter().any(|f| f.explains_error_text) {
        errs.push(format!("{name} [B]: no finding explains the error text"));
    }
}

#[test]
fn every_fixture_conforms() {
    let dir = fixtures_dir();
    let mut zips: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap()
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "zip"))
        .collect();
    zips.sort();
    assert!(zips.len() > 50, "fixtures not found in {}", dir.display());
    let mut errs = Vec::new();
    let (mut n_a, mut n_b, mut fail_a, mut fail_b) = (0, 0, 0, 0);
    for zip in &zips {
        let name = zip.file_stem().unwrap().to_string_lossy().to_string();
        let json_path = zip.with_extension("json");
        let report = run(zip, &Context::default());
        assert!(!report.checkpoints.is_empty(), "{name}: no checkpoint root");
        if !json_path.exists() {
            continue; // e.g. a sink output zip: read without error is all we ask
        }
        let j: Value = serde_json::from_str(&std::fs::read_to_string(&json_path).unwrap()).unwrap();
        if j["kind"].as_str() != Some("structured-streaming") {
            continue;
        }
        assert_eq!(report.checkpoints.len(), 1, "{name}: one checkpoint expected");
        let before = errs.len();
        check_facts(&name, &j, &report.checkpoints[0], &mut errs);
        let version = restarted_version(&name, &j);
        let conf = session_conf(&j);
        let desc = j.pointer("/mutation/description").and_then(|d| d.as_str()).unwrap_or("");
        if !desc.contains("no file change") {
            n_a += 1;
            let ctx = Context { spark_version: Some(version), session_conf: conf.clone(), ..Default::default() };
            let rep = run(zip, &ctx);
            let b = errs.len();
            check_prediction(&name, "A", &j, &rep.checkpoints[0], &mut errs);
            fail_a += (errs.len() > b) as usize;
        }
        if j["restart_outcome"]["ok"].as_bool() == Some(false) {
            n_b += 1;
            let ctx = Context {
                spark_version: Some(version),
                session_conf: conf,
                error_text: Some(error_text(&j["restart_outcome"])),
                ..Default::default()
            };
            let rep = run(zip, &ctx);
            let b = errs.len();
            check_prediction(&name, "B", &j, &rep.checkpoints[0], &mut errs);
            fail_b += (errs.len() > b) as usize;
        }
        let _ = before;
    }
    eprintln!("mode A: {}/{n_a} pass; mode B: {}/{n_b} pass", n_a - fail_a, n_b - fail_b);
    for e in &errs {
        eprintln!("  {e}");
    }
    assert!(errs.is_empty(), "{} conformance failure(s)", errs.len());
}

/// The checkpoints our own generators wrote with real Spark (`tools/spark-gen/`, `tests/data/spark/`): one
/// record per restart (several records may share a zip, named by `zip`); the prediction from the files and
/// the restart's confs and writer options must be what Spark did.
#[test]
fn every_generated_fixture_conforms() {
    let dir = PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/spark"));
    let mut records: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap()
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "json"))
        .collect();
    records.sort();
    assert!(!records.is_empty(), "no generated records in {}", dir.display());
    let mut errs = Vec::new();
    for rec in &records {
        let j: Value = serde_json::from_str(&std::fs::read_to_string(rec).unwrap()).unwrap();
        let name = j["name"].as_str().unwrap().to_string();
        let zip = dir.join(j["zip"].as_str().map(str::to_string).unwrap_or_else(|| format!("{name}.zip")));
        // The checkpoint's folder in the zip (`checkpoint_root`, e.g. `chk` beside an output folder `out`).
        let root = j["checkpoint_root"].as_str().unwrap_or("").to_string();
        let pick = |r: Report| {
            r.checkpoints.into_iter().find(|c| c.root == root).unwrap_or_else(|| panic!("{name}: no root {root:?}"))
        };
        check_facts(&name, &j, &pick(run(&zip, &Context::default())), &mut errs);
        let ctx = Context {
            spark_version: Some(restarted_version(&name, &j)),
            session_conf: session_conf(&j),
            source_paths: source_paths(&j, &zip),
            ..Default::default()
        };
        check_prediction(&name, "A", &j, &pick(run(&zip, &ctx)), &mut errs);
        if j["restart_outcome"]["ok"].as_bool() == Some(false) {
            let ctx = Context { error_text: Some(error_text(&j["restart_outcome"])), ..ctx };
            check_prediction(&name, "B", &j, &pick(run(&zip, &ctx)), &mut errs);
        }
    }
    for e in &errs {
        eprintln!("  {e}");
    }
    assert!(errs.is_empty(), "{} conformance failure(s) of {} records", errs.len(), records.len());
}

#[test]
fn dstream_zips_are_read_and_classified() {
    let dir = PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/../../../shared/dstream"));
    let mut n = 0;
    for e in std::fs::read_dir(&dir).unwrap() {
        let p = e.unwrap().path();
        if p.extension().is_some_and(|x| x == "zip") {
            let r = run(&p, &Context::default());
            assert_eq!(r.checkpoints.len(), 1, "{}", p.display());
            assert_eq!(r.checkpoints[0].kind, checkpoint_core::report::CheckpointKind::Dstream, "{}", p.display());
            assert!(!r.checkpoints[0].dstream.as_ref().unwrap().checkpoint_times_ms.is_empty());
            n += 1;
        }
    }
    assert!(n >= 3);
}
