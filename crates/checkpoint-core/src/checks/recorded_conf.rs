//! `recorded-conf-unsupported`: a conf the latest offsets file records, which a restart applies over the session
//! (`OffsetSeqMetadata.setSessionConf`), with a value the restart's Spark cannot honour: a checkpoint written by a
//! newer Spark, restarted on an older one.
//!
//! From a newcomer's 71 real restarts across releases (3.3.4 to 4.3.0, 2026-12-08), where the inspector said
//! "resumes" and Spark failed; the supported values from each release's `SQLConf` (its `checkValue` words):
//!
//! | recorded | older Spark | what it does |
//! |---|---|---|
//! | `spark.sql.streaming.join.stateFormatVersion` 3 (written by 4.1) or 4 (4.3) | 3.x accepts 1 and 2, 4.1 1 to 3, 4.3 1 to 4 | setting the conf fails when the query starts: 3.5.9 `IllegalArgumentException` "'3' in spark.sql.streaming.join.stateFormatVersion is invalid. Valid versions are 1 and 2"; 4.1.4 `SparkIllegalArgumentException` `[INVALID_CONF_VALUE.REQUIREMENT]` |
//! | `spark.sql.streaming.stateStore.rowChecksum.enabled` true (4.3) | unknown to 4.1 and older | the values carry a checksum and length before the row (`StateStoreRowChecksum`): 4.1.4 fails loading them (`[CANNOT_LOAD_STATE_STORE.VALUE_ROW_FORMAT_VALIDATION_FAILURE]`), 3.5.9 with `InvalidUnsafeRowException`; with `spark.sql.streaming.stateStore.formatValidation.enabled=false` both resume and read every value wrong (a count of 4294967298 where 3 was right) |
//! | `spark.sql.streaming.stateStore.rocksdb.mergeOperatorVersion` 2 (4.3 records it always) | unknown to 4.1 and older | a transformWithState ListState written with it fails to read on 4.1.4 (`[INTERNAL_ERROR]` "Invalid byte array backed UnsafeRow"); the same query written with 1 resumed |
//!
//! 4.0 and 4.2 were not run: they are judged only where the older and newer releases agree.

use super::{effective_conf_value, new_checkpoint_step, BACKUP};
use crate::model::Checkpoint;
use crate::report::{Code, Finding, RestartStage, Severity};
use crate::{Context, SparkVersion};

/// The join state format versions Spark `v` accepts, when known (3.x: 2; 4.1: 3; 4.3 on: 4; 4.0 and 4.2 not run).
fn join_format_max(v: SparkVersion) -> Option<u32> {
    match (v.major, v.minor) {
        (0..=3, _) => Some(2),
        (4, 1) => Some(3),
        (4, 3..) | (5.., _) => Some(4),
        _ => None,
    }
}

/// True when Spark `v` is known not to read 4.3's row checksums or list state merge format (4.1 and older).
fn before_4_2(v: SparkVersion) -> bool {
    !v.at_least(4, 2)
}

/// The confs of the latest offsets file a restart on the assumed Spark cannot honour.
pub fn check_recorded_confs(cp: &Checkpoint, ctx: &Context) -> Vec<Finding> {
    let Some((id, _)) = cp.latest_readable_offsets() else { return Vec::new() };
    let Some(conf) = cp.recorded_conf_ref() else { return Vec::new() };
    let v = super::spark(ctx);
    let at = format!("offsets/{id}");
    let mut out = Vec::new();
    let key = "spark.sql.streaming.join.stateFormatVersion";
    if let (Some(n), Some(max)) = (conf.get(key).and_then(|s| s.trim().parse::<u32>().ok()), join_format_max(v)) {
        if n > max {
            let valid = if max == 2 { "1 and 2".to_string() } else { format!("1 to {max}") };
            let (class, exception) = if v.at_least(4, 0) {
                (Some("INVALID_CONF_VALUE.REQUIREMENT"), "org.apache.spark.SparkIllegalArgumentException")
            } else {
                (None, "java.lang.IllegalArgumentException")
            };
            out.push(
                Finding::new(Code::RecordedConfUnsupported, Severity::Error, format!("The checkpoint records {key}={n}, which Spark {v} does not accept (valid: {valid})"))
                    .evidence(&at, format!("conf {key} = {n}: a join state format written by a newer Spark"), None)
                    .why(format!("A restart sets every conf the latest offsets file records over the session (OffsetSeqMetadata.setSessionConf), and Spark {v}'s check of this one accepts {valid}: the query fails when it starts (real 3.5.9: IllegalArgumentException \"'3' in {key} is invalid. Valid versions are 1 and 2\"; 4.1.4: [INVALID_CONF_VALUE.REQUIREMENT] for 4). Setting the conf in the session does not help: the recorded value wins."))
                    .fix(&[BACKUP.to_string(), format!("Restart on the Spark release that wrote the checkpoint, or a later one ({}).", writer_of_join(n)), new_checkpoint_step(cp)])
                    .classes(&class.into_iter().collect::<Vec<_>>())
                    .fails(RestartStage::LatestOffsets, class, exception),
            );
        }
    }
    let has_state = !cp.state.operators.is_empty();
    let key = "spark.sql.streaming.stateStore.rowChecksum.enabled";
    if has_state && before_4_2(v) && conf.get(key).is_some_and(|s| s.trim().eq_ignore_ascii_case("true")) {
        let unvalidated = effective_conf_value(cp, ctx, "spark.sql.streaming.stateStore.formatValidation.enabled")
            .is_some_and(|s| s.trim().eq_ignore_ascii_case("false"));
        let (class, exception) = if v.at_least(4, 0) {
            (Some("CANNOT_LOAD_STATE_STORE.VALUE_ROW_FORMAT_VALIDATION_FAILURE"), "org.apache.spark.SparkException")
        } else {
            (None, "org.apache.spark.SparkException")
        };
        let mut f = Finding::new(
            Code::RecordedConfUnsupported,
            Severity::Error,
            if unvalidated {
                format!("The state values carry Spark 4.3's row checksums ({key}=true): Spark {v} reads every one of them wrong, without an error (format validation is off)")
            } else {
                format!("The state values carry Spark 4.3's row checksums ({key}=true), which Spark {v} cannot read")
            },
        )
        .evidence(&at, format!("conf {key} = true: every state value is written as a checksum and a length before the row"), None)
        .why(format!("Spark 4.3 writes each state value with a 4-byte checksum and a 4-byte length before the row (StateStoreRowChecksum) when {key} is on, and records the conf; Spark {v} does not know the conf and reads the bytes as a plain row: the first value's validation fails (real 4.1.4: [CANNOT_LOAD_STATE_STORE.VALUE_ROW_FORMAT_VALIDATION_FAILURE]; 3.5.9: InvalidUnsafeRowException). With spark.sql.streaming.stateStore.formatValidation.enabled=false, as 3.5's message suggests, both resumed and wrote wrong results (a count of 4294967298 where 3 was right)."))
        .fix(&[BACKUP.to_string(), "Restart on Spark 4.3 or later (the release that wrote the checkpoint): it read the same checkpoint and resumed with correct results.".to_string(), "Do not turn spark.sql.streaming.stateStore.formatValidation.enabled off to get past the error: every state value is then read wrong, silently.".to_string(), new_checkpoint_step(cp)]);
        // With validation off there is no failure: the restart runs and corrupts its results.
        if !unvalidated {
            f = f.classes(&class.into_iter().collect::<Vec<_>>()).fails(
                RestartStage::StateRowValidation,
                class,
                exception,
            );
        }
        out.push(f);
    }
    let key = "spark.sql.streaming.stateStore.rocksdb.mergeOperatorVersion";
    let tws = cp.state.operators.values().any(|o| !o.schema_v3.is_empty());
    if tws && before_4_2(v) && conf.get(key).is_some_and(|s| s.trim() == "2") {
        out.push(
            Finding::new(Code::RecordedConfUnsupported, Severity::Warning, format!("A transformWithState operator's list state may be written in a RocksDB merge format Spark {v} cannot read ({key}=2)"))
                .evidence(&at, format!("conf {key} = 2 (written by Spark 4.2 or later)"), None)
                .why(format!("Spark 4.2 added a second RocksDB merge operator format for list state and records it; Spark {v} reads list values in the first format. Real 4.1.4 on a 4.3.0 transformWithState checkpoint with a ListState failed ([INTERNAL_ERROR] \"Invalid byte array backed UnsafeRow\"); the same query written with {key}=1 resumed. Value and map state are not affected."))
                .fix(&[BACKUP.to_string(), "Restart on Spark 4.2 or later (the release line that wrote the checkpoint).".to_string(), new_checkpoint_step(cp)]),
        );
    }
    out
}

fn writer_of_join(n: u32) -> &'static str {
    if n >= 4 {
        "format 4: Spark 4.3 or later"
    } else {
        "format 3: Spark 4.1 or later"
    }
}
