//! The real DStream checkpoints of `../shared/dstream` (written by Spark 3.5.9: a PySpark and a Scala job)
//! against their `.json` records: every file read, the classes the records name, the RDD checkpoint
//! folders, and what Spark 3.5.9 did on restart.

use crate::archive::{Limits, ZipInput};
use crate::report::{CheckpointReport, RestartOutcome};
use crate::testutil::fixtures_dir;
use crate::{diagnose, Context, SparkVersion};
use serde_json::Value;

fn shared(name: &str) -> std::path::PathBuf {
    fixtures_dir().join("..").join("dstream").join(name)
}

fn run(name: &str, error_text: Option<String>) -> (CheckpointReport, Value) {
    let f = std::fs::File::open(shared(&format!("{name}.zip"))).expect("zip");
    let len = f.metadata().expect("len").len();
    let mut z = ZipInput::open(f, len, name, Limits::default()).expect("opens");
    let rec: Value =
        serde_json::from_slice(&std::fs::read(shared(&format!("{name}.json"))).expect("json")).expect("json");
    let ctx = Context {
        spark_version: Some(rec["spark_version"].as_str().expect("version").parse::<SparkVersion>().expect("v")),
        now_ms: Some(1_796_083_200_000),
        error_text,
        ..Default::default()
    };
    let mut r = diagnose(&mut z, &ctx);
    assert_eq!(r.checkpoints.len(), 1);
    (r.checkpoints.remove(0), rec)
}

fn strs(v: &Value) -> Vec<String> {
    v.as_array().map(|a| a.iter().filter_map(|x| x.as_str().map(str::to_string)).collect()).unwrap_or_default()
}

/// Every record file is read, `.bk` included, and recovery starts from the newest.
fn files_match(c: &CheckpointReport, rec: &Value) {
    let d = c.dstream.as_ref().expect("dstream object");
    let mut ours: Vec<String> = d.files.iter().map(|f| f.path.clone()).collect();
    ours.sort();
    assert_eq!(ours, strs(&rec["facts"]["checkpoint_files"]));
    assert!(d.files.iter().all(|f| f.readable && f.codec == "lz4"), "{:?}", d.files);
    let newest = strs(&rec["facts"]["checkpoint_files"]).into_iter().filter(|p| !p.ends_with(".bk")).max();
    assert_eq!(d.recovers_from, newest);
    if let Some(n) = rec["facts"]["latest_checkpoint_decompressed_bytes"].as_u64() {
        assert_eq!(d.files[0].stream_bytes, Some(n), "decompressed size of the newest file");
    }
}

/// A record's class names come from a printable-byte scan, so some carry the first bytes of the
/// serialVersionUID after the name (`PythonDStream$` + `RF$`, `DStreamCheckpointData` + `7J`): a recorded
/// name matches the longest class of ours it starts with when at most 3 such bytes follow (and they are
/// not a `.method` name). Names that are no class descriptor (method references) must be text of the stream.
fn classes_match(c: &CheckpointReport, recorded: &[String], raw_stream: &[u8]) {
    let d = c.dstream.as_ref().expect("dstream");
    let ours: Vec<&str> = d.classes.iter().map(|k| k.name.as_str()).collect();
    let mut matched = 0;
    for r in recorded {
        let best = ours.iter().filter(|o| r.starts_with(**o)).max_by_key(|o| o.len());
        match best {
            Some(o) if r.len() - o.len() <= 3 && !(r[o.len()..].starts_with('.') && r.len() - o.len() > 1) => {
                matched += 1
            }
            _ => {
                let text = r.replace('.', "/");
                let hay = String::from_utf8_lossy(raw_stream);
                assert!(
                    hay.contains(r.as_str()) || hay.contains(&text),
                    "{r}: neither a class of ours nor text of the stream"
                );
            }
        }
    }
    assert!(matched + 2 >= recorded.len(), "only {matched} of {} recorded class names are classes", recorded.len());
}

fn raw_newest(name: &str, file: &str) -> Vec<u8> {
    let f = std::fs::File::open(shared(&format!("{name}.zip"))).expect("zip");
    let len = f.metadata().expect("len").len();
    let mut z = ZipInput::open(f, len, name, Limits::default()).expect("opens");
    let bytes = crate::Archive::read(&mut z, file, 1 << 24).expect("file");
    crate::codec::decompress(&bytes, 1 << 26).expect("lz4")
}

#[test]
fn pyspark_update_state_by_key_is_read_and_resumes_as_spark_did() {
    let name = "dstream-3.5.9-updatestatebykey";
    let (c, rec) = run(name, None);
    files_match(&c, &rec);
    assert_eq!(rec["restart_outcome"]["ok"], true);
    assert_eq!(c.restart.outcome, RestartOutcome::Resumes, "{}", c.restart.summary);
    let d = c.dstream.as_ref().expect("dstream");
    let raw = raw_newest(name, "checkpoint-1796030393000");
    classes_match(&c, &strs(&rec["facts"]["spark_streaming_classes_in_latest_checkpoint"]), &raw);
    let rdds: Vec<&str> = d.rdd_checkpoints.iter().map(|r| r.path.as_str()).collect();
    assert_eq!(rdds, strs(&rec["facts"]["rdd_checkpoint_dirs"]));
    assert!(d.rdd_checkpoints.iter().all(|r| r.exists));
    let cp = d.checkpoint.as_ref().expect("checkpoint fields");
    assert_eq!(cp.master.as_deref(), rec["query"]["confs"]["master"].as_str());
    assert_eq!(cp.graph.batch_duration_ms, Some(rec["query"]["batch_interval_s"].as_i64().expect("s") * 1000));
    let kinds: Vec<&str> = cp.graph.streams.iter().map(|s| crate::dstream::paths::simple(&s.class)).collect();
    for op in ["FileInputDStream", "PythonStateDStream", "ForEachDStream"] {
        assert!(kinds.contains(&op), "{op} in {kinds:?}");
    }
}

#[test]
fn scala_case_class_job_names_the_shell_classes_and_fails_as_spark_did() {
    let name = "dstream-3.5.9-scala-caseclass";
    let (c, rec) = run(name, None);
    files_match(&c, &rec);
    let d = c.dstream.as_ref().expect("dstream");
    for user in strs(&rec["facts"]["user_class_names_in_latest_checkpoint"]) {
        let k = d.classes.iter().find(|k| k.name == user).unwrap_or_else(|| panic!("{user} not listed"));
        assert_eq!(k.group, "application");
        assert!(d.allowed_classes_setting.split(',').any(|a| a == user), "{user} in the allow-list value");
    }
    let ro = &rec["restart_outcome"];
    assert_eq!(c.restart.outcome, RestartOutcome::Fails);
    assert_eq!(c.restart.exception.as_deref(), ro["exception"].as_str());
    let root_class = ro["root_message_head"].as_str().expect("class");
    let f = c.findings.iter().find(|f| f.code == crate::report::Code::DstreamReplClass).expect("repl finding");
    assert!(f.evidence.iter().any(|e| e.detail.starts_with(root_class)), "{root_class} in {:?}", f.evidence);
    assert!(f.why.contains(ro["root_exception"].as_str().expect("root").rsplit('.').next().expect("simple")));
    let rdds: Vec<&str> = d.rdd_checkpoints.iter().map(|r| r.path.as_str()).collect();
    assert_eq!(rdds, strs(&rec["facts"]["rdd_checkpoint_dirs"]));
}

#[test]
fn a_missing_rdd_checkpoint_fails_with_the_exception_spark_threw() {
    let name = "broken-dstream-3.5.9-missing-rdd-checkpoint";
    let (c, rec) = run(name, None);
    files_match(&c, &rec);
    let ro = &rec["restart_outcome"];
    assert_eq!(c.restart.outcome, RestartOutcome::Fails);
    assert_eq!(c.restart.exception.as_deref(), ro["exception"].as_str());
    let d = c.dstream.as_ref().expect("dstream");
    let missing: Vec<&str> = d.rdd_checkpoints.iter().filter(|r| !r.exists).map(|r| r.path.as_str()).collect();
    let desc = rec["mutation"]["description"].as_str().expect("mutation");
    assert_eq!(missing.len(), 1);
    assert!(desc.contains(missing[0]), "{} deleted per the record: {desc}", missing[0]);
    // Spark's message, with the record's <checkpoint> placeholder for the recorded directory.
    let dir = d.checkpoint.as_ref().and_then(|k| k.checkpoint_dir.clone()).expect("dir");
    let head = ro["message_head"].as_str().expect("head").replace("file:<checkpoint>", &dir);
    let f = c.findings.iter().find(|f| f.code == crate::report::Code::DstreamRddCheckpointMissing).expect("finding");
    assert!(f.why.contains(&head), "{head}\nnot in: {}", f.why);
}

#[test]
fn every_checkpoint_file_of_the_shared_inputs_parses_whole() {
    for name in [
        "dstream-3.5.9-updatestatebykey",
        "dstream-3.5.9-scala-caseclass",
        "broken-dstream-3.5.9-missing-rdd-checkpoint",
    ] {
        let (c, _) = run(name, None);
        let d = c.dstream.expect("dstream");
        assert!(d.files.iter().all(|f| f.readable && f.error.is_none()), "{name}");
        assert!(d.classes.iter().any(|k| k.name == "org.apache.spark.streaming.Checkpoint"));
        assert!(d.classes.iter().all(|k| !k.serial_version_uid.is_empty() && !k.group.is_empty()));
    }
}

#[test]
fn files_that_are_no_checkpoint_are_unreadable_with_the_step_and_offset() {
    use super::read_file;
    let jvm = std::path::PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/../../tools/javaser-gen/out"));
    // A Java stream that holds no Checkpoint (Spark: ClassCastException).
    let enums = std::fs::read(jvm.join("enums.ser")).expect("ser");
    let u = read_file("checkpoint-1", 1, false, &enums).content.expect_err("not a Checkpoint");
    assert_eq!((u.step, u.exception), ("checkpoint", "java.lang.ClassCastException"));
    // Neither a codec nor Java serialization.
    let u = read_file("checkpoint-1", 1, false, b"hello").content.expect_err("garbage");
    assert_eq!((u.step, u.offset), ("serialization", Some(0)));
    // A real checkpoint whose lz4 framing is cut: the codec step, at the block that breaks.
    let raw = std::fs::read(shared("dstream-3.5.9-updatestatebykey.zip")).expect("zip");
    let len = raw.len() as u64;
    let mut z = ZipInput::open(std::io::Cursor::new(raw), len, "z", Limits::default()).expect("opens");
    let bytes = crate::Archive::read(&mut z, "checkpoint-1796030393000", 1 << 24).expect("file");
    let f = read_file("checkpoint-1796030393000", 1796030393000, false, &bytes[..bytes.len() - 30]);
    let u = f.content.expect_err("cut");
    assert_eq!((u.step, u.exception), ("codec", "java.io.EOFException"));
    // The same stream decompressed and cut inside the object graph: the serialization step.
    let data = crate::codec::decompress(&bytes, 1 << 26).expect("lz4");
    let u = read_file("c", 1, false, &data[..data.len() / 2]).content.expect_err("cut stream");
    assert_eq!((u.step, u.exception), ("serialization", "java.io.EOFException"));
    assert!(u.offset.is_some_and(|o| o <= data.len() as u64 / 2));
    // Whole and uncompressed, it reads.
    assert!(read_file("c", 1, false, &data).content.is_ok());
}

/// A crafted Checkpoint whose `jars` field holds an array of `n` objects, each of its own class (a long
/// class list and a wide graph for the class paths).
fn wide_checkpoint(n: u32) -> Vec<u8> {
    use crate::javaser::*;
    let mut b = STREAM_HEADER.to_vec();
    let utf = |b: &mut Vec<u8>, s: &str| {
        b.extend((s.len() as u16).to_be_bytes());
        b.extend(s.as_bytes());
    };
    b.extend([TC_OBJECT, TC_CLASSDESC]);
    utf(&mut b, super::walk::CHECKPOINT_CLASS);
    b.extend([0; 8]);
    b.extend([SC_SERIALIZABLE, 0, 1, b'[']);
    utf(&mut b, "jars");
    b.push(TC_STRING);
    utf(&mut b, "[Ljava/lang/Object;");
    b.extend([TC_ENDBLOCKDATA, TC_NULL]);
    // handles: 0 desc, 1 field type string, 2 the Checkpoint; then the array desc (3) and the array (4).
    b.extend([TC_ARRAY, TC_CLASSDESC]);
    utf(&mut b, "[Ljava.lang.Object;");
    b.extend([0; 8]);
    b.extend([SC_SERIALIZABLE, 0, 0, TC_ENDBLOCKDATA, TC_NULL]);
    b.extend(n.to_be_bytes());
    for i in 0..n {
        b.extend([TC_OBJECT, TC_CLASSDESC]);
        utf(&mut b, &format!("com.example.C{i}"));
        b.extend((i as i64).to_be_bytes());
        b.extend([SC_SERIALIZABLE, 0, 0, TC_ENDBLOCKDATA, TC_NULL]);
    }
    b
}

#[test]
fn a_crafted_checkpoint_with_many_classes_is_read_in_bounded_time() {
    let bytes = wide_checkpoint(100_000);
    let t = std::time::Instant::now();
    let f = super::read_file("checkpoint-1", 1, false, &bytes);
    let c = f.content.expect("reads");
    assert_eq!(c.classes.len(), 100_002);
    assert_eq!(c.classes.iter().filter(|k| k.path.is_some()).count(), 10_000, "paths are capped");
    assert!(t.elapsed() < std::time::Duration::from_secs(20), "took {:?}", t.elapsed());
    // Over the node limit: refused with an offset, not read without bound.
    let bytes = wide_checkpoint(600_000);
    let u = super::read_file("checkpoint-1", 1, false, &bytes).content.expect_err("too many nodes");
    assert_eq!(u.step, "serialization");
    assert!(u.reason.contains("more than"), "{}", u.reason);
}
