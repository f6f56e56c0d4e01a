//! The `state/` tree: operators and partitions on disk against the recorded `spark.sql.shuffle.partitions`,
//! state store configuration conflicts, and for the state version a restart loads (the restarted batch id,
//! i.e. last committed batch + 1) whether every partition's chain of snapshot + deltas (HDFS) or zip +
//! changelogs (RocksDB, incl. checkpoint format v2) exists and is intact (FORMATS.md §8, §11, §14, §16).

use super::{effective_conf, legacy, spark, BACKUP};
use crate::model::Checkpoint;
use crate::model::{provider_from_conf, store_index};
use crate::report::{CheckpointKind, Code, Finding, RestartStage, Severity};
use crate::restart_chain::{plan, ChainFileKind, LoadChain, PlanInput};
use crate::state_files::StoreFiles;
use crate::{Context, SparkVersion};
use std::collections::BTreeSet;

/// Missing partition ids (no folder) whose restart chain is checked, per operator; the rest are counted in the
/// `state-partition-missing` finding.
const MAX_MISSING_CHECKED: usize = 64;
/// Missing ids named in a title (the evidence and the count say the rest).
const MAX_IDS_IN_TITLE: usize = 20;

/// `0, 1, 2` or `0, 1, ..., 19 and 9980 more`.
fn id_list(ids: &[u64], count: u64) -> String {
    let shown: Vec<String> = ids.iter().take(MAX_IDS_IN_TITLE).map(|p| p.to_string()).collect();
    let more = count.saturating_sub(shown.len() as u64);
    if more > 0 {
        format!("{} and {more} more", shown.join(", "))
    } else {
        shown.join(", ")
    }
}

fn recorded_partitions(cp: &Checkpoint) -> Option<u32> {
    cp.recorded_conf().get("spark.sql.shuffle.partitions").and_then(|s| s.trim().parse().ok())
}

/// Partition and operator directories against the recorded shuffle partitions.
pub fn check_layout(cp: &Checkpoint, ctx: &Context) -> Vec<Finding> {
    if cp.kind.0 != CheckpointKind::StructuredStreaming {
        return vec![];
    }
    let mut out = Vec::new();
    let expected = recorded_partitions(cp);
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
                crate::state_files::missing_ids(have.iter().map(|p| u64::from(*p)), u64::from(n), MAX_IDS_IN_TITLE);
            let extra: Vec<u32> = have.iter().filter(|p| **p >= n).copied().collect();
            if !missing.is_empty() {
                // Fatal only when the restart loads a version > 0 (a batch was committed).
                let loads = cp.restart_version().is_some_and(|v| v > 0);
                let mut f = Finding::new(
                    Code::StatePartitionMissing,
                    if loads { Severity::Error } else { Severity::Info },
                    format!("Operator {op} has no state directory for partition(s) {}", id_list(&missing, missing_count)),
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
        let (missing, count) = crate::state_files::missing_ids(on_disk, max.max(0) as u64, MAX_IDS_IN_TITLE);
        if let Some(first) = missing.first() {
            let title = if count == 1 {
                format!("State directory of operator {first} is missing (operators up to {max} exist)")
            } else {
                format!(
                    "State directories of operators {} are missing ({count} ids; operators up to {max} exist)",
                    id_list(&missing, count)
                )
            };
            let mut f = Finding::new(Code::StateOperatorMissing, Severity::Warning, title)
                .evidence(format!("state/{first}"), format!("absent; state/{max} exists"), None)
                .why("Stateful operators are numbered 0, 1, 2, ... in plan order and each keeps state/<id>/; a hole usually means a whole operator's state was deleted or not copied (Spark then fails loading its first partition), unless that operator never wrote state.")
                .fix(&[BACKUP.to_string(), format!("Restore state/{first} from the original checkpoint."), super::new_checkpoint_step(cp)]);
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
    if fmt >= 2 && provider == "hdfs" && v.at_least(4, 1) {
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

/// How Spark reacts to a damaged file in a load chain.
#[derive(Debug)]
struct Damage {
    path: String,
    detail: String,
    offset: Option<u64>,
    /// Spark notices it (checksum verified, zip/stream cannot be read).
    detected: bool,
    /// The checksum class when a Spark 4.1+ checksum mismatches.
    checksum_failed: bool,
}

fn damage_of(cp: &Checkpoint, path: &str, kind: ChainFileKind, v: SparkVersion) -> Option<Damage> {
    let integ = cp.integrity_of(path).and_then(|i| i.problem.clone());
    let crc_bad = cp.crc_of(path).and_then(|c| c.verified.clone()).and_then(|r| r.err());
    let sum_bad = cp.checksum_of(path).and_then(|c| c.verified.clone()).and_then(|r| r.err());
    if integ.is_none() && crc_bad.is_none() && sum_bad.is_none() {
        return None;
    }
    let rocks = matches!(kind, ChainFileKind::Zip | ChainFileKind::Changelog);
    let checksum_failed = sum_bad.is_some() && v.at_least(4, 1);
    // RocksDB files are copied through Hadoop's FileSystem, which verifies the .crc; the HDFS provider's
    // reads did not fail on a .crc mismatch in 3.5.9 (fixture broken-ss-3.5.9-corrupt-state-file).
    // Spark 3.x decompressed lz4 state files with lz4-java's fast decompressor, which did not notice a
    // damaged match offset inside an intact block (fixture broken-ss-3.5.9-corrupt-state-file loaded it).
    let legacy_blind = !v.at_least(4, 0) && cp.integrity_of(path).is_some_and(|i| i.payload_corrupt) && !rocks;
    let detected = (integ.is_some() && !legacy_blind) || checksum_failed || (rocks && crc_bad.is_some());
    let mut parts = Vec::new();
    let mut offset = None;
    if let Some(p) = &integ {
        // The file at fault may be another than the chain step (an SST a zip lists, an entry of the zip).
        parts.push(if p.path != path { format!("{}: {}", p.path, p.reason) } else { p.reason.clone() });
        offset = p.offset;
    }
    if let Some(c) = &crc_bad {
        parts.push(format!("Hadoop .crc sidecar: {c}"));
        if offset.is_none() {
            if let crate::hadoop::CrcError::Mismatch { offset: o, .. } = c {
                offset = Some(*o);
            }
        }
    }
    if let Some(s) = &sum_bad {
        parts.push(format!("Spark checksum file: {s}"));
    }
    Some(Damage { path: path.to_string(), detail: parts.join("; "), offset, detected, checksum_failed })
}

/// The specific 4.x error classes the state readers report for a damaged file that Spark raises as such
/// (record sizes of `.delta`/`.snapshot`, the changelog version); others are reported per [`load_error`].
fn specific_class(c: &str) -> Option<&'static str> {
    Some(match c {
        "CANNOT_LOAD_STATE_STORE.CANNOT_READ_DELTA_FILE_KEY_SIZE" => {
            "CANNOT_LOAD_STATE_STORE.CANNOT_READ_DELTA_FILE_KEY_SIZE"
        }
        "CANNOT_LOAD_STATE_STORE.CANNOT_READ_SNAPSHOT_FILE_KEY_SIZE" => {
            "CANNOT_LOAD_STATE_STORE.CANNOT_READ_SNAPSHOT_FILE_KEY_SIZE"
        }
        "CANNOT_LOAD_STATE_STORE.CANNOT_READ_SNAPSHOT_FILE_VALUE_SIZE" => {
            "CANNOT_LOAD_STATE_STORE.CANNOT_READ_SNAPSHOT_FILE_VALUE_SIZE"
        }
        "CANNOT_LOAD_STATE_STORE.INVALID_CHANGE_LOG_READER_VERSION" => {
            "CANNOT_LOAD_STATE_STORE.INVALID_CHANGE_LOG_READER_VERSION"
        }
        _ => return None,
    })
}

/// The error class and exception for a state load failure of the given kind.
fn load_error(kind: &str, v: SparkVersion, ckpt_v2: bool) -> (Option<&'static str>, &'static str) {
    if !v.at_least(4, 0) {
        return (None, "org.apache.spark.SparkException");
    }
    let c = match kind {
        "delta-missing" => "CANNOT_LOAD_STATE_STORE.CANNOT_READ_DELTA_FILE_NOT_EXISTS",
        "changelog-missing" => "CANNOT_LOAD_STATE_STORE.CANNOT_READ_STREAMING_STATE_FILE",
        "base-not-found" => "CANNOT_LOAD_STATE_STORE.CANNOT_FIND_BASE_SNAPSHOT_CHECKPOINT",
        // Spark 4.0.x with checkpoint format v2 reported a damaged zip as unreadable checkpoint metadata
        // (fixture broken-ss-4.0.5-corrupt-state-file-agg-rocksdb-ckptv2).
        "zip-corrupt" if ckpt_v2 && !v.at_least(4, 1) => "CANNOT_LOAD_STATE_STORE.CANNOT_READ_CHECKPOINT",
        _ => "CANNOT_LOAD_STATE_STORE.UNCATEGORIZED",
    };
    (Some(c), "org.apache.spark.SparkException")
}

/// For every operator, partition and store: can the restart load its state version?
pub fn check_chains(cp: &Checkpoint, ctx: &Context) -> Vec<Finding> {
    if cp.kind.0 != CheckpointKind::StructuredStreaming || cp.state.operators.is_empty() {
        return vec![];
    }
    let Some(version) = cp.restart_version() else {
        return vec![];
    };
    let v = spark(ctx);
    let conf = effective_conf(cp, ctx);
    let repair = PlanInput { release: v, conf: Some(&conf), ..PlanInput::new("") }.repairs_snapshots();
    let partitions = recorded_partitions(cp);
    let mut out = Vec::new();
    let mut silent: Vec<(String, String)> = Vec::new();
    for (op, o) in &cp.state.operators {
        let provider = cp.operator_provider(*op);
        let base_input = PlanInput { release: v, conf: Some(&conf), ..PlanInput::new(&provider) };
        // Store names: from any partition, else operator metadata, else `default`.
        let mut names: BTreeSet<String> = o.partitions.values().flat_map(|p| p.stores.keys().cloned()).collect();
        if let Some(Ok(m)) = cp.operator_metadata.get(op).map(|m| &m.content) {
            names.extend(m.stores.iter().map(|s| s.store_name.clone()));
        }
        if names.is_empty() {
            names.insert("default".into());
        }
        let names: Vec<String> = names.into_iter().collect();
        let on_disk = o.partitions.keys().next_back().map(|p| p.saturating_add(1)).unwrap_or(0);
        // Recorded partitions without a directory are checked too, up to a bound (a hand-edited count or a
        // folder named `4000000000` could make the range huge; the first missing ones already fail the
        // restart, and `check_layout` reports them all in one finding): the folders on disk, and the first
        // missing ids found between them (never a walk over the whole range).
        // Spark loads partitions `0..recorded`; without a recorded count, those up to the highest folder.
        let n_parts = match partitions {
            Some(n) => n.min(on_disk.saturating_add(10_000)),
            None => on_disk,
        };
        let (missing, _) = crate::state_files::missing_ids(
            o.partitions.keys().map(|p| u64::from(*p)),
            u64::from(n_parts),
            MAX_MISSING_CHECKED,
        );
        let mut parts: Vec<u32> = o.partitions.keys().copied().collect();
        parts.extend(missing.iter().filter_map(|p| u32::try_from(*p).ok()));
        parts.sort_unstable();
        for part in parts {
            for name in &names {
                let dir =
                    if name == "default" { format!("state/{op}/{part}") } else { format!("state/{op}/{part}/{name}") };
                let empty = StoreFiles { dir: dir.clone(), ..Default::default() };
                let store = o.partitions.get(&part).and_then(|p| p.stores.get(name)).unwrap_or(&empty);
                let uid = cp.unique_id(*op, part, store_index(&names, name), version);
                let ckpt_v2 = uid.is_some();
                let top = uid.as_ref().and_then(|u| {
                    store
                        .changelogs
                        .get(&version)?
                        .iter()
                        .find(|f| f.unique_id.as_deref() == Some(u.as_str()))
                        .map(|f| f.file.path.clone())
                });
                let lineage_v: Option<Vec<(i64, String)>> =
                    top.as_deref().and_then(|t| cp.lineage_of(t)).map(|l| l.to_vec());
                let lineage = lineage_v.as_deref();
                let chain = plan(store, version, &PlanInput { unique_id: uid.as_deref(), lineage, ..base_input });
                let where_ = format!(
                    "operator {op}, partition {part}{}",
                    if name == "default" { String::new() } else { format!(", store {name}") }
                );
                if let Some(m) = &chain.missing {
                    let kind = if m.kind == ChainFileKind::Delta { "delta-missing" } else { "changelog-missing" };
                    let (class, exc) = load_error(kind, v, ckpt_v2);
                    let have: Vec<String> =
                        chain.steps.iter().map(|s| s.path.rsplit('/').next().unwrap_or("").to_string()).collect();
                    let msg = if m.kind == ChainFileKind::Delta {
                        format!(
                            "Error reading delta file {} of HDFSStateStoreProvider[...]: {} does not exist",
                            m.path, m.path
                        )
                    } else {
                        format!("Error reading streaming state file of {} does not exist.", m.path)
                    };
                    out.push(
                        Finding::new(
                            if m.kind == ChainFileKind::Delta { Code::StateDeltaMissing } else { Code::StateChangelogMissing },
                            Severity::Error,
                            format!("State version {version} of {where_} cannot be rebuilt: {} is missing", m.path),
                        )
                        .classes(&[class.unwrap_or(if m.kind == ChainFileKind::Delta { "CANNOT_LOAD_STATE_STORE.CANNOT_READ_DELTA_FILE_NOT_EXISTS" } else { "CANNOT_LOAD_STATE_STORE.CANNOT_READ_STREAMING_STATE_FILE" })])
                        .evidence(&m.path, format!("absent; the restart loads state version {version} = {}", if have.is_empty() { "from nothing (no snapshot), so it needs every file from version 1".to_string() } else { format!("{} then the files up to {version}", have.join(", ")) }), None)
                        .why(format!(
                            "A restart runs batch {version} and loads state version {version} (last committed batch + 1) in every partition. {} Spark fails with: {msg}",
                            if m.kind == ChainFileKind::Delta {
                                "The HDFS provider uses the newest snapshot at or below that version and replays every .delta after it; a missing delta is fatal."
                            } else {
                                "The RocksDB provider uses the newest .zip at or below that version and replays every .changelog after it; a missing changelog is fatal."
                            }
                        ))
                        .fix(&[
                            BACKUP.to_string(),
                            format!("Restore {} (and the rest of {dir}) from the original checkpoint or a backup.", m.path),
                            super::new_checkpoint_step(cp),
                        ])
                        .fails(RestartStage::StateLoad, class, exc),
                    );
                    continue;
                }
                if chain.base_not_found {
                    let (class, exc) = load_error("base-not-found", v, true);
                    let lineage: Vec<String> =
                        chain.steps.iter().map(|s| s.path.rsplit('/').next().unwrap_or("").to_string()).collect();
                    let lowest = chain.steps.first().map(|s| s.version).unwrap_or(version);
                    out.push(
                        Finding::new(Code::StateBaseSnapshotMissing, Severity::Error, format!("State version {version} of {where_} has no base snapshot (checkpoint format v2)"))
                            .classes(&["CANNOT_LOAD_STATE_STORE.CANNOT_FIND_BASE_SNAPSHOT_CHECKPOINT"])
                            .evidence(chain.steps.last().map(|s| s.path.clone()).unwrap_or(dir.clone()), format!("changelogs {} are present but no zip at or below version {lowest} continues the chain (version {} has neither a zip nor a changelog)", lineage.join(", "), lowest - 1), None)
                            .why("With state checkpoint format v2 every version has a unique id; Spark follows the lineage recorded in the changelog of the version it loads back to a snapshot zip of the same lineage. Here the snapshot zips of that lineage are gone, so the chain cannot start.")
                            .fix(&[BACKUP.to_string(), format!("Restore the deleted .zip files (and changelogs) of {dir} from the original checkpoint."), super::new_checkpoint_step(cp)])
                            .fails(RestartStage::StateLoad, class, exc),
                    );
                    continue;
                }
                // Damaged files in the chain.
                let damaged: Vec<(usize, Damage)> = chain
                    .steps
                    .iter()
                    .enumerate()
                    .filter_map(|(i, s)| damage_of(cp, &s.path, s.kind, v).map(|d| (i, d)))
                    .collect();
                let Some((idx, d)) = damaged.into_iter().next() else {
                    continue;
                };
                let step = &chain.steps[idx];
                if !d.detected {
                    silent.push((d.path.clone(), d.detail.clone()));
                    continue;
                }
                let is_base = matches!(step.kind, ChainFileKind::Snapshot | ChainFileKind::Zip);
                let repaired: Option<LoadChain> =
                    if repair && is_base {
                        let mut skip = vec![step.version];
                        let mut result = None;
                        for _ in 0..4 {
                            let alt = plan(
                                store,
                                version,
                                &PlanInput { unique_id: uid.as_deref(), lineage, skip: &skip, ..base_input },
                            );
                            if alt.missing.is_some() || alt.base_not_found {
                                break;
                            }
                            match alt.steps.iter().find_map(|s| {
                                damage_of(cp, &s.path, s.kind, v).filter(|d| d.detected).map(|_| s.clone())
                            }) {
                                Some(s) if matches!(s.kind, ChainFileKind::Snapshot | ChainFileKind::Zip) => {
                                    skip.push(s.version)
                                }
                                Some(_) => break,
                                None => {
                                    result = Some(alt);
                                    break;
                                }
                            }
                        }
                        result
                    } else {
                        None
                    };
                let kind = if step.kind == ChainFileKind::Zip { "zip-corrupt" } else { "stream-corrupt" };
                let (mut class, exc) = load_error(kind, v, ckpt_v2);
                // A specific record-size error class (4.x) when the record stream itself is damaged and
                // no checksum check failed first.
                let reader_class = cp.integrity_of(&d.path).and_then(|i| i.error_class.as_deref());
                if v.at_least(4, 0) && !d.checksum_failed {
                    if let Some(c) = reader_class.and_then(specific_class) {
                        class = Some(c);
                    }
                }
                let mut classes: Vec<&str> = vec!["CANNOT_LOAD_STATE_STORE.UNCATEGORIZED"];
                if d.checksum_failed {
                    classes.push("CHECKPOINT_FILE_CHECKSUM_VERIFICATION_FAILED");
                }
                if class.is_some_and(|c| !classes.contains(&c)) {
                    classes.insert(0, class.unwrap_or_default());
                }
                if repaired.is_some() {
                    classes.push("CANNOT_LOAD_STATE_STORE.AUTO_SNAPSHOT_REPAIR_FAILED");
                }
                // What the state reader names for a zip's SST (missing, wrong size): a possible cause class.
                if let Some(c) = reader_class.filter(|c| v.at_least(4, 0) && !classes.contains(c)) {
                    if c.ends_with("UNEXPECTED_FILE_SIZE") || c.ends_with("CANNOT_READ_STREAMING_STATE_FILE") {
                        classes.push(c);
                    }
                }
                let mut f = Finding::new(
                    Code::StateFileCorrupt,
                    if repaired.is_some() { Severity::Warning } else { Severity::Error },
                    format!("{} (state version {} of {where_}) is damaged", d.path, step.version),
                )
                .classes(&classes)
                .evidence(&d.path, d.detail.clone(), d.offset);
                if let Some(alt) = &repaired {
                    let files: Vec<String> =
                        alt.steps.iter().map(|s| s.path.rsplit('/').next().unwrap_or("").to_string()).collect();
                    f = f
                        .why(format!(
                            "Spark {v} fails to load this snapshot, and with spark.sql.streaming.stateStore.autoSnapshotRepair.enabled (default true in 4.3) it rebuilds version {version} from an older snapshot and the files after it ({}), which are intact. The restart goes on; the damaged file stays.",
                            files.join(", ")
                        ))
                        .fix(&[BACKUP.to_string(), format!("Optionally delete {} (after a backup) so no reader trips on it; Spark rebuilds it from {}.", d.path, files.join(", "))]);
                } else {
                    let alt = plan(
                        store,
                        version,
                        &PlanInput { unique_id: uid.as_deref(), skip: &[step.version], ..base_input },
                    );
                    let alt_ok = is_base
                        && alt.missing.is_none()
                        && !alt.base_not_found
                        && alt.steps.iter().all(|s| damage_of(cp, &s.path, s.kind, v).is_none());
                    f = f
                        .why(format!(
                            "A restart loads state version {version} and reads {} first; {}.{}",
                            d.path,
                            if d.checksum_failed {
                                format!("Spark {v} verifies the Spark checksum file and fails (CHECKPOINT_FILE_CHECKSUM_VERIFICATION_FAILED, reported as CANNOT_LOAD_STATE_STORE.UNCATEGORIZED)")
                            } else {
                                format!("the file cannot be read ({}), so loading fails", d.detail)
                            },
                            if v.at_least(4, 3) && is_base { " Spark 4.3's automatic snapshot repair is disabled in this session." } else { "" }
                        ))
                        .fix(&{
                            let mut steps = vec![BACKUP.to_string()];
                            if alt_ok {
                                let files: Vec<String> = alt.steps.iter().map(|s| s.path.rsplit('/').next().unwrap_or("").to_string()).collect();
                                steps.push(format!("Move {} out of the checkpoint: the older files {} rebuild version {version} without it.", d.path, files.join(", ")));
                                if v.at_least(4, 3) {
                                    steps.push("Or restart on Spark 4.3 with spark.sql.streaming.stateStore.autoSnapshotRepair.enabled=true (the default).".to_string());
                                }
                            } else {
                                steps.push(format!("Restore {} from the original checkpoint or a backup.", d.path));
                            }
                            steps.push(super::new_checkpoint_step(cp));
                            steps
                        })
                        .fails(RestartStage::StateLoad, class, exc);
                }
                out.push(f);
            }
        }
    }
    if !silent.is_empty() {
        let mut f = Finding::new(
            Code::StateFileCrcMismatchUnchecked,
            Severity::Warning,
            format!("{} state file(s) a restart loads do not match their Hadoop .crc; Spark {v} loads them without checking", silent.len()),
        )
        .why("The HDFS state store provider reads .delta/.snapshot files without failing on a Hadoop .crc mismatch (observed with Spark 3.5.9): if the damage hits compressed literal bytes the state is loaded silently altered, otherwise decompression fails. Spark 4.1+ checksum files (when present) and 4.3's repair catch more.")
        .fix(&[BACKUP.to_string(), "Restore the files from a backup, or move the damaged snapshot away if older snapshots and deltas cover its version.".to_string()]);
        for (p, d) in silent.iter().take(10) {
            f = f.evidence(p, d, None);
        }
        out.push(f);
    }
    let _ = legacy(ctx);
    out
}
