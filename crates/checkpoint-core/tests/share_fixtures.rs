//! Share links on every shared checkpoint (`../shared/fixtures`, `cases`, `code-changes`, `dstream`): the values
//! that must not travel are collected here from the zip's own files — independently of the redactor — and none
//! may survive in the decoded payload nor in the fragment; the same input gives the same link; decoding gives
//! exactly the redacted report; the verdict and the findings survive redaction; every link fits the budget.

use checkpoint_core::share::{open_fragment, redact, share_link, Redaction, ShareOptions, DEFAULT_BUDGET_BYTES};
use checkpoint_core::{diagnose, Context, Limits, SparkVersion, ZipInput};
use serde_json::Value;
use std::collections::BTreeSet;
use std::io::{Cursor, Read};
use std::path::{Path, PathBuf};

fn shared() -> PathBuf {
    PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/../../../shared"))
}

/// Every checkpoint zip of the shared folders (not the side inputs: `_delta_log` and sink-output zips).
fn inputs() -> Vec<PathBuf> {
    let mut v = Vec::new();
    for dir in ["fixtures", "cases", "code-changes", "dstream"] {
        let Ok(rd) = std::fs::read_dir(shared().join(dir)) else { continue };
        for e in rd.flatten() {
            let name = e.file_name().to_string_lossy().to_string();
            if name.ends_with(".zip") && !name.ends_with(".delta_log.zip") && !name.ends_with(".sink-output.zip") {
                v.push(e.path());
            }
        }
    }
    v.sort();
    assert!(v.len() > 80, "shared checkpoints found: {}", v.len());
    v
}

/// The context a case asks for in its `.expect.json` (`cli_args`); fixtures get a fixed clock.
fn context(zip: &Path) -> Context {
    let mut ctx = Context { now_ms: Some(1_795_996_800_000), ..Default::default() };
    let expect = PathBuf::from(zip.to_string_lossy().replace(".zip", ".expect.json"));
    let Ok(text) = std::fs::read_to_string(&expect) else { return ctx };
    let v: Value = serde_json::from_str(&text).unwrap();
    let args: Vec<String> =
        v["cli_args"].as_array().into_iter().flatten().filter_map(|a| a.as_str().map(str::to_string)).collect();
    let dir = zip.parent().unwrap();
    let mut i = 0;
    while i + 1 < args.len() {
        let (k, val) = (&args[i], &args[i + 1]);
        match k.as_str() {
            "--spark-version" => ctx.spark_version = val.parse::<SparkVersion>().ok(),
            "--error-text" => ctx.error_text = std::fs::read_to_string(dir.join(val)).ok(),
            "--kafka-earliest" => {
                ctx.kafka_earliest = std::fs::read_to_string(dir.join(val))
                    .ok()
                    .and_then(|t| checkpoint_core::kafka_offsets::parse(&t).ok())
            }
            "--conf" => {
                if let Some((a, b)) = val.split_once('=') {
                    ctx.session_conf.insert(a.to_string(), b.to_string());
                }
            }
            _ => {}
        }
        i += 2;
    }
    ctx
}

/// `(name, bytes)` of every file in the zip.
fn entries(bytes: &[u8]) -> Vec<(String, Vec<u8>)> {
    let mut z = zip::ZipArchive::new(Cursor::new(bytes)).unwrap();
    let mut out = Vec::new();
    for i in 0..z.len() {
        let mut f = z.by_index(i).unwrap();
        if f.is_dir() || f.size() > 8 << 20 {
            continue;
        }
        let mut b = Vec::new();
        if f.read_to_end(&mut b).is_ok() {
            out.push((f.name().unwrap().to_string(), b));
        }
    }
    out
}

/// Runs of printable ASCII (where Spark writes paths, also inside Java serialization and lz4 literals).
fn printable_runs(b: &[u8]) -> Vec<String> {
    b.split(|&c| !(0x20..0x7f).contains(&c))
        .filter(|r| r.len() >= 4)
        .map(|r| String::from_utf8_lossy(r).into_owned())
        .collect()
}

/// The values that must not travel, read from the checkpoint's files.
#[derive(Default, Debug)]
struct Originals {
    /// Compared as substrings.
    exact: BTreeSet<String>,
    /// Compared as whole words (names that may be short).
    words: BTreeSet<String>,
}

fn collect_originals(zip: &Path, files: &[(String, Vec<u8>)], report: &Value) -> Originals {
    let mut o = Originals::default();
    o.exact.insert(zip.file_name().unwrap().to_string_lossy().to_string());
    for cp in report["checkpoints"].as_array().unwrap() {
        if let Some(q) = cp["query_id"].as_str() {
            o.exact.insert(q.to_string());
        }
    }
    for (name, bytes) in files {
        // The checkpoint roots inside the archive: where `offsets/`, `commits/`, `state/`, `metadata` start.
        for marker in ["/offsets/", "/commits/", "/state/", "/sources/", "/metadata"] {
            if let Some(i) = name.find(marker) {
                o.exact.insert(format!("{}/", &name[..i]));
                // Quoted in a text, the folder's name does not travel either.
                o.exact.insert(format!("\\\"{}\\\"", &name[..i]));
            }
        }
        for run in printable_runs(bytes) {
            for tok in run.split(|c: char| c.is_whitespace() || "\"'`,;()[]{}<>|=".contains(c)) {
                let tok = tok.trim_end_matches(['.', ':']);
                let abs = tok.starts_with('/') && tok.len() > 3 && tok[1..].contains('/');
                let uri = tok.contains("://") || tok.starts_with("file:/");
                if !(abs || uri) || !tok.bytes().any(|b| b.is_ascii_alphabetic()) {
                    continue;
                }
                o.exact.insert(tok.to_string());
                // Its parent folders (two segments or more) must not travel either.
                let body = tok.split_once("://").map(|(_, b)| b).unwrap_or(tok.trim_start_matches("file:"));
                let segs: Vec<&str> = body.split('/').collect();
                for n in 3..segs.len() {
                    let parent = segs[..n].join("/");
                    if parent.trim_matches('/').contains('/') {
                        o.exact.insert(parent);
                    }
                }
                if let Some((_, rest)) = tok.split_once("://") {
                    let authority = rest.split('/').next().unwrap_or("");
                    for part in authority.split('@') {
                        let host = part.split(':').next().unwrap_or("");
                        if host.len() >= 3 {
                            o.words.insert(host.to_string());
                        }
                    }
                }
            }
        }
        // Topic names and table ids from the offset log: the lines after the header and the metadata line.
        if name.contains("offsets/") && !name.ends_with(".crc") {
            let text = String::from_utf8_lossy(bytes);
            for line in text.lines().skip(2) {
                let Ok(v) = serde_json::from_str::<Value>(line) else { continue };
                let Some(m) = v.as_object() else { continue };
                for (k, val) in m {
                    let kafka = val
                        .as_object()
                        .is_some_and(|p| !p.is_empty() && p.keys().all(|x| x.bytes().all(|b| b.is_ascii_digit())));
                    if kafka {
                        o.words.insert(k.clone());
                    }
                    if k == "reservoirId" {
                        if let Some(id) = val.as_str() {
                            o.exact.insert(id.to_string());
                        }
                    }
                }
            }
        }
        // The query id as `metadata` holds it (also when the report could not read it).
        if name == "metadata" || name.ends_with("/metadata") {
            if let Ok(v) = serde_json::from_slice::<Value>(bytes.split(|&b| b == b'\n').next().unwrap_or(&[])) {
                if let Some(id) = v["id"].as_str() {
                    o.exact.insert(id.to_string());
                }
            }
        }
    }
    // Names and paths of the diagnosis' own vocabulary are never sensitive (e.g. `/` alone); drop empties.
    o.exact.retain(|s| s.trim_matches('/').len() >= 3);
    o.words.retain(|s| !s.is_empty());
    o
}

fn word_in(hay: &str, w: &str) -> bool {
    let b = hay.as_bytes();
    let word = |c: u8| c.is_ascii_alphanumeric() || c == b'_';
    hay.match_indices(w).any(|(i, _)| {
        let before = i > 0 && word(b[i - 1]) && word(w.as_bytes()[0]);
        let end = i + w.len();
        let after = end < b.len() && word(b[end]) && word(w.as_bytes()[w.len() - 1]);
        !before && !after
    })
}

#[test]
fn share_links_of_every_shared_checkpoint_carry_no_original_value() {
    let mut sizes = Vec::new();
    let mut checked = 0usize;
    for zip in inputs() {
        let bytes = std::fs::read(&zip).unwrap();
        let name = zip.file_name().unwrap().to_string_lossy().to_string();
        let Ok(mut input) = ZipInput::open(Cursor::new(bytes.clone()), bytes.len() as u64, &name, Limits::default())
        else {
            continue; // an unreadable input has no report to share
        };
        let report = diagnose(&mut input, &context(&zip));
        let json = serde_json::to_value(&report).unwrap();
        let link = share_link(&json, &ShareOptions::default()).unwrap_or_else(|e| panic!("{name}: {e}"));
        let again = share_link(&json, &ShareOptions::default()).unwrap();
        assert_eq!(link.fragment, again.fragment, "{name}: the same input gives the same link");
        assert!(link.bytes <= DEFAULT_BUDGET_BYTES, "{name}: {} bytes", link.bytes);

        let opened = open_fragment(&link.fragment).unwrap_or_else(|e| panic!("{name}: {e}"));
        assert_eq!(opened.report, link.report, "{name}: decoding gives the redacted report");
        if link.cut_notes.is_empty() {
            assert_eq!(opened.report, redact(&json, &Redaction::default()).report, "{name}");
        }
        let payload = serde_json::to_string(&opened.report).unwrap();
        let originals = collect_originals(&zip, &entries(&bytes), &json);
        for s in &originals.exact {
            assert!(!payload.contains(s.as_str()), "{name}: {s:?} survived redaction");
            assert!(!link.fragment.contains(s.as_str()), "{name}: {s:?} in the fragment");
            checked += 1;
        }
        for w in &originals.words {
            assert!(!word_in(&payload, w), "{name}: name {w:?} survived redaction");
            assert!(!link.fragment.contains(&format!("\"{w}\"")), "{name}: {w:?} in the fragment");
            checked += 1;
        }

        // What the diagnosis says survives: the typed report, the verdict, the finding codes and their evidence.
        let typed = opened.typed().unwrap_or_else(|e| panic!("{name}: {e}"));
        assert_eq!(typed.checkpoints.len(), report.checkpoints.len(), "{name}");
        for (a, b) in typed.checkpoints.iter().zip(&report.checkpoints) {
            assert_eq!(a.restart.outcome, b.restart.outcome, "{name}");
            assert_eq!(a.restart.error_class, b.restart.error_class, "{name}");
            let codes =
                |c: &checkpoint_core::report::CheckpointReport| c.findings.iter().map(|f| f.code).collect::<Vec<_>>();
            assert_eq!(codes(a), codes(b), "{name}");
            assert_eq!(a.batches.len(), b.batches.len().min(a.batches.len()), "{name}");
            if link.cut_notes.is_empty() {
                for (fa, fb) in a.findings.iter().zip(&b.findings) {
                    assert_eq!(fa.evidence.len(), fb.evidence.len(), "{name}: {}", fa.code);
                    assert_eq!(fa.severity, fb.severity);
                }
            }
        }
        sizes.push((link.bytes, name));
    }
    sizes.sort();
    let largest: Vec<String> = sizes.iter().rev().take(5).map(|(b, n)| format!("{n}: {b} bytes")).collect();
    eprintln!("share link sizes over {} checkpoints, largest: {}", sizes.len(), largest.join("; "));
    assert!(sizes.len() > 80);
    assert!(checked > 300, "originals checked: {checked}");
}
