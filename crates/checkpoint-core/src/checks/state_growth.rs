//! State growth and event-time eviction (issue 4): state size by version from the files on disk
//! ([`crate::model::Checkpoint::state_growth`]), keys whose event time is far behind the watermark in the
//! state a restart loads ([`crate::model::StoreRows`]), and a watermark that does not move.
//!
//! Spark evicts aggregation state in append and update mode at the end of each batch: keys whose
//! `window.end` is at or below the batch's watermark (`StateStoreSaveExec`, `watermarkPredicateForKeys`);
//! in complete mode nothing is evicted. State version `v` is written by batch `v - 1`, whose watermark is
//! `offsets/<v-1>`'s `batchWatermarkMs`.

use super::state_rows::human_bytes;
use super::BACKUP;
use crate::model::Checkpoint;
use crate::report::{CheckpointKind, Code, Finding, Severity};
use crate::Context;

/// Minimum snapshot versions for a growth judgement.
const MIN_POINTS: usize = 3;
/// Growth factor between the oldest and the newest snapshot that is reported.
const GROWTH_FACTOR: f64 = 2.0;
/// Batches with an unchanged watermark that are reported.
const STUCK_BATCHES: usize = 5;

fn ms_to_utc(ms: i64) -> String {
    let secs = ms.div_euclid(1000);
    crate::state::unsafe_row::format_timestamp(secs.saturating_mul(1_000_000), true)
}

/// State that keeps growing from snapshot to snapshot.
pub fn check_growth(cp: &Checkpoint, _ctx: &Context) -> Vec<Finding> {
    if cp.kind.0 != CheckpointKind::StructuredStreaming {
        return vec![];
    }
    let mut out = Vec::new();
    for (op, points) in &cp.state_growth {
        // Per-partition averages at the versions that have snapshots.
        let snaps: Vec<(i64, f64, Option<f64>)> = points
            .iter()
            .filter(|p| p.partitions > 0)
            .map(|p| {
                let n = p.partitions as f64;
                (p.version, p.snapshot_bytes as f64 / n, p.keys.map(|k| k as f64 / n))
            })
            .collect();
        if snaps.len() < MIN_POINTS {
            continue;
        }
        // Keys when every point has them, else bytes.
        let by_keys = snaps.iter().all(|s| s.2.is_some());
        let series: Vec<f64> = snaps.iter().map(|s| if by_keys { s.2.unwrap_or(0.0) } else { s.1 }).collect();
        let (first, last) = (series[0], series[series.len() - 1]);
        let monotone = series.windows(2).all(|w| w[1] >= w[0]);
        if !(monotone && first > 0.0 && last >= GROWTH_FACTOR * first) {
            continue;
        }
        let (v0, v1) = (snaps[0].0, snaps[snaps.len() - 1].0);
        let unit = |x: f64| if by_keys { format!("{x:.0} keys") } else { human_bytes(x as u64) };
        let mut f = Finding::new(
            Code::StateGrowing,
            Severity::Warning,
            format!(
                "State of operator {op} grew {:.1}x from version {v0} to {v1} ({} → {} per partition) and never shrank",
                last / first,
                unit(first),
                unit(last)
            ),
        );
        for (s, x) in snaps.iter().zip(&series).rev().take(6) {
            f = f.evidence(
                format!("state/{op}"),
                format!(
                    "version {}: {} per partition ({})",
                    s.0,
                    unit(*x),
                    if by_keys { "numKeys of the zip metadata" } else { "snapshot file sizes" }
                ),
                None,
            );
        }
        out.push(
            f.why("A stateful query whose state only grows is not evicting: an aggregation or deduplication without a watermark, a watermark on another column than the grouping key, complete output mode, or keys that never repeat (e.g. a unique id in the key). Memory and checkpoint size then grow until the query slows down or fails (OOM, long state loads).")
                .fix(&[
                    "Check the query has withWatermark on the event-time column it groups or deduplicates by, and runs in append or update mode.".to_string(),
                    "Use dropDuplicatesWithinWatermark (3.5+) instead of dropDuplicates, or add the event-time column to the deduplication key.".to_string(),
                    "Changing the watermark or keys needs a new checkpoint location; plan the migration: ".to_string() + &super::new_checkpoint_step(cp),
                ]),
        );
    }
    out
}

/// Keys whose `window.end` is at or below the watermark of the batch that wrote the state.
pub fn check_keys_behind_watermark(cp: &Checkpoint, _ctx: &Context) -> Vec<Finding> {
    let stores: Vec<_> = cp.store_rows.values().filter(|s| s.keys_behind_watermark > 0).collect();
    let Some(first) = stores.first() else {
        return vec![];
    };
    let version = first.version;
    let wm = cp
        .offsets
        .get(&version.saturating_sub(1))
        .and_then(|o| o.file.content.as_ref().ok())
        .and_then(|o| o.metadata.as_ref())
        .and_then(|m| m.batch_watermark_ms)
        .unwrap_or(0);
    let behind: u64 = stores.iter().map(|s| s.keys_behind_watermark).sum();
    let rows: u64 = cp.store_rows.values().map(|s| s.rows).sum();
    let oldest = stores.iter().filter_map(|s| s.window_end_min_ms).min().unwrap_or(wm);
    let mut f = Finding::new(
        Code::StateKeysBehindWatermark,
        Severity::Warning,
        format!("{behind} of {rows} state keys have a window that ended at or before the watermark ({}); they are not being evicted", ms_to_utc(wm)),
    )
    .evidence(format!("offsets/{}", version.saturating_sub(1)), format!("batchWatermarkMs = {wm} ({})", ms_to_utc(wm)), None);
    for s in stores.iter().take(8) {
        f = f.evidence(
            &s.store_dir,
            format!(
                "state version {}: {} of {} keys with window.end <= watermark; oldest window.end {}",
                s.version,
                s.keys_behind_watermark,
                s.rows,
                s.window_end_min_ms.map(ms_to_utc).unwrap_or_default()
            ),
            None,
        );
    }
    vec![f
        .why(format!(
            "In append and update mode a windowed aggregation drops a window's state once the watermark passes its end. State version {version} was written by batch {} with watermark {}, yet it holds windows ending as early as {}: the query runs in complete mode (never evicts), or its watermark is defined on another column than the window's, so state grows without bound.",
            version.saturating_sub(1),
            ms_to_utc(wm),
            ms_to_utc(oldest)
        ))
        .fix(&[
            "If the query uses complete output mode, this is expected; switch to update or append mode to bound the state.".to_string(),
            "Define withWatermark on the same event-time column the window is built on.".to_string(),
            format!("{BACKUP} Changing the output mode or watermark of a stateful query needs a new checkpoint: {}", super::new_checkpoint_step(cp)),
        ])]
}

/// The watermark has not moved over the last batches while batches kept running.
pub fn check_watermark_stuck(cp: &Checkpoint, _ctx: &Context) -> Vec<Finding> {
    if cp.kind.0 != CheckpointKind::StructuredStreaming || cp.state.operators.is_empty() {
        return vec![];
    }
    let recent: Vec<(i64, i64, Option<i64>)> = cp
        .offsets
        .iter()
        .rev()
        .filter_map(|(id, f)| {
            let m = f.file.content.as_ref().ok()?.metadata.as_ref()?;
            Some((*id, m.batch_watermark_ms.unwrap_or(0), m.batch_timestamp_ms))
        })
        .take(64)
        .collect();
    if recent.len() < STUCK_BATCHES {
        return vec![];
    }
    let wm = recent[0].1;
    let same = recent.iter().take_while(|r| r.1 == wm).count();
    // Only a watermark that has moved before and then stopped, or an event-time window state that
    // never sees one, is worth reporting; a query without event time has watermark 0 throughout.
    let has_window_keys = cp.store_rows.values().any(|s| s.window_end_min_ms.is_some());
    if same < STUCK_BATCHES || (wm == 0 && !has_window_keys) {
        return vec![];
    }
    let (newest, oldest) = (recent[0], recent[same - 1]);
    let span = newest.2.zip(oldest.2).map(|(a, b)| a.saturating_sub(b)).unwrap_or(0);
    if span <= 0 {
        return vec![];
    }
    vec![Finding::new(
        Code::WatermarkNotAdvancing,
        Severity::Info,
        format!("The watermark stayed at {} for the last {same} batches ({:.1} min of batch time)", if wm == 0 { "0 (none yet)".to_string() } else { ms_to_utc(wm) }, span as f64 / 60_000.0),
    )
    .evidence(format!("offsets/{}", oldest.0), format!("batchWatermarkMs = {wm}, batchTimestampMs = {}", oldest.2.unwrap_or(0)), None)
    .evidence(format!("offsets/{}", newest.0), format!("batchWatermarkMs = {wm}, batchTimestampMs = {}", newest.2.unwrap_or(0)), None)
    .why("The watermark only moves when new rows carry later event times (max event time minus the delay). When it stands still, windows are not finalised (append mode emits nothing) and state is not evicted: the input has no newer events, one source or partition lags (the watermark follows the slowest source with the default multipleWatermarkPolicy=min), or event times are far in the past.")
    .fix(&[
        "Check the event times of the newest input rows against the watermark delay.",
        "With several sources, check each one delivers data; consider spark.sql.streaming.multipleWatermarkPolicy=max if a source is idle by design (it is recorded in the checkpoint: a new checkpoint is needed to change it).",
    ])]
}
