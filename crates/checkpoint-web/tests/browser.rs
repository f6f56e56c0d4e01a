//! checkpoint-web's JS API in headless Chromium (`CHROMEDRIVER=/usr/bin/chromedriver cargo test -p checkpoint-web
//! --target wasm32-unknown-unknown`).
#![cfg(target_arch = "wasm32")]

mod common;

use checkpoint_web::api;
use common::*;
use js_sys::{Array, Reflect, Uint8Array};
use wasm_bindgen::prelude::*;
use wasm_bindgen_test::*;

wasm_bindgen_test_configure!(run_in_browser);

fn opts(version: &str, error_text: Option<&str>) -> JsValue {
    let o = js_sys::Object::new();
    Reflect::set(&o, &"spark_version".into(), &version.into()).unwrap();
    if let Some(t) = error_text {
        Reflect::set(&o, &"error_text".into(), &t.into()).unwrap();
    }
    o.into()
}

#[wasm_bindgen_test]
fn diagnoses_a_missing_delta_like_spark() {
    let fx = missing_delta();
    let json = api::diagnose_zip(fx.zip, "broken.zip", opts("4.1.4", None)).unwrap();
    assert_matches_facts(&json, &fx);
    let r: serde_json::Value = serde_json::from_str(&json).unwrap();
    let restart = &r["checkpoints"][0]["restart"];
    // Spark 4.1.4 really failed on this checkpoint with this error class (the fixture's restart_outcome).
    assert_eq!(restart["outcome"], "fails");
    assert_eq!(restart["error_class"], fx.record["restart_outcome"]["error_class"]);
    assert_eq!(restart["assumed_spark_version"], "4.1.4");
    assert_eq!(r["input"]["name"], "broken.zip");
    assert_eq!(r["input"]["bytes"], fx.zip.len() as u64);
}

#[wasm_bindgen_test]
fn pasted_error_text_is_explained_by_a_finding() {
    let fx = missing_delta();
    let head = fx.record["restart_outcome"]["message_head"].as_str().unwrap();
    let json = api::diagnose_zip(fx.zip, "broken.zip", opts("4.1.4", Some(head))).unwrap();
    let r: serde_json::Value = serde_json::from_str(&json).unwrap();
    let findings = r["checkpoints"][0]["findings"].as_array().unwrap();
    assert!(
        findings.iter().any(|f| f["explains_error_text"] == true),
        "Spark's own error message for this checkpoint is explained by some finding"
    );
}

#[wasm_bindgen_test]
fn a_folder_gives_the_same_diagnosis_as_its_zip() {
    let fx = healthy_agg();
    let files = Array::new();
    for (path, bytes) in unzip(fx.zip) {
        let pair = Array::new();
        pair.push(&JsValue::from_str(&path));
        pair.push(&Uint8Array::from(bytes.as_slice()));
        files.push(&pair);
    }
    let from_folder = api::diagnose_files("chk", files, opts("4.3.0", None)).unwrap();
    let from_zip = api::diagnose_zip(fx.zip, "chk.zip", opts("4.3.0", None)).unwrap();
    assert_matches_facts(&from_folder, &fx);
    let a: serde_json::Value = serde_json::from_str(&from_folder).unwrap();
    let b: serde_json::Value = serde_json::from_str(&from_zip).unwrap();
    assert_eq!(a["checkpoints"], b["checkpoints"]);
    assert_eq!(a["input"]["name"], "chk");
}

#[wasm_bindgen_test]
fn unreadable_inputs_throw_clear_errors_with_a_kind() {
    let kind = |e: JsValue| Reflect::get(&e, &"kind".into()).unwrap().as_string().unwrap();
    let msg = |e: &JsValue| js_sys::Error::from(e.clone()).message().as_string().unwrap();
    let e = api::diagnose_zip(b"", "empty.zip", JsValue::UNDEFINED).unwrap_err();
    assert!(msg(&e).contains("empty.zip is empty"));
    assert_eq!(kind(e), "empty");
    let e = api::diagnose_zip(b"this is not a zip at all", "notes.txt", JsValue::UNDEFINED).unwrap_err();
    assert!(msg(&e).starts_with("notes.txt is not a zip archive"));
    assert_eq!(kind(e), "not-a-zip");
    let e = api::diagnose_zip(healthy_agg().zip, "x.zip", opts("four", None)).unwrap_err();
    assert_eq!(kind(e), "bad-option");
}

#[wasm_bindgen_test]
fn reads_one_small_entry() {
    let fx = healthy_agg();
    let bytes = api::read_zip_entry(fx.zip, "x.zip", "metadata", 65536.0).unwrap();
    let text = String::from_utf8(bytes).unwrap();
    let id = fx.record["facts"]["metadata"]["id"].as_str().unwrap();
    assert!(text.contains(id), "metadata holds the query id {id}: {text}");
    assert!(api::read_zip_entry(fx.zip, "x.zip", "no/such/file", 10.0).is_err());
}

#[wasm_bindgen_test]
fn markdown_and_summary_carry_the_verdict() {
    let fx = missing_last_commit();
    let json = api::diagnose_zip(fx.zip, "chk.zip", opts("4.3.0", None)).unwrap();
    let r: serde_json::Value = serde_json::from_str(&json).unwrap();
    let md = api::report_markdown(&json).unwrap();
    let summary = api::report_summary(&json).unwrap();
    assert!(md.starts_with("# Spark checkpoint inspection: chk.zip"));
    assert!(md.contains("**Verdict on Spark 4.3.0: will "));
    for f in r["checkpoints"][0]["findings"].as_array().unwrap() {
        assert!(md.contains(&format!("(`{}`)", f["code"].as_str().unwrap())), "finding {} in Markdown", f["code"]);
    }
    assert!(summary.starts_with("chk.zip: on Spark 4.3.0 the query will "));
    assert!(api::report_markdown("{}").is_err());
}
