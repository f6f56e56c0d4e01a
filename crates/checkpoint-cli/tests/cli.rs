//! CLI integration: exit codes and messages of `checkpoint-inspector diagnose` on hostile and real input.

mod common;
use common::*;

use std::io::Write;
use std::path::PathBuf;
use std::time::{Duration, Instant};

#[test]
fn zip_bomb_entry_is_named_not_inflated_fast() {
    let dir = tmp("cli", "bomb");
    let p = dir.join("bomb.zip");
    let mut w = zip::ZipWriter::new(std::io::Cursor::new(Vec::new()));
    let opts =
        zip::write::SimpleFileOptions::default().compression_method(zip::CompressionMethod::Deflated).large_file(true);
    w.start_file("offsets/0", opts).unwrap();
    let chunk = vec![0u8; 1 << 20];
    for _ in 0..200 {
        w.write_all(&chunk).unwrap();
    }
    let bytes = w.finish().unwrap().into_inner();
    std::fs::write(&p, &bytes).unwrap();
    let t = Instant::now();
    let out = bin().args(["diagnose", p.to_str().unwrap(), "--json"]).output().unwrap();
    let took = t.elapsed();
    // Issue 12: one bomb entry no longer refuses the whole archive; it is listed, not inflated, and named as
    // not verified (a limit of this tool), and the rest is diagnosed.
    assert_eq!(out.status.code(), Some(1), "{:?}", out);
    let j: serde_json::Value = serde_json::from_slice(&out.stdout).expect("json report");
    let findings = j["checkpoints"][0]["findings"].as_array().expect("findings");
    let f = findings.iter().find(|f| f["code"] == "file-not-verified").expect("file-not-verified");
    assert_eq!(f["evidence"][0]["path"], "offsets/0");
    assert!(f["evidence"][0]["detail"].as_str().unwrap().contains("over the limit"), "{f}");
    assert_eq!(j["checkpoints"][0]["restart"]["outcome"], "fails", "metadata is missing: Spark fails before");
    assert!(took < Duration::from_millis(900), "took {took:?}");
}

#[test]
fn non_zip_and_empty_exit_2() {
    let dir = tmp("cli", "nonzip");
    let p = dir.join("notes.zip");
    std::fs::write(&p, b"this is not a zip file at all").unwrap();
    let t = Instant::now();
    let out = bin().args(["diagnose", p.to_str().unwrap()]).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(err.trim().lines().count(), 1, "{err}");
    assert!(err.contains("not a zip"), "{err}");
    assert!(t.elapsed() < Duration::from_millis(900));
    let e = dir.join("empty.zip");
    std::fs::write(&e, b"").unwrap();
    let out = bin().args(["diagnose", e.to_str().unwrap()]).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("empty"));
    let out = bin().args(["diagnose", dir.join("missing.zip").to_str().unwrap()]).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
}

#[test]
fn exit_1_on_error_finding_and_0_when_healthy() {
    let out = bin()
        .args([
            "diagnose",
            fixture("broken-ss-4.3.0-missing-delta-join.zip").to_str().unwrap(),
            "--json",
            "--spark-version",
            "4.3.0",
        ])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let cp = &v["checkpoints"][0];
    assert_eq!(cp["restart"]["outcome"], "fails");
    assert_eq!(cp["restart"]["error_class"], "CANNOT_LOAD_STATE_STORE.CANNOT_READ_DELTA_FILE_NOT_EXISTS");
    assert!(cp["findings"].as_array().unwrap().iter().any(|f| f["severity"] == "error"
        && f["evidence"]
            .as_array()
            .unwrap()
            .iter()
            .any(|e| e["path"] == "state/0/1/left-keyWithIndexToValue/6.delta")));
    let out = bin().args(["diagnose", fixture("ss-4.3.0-agg-hdfs.zip").to_str().unwrap()]).output().unwrap();
    assert_eq!(out.status.code(), Some(0));
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("WILL RESTART"), "{text}");
    assert!(!text.contains('\u{1b}'), "no colour when not a terminal");
}

#[test]
fn directory_input_and_context_options() {
    // Unpack a fixture into a directory and diagnose that, with every context option.
    let dir = tmp("cli", "dir");
    let f = std::fs::File::open(fixture("broken-ss-4.3.0-missing-metadata.zip")).unwrap();
    let mut z = zip::ZipArchive::new(f).unwrap();
    z.extract(dir.join("chk")).unwrap();
    let err = dir.join("err.txt");
    std::fs::write(&err, "org.apache.spark.SparkRuntimeException: [STREAMING_CHECKPOINT_MISSING_METADATA_FILE] Checkpoint location is in an inconsistent state").unwrap();
    let out = bin()
        .args([
            "diagnose",
            dir.join("chk").to_str().unwrap(),
            "--json",
            "--spark-version",
            "4.3.0",
            "--now",
            "2026-11-30T00:00:00Z",
            "--error-text",
            err.to_str().unwrap(),
            "--conf",
            "spark.sql.shuffle.partitions=5",
            "--kafka-earliest",
            "{\"t\":{\"0\":1}}",
        ])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1), "{}", String::from_utf8_lossy(&out.stderr));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let cp = &v["checkpoints"][0];
    assert_eq!(cp["restart"]["error_class"], "STREAMING_CHECKPOINT_MISSING_METADATA_FILE");
    assert_eq!(cp["findings"][0]["explains_error_text"], true);
    assert!(cp["forced_conf"]
        .as_array()
        .unwrap()
        .iter()
        .any(|f| f["key"] == "spark.sql.shuffle.partitions" && f["session"] == "5"));
    let out = bin().args(["diagnose", "x.zip", "--spark-version", "banana"]).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
}

#[test]
fn the_assumed_spark_version_is_said_next_to_the_verdict() {
    let zip = fixture("ss-4.1.4-agg-hdfs.zip");
    let out = bin().args(["diagnose", zip.to_str().unwrap()]).output().unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    let lines: Vec<&str> = text.lines().collect();
    let i = lines
        .iter()
        .position(|l| l.starts_with("WILL RESTART") && l.ends_with("on Spark 4.3.0"))
        .expect("verdict line");
    assert!(lines[i + 1].contains("assumed Spark 4.3.0 (newest known"), "{text}");
    assert!(lines[i + 1].contains("pass --spark-version"), "{text}");
    assert_eq!(text.matches("assumed Spark 4.3.0").count(), 1, "said once: {text}");
    let out = bin().args(["diagnose", zip.to_str().unwrap(), "--json"]).output().unwrap();
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let summary = v["checkpoints"][0]["restart"]["summary"].as_str().unwrap();
    assert!(summary.contains("assumed Spark 4.3.0 (newest known"), "{summary}");
    // Given a version: no assumption.
    let out = bin().args(["diagnose", zip.to_str().unwrap(), "--json", "--spark-version", "4.1.4"]).output().unwrap();
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert!(v["checkpoints"][0]["restart"].get("assumption").is_none());
    assert!(!v["checkpoints"][0]["restart"]["summary"].as_str().unwrap().contains("assumed"));
}

#[test]
fn evidence_shows_the_file_size_apart_from_the_reason() {
    let out = bin()
        .args(["diagnose", fixture("broken-ss-3.5.9-truncated-last-offsets.zip").to_str().unwrap()])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    let ev = text.lines().find(|l| l.trim_start().starts_with("evidence: offsets/")).expect("evidence line");
    assert!(!ev.contains("bytes;") && !ev.contains(" @ byte"), "{ev}");
    assert!(ev.contains(" bytes), byte "), "{ev}");
}

/// `diagnose --share-link`: one line on stdout, the link; the core decodes it to the redacted report.
#[test]
fn share_link_prints_a_redacted_link() {
    let zip = fixture("broken-ss-4.1.4-missing-delta.zip");
    let json_out = bin().args(["diagnose", zip.to_str().unwrap(), "--json", "--now", "0"]).output().unwrap();
    let report: serde_json::Value = serde_json::from_slice(&json_out.stdout).unwrap();
    let query_id = report["checkpoints"][0]["query_id"].as_str().unwrap().to_string();

    let run = |extra: &[&str]| {
        let mut args = vec!["diagnose", zip.to_str().unwrap(), "--now", "0", "--share-link"];
        args.extend_from_slice(extra);
        bin().env_remove("CHECKPOINT_INSPECTOR_BASE").args(&args).output().unwrap()
    };
    let out = run(&["--base", "https://team.example/inspector/"]);
    // Same exit status as the diagnosis: 1, the fixture has an error finding (a CI job can post the link).
    assert_eq!(out.status.code(), json_out.status.code());
    let stdout = String::from_utf8(out.stdout).unwrap();
    assert_eq!(stdout.lines().count(), 1, "{stdout}");
    let link = stdout.trim();
    assert!(link.starts_with("https://team.example/inspector/#report=1."), "{link}");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("bytes of fragment (budget 16384)") && err.contains("ids"), "{err}");
    let opened = checkpoint_core::share::open_fragment(link).unwrap();
    let text = opened.report.to_string();
    assert!(!text.contains(&query_id) && !text.contains("missing-delta"), "{text}");
    assert_eq!(opened.report["checkpoints"][0]["restart"], report["checkpoints"][0]["restart"]);
    // Deterministic: the same input gives the same link.
    assert_eq!(String::from_utf8(run(&["--base", "https://team.example/inspector/"]).stdout).unwrap(), stdout);

    // No base: the relative fragment alone; the environment variable gives a default base.
    let rel = String::from_utf8(run(&[]).stdout).unwrap();
    assert!(rel.starts_with("#report=1."), "{rel}");
    let env = bin()
        .env("CHECKPOINT_INSPECTOR_BASE", "https://ci.example/i/")
        .args(["diagnose", zip.to_str().unwrap(), "--now", "0", "--share-link"])
        .output()
        .unwrap();
    assert!(String::from_utf8(env.stdout).unwrap().starts_with("https://ci.example/i/#report=1."));

    // --no-redact ids keeps the query id (and only that category is off).
    let kept = String::from_utf8(run(&["--no-redact", "ids"]).stdout).unwrap();
    let opened = checkpoint_core::share::open_fragment(kept.trim()).unwrap();
    assert!(opened.report.to_string().contains(&query_id));
    assert!(!opened.redacted.contains(&"ids".to_string()) && opened.redacted.contains(&"paths".to_string()));

    // Wrong uses exit 2 with one line.
    let bad = run(&["--no-redact", "everything"]);
    assert_eq!(bad.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&bad.stderr).contains("unknown redaction category"));
    let tiny = run(&["--share-budget", "100"]);
    assert_eq!(tiny.status.code(), Some(2));
    let e = String::from_utf8_lossy(&tiny.stderr);
    assert_eq!(e.trim().lines().count(), 1, "{e}");
    assert!(e.contains("does not fit a share link of 100 bytes"), "{e}");
    let both = bin().args(["diagnose", zip.to_str().unwrap(), "--share-link", "--json"]).output().unwrap();
    assert_eq!(both.status.code(), Some(2));
}

#[test]
fn fail_on_warning_exits_1_on_a_warning_only_report() {
    // A leftover temp file of offsets/ is a warning, no error: exit 0 by default, 1 with --fail-on warning.
    let zip = fixture("broken-ss-3.5.9-stray-tmp-offsets.zip");
    let run = |extra: &[&str]| {
        let mut args = vec!["diagnose", zip.to_str().unwrap(), "--json", "--now", "2026-12-01T00:00:00Z"];
        args.extend_from_slice(extra);
        bin().args(&args).output().unwrap()
    };
    let out = run(&[]);
    assert_eq!(out.status.code(), Some(0));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let sev: Vec<&str> =
        v["checkpoints"][0]["findings"].as_array().unwrap().iter().filter_map(|f| f["severity"].as_str()).collect();
    assert!(sev.contains(&"warning") && !sev.contains(&"error"), "{sev:?}");
    assert_eq!(run(&["--fail-on", "warning"]).status.code(), Some(1));
    assert_eq!(run(&["--fail-on", "error"]).status.code(), Some(0));
    // A healthy checkpoint stays 0 with --fail-on warning.
    let out = bin()
        .args(["diagnose", fixture("ss-4.3.0-agg-hdfs.zip").to_str().unwrap(), "--fail-on", "warning"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stdout));
    assert_eq!(run(&["--fail-on", "info"]).status.code(), Some(2), "an unknown level is a usage error");
}

#[test]
fn kafka_offsets_inline_text_or_file_and_bad_text_exits_2() {
    let case = PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/../../../shared/cases"));
    let zip = case.join("case-04-kafka-topic-recreated.zip");
    let earliest = case.join("case-04-kafka-topic-recreated.kafka_earliest.json");
    let out = bin()
        .args([
            "diagnose",
            zip.to_str().unwrap(),
            "--json",
            "--now",
            "2026-11-30T00:00:00Z",
            "--kafka-earliest",
            earliest.to_str().unwrap(),
            "--kafka-latest",
            "payments-events:0:300\npayments-events:1:480",
            "--error-text",
            case.join("case-04-kafka-topic-recreated.error.txt").to_str().unwrap(),
        ])
        .output()
        .unwrap();
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let plan = &v["checkpoints"][0]["restart_plan"];
    let ways = plan["ways_out"].as_array().unwrap();
    let new_cp = ways.iter().find(|w| w["kind"] == "new_checkpoint_bounded_start").expect("a new-checkpoint way out");
    let start = new_cp["options"].as_array().unwrap().iter().find(|o| o["key"] == "startingOffsets").unwrap();
    // Partition 0 is ahead of the brokers' latest (300 < 500): it starts from the earliest; partition 1 keeps 480.
    assert_eq!(start["value"], r#"{"payments-events":{"0":-2,"1":480}}"#);
    assert_eq!(ways[0]["kind"], "retry", "a lower high-water mark may be transient: retry first");
    let out = bin().args(["diagnose", zip.to_str().unwrap(), "--kafka-latest", "no offsets here"]).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("--kafka-latest") && err.contains("line 1"), "{err}");
}

/// Runs `diagnose --json` and returns the report's first checkpoint.
fn diagnose_json(args: &[&str]) -> serde_json::Value {
    let out = bin().args(["diagnose", "--json"]).args(args).output().unwrap();
    assert!(matches!(out.status.code(), Some(0 | 1)), "{}", String::from_utf8_lossy(&out.stderr));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    v["checkpoints"][0].clone()
}

fn codes(cp: &serde_json::Value) -> Vec<String> {
    cp["findings"].as_array().unwrap().iter().map(|f| f["code"].as_str().unwrap().to_string()).collect()
}

#[test]
fn sink_log_option_takes_the_output_folder_or_its_zip() {
    // Real Spark 4.3.0: the stateless query's checkpoint and its file sink output (batches 0..=3).
    let chk = fixture("ss-4.3.0-stateless.zip");
    let out_zip = fixture("ss-4.3.0-stateless.sink-output.zip");
    let with_zip = diagnose_json(&[chk.to_str().unwrap(), "--sink-log", out_zip.to_str().unwrap()]);
    assert_eq!(with_zip["sink_logs"][0]["batch_ids"], serde_json::json!([0, 1, 2, 3]));
    assert!(
        !codes(&with_zip).iter().any(|c| c.starts_with("sink-log-") && c != "sink-log-unreadable"),
        "{:?}",
        codes(&with_zip)
    );
    // The same output as a folder, with _spark_metadata/1 gone: reading the log needs it.
    let dir = tmp("cli", "sinklog");
    zip::ZipArchive::new(std::fs::File::open(&out_zip).unwrap()).unwrap().extract(dir.join("out")).unwrap();
    std::fs::remove_file(dir.join("out/_spark_metadata/1")).unwrap();
    let cut = diagnose_json(&[chk.to_str().unwrap(), "--sink-log", dir.join("out").to_str().unwrap()]);
    assert!(codes(&cut).contains(&"sink-log-batch-missing".to_string()), "{:?}", codes(&cut));
    assert_eq!(cut["sink_logs"][0]["missing_batch_ids"], serde_json::json!([1]));
    // Given the _spark_metadata folder itself.
    let meta = diagnose_json(&[chk.to_str().unwrap(), "--sink-log", dir.join("out/_spark_metadata").to_str().unwrap()]);
    assert_eq!(meta["sink_logs"][0]["missing_batch_ids"], serde_json::json!([1]));
    // The output folder with its whole _spark_metadata deleted: a sink log with no batch, behind the 4 committed
    // batches (the restart starts a new log there, readers of the output fail on it).
    std::fs::remove_dir_all(dir.join("out/_spark_metadata")).unwrap();
    let gone = diagnose_json(&[chk.to_str().unwrap(), "--sink-log", dir.join("out").to_str().unwrap()]);
    assert!(codes(&gone).contains(&"sink-log-batch-missing".to_string()), "{:?}", codes(&gone));
    assert_eq!(gone["sink_logs"][0]["batch_ids"], serde_json::json!([]));
    // A path that is not there is a clear error, exit 2.
    let out = bin().args(["diagnose", chk.to_str().unwrap(), "--sink-log", "/nonexistent/out"]).output().unwrap();

    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("--sink-log"), "{}", String::from_utf8_lossy(&out.stderr));
}

/// `--file-log-mib` is the memory for file log entries: the real Spark 4.1.4 file source checkpoint whose batch 0
/// source log holds 20,000 entries (about 3.6 MB) is compared with the path given by default (64 MiB) and
/// "not verified", the verdict unknown, with 1 MiB; 0 is refused.
#[test]
fn file_log_mib_sets_the_memory_for_file_log_entries() {
    use std::io::Read;
    let src = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../checkpoint-core/tests/data/spark/source-path-changed-4.1.4.zip");
    let mut z = zip::ZipArchive::new(std::fs::File::open(&src).unwrap()).unwrap();
    let mut log = b"v1\n".to_vec();
    for i in 0..20_000u64 {
        let line = format!(
            "{{\"path\":\"file:///data/landing/day=04/part-{i:07}-3b0c2a8e-5d8e-4b53-9d7e-1f2a3b4c5d6e.json\",\"timestamp\":{},\"batchId\":0}}\n",
            1_764_800_000_000u64 + i
        );
        log.extend_from_slice(line.as_bytes());
    }
    let dir = tmp("cli", "file-log-mib");
    let zip_path = dir.join("big-source-log.zip");
    let mut w = zip::ZipWriter::new(std::fs::File::create(&zip_path).unwrap());
    for i in 0..z.len() {
        let mut f = z.by_index(i).unwrap();
        let name = f.name().unwrap().to_string();
        let mut b = Vec::new();
        f.read_to_end(&mut b).unwrap();
        if name == "chk/sources/0/.0.crc" {
            continue; // the file it sums is replaced
        }
        if name == "chk/sources/0/0" {
            b = log.clone();
        }
        w.start_file(name, zip::write::SimpleFileOptions::default()).unwrap();
        w.write_all(&b).unwrap();
    }
    w.finish().unwrap();
    let zip = zip_path.to_str().unwrap();
    let by_default = diagnose_json(&[zip, "--source-path", "0=/data/landing"]);
    assert_eq!(by_default["restart"]["outcome"], "resumes", "{}", by_default["findings"]);
    let one = diagnose_json(&[zip, "--source-path", "0=/data/landing", "--file-log-mib", "1"]);
    assert_eq!(one["restart"]["outcome"], "unknown", "{}", one["findings"]);
    assert!(codes(&one).contains(&"file-not-verified".to_string()), "{:?}", codes(&one));
    let out = bin().args(["diagnose", zip, "--file-log-mib", "0"]).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
}

/// A report that cannot be written (`> /dev/full`) is an error (exit 2, the reason on stderr), for `diagnose`
/// in each format and for `state`; a reader that closes the pipe early (`| head`) ends the output quietly.
#[cfg(target_os = "linux")]
#[test]
fn a_report_that_cannot_be_written_is_an_error_and_a_closed_pipe_is_not() {
    let zip = fixture("ss-4.0.5-agg-hdfs.zip");
    let z = zip.to_str().unwrap();
    for args in
        [vec!["diagnose", z], vec!["diagnose", z, "--json"], vec!["diagnose", z, "--share-link"], vec!["state", z]]
    {
        let full = std::fs::OpenOptions::new().write(true).open("/dev/full").unwrap();
        let out = bin().args(&args).stdout(full).output().unwrap();
        assert_eq!(out.status.code(), Some(2), "{args:?}: {out:?}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains("writing to standard output: No space left on device"), "{args:?}: {err}");
        // A pipe whose reader is gone before the first write: EPIPE on every write, which ends the output quietly.
        let (reader, writer) = std::io::pipe().unwrap();
        drop(reader);
        let out = bin().args(&args).stdout(writer).output().unwrap();
        assert!(matches!(out.status.code(), Some(0) | Some(1)), "{args:?}: {out:?}");
        assert!(!String::from_utf8_lossy(&out.stderr).contains("standard output"), "{args:?}: {out:?}");
    }
}

/// An input that holds no checkpoint is not a pass: `diagnose` exits 2 with the report (whose finding names the
/// zip inside the zip) and a line on stderr; `state` says no checkpoint was found, not "no committed batch".
#[test]
fn an_input_without_a_checkpoint_exits_2_and_names_the_zip_inside() {
    let dir = tmp("cli", "zipzip");
    let p = dir.join("outer.zip");
    let mut w = zip::ZipWriter::new(std::io::Cursor::new(Vec::new()));
    w.start_file("exports/ckpt.zip", zip::write::SimpleFileOptions::default()).unwrap();
    w.write_all(&std::fs::read(fixture("ss-4.0.5-agg-hdfs.zip")).unwrap()).unwrap();
    std::fs::write(&p, w.finish().unwrap().into_inner()).unwrap();
    let out = bin().args(["diagnose", p.to_str().unwrap(), "--json"]).output().unwrap();
    assert_eq!(out.status.code(), Some(2), "{out:?}");
    assert!(String::from_utf8_lossy(&out.stderr).contains("no Spark checkpoint found"), "{out:?}");
    let j: serde_json::Value = serde_json::from_slice(&out.stdout).expect("the report is still printed");
    let f = &j["checkpoints"][0]["findings"][0];
    assert_eq!(f["code"], "no-checkpoint-found");
    assert!(f["title"].as_str().unwrap().ends_with("which holds exports/ckpt.zip"), "{f}");
    assert!(f["fix"][0].as_str().unwrap().contains("exports/ckpt.zip"), "{f}");
    let out = bin().args(["state", p.to_str().unwrap()]).output().unwrap();
    assert_eq!(out.status.code(), Some(1), "{out:?}");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("no Spark checkpoint found") && !err.contains("committed"), "{err}");
    // A Delta table's log given as the checkpoint (a real delta-spark log of the shared cases): say where it goes.
    let log = fixtures().join("../cases/case-13-delta-log-expired.delta_log.zip");
    let out = bin().args(["diagnose", log.to_str().unwrap(), "--json"]).output().unwrap();
    assert_eq!(out.status.code(), Some(2), "{out:?}");
    let j: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert!(j["checkpoints"][0]["findings"][0]["fix"][0].as_str().unwrap().contains("--delta-log"), "{j}");
}
