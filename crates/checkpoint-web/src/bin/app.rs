//! The page's wasm (Trunk: `<link data-trunk rel="rust" data-bin="app" data-type="main">`, built without the lib's
//! default features, which only tests and scripting need). Trunk's bootstrap puts these exports on
//! `window.wasmBindings` for web/app.js: `renderMarkdown`, `renderSummary`, `pageVersion` (named apart from the lib's
//! `reportMarkdown`/`reportSummary`/`inspectorVersion`: wasm-bindgen export symbols of one package must be unique).
//! The diagnosis itself runs in the worker bin.

use wasm_bindgen::prelude::*;

fn parse(json: &str) -> Result<checkpoint_core::Report, JsValue> {
    serde_json::from_str(json).map_err(|e| js_sys::Error::new(&format!("not a report: {e}")).into())
}

/// Report JSON (the contract's shape) → Markdown for a ticket.
#[wasm_bindgen(js_name = renderMarkdown)]
pub fn report_markdown(report_json: &str) -> Result<String, JsValue> {
    Ok(checkpoint_web::render::markdown(&parse(report_json)?))
}

/// Report JSON → a few plain-text lines for the clipboard.
#[wasm_bindgen(js_name = renderSummary)]
pub fn report_summary(report_json: &str) -> Result<String, JsValue> {
    Ok(checkpoint_web::render::summary(&parse(report_json)?))
}

/// The inspector's version.
#[wasm_bindgen(js_name = pageVersion)]
pub fn inspector_version() -> String {
    checkpoint_core::report::INSPECTOR_VERSION.to_string()
}

fn main() {}
