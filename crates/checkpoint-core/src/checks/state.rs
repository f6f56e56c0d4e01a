//! The `state/` tree: operators and partitions on disk against the recorded `spark.sql.shuffle.partitions`,
//! state store configuration conflicts, and for the state version a restart loads (the restarted batch id,
//! i.e. last committed batch + 1) whether every partition's chain of snapshot + deltas (HDFS) or zip +
//! changelogs (RocksDB, incl. checkpoint format v2) exists and is intact (FORMATS.md §8, §11, §14, §16).

use super::{effective_conf, spark, BACKUP};
use crate::model::provider_from_conf;
use crate::model::Checkpoint;
use crate::report::{CheckpointKind, Code, Finding, RestartStage, Severity};
use crate::Context;
use std::collections::BTreeSet;

/// Partition and operator directories against the recorded shuffle partitions.
pub fn check_layout(cp: &Checkpoint, ctx: &Context) -> Vec<Finding> {
    if cp.kind.0 != CheckpointKind::StructuredStreaming {
        return vec![];
    }
    let mut out = Vec::new();
    let expected = cp.recorded_shuffle_partitions();
    if let Some(n) = expected {
        if let Some(session) = ctx.session_conf.get("spark.sql.shuffle.partitions") {
            if session.trim() != n.to_string() && !cp.state.operators.is_empty() {
                out.push(
                    Finding::new(Code::ShufflePartitionsOverridden, Severity::Info, format!("spark.sql.shuffle.partitions={session} in the session is ignored: the checkpoint recorded {n}"))
                        .evidence(cp.latest_readable_offsets().map(|(id, _)| format!("offsets/{id}")).unwrap_or_default(), format!("conf spark.sql.shuffle.partitions = {n}"), None)
                        .why("The number of state partitions is fixed when a stateful query first runs; on restart Spark takes spark.sql.shuffle.partitions from the offset log and overrides the session value.")
                        .fix(&["Nothing to do for the restart. To change the partition count of a stateful query you need a new checkpoint (or Spark 4.3's offline state repartitioning)."]),
                );
            }
        }
    }
    for (op, o) in &cp.state.operators {
        let have: BTreeSet<u32> = o.partitions.keys().copied().collect();
        if let Some(n) = expected {
            // Missing ids from the gaps between the folders on disk (a hand-edited partition count could be
            // huge): the first ones are named, all are counted.
            let (missing, missing_count) =
                crate::state_files::missing_ids(have.iter().map(|p| u64::from(*p)), u64::from(n), super::MAX_NAMED);
            let extra: Vec<u32> = have.iter().filter(|p| **p >= n).copied().collect();
            if !missing.is_empty() {
                // Fatal only when the restart loads a version > 0 (a batch was committed).
                let loads = cp.restart_version().is_some_and(|v| v > 0);
                let mut f = Finding::new(
                    Code::StatePartitionMissing,
                    if loads { Severity::Error } else { Severity::Info },
                    format!("Operator {op} has no state directory for partition(s) {}", super::some_of(&missing, missing_count)),
                )
                .evidence(format!("state/{op}/{}", missing[0]), format!("absent; {} of {n} partition directories present (spark.sql.shuffle.partitions = {n} recorded)", have.len()), None)
                .why("Every stateful operator keeps one state store per shuffle partition. A missing partition directory means its state files were deleted or not copied; Spark then tries to rebuild the state from version 1 and fails on the first missing file.")
                .fix(&[BACKUP.to_string(), format!("Restore state/{op}/{} from the original checkpoint or a backup.", missing[0]), super::new_checkpoint_step(cp)]);
                for p in missing.iter().skip(1).take(5) {
                    f = f.evidence(format!("state/{op}/{p}"), "absent", None);
                }
                out.push(f);
            }
            if !extra.is_empty() {
                out.push(
                    Finding::new(Code::StatePartitionExtra, Severity::Warning, format!("Operator {op} has partition directories beyond the recorded {n} partitions"))
                        .evidence(format!("state/{op}/{}", extra[0]), format!("partition {} >= spark.sql.shuffle.partitions = {n}", extra[0]), None)
                        .why("Spark only loads partitions 0..n-1 of the recorded count; extra directories are leftovers from another run or a copy of another checkpoint.")
                        .fix(&["Check that this state belongs to this checkpoint; extra partition directories are ignored by Spark."]),
                );
            }
        }
        if o.partitions.is_empty() && o.metadata_v1.is_none() && o.metadata_v2.is_empty() {
            out.push(
                Finding::new(
                    Code::StateOperatorEmpty,
                    Severity::Warning,
                    format!("state/{op} has no partition directories"),
                )
                .evidence(format!("state/{op}"), "no partition directory", None)
                .why("A stateful operator writes one directory per partition from its first batch on.")
                .fix(&[BACKUP, "Restore the operator's state from the source copy."]),
            );
        }
    }
    // Operator ids must be contiguous from 0 (ids are assigned in plan order). The missing ids come from the
    // gaps between the folders on disk (a folder named `state/111111111111` must not make a walk over every id
    // below it) and are reported in one finding.
    if let Some(max) = cp.state.operators.keys().next_back().copied() {
        let on_disk = cp.state.operators.keys().filter_map(|id| u64::try_from(*id).ok());
        let (missing, count) = crate::state_files::missing_ids(on_disk, max.max(0) as u64, super::MAX_NAMED);
        if let Some(first) = missing.first() {
            let title = if count == 1 {
                format!("State directory of operator {first} is missing (operators up to {max} exist)")
            } else {
                format!(
                    "State directories of operators {} are missing ({count} ids; operators up to {max} exist)",
                    super::some_of(&missing, count)
                )
            };
            let mut f = Finding::new(Code::StateOperatorMissing, Severity::Warning, title)
                .evidence(format!("state/{first}"), format!("absent; state/{max} exists"), None)
                .why("Stateful operators are numbered 0, 1, 2, ... in plan order and each keeps state/<id>/; a hole usually means a whole operator's state was deleted or not copied (Spark then fails loading its first partition), unless that operator never wrote state.")
                .fix(&[BACKUP.to_string(), format!("Restore state/{first} from the original checkpoint."), super::new_checkpoint_step(cp)]);
            if let Some(with_metadata) = metadata_check_fails(cp, ctx) {
                f = operators_not_in_metadata(f, *first, with_metadata, spark(ctx));
            } else if cp.restart_batch().is_some_and(|b| b > 0) {
                f = operator_state_not_found(cp, ctx, f, *first);
            }
            for id in missing.iter().skip(1).take(5) {
                f = f.evidence(format!("state/{id}"), "absent", None);
            }
            out.push(f);
        }
    }
    if cp.state.present && cp.state.operators.is_empty() && cp.last_committed_batch_id().is_some() {
        out.push(
            Finding::new(Code::StateDirEmpty, Severity::Warning, "state/ exists but holds no operator directory")
                .evidence("state", "no state/<operatorId>/ directory", None)
                .why("A stateful query writes state/<operatorId>/<partition>/ from its first batch; an empty state/ after committed batches means the state was deleted or not copied (Spark 4.3 refuses to restart a stateful query on it: STREAMING_STATEFUL_OPERATOR_MISSING_STATE_DIRECTORY).")
                .classes(&["STREAMING_STATEFUL_OPERATOR_MISSING_STATE_DIRECTORY"])
                .fix(&[BACKUP.to_string(), "Restore state/ from the original checkpoint.".to_string(), super::new_checkpoint_step(cp)]),
        );
    }
    let _ = spark(ctx);
    out
}

/// The operator metadata check of a restart on Spark 4.0+ (`IncrementalExecution`'s `checkOperatorValidWithMetadata`,
/// on the first batch after a restart, batch id not 0): when any operator's `_metadata` reads, the operators the
/// plan has must be exactly those the metadata lists. An operator whose whole `state/<id>` is gone is in the plan
/// but in no metadata. `Some(an operator with metadata)` when that check runs and so fails.
fn metadata_check_fails(cp: &Checkpoint, ctx: &Context) -> Option<i64> {
    if !spark(ctx).at_least(4, 0) || cp.restart_batch().is_none_or(|b| b == 0) {
        return None;
    }
    // `StateMetadataPartitionReader` reads every operator folder there is; one without metadata makes it fail, and
    // Spark then skips the check (the restart fails later, loading the missing operator's state).
    let has = |o: &crate::state_files::OperatorFiles| o.metadata_v1.is_some() || !o.metadata_v2.is_empty();
    if !cp.state.operators.values().all(has) {
        return None;
    }
    cp.state.operators.keys().next().copied()
}

/// `state-operator-missing` when the operator metadata check fails on it: an error, Spark's class and stage.
fn operators_not_in_metadata(f: Finding, missing: u64, with_metadata: i64, v: crate::SparkVersion) -> Finding {
    let class = "STREAMING_STATEFUL_OPERATOR_NOT_MATCH_IN_STATE_METADATA";
    let mut f = f
        .classes(&[class])
        .why(format!(
            "Stateful operators are numbered 0, 1, 2, ... in plan order and each keeps state/<id>/; operator {missing}'s was deleted or not copied. On the first batch of a restart Spark {v} compares the plan's stateful operators with those the operator metadata lists (state/<id>/_metadata, here state/{with_metadata}'s): operator {missing} is in the plan and in no metadata, so planning fails with {class} before any state is loaded."
        ))
        .fails(RestartStage::StateSchema, Some(class), "org.apache.spark.SparkRuntimeException");
    f.severity = Severity::Error;
    f
}

/// `state-operator-missing` when no operator check runs (before Spark 4.0, or no operator metadata): every
/// partition of the missing operator loads its state version from nothing, and its first file is not there
/// (real Spark 3.5.9: `File state/0/1/1.delta does not exist`).
fn operator_state_not_found(cp: &Checkpoint, ctx: &Context, f: Finding, missing: u64) -> Finding {
    let v = spark(ctx);
    let rocks = provider_from_conf(&effective_conf(cp, ctx)) == "rocksdb";
    let (class, exc) =
        super::state_chain::load_error(if rocks { "changelog-missing" } else { "delta-missing" }, v, false);
    let first = if rocks { "1.changelog (or a snapshot zip)" } else { "1.delta" };
    let mut f = f
        .why(format!(
            "Stateful operators are numbered 0, 1, 2, ... in plan order and each keeps state/<id>/; operator {missing}'s was deleted or not copied. The restart loads its state version in every partition, from nothing since no snapshot is left: Spark {v} fails reading state/{missing}/<partition>/{first}, which does not exist."
        ))
        .fails(RestartStage::StateLoad, class, exc);
    if let Some(c) = class {
        f = f.classes(&[c]);
    }
    f.severity = Severity::Error;
    f
}

/// `operator-metadata-missing`: a transformWithState operator whose operator metadata is gone. Its state schema
/// files (v3, `state/<op>/_stateSchema/<store>/<batch>_<uuid>`) are found through the operator metadata
/// (`state/<op>/_metadata/v2/<batch>`, which names them): on restart Spark 4.x reads the latest one to check and
/// evolve the schema, and with none left it fails before any state loads (real Spark 4.1.4 and 4.3.0, a
/// newcomer's transformWithState restarts with `state/0/_metadata` deleted: `StateDataSourceReadOperatorMetadataFailure`
/// `[STDS_FAILED_TO_READ_OPERATOR_METADATA] Failed to read the operator metadata for checkpointLocation=.../state/0
/// and batchId=3`; with only the newest `_metadata/v2/<batch>` deleted it resumed, and a join with `_metadata`
/// deleted resumed too). Only operators with schema v3 files: other operators' metadata is optional.
pub fn check_tws_operator_metadata(cp: &Checkpoint, ctx: &Context) -> Vec<Finding> {
    if cp.kind.0 != CheckpointKind::StructuredStreaming || !spark(ctx).at_least(4, 0) {
        return vec![];
    }
    let Some(batch) = cp.restart_batch().filter(|b| *b > 0) else { return vec![] };
    let class = "STDS_FAILED_TO_READ_OPERATOR_METADATA";
    cp.state
        .operators
        .values()
        .filter(|o| !o.schema_v3.is_empty() && o.metadata_v2.is_empty())
        .map(|o| {
            let id = o.operator_id;
            let schema = &o.schema_v3[0];
            Finding::new(
                Code::OperatorMetadataMissing,
                Severity::Error,
                format!("state/{id}/_metadata is gone: transformWithState operator {id}'s restart cannot find its state schema"),
            )
            .classes(&[class])
            .evidence_sized(
                &schema.path,
                schema.size,
                format!(
                    "{} state schema file(s) (v3) under state/{id}/_stateSchema/, and no operator metadata file under state/{id}/_metadata/v2/",
                    o.schema_v3.len()
                ),
                None,
            )
            .evidence(format!("state/{id}/_metadata/v2/"), "absent: no operator metadata file", None)
            .why(format!(
                "A transformWithState operator keeps its state variables' schemas in state/{id}/_stateSchema/ and names the current ones in its operator metadata (state/{id}/_metadata/v2/<batch>). On restart Spark {} reads the latest operator metadata to check and evolve the schemas before it runs batch {batch}; with none left it fails: {class} (\"Failed to read the operator metadata for checkpointLocation=.../state/{id} and batchId={batch}\"). Rerunning does not write it again: every restart fails the same way.",
                spark(ctx)
            ))
            .fix(&[
                super::BACKUP.to_string(),
                format!("Restore state/{id}/_metadata/ (its v2/<batch> files) from a backup or another copy of the checkpoint: any of them lets the restart read the schema (the newest is best)."),
                super::new_checkpoint_step(cp),
            ])
            .fails(
                RestartStage::StateSchema,
                Some(class),
                "org.apache.spark.sql.execution.datasources.v2.state.StateDataSourceReadOperatorMetadataFailure",
            )
        })
        .collect()
}

/// The conf naming how state rows are encoded (Spark 4.0+: `unsaferow`, or `avro` for transformWithState).
const ENCODING_CONF: &str = "spark.sql.streaming.stateStore.encodingFormat";

/// `state-encoding-format-unsupported`: the restarting session sets the state encoding to `avro` and an operator
/// the checkpoint's operator metadata names is not transformWithState. Spark checks the session's value when the
/// query is analysed (`UnsupportedOperationChecker`), before the offset log's recorded value replaces it, and only
/// transformWithState encodes with Avro (real Spark 4.1.4 and 4.3.0, `tools/spark-gen/encoding_format.py`:
/// "State store encoding format as avro is not supported for operator=aggregation used within the query").
pub fn check_encoding_format(cp: &Checkpoint, ctx: &Context) -> Vec<Finding> {
    let avro = ctx.session_conf.get(ENCODING_CONF).is_some_and(|v| v.trim().eq_ignore_ascii_case("avro"));
    if cp.kind.0 != CheckpointKind::StructuredStreaming || !avro || !spark(ctx).at_least(4, 0) {
        return vec![];
    }
    let Some((id, name)) = cp.operator_metadata.iter().find_map(|(id, f)| {
        let name = f.content.as_ref().ok()?.operator_name.as_deref()?;
        (!name.starts_with("transformWithState")).then_some((*id, name))
    }) else {
        return vec![];
    };
    let path = cp.operator_metadata.get(&id).map(|f| f.path.clone()).unwrap_or_default();
    let class = "_LEGACY_ERROR_TEMP_3102";
    vec![Finding::new(
        Code::StateEncodingFormatUnsupported,
        Severity::Error,
        format!("The session sets {ENCODING_CONF}=avro, which operator {id} ({name}) does not support: the query fails when it starts"),
    )
    .classes(&[class])
    .evidence(path, format!("operator {id} is {name}, not transformWithState"), None)
    .why(format!("When the query starts, Spark checks the plan against the session's {ENCODING_CONF} (UnsupportedOperationChecker), before the checkpoint's recorded value replaces the session's: only transformWithState encodes its state with Avro, so any other stateful operator fails with \"State store encoding format as avro is not supported for operator=...\" (ExtendedAnalysisException). The checkpoint's own files are not the problem."))
    .fix(&[format!("Remove {ENCODING_CONF}=avro from the restarting session (or set it to unsaferow, the default) for this query; keep avro only for transformWithState queries.")])
    .fails(RestartStage::Analysis, Some(class), "org.apache.spark.sql.catalyst.ExtendedAnalysisException")]
}

/// State store configuration the restart cannot use (HDFS provider with checkpoint format v2).
pub fn check_config(cp: &Checkpoint, ctx: &Context) -> Vec<Finding> {
    if cp.kind.0 != CheckpointKind::StructuredStreaming || !cp.state.present {
        return vec![];
    }
    let conf = effective_conf(cp, ctx);
    let fmt: u32 = conf
        .get("spark.sql.streaming.stateStore.checkpointFormatVersion")
        .and_then(|v| v.trim().parse().ok())
        .unwrap_or(1);
    let provider = provider_from_conf(&conf);
    let v = spark(ctx);
    let mut out = Vec::new();
    // 4.3 keeps an existing checkpoint's own format (its commit log's), whatever the session sets: a real 4.3.0
    // restart of an HDFS checkpoint with the conf at 2 resumed. Only a checkpoint with no commit takes the conf.
    let keeps_own = v.at_least(4, 3) && !cp.commits.is_empty();
    if fmt >= 2 && provider == "hdfs" && v.at_least(4, 1) && !keeps_own {
        let recorded = cp.recorded_conf().contains_key("spark.sql.streaming.stateStore.checkpointFormatVersion");
        out.push(
            Finding::new(Code::CheckpointIdsNotSupported, Severity::Error, "HDFSBackedStateStoreProvider does not support state checkpoint format v2")
                .classes(&["STATE_STORE_CHECKPOINT_IDS_NOT_SUPPORTED"])
                .evidence(
                    cp.latest_readable_offsets().map(|(id, _)| format!("offsets/{id}")).unwrap_or_else(|| "offsets".into()),
                    format!(
                        "provider {} with spark.sql.streaming.stateStore.checkpointFormatVersion={fmt} ({})",
                        conf.get("spark.sql.streaming.stateStore.providerClass").map(String::as_str).unwrap_or("HDFSBackedStateStoreProvider (default)"),
                        if recorded { "recorded in the checkpoint" } else { "from the session" }
                    ),
                    None,
                )
                .why("State checkpoint format v2 (unique ids per state version) is implemented only by the RocksDB provider; the HDFS provider refuses it when the first state store opens (StateStoreCheckpointIdsNotSupported).")
                .fix(&[
                    "Restart without spark.sql.streaming.stateStore.checkpointFormatVersion=2 (it defaults to 1) if the checkpoint has no committed v2 batch.".to_string(),
                    "Or use spark.sql.streaming.stateStore.providerClass=org.apache.spark.sql.execution.streaming.state.RocksDBStateStoreProvider on a NEW checkpoint (the provider of an existing checkpoint cannot be changed).".to_string(),
                ])
                .fails(RestartStage::StateStoreConfig, Some("STATE_STORE_CHECKPOINT_IDS_NOT_SUPPORTED"), "org.apache.spark.sql.execution.streaming.state.StateStoreCheckpointIdsNotSupported"),
        );
    }
    out
}
