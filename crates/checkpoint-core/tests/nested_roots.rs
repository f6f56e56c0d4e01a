//! A checkpoint kept inside another (an old copy moved to `<ckpt>/old/` before a redeploy) is a checkpoint of its
//! own: each is diagnosed on its own, and the outer one's report is the one it has without the copy.

mod common;
use common::*;

#[test]
fn a_checkpoint_kept_inside_another_is_diagnosed_on_its_own() {
    let outer = load("ss-4.0.5-agg-hdfs");
    let inner = load("broken-ss-3.5.9-missing-delta");
    let mut both = outer.clone();
    both.extend(inner.iter().map(|(p, b)| (format!("old/{p}"), b.clone())));
    let got = checkpoint_reports(both);
    assert_eq!(got.len(), 2, "two checkpoints");
    assert_eq!(got[0]["root"], "");
    assert_eq!(got[1]["root"], "old");
    let strip_root = |mut v: serde_json::Value| {
        v["root"] = serde_json::Value::Null;
        v
    };
    assert_eq!(got[0], checkpoint_reports(outer)[0], "the outer checkpoint as without the copy");
    assert_eq!(strip_root(got[1].clone()), strip_root(checkpoint_reports(inner)[0].clone()), "the copy as on its own");
}
