//! The worker's warm-up: once it is ready, and until the page's first request, it diagnoses two small real
//! checkpoints a round at a time, through the very code path of a dropped zip (a `Blob` read by
//! [`crate::blob::BlobZip`], `diagnose_progressive`, the report's texts and messages, built and not posted).
//!
//! Why: the browser compiles a wasm function when it is first called, with its baseline compiler, and
//! recompiles it with its optimizing one only after it has run for a while. A first diagnosis of a big
//! checkpoint pays both in its own time: measured on the core in Node's V8 (`tools/wasm-prof`), the verdict of
//! the generated 94k-file checkpoint came after 448 ms in a fresh instance and 169 ms after 30 diagnoses of the
//! HDFS sample (118 ms in all); the page's figures are in the README ("Big checkpoints").
//!
//! A round is one small diagnosis (a few milliseconds once compiled; the first one, which compiles, the most),
//! each in a task of its own, so a request that comes during the warm-up waits for one round at most; the first
//! request stops it ([`stop`]). The inputs: the HDFS sample the page offers (`web/samples/ss-4.3.0-agg-hdfs.zip`)
//! and `warmup/rocksdb.zip`, partition 0 of the real Spark 4.3.0 RocksDB fixture (`warmup/make.py`).

use crate::worker::{diagnose_input, post_warm, Deliver, Input};
use crate::Options;
use std::cell::Cell;
use wasm_bindgen::prelude::*;

/// The warm-up inputs, diagnosed in turn.
const INPUTS: [&[u8]; 2] =
    [include_bytes!("../../../web/samples/ss-4.3.0-agg-hdfs.zip"), include_bytes!("../warmup/rocksdb.zip")];

/// Rounds at most (one input each).
pub const ROUNDS: usize = 24;

thread_local! {
    /// Set by the first request (or once every round ran): no more rounds.
    static STOPPED: Cell<bool> = const { Cell::new(false) };
    /// When the warm-up started (`Date.now()`).
    static STARTED: Cell<f64> = const { Cell::new(0.0) };
}

/// Starts the warm-up (call once the worker is ready).
pub fn start() {
    STARTED.with(|s| s.set(js_sys::Date::now()));
    schedule(0);
}

/// Stops the warm-up: no round starts after this.
pub fn stop() {
    STOPPED.with(|s| s.set(true));
}

/// Runs round `round` in a task of its own (a timer of 0 ms), then schedules the next.
fn schedule(round: usize) {
    if STOPPED.with(Cell::get) {
        return;
    }
    if round >= ROUNDS {
        stop();
        post_warm(round, js_sys::Date::now() - STARTED.with(Cell::get));
        return;
    }
    let next = Closure::once_into_js(move || {
        if STOPPED.with(Cell::get) {
            return;
        }
        run(INPUTS[round % INPUTS.len()]);
        schedule(round + 1);
    });
    let scope: web_sys::WorkerGlobalScope = js_sys::global().unchecked_into();
    if scope.set_timeout_with_callback_and_timeout_and_arguments_0(next.unchecked_ref(), 0).is_err() {
        stop();
    }
}

/// One round: `bytes` diagnosed as a dropped zip is, the messages built and dropped.
fn run(bytes: &[u8]) {
    let parts = js_sys::Array::of1(&js_sys::Uint8Array::from(bytes));
    let Ok(file) = web_sys::Blob::new_with_u8_array_sequence(&parts) else { return };
    let input = Input::Zip { file, name: "warm-up.zip".into() };
    // A warm-up input that fails to diagnose (never seen) only ends its round.
    let _ = diagnose_input(Deliver::Discard, &JsValue::UNDEFINED, &input, &Options::default());
}
