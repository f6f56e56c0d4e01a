//! The page speaks the page's language: no finding of any shared input (fixtures, code changes, DStream
//! checkpoints, cases, each with its pasted error where one exists), nor any hint worded for the page or a
//! document, names one of the CLI's flags. Finding texts are shared by every front end; what a front end must
//! word itself is a `present::Hint` (the CLI's wording names the flag, the page's names its own control).
//!
//! Run with a tiny verify budget too, so that the budget finding and its hint are among those checked.

use checkpoint_core::present::Frontend;
use checkpoint_core::{diagnose, Context, Limits, ZipInput};
use std::path::{Path, PathBuf};

/// The CLI's flags (crates/checkpoint-cli/src/main.rs). A finding text naming one of them is a CLI text.
const CLI_FLAGS: &[&str] = &[
    "--spark-version",
    "--now",
    "--error-text",
    "--delta-log",
    "--kafka-earliest",
    "--kafka-latest",
    "--sink-log",
    "--deep",
    "--verify-budget",
    "--share-link",
    "--no-redact",
    "--share-budget",
    "--fail-on",
    "--file-log-mib",
    "--source-path",
];

fn shared(dir: &str) -> PathBuf {
    PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/../../../shared")).join(dir)
}

/// Every input zip of the shared folders (not the Delta logs that go with cases).
fn inputs() -> Vec<PathBuf> {
    let mut out = Vec::new();
    for dir in ["fixtures", "code-changes", "dstream", "cases"] {
        let Ok(rd) = std::fs::read_dir(shared(dir)) else { continue };
        for e in rd.flatten() {
            let p = e.path();
            let name = p.file_name().unwrap().to_string_lossy().to_string();
            if name.ends_with(".zip") && !name.ends_with(".delta_log.zip") {
                out.push(p);
            }
        }
    }
    out.sort();
    out
}

/// A CLI flag named in `text`: `--flag` at a word start, followed by a character that cannot continue a flag.
/// (`--conf` is not listed: `spark-submit --conf k=v` is Spark's own advice, right in the page too.)
fn flag_in(text: &str) -> Option<&'static str> {
    CLI_FLAGS.iter().copied().find(|f| {
        text.match_indices(f).any(|(i, _)| {
            let before_ok = i == 0 || !text.as_bytes()[i - 1].is_ascii_alphanumeric() && text.as_bytes()[i - 1] != b'-';
            let after = text.as_bytes().get(i + f.len()).copied();
            let after_ok = !matches!(after, Some(c) if c.is_ascii_alphanumeric() || c == b'-');
            before_ok && after_ok
        })
    })
}

fn run(zip: &Path, ctx: &Context) -> checkpoint_core::Report {
    let f = std::fs::File::open(zip).unwrap();
    let len = f.metadata().unwrap().len();
    let name = zip.file_name().unwrap().to_string_lossy().to_string();
    let mut a = ZipInput::open(std::io::BufReader::new(f), len, &name, Limits::default())
        .unwrap_or_else(|e| panic!("{name}: cannot open: {e}"));
    diagnose(&mut a, ctx)
}

#[test]
fn no_finding_or_page_hint_names_a_cli_flag() {
    let zips = inputs();
    assert!(zips.len() > 50, "expected the shared inputs beside the repo, found {}", zips.len());
    let mut bad = Vec::new();
    let mut budget_findings = 0;
    for zip in &zips {
        let error = zip.with_extension("error.txt");
        let error_text = std::fs::read_to_string(&error).ok();
        for budget in [None, Some(1024)] {
            let ctx = Context {
                now_ms: Some(1_764_547_200_000),
                error_text: error_text.clone(),
                verify_budget_bytes: budget,
                ..Default::default()
            };
            let report = run(zip, &ctx);
            let name = zip.file_name().unwrap().to_string_lossy();
            for c in &report.checkpoints {
                for f in &c.findings {
                    budget_findings += usize::from(f.code.info().code == "state-verification-budget");
                    let mut texts = vec![f.title.clone()];
                    texts.push(f.why.clone());
                    texts.extend(f.fix.iter().cloned());
                    texts.extend(f.evidence.iter().map(|e| e.detail.clone()));
                    for t in texts {
                        if let Some(flag) = flag_in(&t) {
                            bad.push(format!("{name}: finding {}: {flag} in {t:?}", f.code.info().code));
                        }
                    }
                }
                for h in &c.hints {
                    for fe in [Frontend::Page, Frontend::Document] {
                        let t = h.text(fe);
                        if let Some(flag) = flag_in(&t) {
                            bad.push(format!("{name}: hint ({fe:?}): {flag} in {t:?}"));
                        }
                    }
                }
            }
        }
    }
    assert!(budget_findings > 0, "the tiny budget should leave state unverified somewhere");
    assert!(bad.is_empty(), "CLI flags in texts the page shows:\n{}", bad.join("\n"));
}

#[test]
fn flag_detection() {
    assert_eq!(flag_in("Run with --deep to verify them."), Some("--deep"));
    assert_eq!(flag_in("give --spark-version 4.1.4"), Some("--spark-version"));
    assert_eq!(flag_in("--now"), Some("--now"));
    assert_eq!(flag_in("a --deeper b"), None);
    assert_eq!(flag_in("x---deep"), None);
    assert_eq!(flag_in("nothing here"), None);
}
