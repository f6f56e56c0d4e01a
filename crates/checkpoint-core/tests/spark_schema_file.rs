//! A state schema file (`state/<op>/0/_metadata/schema`) emptied, cut, garbled or deleted, restarted with real
//! Spark (tests/data/spark/schema-file-*, written by tools/spark-gen/schema_file.py): the restart prediction equals
//! what Spark recorded (outcome, error class, or exception when Spark named no class), from the files alone
//! (mode A) and with Spark's error text pasted (mode B); the finding names the damaged file; and with the schema
//! check turned off the prediction equals what Spark did on the recorded restart with that conf (`fix_outcome`).

mod common;

use checkpoint_core::report::{CheckpointReport, Code, Severity};
use common::spark_gen::{check_prediction, context, data_dir, error_text, records, run};
use serde_json::Value;

const CHECK: &str = "spark.sql.streaming.stateStore.stateSchemaCheck";

/// The finding names the damaged file: the schema file itself, or its `.crc` left without it; none when the file
/// was deleted with its sidecars (Spark writes it anew).
fn check_blame(cp: &CheckpointReport, j: &Value, severity: Severity) -> Result<(), String> {
    let file = j["mutation"]["file"].as_str().unwrap();
    let (code, path, offset) = match j["mutation"]["kind"].as_str().unwrap() {
        "schema-file-deleted" => (None, String::new(), false),
        "schema-file-deleted-crc-kept" => {
            let (dir, name) = file.rsplit_once('/').unwrap();
            (Some(Code::OrphanHadoopCrc), format!("{dir}/.{name}.crc"), false)
        }
        _ => (Some(Code::StateSchemaFileUnreadable), file.to_string(), true),
    };
    let blames = |f: &&checkpoint_core::report::Finding| {
        f.evidence
            .iter()
            .any(|e| e.path.starts_with("state/") && e.path.contains("/_metadata/") && e.path.contains("schema"))
    };
    let found: Vec<_> = cp.findings.iter().filter(|f| f.severity <= Severity::Warning).filter(blames).collect();
    let Some(code) = code else {
        return match found.is_empty() {
            true => Ok(()),
            false => Err(format!("the file is gone with its sidecars, yet {:?}", found[0].title)),
        };
    };
    let [f] = found.as_slice() else { return Err(format!("{} findings blame the schema file, want 1", found.len())) };
    let e = &f.evidence[0];
    match (f.code == code, e.path == path, e.offset.is_some() == offset, f.severity == severity) {
        (true, true, true, true) => Ok(()),
        _ => Err(format!(
            "{} {:?} blames {} at {:?}, want {code} {severity:?} on {path}",
            f.code, f.severity, e.path, e.offset
        )),
    }
}

#[test]
fn predictions_match_what_spark_did() {
    let mut errs = Vec::new();
    for (name, j) in records("schema-file-", 8) {
        let zip = data_dir().join(format!("{name}.zip"));
        let ro = &j["restart_outcome"];
        let a = run(&zip, &context(&j, None));
        if let Err(e) = check_prediction(&a, ro).and_then(|_| check_blame(&a, &j, Severity::Error)) {
            errs.push(format!("{name} [A]: {e}"));
        }
        if ro["ok"].as_bool() == Some(false) {
            let b = run(&zip, &context(&j, Some(error_text(ro))));
            if let Err(e) = check_prediction(&b, ro) {
                errs.push(format!("{name} [B]: {e}"));
            }
            let schema_evidence = |f: &checkpoint_core::report::Finding| {
                f.evidence.iter().any(|e| e.path.contains("/_metadata/") && e.path.contains("schema"))
            };
            if !b.findings.iter().any(|f| f.explains_error_text && schema_evidence(f)) {
                errs.push(format!("{name} [B]: the schema file finding does not explain Spark's error text"));
            }
        }
    }
    assert!(errs.is_empty(), "{}", errs.join("\n"));
}

/// Every failed restart was restarted again with the schema check off (`fix_outcome`): the prediction under that
/// conf equals what Spark did, and the finding stays, as a warning.
#[test]
fn with_the_schema_check_off_as_spark_did() {
    let mut errs = Vec::new();
    let mut seen = 0;
    for (name, j) in records("schema-file-", 8) {
        let Some(fo) = j.get("fix_outcome") else { continue };
        seen += 1;
        let mut ctx = context(&j, None);
        ctx.session_conf.insert(CHECK.into(), "false".into());
        let a = run(&data_dir().join(format!("{name}.zip")), &ctx);
        if let Err(e) = check_prediction(&a, fo).and_then(|_| check_blame(&a, &j, Severity::Warning)) {
            errs.push(format!("{name} [check off]: {e}"));
        }
        // A damaged file stays as it was: the next restart with the check on fails as the first did. A `.crc` left
        // without its file no longer blocks once that run wrote the file.
        let after = &j["after_fix_outcome"];
        let crc_kept = j["mutation"]["kind"] == "schema-file-deleted-crc-kept";
        let same = after["ok"] == j["restart_outcome"]["ok"] && after["exception"] == j["restart_outcome"]["exception"];
        if crc_kept != (after["ok"] == true) || crc_kept == same {
            errs.push(format!("{name}: the restart after the fix: {} {}", after["ok"], after["exception"]));
        }
    }
    assert!(seen >= 6, "records with a fix_outcome: {seen}");
    assert!(errs.is_empty(), "{}", errs.join("\n"));
}
