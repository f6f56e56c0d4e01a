//! Plain `#[wasm_bindgen]` functions over bytes: what the tests (and anyone scripting the wasm) call.
//!
//! Errors are thrown as JS `Error`s whose `message` is the clear sentence and whose `kind` property is the
//! [`InputError`] kind (`not-a-zip`, `empty`, `over-limit`, `bad-option`, ...).

#![cfg_attr(not(all(feature = "api-diagnose", feature = "api-render")), allow(dead_code, unused_imports))]

use crate::{diagnose_zip_bytes, limits, render, InputError, Options};
use checkpoint_core::{MemArchive, Report};
use js_sys::{Array, Reflect, Uint8Array};
use wasm_bindgen::prelude::*;

fn throw(e: InputError) -> JsValue {
    let err = js_sys::Error::new(&e.message);
    let _ = Reflect::set(&err, &JsValue::from_str("kind"), &JsValue::from_str(&e.kind));
    err.into()
}

fn options_from(v: JsValue) -> Result<Options, JsValue> {
    if v.is_undefined() || v.is_null() {
        return Ok(Options::default());
    }
    serde_wasm_bindgen::from_value(v).map_err(|e| throw(InputError::new("bad-option", format!("options: {e}"))))
}

fn to_json(r: &Report) -> Result<String, JsValue> {
    serde_json::to_string(r).map_err(|e| throw(InputError::new("io", e.to_string())))
}

fn parse_report(json: &str) -> Result<Report, JsValue> {
    serde_json::from_str(json).map_err(|e| throw(InputError::new("bad-option", format!("not a report: {e}"))))
}

/// Diagnoses zip bytes; returns the report as JSON text (the CLI's `diagnose --json` shape).
/// `options`: `{spark_version?, error_text?, now_ms?, session_conf?}` or `undefined`.
#[cfg(feature = "api-diagnose")]
#[wasm_bindgen(js_name = diagnoseZip)]
pub fn diagnose_zip(bytes: &[u8], name: &str, options: JsValue) -> Result<String, JsValue> {
    let opts = options_from(options)?;
    let report = diagnose_zip_bytes(bytes, name, &opts).map_err(throw)?;
    to_json(&report)
}

/// Diagnoses a folder given as `[[path, Uint8Array], ...]` (paths relative to the folder); returns report JSON.
#[cfg(feature = "api-diagnose")]
#[wasm_bindgen(js_name = diagnoseFiles)]
pub fn diagnose_files(name: &str, files: Array, options: JsValue) -> Result<String, JsValue> {
    let opts = options_from(options)?;
    let mut list = Vec::with_capacity(files.length() as usize);
    let lim = limits();
    let mut total: u64 = 0;
    for item in files.iter() {
        let pair: Array =
            item.dyn_into().map_err(|_| throw(InputError::new("io", "each file must be [path, bytes]")))?;
        let path = pair.get(0).as_string().ok_or_else(|| throw(InputError::new("io", "file path must be a string")))?;
        let bytes: Uint8Array = pair
            .get(1)
            .dyn_into()
            .map_err(|_| throw(InputError::new("io", format!("{path}: bytes must be a Uint8Array"))))?;
        total = total.saturating_add(bytes.length() as u64);
        if total > lim.max_total_bytes {
            return Err(throw(InputError::new(
                "over-limit",
                format!("the folder is over {} bytes", lim.max_total_bytes),
            )));
        }
        list.push((path, bytes.to_vec()));
    }
    let mut archive = MemArchive::new(name, list, lim).map_err(|e| throw(InputError::from_archive(name, &e)))?;
    let report = crate::diagnose_archive(&mut archive, &opts).map_err(throw)?;
    to_json(&report)
}

/// Reads one entry of zip bytes (at most `max_bytes`), e.g. to show a small file.
#[cfg(feature = "api-diagnose")]
#[wasm_bindgen(js_name = readZipEntry)]
pub fn read_zip_entry(bytes: &[u8], name: &str, path: &str, max_bytes: f64) -> Result<Vec<u8>, JsValue> {
    crate::read_zip_entry(bytes, name, path, max_bytes.max(0.0) as u64).map_err(throw)
}

/// Renders report JSON as Markdown (for a ticket).
#[cfg(feature = "api-render")]
#[wasm_bindgen(js_name = reportMarkdown)]
pub fn report_markdown(report_json: &str) -> Result<String, JsValue> {
    Ok(render::markdown(&parse_report(report_json)?))
}

/// Renders report JSON as a short plain-text summary (for the clipboard).
#[cfg(feature = "api-render")]
#[wasm_bindgen(js_name = reportSummary)]
pub fn report_summary(report_json: &str) -> Result<String, JsValue> {
    Ok(render::summary(&parse_report(report_json)?))
}

/// The inspector's version.
#[cfg(feature = "api-render")]
#[wasm_bindgen(js_name = inspectorVersion)]
pub fn inspector_version() -> String {
    checkpoint_core::report::INSPECTOR_VERSION.to_string()
}

fn open_zip<'a>(bytes: &'a [u8], name: &str) -> Result<checkpoint_core::ZipInput<std::io::Cursor<&'a [u8]>>, JsValue> {
    checkpoint_core::ZipInput::open(std::io::Cursor::new(bytes), bytes.len() as u64, name, limits())
        .map_err(|e| throw(InputError::from_archive(name, &e)))
}

/// The State tab's overview of zip bytes (JSON text; see [`crate::state::state_overview`]).
#[cfg(feature = "api-diagnose")]
#[wasm_bindgen(js_name = stateOverview)]
pub fn state_overview(bytes: &[u8], name: &str) -> Result<String, JsValue> {
    let mut zip = open_zip(bytes, name)?;
    Ok(crate::state::state_overview(&mut zip).to_string())
}

/// One page of state rows of zip bytes (JSON text; see [`crate::state::LoadedState::page`]).
/// `selection`: `{operator_id, store_name, state_var?, join_side?, batch_id?}`; `partition`: a number or
/// `undefined`; `search`: substring of the key JSON. A state that does not decode throws an `Error` of kind
/// `state` whose message is the JSON `{path, offset, message, error_class}`.
#[cfg(feature = "api-diagnose")]
#[wasm_bindgen(js_name = stateRows)]
pub fn state_rows(
    bytes: &[u8],
    name: &str,
    selection: JsValue,
    partition: Option<u32>,
    search: &str,
    page: u32,
    page_size: u32,
) -> Result<String, JsValue> {
    let sel: crate::state::StateSelection = if selection.is_undefined() || selection.is_null() {
        Default::default()
    } else {
        serde_wasm_bindgen::from_value(selection)
            .map_err(|e| throw(InputError::new("bad-option", format!("selection: {e}"))))?
    };
    let mut zip = open_zip(bytes, name)?;
    let loaded = crate::state::load_state(&mut zip, &sel)
        .map_err(|e| throw(InputError::new("state", crate::state::error_json(&e).to_string())))?;
    Ok(loaded.page(partition, search, page as usize, page_size as usize).to_string())
}
