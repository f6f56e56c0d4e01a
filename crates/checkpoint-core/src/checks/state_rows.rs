//! Row-level checks of the state a restart loads (issue 4), from the rows the reader decoded within the byte
//! budget ([`crate::model::Checkpoint::store_rows`]): rows that violate the stored schema, and what the budget
//! left unverified.
//!
//! Spark validates state rows in `StateStoreProvider.validateStateRowFormat`
//! (`UnsafeRowUtils.validateStructuralIntegrity`, conf `spark.sql.streaming.stateStore.formatValidation.enabled`,
//! default true): the HDFS provider on the first row it reads while loading a version (`isValidated`, in
//! `readSnapshotFile` / `updateFromDeltaFile`), the RocksDB provider on the first `get`/iterator row with a
//! value; deduplication without watermark turns the value check off (`FORMAT_VALIDATION_CHECK_VALUE_CONFIG`),
//! and 4.x skips stores with column families (transformWithState). Spark 3.x throws `InvalidUnsafeRowException`
//! ("The streaming query failed by state format invalidation"); 4.x raises
//! `STATE_STORE_KEY_ROW_FORMAT_VALIDATION_FAILURE` / `STATE_STORE_VALUE_ROW_FORMAT_VALIDATION_FAILURE`.

use super::{legacy, BACKUP};
use crate::model::Checkpoint;
use crate::report::{CheckpointKind, Code, Finding, RestartStage, Severity};
use crate::Context;

/// Rows of the restart's state version that violate the key or value schema stored in the checkpoint.
pub fn check_row_schema(cp: &Checkpoint, ctx: &Context) -> Vec<Finding> {
    if cp.kind.0 != CheckpointKind::StructuredStreaming {
        return vec![];
    }
    let bad: Vec<_> = cp.store_rows.values().filter(|s| s.bad_rows > 0 || s.first_row_invalid.is_some()).collect();
    let Some(first) = bad.first() else {
        return vec![];
    };
    let conf = super::effective_conf(cp, ctx);
    let validation = super::conf_bool(&conf, "spark.sql.streaming.stateStore.formatValidation.enabled", true);
    // The row Spark checks (HDFS: the first put of the first file it reads) is bad: the restart fails.
    let checked = bad.iter().find_map(|s| s.first_row_invalid.as_ref()).filter(|_| validation);
    let key_side = match checked {
        Some((_, _, side, _)) => *side == "key",
        None => first.bad_key.is_some(),
    };
    let v = super::spark(ctx);
    let side = if key_side { "KEY" } else { "VALUE" };
    let classes: Vec<String> = if legacy(ctx) {
        vec![]
    } else if v.at_least(4, 1) {
        vec![
            format!("CANNOT_LOAD_STATE_STORE.{side}_ROW_FORMAT_VALIDATION_FAILURE"),
            format!("STATE_STORE_{side}_ROW_FORMAT_VALIDATION_FAILURE"),
        ]
    } else {
        // 4.0 wraps load failures it has no conversion for in CANNOT_LOAD_STATE_STORE.UNCATEGORIZED.
        vec![
            format!("STATE_STORE_{side}_ROW_FORMAT_VALIDATION_FAILURE"),
            "CANNOT_LOAD_STATE_STORE.UNCATEGORIZED".to_string(),
        ]
    };
    let total: u64 = bad.iter().map(|s| s.bad_rows).sum::<u64>().max(1);
    let mut f = Finding::new(
        Code::StateRowSchemaViolation,
        if checked.is_some() { Severity::Error } else { Severity::Warning },
        format!(
            "{total} state row(s) in {} store(s) do not match the stored {} schema",
            bad.len(),
            if key_side { "key" } else { "value" }
        ),
    )
    .classes(&classes);
    if let Some((path, off, side, why)) = checked {
        f = f.evidence(path, format!("the first row Spark reads and validates on restart: {side} of the record at decompressed byte {off}: {why}"), Some(*off));
        let exc = if legacy(ctx) {
            "org.apache.spark.sql.execution.streaming.state.InvalidUnsafeRowException"
        } else if v.at_least(4, 1) {
            "org.apache.spark.SparkException"
        } else if key_side {
            "org.apache.spark.sql.execution.streaming.state.StateStoreKeyRowFormatValidationFailure"
        } else {
            "org.apache.spark.sql.execution.streaming.state.StateStoreValueRowFormatValidationFailure"
        };
        f = f.fails(RestartStage::StateRowValidation, classes.first().map(String::as_str), exc);
    }
    for s in bad.iter().take(10) {
        let (side, (row, off, why)) = match (&s.bad_key, &s.bad_value) {
            (Some(k), _) => ("key", k.clone()),
            (None, Some(v)) => ("value", v.clone()),
            (None, None) => continue,
        };
        f = f.evidence(
            &s.store_dir,
            format!(
                "state version {}: {} of {} rows invalid; first: {side} row #{row} (in key order), byte {off} of the row: {why}",
                s.version, s.bad_rows, s.rows
            ),
            Some(off),
        );
    }
    vec![f.why(format!(
        "The rows decode against the schema in state/<op>/0/_metadata/schema only if their layout matches it; these do not (a null slot that is not zero, an offset outside the row, a size not a multiple of 8). The files were damaged or written by a query with another schema. Spark validates only the first row it reads per partition (spark.sql.streaming.stateStore.formatValidation.enabled, default true) and then fails with {}; any other bad row is used as is and can crash or corrupt results later.",
        if legacy(ctx) { "InvalidUnsafeRowException (\"The streaming query failed by state format invalidation\")".to_string() } else { classes.join(" / ") }
    ))
    .fix(&[
        BACKUP.to_string(),
        "If the query's code changed (new aggregation columns, other key types), restart the previous version of the query: state schemas cannot change in place.".to_string(),
        "Restore the store's files from a backup.".to_string(),
        "Risky: spark.sql.streaming.stateStore.formatValidation.enabled=false lets the restart use the rows as they are (wrong results or a crash later are possible).".to_string(),
        super::new_checkpoint_step(cp),
    ])
    ]
}

/// State files and rows the byte budget left unread, so that a clean report is not mistaken for a full check.
pub fn check_budget(cp: &Checkpoint, _ctx: &Context) -> Vec<Finding> {
    if cp.unverified.is_empty() {
        return vec![];
    }
    let bytes: u64 = cp.unverified.iter().fold(0u64, |a, u| a.saturating_add(u.bytes));
    let (budget, spent) = cp.verify_budget;
    let mut f = Finding::new(
        Code::StateVerificationBudget,
        Severity::Info,
        format!(
            "{} state item(s) ({}) were not verified: the {} read budget was spent",
            cp.unverified.len(),
            human_bytes(bytes),
            human_bytes(budget)
        ),
    );
    for u in cp.unverified.iter().take(10) {
        f = f.evidence(&u.path, format!("{} ({})", u.what, human_bytes(u.bytes)), None);
    }
    vec![f.why(format!(
        "To open a multi-gigabyte checkpoint quickly the diagnosis reads the listing and the log files in full, but state files only up to a budget ({} read of {}). Chains were still checked for missing files from the listing; the files above were not decompressed or decoded, so damage inside them is not reported.",
        human_bytes(spent),
        human_bytes(budget)
    ))
    .fix(&["Run again with no read budget, to verify every state file a restart loads and check every row."])
    ]
}

/// `1.5 GiB`-style sizes.
pub fn human_bytes(b: u64) -> String {
    if b == u64::MAX {
        return "unlimited".into();
    }
    let units = ["B", "KiB", "MiB", "GiB", "TiB"];
    let mut v = b as f64;
    let mut u = 0;
    while v >= 1024.0 && u + 1 < units.len() {
        v /= 1024.0;
        u += 1;
    }
    if u == 0 {
        format!("{b} B")
    } else {
        format!("{v:.1} {}", units[u])
    }
}
