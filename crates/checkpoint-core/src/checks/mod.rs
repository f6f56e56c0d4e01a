//! The checks: one module per family of findings. Each check is a plain function
//! `(&Checkpoint, &Context) -> Vec<Finding>` listed in [`REGISTRY`]. `Context::spark_version` is filled in
//! by [`crate::diagnose`] before the checks run (the assumed Spark version).

pub mod checksums;
pub mod error_text;
pub mod logs;
pub mod metadata;
pub mod state;
pub mod state_growth;
pub mod state_rows;
pub mod timing;
pub mod writers;

use crate::model::Checkpoint;
use crate::report::Finding;
use crate::{Context, SparkVersion};
use std::collections::BTreeMap;

/// A check: reads the model, returns findings.
pub type Check = fn(&Checkpoint, &Context) -> Vec<Finding>;

/// Every check, with a short name, in the order they run.
pub const REGISTRY: &[(&str, Check)] = &[
    ("metadata", metadata::check_metadata),
    ("escaped-path", metadata::check_escaped_path),
    ("log-files", logs::check_log_files),
    ("log-continuity", logs::check_continuity),
    ("concurrent-writers", writers::check_writers),
    ("orphan-crc", writers::check_orphan_crc),
    ("state-layout", state::check_layout),
    ("state-config", state::check_config),
    ("state-chain", state::check_chains),
    ("state-row-schema", state_rows::check_row_schema),
    ("state-verification-budget", state_rows::check_budget),
    ("state-growth", state_growth::check_growth),
    ("state-keys-behind-watermark", state_growth::check_keys_behind_watermark),
    ("watermark-not-advancing", state_growth::check_watermark_stuck),
    ("log-timing", timing::check_timing),
    ("checksums", checksums::check_checksums),
    ("error-text", error_text::check_error_text),
];

/// Runs every check of the registry.
pub fn run_all(cp: &Checkpoint, ctx: &Context) -> Vec<Finding> {
    REGISTRY.iter().flat_map(|(_, f)| f(cp, ctx)).collect()
}

/// The assumed Spark version.
pub fn spark(ctx: &Context) -> SparkVersion {
    ctx.spark_version.unwrap_or(SparkVersion::NEWEST)
}

/// True for Spark 3.x and older (untyped exceptions for most checkpoint damage).
pub fn legacy(ctx: &Context) -> bool {
    !spark(ctx).at_least(4, 0)
}

/// The confs the restarted query runs with: the session's, overridden by every conf recorded in the latest
/// offsets file (FORMATS.md §3.2: recorded keys win).
pub fn effective_conf(cp: &Checkpoint, ctx: &Context) -> BTreeMap<String, String> {
    let mut c = ctx.session_conf.clone();
    for (k, v) in cp.recorded_conf() {
        c.insert(k, v);
    }
    c
}

/// A boolean conf with a default.
pub fn conf_bool(conf: &BTreeMap<String, String>, key: &str, default: bool) -> bool {
    conf.get(key).map(|v| v.trim().eq_ignore_ascii_case("true")).unwrap_or(default)
}

/// Formats the standard "make a backup first" step.
pub const BACKUP: &str = "Copy the whole checkpoint directory somewhere safe before changing anything in it.";

/// The last-resort fix: a new checkpoint location, with each source's exact starting options
/// (see [`crate::restart_plan`]).
pub fn new_checkpoint_step(cp: &Checkpoint) -> String {
    let mut s = String::from(
        "Last resort: start the query on a NEW checkpoint location (option(\"checkpointLocation\", \"<new path>\")) \
         and make the sources start where this checkpoint stopped",
    );
    let plans = crate::restart_plan::source_plans(cp);
    if plans.is_empty() {
        s.push_str(" (no batch was committed, so the sources' own starting options apply)");
    }
    for p in plans {
        s.push_str("; ");
        s.push_str(&p.step);
    }
    s.push_str(". State (aggregations, deduplication, joins) starts empty.");
    s
}
