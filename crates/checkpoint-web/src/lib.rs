//! `checkpoint-web`: the browser front end of the Spark checkpoint inspector, as a thin layer over
//! `checkpoint-core`.
//!
//! * [`diagnose_archive`] / [`diagnose_zip_bytes`]: run the core's diagnosis on an archive with the options the
//!   page collects ([`Options`]: Spark version, pasted error text, "now").
//! * [`render`]: the report as Markdown (for a ticket) and as a short plain-text summary (for the clipboard).
//! * [`blob`]: `Read + Seek` over a browser `Blob` (a dropped `File`) using `Blob.slice` + `FileReaderSync`, so a
//!   multi-gigabyte zip is read lazily inside a Web Worker; and a lazy [`checkpoint_core::Archive`] over the files
//!   of a dropped folder.
//! * [`worker`]: the Web Worker's message loop (see `web/js/worker-client.js` for the other side of the protocol).
//! * [`state`]: the State tab's paged state browser over the core's state reader (decoded only on request).
//! * [`Inspector`] ([`inspector`]): the one type exported to JavaScript (ruff's `ruff_wasm::Workspace` style): the
//!   page presents and exports reports through it; tests and scripts diagnose bytes with it.
//! * [`share`]: share links (a redacted report in the URL fragment), as `Inspector` methods.
//!
//! `Inspector`, [`render`] and [`share`] are the `page` feature (on by default): the page's wasm has them, the
//! worker's is built without them, since wasm-bindgen would export the class from every bin that links the lib.
//!
//! Nothing here does network I/O; the page's CSP forbids it anyway.
//!
//! ## Plumbing: `gloo` where it serves, and where it cannot
//!
//! * Event listeners: the worker's `message` listener is a `gloo_events::EventListener` (no hand-kept `Closure`).
//! * Worker messages: plain serde structs, read and written with `serde_wasm_bindgen` (the `File`/`Blob`, the
//!   request id and entry bytes pass through untouched with `serde_wasm_bindgen::preserve`), instead of
//!   `Reflect::get`/`set` by hand. `gloo-worker` cannot serve: it is a Rust-to-Rust protocol (its own registrar and
//!   bincode messages), while the other side here is the page's plain JavaScript (`web/js/worker-client.js`), and
//!   the single file starts the worker from a `blob:` URL that gloo-worker's spawner does not cover.
//! * Serde to `JsValue`: `serde_wasm_bindgen` (what gloo's own crates build on for typed values);
//!   `gloo_utils::format::JsValueSerdeExt` goes through `JSON.stringify`/`parse`, a copy more per message.
//! * Blob and file access: `gloo-file` reads only asynchronously (`FileReader` callbacks/futures); the zip reader
//!   needs `Read + Seek` and reads synchronously inside the worker, which only `FileReaderSync` offers, so
//!   [`blob::BlobReader`] stays on `web_sys`.
//! * Timers: the worker needs none (progress is throttled by the clock, `Date.now()`); the page's timers are in JS.

#![forbid(unsafe_code)]
#![warn(missing_docs)]

pub mod blob;
#[cfg(feature = "page")]
pub mod inspector;
#[cfg(feature = "page")]
pub mod render;
#[cfg(feature = "page")]
pub mod share;
pub mod state;
pub mod warm_up;
pub mod worker;

#[cfg(feature = "page")]
pub use inspector::Inspector;

use checkpoint_core::{Archive, ArchiveError, Context, Limits, Report, SparkVersion, ZipInput};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::io::Cursor;

/// What the page passes along with an input. Every field is optional (JSON: `{"spark_version":"4.1.4",
/// "error_text":"...","now_ms":1732950000000,"session_conf":{"k":"v"},"verify_all":false}`).
#[derive(Debug, Clone, Default, Deserialize, Serialize, PartialEq)]
#[serde(default)]
pub struct Options {
    /// The Spark version the restart will use (`X.Y` or `X.Y.Z`); `None` or `""` = the core's default.
    pub spark_version: Option<String>,
    /// The error text the user pasted; `None` or blank = none.
    pub error_text: Option<String>,
    /// "Now" in milliseconds since the epoch (the page passes `Date.now()`).
    pub now_ms: Option<f64>,
    /// Session confs the restarted query sets (`--conf k=v`).
    pub session_conf: BTreeMap<String, String>,
    /// Verify every state file a restart loads and check every row, with no read budget (the page's "Verify every
    /// state file" box; the CLI's `--deep`). `false` = the core's default budget.
    pub verify_all: bool,
    /// The Kafka brokers' earliest offsets as pasted: Spark's JSON `{"topic":{"0":123}}` or the lines
    /// `kafka-get-offsets.sh --time -2` prints; `None` or blank = not given.
    pub kafka_earliest: Option<String>,
    /// The Kafka brokers' latest offsets (`kafka-get-offsets.sh --time -1`), in the same forms.
    pub kafka_latest: Option<String>,
    /// The paths the file sources read now, a line each: `N=PATH` or `PATH` (source 0); `None` or blank = not
    /// given.
    pub source_paths: Option<String>,
    /// How often the worker posts progress while it reads, at most, in ms; `None` = every 100 ms (the page's
    /// tests lower it, so that a fast machine still shows several steps of a short read).
    pub progress_ms: Option<f64>,
}

impl Options {
    /// Turns the options into the core's [`Context`].
    ///
    /// Errors: an [`InputError`] of kind `bad-option` for an unparsable Spark version or a non-finite `now_ms`.
    pub fn to_context(&self) -> Result<Context, InputError> {
        let spark_version = match self.spark_version.as_deref().map(str::trim) {
            None | Some("") => None,
            Some(s) => Some(s.parse::<SparkVersion>().map_err(|e| InputError::new("bad-option", e))?),
        };
        let now_ms = match self.now_ms {
            None => None,
            Some(v) if v.is_finite() && v.abs() < 9.0e15 => Some(v as i64),
            Some(v) => return Err(InputError::new("bad-option", format!("now_ms is not a time: {v}"))),
        };
        let error_text = self.error_text.as_ref().filter(|t| !t.trim().is_empty()).cloned();
        Ok(Context {
            spark_version,
            now_ms,
            error_text,
            session_conf: self.session_conf.clone(),
            kafka_earliest: kafka(&self.kafka_earliest, "earliest")?,
            kafka_latest: kafka(&self.kafka_latest, "latest")?,
            source_paths: source_paths(self.source_paths.as_deref())?,
            delta_logs: Vec::new(),
            sink_logs: Vec::new(),
            verify_budget_bytes: self.verify_all.then_some(u64::MAX),
            verdict_log_files: None,
            // The page keeps the default file log budgets: the worker's memory is bounded.
            file_log_entry_bytes: None,
            file_log_bytes: None,
        })
    }
}

/// The source paths box, a line each (blank lines skipped); a line without a path is a `bad-option` error.
fn source_paths(text: Option<&str>) -> Result<BTreeMap<u32, String>, InputError> {
    let mut out = BTreeMap::new();
    for line in text.unwrap_or("").lines().filter(|l| !l.trim().is_empty()) {
        let (n, p) = checkpoint_core::context::parse_source_path(line)
            .map_err(|e| InputError::new("bad-option", format!("source paths: {e}")))?;
        out.insert(n, p);
    }
    Ok(out)
}

/// Pasted Kafka offsets (blank = not given); text that is neither form is a `bad-option` error naming the line.
fn kafka(
    text: &Option<String>,
    which: &str,
) -> Result<Option<checkpoint_core::kafka_offsets::KafkaOffsets>, InputError> {
    match text.as_deref().map(str::trim) {
        None | Some("") => Ok(None),
        Some(t) => checkpoint_core::kafka_offsets::parse(t)
            .map(Some)
            .map_err(|e| InputError::new("bad-option", format!("Kafka {which} offsets: {e}"))),
    }
}

/// Why an input could not be diagnosed at all (the page shows `message`; `kind` selects the wording and styling).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct InputError {
    /// `not-a-zip` | `empty` | `over-limit` | `bad-path` | `not-found` | `corrupt` | `io` | `bad-option`.
    pub kind: String,
    /// One clear sentence for people.
    pub message: String,
}

impl InputError {
    /// Builds an error of a kind.
    pub fn new(kind: &str, message: impl Into<String>) -> Self {
        InputError { kind: kind.to_string(), message: message.into() }
    }

    /// Maps an archive error to the page's kinds, naming the input.
    pub fn from_archive(name: &str, e: &ArchiveError) -> Self {
        let kind = match e {
            ArchiveError::NotAZip { .. } => "not-a-zip",
            ArchiveError::Empty => "empty",
            ArchiveError::OverLimit { .. } => "over-limit",
            ArchiveError::BadPath { .. } => "bad-path",
            ArchiveError::NotFound { .. } => "not-found",
            ArchiveError::Corrupt { .. } => "corrupt",
            ArchiveError::UnsupportedCompression { .. } => "unsupported-compression",
            ArchiveError::Overlapping { .. } => "overlapping-entries",
            ArchiveError::Inaccessible { .. } => "inaccessible",
            ArchiveError::Io { .. } => "io",
        };
        let message = match e {
            // The reason says what the input is instead and what to give.
            ArchiveError::NotAZip { reason } => format!("{name} is not a zip archive: {reason}."),
            ArchiveError::Empty => format!("{name} is empty (0 bytes)."),
            _ => format!("{name}: {e}"),
        };
        InputError { kind: kind.to_string(), message }
    }
}

impl std::fmt::Display for InputError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: {}", self.kind, self.message)
    }
}

impl std::error::Error for InputError {}

/// The limits the page applies to an input (the core's defaults).
pub fn limits() -> Limits {
    Limits::default()
}

/// Runs the core's diagnosis on any archive with the page's options.
///
/// Errors: `bad-option` when the options do not parse (the archive itself was already opened by the caller).
pub fn diagnose_archive(archive: &mut dyn Archive, options: &Options) -> Result<Report, InputError> {
    diagnose_archive_with_logs(archive, options, &[])
}

/// Diagnoses an archive with the Delta source tables' `_delta_log`s the user dropped on the page's second
/// target (read once by [`read_delta_logs`]).
///
/// Errors: an [`InputError`] of kind `bad-option` (see [`Options::to_context`]).
pub fn diagnose_archive_with_logs(
    archive: &mut dyn Archive,
    options: &Options,
    delta_logs: &[checkpoint_core::delta::DeltaLog],
) -> Result<Report, InputError> {
    diagnose_verdict_first(archive, options, delta_logs, &mut |_| ())
}

/// [`diagnose_archive_with_logs`] with the verdict first ([`checkpoint_core::diagnose_progressive`]):
/// `on_verdict` gets the report of what a restart reads before the older history is read (not called when
/// there is nothing more to read); the full report is returned.
pub fn diagnose_verdict_first(
    archive: &mut dyn Archive,
    options: &Options,
    delta_logs: &[checkpoint_core::delta::DeltaLog],
    on_verdict: &mut dyn FnMut(&Report),
) -> Result<Report, InputError> {
    let mut ctx = options.to_context()?;
    ctx.delta_logs = delta_logs.to_vec();
    Ok(checkpoint_core::diagnose_progressive(archive, &ctx, on_verdict))
}

/// Reads the Delta table logs of a dropped zip or folder (a `_delta_log/` folder, a table folder holding one, or
/// the `_delta_log` folder itself).
///
/// Errors: `no-delta-log` when the input holds none.
pub fn read_delta_logs(archive: &mut dyn Archive) -> Result<Vec<checkpoint_core::delta::DeltaLog>, InputError> {
    let logs = checkpoint_core::delta::reader::read_delta_logs(archive);
    if logs.is_empty() {
        return Err(InputError::new(
            "no-delta-log",
            format!(
                "{} holds no Delta log: no _delta_log/ folder, and no <version>.json or checkpoint file at its top level. Zip the table's _delta_log folder (cd <table path> && zip -r delta_log.zip _delta_log).",
                archive.name()
            ),
        ));
    }
    Ok(logs)
}

/// Opens zip bytes held in memory and diagnoses them.
///
/// Errors: `empty`, `not-a-zip`, `over-limit`, `bad-path` (from [`ZipInput::open`]), `bad-option`.
pub fn diagnose_zip_bytes(bytes: &[u8], name: &str, options: &Options) -> Result<Report, InputError> {
    let mut zip = ZipInput::open(Cursor::new(bytes), bytes.len() as u64, name, limits())
        .map_err(|e| InputError::from_archive(name, &e))?;
    diagnose_archive(&mut zip, options)
}

/// Reads one entry of zip bytes held in memory, at most `max_bytes` (for "show this file").
///
/// Errors: as [`diagnose_zip_bytes`] for the archive, `not-found` / `over-limit` / `corrupt` for the entry.
pub fn read_zip_entry(bytes: &[u8], name: &str, path: &str, max_bytes: u64) -> Result<Vec<u8>, InputError> {
    let mut zip = ZipInput::open(Cursor::new(bytes), bytes.len() as u64, name, limits())
        .map_err(|e| InputError::from_archive(name, &e))?;
    zip.read(path, max_bytes).map_err(|e| InputError::from_archive(name, &e))
}

/// Largest file the page shows on click, in bytes.
pub const MAX_SHOWN_ENTRY_BYTES: u64 = 256 * 1024;

/// Most entries listed back to the page (the listing of a huge archive is cut there and says so).
pub const MAX_LISTED_ENTRIES: usize = 20_000;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn verify_all_lifts_the_read_budget_and_defaults_to_the_cores_budget() {
        let all: Options = serde_json::from_str(r#"{"verify_all":true}"#).unwrap();
        assert_eq!(all.to_context().unwrap().verify_budget_bytes, Some(u64::MAX));
        let default: Options = serde_json::from_str("{}").unwrap();
        assert_eq!(default.to_context().unwrap().verify_budget_bytes, None);
    }

    #[test]
    fn pasted_kafka_offsets_in_either_form() {
        let o: Options =
            serde_json::from_str(r#"{"kafka_earliest":"t:0:5\nt:1:7","kafka_latest":"{\"t\":{\"0\":9}}"}"#).unwrap();
        let ctx = o.to_context().unwrap();
        assert_eq!(ctx.kafka_earliest.unwrap().get("t", 1), Some(7));
        assert_eq!(ctx.kafka_latest.unwrap().get("t", 0), Some(9));
        let bad: Options = serde_json::from_str(r#"{"kafka_earliest":"not offsets"}"#).unwrap();
        let e = bad.to_context().unwrap_err();
        assert_eq!(e.kind, "bad-option");
        assert!(e.message.contains("line 1"), "{}", e.message);
        let blank: Options = serde_json::from_str(r#"{"kafka_latest":"  "}"#).unwrap();
        assert!(blank.to_context().unwrap().kafka_latest.is_none());
    }

    #[test]
    fn typed_source_paths_a_line_each() {
        let o: Options =
            serde_json::from_str(r#"{"source_paths":"1=s3a://b/in/date=2026-12-01\n\n  /data/x  "}"#).unwrap();
        let paths = o.to_context().unwrap().source_paths;
        assert_eq!(paths.get(&1).map(String::as_str), Some("s3a://b/in/date=2026-12-01"));
        assert_eq!(paths.get(&0).map(String::as_str), Some("/data/x"), "a line without N= is source 0");
        assert_eq!(paths.len(), 2);
        let bad: Options = serde_json::from_str(r#"{"source_paths":"3="}"#).unwrap();
        let e = bad.to_context().unwrap_err();
        assert_eq!(e.kind, "bad-option");
        assert!(e.message.contains("source paths"), "{}", e.message);
        let blank: Options = serde_json::from_str(r#"{"source_paths":"   "}"#).unwrap();
        assert!(blank.to_context().unwrap().source_paths.is_empty());
    }
}
