//! A checkpoint given as a folder, as a data engineer's copy may hold it: symbolic links (a mounted volume linked in
//! as `state/`, a link that loops or points nowhere), a FIFO, a folder the user cannot read, a `\` in a file name.
//! The folder is read as Spark's Hadoop local file system reads it: links followed, one name per path component,
//! and what cannot be read is a finding naming it, never a refusal, a hang or a wrong verdict.
#![cfg(unix)]

mod common;
use common::*;

use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::{Duration, Instant};

/// A fixture unzipped into `<scratch>/chk`.
fn unzipped(fixture_name: &str, tag: &str) -> (PathBuf, PathBuf) {
    let scratch = tmp("dir-input", tag);
    let chk = scratch.join("chk");
    let f = std::fs::File::open(fixture(fixture_name)).unwrap();
    zip::ZipArchive::new(f).unwrap().extract(&chk).unwrap();
    (scratch, chk)
}

/// Runs `diagnose <dir> --json --now 0`, killed after a generous bound so that a tool that blocks (on a FIFO)
/// fails the test instead of hanging it. Returns the exit status and the report.
fn diagnose(dir: &Path, extra: &[&str]) -> (Option<i32>, Value) {
    let out = dir.with_extension("report.json");
    let mut child = bin()
        .args(["diagnose", dir.to_str().unwrap(), "--json", "--now", "0"])
        .args(extra)
        .stdin(Stdio::null())
        .stdout(std::fs::File::create(&out).unwrap())
        .spawn()
        .unwrap();
    let t = Instant::now();
    let status = loop {
        if let Some(s) = child.try_wait().unwrap() {
            break s;
        }
        if t.elapsed() > Duration::from_secs(60) {
            let _ = child.kill();
            let _ = child.wait();
            panic!("diagnose {} did not end within 60 s (blocked on a file?)", dir.display());
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    let text = std::fs::read_to_string(&out).unwrap();
    let report = serde_json::from_str(&text).unwrap_or_else(|e| panic!("{e}: {status:?} {text}"));
    (status.code(), report)
}

fn checkpoint(report: &Value) -> &Value {
    &report["checkpoints"][0]
}

fn outcome(report: &Value) -> &str {
    checkpoint(report)["restart"]["outcome"].as_str().unwrap()
}

fn codes(report: &Value) -> Vec<String> {
    let fs = checkpoint(report)["findings"].as_array().unwrap();
    fs.iter().map(|f| f["code"].as_str().unwrap().to_string()).collect()
}

/// The `archive-entry-unreadable` finding's evidence (path, detail) and its severity.
fn unreadable(report: &Value) -> Option<(String, Vec<(String, String)>)> {
    let fs = checkpoint(report)["findings"].as_array().unwrap();
    let f = fs.iter().find(|f| f["code"] == "archive-entry-unreadable")?;
    let ev = f["evidence"].as_array().unwrap();
    let ev = ev.iter().map(|e| (e["path"].as_str().unwrap().into(), e["detail"].as_str().unwrap().into())).collect();
    Some((f["severity"].as_str().unwrap().to_string(), ev))
}

/// The report of a checkpoint whose `state/` is a symbolic link to a folder elsewhere (a mounted volume) is the
/// report of the same checkpoint with a real `state/` folder: here, the partition Spark misses is missed too.
#[test]
fn a_symlinked_state_folder_gives_the_report_of_the_real_folder() {
    let name = "broken-ss-4.3.0-missing-state-partition.zip";
    let (real_scratch, real) = unzipped(name, "state-real");
    let (linked_scratch, linked) = unzipped(name, "state-linked");
    std::fs::rename(linked.join("state"), linked_scratch.join("volume")).unwrap();
    std::os::unix::fs::symlink("../volume", linked.join("state")).unwrap();
    let (code_real, want) = diagnose(&real, &[]);
    let (code_linked, got) = diagnose(&linked, &[]);
    assert_eq!(outcome(&want), "fails");
    assert!(codes(&want).iter().any(|c| c == "state-partition-missing"), "{:?}", codes(&want));
    assert_eq!(code_linked, code_real);
    // The two copies were written at different moments: the finding that quotes files' modification times
    // (`last-activity-age`) may differ by a second; everything else is the same report.
    let without_times = |r: &Value| {
        let mut c = checkpoint(r).clone();
        if let Some(fs) = c["findings"].as_array_mut() {
            fs.retain(|f| f["code"] != "last-activity-age");
        }
        c
    };
    assert_eq!(without_times(&got), without_times(&want));
    let _ = std::fs::remove_dir_all(real_scratch);
    let _ = std::fs::remove_dir_all(linked_scratch);
}

/// A link back to a folder it lies in ends the walk there with a warning naming it; the rest reads as before.
#[test]
fn a_symlink_loop_ends_with_a_finding() {
    let (scratch, chk) = unzipped("ss-4.3.0-agg-hdfs.zip", "loop");
    let (_, plain) = diagnose(&chk, &[]);
    std::os::unix::fs::symlink("..", chk.join("state/0/again")).unwrap();
    std::os::unix::fs::symlink(".", chk.join("self")).unwrap();
    let (code, report) = diagnose(&chk, &[]);
    assert_eq!(outcome(&report), outcome(&plain));
    assert!(matches!(code, Some(0 | 1)), "{code:?}");
    let (severity, evidence) = unreadable(&report).expect("a finding about the loops");
    assert_eq!(severity, "warning", "{evidence:?}");
    let paths: Vec<&str> = evidence.iter().map(|e| e.0.as_str()).collect();
    assert_eq!(paths, ["self", "state/0/again"]);
    assert!(evidence.iter().all(|e| e.1.contains("symbolic link loop")), "{evidence:?}");
    let _ = std::fs::remove_dir_all(scratch);
}

/// Links that fan out and meet again (a "diamond": each of 25 levels links twice to the next) once listed 2^25
/// paths until the entry limit refused the whole input (5.8 s); now a folder reached again is listed again at most
/// `MAX_FOLDERS_LISTED_AGAIN` times in all, then named: the checkpoint beside it gets its own verdict.
#[test]
fn links_that_fan_out_and_meet_again_are_listed_once_past_a_bound() {
    let (scratch, chk) = unzipped("ss-4.3.0-agg-hdfs.zip", "diamond");
    let (_, plain) = diagnose(&chk, &[]);
    let extra = chk.join("extra");
    for i in 0..=25 {
        std::fs::create_dir_all(extra.join(format!("l{i}"))).unwrap();
    }
    for i in 0..25 {
        for name in ["a", "b"] {
            std::os::unix::fs::symlink(format!("../l{}", i + 1), extra.join(format!("l{i}/{name}"))).unwrap();
        }
    }
    std::fs::write(extra.join("l25/f"), b"x").unwrap();
    let (code, report) = diagnose(&chk, &[]);
    assert!(matches!(code, Some(0 | 1)), "{code:?}");
    assert_eq!(outcome(&report), outcome(&plain));
    let entries = report["input"]["entries"].as_u64().unwrap();
    assert!(entries < 20_000, "{entries} entries listed");
    let (_, evidence) = unreadable(&report).expect("a finding about the folders not listed again");
    assert!(evidence.iter().any(|e| e.1.contains("reached again through a symbolic link")), "{evidence:?}");
    let _ = std::fs::remove_dir_all(scratch);
}

/// A FIFO is listed as a file that cannot be read ("not a regular file") and is never opened (opening one
/// without a writer blocks): the run ends. As the latest offsets file, a restart reads it: verdict unknown.
#[test]
fn a_fifo_is_listed_unreadable_and_never_opened() {
    let (scratch, chk) = unzipped("ss-4.3.0-agg-hdfs.zip", "fifo");
    for p in ["offsets/12", "state/0/0/13.delta"] {
        let c = std::ffi::CString::new(chk.join(p).to_str().unwrap()).unwrap();
        assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o644) }, 0, "mkfifo {p}");
    }
    let (code, report) = diagnose(&chk, &[]);
    assert_eq!(outcome(&report), "unknown", "{:?}", codes(&report));
    assert_eq!(code, Some(1));
    let (severity, evidence) = unreadable(&report).expect("a finding naming the FIFOs");
    assert_eq!(severity, "error");
    let paths: Vec<&str> = evidence.iter().map(|e| e.0.as_str()).collect();
    assert_eq!(paths, ["offsets/12", "state/0/0/13.delta"]);
    assert!(evidence.iter().all(|e| e.1.contains("not a regular file (a FIFO)")), "{evidence:?}");
    let _ = std::fs::remove_dir_all(scratch);
}

/// A folder that cannot be listed (here a link that points nowhere in place of `state/0/1`; as a user without
/// read permission, also a folder of mode 000) is a finding naming it; the rest is diagnosed and the verdict is
/// unknown, not "fails".
#[test]
fn an_unreadable_folder_is_a_finding_not_a_refusal() {
    let (scratch, chk) = unzipped("ss-4.3.0-agg-hdfs.zip", "unreadable");
    std::fs::rename(chk.join("state/0/1"), scratch.join("moved")).unwrap();
    std::os::unix::fs::symlink("../../../nowhere", chk.join("state/0/1")).unwrap();
    let (code, report) = diagnose(&chk, &[]);
    assert_eq!(code, Some(1));
    assert_eq!(outcome(&report), "unknown", "{:?}", codes(&report));
    let (severity, evidence) = unreadable(&report).expect("a finding naming state/0/1");
    assert_eq!(severity, "error");
    assert_eq!(evidence[0].0, "state/0/1");
    assert!(evidence[0].1.contains("cannot be followed"), "{evidence:?}");
    // The rest was read: the batches and the other partitions.
    assert_eq!(checkpoint(&report)["batches"].as_array().map(|b| b.len()), Some(12));
    // Without root's override of permissions, a folder of mode 000 is read the same way.
    if unsafe { libc::geteuid() } != 0 {
        use std::os::unix::fs::PermissionsExt;
        std::fs::remove_file(chk.join("state/0/1")).unwrap();
        std::fs::rename(scratch.join("moved"), chk.join("state/0/1")).unwrap();
        std::fs::set_permissions(chk.join("state/0/1"), std::fs::Permissions::from_mode(0o000)).unwrap();
        let (code, report) = diagnose(&chk, &[]);
        std::fs::set_permissions(chk.join("state/0/1"), std::fs::Permissions::from_mode(0o755)).unwrap();
        assert_eq!((code, outcome(&report)), (Some(1), "unknown"));
        assert!(unreadable(&report).unwrap().1[0].1.contains("Permission denied"));
    }
    let _ = std::fs::remove_dir_all(scratch);
}

/// On a Unix file system `offsets\99` is one file name of the root, not `offsets/99`: it aliases no path Spark
/// reads, so the report is the plain checkpoint's (no invented batch 99, gap or missing deltas).
#[test]
fn a_backslash_in_a_file_name_does_not_alias_a_path() {
    let (scratch, chk) = unzipped("ss-4.3.0-agg-hdfs.zip", "backslash");
    let (_, plain) = diagnose(&chk, &[]);
    std::fs::write(chk.join("offsets\\99"), "garbage").unwrap();
    std::fs::write(chk.join("state\\0\\0\\99.delta"), "garbage").unwrap();
    let (code, report) = diagnose(&chk, &[]);
    assert_eq!(outcome(&report), "resumes");
    assert_eq!(code, Some(0));
    assert_eq!(checkpoint(&report)["findings"], checkpoint(&plain)["findings"]);
    assert_eq!(checkpoint(&report)["batches"], checkpoint(&plain)["batches"]);
    let _ = std::fs::remove_dir_all(scratch);
}
