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

/// `Partition <topic>-<p>'s offset was changed from A to B` (3.5) / `Partition <topic>-<p> offset was changed
/// from A to B` (4.0+, `KAFKA_DATA_LOSS.PARTITION_OFFSET_CHANGED`) in the pasted error: the brokers' latest B.
pub fn offsets_changed_in_error(text: &str) -> KafkaOffsets {
    let mut out = KafkaOffsets::default();
    let key = "offset was changed from ";
    for (i, _) in text.match_indices(key) {
        let before = &text[..i];
        let Some(ps) = before.rfind("Partition ") else { continue };
        let tp = before[ps + "Partition ".len()..].trim_end().trim_end_matches("'s").trim();
        let nums: Vec<i64> = text[i + key.len()..]
            .split(|c: char| !c.is_ascii_digit() && c != '-')
            .filter(|s| !s.is_empty() && *s != "-")
            .take(2)
            .filter_map(|s| s.parse().ok())
            .collect();
        let Some((topic, p)) = tp.rsplit_once('-') else { continue };
        if let (Ok(p), [_, new]) = (p.parse::<i32>(), nums.as_slice()) {
            out.topics.entry(topic.to_string()).or_default().insert(p, *new);
        }
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

/// The checkpoint's offsets against the brokers' view: aged out, ahead of latest, partitions removed or
/// added, topics missing.
pub fn check_kafka_brokers(cp: &Checkpoint, ctx: &Context) -> Vec<Finding> {
    if cp.kind.0 != CheckpointKind::StructuredStreaming {
        return vec![];
    }
    let from_error = ctx.error_text.as_deref().map(offsets_changed_in_error).filter(|o| !o.topics.is_empty());
    let latest = ctx.kafka_latest.clone().or(from_error.clone());
    if ctx.kafka_earliest.is_none() && latest.is_none() {
        return vec![];
    }
    let v = ctx.spark_version.unwrap_or(SparkVersion::NEWEST);
    let latest_src = if ctx.kafka_latest.is_some() { "the brokers' latest offsets given" } else { "the pasted error" };
    let mut out = Vec::new();
    for (i, batch, from, until) in kafka_sources(cp) {
        let start = compare(&from, ctx.kafka_earliest.as_ref(), latest.as_ref());
        let end = compare(&until, ctx.kafka_earliest.as_ref(), latest.as_ref());
        let last = cp.last_batch_id().unwrap_or(batch);
        let by = |s: PartitionStatus, views: &[PartitionView]| -> Vec<PartitionView> {
            views.iter().filter(|p| p.status == s).cloned().collect()
        };
        let below = by(PartitionStatus::BelowEarliest, &start);
        let ahead = by(PartitionStatus::AheadOfLatest, &end);
        let removed = by(PartitionStatus::PartitionRemoved, &start);
        let missing = by(PartitionStatus::TopicMissing, &start);
        let added = by(PartitionStatus::PartitionAdded, &start);
        let explains = |p: &PartitionView| ctx.error_text.as_deref().is_some_and(|t| t.contains(&p.name()));
        let at = Where { index: i, batch, last, v };
        if !below.is_empty() {
            out.push(aged_out(&at, &below, below.iter().any(explains)));
        }
        if !ahead.is_empty() {
            out.push(ahead_of_latest(&at, &ahead, latest_src, ahead.iter().any(explains)));
        }
        if !removed.is_empty() {
            out.push(partitions_removed(&at, &removed, removed.iter().any(explains)));
        }
        if !missing.is_empty() {
            out.push(topic_missing(i, batch, &missing, ctx, v));
        }
        if !added.is_empty() {
            out.push(partitions_added(i, batch, &added, v));
        }
    }
    out
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
    let mut f = Finding::new(
        Code::KafkaOffsetsBelowEarliest,
        Severity::Error,
        format!("Kafka source #{i}: {} record(s) aged out before they were read ({})", lost, names(&b)),
    );
    for p in below {
        f = f.evidence(
            format!("offsets/{batch}"),
            format!(
                "{}: next offset {} < brokers' earliest {} ({} records lost)",
                p.name(),
                p.checkpoint.unwrap_or(0),
                p.earliest.unwrap_or(0),
                p.lost()
            ),
            None,
        );
    }
    f = f
            .classes(&class.into_iter().collect::<Vec<_>>())
            .why(format!(
                "Kafka's retention deleted records the query had not read yet (it was stopped longer than the topic's retention.ms, or fell behind). With failOnDataLoss=true (the default) the first read fails: {}. With failOnDataLoss=false Spark logs a warning and skips to the earliest: the {lost} record(s) are silently missing downstream.",
                if class.is_some() { "KAFKA_DATA_LOSS.COULD_NOT_READ_OFFSET_RANGE (\"Could not read records in offset [start, end)\")" } else { "IllegalStateException \"Cannot fetch offset N\"" }
            ))
            .fix(&[
                "The records are gone from Kafka: recover them from wherever else they were kept (a mirror, the producer's source), if they matter.".to_string(),
                "See the restart plan: failOnDataLoss=false on this checkpoint (a silent gap, state kept), or a new checkpoint starting at the earliest offsets.".to_string(),
                "For the future, raise the topic's retention.ms above the longest stop you expect.".to_string(),
            ])
            .fails(RestartStage::SourceOffsets, class, exc);
    f.explains_error_text = explains;
    f
}

fn ahead_of_latest(at: &Where, ahead: &[PartitionView], latest_src: &str, explains: bool) -> Finding {
    let (i, last, v) = (at.index, at.last, at.v);
    let a: Vec<&PartitionView> = ahead.iter().collect();
    let (class, exc) = class_for(v, "KAFKA_DATA_LOSS.PARTITION_OFFSET_CHANGED");
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
    f = f
            .classes(&class.into_iter().collect::<Vec<_>>())
            .why(format!(
                "Kafka offsets only grow, so a latest offset below the checkpoint's means the topic was deleted and re-created (its offsets restarted from 0), or a broker reports a lower high-water mark (a lagging replica became leader, unclean leader election); the latter may be transient: Spark itself re-reads the latest offsets up to fetchOffset.numRetries (3) times. With failOnDataLoss=true the restart fails ({}); with false Spark drops the range and goes on from the new latest, never reading the re-created topic's records before it.",
                class.map(|c| c.to_string()).unwrap_or_else(|| "IllegalStateException \"Partition ...'s offset was changed from A to B\"".into())
            ))
            .fix(&[
                "Read the latest offsets again in a few minutes (kafka-get-offsets.sh --time -1) before discarding anything: a transient lower high-water mark goes away by itself.".to_string(),
                "If the topic was re-created: see the restart plan (a new checkpoint starting the re-created partitions at their earliest, or failOnDataLoss=false accepting the gap).".to_string(),
            ])
            .fails(RestartStage::SourceOffsets, class, exc);
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
