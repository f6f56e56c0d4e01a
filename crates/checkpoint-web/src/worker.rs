//! The Web Worker: receives inputs from the page, runs the diagnosis off the main thread and posts results back.
//!
//! Protocol (all messages are plain objects; `id` echoes the request):
//!
//! | page → worker | fields |
//! |---|---|
//! | `open-file` | `id`, `file` (a `File`/`Blob`), `name`, `options` ([`crate::Options`] as an object) |
//! | `open-folder` | `id`, `name`, `files`: `[{path, file}]` (paths relative to the dropped folder) |
//! | `rediagnose` | `id`, `options` — runs again on the current input (e.g. another Spark version) |
//! | `read-entry` | `id`, `path` (archive path) — one file's bytes, at most [`crate::MAX_SHOWN_ENTRY_BYTES`] |
//! | `state-overview` | `id` — operators, stores, schemas, sizes by version ([`crate::state::state_overview`]) |
//! | `state-rows` | `id`, `selection` ([`crate::state::StateSelection`]), `partition` (number or null), `search`, `page`, `page_size` |
//!
//! | worker → page | fields |
//! |---|---|
//! | `ready` | `version` (inspector version) — sent once the wasm is running |
//! | `progress` | `id`, `done`, `total` (files read / files listed), `path` (the file being read) |
//! | `report` | `id`, `report` (JSON text of the contract's `Report`), `entries` (`[[path, size]]`, at most [`crate::MAX_LISTED_ENTRIES`]), `entries_total`, `ms`, `bytes_read`, `reads` |
//! | `entry` | `id`, `path`, `size`, `bytes` (`Uint8Array`) |
//! | `state-overview` | `id`, `overview` (JSON text) |
//! | `state-rows` | `id`, `result` (JSON text of [`crate::state::LoadedState::page`]) |
//! | `state-error` | `id`, `error` (`{path, offset, message, error_class}`) — the state could not be decoded |
//! | `error` | `id`, `kind` (see [`crate::InputError`]), `message` |

use crate::blob::{BlobReader, FilesArchive, ReadStats, BLOB_BUFFER_BYTES};
use crate::{diagnose_archive, limits, InputError, Options, MAX_LISTED_ENTRIES, MAX_SHOWN_ENTRY_BYTES};
use checkpoint_core::{Archive, ArchiveError, Entry, ZipInput};
use js_sys::{Array, Object, Reflect, Uint8Array};
use std::cell::RefCell;
use std::io::BufReader;
use std::rc::Rc;
use wasm_bindgen::prelude::*;
use web_sys::{DedicatedWorkerGlobalScope, File, MessageEvent};

/// The input the worker holds between requests (so a new Spark version re-runs without a new drop).
#[derive(Clone)]
enum Input {
    Zip { file: web_sys::Blob, name: String },
    Folder { name: String, files: Vec<(String, File)> },
}

thread_local! {
    static INPUT: RefCell<Option<Input>> = const { RefCell::new(None) };
    /// The last decoded state selection (kept for paging and search; dropped with a new input).
    static LOADED: RefCell<Option<crate::state::LoadedState>> = const { RefCell::new(None) };
}

fn scope() -> DedicatedWorkerGlobalScope {
    js_sys::global().unchecked_into()
}

fn post(obj: &Object) {
    // A failed postMessage (page gone) leaves nothing to tell.
    let _ = scope().post_message(obj);
}

fn set(obj: &Object, k: &str, v: impl Into<JsValue>) {
    let _ = Reflect::set(obj, &JsValue::from_str(k), &v.into());
}

fn msg(kind: &str, id: &JsValue) -> Object {
    let o = Object::new();
    set(&o, "type", kind);
    set(&o, "id", id.clone());
    o
}

fn post_error(id: &JsValue, e: &InputError) {
    let o = msg("error", id);
    set(&o, "kind", e.kind.as_str());
    set(&o, "message", e.message.as_str());
    post(&o);
}

fn get(obj: &JsValue, k: &str) -> JsValue {
    Reflect::get(obj, &JsValue::from_str(k)).unwrap_or(JsValue::UNDEFINED)
}

fn get_string(obj: &JsValue, k: &str) -> Option<String> {
    get(obj, k).as_string()
}

fn parse_options(v: JsValue) -> Result<Options, InputError> {
    if v.is_undefined() || v.is_null() {
        return Ok(Options::default());
    }
    serde_wasm_bindgen::from_value(v).map_err(|e| InputError::new("bad-option", format!("options: {e}")))
}

/// Reports progress while the core reads files: wraps an archive and posts at most every 100 ms.
struct Progress<'a> {
    inner: &'a mut dyn Archive,
    id: JsValue,
    done: u64,
    total: u64,
    last_post: f64,
}

impl Archive for Progress<'_> {
    fn entries(&self) -> &[Entry] {
        self.inner.entries()
    }
    fn read(&mut self, path: &str, max_bytes: u64) -> Result<Vec<u8>, ArchiveError> {
        self.done += 1;
        let now = js_sys::Date::now();
        if now - self.last_post >= 100.0 {
            self.last_post = now;
            let o = msg("progress", &self.id);
            set(&o, "done", self.done as f64);
            set(&o, "total", self.total as f64);
            set(&o, "path", path);
            post(&o);
        }
        self.inner.read(path, max_bytes)
    }
    fn name(&self) -> &str {
        self.inner.name()
    }
    fn input_bytes(&self) -> u64 {
        self.inner.input_bytes()
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
            let reader = BlobReader::new(file.clone()).map_err(|e| InputError::new("io", e.to_string()))?;
            let stats = reader.stats.clone();
            let len = reader.len();
            let buf = BufReader::with_capacity(BLOB_BUFFER_BYTES, reader);
            let zip = ZipInput::open(buf, len, name, limits()).map_err(|e| InputError::from_archive(name, &e))?;
            Ok((Box::new(zip), Some(stats)))
        }
        Input::Folder { name, files } => {
            let a = FilesArchive::new(name, files.clone(), limits()).map_err(|e| InputError::from_archive(name, &e))?;
            Ok((Box::new(a), None))
        }
    }
}

fn run_diagnosis(id: &JsValue, input: &Input, options: &Options) -> Result<(), InputError> {
    let started = js_sys::Date::now();
    let (mut archive, stats) = open(input)?;
    let total = archive.entries().iter().filter(|e| !e.is_dir).count() as u64;
    let report = {
        let mut p = Progress { inner: archive.as_mut(), id: id.clone(), done: 0, total, last_post: started };
        diagnose_archive(&mut p, options)?
    };
    let json = serde_json::to_string(&report).map_err(|e| InputError::new("io", e.to_string()))?;
    let o = msg("report", id);
    set(&o, "report", json);
    let list = Array::new();
    for e in archive.entries().iter().filter(|e| !e.is_dir).take(MAX_LISTED_ENTRIES) {
        let row = Array::new();
        row.push(&JsValue::from_str(&e.path));
        row.push(&JsValue::from_f64(e.size as f64));
        list.push(&row);
    }
    set(&o, "entries", list);
    set(&o, "entries_total", total as f64);
    set(&o, "ms", js_sys::Date::now() - started);
    if let Some(s) = stats {
        set(&o, "bytes_read", s.bytes.get() as f64);
        set(&o, "reads", s.reads.get() as f64);
    }
    post(&o);
    Ok(())
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
    let o = msg("entry", id);
    set(&o, "path", path);
    set(&o, "size", size as f64);
    set(&o, "bytes", Uint8Array::from(bytes.as_slice()));
    post(&o);
    Ok(())
}

fn state_overview(id: &JsValue, input: &Input) -> Result<(), InputError> {
    let (mut archive, _) = open(input)?;
    let total = archive.entries().iter().filter(|e| !e.is_dir).count() as u64;
    let overview = {
        let mut p =
            Progress { inner: archive.as_mut(), id: id.clone(), done: 0, total, last_post: js_sys::Date::now() };
        crate::state::state_overview(&mut p)
    };
    let o = msg("state-overview", id);
    set(&o, "overview", overview.to_string());
    post(&o);
    Ok(())
}

fn state_rows(id: &JsValue, input: &Input, data: &JsValue) -> Result<(), InputError> {
    let sel_v = get(data, "selection");
    let selection: crate::state::StateSelection = if sel_v.is_undefined() || sel_v.is_null() {
        Default::default()
    } else {
        serde_wasm_bindgen::from_value(sel_v).map_err(|e| InputError::new("bad-option", format!("selection: {e}")))?
    };
    let partition = get(data, "partition").as_f64().filter(|p| *p >= 0.0 && *p <= u32::MAX as f64).map(|p| p as u32);
    let search = get_string(data, "search").unwrap_or_default();
    let page = get(data, "page").as_f64().unwrap_or(0.0).max(0.0) as usize;
    let page_size = get(data, "page_size").as_f64().unwrap_or(100.0).max(1.0) as usize;
    let cached = LOADED.with(|l| l.borrow().as_ref().is_some_and(|s| s.selection == selection));
    if !cached {
        let started = js_sys::Date::now();
        let (mut archive, _) = open(input)?;
        let op_prefix = format!("state/{}/", selection.operator_id);
        let total = archive.entries().iter().filter(|e| !e.is_dir && e.path.contains(&op_prefix)).count() as u64;
        let loaded = {
            let mut p = Progress { inner: archive.as_mut(), id: id.clone(), done: 0, total, last_post: started };
            crate::state::load_state(&mut p, &selection)
        };
        match loaded {
            Ok(mut l) => {
                l.ms = js_sys::Date::now() - started;
                LOADED.with(|c| *c.borrow_mut() = Some(l));
            }
            Err(e) => {
                LOADED.with(|c| *c.borrow_mut() = None);
                let o = msg("state-error", id);
                set(&o, "error", crate::state::error_json(&e).to_string());
                post(&o);
                return Ok(());
            }
        }
    }
    let result = LOADED.with(|l| l.borrow().as_ref().map(|s| s.page(partition, &search, page, page_size)));
    let o = msg("state-rows", id);
    set(&o, "result", result.unwrap_or(serde_json::Value::Null).to_string());
    post(&o);
    Ok(())
}

fn folder_files(data: &JsValue) -> Result<Vec<(String, File)>, InputError> {
    let arr: Array = get(data, "files").dyn_into().map_err(|_| InputError::new("io", "open-folder without files"))?;
    let mut out = Vec::with_capacity(arr.length() as usize);
    for item in arr.iter() {
        let path = get_string(&item, "path").ok_or_else(|| InputError::new("io", "folder file without a path"))?;
        let file: File =
            get(&item, "file").dyn_into().map_err(|_| InputError::new("io", format!("{path}: not a File")))?;
        out.push((path, file));
    }
    Ok(out)
}

fn handle(data: JsValue) {
    let id = get(&data, "id");
    let kind = get_string(&data, "type").unwrap_or_default();
    let result = match kind.as_str() {
        "open-file" | "open-folder" => (|| {
            let options = parse_options(get(&data, "options"))?;
            let name = get_string(&data, "name").unwrap_or_else(|| "input".to_string());
            let input = if kind == "open-file" {
                let file: web_sys::Blob =
                    get(&data, "file").dyn_into().map_err(|_| InputError::new("io", "open-file without a file"))?;
                Input::Zip { file, name }
            } else {
                Input::Folder { name, files: folder_files(&data)? }
            };
            INPUT.with(|i| *i.borrow_mut() = Some(input.clone()));
            LOADED.with(|l| *l.borrow_mut() = None);
            run_diagnosis(&id, &input, &options)
        })(),
        "rediagnose" => (|| {
            let options = parse_options(get(&data, "options"))?;
            let input = INPUT
                .with(|i| i.borrow().clone())
                .ok_or_else(|| InputError::new("io", "nothing to diagnose yet: drop a checkpoint first"))?;
            run_diagnosis(&id, &input, &options)
        })(),
        "read-entry" => (|| {
            let path = get_string(&data, "path").ok_or_else(|| InputError::new("io", "read-entry without a path"))?;
            let input = INPUT.with(|i| i.borrow().clone()).ok_or_else(|| InputError::new("io", "no input is open"))?;
            read_entry(&id, &input, &path)
        })(),
        "state-overview" => (|| {
            let input = INPUT.with(|i| i.borrow().clone()).ok_or_else(|| InputError::new("io", "no input is open"))?;
            state_overview(&id, &input)
        })(),
        "state-rows" => (|| {
            let input = INPUT.with(|i| i.borrow().clone()).ok_or_else(|| InputError::new("io", "no input is open"))?;
            state_rows(&id, &input, &data)
        })(),
        other => Err(InputError::new("io", format!("unknown request {other:?}"))),
    };
    if let Err(e) = result {
        post_error(&id, &e);
    }
}

/// Installs the worker's message handler and announces `ready`. Call once, from the worker bin's `main`.
pub fn start_worker() {
    let on_message = Closure::<dyn FnMut(MessageEvent)>::new(move |ev: MessageEvent| handle(ev.data()));
    scope().set_onmessage(Some(on_message.as_ref().unchecked_ref()));
    // The handler lives as long as the worker.
    on_message.forget();
    let o = Object::new();
    set(&o, "type", "ready");
    set(&o, "version", checkpoint_core::report::INSPECTOR_VERSION);
    post(&o);
}
