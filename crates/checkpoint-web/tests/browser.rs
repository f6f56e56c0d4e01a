//! checkpoint-web's JS API in headless Chromium (`CHROMEDRIVER=/usr/bin/chromedriver cargo test -p checkpoint-web
//! --target wasm32-unknown-unknown`).
#![cfg(target_arch = "wasm32")]

mod common;

use checkpoint_web::Inspector;
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
    let json = Inspector::new(opts("4.1.4", None)).unwrap().diagnose_zip(fx.zip, "broken.zip").unwrap();
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
    let json = Inspector::new(opts("4.1.4", Some(head))).unwrap().diagnose_zip(fx.zip, "broken.zip").unwrap();
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
    let from_folder = Inspector::new(opts("4.3.0", None)).unwrap().diagnose_files("chk", files).unwrap();
    let from_zip = Inspector::new(opts("4.3.0", None)).unwrap().diagnose_zip(fx.zip, "chk.zip").unwrap();
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
    let e = Inspector::new(JsValue::UNDEFINED).unwrap().diagnose_zip(b"", "empty.zip").unwrap_err();
    assert!(msg(&e).contains("empty.zip is empty"));
    assert_eq!(kind(e), "empty");
    let e =
        Inspector::new(JsValue::UNDEFINED).unwrap().diagnose_zip(b"this is not a zip at all", "notes.txt").unwrap_err();
    assert!(msg(&e).starts_with("notes.txt is not a zip archive"));
    assert_eq!(kind(e), "not-a-zip");
    let e = Inspector::new(opts("four", None)).unwrap_err();
    assert_eq!(kind(e), "bad-option");
}

#[wasm_bindgen_test]
fn reads_one_small_entry() {
    let fx = healthy_agg();
    let bytes = Inspector::default().read_zip_entry(fx.zip, "x.zip", "metadata", 65536.0).unwrap();
    let text = String::from_utf8(bytes).unwrap();
    let id = fx.record["facts"]["metadata"]["id"].as_str().unwrap();
    assert!(text.contains(id), "metadata holds the query id {id}: {text}");
    assert!(Inspector::default().read_zip_entry(fx.zip, "x.zip", "no/such/file", 10.0).is_err());
}

#[wasm_bindgen_test]
fn markdown_and_summary_carry_the_verdict() {
    let fx = missing_last_commit();
    let json = Inspector::new(opts("4.3.0", None)).unwrap().diagnose_zip(fx.zip, "chk.zip").unwrap();
    let r: serde_json::Value = serde_json::from_str(&json).unwrap();
    let md = Inspector::markdown(&json).unwrap();
    let summary = Inspector::summary(&json).unwrap();
    assert!(md.starts_with("# Spark checkpoint inspection: chk.zip"));
    assert!(md.contains("**Verdict on Spark 4.3.0: will "));
    for f in r["checkpoints"][0]["findings"].as_array().unwrap() {
        assert!(md.contains(&format!("(`{}`)", f["code"].as_str().unwrap())), "finding {} in Markdown", f["code"]);
    }
    assert!(summary.starts_with("chk.zip: on Spark 4.3.0 the query will "));
    assert!(Inspector::markdown("{}").is_err());
}

#[wasm_bindgen_test]
fn presents_for_the_page_in_the_page_words() {
    // No Spark version given: the verdict assumes the newest release, said in the page's words (no CLI flag).
    let fx = missing_last_commit();
    let json = Inspector::new(JsValue::UNDEFINED).unwrap().diagnose_zip(fx.zip, "chk.zip").unwrap();
    let r: serde_json::Value = serde_json::from_str(&json).unwrap();
    let shown: serde_json::Value = serde_wasm_bindgen::from_value(Inspector::present(&json).unwrap()).unwrap();
    let p = &shown[0];
    let c = &r["checkpoints"][0];
    assert_eq!(p["outcome"], c["restart"]["outcome"]);
    assert!(p["headline"].as_str().unwrap().starts_with("Will "), "{p}");
    let assumption = p["assumption"].as_str().unwrap();
    assert!(assumption.contains("pick the Spark version"), "{assumption}");
    assert!(c["restart"]["assumption"].as_str().unwrap().contains("--spark-version"), "the JSON keeps the CLI's words");
    assert!(!p["summary"].as_str().unwrap().contains("--"), "{p}");
    let order: Vec<u64> = p["finding_order"].as_array().unwrap().iter().map(|v| v.as_u64().unwrap()).collect();
    assert_eq!(order.len(), c["findings"].as_array().unwrap().len());
    let versions = Inspector::spark_versions();
    assert_eq!(versions[0], "4.3.0");
    assert_eq!(Inspector::parse_spark_version("4.1"), Some("4.1.0".to_string()));
    assert_eq!(Inspector::parse_spark_version("<img>"), None);
}
