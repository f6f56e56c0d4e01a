//! The Web Worker: receives inputs from the page, runs the diagnosis off the main thread and posts results back.
//!
//! Protocol (all messages are plain objects; `id` echoes the request):
//!
//! | page → worker | fields |
//! |---|---|
//! | `open-file` | `id`, `file` (a `File`/`Blob`), `name`, `options` ([`crate::Options`] as an object) |
//! | `open-folder` | `id`, `name`, `files`: `[{path, file}]` (paths relative to the dropped folder) |
//! | `rediagnose` | `id`, `options` — runs again on the current input (e.g. another Spark version) |
//! | `delta-log-file` | `id`, `file`, `name`, `options` — a Delta source table's `_delta_log` zip; re-diagnoses the held input with it |
//! | `delta-log-folder` | `id`, `name`, `files`, `options` — the same for a dropped `_delta_log` (or table) folder |
//! | `delta-log-clear` | `id`, `options` — forget the Delta logs; re-diagnoses the held input |
//! | `read-entry` | `id`, `path` (archive path) — one file's bytes, at most [`crate::MAX_SHOWN_ENTRY_BYTES`] |
//! | `state-overview` | `id` — operators, stores, schemas, sizes by version ([`crate::state::state_overview`]) |
//! | `state-rows` | `id`, `selection` ([`crate::state::StateSelection`]), `partition` (number or null), `search`, `page`, `page_size` |
//!
//! | worker → page | fields |
//! |---|---|
//! | `ready` | `version` (inspector version) — sent once the wasm is running |
//! | `progress` | `id`, `done`, `total` (files read / files listed), `path` (the file being read) |
//! | `delta-log` | `id`, `tables` (`[{dir, table_id, versions}]`) — the Delta logs were read and no checkpoint is open yet |
//! | `verdict` | `id`, `report_head`, `presented` (as in `report`, of the report built from what a restart reads, before the older offsets and commits files are read: `checkpoint_core::diagnose_progressive`), `ms`; sent only when there is more history to read, and always followed by `report` (or `error`) |
//! | `report` | `id`, `report` (JSON text of the contract's `Report`), `report_head` (the same without the checkpoints' `batches`), `batches` (each checkpoint's `batches` as columns of typed arrays: `batch_columns`), `presented` (JSON text: `present::present` of each checkpoint for the page), `entry_paths`, `entry_ends`, `entry_sizes` (the listing, at most [`crate::MAX_LISTED_ENTRIES`] files: every path in one string, where each ends in UTF-16 units, the sizes), `entries_total`, `ms`, `bytes_read`, `reads` (slices of the dropped zip), `read_ms` (time in those reads), `wasm_bytes` (the worker's wasm memory) |
//! | `entry` | `id`, `path`, `size`, `bytes` (`Uint8Array`) |
//! | `state-overview` | `id`, `overview` (JSON text) |
//! | `state-rows` | `id`, `result` (JSON text of [`crate::state::LoadedState::page`]) |
//! | `state-error` | `id`, `error` (`{path, offset, message, error_class}`) — the state could not be decoded |
//! | `error` | `id`, `kind` (see [`crate::InputError`]), `message` |

use crate::blob::{BlobZip, FilesArchive, ReadStats};
use crate::state::StateSelection;
use crate::{diagnose_verdict_first, limits, InputError, Options, MAX_LISTED_ENTRIES, MAX_SHOWN_ENTRY_BYTES};
use checkpoint_core::delta::DeltaLog;
use checkpoint_core::{Archive, ArchiveError, Entry};
use gloo_events::EventListener;
use js_sys::Uint8Array;
use serde::{Deserialize, Serialize};
use std::cell::RefCell;
use std::rc::Rc;
use wasm_bindgen::prelude::*;
use web_sys::{DedicatedWorkerGlobalScope, File, MessageEvent};

/// The input the worker holds between requests (so a new Spark version re-runs without a new drop).
#[derive(Clone)]
pub(crate) enum Input {
    Zip { file: web_sys::Blob, name: String },
    Folder { name: String, files: Vec<(String, File)> },
}

thread_local! {
    static INPUT: RefCell<Option<Input>> = const { RefCell::new(None) };
    /// The last decoded state selection (kept for paging and search; dropped with a new input).
    static LOADED: RefCell<Option<crate::state::LoadedState>> = const { RefCell::new(None) };
    /// The Delta source tables' logs dropped on the second target (kept across checkpoint drops).
    static DELTA_LOGS: RefCell<Vec<DeltaLog>> = const { RefCell::new(Vec::new()) };
}

fn scope() -> DedicatedWorkerGlobalScope {
    js_sys::global().unchecked_into()
}

/// Where a diagnosis's messages go: posted to the page, or built as for the page and dropped (the warm-up,
/// `crate::warm_up`, which runs the page's very code path on small inputs).
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum Deliver {
    Post,
    Discard,
}

/// Posts a message: a serde struct with `type` and `id`, as a plain JS object (JsValue fields pass through as they
/// are: `serde_wasm_bindgen::preserve`).
fn post<T: Serialize>(kind: &'static str, id: &JsValue, body: T) {
    post_to(Deliver::Post, kind, id, body)
}

/// [`post`], or with [`Deliver::Discard`] the message built and dropped.
fn post_to<T: Serialize>(deliver: Deliver, kind: &'static str, id: &JsValue, body: T) {
    #[derive(Serialize)]
    struct Msg<'a, T> {
        #[serde(rename = "type")]
        kind: &'static str,
        #[serde(with = "serde_wasm_bindgen::preserve")]
        id: JsValue,
        #[serde(flatten)]
        body: &'a T,
    }
    let msg = Msg { kind, id: id.clone(), body: &body };
    // A message that does not serialise, or a failed postMessage (page gone), leaves nothing to tell.
    if let Ok(v) = msg.serialize(&serde_wasm_bindgen::Serializer::json_compatible()) {
        if deliver == Deliver::Post {
            let _ = scope().post_message(&v);
        }
    }
}

fn post_error(id: &JsValue, e: &InputError) {
    post("error", id, e);
}

/// Reads a request's fields into `T` (JsValue fields, a `File` or `Blob`, pass through: `preserve`).
fn fields<T: for<'de> Deserialize<'de>>(data: &JsValue) -> Result<T, InputError> {
    serde_wasm_bindgen::from_value(data.clone()).map_err(|e| InputError::new("bad-option", format!("request: {e}")))
}

#[derive(Deserialize)]
struct Head {
    #[serde(rename = "type", default)]
    kind: String,
    #[serde(with = "serde_wasm_bindgen::preserve", default)]
    id: JsValue,
}

#[derive(Deserialize)]
struct OpenFile {
    #[serde(with = "serde_wasm_bindgen::preserve")]
    file: web_sys::Blob,
    name: Option<String>,
    #[serde(default)]
    options: Option<Options>,
}

#[derive(Deserialize)]
struct FolderFile {
    path: String,
    #[serde(with = "serde_wasm_bindgen::preserve")]
    file: File,
}

#[derive(Deserialize)]
struct OpenFolder {
    name: Option<String>,
    files: Vec<FolderFile>,
    #[serde(default)]
    options: Option<Options>,
}

#[derive(Deserialize)]
struct Rediagnose {
    #[serde(default)]
    options: Option<Options>,
}

#[derive(Deserialize)]
struct ReadEntry {
    path: String,
}

#[derive(Deserialize)]
struct StateRows {
    #[serde(default)]
    selection: Option<StateSelection>,
    #[serde(default)]
    partition: Option<f64>,
    #[serde(default)]
    search: Option<String>,
    #[serde(default)]
    page: Option<f64>,
    #[serde(default)]
    page_size: Option<f64>,
}

#[derive(Serialize)]
struct ProgressMsg<'a> {
    done: f64,
    total: f64,
    path: &'a str,
}

/// Reports progress while the core reads files: wraps an archive and posts at most every `every_ms`
/// ([`Options::progress_ms`], 100 ms by default).
struct Progress<'a> {
    inner: &'a mut dyn Archive,
    deliver: Deliver,
    id: JsValue,
    done: u64,
    total: u64,
    last_post: f64,
    every_ms: f64,
}

impl Progress<'_> {
    /// Counts one read of `path` and posts progress at most every [`Options::progress_ms`].
    fn tick(&mut self, path: &str) {
        self.done += 1;
        let now = js_sys::Date::now();
        if now - self.last_post >= self.every_ms {
            self.last_post = now;
            let msg = ProgressMsg { done: self.done as f64, total: self.total as f64, path };
            post_to(self.deliver, "progress", &self.id, msg);
        }
    }
}

impl Archive for Progress<'_> {
    fn entries(&self) -> &[Entry] {
        self.inner.entries()
    }
    fn read(&mut self, path: &str, max_bytes: u64) -> Result<Vec<u8>, ArchiveError> {
        self.tick(path);
        self.inner.read(path, max_bytes)
    }
    fn read_each(&mut self, path: &str, max_bytes: u64, sink: &mut dyn FnMut(&[u8])) -> Result<u64, ArchiveError> {
        self.tick(path);
        self.inner.read_each(path, max_bytes, sink)
    }
    fn name(&self) -> &str {
        self.inner.name()
    }
    fn input_bytes(&self) -> u64 {
        self.inner.input_bytes()
    }
    fn unreadable_entries(&self) -> &[(String, ArchiveError)] {
        self.inner.unreadable_entries()
    }
    fn duplicate_entries(&self) -> &[checkpoint_core::archive::DuplicateEntry] {
        self.inner.duplicate_entries()
    }
    fn bytes_left(&self) -> Option<u64> {
        self.inner.bytes_left()
    }
    fn prefetch(&mut self, paths: &[String]) {
        self.inner.prefetch(paths)
    }
}

/// Opens the held input as an archive; the stats count blob reads for a zip.
#[allow(
    clippy::type_complexity,
    reason = "one private helper; the lead may name the pair after merging the front-end work"
)]
fn open(input: &Input) -> Result<(Box<dyn Archive>, Option<Rc<ReadStats>>), InputError> {
    match input {
        Input::Zip { file, name } => {
            let zip = BlobZip::open(file.clone(), name, limits()).map_err(|e| InputError::from_archive(name, &e))?;
            let stats = zip.stats();
            Ok((Box::new(zip), Some(stats)))
        }
        Input::Folder { name, files } => {
            let a = FilesArchive::new(name, files.clone(), limits()).map_err(|e| InputError::from_archive(name, &e))?;
            Ok((Box::new(a), None))
        }
    }
}

fn run_diagnosis(id: &JsValue, input: &Input, options: &Options) -> Result<(), InputError> {
    reserve_heap(input);
    diagnose_input(Deliver::Post, id, input, options)
}

/// Diagnoses `input` and posts the `verdict`, `progress` and `report` messages (or, with [`Deliver::Discard`],
/// builds them and drops them).
pub(crate) fn diagnose_input(
    deliver: Deliver,
    id: &JsValue,
    input: &Input,
    options: &Options,
) -> Result<(), InputError> {
    let started = js_sys::Date::now();
    let (mut archive, stats) = open(input)?;
    let total = archive.entries().iter().filter(|e| !e.is_dir).count() as u64;
    let report = {
        let every_ms = options.progress_ms.filter(|m| m.is_finite() && *m >= 0.0).unwrap_or(100.0);
        let inner = archive.as_mut();
        let mut p = Progress { inner, deliver, id: id.clone(), done: 0, total, last_post: started, every_ms };
        let logs = DELTA_LOGS.with(|l| l.borrow().clone());
        let mut tell = |verdict: &checkpoint_core::Report| post_verdict(deliver, id, verdict, started);
        diagnose_verdict_first(&mut p, options, &logs, &mut tell)?
    };
    // The listing the page shows, then the archive goes (its central directory and span cache), before the
    // report is serialized: the worker's memory peaks lower.
    let listing = Listing::of(archive.entries());
    drop(archive);
    let io = |e: serde_json::Error| InputError::new("io", e.to_string());
    let json = serde_json::to_string(&report).map_err(io)?;
    // The batch lists come apart, as typed-array columns.
    let batches = js_sys::Array::new();
    for c in &report.checkpoints {
        batches.push(&batch_columns(&c.batches));
    }
    let (report_head, presented) = head_texts(report).map_err(io)?;
    #[derive(Serialize)]
    struct ReportMsg {
        report: String,
        report_head: String,
        #[serde(with = "serde_wasm_bindgen::preserve")]
        batches: JsValue,
        presented: String,
        #[serde(flatten)]
        listing: Listing,
        entries_total: f64,
        ms: f64,
        #[serde(skip_serializing_if = "Option::is_none")]
        bytes_read: Option<f64>,
        #[serde(skip_serializing_if = "Option::is_none")]
        reads: Option<f64>,
        /// Milliseconds of `ms` spent reading those slices.
        #[serde(skip_serializing_if = "Option::is_none")]
        read_ms: Option<f64>,
        /// The worker's wasm memory in bytes when the report is sent (wasm memory only grows: its peak).
        wasm_bytes: f64,
    }
    post_to(
        deliver,
        "report",
        id,
        ReportMsg {
            report: json,
            report_head,
            batches: batches.into(),
            presented,
            listing,
            entries_total: total as f64,
            ms: js_sys::Date::now() - started,
            bytes_read: stats.as_ref().map(|s| s.bytes.get() as f64),
            reads: stats.as_ref().map(|s| s.reads.get() as f64),
            read_ms: stats.as_ref().map(|s| s.ms.get()),
            wasm_bytes: wasm_memory_bytes(),
        },
    );
    Ok(())
}

/// Heap bytes [`reserve_heap`] reserves per byte of a dropped zip (its central directory and what the
/// diagnosis builds from it grow with the number of entries, which the zip's size bounds), per file of a dropped
/// folder, and at most.
const HEAP_PER_ZIP_BYTE: f64 = 0.5;
const HEAP_PER_FILE: u64 = 384;
const MAX_HEAP_RESERVE: u64 = 40 * 1024 * 1024;

/// Grows the wasm memory once, before the input is opened, through the allocator (a buffer reserved and
/// dropped: the allocator keeps the space for the diagnosis's own allocations, the central directory first), by
/// at most [`MAX_HEAP_RESERVE`]. Grown in many small steps instead, a first diagnosis spends more time in memory
/// growth, allocation and garbage collection: in Node's V8, on the core compiled to wasm, 2.2 s without and
/// 1.3 s with a 36 MiB reservation made first on a 94k-file checkpoint; in headless Chromium, paired page runs
/// (`tools/scale-bench/page.mjs`), the verdict comes 5–15% sooner on the generated mid, large and RocksDB mid
/// checkpoints, with the same peak memory. Made after the central directory is read, the same reservation
/// raised the peak by 15–19 MiB instead.
fn reserve_heap(input: &Input) {
    let bytes = match input {
        Input::Zip { file, .. } => (file.size().max(0.0) * HEAP_PER_ZIP_BYTE) as u64,
        Input::Folder { files, .. } => (files.len() as u64).saturating_mul(HEAP_PER_FILE),
    }
    .min(MAX_HEAP_RESERVE);
    if bytes > 0 {
        // black_box: an allocation never used may be optimised away.
        drop(std::hint::black_box(Vec::<u8>::with_capacity(bytes as usize)));
    }
}

/// What the page shows first, small enough to parse and render in one short main-thread task, as JSON texts:
/// the report without its checkpoints' batch lists (`report_head`), and the core's presentation of each
/// checkpoint (`presented`, `present::present` for the page).
fn head_texts(mut report: checkpoint_core::Report) -> serde_json::Result<(String, String)> {
    let presented: Vec<_> = report
        .checkpoints
        .iter()
        .map(|c| checkpoint_core::present::present(c, checkpoint_core::present::Frontend::Page))
        .collect();
    for c in &mut report.checkpoints {
        c.batches = Vec::new();
    }
    Ok((serde_json::to_string(&report)?, serde_json::to_string(&presented)?))
}

/// Posts the verdict's report (`verdict` message): its [`head_texts`], like the head of the `report` message
/// that follows. A report that does not serialise posts nothing (the `report` message still comes).
fn post_verdict(deliver: Deliver, id: &JsValue, verdict: &checkpoint_core::Report, started: f64) {
    #[derive(Serialize)]
    struct VerdictMsg {
        report_head: String,
        presented: String,
        ms: f64,
    }
    let Ok((report_head, presented)) = head_texts(verdict.clone()) else { return };
    post_to(deliver, "verdict", id, VerdictMsg { report_head, presented, ms: js_sys::Date::now() - started });
}

/// One checkpoint's `batches` as columns (web/js/report-view.js turns them back into the report's objects): a
/// typed array per field, so 20,000 batches cross to the page as a few memory copies instead of JSON to parse on
/// its main thread. `batch_id`, `timestamp_ms`, `watermark_ms`, `next_watermark_ms`: `Float64Array` (ms and ids
/// fit a double exactly; NaN = none); `flags`: `Uint8Array`, bit 0 `has_offsets`, bit 1 `committed`.
fn batch_columns(batches: &[checkpoint_core::report::BatchInfo]) -> js_sys::Object {
    let col = |f: &dyn Fn(&checkpoint_core::report::BatchInfo) -> Option<i64>| {
        let v: Vec<f64> = batches.iter().map(|b| f(b).map(|x| x as f64).unwrap_or(f64::NAN)).collect();
        js_sys::Float64Array::from(v.as_slice())
    };
    let flags: Vec<u8> = batches.iter().map(|b| b.has_offsets as u8 | (b.committed as u8) << 1).collect();
    let o = js_sys::Object::new();
    let set = |k: &str, v: &JsValue| {
        let _ = js_sys::Reflect::set(&o, &JsValue::from_str(k), v);
    };
    set("batch_id", &col(&|b| Some(b.batch_id)));
    set("flags", &Uint8Array::from(flags.as_slice()));
    set("timestamp_ms", &col(&|b| b.timestamp_ms));
    set("watermark_ms", &col(&|b| b.watermark_ms));
    set("next_watermark_ms", &col(&|b| b.next_watermark_ms));
    o
}

/// The input's files the page lists (at most [`MAX_LISTED_ENTRIES`], folders left out), in three values rather
/// than an array per file: a big checkpoint's 20,000 arrays made the report's message slow to receive on the
/// page's main thread. The page reads it with `web/js/listing.js`.
#[derive(Serialize)]
struct Listing {
    /// Every path, one after the other.
    entry_paths: String,
    /// Where each path ends in `entry_paths`, in UTF-16 code units (JavaScript's string indices).
    entry_ends: Vec<f64>,
    /// Each file's uncompressed size in bytes.
    entry_sizes: Vec<f64>,
}

impl Listing {
    fn of(entries: &[Entry]) -> Self {
        let mut l = Listing { entry_paths: String::new(), entry_ends: Vec::new(), entry_sizes: Vec::new() };
        let mut end = 0usize;
        for e in entries.iter().filter(|e| !e.is_dir).take(MAX_LISTED_ENTRIES) {
            l.entry_paths.push_str(&e.path);
            end += e.path.encode_utf16().count();
            l.entry_ends.push(end as f64);
            l.entry_sizes.push(e.size as f64);
        }
        l
    }
}

/// Size of this worker's wasm memory in bytes.
fn wasm_memory_bytes() -> f64 {
    wasm_bindgen::memory()
        .unchecked_into::<js_sys::WebAssembly::Memory>()
        .buffer()
        .unchecked_into::<js_sys::ArrayBuffer>()
        .byte_length() as f64
}

fn read_entry(id: &JsValue, input: &Input, path: &str) -> Result<(), InputError> {
    let (mut archive, _) = open(input)?;
    let size = archive
        .entries()
        .iter()
        .find(|e| e.path == path)
        .map(|e| e.size)
        .ok_or_else(|| InputError::new("not-found", format!("{path}: not in the input")))?;
    if size > MAX_SHOWN_ENTRY_BYTES {
        return Err(InputError::new(
            "over-limit",
            format!("{path} is {size} bytes; only files up to {MAX_SHOWN_ENTRY_BYTES} bytes are shown"),
        ));
    }
    let bytes = archive.read(path, MAX_SHOWN_ENTRY_BYTES).map_err(|e| InputError::from_archive(archive.name(), &e))?;
    #[derive(Serialize)]
    struct EntryMsg<'a> {
        path: &'a str,
        size: f64,
        #[serde(with = "serde_wasm_bindgen::preserve")]
        bytes: Uint8Array,
    }
    post("entry", id, EntryMsg { path, size: size as f64, bytes: Uint8Array::from(bytes.as_slice()) });
    Ok(())
}

fn state_overview(id: &JsValue, input: &Input) -> Result<(), InputError> {
    let (mut archive, _) = open(input)?;
    let total = archive.entries().iter().filter(|e| !e.is_dir).count() as u64;
    let overview = {
        let mut p = Progress {
            inner: archive.as_mut(),
            deliver: Deliver::Post,
            id: id.clone(),
            done: 0,
            total,
            last_post: js_sys::Date::now(),
            every_ms: 100.0,
        };
        crate::state::state_overview(&mut p)
    };
    #[derive(Serialize)]
    struct OverviewMsg {
        overview: String,
    }
    post("state-overview", id, OverviewMsg { overview: overview.to_string() });
    Ok(())
}

fn state_rows(id: &JsValue, input: &Input, req: StateRows) -> Result<(), InputError> {
    let selection = req.selection.unwrap_or_default();
    let partition = req.partition.filter(|p| *p >= 0.0 && *p <= u32::MAX as f64).map(|p| p as u32);
    let search = req.search.unwrap_or_default();
    let page = req.page.unwrap_or(0.0).max(0.0) as usize;
    let page_size = req.page_size.unwrap_or(100.0).max(1.0) as usize;
    let cached = LOADED.with(|l| l.borrow().as_ref().is_some_and(|s| s.selection == selection));
    if !cached {
        let started = js_sys::Date::now();
        let (mut archive, _) = open(input)?;
        let op_prefix = format!("state/{}/", selection.operator_id);
        let total = archive.entries().iter().filter(|e| !e.is_dir && e.path.contains(&op_prefix)).count() as u64;
        let loaded = {
            let mut p = Progress {
                inner: archive.as_mut(),
                deliver: Deliver::Post,
                id: id.clone(),
                done: 0,
                total,
                last_post: started,
                every_ms: 100.0,
            };
            crate::state::load_state(&mut p, &selection)
        };
        match loaded {
            Ok(mut l) => {
                l.ms = js_sys::Date::now() - started;
                LOADED.with(|c| *c.borrow_mut() = Some(l));
            }
            Err(e) => {
                LOADED.with(|c| *c.borrow_mut() = None);
                #[derive(Serialize)]
                struct StateErrorMsg {
                    error: String,
                }
                post("state-error", id, StateErrorMsg { error: crate::state::error_json(&e).to_string() });
                return Ok(());
            }
        }
    }
    let result = LOADED.with(|l| l.borrow().as_ref().map(|s| s.page(partition, &search, page, page_size)));
    #[derive(Serialize)]
    struct RowsMsg {
        result: String,
    }
    post("state-rows", id, RowsMsg { result: result.unwrap_or(serde_json::Value::Null).to_string() });
    Ok(())
}

/// Reads the Delta logs of a dropped zip or folder, keeps them, and re-diagnoses the held checkpoint.
fn set_delta_logs(id: &JsValue, input: &Input, options: &Options) -> Result<(), InputError> {
    let (mut archive, _) = open(input)?;
    let logs = crate::read_delta_logs(archive.as_mut())?;
    DELTA_LOGS.with(|l| *l.borrow_mut() = logs);
    after_delta_logs(id, options)
}

/// After the Delta logs changed: the report of the held checkpoint, or (none yet) what the logs hold.
fn after_delta_logs(id: &JsValue, options: &Options) -> Result<(), InputError> {
    if let Some(input) = INPUT.with(|i| i.borrow().clone()) {
        return run_diagnosis(id, &input, options);
    }
    #[derive(Serialize)]
    struct Table {
        dir: String,
        table_id: Option<String>,
        versions: String,
    }
    #[derive(Serialize)]
    struct Tables {
        tables: Vec<Table>,
    }
    let tables = DELTA_LOGS.with(|l| {
        l.borrow()
            .iter()
            .map(|log| Table {
                dir: if log.dir.is_empty() { "_delta_log".into() } else { log.dir.clone() },
                table_id: log.latest_metadata().map(|(_, m)| m.id.clone()),
                versions: match (log.earliest_commit(), log.latest_version()) {
                    (Some(a), Some(b)) => format!("{a}..{b}"),
                    _ => "none".into(),
                },
            })
            .collect()
    });
    post("delta-log", id, Tables { tables });
    Ok(())
}

fn held() -> Result<Input, InputError> {
    INPUT.with(|i| i.borrow().clone()).ok_or_else(|| InputError::new("io", "no input is open"))
}

fn handle(data: JsValue) {
    // A request ends the warm-up: its rounds no longer come between the page's requests.
    crate::warm_up::stop();
    let head: Head = match fields(&data) {
        Ok(h) => h,
        Err(e) => return post_error(&JsValue::UNDEFINED, &e),
    };
    let id = head.id;
    let open = |input: Input, options: Option<Options>| {
        INPUT.with(|i| *i.borrow_mut() = Some(input.clone()));
        LOADED.with(|l| *l.borrow_mut() = None);
        run_diagnosis(&id, &input, &options.unwrap_or_default())
    };
    let result = match head.kind.as_str() {
        "open-file" => fields::<OpenFile>(&data)
            .and_then(|r| open(Input::Zip { file: r.file, name: r.name.unwrap_or_else(|| "input".into()) }, r.options)),
        "open-folder" => fields::<OpenFolder>(&data).and_then(|r| {
            let files = r.files.into_iter().map(|f| (f.path, f.file)).collect();
            open(Input::Folder { name: r.name.unwrap_or_else(|| "input".into()), files }, r.options)
        }),
        "rediagnose" => fields::<Rediagnose>(&data).and_then(|r| {
            let input = INPUT
                .with(|i| i.borrow().clone())
                .ok_or_else(|| InputError::new("io", "nothing to diagnose yet: drop a checkpoint first"))?;
            run_diagnosis(&id, &input, &r.options.unwrap_or_default())
        }),
        "delta-log-file" => fields::<OpenFile>(&data).and_then(|r| {
            let input = Input::Zip { file: r.file, name: r.name.unwrap_or_else(|| "delta_log.zip".into()) };
            set_delta_logs(&id, &input, &r.options.unwrap_or_default())
        }),
        "delta-log-folder" => fields::<OpenFolder>(&data).and_then(|r| {
            let files = r.files.into_iter().map(|f| (f.path, f.file)).collect();
            let input = Input::Folder { name: r.name.unwrap_or_else(|| "_delta_log".into()), files };
            set_delta_logs(&id, &input, &r.options.unwrap_or_default())
        }),
        "delta-log-clear" => fields::<Rediagnose>(&data).and_then(|r| {
            DELTA_LOGS.with(|l| l.borrow_mut().clear());
            after_delta_logs(&id, &r.options.unwrap_or_default())
        }),
        "read-entry" => fields::<ReadEntry>(&data).and_then(|r| read_entry(&id, &held()?, &r.path)),
        "state-overview" => held().and_then(|input| state_overview(&id, &input)),
        "state-rows" => fields::<StateRows>(&data).and_then(|r| state_rows(&id, &held()?, r)),
        other => Err(InputError::new("io", format!("unknown request {other:?}"))),
    };
    if let Err(e) = result {
        post_error(&id, &e);
    }
}

/// Installs the worker's message handler and announces `ready`. Call once, from the worker bin's `main`.
pub fn start_worker() {
    let listener = EventListener::new(&scope(), "message", |ev| {
        if let Some(ev) = ev.dyn_ref::<MessageEvent>() {
            handle(ev.data());
        }
    });
    // The handler lives as long as the worker.
    listener.forget();
    #[derive(Serialize)]
    struct Ready {
        version: &'static str,
    }
    post("ready", &JsValue::UNDEFINED, Ready { version: checkpoint_core::report::INSPECTOR_VERSION });
    crate::warm_up::start();
}

/// Posts the end of the warm-up (`warm` message): its rounds and milliseconds.
pub(crate) fn post_warm(rounds: usize, ms: f64) {
    #[derive(Serialize)]
    struct Warm {
        rounds: f64,
        ms: f64,
    }
    post("warm", &JsValue::UNDEFINED, Warm { rounds: rounds as f64, ms });
}
