//! CLI `state`: Spark's statestore / state-metadata rows for the fixtures that have Spark's own output, errors
//! naming the file for damaged ones.

mod common;
use common::*;

use serde_json::Value;

fn lines(bytes: &[u8]) -> Vec<Value> {
    String::from_utf8_lossy(bytes).lines().map(|l| serde_json::from_str(l).unwrap()).collect()
}

/// Canonical text: object keys sorted at every level.
fn sorted(v: &Value) -> String {
    match v {
        Value::Object(m) => {
            let mut parts: Vec<String> = m.iter().map(|(k, v)| format!("{k:?}:{}", sorted(v))).collect();
            parts.sort();
            format!("{{{}}}", parts.join(","))
        }
        Value::Array(a) => format!("[{}]", a.iter().map(sorted).collect::<Vec<_>>().join(",")),
        other => other.to_string(),
    }
}

/// Rows without the tags Spark's dump added, as sorted canonical text.
fn canon(rows: &[Value]) -> Vec<String> {
    let mut v: Vec<String> =
        rows.iter().map(|r| format!("{}|{}|{}", sorted(&r["key"]), sorted(&r["value"]), r["partition_id"])).collect();
    v.sort();
    v
}

fn golden(name: &str) -> Vec<Value> {
    let text = std::fs::read_to_string(fixtures().join(name)).unwrap();
    text.lines().filter(|l| !l.trim().is_empty()).map(|l| serde_json::from_str(l).unwrap()).collect()
}

#[test]
fn state_rows_equal_sparks_for_an_hdfs_aggregation() {
    let zip = fixtures().join("ss-4.3.0-agg-hdfs.zip");
    let out = bin().args(["state", zip.to_str().unwrap(), "--json"]).output().unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    assert_eq!(canon(&lines(&out.stdout)), canon(&golden("ss-4.3.0-agg-hdfs.state.jsonl")));
    // One partition only.
    let out = bin().args(["state", zip.to_str().unwrap(), "--partition", "1"]).output().unwrap();
    let rows = lines(&out.stdout);
    assert!(!rows.is_empty() && rows.iter().all(|r| r["partition_id"] == 1));
}

#[test]
fn join_side_and_store_options() {
    let zip = fixtures().join("ss-4.3.0-join.zip");
    let out = bin().args(["state", zip.to_str().unwrap(), "--join-side", "left"]).output().unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    assert_eq!(canon(&lines(&out.stdout)), canon(&golden("ss-4.3.0-join.state-joinside-left.jsonl")));
    let out = bin().args(["state", zip.to_str().unwrap(), "--store", "right-keyToNumValues"]).output().unwrap();
    let want: Vec<Value> =
        golden("ss-4.3.0-join.state.jsonl").into_iter().filter(|r| r["storeName"] == "right-keyToNumValues").collect();
    assert_eq!(canon(&lines(&out.stdout)), canon(&want));
}

#[test]
fn metadata_view() {
    let zip = fixtures().join("ss-4.3.0-join.zip");
    let out = bin().args(["state", zip.to_str().unwrap(), "--metadata"]).output().unwrap();
    assert_eq!(out.status.code(), Some(0));
    let mut ours: Vec<String> = lines(&out.stdout).iter().map(|v| v.to_string()).collect();
    let mut want: Vec<String> = golden("ss-4.3.0-join.state-metadata.jsonl").iter().map(|v| v.to_string()).collect();
    ours.sort();
    want.sort();
    assert_eq!(ours, want);
    assert!(out.stderr.is_empty(), "{}", String::from_utf8_lossy(&out.stderr));
    // A Spark 3.5 checkpoint has no operator metadata: its rows come from the folders, and the note says that
    // Spark's state-metadata source returns none (real 4.1.4 reads of 3.5.9 checkpoints gave no row).
    let zip = fixtures().join("ss-3.5.9-join.zip");
    let out = bin().args(["state", zip.to_str().unwrap(), "--metadata"]).output().unwrap();
    assert_eq!(out.status.code(), Some(0));
    assert!(!lines(&out.stdout).is_empty());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("no operator metadata for operator(s) 0 (state/0/_metadata") && err.contains("no row at all"),
        "{err}"
    );
}

#[test]
fn damaged_state_exits_1_naming_the_file() {
    let zip = fixtures().join("broken-ss-4.1.4-missing-delta.zip");
    let out = bin().args(["state", zip.to_str().unwrap()]).output().unwrap();
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(err.trim().lines().count(), 1, "{err}");
    assert!(err.contains("state/0/1/7.delta") && err.contains("CANNOT_READ_DELTA_FILE_NOT_EXISTS"), "{err}");
    // Rows are streamed: those of the partitions before the damaged one (partition 0) are already printed, each a
    // whole JSON line; none of the damaged partition.
    let printed = lines(&out.stdout);
    assert!(printed.iter().all(|r| r["partition_id"] == 0), "{printed:?}");
    let out = bin().args(["state", "/nonexistent/x.zip"]).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
}

#[test]
fn transform_with_state_options() {
    let zip = fixtures().join("ss-4.3.0-tws-pandas.zip");
    let p = zip.to_str().unwrap();
    // A value state reads the same flattened or not (flattenCollectionTypes only reshapes lists and maps).
    let want: Vec<Value> = golden("ss-4.3.0-tws-pandas.state.jsonl");
    for flatten in ["true", "false"] {
        let out = bin().args(["state", p, "--state-var", "cnt", "--flatten-collections", flatten]).output().unwrap();
        assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
        assert_eq!(canon(&lines(&out.stdout)), canon(&want));
    }
    // No timers in time mode None (Spark's error), and the two options conflict.
    let out = bin().args(["state", p, "--read-timers"]).output().unwrap();
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("TimeMode=None") && err.contains("STDS_INVALID_OPTION_VALUE"), "{err}");
    let out = bin().args(["state", p, "--read-timers", "--state-var", "cnt"]).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    // A transformWithState operator needs a state variable.
    let out = bin().args(["state", p]).output().unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("STDS_REQUIRED_OPTION_UNSPECIFIED"));
}

/// What the core's one-thread read gives for `state <zip> [--operator op --store store]`: the lines, and the
/// error line the CLI prints on stderr.
fn one_thread_read(zip: &std::path::Path, op: i64, store: &str) -> (String, Option<String>) {
    use checkpoint_core::state::{self, StateQuery};
    use checkpoint_core::{Archive, Limits, ZipInput};
    let f = std::fs::File::open(zip).unwrap();
    let len = f.metadata().unwrap().len();
    let mut a = ZipInput::open(std::io::BufReader::new(f), len, "z", Limits::default()).unwrap();
    let root = state::find_state_roots(&mut a as &mut dyn Archive).into_iter().next().unwrap_or_default();
    let q = StateQuery { operator_id: op, store_name: store.to_string(), ..StateQuery::default() };
    let mut text = String::new();
    let res = state::read_state_text_each(&mut a, &root, &q, &state::StateLimits::default(), &mut |line| {
        text.push_str(line);
        text.push('\n');
        std::ops::ControlFlow::Continue(())
    });
    (text, res.err().map(|e| format!("checkpoint-inspector: {e}")))
}

/// `state` prints a plain store on two threads (one loads the next partition while the other writes the rows of
/// the one before): byte for byte the one-thread read's rows, and its error, for every shared fixture with state,
/// a checkpoint whose delta is missing (a load error after a partition's rows) and one whose row does not decode
/// (an error in the middle of the writes). (The errors are shorter than the 1,000 characters the CLI clips to.)
#[test]
fn two_thread_state_prints_what_the_one_thread_read_gives() {
    let mut zips: Vec<std::path::PathBuf> = std::fs::read_dir(fixtures())
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "zip"))
        .collect();
    zips.sort();
    let bad_row = bad_row_zip();
    zips.push(bad_row.clone());
    let (mut rows, mut errors) = (0, 0);
    for zip in &zips {
        let (want, want_err) = one_thread_read(zip, 0, "default");
        let out = bin().args(["state", zip.to_str().unwrap()]).output().unwrap();
        let name = zip.display();
        assert!(String::from_utf8_lossy(&out.stdout) == want, "{name}: stdout differs");
        match &want_err {
            None => assert_eq!(out.status.code(), Some(0), "{name}: {}", String::from_utf8_lossy(&out.stderr)),
            Some(e) => {
                assert_eq!(out.status.code(), Some(1), "{name}");
                assert_eq!(String::from_utf8_lossy(&out.stderr).trim_end(), e.as_str(), "{name}");
                errors += 1;
            }
        }
        rows += want.lines().count();
    }
    assert!(rows > 300 && errors >= 2, "{rows} rows, {errors} errors");
    // The missing delta: partition 0's rows, then the load error of partition 1.
    let (want, err) = one_thread_read(&fixture("broken-ss-4.1.4-missing-delta.zip"), 0, "default");
    assert!(!want.is_empty() && err.is_some_and(|e| e.contains("CANNOT_READ_DELTA_FILE_NOT_EXISTS")));
    // The row that does not decode: partition 0's rows, then its error naming the file and the record's offset.
    let (want, err) = one_thread_read(&bad_row, 0, "default");
    let err = err.unwrap_or_default();
    assert!(!want.is_empty() && want.lines().all(|l| l.ends_with(r#""partition_id":0}"#)), "{want}");
    assert!(err.contains("KEY_ROW_FORMAT_VALIDATION_FAILURE") && err.contains("state/0/1/"), "{err}");
    // Partition 2 alone fails to load.
    let out = bin().args(["state", bad_row.to_str().unwrap(), "--partition", "2"]).output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.code() == Some(1) && err.contains("state/0/2/"), "{err}");
    let _ = std::fs::remove_dir_all(bad_row.parent().unwrap());
}

/// `ss-4.3.0-agg-hdfs.zip` with the first put of partition 1's newest state file pointing its key's
/// variable-length fields far outside the row (the framing rewritten as lz4-java writes it), and partition 2's
/// newest state file gone: the row's error comes first, as in the one-thread read (which writes partition 1
/// before it reads partition 2; the two-thread read has partition 2 loaded by then).
fn bad_row_zip() -> std::path::PathBuf {
    use std::io::{Read, Write};
    let src = fixture("ss-4.3.0-agg-hdfs.zip");
    let mut z = zip::ZipArchive::new(std::fs::File::open(&src).unwrap()).unwrap();
    let mut files: Vec<(String, Vec<u8>)> = Vec::new();
    for i in 0..z.len() {
        let mut f = z.by_index(i).unwrap();
        let mut b = Vec::new();
        f.read_to_end(&mut b).unwrap();
        files.push((f.name().unwrap().to_string(), b));
    }
    let newest_of = |files: &[(String, Vec<u8>)], partition: u32| -> String {
        let version = |p: &str| -> Option<u64> {
            let name = p.strip_prefix(&format!("state/0/{partition}/"))?;
            let (v, ext) = name.split_once('.')?;
            matches!(ext, "delta" | "snapshot").then(|| v.parse().ok()).flatten()
        };
        files.iter().filter_map(|(p, _)| version(p).map(|v| (v, p.clone()))).max().expect("the partition's files").1
    };
    // Both files of partition 2's newest version (its delta and its snapshot).
    let gone = newest_of(&files, 2);
    let gone_version =
        gone.rsplit_once('/').and_then(|(dir, name)| Some(format!("{dir}/{}.", name.split_once('.')?.0)));
    files.retain(|(p, _)| gone_version.as_ref().is_none_or(|v| !p.starts_with(v.as_str())));
    let newest = newest_of(&files, 1);
    let (_, bytes) = files.iter_mut().find(|(p, _)| *p == newest).unwrap();
    let mut data = checkpoint_core::codec::decompress(bytes, 1 << 26).unwrap();
    // The first record: key size (big-endian i32) at 0, the key's UnsafeRow from 4 (bitset, then its slots).
    let ksize = i32::from_be_bytes(data[0..4].try_into().unwrap()) as usize;
    assert!(ksize >= 24, "{newest}: the first record has a key with slots");
    for slot in (4 + 8..4 + ksize).step_by(8).take(2) {
        data[slot + 4..slot + 8].copy_from_slice(&0x7FFF_0000u32.to_le_bytes());
    }
    *bytes = checkpoint_core::codec::write::lz4_block_stream(&data, 32 * 1024);
    let dir = tmp("state", "bad-row");
    let out = dir.join("bad-row.zip");
    let mut w = zip::ZipWriter::new(std::fs::File::create(&out).unwrap());
    for (p, b) in &files {
        w.start_file(p.as_str(), zip::write::SimpleFileOptions::default()).unwrap();
        w.write_all(b).unwrap();
    }
    w.finish().unwrap();
    out
}

/// A --root that does not exist (or holds no state/) is an error naming it, for the rows and the metadata view
/// alike, not an empty answer with exit 0 (found by the breaker run); the right root still works, with or without
/// a trailing `/`.
#[test]
fn unknown_root_is_an_error_naming_it() {
    let zip = fixtures().join("ss-4.3.0-join.zip");
    for extra in [&["--metadata"][..], &[][..]] {
        let out = bin().args(["state", zip.to_str().unwrap(), "--root", "x/y/z"]).args(extra).output().unwrap();
        assert_eq!(out.status.code(), Some(1), "{extra:?}");
        assert!(out.stdout.is_empty(), "{extra:?}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains("\"x/y/z\"") && err.contains("the archive top"), "{err}");
    }
    let out = bin().args(["state", zip.to_str().unwrap(), "--root", "", "--metadata"]).output().unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(!out.stdout.is_empty());
}

/// `state` prints Spark's own `toJSON` text, byte for byte, on real Spark 4.1.4 checkpoints (HDFS and RocksDB)
/// whose rows hold the numbers easiest to print wrong: decimals as Java's BigDecimal.toString (`3.00`, `0E-10`,
/// `1.00E-8`, 31 digits), doubles as Double.toString (`1.0E-300`), repeated field names, escapes, non-ASCII
/// (`tools/spark-gen/state_tojson.py`; its `.rows.jsonl` is Spark's `statestore` read of the checkpoint).
#[test]
fn state_text_is_sparks_to_json_byte_for_byte() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../checkpoint-core/tests/data/spark");
    for provider in ["hdfs", "rocksdb"] {
        let name = format!("state-tojson-{provider}-4.1.4");
        let zip = dir.join(format!("{name}.zip"));
        let out = bin().args(["state", zip.to_str().unwrap()]).output().unwrap();
        assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
        let mut ours: Vec<String> = String::from_utf8(out.stdout).unwrap().lines().map(str::to_string).collect();
        ours.sort();
        let text = std::fs::read_to_string(dir.join(format!("{name}.rows.jsonl"))).unwrap();
        let mut spark: Vec<String> = text.lines().map(str::to_string).collect();
        spark.sort();
        assert_eq!(ours.len(), 18, "{name}");
        for (a, b) in ours.iter().zip(&spark) {
            assert_eq!(a, b, "{name}");
        }
        assert_eq!(ours, spark, "{name}");
        for shape in ["3.00", "0E-10", "1.00E-8", "1.0E-300", "100000000000000000003.0000000007"] {
            assert!(text.contains(&format!(":{shape}")), "{name}: Spark's rows have {shape}");
        }
        // Maps (`first` of a map in the buffer): keys as the internal value's toString (a date's day number,
        // Double.toString, BigDecimal.toString), values as the fields' numbers.
        for shape in [r#"{"0.00":1.0E-300}"#, r#"{"1.0E-300":[4,null,2]}"#, r#""10957":null}"#, r#""fl":0E-10}"#] {
            assert!(text.contains(shape), "{name}: Spark's rows have {shape}");
        }
    }
}
