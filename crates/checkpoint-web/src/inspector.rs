//! [`Inspector`]: the one type this crate exports to JavaScript, in the style of ruff's `ruff_wasm::Workspace` (a
//! class built with its options, whose methods run the core). The page's wasm (`bin/app.rs`) exports it to
//! `web/js/` (presenting and exporting a report; opening a shared link); tests and scripts use the diagnosing
//! methods over bytes (feature `diagnose`, on by default; the page's build leaves it out to stay small, since the
//! diagnosis runs in the worker, `worker.rs`, over the dropped `Blob`).
//!
//! Errors are thrown as JS `Error`s whose `message` is the clear sentence and whose `kind` property is the
//! [`InputError`] kind (`not-a-zip`, `empty`, `over-limit`, `bad-option`, `state`, ...).

use crate::{render, InputError, Options};
use checkpoint_core::present::{self, Frontend, KNOWN_SPARK_VERSIONS};
use checkpoint_core::{Report, SparkVersion};
use js_sys::Reflect;
use serde::Serialize;
use wasm_bindgen::prelude::*;

pub(crate) fn throw(e: InputError) -> JsValue {
    let err = js_sys::Error::new(&e.message);
    let _ = Reflect::set(&err, &JsValue::from_str("kind"), &JsValue::from_str(&e.kind));
    err.into()
}

/// Serialises to a plain JS object (maps as objects, not `Map`s), as the page reads it.
pub(crate) fn to_js<T: Serialize + ?Sized>(v: &T) -> Result<JsValue, JsValue> {
    v.serialize(&serde_wasm_bindgen::Serializer::json_compatible())
        .map_err(|e| throw(InputError::new("io", e.to_string())))
}

fn parse_report(json: &str) -> Result<Report, JsValue> {
    serde_json::from_str(json).map_err(|e| throw(InputError::new("bad-option", format!("not a report: {e}"))))
}

/// The inspector, built with the page's options (`{spark_version?, error_text?, now_ms?, session_conf?}`).
#[wasm_bindgen]
#[derive(Debug, Clone, Default)]
pub struct Inspector {
    // Read by the diagnosing methods (feature `diagnose`).
    #[cfg_attr(not(feature = "diagnose"), allow(dead_code))]
    options: Options,
}

#[wasm_bindgen]
impl Inspector {
    /// `new Inspector(options)`; `options` may be `undefined`. Throws `bad-option` for options that do not parse
    /// (e.g. a Spark version that is not `X.Y[.Z]`).
    #[wasm_bindgen(constructor)]
    pub fn new(options: JsValue) -> Result<Inspector, JsValue> {
        let options: Options = if options.is_undefined() || options.is_null() {
            Options::default()
        } else {
            serde_wasm_bindgen::from_value(options)
                .map_err(|e| throw(InputError::new("bad-option", format!("options: {e}"))))?
        };
        options.to_context().map_err(throw)?;
        Ok(Inspector { options })
    }

    /// The inspector's version (`X.Y.Z`).
    pub fn version() -> String {
        checkpoint_core::report::INSPECTOR_VERSION.to_string()
    }

    /// The Spark releases the page offers to restart with, newest first (the first is the default assumption).
    #[wasm_bindgen(js_name = sparkVersions)]
    pub fn spark_versions() -> Vec<String> {
        KNOWN_SPARK_VERSIONS.iter().rev().map(|v| v.to_string()).collect()
    }

    /// `X.Y` or `X.Y.Z` as the core reads it (`4.1` → `4.1.0`), or `undefined` when it is not a Spark version.
    #[wasm_bindgen(js_name = parseSparkVersion)]
    pub fn parse_spark_version(text: &str) -> Option<String> {
        let t = text.trim();
        if t.is_empty() || !t.chars().all(|c| c.is_ascii_digit() || c == '.') {
            return None;
        }
        t.parse::<SparkVersion>().ok().map(|v| v.to_string())
    }

    /// Report JSON → per checkpoint what the page shows, decided by the core (`present::present` for the page):
    /// `[{outcome, headline, verdict, summary, assumption, needs, finding_order}]`.
    pub fn present(report_json: &str) -> Result<JsValue, JsValue> {
        let report = parse_report(report_json)?;
        let list: Vec<_> = report.checkpoints.iter().map(|c| present::present(c, Frontend::Page)).collect();
        to_js(&list)
    }

    /// Report JSON → Markdown for a ticket.
    pub fn markdown(report_json: &str) -> Result<String, JsValue> {
        Ok(render::markdown(&parse_report(report_json)?))
    }

    /// Report JSON → a few plain-text lines for the clipboard.
    pub fn summary(report_json: &str) -> Result<String, JsValue> {
        Ok(render::summary(&parse_report(report_json)?))
    }
}

#[cfg(feature = "diagnose")]
mod diagnosing {
    use super::*;
    use crate::{diagnose_zip_bytes, limits};
    use checkpoint_core::MemArchive;
    use js_sys::{Array, Uint8Array};

    fn to_json(r: &Report) -> Result<String, JsValue> {
        serde_json::to_string(r).map_err(|e| throw(InputError::new("io", e.to_string())))
    }

    fn open_zip<'a>(
        bytes: &'a [u8],
        name: &str,
    ) -> Result<checkpoint_core::ZipInput<std::io::Cursor<&'a [u8]>>, JsValue> {
        checkpoint_core::ZipInput::open(std::io::Cursor::new(bytes), bytes.len() as u64, name, limits())
            .map_err(|e| throw(InputError::from_archive(name, &e)))
    }

    #[wasm_bindgen]
    impl Inspector {
        /// Diagnoses zip bytes; returns the report as JSON text (the CLI's `diagnose --json` shape).
        #[wasm_bindgen(js_name = diagnoseZip)]
        pub fn diagnose_zip(&self, bytes: &[u8], name: &str) -> Result<String, JsValue> {
            to_json(&diagnose_zip_bytes(bytes, name, &self.options).map_err(throw)?)
        }

        /// Diagnoses a folder given as `[[path, Uint8Array], ...]` (paths relative to the folder); returns report
        /// JSON.
        #[wasm_bindgen(js_name = diagnoseFiles)]
        pub fn diagnose_files(&self, name: &str, files: Array) -> Result<String, JsValue> {
            let mut list = Vec::with_capacity(files.length() as usize);
            let lim = limits();
            let mut total: u64 = 0;
            for item in files.iter() {
                let pair: Array =
                    item.dyn_into().map_err(|_| throw(InputError::new("io", "each file must be [path, bytes]")))?;
                let path = pair
                    .get(0)
                    .as_string()
                    .ok_or_else(|| throw(InputError::new("io", "file path must be a string")))?;
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
            let mut archive =
                MemArchive::new(name, list, lim).map_err(|e| throw(InputError::from_archive(name, &e)))?;
            to_json(&crate::diagnose_archive(&mut archive, &self.options).map_err(throw)?)
        }

        /// Reads one entry of zip bytes (at most `max_bytes`), e.g. to show a small file.
        #[wasm_bindgen(js_name = readZipEntry)]
        pub fn read_zip_entry(&self, bytes: &[u8], name: &str, path: &str, max_bytes: f64) -> Result<Vec<u8>, JsValue> {
            crate::read_zip_entry(bytes, name, path, max_bytes.max(0.0) as u64).map_err(throw)
        }

        /// The State tab's overview of zip bytes (JSON text; see [`crate::state::state_overview`]).
        #[wasm_bindgen(js_name = stateOverview)]
        pub fn state_overview(&self, bytes: &[u8], name: &str) -> Result<String, JsValue> {
            let mut zip = open_zip(bytes, name)?;
            Ok(crate::state::state_overview(&mut zip).to_string())
        }

        /// One page of state rows of zip bytes (JSON text; see [`crate::state::LoadedState::page`]).
        /// `selection`: `{operator_id, store_name, state_var?, join_side?, batch_id?, read_change_feed?,
        /// change_start_batch_id?, change_end_batch_id?}` ([`crate::state::StateSelection`]); `partition`: a number or
        /// `undefined`; `search`: substring of the key JSON. A state that does not decode throws an `Error` of kind
        /// `state` whose message is the JSON `{path, offset, message, error_class}`.
        #[allow(clippy::too_many_arguments)]
        #[wasm_bindgen(js_name = stateRows)]
        pub fn state_rows(
            &self,
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
    }
}
