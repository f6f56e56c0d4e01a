//! Sharing a diagnosis by link: the report (never the checkpoint) redacted, compressed and carried in the URL
//! fragment, which browsers never send to a server.
//!
//! ```text
//! Report JSON ─► redact (placeholders) ─► envelope {format, inspector_version, redacted, cut_notes, report}
//!            ─► zlib ─► base64url ─► "report=1.<payload>"   (cut to the size budget, with notes)
//! "…#report=1.<payload>" ─► the format number picks the reader (v1 kept forever) ─► bounded inflate ─► checks
//! ```
//!
//! * [`redact`] replaces query/run ids, paths, hosts and buckets, topics, tables and secret-looking conf values by
//!   stable placeholders (see [`Category`]); on by default, each category switchable off. File contents and
//!   state rows are never carried, whatever the settings.
//! * [`share_link`] builds the fragment within a size budget ([`DEFAULT_BUDGET_BYTES`], 16 KiB of fragment): when
//!   over, long lists are cut (evidence per finding first, then batch rows, state sizes, DStream classes), each
//!   cut noted in the envelope's `cut_notes` and, for evidence, by a note item in the finding itself.
//! * [`open_fragment`] reads a fragment (or a whole URL): bounded ([`MAX_FRAGMENT_BYTES`] of text,
//!   [`MAX_INFLATED_BYTES`] inflated: a bomb in a link is refused), and damaged, truncated or hostile input gives
//!   a typed [`ShareError`], never a panic. The front ends must still render the report as text only.
//!
//! Pure: no I/O. The same report and settings always give the same link.

mod redact;
mod text_scan;
pub mod v1;

pub use redact::{redact, Category, Redacted, Redaction};

use crate::report::{Report, INSPECTOR_VERSION};
use serde::Serialize;
use serde_json::{json, Value};
use std::collections::BTreeMap;

/// The newest link format this inspector writes (the number before the `.` in `report=1.…`).
pub const FORMAT_VERSION: u32 = v1::VERSION;

/// The fragment parameter that carries a report: `#report=<format>.<payload>`.
pub const FRAGMENT_KEY: &str = "report";

/// Default size budget of the fragment (`report=…` without the `#`), in bytes: 16 KiB, well inside what chat
/// tools, ticket systems and browsers keep intact.
pub const DEFAULT_BUDGET_BYTES: usize = 16 * 1024;

/// Longest fragment [`open_fragment`] reads, in bytes; longer input is refused before any decoding.
pub const MAX_FRAGMENT_BYTES: usize = 512 * 1024;

/// Most bytes a link's payload may inflate to; more is refused as a compression bomb.
pub const MAX_INFLATED_BYTES: usize = 8 * 1024 * 1024;

/// How to build a link.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ShareOptions {
    /// Which categories are redacted (default: all).
    pub redaction: Redaction,
    /// Largest fragment in bytes (default [`DEFAULT_BUDGET_BYTES`], at most [`MAX_FRAGMENT_BYTES`]).
    pub budget_bytes: usize,
}

impl Default for ShareOptions {
    fn default() -> Self {
        ShareOptions { redaction: Redaction::default(), budget_bytes: DEFAULT_BUDGET_BYTES }
    }
}

/// A built link and what it carries.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ShareLink {
    /// The fragment without the `#`: `report=1.<payload>`.
    pub fragment: String,
    /// Length of `fragment` in bytes (ASCII).
    pub bytes: usize,
    /// The budget it was built for, in bytes.
    pub budget_bytes: usize,
    /// What was cut to fit the budget, for people (empty when nothing was cut).
    pub cut_notes: Vec<String>,
    /// The categories that were redacted.
    pub redacted: Vec<Category>,
    /// Distinct values replaced per category.
    pub replaced: BTreeMap<Category, usize>,
    /// JSON pointers of fields removed because they held file contents or state rows.
    pub stripped: Vec<String>,
    /// Exactly the report the link carries (redacted and cut): the preview to show before sharing.
    pub report: Value,
}

impl ShareLink {
    /// The full link for an inspector at `base` (e.g. `https://team.example/inspector/`): any fragment `base`
    /// already has is dropped, its query (e.g. `?spark-version=4.1.4`) is kept. `None` or `""`: `#report=…` alone,
    /// to append to the address of any copy of the inspector.
    pub fn url(&self, base: Option<&str>) -> String {
        let base = base.map(str::trim).unwrap_or("");
        let base = base.split('#').next().unwrap_or("");
        format!("{base}#{}", self.fragment)
    }
}

/// A report read from a link.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SharedReport {
    /// The link's format number.
    pub format_version: u32,
    /// Version of the inspector that made the link.
    pub inspector_version: String,
    /// The categories redacted when the link was made (names as in [`Category::name`]; unknown names of newer
    /// versions are kept as they are).
    pub redacted: Vec<String>,
    /// What was cut to fit the link's budget.
    pub cut_notes: Vec<String>,
    /// The report as carried (a [`Report`]'s JSON; fields of other versions are kept).
    pub report: Value,
}

impl SharedReport {
    /// The report as this version's typed [`Report`] (fails for a report whose required fields differ).
    pub fn typed(&self) -> Result<Report, ShareError> {
        serde_json::from_value(self.report.clone()).map_err(|e| ShareError::NotAReport { detail: e.to_string() })
    }
}

/// Why a link could not be made or read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ShareError {
    /// The text has no `report=` parameter.
    NoReport,
    /// The format number is not one this inspector reads (`newer` when it is higher than [`FORMAT_VERSION`]).
    UnknownFormat {
        /// The number or text found before the `.` (at most 16 characters).
        version: String,
        /// True when the link comes from a newer inspector.
        newer: bool,
    },
    /// The fragment is longer than [`MAX_FRAGMENT_BYTES`].
    TooLong {
        /// Its length in bytes.
        bytes: usize,
        /// The limit.
        max: usize,
    },
    /// A character outside base64url.
    BadEncoding {
        /// Position in the payload (0-based, after `report=N.`).
        offset: usize,
        /// The character.
        byte: char,
    },
    /// The data ends early: the link was cut (by a chat tool, a terminal, a copy).
    Truncated {
        /// What ended early.
        detail: String,
    },
    /// The compressed data or its checksum is wrong: the link was changed.
    Corrupt {
        /// What is wrong.
        detail: String,
    },
    /// The payload inflates past [`MAX_INFLATED_BYTES`].
    TooLarge {
        /// The limit in bytes.
        max: usize,
    },
    /// The inflated text is not JSON.
    NotJson {
        /// The parser's message.
        detail: String,
    },
    /// The JSON is not a shared report (envelope or report shape).
    NotAReport {
        /// What is missing.
        detail: String,
    },
    /// Making a link: the report does not fit the budget even after every cut.
    OverBudget {
        /// Smallest fragment reached, in bytes.
        bytes: usize,
        /// The budget.
        budget: usize,
    },
    /// Making a link: the input is not a report.
    BadInput {
        /// What is wrong.
        detail: String,
    },
}

impl ShareError {
    /// A stable kebab-case name for front ends: `no-report`, `unknown-format`, `too-long`, `bad-encoding`,
    /// `truncated`, `corrupt`, `too-large`, `not-json`, `not-a-report`, `over-budget`, `bad-input`.
    pub fn kind(&self) -> &'static str {
        match self {
            ShareError::NoReport => "no-report",
            ShareError::UnknownFormat { .. } => "unknown-format",
            ShareError::TooLong { .. } => "too-long",
            ShareError::BadEncoding { .. } => "bad-encoding",
            ShareError::Truncated { .. } => "truncated",
            ShareError::Corrupt { .. } => "corrupt",
            ShareError::TooLarge { .. } => "too-large",
            ShareError::NotJson { .. } => "not-json",
            ShareError::NotAReport { .. } => "not-a-report",
            ShareError::OverBudget { .. } => "over-budget",
            ShareError::BadInput { .. } => "bad-input",
        }
    }
}

impl std::fmt::Display for ShareError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ShareError::NoReport => write!(f, "this link carries no report (no \"#report=\" part)"),
            ShareError::UnknownFormat { version, newer: true } => write!(
                f,
                "this link was made by a newer inspector (link format {version}; this page reads up to format \
                 {FORMAT_VERSION}): open it on an up-to-date copy of the inspector"
            ),
            ShareError::UnknownFormat { version, newer: false } => {
                write!(f, "this link's format ({version:?}) is not one the inspector knows: the link is damaged")
            }
            ShareError::TooLong { bytes, max } => {
                write!(f, "this link is too long to be a shared report ({bytes} bytes; at most {max})")
            }
            ShareError::BadEncoding { offset, byte } => write!(
                f,
                "this link is damaged: character {byte:?} at position {offset} of its data is not allowed there"
            ),
            ShareError::Truncated { detail } => {
                write!(f, "this link is cut short ({detail}): copy the whole link again")
            }
            ShareError::Corrupt { detail } => write!(f, "this link is damaged: {detail}"),
            ShareError::TooLarge { max } => write!(
                f,
                "this link's data unpacks to more than {} MiB: refused (a shared report is far smaller)",
                max / (1024 * 1024)
            ),
            ShareError::NotJson { detail } => write!(f, "this link is damaged: its data is not a report ({detail})"),
            ShareError::NotAReport { detail } => write!(f, "this link does not hold a shared report: {detail}"),
            ShareError::OverBudget { bytes, budget } => write!(
                f,
                "the report does not fit a share link of {budget} bytes even with its lists cut ({bytes} bytes); \
                 allow a larger link or share the JSON report as a file"
            ),
            ShareError::BadInput { detail } => write!(f, "not a report: {detail}"),
        }
    }
}

impl std::error::Error for ShareError {}

/// Builds the share link of a typed report. See [`share_link`].
pub fn share_report(report: &Report, options: &ShareOptions) -> Result<ShareLink, ShareError> {
    let v = serde_json::to_value(report).map_err(|e| ShareError::BadInput { detail: e.to_string() })?;
    share_link(&v, options)
}

/// Builds the share link of a report given as JSON (the CLI's `diagnose --json`): redacts it, then encodes it
/// in the newest format within `options.budget_bytes`, cutting long lists (with notes) when over.
///
/// Errors: [`ShareError::BadInput`] when `report` has no `checkpoints` list; [`ShareError::OverBudget`] when even
/// the most cut version is over the budget.
pub fn share_link(report: &Value, options: &ShareOptions) -> Result<ShareLink, ShareError> {
    if !report.get("checkpoints").is_some_and(Value::is_array) {
        return Err(ShareError::BadInput { detail: "no \"checkpoints\" list".into() });
    }
    let budget = options.budget_bytes.min(MAX_FRAGMENT_BYTES);
    let redacted = redact(report, &options.redaction);
    let categories = options.redaction.categories();
    let mut smallest = usize::MAX;
    for level in CUT_LEVELS {
        let mut r = redacted.report.clone();
        let notes = cut(&mut r, level, budget);
        let fragment = fragment_of(&r, &categories, &notes);
        smallest = smallest.min(fragment.len());
        if fragment.len() <= budget {
            return Ok(ShareLink {
                bytes: fragment.len(),
                fragment,
                budget_bytes: budget,
                cut_notes: notes,
                redacted: categories,
                replaced: redacted.counts,
                stripped: redacted.stripped,
                report: r,
            });
        }
    }
    Err(ShareError::OverBudget { bytes: smallest, budget })
}

fn fragment_of(report: &Value, categories: &[Category], notes: &[String]) -> String {
    let env = json!({
        "format": v1::VERSION,
        "inspector_version": INSPECTOR_VERSION,
        "redacted": categories.iter().map(|c| c.name()).collect::<Vec<_>>(),
        "cut_notes": notes,
        "report": report,
    });
    let text = serde_json::to_vec(&env).unwrap_or_default();
    format!("{FRAGMENT_KEY}={}.{}", v1::VERSION, v1::write(&text))
}

/// Reads a shared report from a fragment (`report=1.…`, `#report=1.…`, or a whole URL; other `&`-separated
/// fragment parameters are ignored; whitespace inside, as left by line-wrapping, is ignored).
///
/// Errors: every [`ShareError`] kind but `over-budget` / `bad-input`; never panics, whatever the input.
pub fn open_fragment(input: &str) -> Result<SharedReport, ShareError> {
    if input.len() > MAX_FRAGMENT_BYTES + 4096 {
        return Err(ShareError::TooLong { bytes: input.len(), max: MAX_FRAGMENT_BYTES });
    }
    let s = input.trim();
    let s = match s.find('#') {
        Some(i) => &s[i + 1..],
        None => s,
    };
    let key = format!("{FRAGMENT_KEY}=");
    let value = s.split('&').find_map(|p| p.trim().strip_prefix(key.as_str())).ok_or(ShareError::NoReport)?;
    let value: String = value.chars().filter(|c| !c.is_whitespace()).collect();
    if value.len() > MAX_FRAGMENT_BYTES {
        return Err(ShareError::TooLong { bytes: value.len(), max: MAX_FRAGMENT_BYTES });
    }
    let (version, payload) = match value.split_once('.') {
        Some(x) => x,
        None => {
            return Err(ShareError::UnknownFormat { version: value.chars().take(16).collect(), newer: false });
        }
    };
    let unknown = |newer| ShareError::UnknownFormat { version: version.chars().take(16).collect(), newer };
    if version.is_empty() || version.len() > 9 || !version.bytes().all(|b| b.is_ascii_digit()) {
        return Err(unknown(false));
    }
    match version.parse::<u32>() {
        Ok(1) => v1::read(payload),
        Ok(n) if n > FORMAT_VERSION => Err(unknown(true)),
        _ => Err(unknown(false)),
    }
}

/// One step of cutting: the most items kept per list (`None` = not cut).
#[derive(Clone, Copy)]
struct CutLevel {
    evidence: Option<usize>,
    batches: Option<usize>,
    state_size: Option<usize>,
    classes: Option<usize>,
    /// Steps kept per way out of the restart plan (a step per source when a batch lists a thousand sources).
    steps: Option<usize>,
    /// Sources kept (the first ones, by index).
    sources: Option<usize>,
}

const fn lv(
    evidence: Option<usize>,
    batches: Option<usize>,
    state_size: Option<usize>,
    classes: Option<usize>,
) -> CutLevel {
    CutLevel { evidence, batches, state_size, classes, steps: None, sources: None }
}

/// [`lv`] with the plan's steps per way out and the sources cut to `keep` as well.
const fn lvs(level: CutLevel, keep: usize) -> CutLevel {
    CutLevel { steps: Some(keep), sources: Some(keep), ..level }
}

/// From no cut to the most cut: evidence lists first (the issue's "long evidence lists"), then the batch rows,
/// the state size series and the DStream class list, with the restart plan's steps per way out and the sources
/// (one of each per source line of an offsets file: a thousand of them are examined).
const CUT_LEVELS: [CutLevel; 12] = [
    lv(None, None, None, None),
    lv(Some(50), None, None, None),
    lv(Some(20), None, None, None),
    lv(Some(10), None, None, None),
    lv(Some(5), None, None, None),
    lv(Some(3), None, None, None),
    lvs(lv(Some(3), Some(50), Some(20), None), 50),
    lvs(lv(Some(2), Some(20), Some(10), Some(100)), 20),
    lvs(lv(Some(1), Some(10), Some(5), Some(50)), 10),
    lvs(lv(Some(1), Some(5), Some(3), Some(20)), 5),
    lvs(lv(Some(1), Some(3), Some(1), Some(10)), 3),
    lvs(lv(Some(0), Some(1), Some(0), Some(0)), 1),
];

fn kib(bytes: usize) -> String {
    if bytes.is_multiple_of(1024) {
        format!("{} KB", bytes / 1024)
    } else {
        format!("{bytes} bytes")
    }
}

/// Applies one cut level to a (redacted) report; returns the notes for people.
fn cut(report: &mut Value, level: CutLevel, budget: usize) -> Vec<String> {
    let mut notes = Vec::new();
    let why = format!("to fit the share link's {} budget", kib(budget));
    let Some(cps) = report.get_mut("checkpoints").and_then(Value::as_array_mut) else { return notes };
    let many = cps.len() > 1;
    for cp in cps.iter_mut() {
        let label = match cp.get("root").and_then(Value::as_str) {
            Some(r) if many && !r.is_empty() => format!(" (checkpoint {r})"),
            _ => String::new(),
        };
        if let Some(keep) = level.evidence {
            let (mut findings_cut, mut items_cut) = (0, 0);
            for f in cp.get_mut("findings").and_then(Value::as_array_mut).into_iter().flatten() {
                let code = f.get("code").and_then(Value::as_str).unwrap_or("").to_string();
                let Some(ev) = f.get_mut("evidence").and_then(Value::as_array_mut) else { continue };
                if ev.len() > keep.max(1) || (keep == 0 && !ev.is_empty()) {
                    let dropped = ev.len() - keep;
                    ev.truncate(keep);
                    ev.push(json!({
                        "path": "",
                        "detail": format!(
                            "{dropped} more evidence item{} of {code} not in this link (cut {why}); diagnose the \
                             checkpoint itself for the full list",
                            if dropped == 1 { "" } else { "s" }
                        ),
                    }));
                    findings_cut += 1;
                    items_cut += dropped;
                }
            }
            if items_cut > 0 {
                notes.push(format!(
                    "evidence{label}: {items_cut} item{} of {findings_cut} finding{} cut {why} (each finding keeps \
                     its first {keep} and says how many more there were)",
                    if items_cut == 1 { "" } else { "s" },
                    if findings_cut == 1 { "" } else { "s" }
                ));
            }
        }
        if let Some(keep) = level.batches {
            if let Some(b) = cp.get_mut("batches").and_then(Value::as_array_mut) {
                if b.len() > keep {
                    let total = b.len();
                    b.drain(..total - keep);
                    notes.push(format!("batches{label}: only the last {keep} of {total} batch rows kept {why}"));
                }
            }
        }
        if let Some(keep) = level.state_size {
            let mut cut_ops = 0;
            for op in cp.get_mut("operators").and_then(Value::as_array_mut).into_iter().flatten() {
                if let Some(s) = op.get_mut("state_size").and_then(Value::as_array_mut) {
                    if s.len() > keep {
                        let total = s.len();
                        s.drain(..total - keep);
                        cut_ops += 1;
                    }
                }
            }
            if cut_ops > 0 {
                notes.push(format!(
                    "state size{label}: only the last {keep} versions of {cut_ops} operator{} kept {why}",
                    if cut_ops == 1 { "" } else { "s" }
                ));
            }
        }
        if let Some(keep) = level.steps {
            let mut ways_cut = 0;
            for w in cp.pointer_mut("/restart_plan/ways_out").and_then(Value::as_array_mut).into_iter().flatten() {
                if let Some(steps) = w.get_mut("steps").and_then(Value::as_array_mut) {
                    if steps.len() > keep + 1 {
                        let dropped = steps.len() - keep;
                        steps.truncate(keep);
                        steps.push(Value::String(format!(
                            "… {dropped} more steps not in this link (cut {why}); diagnose the checkpoint itself for \
                             every step"
                        )));
                        ways_cut += 1;
                    }
                }
            }
            if ways_cut > 0 {
                notes.push(format!(
                    "restart plan{label}: only the first {keep} steps of {ways_cut} way{} out kept {why}",
                    if ways_cut == 1 { "" } else { "s" }
                ));
            }
        }
        if let Some(keep) = level.sources {
            if let Some(s) = cp.get_mut("sources").and_then(Value::as_array_mut) {
                if s.len() > keep {
                    let total = s.len();
                    s.truncate(keep);
                    notes.push(format!("sources{label}: only the first {keep} of {total} kept {why}"));
                }
            }
        }
        if let Some(keep) = level.classes {
            if let Some(c) = cp.pointer_mut("/dstream/classes").and_then(Value::as_array_mut) {
                if c.len() > keep {
                    let total = c.len();
                    c.truncate(keep);
                    notes.push(format!("DStream classes{label}: only the first {keep} of {total} kept {why}"));
                }
            }
        }
    }
    notes
}

#[cfg(test)]
mod tests;
