//! The restart plan: for a failing or risky verdict, the ways out ranked safest first, each with its cost in
//! plain words and, where it changes the query, ready-to-paste PySpark and Scala snippets (never executed).
//!
//! The plan is computed after the checks and the prediction ([`plan`]); it reads the model, the user's
//! [`Context`] and the findings, never the archive. The report carries it as `restart_plan`
//! ([`RestartPlan`]); the CLI prints it under the verdict and the page shows it with copy buttons.
//!
//! # Ranking
//!
//! A [`WayOut`] is ranked by its [`WayOutKind`] (the enum's order is the safety order: repair in place, retry,
//! raise the source's retention, `failOnDataLoss=false` on this checkpoint, a new checkpoint with a bounded
//! start, a new checkpoint from the sources' defaults), then by source index, then in the order planners
//! returned them. `rank` is 1-based after sorting.
//!
//! # How a source adds its ways out
//!
//! One file per concern: `start.rs` (where a new checkpoint starts: the last committed batch's end offsets),
//! `repair.rs` (repairs in place the findings allow), `new_checkpoint.rs` (assembles the NEW-checkpoint way
//! out from every source's [`SourceStart`]), `snippet.rs` (PySpark / Scala text), one file per source kind
//! (`kafka.rs`, `delta.rs`, `files.rs` for the file source and Auto Loader, `other.rs` for rate/memory/socket/unknown).
//! A source kind adds itself with one [`SourcePlanner`] row in [`PLANNERS`]:
//!
//! ```text
//! // restart_plan/delta.rs
//! pub(super) const PLANNER: SourcePlanner = SourcePlanner {
//!     kind: SourceKind::Delta,
//!     ways_out,          // fn(&PlanInput<'_>, &SourceAt<'_>) -> Vec<WayOut>: raise retention, failOnDataLoss, ...
//!     start,             // fn(&PlanInput<'_>, &SourceAt<'_>) -> Option<SourceStart>: startingVersion, ...
//! };
//! // restart_plan/mod.rs: `mod delta;` and `delta::PLANNER,` in PLANNERS.
//! ```
//!
//! `ways_out` returns the source's own ways out (each with `source_index: Some(at.index)`, its `answers`
//! codes, costs, and snippets built with [`snippet::source_snippets`]); `start` returns the options that make
//! this source start where the checkpoint stopped on a NEW checkpoint (`SourceStart::options` with
//! `fresh_checkpoint_only` set for options a source honours only without a checkpoint, e.g. Kafka
//! `startingOffsets`, Delta `startingVersion`), what was dropped and why, and the instant after which the
//! computed start must be recomputed (`recompute_after_ms`). The NEW-checkpoint way out is assembled from all
//! sources' starts by `new_checkpoint.rs`; a source without a planner (or whose `start` returns `None`) is
//! listed there as starting from its own options.
//!
//! Where the next batch starts: `offsets/<B>` records the END offsets of batch `B`, so after the last
//! committed batch `C` the next batch reads from the offsets of `offsets/<C>` (a planned but uncommitted batch
//! `C+1` is re-run from there too). Spark source: `MicroBatchExecution.populateStartOffsets` (apache/spark
//! sql/core/src/main/scala/org/apache/spark/sql/execution/streaming/MicroBatchExecution.scala).

mod delta;
mod files;
mod kafka;
mod new_checkpoint;
mod other;
mod repair;
pub mod snippet;
mod start;

pub use start::{source_plans, start_batch, SourcePlan};

use crate::checks::catalogue::Code;
use crate::context::Context;
use crate::log::offsets::SourceOffset;
use crate::model::Checkpoint;
use crate::report::{Finding, RestartOutcome, RestartPrediction, Severity};
use crate::source::SourceKind;
use serde::{Deserialize, Serialize};

/// The restart plan of one checkpoint (`restart_plan` in the report): present when the verdict is not a
/// plain resume or a finding is an error or a warning.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct RestartPlan {
    /// The batch whose end offsets a new checkpoint starts from (the last committed batch with readable
    /// offsets), or `None` when nothing was committed.
    pub start_batch: Option<i64>,
    /// The ways out, safest first.
    pub ways_out: Vec<WayOut>,
    /// Notes on the plan as a whole (what it could not compute and what would sharpen it).
    #[serde(default)]
    pub notes: Vec<String>,
}

/// The kind of a way out; the order of the variants is the safety order (safest first).
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq, PartialOrd, Ord, Hash)]
#[serde(rename_all = "snake_case")]
pub enum WayOutKind {
    /// Repair the checkpoint in place (restore a file, put a conf back, remove an orphan temp file).
    RepairInPlace,
    /// Nothing to change: retry (a transient broker view, a replayed batch).
    Retry,
    /// Raise the source's retention so the data the checkpoint needs is kept (before it ages out).
    RaiseRetention,
    /// Keep this checkpoint and let the source skip what is gone (`failOnDataLoss=false`; Delta's
    /// `skipChangeCommits`, which skips the commits that rewrite data): a silent gap.
    FailOnDataLossFalse,
    /// A NEW checkpoint whose sources start where this one stopped (a bounded start computed from it).
    NewCheckpointBoundedStart,
    /// A NEW checkpoint with the sources' own starting options (everything or nothing replayed).
    NewCheckpoint,
}

/// One way out of a failing or risky verdict.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct WayOut {
    /// 1 = the safest; set by [`plan`] after sorting.
    pub rank: u32,
    /// What kind of way out this is (its safety class).
    pub kind: WayOutKind,
    /// One line saying what to do.
    pub title: String,
    /// The finding codes this way out answers.
    #[serde(default)]
    pub answers: Vec<Code>,
    /// The source it is about (`sources/<index>`), or `None` for the whole checkpoint.
    #[serde(default)]
    pub source_index: Option<usize>,
    /// The steps, in order.
    #[serde(default)]
    pub steps: Vec<String>,
    /// What it costs, in plain words (records replayed, a gap from X to Y, duplicates, first batch size).
    #[serde(default)]
    pub costs: Vec<String>,
    /// True when it skips data without an error (a silent gap).
    #[serde(default)]
    pub data_loss: bool,
    /// The source and sink options it sets.
    #[serde(default)]
    pub options: Vec<SourceOption>,
    /// What a computed start left out, and why (e.g. a partition the brokers no longer have).
    #[serde(default)]
    pub dropped: Vec<String>,
    /// After this instant (ms since the epoch) a computed start is stale and must be recomputed.
    #[serde(default)]
    pub recompute_after_ms: Option<i64>,
    /// Ready-to-paste code (never executed): PySpark and Scala.
    #[serde(default)]
    pub snippets: Vec<Snippet>,
}

/// One option a way out sets on a source (or on the sink, `source_index: None`).
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct SourceOption {
    /// The source (`sources/<index>`), or `None` for the writer (`checkpointLocation`).
    pub source_index: Option<usize>,
    /// The option key, as the source documents it (`startingOffsets`, `cloudFiles.includeExistingFiles`).
    pub key: String,
    /// The value, exactly as to pass it.
    pub value: String,
    /// True when the source honours it only on a fresh checkpoint (ignored once a checkpoint has offsets).
    #[serde(default)]
    pub fresh_checkpoint_only: bool,
}

/// A ready-to-paste code snippet.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Snippet {
    /// `pyspark` | `scala`.
    pub language: String,
    /// The code.
    pub code: String,
}

/// Everything a planner may read: the model, the user's context, the findings and the prediction.
pub struct PlanInput<'a> {
    /// The checkpoint.
    pub cp: &'a Checkpoint,
    /// What the user added (the clock, the brokers' offsets, the pasted error).
    pub ctx: &'a Context,
    /// The findings of the checks, sorted.
    pub findings: &'a [Finding],
    /// The restart prediction.
    pub restart: &'a RestartPrediction,
}

impl PlanInput<'_> {
    /// Findings of one code.
    pub fn findings_of(&self, code: Code) -> impl Iterator<Item = &Finding> {
        self.findings.iter().filter(move |f| f.code == code)
    }
    /// True when a finding of `code` is an error or a warning.
    pub fn has(&self, code: Code) -> bool {
        self.findings_of(code).any(|f| f.severity != Severity::Info)
    }
}

/// One source as a planner sees it: its position and the end offset of the start batch.
pub struct SourceAt<'a> {
    /// Position in the offset log (`sources/<index>`).
    pub index: usize,
    /// The batch whose end offsets are `offset` (the last committed batch).
    pub batch: i64,
    /// The source's end offset in that batch.
    pub offset: &'a SourceOffset,
}

/// Where one source starts on a NEW checkpoint.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct SourceStart {
    /// Options to set on the source.
    pub options: Vec<SourceOption>,
    /// What the start costs (replay, gap, dedup hint).
    pub costs: Vec<String>,
    /// What was dropped from the computed start, and why.
    pub dropped: Vec<String>,
    /// Further steps for this source (e.g. move processed files away).
    pub steps: Vec<String>,
    /// After this instant the start is stale.
    pub recompute_after_ms: Option<i64>,
    /// True when the start skips data that the checkpoint had not yet processed (a gap).
    pub data_loss: bool,
}

/// A source kind's planner (see the module doc for how to add one).
pub struct SourcePlanner {
    /// The kind of source it plans for.
    pub kind: SourceKind,
    /// The source's own ways out (retention, failOnDataLoss, retry), each with `source_index` set.
    pub ways_out: fn(&PlanInput<'_>, &SourceAt<'_>) -> Vec<WayOut>,
    /// Where the source starts on a NEW checkpoint, or `None` to keep its own starting options.
    pub start: fn(&PlanInput<'_>, &SourceAt<'_>) -> Option<SourceStart>,
}

/// Every source planner, one row per source kind.
pub const PLANNERS: &[SourcePlanner] = &[kafka::PLANNER, delta::PLANNER, files::FILE, files::AUTO_LOADER, other::RATE];

/// The planner of a source kind, if any.
pub fn planner_for(kind: SourceKind) -> Option<&'static SourcePlanner> {
    PLANNERS.iter().find(|p| p.kind == kind)
}

/// True when the verdict asks for a plan: the restart fails or is unknown, or a finding is an error or a
/// warning.
pub fn needed(findings: &[Finding], restart: &RestartPrediction) -> bool {
    matches!(restart.outcome, RestartOutcome::Fails | RestartOutcome::Unknown)
        || findings.iter().any(|f| f.severity != Severity::Info)
}

/// The restart plan for one checkpoint, or `None` when the verdict needs none (see [`needed`]).
pub fn plan(cp: &Checkpoint, ctx: &Context, findings: &[Finding], restart: &RestartPrediction) -> Option<RestartPlan> {
    if cp.kind.0 != crate::report::CheckpointKind::StructuredStreaming || !needed(findings, restart) {
        return None;
    }
    let input = PlanInput { cp, ctx, findings, restart };
    let mut ways = repair::ways_out(&input);
    let start = start_batch(cp);
    if let Some((batch, offsets)) = start {
        for (index, offset) in offsets.iter().enumerate() {
            let at = SourceAt { index, batch, offset };
            if let Some(p) = planner_for(offset.kind) {
                ways.extend((p.ways_out)(&input, &at));
            }
        }
    }
    ways.extend(new_checkpoint::ways_out(&input));
    ways.sort_by_key(|w| (w.kind, w.source_index.unwrap_or(usize::MAX)));
    for (i, w) in ways.iter_mut().enumerate() {
        w.rank = i as u32 + 1;
    }
    let mut notes = Vec::new();
    if start.is_none() {
        notes.push(
            "No batch was committed: a new checkpoint starts from the sources' own starting options.".to_string(),
        );
    }
    notes.extend(kafka::notes(&input));
    Some(RestartPlan { start_batch: start.map(|s| s.0), ways_out: ways, notes })
}

impl WayOut {
    /// A way out with a kind and title; the other fields empty (`rank` is set by [`plan`]).
    pub fn new(kind: WayOutKind, title: impl Into<String>) -> Self {
        WayOut {
            rank: 0,
            kind,
            title: title.into(),
            answers: Vec::new(),
            source_index: None,
            steps: Vec::new(),
            costs: Vec::new(),
            data_loss: false,
            options: Vec::new(),
            dropped: Vec::new(),
            recompute_after_ms: None,
            snippets: Vec::new(),
        }
    }
}

impl SourceOption {
    /// A source option.
    pub fn new(source_index: usize, key: &str, value: impl Into<String>, fresh_checkpoint_only: bool) -> Self {
        SourceOption {
            source_index: Some(source_index),
            key: key.to_string(),
            value: value.into(),
            fresh_checkpoint_only,
        }
    }
}
