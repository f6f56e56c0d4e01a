//! Share links (`checkpoint_core::share`): a link is input from a stranger too, and a report's strings come from
//! the checkpoint someone dropped. The first byte picks the form:
//! - 0: the rest as typed or pasted text (a fragment, a whole URL, anything) to `open_fragment`;
//! - 1: the rest as the JSON a link carries, compressed and encoded as `report=1.…` is, so that the fuzzer
//!   reaches the JSON and envelope checks without having to write zlib;
//! - 2: a real report (a fixture diagnosed once) with one of its strings, picked by the next two bytes, replaced
//!   by the rest as text: redaction and cutting on hostile strings in a real report's shape.
//!
//! Whatever opens is presented as the page shows a shared report (`present`) and shared again: the link made
//! must open, to exactly the report `share_link` says it carries. The other bits of the first byte pick the
//! redaction (all categories or none) and a small budget that forces cuts.
#![no_main]
use checkpoint_core::archive::{Limits, ZipInput};
use checkpoint_core::present::{present, Frontend};
use checkpoint_core::share::{open_fragment, share_link, v1, Redaction, ShareOptions};
use checkpoint_core::{diagnose, Context, Report};
use libfuzzer_sys::fuzz_target;
use serde_json::Value;
use std::sync::OnceLock;

const FIXTURES: [&[u8]; 3] = [
    include_bytes!("../../../shared/fixtures/broken-ss-4.3.0-missing-delta-join.zip"),
    include_bytes!("../../../shared/fixtures/broken-ss-4.3.0-changed-shuffle-partitions.zip"),
    include_bytes!("../../../shared/fixtures/ss-4.1.4-stateless.sink-output.zip"),
];

/// The fixtures' reports as JSON, as the CLI's `--share-link` and the page's share button give them to
/// `share_link`.
fn reports() -> &'static [Value] {
    static R: OnceLock<Vec<Value>> = OnceLock::new();
    R.get_or_init(|| {
        FIXTURES
            .iter()
            .map(|z| {
                let mut a = ZipInput::open(std::io::Cursor::new(*z), z.len() as u64, "f.zip", Limits::default())
                    .expect("a shared fixture opens");
                serde_json::to_value(diagnose(&mut a, &Context::default())).expect("a report is JSON")
            })
            .collect()
    })
}

/// Every string of `v` (object keys too), depth first, for `f` to replace the `n`-th: returns whether it did.
fn replace_string(v: &mut Value, n: &mut usize, with: &str) -> bool {
    match v {
        Value::String(s) => {
            if *n == 0 {
                *s = with.to_string();
                return true;
            }
            *n -= 1;
            false
        }
        Value::Array(a) => a.iter_mut().any(|x| replace_string(x, n, with)),
        Value::Object(m) => {
            let keys: Vec<String> = m.keys().cloned().collect();
            for k in keys {
                if *n == 0 {
                    let x = m.remove(&k).unwrap_or(Value::Null);
                    m.insert(with.to_string(), x);
                    return true;
                }
                *n -= 1;
                if m.get_mut(&k).is_some_and(|x| replace_string(x, n, with)) {
                    return true;
                }
            }
            false
        }
        _ => false,
    }
}

fn options(mode: u8) -> ShareOptions {
    ShareOptions {
        redaction: if mode & 0x10 == 0 { Redaction::default() } else { Redaction::none() },
        budget_bytes: if mode & 0x20 == 0 { 16 * 1024 } else { 1024 },
    }
}

/// Shares `report` and opens the link: it must open to exactly the report the link says it carries.
fn round_trip(report: &Value, mode: u8) {
    let Ok(link) = share_link(report, &options(mode)) else {
        return; // over the budget, or not a report: an error, not a link
    };
    assert_eq!(link.bytes, link.fragment.len(), "the link's length is not its fragment's");
    let opened = open_fragment(&link.url(Some("https://team.example/inspector/#old")))
        .unwrap_or_else(|e| panic!("a link share_link made does not open: {e}"));
    assert_eq!(opened.report, link.report, "the link opens to another report than its preview");
    assert_eq!(opened.cut_notes, link.cut_notes, "the link opens with other cut notes");
}

fuzz_target!(|data: &[u8]| {
    let Some((&mode, rest)) = data.split_first() else {
        return;
    };
    let shared_report = match mode % 3 {
        0 => open_fragment(&String::from_utf8_lossy(rest)).ok().map(|s| s.report),
        1 => open_fragment(&format!("report=1.{}", v1::write(rest))).ok().map(|s| s.report),
        _ => {
            let [a, b, text @ ..] = rest else { return };
            let all = reports();
            let mut report = all[*a as usize % all.len()].clone();
            let mut n = *b as usize;
            replace_string(&mut report, &mut n, &String::from_utf8_lossy(text));
            Some(report)
        }
    };
    let Some(report) = shared_report else {
        return;
    };
    // The page shows an opened report through the core's presentation, for the page and as a document.
    if let Ok(typed) = serde_json::from_value::<Report>(report.clone()) {
        for c in &typed.checkpoints {
            let _ = present(c, Frontend::Page);
            let _ = present(c, Frontend::Document);
        }
    }
    round_trip(&report, mode);
});
