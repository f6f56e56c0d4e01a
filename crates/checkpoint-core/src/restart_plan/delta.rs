//! The Delta source's ways out and its start on a new checkpoint, from the facts of [`crate::delta::facts`]
//! (the checkpoint's offset, the table's `_delta_log` when given, the retention that applies).
//!
//! Delta source options (delta-io/delta `DeltaOptions.scala`, `DeltaSource.scala`): `startingVersion` /
//! `startingTimestamp` are read only when the checkpoint has no offset yet (`DeltaSource.getStartingOffset`),
//! so they need a NEW checkpoint; `failOnDataLoss` (default true), `skipChangeCommits`, `maxBytesPerTrigger`,
//! `maxFilesPerTrigger` and `schemaTrackingLocation` are read on every run.

use super::{snippet, PlanInput, SourceAt, SourceOption, SourcePlanner, SourceStart, WayOut, WayOutKind};
use crate::checks::catalogue::Code;
use crate::delta::facts::{delta_sources, DeltaSourceFacts};
use crate::delta::interval::{describe_ms, DAY_MS};
use crate::report::Severity;
use crate::source::SourceKind;
use crate::time::utc;

/// The Delta source planner.
pub(super) const PLANNER: SourcePlanner = SourcePlanner { kind: SourceKind::Delta, ways_out, start };

/// The bound of the first batch of a new checkpoint.
const FIRST_BATCH_BYTES: &str = "1g";

fn facts<'a>(input: &PlanInput<'a>, at: &SourceAt<'_>) -> Option<DeltaSourceFacts<'a>> {
    delta_sources(input.cp, input.ctx).into_iter().find(|s| s.index == at.index)
}

fn risky(input: &PlanInput<'_>, code: Code) -> bool {
    input.findings_of(code).any(|f| f.severity != Severity::Info)
}

fn kinds(at: &SourceAt<'_>) -> Vec<SourceKind> {
    vec![SourceKind::Delta; at.index + 1]
}

fn ways_out(input: &PlanInput<'_>, at: &SourceAt<'_>) -> Vec<WayOut> {
    let Some(s) = facts(input, at) else { return vec![] };
    let Some(v) = s.needed_version() else { return vec![] };
    let mut out = Vec::new();
    let expired = risky(input, Code::DeltaVersionExpired);
    let countdown = risky(input, Code::DeltaRetentionCountdown);
    let initial = s.offset.as_ref().is_ok_and(|o| o.is_initial_snapshot);
    if countdown && !expired {
        let mut w = WayOut::new(
            WayOutKind::RaiseRetention,
            "Raise the Delta table's log retention before version {v} is cleaned up".replace("{v}", &v.to_string()),
        );
        w.source_index = Some(at.index);
        w.answers.push(Code::DeltaRetentionCountdown);
        let days = input
            .ctx
            .now_ms
            .zip(s.countdown_start_ms())
            .map(|(n, t)| n.saturating_sub(t) / DAY_MS + 30)
            .unwrap_or(60)
            .max(60);
        w.steps.push(format!("ALTER TABLE <table> SET TBLPROPERTIES ('delta.logRetentionDuration' = 'interval {days} days') (today {}), then restart the query unchanged.", current(&s.log_retention.table_value, s.log_retention.ms)));
        w.costs.push("The table keeps its commit files longer: a little storage and longer log listings for every reader; no data files are kept (that is delta.deletedFileRetentionDuration, which keeps removed data files and costs their storage).".into());
        if let Some(e) = s.cleanup_eligible_ms() {
            w.costs.push(format!("Only in time before {}: from then on log cleanup (after the table's next checkpoint) may remove version {v}.", utc(e)));
            w.recompute_after_ms = Some(e);
        }
        out.push(w);
    }
    if risky(input, Code::DeltaDataFilesVacuumable) {
        let mut w = WayOut::new(
            WayOutKind::RaiseRetention,
            "Keep removed data files longer (delta.deletedFileRetentionDuration) before the next VACUUM",
        );
        w.source_index = Some(at.index);
        w.answers.push(Code::DeltaDataFilesVacuumable);
        w.steps.push(format!("ALTER TABLE <table> SET TBLPROPERTIES ('delta.deletedFileRetentionDuration' = 'interval 30 days') (today {}); check that the files the finding names still exist.", current(&s.deleted_file_retention.table_value, s.deleted_file_retention.ms)));
        w.costs.push("Removed data files stay on storage for the longer window: their storage is the cost. Files VACUUM already deleted do not come back.".into());
        out.push(w);
    }
    let lost = expired || input.findings_of(Code::DeltaRetentionCountdown).any(|f| f.severity == Severity::Error);
    // Delta refuses failOnDataLoss=false when the query tracks the schema (DeltaSourceFacts::tracks_schema).
    // A column-mapping table whose start snapshot cannot be built fails before failOnDataLoss is read.
    let cm_no_snapshot = input
        .findings_of(Code::DeltaVersionExpired)
        .any(|f| f.error_classes.iter().any(|c| c == crate::checks::delta_log::CM_NO_SNAPSHOT));
    if cm_no_snapshot && !initial {
        out.push(cm_unsafe(&s, at, v));
    }
    if lost && !initial && !s.tracks_schema(input.cp) && !cm_no_snapshot {
        out.push(skip_lost_versions(&s, at, v));
    }
    let schema_blocks = input
        .findings_of(Code::DeltaSchemaChange)
        .any(|f| f.error_classes.iter().any(|c| c == "DELTA_SCHEMA_CHANGED_WITH_VERSION"));
    // A schema change the stream cannot cross on this checkpoint stops it first: skipping commits does not help.
    let delta = crate::delta::release::line(crate::checks::spark(input.ctx));
    if risky(input, Code::DeltaNonAppendCommit) && !schema_blocks && delta.has_skip_change_commits() {
        let mut w = WayOut::new(
            WayOutKind::FailOnDataLossFalse,
            "Keep this checkpoint and skip the commits that delete or rewrite data (skipChangeCommits=true)",
        );
        w.source_index = Some(at.index);
        w.answers.push(Code::DeltaNonAppendCommit);
        w.data_loss = true;
        w.costs.push("Every commit that removes files is skipped whole, the rows it adds included (an overwrite's new rows, an UPDATE's new versions): downstream never sees those changes.".into());
        w.options.push(SourceOption::new(at.index, "skipChangeCommits", "true", false));
        w.snippets = snippet::source_snippets(&w.options, &kinds(at), false);
        out.push(w);
    } else if risky(input, Code::DeltaNonAppendCommit) && !schema_blocks {
        // Before Delta 2.4 (Spark 3.4) only ignoreChanges: the rewritten files come again, nothing is skipped.
        let mut w = WayOut::new(
            WayOutKind::FailOnDataLossFalse,
            "Keep this checkpoint and re-read the files that rewriting commits add (ignoreChanges=true)",
        );
        w.source_index = Some(at.index);
        w.answers.push(Code::DeltaNonAppendCommit);
        w.costs.push(format!("Every file a rewriting commit adds is read again: rows that did not change come twice (duplicates downstream), and deletes are not seen ({} has no skipChangeCommits, which came with Delta 2.4).", delta.name()));
        w.options.push(SourceOption::new(at.index, "ignoreChanges", "true", false));
        w.snippets = snippet::source_snippets(&w.options, &kinds(at), false);
        out.push(w);
    }
    if let Some(f) = input.findings_of(Code::DeltaTableReplaced).next() {
        let mut w = WayOut::new(
            WayOutKind::RepairInPlace,
            "If the query now reads another table by mistake, point it back at the table the checkpoint read",
        );
        w.source_index = Some(at.index);
        w.answers.push(Code::DeltaTableReplaced);
        w.steps.push(format!("Check the path or table name the Delta source reads: {}", f.title));
        w.costs.push("None if it was a configuration change; if the table was really dropped and re-created, this checkpoint cannot be reused (see the NEW checkpoint way out).".into());
        out.push(w);
    }
    let cm_schema = input
        .findings_of(Code::DeltaSchemaChange)
        .any(|f| f.error_classes.iter().any(|c| c.starts_with("DELTA_STREAMING_INCOMPATIBLE_SCHEMA_CHANGE")));
    if cm_schema {
        let mut w = WayOut::new(
            WayOutKind::RepairInPlace,
            "Keep this checkpoint and let Delta track the schema (schemaTrackingLocation)",
        );
        w.source_index = Some(at.index);
        w.answers.push(Code::DeltaSchemaChange);
        // The plain class is Delta's with schema tracking turned off (the finding's `tracking_off`).
        let off = input
            .findings_of(Code::DeltaSchemaChange)
            .any(|f| f.error_classes.iter().any(|c| c == "DELTA_STREAMING_INCOMPATIBLE_SCHEMA_CHANGE"));
        if off && delta == crate::delta::release::DeltaLine::V2_4 {
            w.steps.push(format!("Set {}=true first (an internal conf of Delta 2.4, off by default; without it Delta refuses schemaTrackingLocation).", crate::checks::delta_log::NON_ADDITIVE_2_4));
        } else if off {
            w.steps.push(crate::checks::delta_log::TRACKING_BACK_ON.trim().to_string());
        }
        w.steps.push(format!("Set .option(\"schemaTrackingLocation\", \"<checkpoint path>/_schema_log\") (a folder under this checkpoint) and restart: Delta records the schema per version and stops once at the change; acknowledge it with {} and restart again.", delta.acknowledge()));
        w.costs.push("No data is skipped; the rows written after the change lack the dropped column (or carry the renamed one): check the sink's schema.".into());
        w.options.push(SourceOption::new(at.index, "schemaTrackingLocation", "<checkpoint path>/_schema_log", false));
        w.snippets = snippet::source_snippets(&w.options, &kinds(at), false);
        out.push(w);
    }
    out
}

/// Keep this checkpoint and let the Delta source skip the versions that are gone (`failOnDataLoss=false`).
fn skip_lost_versions(s: &DeltaSourceFacts<'_>, at: &SourceAt<'_>, v: i64) -> WayOut {
    let mut w = WayOut::new(
        WayOutKind::FailOnDataLossFalse,
        "Keep this checkpoint and let the Delta source skip the versions that are gone (failOnDataLoss=false)",
    );
    w.source_index = Some(at.index);
    w.answers.extend([Code::DeltaVersionExpired, Code::DeltaRetentionCountdown]);
    // The restart lists the log from `v` (the batch before the latest); unread data starts at `u`.
    let u = s.unread_version().unwrap_or(v).max(v);
    let first = s.log.and_then(|l| l.commits.range(v..).next().map(|(k, _)| *k));
    w.data_loss = first.is_none_or(|f| f > u);
    w.costs.push(match first {
        Some(f) if f <= u => format!(
            "No unread version is lost: the versions gone (before {f}) were read by the last committed batch, and the restart only lists them again."
        ),
        Some(f) => format!(
            "Versions {u}..{} are skipped without an error (a silent gap): their data is never read.",
            f - 1
        ),
        None => {
            format!("The versions from {u} that log cleanup removed are skipped without an error (a silent gap).")
        }
    });
    w.steps.push("Set .option(\"failOnDataLoss\", \"false\") on the Delta source and restart on this checkpoint; set it back to true only after two batches have committed (a restart lists the log from the start of the batch before the latest: until that start is past the gap, failOnDataLoss=true fails again).".into());
    w.options.push(SourceOption::new(at.index, "failOnDataLoss", "false", false));
    w.snippets = snippet::source_snippets(&w.options, &kinds(at), false);
    w
}

/// Past Delta's column-mapping check at the restart on this checkpoint: its unsafe conf, with failOnDataLoss=false
/// when versions after the start are gone too.
fn cm_unsafe(s: &DeltaSourceFacts<'_>, at: &SourceAt<'_>, v: i64) -> WayOut {
    let mut w = WayOut::new(
        WayOutKind::RepairInPlace,
        "Keep this checkpoint and turn off Delta's column-mapping check at the restart (unsafe)",
    );
    w.source_index = Some(at.index);
    w.answers.push(Code::DeltaVersionExpired);
    w.steps.push(format!("Set {}", crate::checks::delta_log::cm_unsafe_step(v)));
    let first = s.log.and_then(|l| l.commits.range(v..).next().map(|(k, _)| *k));
    let u = s.unread_version().unwrap_or(v).max(v);
    w.data_loss = first.is_none_or(|f| f > u);
    w.costs.push("Delta does not check the schema changes since the checkpoint's version: a column renamed or dropped in the versions it cannot rebuild goes unnoticed (wrong or missing values downstream).".into());
    if w.data_loss {
        w.costs
            .push(format!("The versions from {u} that are gone are skipped with failOnDataLoss=false (a silent gap)."));
    }
    w
}

fn current(table_value: &Option<String>, ms: i64) -> String {
    match table_value {
        Some(t) => format!("{t:?}"),
        None => format!("the default, {}", describe_ms(ms)),
    }
}

fn start(input: &PlanInput<'_>, at: &SourceAt<'_>) -> Option<SourceStart> {
    let s = facts(input, at)?;
    // A new checkpoint starts where the unread data starts (the last committed batch's end), not where the
    // restart's listing starts.
    let o = match &s.unread {
        Some((_, o)) => o,
        None => s.offset.as_ref().ok()?,
    };
    let v = o.reservoir_version;
    let mut st = SourceStart::default();
    let idx = at.index;
    if o.is_initial_snapshot {
        st.steps.push(format!("source #{idx} (Delta): the checkpoint was still reading the table's initial snapshot (version {v}), which a new checkpoint cannot resume: without startingVersion it reads the current snapshot from the start."));
        st.costs.push(format!("source #{idx}: the rows of the initial snapshot already written are written again: deduplicate downstream or make the sink idempotent."));
        st.options.push(SourceOption::new(idx, "maxBytesPerTrigger", FIRST_BATCH_BYTES, false));
        return Some(st);
    }
    if input.findings_of(Code::DeltaTableReplaced).next().is_some() {
        // A new table: its current snapshot, then its commits. startingVersion 0 would fail once its commit 0 is
        // cleaned up (DELTA_VERSION_NOT_FOUND) and at its first commit that removes files.
        st.steps.push(format!("source #{idx} (Delta): the table at the path is a new table: without startingVersion the new checkpoint reads its current snapshot, then its new commits (startingVersion \"latest\" for new data only)."));
        st.costs.push(format!("source #{idx}: everything the new table holds is read (rows also in the old table's output are written again: make the sink idempotent)."));
        st.options.push(SourceOption::new(idx, "maxBytesPerTrigger", FIRST_BATCH_BYTES, false));
        return Some(st);
    }
    let schema_at = input.findings_of(Code::DeltaSchemaChange).next().and_then(|_| schema_change_version(&s));
    let now = input.ctx.now_ms.unwrap_or(0);
    // A change in versions the last committed batch already read (`after <= v`) is behind the new start.
    let (version, ts, stale) = if let Some(after) = schema_at.filter(|a| *a > v) {
        st.data_loss = true;
        st.costs.push(format!(
            "source #{idx}: versions {v}..{} (up to the schema change at {}) are not read: a gap.",
            after - 1,
            after - 1
        ));
        (after, None, None)
    } else if let Some((b, ts, stale)) = s.bounded_start(now, DAY_MS) {
        if b > v {
            st.data_loss = true;
            st.costs.push(format!("source #{idx}: versions {v}..{} are gone from the table's log and are skipped (a gap{}); version {b} is inside the retained window with at least a day's margin.", b - 1, ts.map(|t| format!(" up to {}", utc(t))).unwrap_or_default()));
        }
        (b, ts, Some(stale))
    } else {
        st.steps.push(format!("source #{idx} (Delta): without the table's _delta_log the start is the checkpoint's own version; check that the table still holds it (its retention decides)."));
        (v, None, s.cleanup_eligible_ms())
    };
    if version == v && o.index >= 0 {
        st.costs.push(format!("source #{idx}: version {v} was partly processed (up to file index {}): its rows already written are read again: make the sink idempotent or deduplicate.", o.index));
    }
    st.options.push(SourceOption::new(idx, "startingVersion", version.to_string(), true));
    st.options.push(SourceOption::new(idx, "maxBytesPerTrigger", FIRST_BATCH_BYTES, false));
    if let Some(t) = ts {
        st.steps.push(format!(
            "source #{idx} (Delta): or .option(\"startingTimestamp\", \"{}\") (the commit time of version {version}).",
            utc(t)
        ));
    }
    st.steps.push(format!("source #{idx} (Delta): maxBytesPerTrigger {FIRST_BATCH_BYTES} bounds the first batch (and every batch: remove it once caught up)."));
    if let Some(e) = stale {
        st.steps.push(format!("source #{idx} (Delta): recompute this start after {}: from then on log cleanup may remove version {version}.", utc(e)));
        st.recompute_after_ms = Some(e);
    }
    Some(st)
}

/// The version after the first non-additive schema change the log shows after the stream's version.
fn schema_change_version(s: &DeltaSourceFacts<'_>) -> Option<i64> {
    let log = s.log?;
    let v = s.needed_version()?;
    let (_, mut prev) = log.metadata_at(v)?;
    let cm = log.latest_metadata()?.1.column_mapping_mode() != "none";
    for (ver, c) in log.commits.range(v.saturating_add(1)..) {
        if let Some(m) = &c.metadata {
            let d = crate::delta::schema::diff(
                &prev.schema_string,
                &m.schema_string,
                &prev.partition_columns,
                &m.partition_columns,
                cm,
            )?;
            if d.iter().any(crate::delta::schema::SchemaChange::non_additive) {
                return Some(ver.saturating_add(1));
            }
            prev = m;
        }
    }
    None
}
