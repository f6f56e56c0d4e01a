//! Hostile zip entries, one at a time, on a healthy real checkpoint: a name that cannot be a file of a folder,
//! a path listed twice, a state file whose zip entry does not unpack. Each must be a finding naming that entry
//! (and where it is in the zip), never a refusal of the zip, and never turn into a verdict about the checkpoint's
//! own files: the rest is diagnosed as before.

mod common;
use common::*;

use checkpoint_core::archive::{Archive, Limits, ZipInput};
use checkpoint_core::report::{Finding, Report, RestartOutcome, Severity};
use checkpoint_core::{diagnose, Context, SparkVersion};
use std::io::{Cursor, Write};

const FIXTURE: &str = "ss-4.3.0-agg-hdfs";

fn ctx() -> Context {
    Context { spark_version: Some("4.1.4".parse::<SparkVersion>().unwrap()), now_ms: Some(0), ..Default::default() }
}

/// A deflated zip of `files`, in order (the zip crate's writer: it refuses an exact duplicate name).
fn zip_of(files: &[(String, Vec<u8>)]) -> Vec<u8> {
    let mut w = zip::ZipWriter::new(Cursor::new(Vec::new()));
    let opts = zip::write::SimpleFileOptions::default().compression_method(zip::CompressionMethod::Deflated);
    for (p, b) in files {
        w.start_file(p.as_str(), opts).unwrap();
        w.write_all(b).unwrap();
    }
    w.finish().unwrap().into_inner()
}

fn open(z: Vec<u8>) -> ZipInput<Cursor<Vec<u8>>> {
    let n = z.len() as u64;
    ZipInput::open(Cursor::new(z), n, "hostile.zip", Limits::default()).expect("one bad entry must not refuse the zip")
}

fn findings<'a>(r: &'a Report, code: &str) -> Vec<&'a Finding> {
    r.checkpoints.iter().flat_map(|c| &c.findings).filter(|f| f.code == code).collect()
}

fn outcome(r: &Report) -> RestartOutcome {
    assert_eq!(r.checkpoints.len(), 1, "one root");
    r.checkpoints[0].restart.outcome
}

/// Offsets of every central directory header of `z`, and of its local headers.
fn headers(z: &[u8], sig: &[u8; 4]) -> Vec<usize> {
    (0..z.len().saturating_sub(4)).filter(|&i| &z[i..i + 4] == sig).collect()
}

fn u16_at(z: &[u8], i: usize) -> usize {
    u16::from_le_bytes([z[i], z[i + 1]]) as usize
}

/// The central directory header of entry `name`.
fn central(z: &[u8], name: &str) -> usize {
    headers(z, b"PK\x01\x02")
        .into_iter()
        .find(|&at| z.get(at + 46..at + 46 + u16_at(z, at + 28)) == Some(name.as_bytes()))
        .unwrap_or_else(|| panic!("{name} listed"))
}

/// Renames every entry called `from` to `to` (same length) in both headers.
fn rename(z: &mut [u8], from: &str, to: &str) {
    assert_eq!(from.len(), to.len());
    for at in headers(z, b"PK\x01\x02").into_iter().chain(headers(z, b"PK\x03\x04")) {
        let name_at = if &z[at..at + 4] == b"PK\x01\x02" { at + 46 } else { at + 30 };
        if z.get(name_at..name_at + from.len()) == Some(from.as_bytes()) {
            z[name_at..name_at + to.len()].copy_from_slice(to.as_bytes());
        }
    }
}

#[test]
fn an_entry_with_an_unsafe_name_is_skipped_and_named_not_a_refusal() {
    let files = load(FIXTURE);
    let clean = diagnose(&mut open(zip_of(&files)), &ctx());
    assert_eq!(outcome(&clean), RestartOutcome::Resumes);
    for bad in ["../../etc/passwd", "state/0/0/../../../x", "C:/Windows/x", "a:/x", "C:\\Windows\\x", "/../x"] {
        let mut with = files.clone();
        with.push((bad.to_string(), b"x".to_vec()));
        let mut a = open(zip_of(&with));
        assert!(a.entries().iter().all(|e| !e.path.contains("..") && !e.path.contains(':')), "{bad}: listed");
        let r = diagnose(&mut a, &ctx());
        assert_eq!(outcome(&r), RestartOutcome::Resumes, "{bad}: the rest is diagnosed as before");
        let f = findings(&r, "archive-entry-skipped");
        assert_eq!(f.len(), 1, "{bad}: {:?}", r.checkpoints[0].findings);
        assert_eq!(f[0].severity, Severity::Warning);
        assert!(f[0].title.contains(&format!("{bad:?}")), "{bad}: {}", f[0].title);
        let at = f[0].evidence[0].offset.expect("where the entry is in the zip");
        assert!(f[0].evidence[0].detail.contains(&format!("byte {at}")), "{:?}", f[0].evidence);
    }
}

#[test]
fn an_entry_deeper_than_the_limit_is_not_verified_not_a_refusal() {
    let files = load(FIXTURE);
    let deep = format!("{}/f", vec!["d"; 40].join("/"));
    let mut with = files.clone();
    with.push((deep.clone(), b"x".to_vec()));
    let mut a = open(zip_of(&with));
    assert!(a.entries().iter().all(|e| e.path != deep));
    let r = diagnose(&mut a, &ctx());
    assert_eq!(outcome(&r), RestartOutcome::Resumes, "a restart does not read it");
    let f = findings(&r, "file-not-verified");
    assert_eq!(f.len(), 1, "{:?}", r.checkpoints[0].findings);
    assert_eq!(f[0].evidence[0].path, deep);
    assert!(f[0].evidence[0].detail.contains("path depth is 41, over the limit of 32"), "{:?}", f[0].evidence);
}

/// The finding about a duplicated `offsets/11`: names the path and the byte offset of every copy.
fn duplicated(r: &Report, copies: &[usize]) -> String {
    let f = findings(r, "archive-entry-duplicated");
    assert_eq!(f.len(), 1, "{:?}", r.checkpoints[0].findings);
    let e = f[0].evidence.iter().find(|e| e.path == "offsets/11").expect("offsets/11 named");
    for at in copies {
        assert!(e.detail.contains(&format!("at byte {at} ")), "copy at {at}: {}", e.detail);
    }
    assert_eq!(e.offset, copies.last().map(|&c| c as u64), "the copy read is the last");
    assert_eq!(f[0].severity, Severity::Error, "the copies differ and a restart reads offsets/11");
    e.detail.clone()
}

#[test]
fn a_path_listed_twice_reads_the_last_copy_and_says_so() {
    let files = load(FIXTURE);
    let good = files.iter().find(|(p, _)| p == "offsets/11").unwrap().1.clone();
    // Garbage first, then the real file (placed at the end, under a name renamed to `offsets/11` after).
    let mut first: Vec<(String, Vec<u8>)> = vec![("offsets/11".into(), b"garbage".to_vec())];
    first.extend(files.iter().filter(|(p, _)| p != "offsets/11").cloned());
    first.push(("offsets/1X".into(), good.clone()));
    // The real file first, garbage last.
    let mut last = files.clone();
    last.push(("offsets/1X".into(), b"garbage".to_vec()));
    // Garbage under a backslash name first (one path once `\` is read as `/`), the real file later.
    let mut slash: Vec<(String, Vec<u8>)> = vec![("offsets\\11".into(), b"garbage".to_vec())];
    slash.extend(files.iter().cloned());
    for (label, files, want, outcome_want) in [
        ("garbage first", first, good.clone(), RestartOutcome::Unknown),
        ("garbage last", last, b"garbage".to_vec(), RestartOutcome::Unknown),
        ("backslash garbage first", slash, good.clone(), RestartOutcome::Unknown),
    ] {
        let mut z = zip_of(&files);
        rename(&mut z, "offsets/1X", "offsets/11");
        let copies: Vec<usize> = headers(&z, b"PK\x01\x02")
            .into_iter()
            .filter(|&at| matches!(&z[at + 46..at + 46 + u16_at(&z, at + 28)], b"offsets/11" | b"offsets\\11"))
            .map(|at| u32::from_le_bytes(z[at + 42..at + 46].try_into().unwrap()) as usize)
            .collect();
        assert_eq!(copies.len(), 2, "{label}");
        let mut a = open(z);
        assert_eq!(a.entries().iter().filter(|e| e.path == "offsets/11").count(), 1, "{label}: listed once");
        assert_eq!(a.read("offsets/11", 1 << 20).unwrap(), want, "{label}: the last copy is read");
        let r = diagnose(&mut a, &ctx());
        let detail = duplicated(&r, &copies);
        assert!(detail.contains("a restart reads this file"), "{label}: {detail}");
        assert_eq!(outcome(&r), outcome_want, "{label}: the verdict depends on which copy the folder holds");
    }
}

/// Every way the zip entry of a state file a restart loads can fail to unpack: a CRC-32, a size or a local
/// header offset in the central directory that does not match the bytes.
#[test]
fn a_state_file_whose_zip_entry_does_not_unpack_is_not_verified_not_damaged() {
    let path = "state/0/2/12.snapshot";
    let z = fixture_zip(FIXTURE);
    let clean = diagnose(&mut open(z.clone()), &ctx());
    assert_eq!(outcome(&clean), RestartOutcome::Resumes);
    let at = central(&z, path);
    let local = u32::from_le_bytes(z[at + 42..at + 46].try_into().unwrap()) as u64;
    type Patch = fn(&mut [u8], usize);
    let patches: [(&str, Patch); 3] = [
        ("crc", |z, at| z[at + 16] ^= 0xff),
        ("size", |z, at| z[at + 24..at + 28].copy_from_slice(&5u32.to_le_bytes())),
        ("local header past the end", |z, at| z[at + 42..at + 46].copy_from_slice(&0x7fff_fff0u32.to_le_bytes())),
    ];
    for (label, patch) in patches {
        let mut y = z.clone();
        patch(&mut y, at);
        let header = if label.starts_with("local") { 0x7fff_fff0 } else { local };
        let r = diagnose(&mut open(y), &ctx());
        assert!(findings(&r, "state-file-corrupt").is_empty(), "{label}: the file was not seen, so not damaged");
        let f = findings(&r, "archive-entry-unreadable");
        assert_eq!(f.len(), 1, "{label}: {:?}", r.checkpoints[0].findings);
        assert_eq!(f[0].severity, Severity::Error, "{label}: a restart reads it");
        assert_eq!(f[0].evidence[0].path, path);
        let detail = &f[0].evidence[0].detail;
        assert!(detail.contains(&format!("zip entry at byte {header} of the input")), "{label}: {detail}");
        assert_eq!(outcome(&r), RestartOutcome::Unknown, "{label}");
    }
}
