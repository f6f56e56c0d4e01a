//! The Kafka source against the brokers' view (what the user gives: earliest and latest offsets, or the
//! pasted error's "offset was changed from A to B").
//!
//! What Spark does at restart (apache/spark connector/kafka-0-10-sql/src/main/scala/org/apache/spark/sql/
//! kafka010/): the next batch starts at the last committed batch's end offsets; `KafkaOffsetReaderAdmin`/
//! `...Consumer.getOffsetRangesFromResolvedOffsets` reports, through `reportDataLoss` (an exception when
//! failOnDataLoss=true, the default; a warning otherwise): partitions that are gone, added partitions that do
//! not start at 0, and a partition whose latest is below the start ("offset was changed from A to B"). An
//! aged-out start fails the executors' first read (`KafkaDataConsumer.get`: "Cannot fetch offset"). Spark
//! 3.5 throws `java.lang.IllegalStateException` with a message; from 4.0 on (SPARK-47135) the same cases are
//! `KafkaIllegalStateException`s with the `KAFKA_DATA_LOSS.*` error classes (kafka-error-conditions.json).

pub use super::kafka_pasted::{aged_out_in_error, mark_pasted_aged_out, offsets_changed_in_error};
use super::BACKUP;
use crate::kafka_offsets::{compare, from_source_offset, KafkaOffsets, PartitionStatus, PartitionView};
use crate::model::Checkpoint;
use crate::report::{CheckpointKind, Code, Finding, RestartStage, Severity};
use crate::source::SourceKind;
use crate::{Context, SparkVersion};
use std::collections::BTreeMap;

type Offsets = BTreeMap<String, BTreeMap<i32, i64>>;

/// Kafka sources of the checkpoint: (index, batch of the start offsets, start offsets, latest planned end).
fn kafka_sources(cp: &Checkpoint) -> Vec<(usize, i64, Offsets, Offsets)> {
    let Some((batch, start)) = crate::restart_plan::start_batch(cp) else { return Vec::new() };
    let planned = cp.latest_readable_offsets();
    start
        .iter()
        .enumerate()
        .filter(|(_, o)| o.kind == SourceKind::Kafka)
        .filter_map(|(i, o)| {
            let from = from_source_offset(o.json.as_ref()?);
            let until = planned
                .and_then(|(_, p)| p.offsets.get(i))
                .and_then(|p| p.json.as_ref())
                .map(from_source_offset)
                .unwrap_or_else(|| from.clone());
            Some((i, batch, from, until))
        })
        .collect()
}

fn list(parts: &BTreeMap<i32, i64>) -> String {
    parts.iter().map(|(p, o)| format!("{p}={o}")).collect::<Vec<_>>().join(", ")
}

/// The Kafka source's offsets per topic and partition, and the first batch's starting offsets.
pub fn check_kafka_offsets(cp: &Checkpoint, ctx: &Context) -> Vec<Finding> {
    if cp.kind.0 != CheckpointKind::StructuredStreaming {
        return vec![];
    }
    let mut out = Vec::new();
    for (i, batch, from, until) in kafka_sources(cp) {
        let n: usize = from.values().map(|p| p.len()).sum();
        let mut f = Finding::new(
            Code::KafkaSourceOffsets,
            Severity::Info,
            format!(
                "Kafka source #{i}: {} topic(s), {n} partition(s); the next batch starts after batch {batch}",
                from.len()
            ),
        );
        for (t, parts) in &from {
            f = f.evidence(format!("offsets/{batch}"), format!("{t}: next offsets {}", list(parts)), None);
        }
        let last = cp.last_batch_id().unwrap_or(batch);
        if last > batch {
            for (t, parts) in &until {
                f = f.evidence(
                    format!("offsets/{last}"),
                    format!(
                        "{t}: end offsets of the uncommitted batch {last}, which a restart runs again: {}",
                        list(parts)
                    ),
                    None,
                );
            }
        }
        if let Some(init) = cp.source_initial_offsets.get(&(i as u32)) {
            match &init.content {
                Ok(v) => {
                    for (t, parts) in from_source_offset(v) {
                        let read: i64 = parts
                            .iter()
                            .filter_map(|(p, s)| {
                                from.get(&t).and_then(|m| m.get(p)).map(|e| e.saturating_sub(*s).max(0))
                            })
                            .fold(0i64, i64::saturating_add);
                        f = f.evidence(
                            &init.path,
                            format!("{t}: the first batch started at {} ({read} records read since)", list(&parts)),
                            None,
                        );
                    }
                }
                Err(e) => {
                    f = f.evidence(
                        &init.path,
                        format!("the first batch's starting offsets do not parse: {e}"),
                        Some(e.offset()),
                    )
                }
            }
        }
        let given = ctx.kafka_earliest.is_some() || ctx.kafka_latest.is_some();
        f = f.why(format!(
            "offsets/<N> records the END offsets of batch N per topic and partition (the next offset to read), so a restart \
             reads from the offsets of the last committed batch. Whether the brokers still hold them depends on the \
             topics' retention and on whether a topic was re-created{}. (An Azure Event Hubs source writes the same \
             shape: sequence numbers per partition.)",
            if given { ": they are compared with the brokers' offsets given" } else { ": give the brokers' earliest and latest offsets to check" }
        ))
        .fix(&["Get the brokers' offsets: kafka-get-offsets.sh --bootstrap-server <brokers> --topic <topic> --time -2 (earliest) and --time -1 (latest), and give both to the inspector."]);
        out.push(f);
    }
    out
}

fn class_for(v: SparkVersion, class: &'static str) -> (Option<&'static str>, &'static str) {
    if v.at_least(4, 0) {
        (Some(class), "org.apache.spark.sql.kafka010.KafkaIllegalStateException")
    } else {
        (None, "java.lang.IllegalStateException")
    }
}

fn names(v: &[&PartitionView]) -> String {
    v.iter().map(|p| p.name()).collect::<Vec<_>>().join(", ")
}

/// The end offsets the uncommitted latest batch recorded for Kafka source `index` (which its replay reads up
/// to), when the latest batch is not committed.
pub(crate) fn replay_ends(cp: &Checkpoint, index: usize) -> Option<Offsets> {
    let last = cp.last_batch_id()?;
    kafka_sources(cp).into_iter().find(|(i, batch, _, _)| *i == index && last > *batch).map(|(_, _, _, until)| until)
}

/// Per Kafka source, the partitions whose end offset in the uncommitted latest batch is below the start (the
/// last committed batch's end): `(source index, start batch, latest batch, those partitions' recorded ends)`.
///
/// The run that planned the batch saw the brokers' latest offsets go down (a re-created topic, a lower
/// high-water mark) and wrote them to `offsets/<latest>` (`constructNextBatch` writes the offsets file before
/// `runBatch`). A restart replays exactly that batch with the recorded ends (`populateStartOffsets`) and asks
/// the brokers nothing at planning, so `getOffsetRangesFromResolvedOffsets` finds `untilOffset < fromOffset`
/// again: `reportDataLoss` ("offset was changed from A to B"), an exception with failOnDataLoss=true.
pub(crate) fn replay_went_back(cp: &Checkpoint) -> Vec<(usize, i64, i64, KafkaOffsets)> {
    let Some(last) = cp.last_batch_id() else { return Vec::new() };
    kafka_sources(cp)
        .into_iter()
        .filter(|(_, batch, _, _)| last > *batch)
        .filter_map(|(i, batch, from, until)| {
            let mut back = KafkaOffsets { partial: true, ..Default::default() };
            for (t, parts) in &until {
                for (p, end) in parts {
                    if from.get(t).and_then(|m| m.get(p)).is_some_and(|start| end < start) {
                        back.topics.entry(t.clone()).or_default().insert(*p, *end);
                    }
                }
            }
            (!back.topics.is_empty()).then_some((i, batch, last, back))
        })
        .collect()
}

/// The checkpoint's offsets against the brokers' view: aged out, ahead of latest, partitions removed or
/// added, topics missing; and, from the checkpoint alone, an uncommitted batch whose recorded end is below
/// its start (`replay_went_back`). Pushed in the order `getOffsetRangesFromResolvedOffsets` reports them
/// (added partitions, deleted partitions, an offset changed), then what the executors' reads find (aged out,
/// an end the brokers no longer hold): the verdict takes the first failure of the earliest stage.
pub fn check_kafka_brokers(cp: &Checkpoint, ctx: &Context) -> Vec<Finding> {
    if cp.kind.0 != CheckpointKind::StructuredStreaming {
        return vec![];
    }
    let v = ctx.spark_version.unwrap_or(SparkVersion::NEWEST);
    // The partitions the pasted error says changed ("t-1" is not "t-10").
    let changed = ctx.error_text.as_deref().map(offsets_changed_in_error).unwrap_or_default();
    let explains_change = |t: &str, p: i32| changed.get(t, p).is_some();
    let mut out = Vec::new();
    let went_back = replay_went_back(cp);
    for (i, batch, last, back) in &went_back {
        let explains = back.topics.iter().any(|(t, ps)| ps.keys().any(|p| explains_change(t, *p)));
        out.push(replayed_end_below_start(cp, &Where { index: *i, batch: *batch, last: *last, v }, back, explains));
    }
    let from_error = ctx.error_text.as_deref().map(offsets_changed_in_error).filter(|o| !o.topics.is_empty());
    let latest = ctx.kafka_latest.clone().or(from_error.clone());
    let pasted_gone = ctx.error_text.as_deref().is_some_and(|t| !aged_out_in_error(t).topics.is_empty());
    if ctx.kafka_earliest.is_none() && latest.is_none() && !pasted_gone {
        return out;
    }
    let latest_src = if ctx.kafka_latest.is_some() { "the brokers' latest offsets given" } else { "the pasted error" };
    for (i, batch, from, until) in kafka_sources(cp) {
        let mut start = compare(&from, ctx.kafka_earliest.as_ref(), latest.as_ref());
        mark_pasted_aged_out(&mut start, ctx);
        let end = compare(&until, ctx.kafka_earliest.as_ref(), latest.as_ref());
        let last = cp.last_batch_id().unwrap_or(batch);
        let back = went_back.iter().find(|w| w.0 == i).map(|w| &w.3);
        let by = |s: PartitionStatus, views: &[PartitionView]| -> Vec<PartitionView> {
            views
                .iter()
                .filter(|p| p.status == s)
                .filter(|p| back.is_none_or(|b| b.get(&p.topic, p.partition).is_none()))
                .cloned()
                .collect()
        };
        let below = by(PartitionStatus::BelowEarliest, &start);
        let ahead = by(PartitionStatus::AheadOfLatest, &end);
        let removed = by(PartitionStatus::PartitionRemoved, &start);
        let missing = by(PartitionStatus::TopicMissing, &start);
        let added = by(PartitionStatus::PartitionAdded, &start);
        let explains = |p: &PartitionView| ctx.error_text.as_deref().is_some_and(|t| t.contains(&p.name()));
        let at = Where { index: i, batch, last, v };
        if !added.is_empty() {
            out.push(partitions_added(i, batch, &added, v));
        }
        if !missing.is_empty() {
            out.push(topic_missing(i, batch, &missing, ctx, v));
        }
        if !removed.is_empty() {
            out.push(partitions_removed(&at, &removed, removed.iter().any(explains)));
        }
        if !ahead.is_empty() {
            out.push(ahead_of_latest(&at, &ahead, latest_src, ahead.iter().any(explains)));
        }
        if !below.is_empty() {
            out.push(aged_out(&at, &below, below.iter().any(explains)));
        }
    }
    out
}

/// An uncommitted batch whose recorded end offsets are below its start ([`replay_went_back`]): its replay fails
/// at planning whatever the brokers hold now.
fn replayed_end_below_start(cp: &Checkpoint, at: &Where, back: &KafkaOffsets, explains: bool) -> Finding {
    let (i, batch, last, v) = (at.index, at.batch, at.last, at.v);
    let (class, exc) = class_for(v, "KAFKA_DATA_LOSS.PARTITION_OFFSET_CHANGED");
    let start = |t: &str, p: i32| {
        cp.offsets
            .get(&batch)
            .and_then(|o| o.file.content.as_ref().ok())
            .and_then(|o| o.offsets.get(i))
            .and_then(|o| o.json.as_ref())
            .map(from_source_offset)
            .and_then(|m| m.get(t).and_then(|ps| ps.get(&p)).copied())
            .unwrap_or(0)
    };
    let parts: Vec<(String, i64, i64)> = back
        .topics
        .iter()
        .flat_map(|(t, ps)| ps.iter().map(move |(p, end)| (t.clone(), *p, *end)))
        .map(|(t, p, end)| (format!("{t}-{p}"), start(&t, p), end))
        .collect();
    let names: Vec<&str> = parts.iter().map(|(n, _, _)| n.as_str()).collect();
    let mut f = Finding::new(
        Code::KafkaOffsetsAheadOfLatest,
        Severity::Error,
        format!(
            "Kafka source #{i}: the uncommitted batch {last} ends below where it starts ({}): its replay fails",
            names.join(", ")
        ),
    );
    for (name, from, end) in &parts {
        f = f.evidence(
            format!("offsets/{last}"),
            format!("{name}: end offset {end} < start {from} (the end of committed batch {batch}, offsets/{batch})"),
            None,
        );
    }
    let words = class
        .map(|c| c.to_string())
        .unwrap_or_else(|| "IllegalStateException \"Partition ...'s offset was changed from A to B\"".into());
    f = f
        .classes(&class.into_iter().collect::<Vec<_>>())
        .why(format!(
            "Batch {last} was planned (offsets/{last} written) but not committed, and the end offsets recorded for it are below the start: the run that planned it saw the brokers' latest offsets go down (a re-created topic, or a lower high-water mark after an unclean leader election). A restart replays exactly that batch with the recorded offsets (MicroBatchExecution.populateStartOffsets) without asking the brokers, so the Kafka source's planning (getOffsetRangesFromResolvedOffsets) finds the end below the start again: with failOnDataLoss=true (the default) every restart fails ({words}), even once the brokers' offsets are back. With failOnDataLoss=false Spark logs a warning, reads nothing of those partitions in that batch and goes on from the recorded end."
        ))
        .fix(&[
            BACKUP.to_string(),
            format!("If the brokers' latest offsets are back at or above the start (kafka-get-offsets.sh --time -1; give them to the inspector), delete offsets/{last} and the .{last}.crc beside it (the batch is not committed): the restart plans batch {last} anew from the brokers' current offsets."),
            "If the topic was re-created: see the restart plan (failOnDataLoss=false on this checkpoint, or a new checkpoint starting the re-created partitions at their earliest).".to_string(),
        ])
        .fails(RestartStage::SourceOffsets, class, exc);
    f.explains_error_text = explains;
    f
}

/// Where a Kafka finding points: the source, the start batch, the latest planned batch, the Spark version.
struct Where {
    index: usize,
    batch: i64,
    last: i64,
    v: SparkVersion,
}

fn aged_out(at: &Where, below: &[PartitionView], explains: bool) -> Finding {
    let (i, batch, v) = (at.index, at.batch, at.v);
    let b: Vec<&PartitionView> = below.iter().collect();
    let lost: i64 = below.iter().map(|p| p.lost()).fold(0, i64::saturating_add);
    let (class, exc) = class_for(v, "KAFKA_DATA_LOSS.COULD_NOT_READ_OFFSET_RANGE");
    // From a pasted error only, the brokers' earliest is not known: how many records are gone is not either.
    let counted = below.iter().all(|p| p.earliest.is_some());
    let title = if counted {
        format!("Kafka source #{i}: {lost} record(s) aged out before they were read ({})", names(&b))
    } else {
        format!("Kafka source #{i}: records aged out (or were deleted) before they were read ({}): Spark's error says the brokers no longer hold them", names(&b))
    };
    let mut f = Finding::new(Code::KafkaOffsetsBelowEarliest, Severity::Error, title);
    for p in below {
        let detail = match p.earliest {
            Some(e) => format!(
                "{}: next offset {} < brokers' earliest {e} ({} records lost)",
                p.name(),
                p.checkpoint.unwrap_or(0),
                p.lost()
            ),
            None => format!(
                "{}: next offset {}; the pasted error: Spark could not fetch it, the brokers' earliest is above (how far: kafka-get-offsets.sh --time -2)",
                p.name(),
                p.checkpoint.unwrap_or(0)
            ),
        };
        f = f.evidence(format!("offsets/{batch}"), detail, None);
    }
    let lost = if counted { format!("the {lost} record(s)") } else { "those records".to_string() };
    f = f
            .classes(&class.into_iter().collect::<Vec<_>>())
            .why(format!(
                "Kafka's retention deleted records the query had not read yet (it was stopped longer than the topic's retention.ms, or fell behind). With failOnDataLoss=true (the default) the first read fails: {}. With failOnDataLoss=false Spark logs a warning and skips to the earliest: {lost} are silently missing downstream.",
                if class.is_some() { "KAFKA_DATA_LOSS.COULD_NOT_READ_OFFSET_RANGE (\"Could not read records in offset [start, end)\")" } else { "IllegalStateException \"Cannot fetch offset N\"" }
            ))
            .fix(&[
                "The records are gone from Kafka: recover them from wherever else they were kept (a mirror, the producer's source), if they matter.".to_string(),
                "See the restart plan: failOnDataLoss=false on this checkpoint (a silent gap, state kept), or a new checkpoint starting at the earliest offsets.".to_string(),
                "For the future, raise the topic's retention.ms above the longest stop you expect.".to_string(),
            ])
            // The executors' read fails (`KafkaDataConsumer.get`), after the planning checks and the state load.
            .fails(RestartStage::SourceRead, class, exc);
    f.explains_error_text = explains;
    f
}

fn ahead_of_latest(at: &Where, ahead: &[PartitionView], latest_src: &str, explains: bool) -> Finding {
    let (i, last, v) = (at.index, at.last, at.v);
    let a: Vec<&PartitionView> = ahead.iter().collect();
    // A replayed batch is planned with its recorded ends (no brokers asked): the planning passes, and the
    // executors' read of offsets the brokers do not hold fails (`KafkaDataConsumer`: OffsetOutOfRange, then
    // `throwOnDataLoss`). The next batch after a committed one is planned with the brokers' latest below its
    // start: "offset was changed".
    let replay = last > at.batch;
    let (class, exc) = class_for(
        v,
        if replay { "KAFKA_DATA_LOSS.COULD_NOT_READ_OFFSET_RANGE" } else { "KAFKA_DATA_LOSS.PARTITION_OFFSET_CHANGED" },
    );
    let mut f = Finding::new(
            Code::KafkaOffsetsAheadOfLatest,
            Severity::Error,
            format!("Kafka source #{i}: the checkpoint is ahead of what the brokers hold ({}): topic re-created or a lower high-water mark", names(&a)),
        );
    for p in ahead {
        f = f.evidence(
            format!("offsets/{last}"),
            format!(
                "{}: checkpoint offset {} > brokers' latest {} (per {latest_src}){}",
                p.name(),
                p.checkpoint.unwrap_or(0),
                p.latest.unwrap_or(0),
                p.earliest.map(|e| format!(", earliest {e}")).unwrap_or_default()
            ),
            None,
        );
    }
    let words = match (class, replay) {
        (Some(c), _) => c.to_string(),
        (None, false) => "IllegalStateException \"Partition ...'s offset was changed from A to B\"".into(),
        (None, true) => "IllegalStateException \"Cannot fetch offset N\"".into(),
    };
    let when = if replay {
        format!(" Batch {last} is not committed: the restart replays it with the end offsets offsets/{last} recorded, so its planning passes and the executors' first read of offsets the brokers no longer hold fails.")
    } else {
        String::new()
    };
    f = f
            .classes(&class.into_iter().collect::<Vec<_>>())
            .why(format!(
                "Kafka offsets only grow, so a latest offset below the checkpoint's means the topic was deleted and re-created (its offsets restarted from 0), or a broker reports a lower high-water mark (a lagging replica became leader, unclean leader election); the latter may be transient: Spark itself re-reads the latest offsets up to fetchOffset.numRetries (3) times.{when} With failOnDataLoss=true the restart fails ({words}); with false Spark drops the range and goes on from the new latest, never reading the re-created topic's records before it."
            ))
            .fix(&[
                "Read the latest offsets again in a few minutes (kafka-get-offsets.sh --time -1) before discarding anything: a transient lower high-water mark goes away by itself.".to_string(),
                "If the topic was re-created: see the restart plan (a new checkpoint starting the re-created partitions at their earliest, or failOnDataLoss=false accepting the gap).".to_string(),
            ])
            .fails(if replay { RestartStage::SourceRead } else { RestartStage::SourceOffsets }, class, exc);
    f.explains_error_text = explains;
    f
}

fn partitions_removed(at: &Where, removed: &[PartitionView], explains: bool) -> Finding {
    let (i, batch, v) = (at.index, at.batch, at.v);
    let r: Vec<&PartitionView> = removed.iter().collect();
    let (class, exc) = class_for(v, "KAFKA_DATA_LOSS.PARTITIONS_DELETED");
    let mut f = Finding::new(
        Code::KafkaPartitionsRemoved,
        Severity::Error,
        format!("Kafka source #{i}: the brokers no longer have {}", names(&r)),
    );
    for p in removed {
        f = f.evidence(
            format!("offsets/{batch}"),
            format!(
                "{}: next offset {}; not in the brokers' offsets, which list other partitions of {}",
                p.name(),
                p.checkpoint.unwrap_or(0),
                p.topic
            ),
            None,
        );
    }
    f = f
            .classes(&class.into_iter().collect::<Vec<_>>())
            .why(format!("Kafka cannot remove partitions from a topic, so these partitions are gone only if the topic was re-created with fewer. Spark reports them deleted ({}; with a kafka.group.id set, KAFKA_DATA_LOSS.PARTITIONS_DELETED_AND_GROUP_ID_CONFIG_PRESENT) and fails with failOnDataLoss=true; their unread records are lost.", class.unwrap_or("IllegalStateException \"Set(...) are gone\"")))
            .fix(&["See the restart plan: a new checkpoint whose startingOffsets leave these partitions out, or failOnDataLoss=false."])
            .fails(RestartStage::SourceOffsets, class, exc);
    f.explains_error_text = explains;
    f
}

fn topic_missing(i: usize, batch: i64, missing: &[PartitionView], ctx: &Context, v: SparkVersion) -> Finding {
    let topics: Vec<String> =
        missing.iter().map(|p| p.topic.clone()).collect::<std::collections::BTreeSet<_>>().into_iter().collect();
    let text = ctx.error_text.as_deref().unwrap_or("");
    let confirmed = topics.iter().any(|t| text.contains(t.as_str()))
        && (text.contains("UnknownTopicOrPartition")
            || text.contains("are gone")
            || text.contains("PARTITIONS_DELETED")
            || text.contains("have been deleted"));
    let (class, exc) = class_for(v, "KAFKA_DATA_LOSS.PARTITIONS_DELETED");
    let m: Vec<&PartitionView> = missing.iter().collect();
    let mut f = Finding::new(
        Code::KafkaTopicMissing,
        if confirmed { Severity::Error } else { Severity::Warning },
        format!("Kafka source #{i}: the brokers' offsets name no partition of topic(s) {}", topics.join(", ")),
    )
    .evidence(format!("offsets/{batch}"), format!("partitions read by the checkpoint: {}", names(&m)), None)
    .why(format!(
        "Either the topic was deleted or its offsets were not listed. If it was deleted: with subscribePattern its partitions are gone ({}: {}) and the restart fails with failOnDataLoss=true; with subscribe, the Admin-based offset reader fails describing the missing topic (UnknownTopicOrPartitionException) whatever failOnDataLoss says, and the consumer-based one (spark.sql.streaming.kafka.useDeprecatedOffsetFetching=true) reports the partitions gone.",
        class.unwrap_or("IllegalStateException \"Set(...) are gone. Some data may have been missed.\""),
        names(&m)
    ))
    .fix(&[
        "Check with kafka-topics.sh --bootstrap-server <brokers> --describe --topic <topic>; if it exists, give its offsets too.",
        "If it was deleted on purpose, see the restart plan: a new checkpoint whose startingOffsets leave it out (and, with subscribe, drop it from the option).",
    ]);
    if confirmed {
        f = f.classes(&class.into_iter().collect::<Vec<_>>()).fails(RestartStage::SourceOffsets, class, exc);
        f.explains_error_text = true;
    }
    f
}

fn partitions_added(i: usize, batch: i64, added: &[PartitionView], v: SparkVersion) -> Finding {
    let late: Vec<&PartitionView> = added.iter().filter(|p| p.earliest.is_some_and(|e| e > 0)).collect();
    let a: Vec<&PartitionView> = added.iter().collect();
    let (class, exc) = class_for(v, "KAFKA_DATA_LOSS.ADDED_PARTITION_DOES_NOT_START_FROM_OFFSET_ZERO");
    let mut f = Finding::new(
        Code::KafkaPartitionsAdded,
        if late.is_empty() { Severity::Info } else { Severity::Error },
        format!("Kafka source #{i}: partitions added since the checkpoint: {}", names(&a)),
    );
    for p in added {
        f = f.evidence(
            format!("offsets/{batch}"),
            format!(
                "{}: not in the checkpoint's offsets; brokers' earliest {}",
                p.name(),
                p.earliest.map(|e| e.to_string()).unwrap_or_else(|| "not given".into())
            ),
            None,
        );
    }
    f = f.why(
        "A restart reads partitions the checkpoint does not know from their earliest offset. If that earliest is not 0, records of the new partition aged out before the query saw them: Spark reports data loss (failOnDataLoss=true fails the restart).",
    );
    if !late.is_empty() {
        f = f
            .classes(&class.into_iter().collect::<Vec<_>>())
            .fix(&["See the restart plan: failOnDataLoss=false accepts the gap; a new checkpoint names the new partitions with -2 (earliest)."])
            .fails(RestartStage::SourceOffsets, class, exc);
    } else {
        f = f.fix(&["Nothing to do for a restart on this checkpoint; a new checkpoint's startingOffsets must name them too (-2 = earliest)."]);
    }
    f
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::archive::{Limits, MemArchive};
    use crate::kafka_offsets::parse;
    use crate::report::RestartOutcome;

    /// A Kafka checkpoint: batch 0 committed at `committed`, and, when given, an uncommitted batch 1 ending at
    /// `planned`, diagnosed on Spark `v` with the brokers' view `earliest`/`latest` (lines `t:p:offset`).
    fn diagnose(
        committed: &str,
        planned: Option<&str>,
        v: &str,
        view: Option<(&str, &str)>,
    ) -> crate::report::CheckpointReport {
        let line = |off: &str| format!("v1\n{{\"batchWatermarkMs\":0,\"batchTimestampMs\":1000,\"conf\":{{}}}}\n{off}");
        let mut files = vec![
            ("metadata".to_string(), br#"{"id":"q"}"#.to_vec()),
            ("offsets/0".to_string(), line(committed).into_bytes()),
            ("commits/0".to_string(), b"v1\n{\"nextBatchWatermarkMs\":0}".to_vec()),
        ];
        if let Some(p) = planned {
            files.push(("offsets/1".to_string(), line(p).into_bytes()));
        }
        let ctx = Context {
            spark_version: Some(v.parse().unwrap()),
            now_ms: Some(2_000),
            kafka_earliest: view.map(|(e, _)| parse(e).unwrap()),
            kafka_latest: view.map(|(_, l)| parse(l).unwrap()),
            ..Default::default()
        };
        let mut a = MemArchive::new("t.zip", files, Limits::default()).unwrap();
        crate::diagnose(&mut a, &ctx).checkpoints.remove(0)
    }

    /// The run that planned batch 1 saw the brokers' latest go down and recorded it: the replay plans with the
    /// recorded ends (no brokers asked) and `getOffsetRangesFromResolvedOffsets` reports "offset was changed"
    /// again, whatever the brokers hold now. The way out deletes the uncommitted offsets file first.
    #[test]
    fn an_uncommitted_batch_ending_below_its_start_fails_its_replay_from_the_files_alone() {
        for (v, class, exc) in [
            (
                "4.0.1",
                Some("KAFKA_DATA_LOSS.PARTITION_OFFSET_CHANGED"),
                "org.apache.spark.sql.kafka010.KafkaIllegalStateException",
            ),
            ("3.5.7", None, "java.lang.IllegalStateException"),
        ] {
            // t-1 went forward as usual; t-0 went back from 500 to 300.
            let r = diagnose(r#"{"t":{"0":500,"1":480}}"#, Some(r#"{"t":{"0":300,"1":490}}"#), v, None);
            assert_eq!(r.restart.outcome, RestartOutcome::Fails, "{v}");
            assert_eq!(r.restart.error_class.as_deref(), class, "{v}");
            assert_eq!(r.restart.exception.as_deref(), Some(exc), "{v}");
            let f = r.findings.iter().find(|f| f.code == Code::KafkaOffsetsAheadOfLatest).expect("the finding");
            assert!(f.title.contains("the uncommitted batch 1 ends below where it starts (t-0)"), "{}", f.title);
            assert_eq!(f.restart_failure.as_ref().unwrap().stage, RestartStage::SourceOffsets);
            assert!(f
                .evidence
                .iter()
                .any(|e| e.path == "offsets/1" && e.detail.contains("t-0: end offset 300 < start 500")));
            assert!(f.fix.iter().any(|s| s.contains("delete offsets/1")), "{:?}", f.fix);
            let plan = r.restart_plan.as_ref().expect("a plan");
            let retry = plan.ways_out.iter().find(|w| w.kind == crate::restart_plan::WayOutKind::Retry).expect("retry");
            assert!(retry.steps.iter().any(|s| s.contains("delete offsets/1")), "{:?}", retry.steps);
            assert!(plan.ways_out.iter().any(|w| w.kind == crate::restart_plan::WayOutKind::FailOnDataLossFalse));
            // The recorded ends name only t-0: t-1 is neither removed nor left out of a new start.
            assert!(!plan.ways_out.iter().flat_map(|w| &w.costs).any(|c| c.contains("t-1")), "{:?}", plan.ways_out);
            let start = plan.ways_out.iter().flat_map(|w| &w.options).find(|o| o.key == "startingOffsets");
            assert_eq!(start.map(|o| o.value.as_str()), Some(r#"{"t":{"0":-2,"1":480}}"#));
        }
        // The brokers back above the start: the replay still fails (recorded ends), and the retry deletes the
        // uncommitted offsets file first.
        let r = diagnose(r#"{"t":{"0":500}}"#, Some(r#"{"t":{"0":300}}"#), "4.0.1", Some(("t:0:0", "t:0:600")));
        assert_eq!(r.restart.error_class.as_deref(), Some("KAFKA_DATA_LOSS.PARTITION_OFFSET_CHANGED"));
        let plan = r.restart_plan.as_ref().expect("a plan");
        let retry = plan.ways_out.iter().find(|w| w.kind == crate::restart_plan::WayOutKind::Retry).expect("retry");
        assert!(retry.steps.iter().any(|s| s.contains("delete offsets/1")), "{:?}", retry.steps);
        // The same batch going forward is a plain replay.
        let r = diagnose(r#"{"t":{"0":500}}"#, Some(r#"{"t":{"0":600}}"#), "4.0.1", None);
        assert_eq!(r.restart.outcome, RestartOutcome::ReplaysLastBatch);
        assert!(!r.findings.iter().any(|f| f.code == Code::KafkaOffsetsAheadOfLatest));
    }

    /// A replayed batch is planned with its recorded ends: an end the brokers no longer hold passes the
    /// planning and fails the executors' read (COULD_NOT_READ_OFFSET_RANGE), not "offset was changed"; the plan
    /// offers the retry and failOnDataLoss=false for it.
    #[test]
    fn a_replayed_end_above_the_brokers_latest_fails_the_read_not_the_planning() {
        let r = diagnose(r#"{"t":{"0":40}}"#, Some(r#"{"t":{"0":100}}"#), "4.0.1", Some(("t:0:0", "t:0:80")));
        assert_eq!(r.restart.error_class.as_deref(), Some("KAFKA_DATA_LOSS.COULD_NOT_READ_OFFSET_RANGE"));
        let f = r.findings.iter().find(|f| f.code == Code::KafkaOffsetsAheadOfLatest).expect("the finding");
        assert_eq!(f.restart_failure.as_ref().unwrap().stage, RestartStage::SourceRead);
        let kinds: Vec<_> = r.restart_plan.as_ref().unwrap().ways_out.iter().map(|w| w.kind).collect();
        assert!(kinds.contains(&crate::restart_plan::WayOutKind::Retry), "{kinds:?}");
        assert!(kinds.contains(&crate::restart_plan::WayOutKind::FailOnDataLossFalse), "{kinds:?}");
        // After a committed batch the next one is planned with the brokers' latest: "offset was changed".
        let r = diagnose(r#"{"t":{"0":100}}"#, None, "4.0.1", Some(("t:0:0", "t:0:80")));
        assert_eq!(r.restart.error_class.as_deref(), Some("KAFKA_DATA_LOSS.PARTITION_OFFSET_CHANGED"));
    }

    /// One half of the brokers' view given: the half not checked is said, not silently dropped.
    #[test]
    fn a_half_given_brokers_view_says_what_is_not_checked() {
        use crate::present::Hint;
        let line = "v1\n{\"batchWatermarkMs\":0,\"batchTimestampMs\":1000,\"conf\":{}}\n{\"t\":{\"0\":40}}";
        for (earliest, latest, given) in
            [(None, Some("t:0:90"), Some("latest")), (Some("t:0:0"), None, Some("earliest")), (None, None, None)]
        {
            let files = vec![
                ("metadata".to_string(), br#"{"id":"q"}"#.to_vec()),
                ("offsets/0".to_string(), line.as_bytes().to_vec()),
                ("commits/0".to_string(), b"v1\n{\"nextBatchWatermarkMs\":0}".to_vec()),
            ];
            let ctx = Context {
                kafka_earliest: earliest.map(|e| parse(e).unwrap()),
                kafka_latest: latest.map(|l| parse(l).unwrap()),
                ..Default::default()
            };
            let mut a = MemArchive::new("t.zip", files, Limits::default()).unwrap();
            let r = crate::diagnose(&mut a, &ctx).checkpoints.remove(0);
            let hint = r.hints.iter().find_map(|h| match h {
                Hint::KafkaOffsetsNotGiven { sources, given } => Some((sources.clone(), given.clone())),
                _ => None,
            });
            assert_eq!(hint, Some((vec![0], given.map(str::to_string))), "{earliest:?} {latest:?}");
        }
    }

    /// A pasted "offset was changed" names the partitions that changed, not all the brokers have: the others are
    /// not judged removed, and the verdict cites the change.
    #[test]
    fn a_pasted_offset_change_judges_only_the_partitions_it_names() {
        let line = "v1\n{\"batchWatermarkMs\":0,\"batchTimestampMs\":1000,\"conf\":{}}\n{\"t\":{\"0\":500,\"1\":480}}";
        let files = vec![
            ("metadata".to_string(), br#"{"id":"q"}"#.to_vec()),
            ("offsets/0".to_string(), line.as_bytes().to_vec()),
            ("commits/0".to_string(), b"v1\n{\"nextBatchWatermarkMs\":0}".to_vec()),
        ];
        let ctx = Context {
            spark_version: Some("4.0.1".parse().unwrap()),
            error_text: Some(
                "[KAFKA_DATA_LOSS.PARTITION_OFFSET_CHANGED] Partition t-0 offset was changed from 500 to 300.".into(),
            ),
            ..Default::default()
        };
        let mut a = MemArchive::new("t.zip", files, Limits::default()).unwrap();
        let r = crate::diagnose(&mut a, &ctx).checkpoints.remove(0);
        assert!(!r.findings.iter().any(|f| f.code == Code::KafkaPartitionsRemoved), "{:?}", r.findings);
        let f = r.findings.iter().find(|f| f.explains_error_text).expect("a finding explains it");
        assert_eq!(f.code, Code::KafkaOffsetsAheadOfLatest, "{}", f.title);
    }

    /// The planning's reports come before the executors' reads: with one partition aged out and another ahead
    /// of the brokers' latest, Spark fails planning on the second ("offset was changed").
    #[test]
    fn the_planning_failure_comes_before_an_aged_out_read() {
        let r = diagnose(r#"{"t":{"0":40,"1":41}}"#, None, "4.0.1", Some(("t:0:50\nt:1:0", "t:0:90\nt:1:30")));
        assert_eq!(r.restart.error_class.as_deref(), Some("KAFKA_DATA_LOSS.PARTITION_OFFSET_CHANGED"));
        let aged = r.findings.iter().find(|f| f.code == Code::KafkaOffsetsBelowEarliest).expect("aged out");
        assert_eq!(aged.restart_failure.as_ref().unwrap().stage, RestartStage::SourceRead);
    }

    #[test]
    fn reads_the_offset_change_from_spark_3_5_and_4_0_messages() {
        let t35 = "java.lang.IllegalStateException: Partition payments-events-0's offset was changed from 500 to 300, some data may have been missed.";
        assert_eq!(offsets_changed_in_error(t35).get("payments-events", 0), Some(300));
        let t40 =
            "[KAFKA_DATA_LOSS.PARTITION_OFFSET_CHANGED] ... Reason: Partition a-b-12 offset was changed from 7 to 2.";
        assert_eq!(offsets_changed_in_error(t40).get("a-b", 12), Some(2));
        assert!(offsets_changed_in_error("nothing here").topics.is_empty());
    }
}
