//! The inputs of the snapshot cases (`snapshots.rs`): real zips (shared fixtures, cases, code changes, this
//! crate's `tests/data/spark`), the error Spark printed on their recorded restart, and the small honest changes
//! of a real fixture that the cases make in memory.

use crate::archive::{Archive, Limits, MemArchive};
use crate::testutil::{fixture_record, fixtures_dir, open_fixture};
use crate::{Context, SparkVersion};
use std::path::PathBuf;

/// `--now` of every snapshot: 2026-12-01T00:00:00Z.
pub(super) const NOW_MS: i64 = 1_796_083_200_000;

pub(super) type Files = Vec<(String, Vec<u8>)>;

/// An input and what the user adds.
pub(super) struct Case {
    pub(super) files: Files,
    /// Last-modified times of the zip entries (ms since the epoch), kept as the zip recorded them.
    pub(super) times: Vec<(String, Option<i64>)>,
    /// A zip entry (path) whose content does not inflate, as [`crate::ArchiveError::Corrupt`] reports.
    pub(super) corrupt_entry: Option<String>,
    /// Run on a real zip of the files (deflated, then changed by this function) instead of in memory.
    pub(super) zip_patch: Option<fn(Vec<u8>) -> Vec<u8>>,
    pub(super) ctx: Context,
}

pub(super) fn shared(dir: &str) -> PathBuf {
    fixtures_dir().join("..").join(dir)
}

pub(super) fn read_all(z: &mut dyn Archive) -> Files {
    let paths: Vec<String> = z.entries().iter().filter(|e| !e.is_dir).map(|e| e.path.clone()).collect();
    paths.into_iter().map(|p| (p.clone(), z.read(&p, 1 << 30).expect("entry reads"))).collect()
}

pub(super) fn times_of(z: &dyn Archive) -> Vec<(String, Option<i64>)> {
    z.entries().iter().map(|e| (e.path.clone(), e.modified_ms)).collect()
}

pub(super) fn zip_at(path: PathBuf) -> (Files, Vec<(String, Option<i64>)>) {
    let f = std::fs::File::open(&path).expect("open zip");
    let len = f.metadata().expect("metadata").len();
    let mut z = crate::ZipInput::open(f, len, "case", Limits::default()).expect("zip opens");
    (read_all(&mut z), times_of(&z))
}

pub(super) fn fixture(name: &str) -> Files {
    read_all(&mut open_fixture(name))
}

pub(super) fn fixture_times(name: &str) -> Vec<(String, Option<i64>)> {
    times_of(&open_fixture(name))
}

pub(super) fn ctx(v: &str) -> Context {
    Context {
        spark_version: Some(v.parse::<SparkVersion>().expect("version")),
        now_ms: Some(NOW_MS),
        ..Default::default()
    }
}

/// The error text a user would paste for a fixture: Spark's recorded cause chain, as Java prints it.
pub(super) fn recorded_error(dir: &str, name: &str) -> String {
    let j: serde_json::Value = if dir == "fixtures" {
        fixture_record(name)
    } else {
        serde_json::from_slice(&std::fs::read(shared(dir).join(format!("{name}.json"))).expect("record"))
            .expect("record parses")
    };
    error_of(&j)
}

/// Spark's recorded cause chain of a record, as Java prints it.
pub(super) fn error_of(j: &serde_json::Value) -> String {
    let ro = &j["restart_outcome"];
    let mut out = String::new();
    for (i, c) in ro["cause_chain"].as_array().into_iter().flatten().enumerate() {
        if i > 0 {
            out.push_str("Caused by: ");
        }
        out.push_str(&format!("{}: {}\n", c["class"].as_str().unwrap_or(""), c["message_head"].as_str().unwrap_or("")));
    }
    if out.is_empty() {
        out = format!("{}: {}\n", ro["exception"].as_str().unwrap_or(""), ro["message_head"].as_str().unwrap_or(""));
    }
    out
}

pub(super) fn plain(files: Files, v: &str) -> Case {
    Case { files, times: Vec::new(), corrupt_entry: None, zip_patch: None, ctx: ctx(v) }
}

/// A fixture as it is, with the zip's entry times.
pub(super) fn timed(name: &str, v: &str) -> Case {
    Case { times: fixture_times(name), ..plain(fixture(name), v) }
}

pub(super) fn with_error(dir: &str, name: &str, v: &str) -> Case {
    let (files, times) = if dir == "fixtures" {
        (fixture(name), fixture_times(name))
    } else {
        zip_at(shared(dir).join(format!("{name}.zip")))
    };
    let mut c = Case { times, ..plain(files, v) };
    c.ctx.error_text = Some(recorded_error(dir, name));
    c
}

/// A real checkpoint of `tools/spark-gen` (`tests/data/spark/<name>.zip`, the checkpoint before its recorded
/// restart), with the zip's entry times.
pub(super) fn spark_gen(name: &str, v: &str) -> Case {
    let (files, times) = zip_at(crate::testutil::generated_dir().join(format!("{name}.zip")));
    Case { times, ..plain(files, v) }
}

/// [`spark_gen`] with the error text Spark printed on the recorded restart pasted.
pub(super) fn spark_data(name: &str, v: &str) -> Case {
    let mut c = spark_gen(name, v);
    c.ctx.error_text = Some(error_of(&crate::testutil::generated_record(name)));
    c
}

/// `tools/spark-gen/source_path.py`'s real checkpoint (batch 0 read `in-a/`) with the path of its recorded
/// restart given: the sibling folder `in-b/`.
pub(super) fn source_path_changed() -> Case {
    let mut c = spark_gen("source-path-changed-4.1.4", "4.1.4");
    let log = text_of(&c.files, "chk/sources/0/0");
    let first = log.lines().nth(1).expect("an entry");
    let path: serde_json::Value = serde_json::from_str(first).expect("entry parses");
    let file = super::source_path::normalize(path["path"].as_str().expect("path"));
    let in_a = file.rsplit_once('/').expect("folder").0;
    let in_b = format!("{}/in-b", in_a.rsplit_once('/').expect("parent").0);
    c.ctx.source_paths.insert(0, in_b);
    c
}

/// A shared case (`../shared/cases/<name>`) with its error text, if it has one.
pub(super) fn shared_case(name: &str) -> Case {
    let (files, times) = zip_at(shared("cases").join(format!("{name}.zip")));
    let mut c = Case { times, ..plain(files, "4.3.0") };
    c.ctx.error_text = std::fs::read_to_string(shared("cases").join(format!("{name}.error.txt"))).ok();
    c
}

pub(super) fn text_of(files: &Files, path: &str) -> String {
    String::from_utf8(files.iter().find(|(p, _)| p == path).expect("file").1.clone()).expect("utf8")
}

/// Replaces a file's content and drops its Hadoop sidecar (the change is in the file itself).
pub(super) fn put(files: &mut Files, path: &str, content: Vec<u8>) {
    let (dir, name) = path.rsplit_once('/').unwrap_or(("", path));
    let crc = if dir.is_empty() { format!(".{name}.crc") } else { format!("{dir}/.{name}.crc") };
    files.retain(|(p, _)| *p != crc && p != path);
    files.push((path.to_string(), content));
}

pub(super) fn remove(files: &mut Files, path: &str) {
    let (dir, name) = path.rsplit_once('/').unwrap_or(("", path));
    let crc = if dir.is_empty() { format!(".{name}.crc") } else { format!("{dir}/.{name}.crc") };
    files.retain(|(p, _)| *p != crc && p != path);
}

/// A shared Delta case: its checkpoint, and (with `log`) its `.delta_log.zip` read as `--delta-log` reads it,
/// changed by `change` first; Spark 3.5.7 (the Delta cases' version).
pub(super) fn delta_case(name: &str, log: bool, change: impl FnOnce(&mut Files, &mut Files)) -> Case {
    let (mut files, times) = zip_at(shared("cases").join(format!("{name}.zip")));
    let (mut log_files, _) =
        if log { zip_at(shared("cases").join(format!("{name}.delta_log.zip"))) } else { (Vec::new(), Vec::new()) };
    change(&mut files, &mut log_files);
    let mut c = Case { times, ..plain(files, "3.5.7") };
    if log {
        let mut mem = MemArchive::new("delta_log.zip", log_files, Limits::default()).expect("log archive");
        c.ctx.delta_logs = crate::delta::reader::read_delta_logs(&mut mem);
    }
    c
}

/// `ss-4.3.0-agg-hdfs` (a real 4.3.0 windowed aggregation, HDFS state, batches 0..=11) changed by `f`.
pub(super) fn agg(f: impl FnOnce(&mut Files)) -> Case {
    let mut c = timed("ss-4.3.0-agg-hdfs", "4.3.0");
    f(&mut c.files);
    c
}

/// Rewrites one key's value in an offsets file's metadata line.
pub(super) fn edit_offsets(files: &mut Files, path: &str, from: &str, to: &str) {
    let t = text_of(files, path);
    assert!(t.contains(from), "{path} holds {from}");
    put(files, path, t.replacen(from, to, 1).into_bytes());
}

pub(super) fn watermark_of(files: &Files, batch: i64) -> String {
    let t = text_of(files, &format!("offsets/{batch}"));
    let i = t.find("\"batchWatermarkMs\":").expect("watermark") + "\"batchWatermarkMs\":".len();
    t[i..].chars().take_while(|c| c.is_ascii_digit()).collect()
}

/// Marks the key row of the first record of partition 0's first chain file null in field 0 although its
/// slot is set (the file re-framed as Spark's lz4 codec frames it).
pub(super) fn with_bad_key_row(files: &mut Files) {
    let mut a = MemArchive::new("t", files.clone(), Limits::default()).expect("archive");
    let roots = crate::layout::find_roots(a.entries());
    let opts =
        crate::read::ReadOptions { verify_state: false, check_rows: false, budget_bytes: 0, ..Default::default() };
    let cp = crate::read::read_checkpoint_with(&mut a, &roots[0], &opts);
    let version = cp.restart_version().expect("restart version");
    let chain = &cp.restart_chains[&(0, 0, "default".to_string())].chain;
    assert_eq!(chain.version, version);
    let path = chain.steps.first().expect("chain").path.clone();
    let e = files.iter_mut().find(|(p, _)| *p == path).expect("chain file");
    let mut data = crate::codec::decompress(&e.1, 1 << 30).expect("decompresses");
    data[4] |= 1;
    e.1 = crate::codec::write::lz4_block_stream(&data, 32 * 1024);
    let (dir, name) = path.rsplit_once('/').expect("dir");
    files.retain(|(p, _)| *p != format!("{dir}/.{name}.crc"));
}

/// `case-04-kafka-topic-recreated.kafka_earliest.json`.
pub(super) const KAFKA_EARLIEST_04: &str = r#"{"payments-events":{"0":0,"1":0}}"#;

/// Shared case 04 (a real Kafka offset log: payments-events partitions 0 and 1 at 500 and 480), without its
/// pasted error unless the brokers' view is its own (`KAFKA_EARLIEST_04`), with the brokers' earliest and
/// latest offsets a user would paste (`kafka-get-offsets.sh` lines or Spark's JSON).
pub(super) fn kafka_case(v: &str, earliest: Option<&str>, latest: Option<&str>) -> Case {
    let mut c = shared_case("case-04-kafka-topic-recreated");
    c.ctx.spark_version = Some(v.parse().expect("version"));
    if earliest != Some(KAFKA_EARLIEST_04) {
        c.ctx.error_text = None;
    }
    let parse = |t: &str| crate::kafka_offsets::parse(t).expect("brokers' offsets");
    c.ctx.kafka_earliest = earliest.map(parse);
    c.ctx.kafka_latest = latest.map(parse);
    c
}

/// `ss-4.3.0-stateless` (a real file source stream) with its source made an Auto Loader one: the source
/// line of every offsets file becomes Auto Loader's offset shape (FORMATS.md §19.2), `sources/0/` a
/// `rocksdb/` store (stand-in bytes: the format is not public and only names and sizes are read), and two
/// schema versions in the documented `_schemas/<n>` shape; optionally with a pasted error.
pub(super) fn autoloader(error: Option<&str>) -> Case {
    let mut files = fixture("ss-4.3.0-stateless");
    let offsets: Vec<String> =
        files.iter().map(|(p, _)| p.clone()).filter(|p| p.starts_with("offsets/") && !p.contains(".crc")).collect();
    for (n, p) in offsets.iter().enumerate() {
        let t = text_of(&files, p);
        let (head, _) = t.rsplit_once('\n').expect("source line");
        let line = format!("{{\"seqNum\":{n},\"sourceVersion\":1,\"lastBackfillStartTimeMs\":1796000000000,\"lastBackfillFinishTimeMs\":1796000005000}}");
        put(&mut files, p, format!("{head}\n{line}").into_bytes());
    }
    files.retain(|(p, _)| !p.starts_with("sources/"));
    let stand_in = fixture("ss-4.3.0-agg-rocksdb");
    for (p, b) in stand_in.iter().filter(|(p, _)| p == "state/0/0/12.zip" || p == "state/0/0/11.zip") {
        files.push((p.replacen("state/0/0/", "sources/0/rocksdb/", 1), b.clone()));
    }
    let schema = |cols: &[&str]| {
        let fields: Vec<String> = cols
            .iter()
            .map(|c| format!("{{\\\"name\\\":\\\"{c}\\\",\\\"type\\\":\\\"string\\\",\\\"nullable\\\":true,\\\"metadata\\\":{{}}}}"))
            .collect();
        format!(
            "v1\n{{\"dataSchemaJson\":\"{{\\\"type\\\":\\\"struct\\\",\\\"fields\\\":[{}]}}\",\"partitionSchemaJson\":\"{{\\\"type\\\":\\\"struct\\\",\\\"fields\\\":[]}}\"}}",
            fields.join(",")
        )
        .into_bytes()
    };
    files.push(("_schemas/0".into(), schema(&["id", "amount"])));
    files.push(("_schemas/1".into(), schema(&["id", "amount", "country"])));
    let mut c = plain(files, "4.3.0");
    c.ctx.error_text = error.map(str::to_string);
    c
}

/// A real DStream checkpoint of `../shared/dstream` (Spark 3.5.9), for the restart version `v`.
pub(super) fn dstream(name: &str, v: &str) -> Case {
    let (files, times) = zip_at(shared("dstream").join(format!("{name}.zip")));
    Case { times, ..plain(files, v) }
}

/// Rewrites the Java serialization stream inside a DStream checkpoint file (re-framed as Spark's lz4
/// codec frames it, 32 KiB blocks) and drops its Hadoop sidecar.
pub(super) fn restream(files: &mut Files, path: &str, f: impl FnOnce(&mut Vec<u8>)) {
    let raw = files.iter().find(|(p, _)| p == path).expect("checkpoint file").1.clone();
    let mut data = crate::codec::decompress(&raw, 1 << 30).expect("decompresses");
    f(&mut data);
    put(files, path, crate::codec::write::lz4_block_stream(&data, 32 * 1024));
}

/// Renames the class descriptor `from` to `to` in a serialization stream (its u16 length rewritten).
pub(super) fn rename_class(data: &mut Vec<u8>, from: &str, to: &str) {
    let mut pat = vec![crate::javaser::TC_CLASSDESC];
    pat.extend_from_slice(&(from.len() as u16).to_be_bytes());
    pat.extend_from_slice(from.as_bytes());
    let i = data.windows(pat.len()).position(|w| w == pat.as_slice()).expect("class descriptor");
    let mut new = vec![crate::javaser::TC_CLASSDESC];
    new.extend_from_slice(&(to.len() as u16).to_be_bytes());
    new.extend_from_slice(to.as_bytes());
    data.splice(i..i + pat.len(), new);
}
