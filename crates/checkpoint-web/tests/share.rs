//! The share link functions in wasm (Node): a real fixture's report → link → opened again; redaction toggles;
//! damaged, truncated and hostile fragments throw typed errors.
#![cfg(target_arch = "wasm32")]

mod common;

use checkpoint_web::Inspector;
use common::*;
use js_sys::Reflect;
use wasm_bindgen::{JsCast, JsValue};
use wasm_bindgen_test::*;

fn get(v: &JsValue, k: &str) -> JsValue {
    Reflect::get(v, &JsValue::from_str(k)).unwrap()
}

fn err_kind(e: JsValue) -> String {
    get(&e, "kind").as_string().unwrap_or_default()
}

#[wasm_bindgen_test]
fn share_link_round_trip_in_wasm() {
    let fx = missing_delta();
    let json = Inspector::new(JsValue::UNDEFINED).unwrap().diagnose_zip(fx.zip, fx.name).unwrap();
    let report: serde_json::Value = serde_json::from_str(&json).unwrap();
    let query_id = report["checkpoints"][0]["query_id"].as_str().unwrap().to_string();

    let out = Inspector::share_link(&json, JsValue::UNDEFINED, None).unwrap();
    let fragment = get(&out, "fragment").as_string().unwrap();
    assert!(fragment.starts_with("report=1."));
    assert_eq!(get(&out, "bytes").as_f64().unwrap() as usize, fragment.len());
    assert!(fragment.len() <= 16 * 1024);
    let preview = get(&out, "preview").as_string().unwrap();
    assert!(!preview.contains(&query_id), "the preview is redacted");
    assert!(!preview.contains(fx.name), "the input's name is redacted");
    assert!(preview.contains("query-1"));

    let opened = Inspector::open_share_fragment(&format!("https://team.example/inspector/#{fragment}")).unwrap();
    assert_eq!(get(&opened, "format_version").as_f64(), Some(1.0));
    assert_eq!(get(&opened, "inspector_version").as_string().unwrap(), report["inspector_version"].as_str().unwrap());
    let back: serde_json::Value = serde_json::from_str(&get(&opened, "report_json").as_string().unwrap()).unwrap();
    let previewed: serde_json::Value = serde_json::from_str(&preview).unwrap();
    assert_eq!(back, previewed, "the opened report is exactly the preview");
    assert_eq!(back["checkpoints"][0]["restart"], report["checkpoints"][0]["restart"]);
    // `report` is a plain object (not a Map), ready for the page.
    let r = get(&opened, "report");
    assert!(r.is_object() && !r.is_instance_of::<js_sys::Map>());
    assert!(get(&get(&r, "checkpoints"), "length").as_f64().unwrap() >= 1.0);

    // Same input, same link.
    let again = Inspector::share_link(&json, JsValue::UNDEFINED, None).unwrap();
    assert_eq!(get(&again, "fragment").as_string().unwrap(), fragment);
}

#[wasm_bindgen_test]
fn share_redaction_toggles_in_wasm() {
    let fx = missing_delta();
    let json = Inspector::new(JsValue::UNDEFINED).unwrap().diagnose_zip(fx.zip, fx.name).unwrap();
    let report: serde_json::Value = serde_json::from_str(&json).unwrap();
    let query_id = report["checkpoints"][0]["query_id"].as_str().unwrap().to_string();
    // As an object and as JSON text: ids off keeps the query id, everything else stays on.
    let o = js_sys::Object::new();
    Reflect::set(&o, &"ids".into(), &JsValue::FALSE).unwrap();
    for settings in [o.into(), JsValue::from_str(r#"{"ids": false}"#)] {
        let out = Inspector::share_link(&json, settings, None).unwrap();
        assert!(get(&out, "preview").as_string().unwrap().contains(&query_id));
        let redacted: Vec<String> =
            js_sys::Array::from(&get(&out, "redacted")).iter().filter_map(|v| v.as_string()).collect();
        assert!(!redacted.contains(&"ids".to_string()) && redacted.contains(&"paths".to_string()), "{redacted:?}");
    }
    let e = Inspector::share_link(&json, JsValue::from_str("{not json"), None).unwrap_err();
    assert_eq!(err_kind(e), "bad-option");
    assert_eq!(err_kind(Inspector::share_link("[]", JsValue::UNDEFINED, None).unwrap_err()), "bad-input");
    assert_eq!(err_kind(Inspector::share_link(&json, JsValue::UNDEFINED, Some(100)).unwrap_err()), "over-budget");
    let cats = js_sys::Array::from(&Inspector::share_categories().unwrap());
    assert_eq!(cats.length(), 6);
    assert_eq!(get(&cats.get(0), "name").as_string().unwrap(), "ids");
}

#[wasm_bindgen_test]
fn share_damaged_fragments_throw_typed_errors_in_wasm() {
    let fx = healthy_agg();
    let json = Inspector::new(JsValue::UNDEFINED).unwrap().diagnose_zip(fx.zip, fx.name).unwrap();
    let fragment =
        get(&Inspector::share_link(&json, JsValue::UNDEFINED, None).unwrap(), "fragment").as_string().unwrap();
    let kind = |f: &str| err_kind(Inspector::open_share_fragment(f).unwrap_err());
    assert_eq!(kind(&fragment[..fragment.len() / 2]), "truncated");
    let mut tampered = fragment.clone().into_bytes();
    let i = tampered.len() - 40;
    tampered[i] = if tampered[i] == b'x' { b'y' } else { b'x' };
    let k = kind(&String::from_utf8(tampered).unwrap());
    // One flipped byte inside the deflate stream: it no longer inflates, or ends early, or inflates to bytes that
    // are not the report's JSON; each is a typed error, never a rendered report.
    assert!(k == "corrupt" || k == "not-json" || k == "truncated", "{k}");
    assert_eq!(kind("#report=1.<img src=x onerror=alert(1)>"), "bad-encoding");
    assert_eq!(kind("#report=9.abc"), "unknown-format");
    assert_eq!(kind("#theme=dark"), "no-report");
    let e = Inspector::open_share_fragment("#report=1.abc").unwrap_err();
    let msg = get(&e, "message").as_string().unwrap();
    assert!(msg.contains("link"), "{msg}");
}
