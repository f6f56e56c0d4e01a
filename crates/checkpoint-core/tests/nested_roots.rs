//! A checkpoint kept inside another (an old copy moved to `<ckpt>/old/` before a redeploy) is a checkpoint of its
//! own: each is diagnosed on its own, and the outer one's report is the one it has without the copy.

mod common;
use common::*;

use checkpoint_core::archive::{Limits, MemArchive};
use checkpoint_core::{diagnose, Context};

fn reports(files: Vec<(String, Vec<u8>)>) -> Vec<serde_json::Value> {
    let ctx = Context { now_ms: Some(1_800_000_000_000), ..Default::default() };
    let mut a = MemArchive::new("in.zip", files, Limits::default()).unwrap();
    diagnose(&mut a, &ctx).checkpoints.iter().map(|c| serde_json::to_value(c).unwrap()).collect()
}

#[test]
fn a_checkpoint_kept_inside_another_is_diagnosed_on_its_own() {
    let outer = load("ss-4.0.5-agg-hdfs");
    let inner = load("broken-ss-3.5.9-missing-delta");
    let mut both = outer.clone();
    both.extend(inner.iter().map(|(p, b)| (format!("old/{p}"), b.clone())));
    let got = reports(both);
    assert_eq!(got.len(), 2, "two checkpoints");
    assert_eq!(got[0]["root"], "");
    assert_eq!(got[1]["root"], "old");
    let strip_root = |mut v: serde_json::Value| {
        v["root"] = serde_json::Value::Null;
        v
    };
    assert_eq!(got[0], reports(outer)[0], "the outer checkpoint as without the copy");
    assert_eq!(strip_root(got[1].clone()), strip_root(reports(inner)[0].clone()), "the copy as on its own");
}
