//! checkpoint-web's JS API in Node (the runner's default when no `wasm_bindgen_test_configure!` is given).
#![cfg(target_arch = "wasm32")]

mod common;

use checkpoint_web::Inspector;
use common::*;
use wasm_bindgen::JsValue;
use wasm_bindgen_test::*;

#[wasm_bindgen_test]
fn diagnoses_fixtures_in_node() {
    for fx in [healthy_agg(), missing_delta(), missing_last_commit()] {
        let json = Inspector::new(JsValue::UNDEFINED).unwrap().diagnose_zip(fx.zip, fx.name).unwrap();
        assert_matches_facts(&json, &fx);
    }
}

#[wasm_bindgen_test]
fn uncommitted_last_batch_is_replayed() {
    // Spark 4.3.0 re-ran batch 11 (the planned, uncommitted one) on restart: the fixture's batches_run_on_restart.
    let fx = missing_last_commit();
    let first_run = fx.record["restart_outcome"]["batches_run_on_restart"][0].as_i64().unwrap();
    let o = js_sys::Object::new();
    js_sys::Reflect::set(&o, &"spark_version".into(), &"4.3.0".into()).unwrap();
    let json = Inspector::new(o.into()).unwrap().diagnose_zip(fx.zip, fx.name).unwrap();
    let r: serde_json::Value = serde_json::from_str(&json).unwrap();
    let restart = &r["checkpoints"][0]["restart"];
    assert_eq!(restart["outcome"], "replays_last_batch");
    assert_eq!(restart["error_class"], serde_json::Value::Null);
    assert_eq!(r["checkpoints"][0]["last_batch_id"].as_i64(), Some(first_run));
}
