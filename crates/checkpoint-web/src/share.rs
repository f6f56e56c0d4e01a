//! Share links in the browser: methods of [`Inspector`] (the crate's one exported type) over
//! [`checkpoint_core::share`]; the page's share dialog and link opening (web/js/share.js, web/js/link.js) call them. Errors are thrown as JS `Error`s with a `kind` property (the core's
//! [`ShareError::kind`](checkpoint_core::share::ShareError::kind): `truncated`, `corrupt`, `too-large`, ...) and
//! a `message` for people.
//!
//! Nothing here touches the network: a link is built from the report the page already has, and opened from
//! the page's own `location.hash`.

use crate::Inspector;
use checkpoint_core::share::{self, Category, Redaction, ShareError, ShareOptions};
use js_sys::Reflect;
use serde::Serialize;
use wasm_bindgen::prelude::*;

fn throw(kind: &str, message: &str) -> JsValue {
    let err = js_sys::Error::new(message);
    let _ = Reflect::set(&err, &JsValue::from_str("kind"), &JsValue::from_str(kind));
    err.into()
}

fn throw_share(e: ShareError) -> JsValue {
    throw(e.kind(), &e.to_string())
}

fn to_js<T: Serialize>(v: &T) -> Result<JsValue, JsValue> {
    v.serialize(&serde_wasm_bindgen::Serializer::json_compatible()).map_err(|e| throw("io", &e.to_string()))
}

/// The redaction settings from the page: `undefined`/`null` = all on; an object or its JSON text
/// `{"ids":true,"paths":false,...}` (missing fields are on).
fn redaction_from(v: &JsValue) -> Result<Redaction, JsValue> {
    if v.is_undefined() || v.is_null() {
        return Ok(Redaction::default());
    }
    let bad = |e: String| throw("bad-option", &format!("redaction settings: {e}"));
    if let Some(s) = v.as_string() {
        if s.trim().is_empty() {
            return Ok(Redaction::default());
        }
        return serde_json::from_str(&s).map_err(|e| bad(e.to_string()));
    }
    serde_wasm_bindgen::from_value(v.clone()).map_err(|e| bad(e.to_string()))
}

/// What [`Inspector::share_link`] returns to JS.
#[derive(Serialize)]
struct LinkOut {
    /// `report=1.…` (append after `#` to the page's address).
    fragment: String,
    /// Length of `fragment` in bytes.
    bytes: usize,
    /// The budget in bytes.
    budget_bytes: usize,
    /// What was cut to fit the budget (empty: nothing).
    cut_notes: Vec<String>,
    /// Redacted categories' names.
    redacted: Vec<&'static str>,
    /// Distinct values replaced per category name.
    replaced: std::collections::BTreeMap<&'static str, usize>,
    /// Fields removed because they held file contents or state rows (JSON pointers).
    stripped: Vec<String>,
    /// Exactly the report the link carries, as pretty JSON text: the preview to show (as text) before sharing.
    preview: String,
}

/// What [`Inspector::open_share_fragment`] returns to JS.
#[derive(Serialize)]
struct OpenOut {
    /// The report (a plain JS object; render its strings as text only).
    report: serde_json::Value,
    /// The same report as JSON text.
    report_json: String,
    /// Version of the inspector that made the link.
    inspector_version: String,
    /// The link's format number.
    format_version: u32,
    /// Categories redacted when the link was made.
    redacted: Vec<String>,
    /// What was cut to fit the link's budget.
    cut_notes: Vec<String>,
}

#[wasm_bindgen]
impl Inspector {
    /// Builds a share link from report JSON (`diagnose --json` shape). `redaction`: see the module; `budget_bytes`:
    /// the fragment's size budget (default 16 KiB). Returns `{fragment, bytes, budget_bytes, cut_notes, redacted,
    /// replaced, stripped, preview}`. Throws `bad-input` (not a report), `bad-option`, `over-budget`.
    #[wasm_bindgen(js_name = shareLink)]
    pub fn share_link(report_json: &str, redaction: JsValue, budget_bytes: Option<u32>) -> Result<JsValue, JsValue> {
        let report: serde_json::Value =
            serde_json::from_str(report_json).map_err(|e| throw("bad-input", &format!("not a report: {e}")))?;
        let options = ShareOptions {
            redaction: redaction_from(&redaction)?,
            budget_bytes: budget_bytes.map(|b| b as usize).unwrap_or(share::DEFAULT_BUDGET_BYTES),
        };
        let link = share::share_link(&report, &options).map_err(throw_share)?;
        to_js(&LinkOut {
            preview: serde_json::to_string_pretty(&link.report).unwrap_or_default(),
            bytes: link.bytes,
            budget_bytes: link.budget_bytes,
            redacted: link.redacted.iter().map(|c| c.name()).collect(),
            replaced: link.replaced.iter().map(|(c, n)| (c.name(), *n)).collect(),
            stripped: link.stripped,
            cut_notes: link.cut_notes,
            fragment: link.fragment,
        })
    }

    /// Opens a share fragment (`location.hash`, `report=1.…`, or a whole URL). Returns `{report, report_json,
    /// inspector_version, format_version, redacted, cut_notes}`; throws an `Error` whose `kind` is one of
    /// `no-report`, `unknown-format`, `too-long`, `bad-encoding`, `truncated`, `corrupt`, `too-large`, `not-json`,
    /// `not-a-report`, and whose `message` says it for people.
    #[wasm_bindgen(js_name = openShareFragment)]
    pub fn open_share_fragment(fragment: &str) -> Result<JsValue, JsValue> {
        let r = share::open_fragment(fragment).map_err(throw_share)?;
        to_js(&OpenOut {
            report_json: serde_json::to_string(&r.report).unwrap_or_default(),
            report: r.report,
            inspector_version: r.inspector_version,
            format_version: r.format_version,
            redacted: r.redacted,
            cut_notes: r.cut_notes,
        })
    }

    /// The redaction categories for the page's toggles: `[{name, description}]`, in display order.
    #[wasm_bindgen(js_name = shareCategories)]
    pub fn share_categories() -> Result<JsValue, JsValue> {
        #[derive(Serialize)]
        struct C {
            name: &'static str,
            description: &'static str,
        }
        to_js(&Category::ALL.map(|c| C { name: c.name(), description: c.describe() }))
    }
}
