//! Stale sidecars on real checkpoints (`tests/data/spark/stale-*`, written by `tools/spark-gen/stale_sidecar.py`
//! with Spark 4.1.4): a data file that decodes next to a Hadoop `.crc` or Spark checksum file of another
//! write attempt. The prediction must be what Spark did on restart (its record), and the finding must blame
//! the sidecar: named first in the evidence, deleted by the fix, the data file never to be restored. Spark
//! restarted a second copy with the fix applied (`fix_outcome`): it resumes.

use checkpoint_core::{diagnose, Context, Limits, SparkVersion, ZipInput};
use serde_json::Value;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

fn data_dir() -> PathBuf {
    PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/spark"))
}

/// The records of the stale-sidecar checkpoints, by name.
fn records() -> Vec<(String, Value)> {
    let mut out: Vec<(String, Value)> = std::fs::read_dir(data_dir())
        .expect("tests/data/spark")
        .filter_map(|e| e.ok())
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x == "json"))
        .filter_map(|p| {
            let name = p.file_stem()?.to_string_lossy().to_string();
            let j: Value = serde_json::from_slice(&std::fs::read(&p).ok()?).ok()?;
            (j["generator"] == "tools/spark-gen/stale_sidecar.py").then_some((name, j))
        })
        .collect();
    out.sort_by(|a, b| a.0.cmp(&b.0));
    out
}

/// The report of a record's zip as JSON, with the record's Spark version and confs.
fn report(name: &str, j: &Value) -> Value {
    let zip: &Path = &data_dir().join(format!("{name}.zip"));
    let f = std::fs::File::open(zip).expect("zip");
    let len = f.metadata().expect("metadata").len();
    let mut a = ZipInput::open(std::io::BufReader::new(f), len, name, Limits::default()).expect("zip opens");
    let conf: BTreeMap<String, String> = j["query"]["confs"]
        .as_object()
        .map(|m| m.iter().map(|(k, v)| (k.clone(), v.as_str().unwrap_or_default().to_string())).collect())
        .unwrap_or_default();
    let ctx = Context {
        spark_version: Some(j["spark_version"].as_str().expect("version").parse::<SparkVersion>().expect("parses")),
        session_conf: conf,
        now_ms: Some(1_796_300_000_000),
        ..Default::default()
    };
    serde_json::to_value(diagnose(&mut a, &ctx)).expect("report serializes")
}

#[test]
fn every_generated_checkpoint_is_here() {
    let names: Vec<String> = records().into_iter().map(|(n, _)| n).collect();
    assert_eq!(
        names,
        [
            "stale-checksum-changelog-rocksdb-4.1.4",
            "stale-checksum-delta-hdfs-4.1.4",
            "stale-checksum-zip-rocksdb-4.1.4",
            "stale-crc-changelog-rocksdb-4.1.4",
            "stale-crc-delta-checksummed-hdfs-4.1.4",
            "stale-crc-delta-hdfs-4.1.4",
            "stale-crc-delta-tmp-hdfs-4.1.4",
            "stale-crc-last-offsets-4.1.4",
            "stale-crc-sst-rocksdb-4.1.4",
            "stale-crc-zip-rocksdb-4.1.4",
        ]
    );
}

#[test]
fn the_prediction_is_what_spark_did() {
    for (name, j) in records() {
        let r = report(&name, &j);
        let cp = &r["checkpoints"][0];
        let got = &cp["restart"];
        let spark = &j["restart_outcome"];
        let ok = spark["ok"].as_bool().expect("ok");
        assert_eq!(got["outcome"], if ok { "resumes" } else { "fails" }, "{name}: {got}");
        if !ok {
            assert_eq!(got["error_class"], spark["error_class"], "{name}");
            assert_eq!(got["exception"], spark["exception"], "{name}");
        }
    }
}

#[test]
fn the_finding_blames_the_sidecar() {
    for (name, j) in records() {
        let r = report(&name, &j);
        let cp = &r["checkpoints"][0];
        let (main, side) = (j["mutation"]["file"].as_str().unwrap(), j["mutation"]["sidecar"].as_str().unwrap());
        let findings = cp["findings"].as_array().expect("findings");
        let f = findings
            .iter()
            .find(|f| f["code"] == "stale-checksum-sidecar")
            .unwrap_or_else(|| panic!("{name}: no stale-checksum-sidecar in {findings:?}"));
        assert_eq!(f["evidence"][0]["path"], side, "{name}: the sidecar is named first");
        assert_eq!(f["evidence"][1]["path"], main, "{name}");
        assert!(f["evidence"][1]["detail"].as_str().unwrap().starts_with("decodes completely"), "{name}");
        let fix: Vec<&str> = f["fix"].as_array().unwrap().iter().filter_map(|s| s.as_str()).collect();
        assert!(fix.iter().any(|s| s.starts_with(&format!("Delete {side}"))), "{name}: {fix:?}");
        // No finding asks to restore the intact data file or calls it damaged.
        for g in findings {
            let steps = g["fix"].as_array().unwrap();
            assert!(
                !steps.iter().any(|s| s.as_str().unwrap().contains(&format!("Restore {main}"))),
                "{name}: {} restores {main}",
                g["code"]
            );
            assert_ne!(g["code"], "state-file-corrupt", "{name}");
            assert_ne!(g["code"], "state-file-crc-mismatch-unchecked", "{name}");
        }
        // What Spark raised on the sidecar is what the finding names.
        let chain = j["restart_outcome"]["cause_chain"].as_array().unwrap();
        for c in chain {
            if let Some(class) = c["error_class"].as_str() {
                assert!(f["error_classes"].as_array().unwrap().iter().any(|x| x == class), "{name}: {class}");
            }
        }
        if chain.iter().any(|c| c["class"] == "org.apache.hadoop.fs.ChecksumException") {
            assert!(f["why"].as_str().unwrap().contains("org.apache.hadoop.fs.ChecksumException"), "{name}");
        }
        assert_eq!(f["severity"], if j["restart_outcome"]["ok"] == true { "warning" } else { "error" }, "{name}");
        // The temp file of the other attempt, when the checkpoint has one, is shown to be the sidecar's.
        if let Some(t) = j["mutation"]["temp_file"].as_str() {
            assert!(f["evidence"][0]["detail"].as_str().unwrap().contains(&format!("match {t}")), "{name}");
        }
    }
}

#[test]
fn the_fix_is_what_made_spark_resume() {
    for (name, j) in records() {
        assert_eq!(j["fix_outcome"]["ok"], true, "{name}: Spark did not resume after the fix: {}", j["fix_outcome"]);
        let deleted: Vec<&str> = j["fix"]["deleted"].as_array().unwrap().iter().filter_map(|d| d.as_str()).collect();
        let r = report(&name, &j);
        let f = r["checkpoints"][0]["findings"]
            .as_array()
            .unwrap()
            .iter()
            .find(|f| f["code"] == "stale-checksum-sidecar")
            .cloned()
            .unwrap_or_default();
        let step = f["fix"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|s| s.as_str())
            .find(|s| s.starts_with("Delete "))
            .unwrap_or_else(|| panic!("{name}: no delete step"));
        let named = step.split(';').next().unwrap_or("");
        for d in &deleted {
            assert!(named.contains(d), "{name}: the fix does not delete {d}: {step}");
        }
        assert_eq!(
            named.matches("state/").count() + named.matches("offsets/").count(),
            deleted.len(),
            "{name}: {step}"
        );
    }
}
