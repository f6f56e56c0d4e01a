//! The Kafka source's ways out and its start on a new checkpoint.
//!
//! Spark source (apache/spark connector/kafka-0-10-sql/src/main/scala/org/apache/spark/sql/kafka010/):
//! `KafkaOffsetReaderAdmin.fetchSpecificOffsets` asserts that a specific `startingOffsets` names exactly the
//! assigned partitions ("you must specify all TopicPartitions ... Use -1 for latest, -2 for earliest"), so a
//! start must name every partition the brokers have and none they lack; an offset below the earliest fails the
//! first read with failOnDataLoss=true (`KafkaDataConsumer.get`: "Cannot fetch offset", Spark 4.0+
//! `KAFKA_DATA_LOSS.COULD_NOT_READ_OFFSET_RANGE`), so it is clamped to `-2` (earliest). `startingOffsets` is
//! honoured only when the checkpoint has no offsets yet (`KafkaMicroBatchStream.initialOffset`).

use super::{snippet, PlanInput, SourceAt, SourceOption, SourcePlanner, SourceStart, WayOut, WayOutKind};
use crate::checks::catalogue::Code;
use crate::kafka_offsets::{compare, from_source_offset, to_json, PartitionStatus, PartitionView};
use crate::source::SourceKind;
use crate::time::utc;
use std::collections::BTreeMap;

/// Kafka's default `retention.ms` (7 days; `log.retention.hours=168`).
pub const DEFAULT_RETENTION_MS: i64 = 7 * 24 * 3600 * 1000;

/// The Kafka source planner.
pub(super) const PLANNER: SourcePlanner = SourcePlanner { kind: SourceKind::Kafka, ways_out, start };

/// The checkpoint's offsets of a source compared with the brokers' view the user gave.
pub(super) fn views(input: &PlanInput<'_>, at: &SourceAt<'_>) -> Vec<PartitionView> {
    let committed = at.offset.json.as_ref().map(from_source_offset).unwrap_or_default();
    let mut v = compare(&committed, input.ctx.kafka_earliest.as_ref(), latest_view(input, at).as_ref());
    crate::checks::kafka::mark_pasted_aged_out(&mut v, input.ctx);
    v
}

/// The brokers' latest offsets as given, else what the pasted error says ("offset was changed from A to B"),
/// else the ends an uncommitted batch recorded below its start (the latest the run that planned it saw).
fn latest_view(input: &PlanInput<'_>, at: &SourceAt<'_>) -> Option<crate::kafka_offsets::KafkaOffsets> {
    input
        .ctx
        .kafka_latest
        .clone()
        .or_else(|| {
            input
                .ctx
                .error_text
                .as_deref()
                .map(crate::checks::kafka::offsets_changed_in_error)
                .filter(|o| !o.topics.is_empty())
        })
        .or_else(|| went_back(input, at))
}

/// The ends below the start that the uncommitted latest batch recorded for this source
/// ([`crate::checks::kafka::replay_went_back`]), with that batch's id.
fn went_back_at(input: &PlanInput<'_>, at: &SourceAt<'_>) -> Option<(i64, crate::kafka_offsets::KafkaOffsets)> {
    crate::checks::kafka::replay_went_back(input.cp).into_iter().find(|w| w.0 == at.index).map(|w| (w.2, w.3))
}

fn went_back(input: &PlanInput<'_>, at: &SourceAt<'_>) -> Option<crate::kafka_offsets::KafkaOffsets> {
    went_back_at(input, at).map(|w| w.1)
}

fn names(v: &[&PartitionView]) -> String {
    v.iter().map(|p| p.name()).collect::<Vec<_>>().join(", ")
}

fn batch_time(input: &PlanInput<'_>, batch: i64) -> Option<i64> {
    input.cp.offsets.get(&batch)?.file.content.as_ref().ok()?.metadata.as_ref()?.batch_timestamp_ms
}

fn ways_out(input: &PlanInput<'_>, at: &SourceAt<'_>) -> Vec<WayOut> {
    let v = views(input, at);
    let kinds: Vec<SourceKind> = vec![SourceKind::Kafka; at.index + 1];
    let below: Vec<&PartitionView> = v.iter().filter(|p| p.status == PartitionStatus::BelowEarliest).collect();
    // Ahead at the start, or (an uncommitted batch replayed) at the end its replay reads up to.
    let latest = latest_view(input, at);
    let replay: Vec<PartitionView> = crate::checks::kafka::replay_ends(input.cp, at.index)
        .map(|until| compare(&until, input.ctx.kafka_earliest.as_ref(), latest.as_ref()))
        .unwrap_or_default()
        .into_iter()
        .filter(|p| p.status == PartitionStatus::AheadOfLatest)
        .filter(|p| !v.iter().any(|q| q.status == PartitionStatus::AheadOfLatest && q.name() == p.name()))
        .collect();
    let ahead: Vec<&PartitionView> =
        v.iter().filter(|p| p.status == PartitionStatus::AheadOfLatest).chain(replay.iter()).collect();
    let gone: Vec<&PartitionView> = v
        .iter()
        .filter(|p| matches!(p.status, PartitionStatus::PartitionRemoved | PartitionStatus::TopicMissing))
        .collect();
    // Partitions new since the checkpoint whose earliest is not 0: `ADDED_PARTITION_DOES_NOT_START_FROM_OFFSET_ZERO`,
    // a warning with failOnDataLoss=false (the partition is read from its earliest).
    let late: Vec<&PartitionView> =
        v.iter().filter(|p| p.status == PartitionStatus::PartitionAdded && p.earliest.is_some_and(|e| e > 0)).collect();
    let mut out = Vec::new();
    out.extend(retry(input, at, &ahead));
    if !below.is_empty() || !ahead.is_empty() || !gone.is_empty() || !late.is_empty() {
        let mut w = WayOut::new(
            WayOutKind::FailOnDataLossFalse,
            "Keep this checkpoint and let the Kafka source skip what is gone (failOnDataLoss=false)",
        );
        w.source_index = Some(at.index);
        w.data_loss = true;
        w.costs.extend(below.iter().map(|p| aged_out_cost(p)));
        for p in &ahead {
            w.costs.push(format!(
                "{}: the batch from {} to {} is dropped and the query goes on from {}: the records of the \
                 re-created topic before that offset are never read (a silent gap)",
                p.name(),
                p.checkpoint.unwrap_or(0),
                p.latest.unwrap_or(0),
                p.latest.unwrap_or(0)
            ));
        }
        if !gone.is_empty() {
            w.costs.push(format!("{}: no longer read; their unread records are lost", names(&gone)));
        }
        for p in &late {
            w.costs.push(format!(
                "{}: new since the checkpoint, read from its earliest offset {}: records 0..{} aged out before the \
                 query saw the partition (Spark only logs a warning)",
                p.name(),
                p.earliest.unwrap_or(0),
                p.earliest.unwrap_or(0).saturating_sub(1)
            ));
        }
        for (cond, code) in [
            (!below.is_empty(), Code::KafkaOffsetsBelowEarliest),
            (!ahead.is_empty(), Code::KafkaOffsetsAheadOfLatest),
            (gone.iter().any(|p| p.status == PartitionStatus::PartitionRemoved), Code::KafkaPartitionsRemoved),
            (gone.iter().any(|p| p.status == PartitionStatus::TopicMissing), Code::KafkaTopicMissing),
            (!late.is_empty(), Code::KafkaPartitionsAdded),
        ] {
            if cond {
                w.answers.push(code);
            }
        }
        w.steps.push(
            "Set .option(\"failOnDataLoss\", \"false\") on the Kafka source and restart on this checkpoint; once a \
             batch has committed, set it back to true so that a future loss stops the query again."
                .into(),
        );
        w.options.push(SourceOption::new(at.index, "failOnDataLoss", "false", false));
        w.snippets = snippet::source_snippets(&w.options, &kinds, false);
        out.push(w);
    }
    if below.is_empty() && ahead.is_empty() {
        if let (Some(now), Some(ts)) = (input.ctx.now_ms, batch_time(input, at.batch)) {
            let age = now.saturating_sub(ts);
            if age.saturating_mul(3) > DEFAULT_RETENTION_MS * 2 {
                let mut w = WayOut::new(
                    WayOutKind::RaiseRetention,
                    "Raise the topics' retention before the unread records age out",
                );
                w.source_index = Some(at.index);
                w.answers.push(Code::LastActivityAge);
                let topics: Vec<String> =
                    v.iter().map(|p| p.topic.clone()).collect::<std::collections::BTreeSet<_>>().into_iter().collect();
                for t in &topics {
                    w.steps.push(format!(
                        "kafka-configs.sh --bootstrap-server <brokers> --alter --entity-type topics --entity-name {t} \
                         --add-config retention.ms=<ms covering the stop plus a margin>"
                    ));
                }
                w.costs.push(format!(
                    "The records after offsets/{} were written from {} on; with Kafka's default retention.ms (7 days, \
                     the topic's own setting decides) they age out from {} on. Raising retention costs broker disk \
                     for the extra days of every partition.",
                    at.batch,
                    utc(ts),
                    utc(ts.saturating_add(DEFAULT_RETENTION_MS))
                ));
                out.push(w);
            }
        }
    }
    out
}

/// What failOnDataLoss=false skips of a partition below the brokers' earliest (its size unknown when only a pasted
/// error says the offset is gone).
fn aged_out_cost(p: &PartitionView) -> String {
    match p.earliest {
        Some(e) => format!(
            "{}: records {}..{} ({} records) aged out and are skipped without an error (Spark only logs a warning)",
            p.name(),
            p.checkpoint.unwrap_or(0),
            e.saturating_sub(1),
            p.lost()
        ),
        None => format!(
            "{}: the records from {} up to the brokers' earliest offset (not given: kafka-get-offsets.sh --time -2 says how many) are gone and are skipped without an error (Spark only logs a warning)",
            p.name(),
            p.checkpoint.unwrap_or(0)
        ),
    }
}

/// The retry way out: partitions `ahead` of the brokers' latest may be a transient lower high-water mark; an
/// uncommitted batch that recorded ends below its start needs its offsets file deleted first, whatever the
/// brokers hold now (its replay would use the recorded ends again).
fn retry(input: &PlanInput<'_>, at: &SourceAt<'_>, ahead: &[&PartitionView]) -> Option<WayOut> {
    let went_back = went_back_at(input, at);
    if ahead.is_empty() && went_back.is_none() {
        return None;
    }
    let which = match (&went_back, ahead.is_empty()) {
        (Some((_, back)), true) => back
            .topics
            .iter()
            .flat_map(|(t, ps)| ps.keys().map(move |p| format!("{t}-{p}")))
            .collect::<Vec<_>>()
            .join(", "),
        _ => names(ahead),
    };
    let mut w = WayOut::new(WayOutKind::Retry, format!("Retry before discarding anything: {which} may be transient"));
    w.source_index = Some(at.index);
    w.answers.push(Code::KafkaOffsetsAheadOfLatest);
    w.steps.push(
        "Read the latest offsets again in a few minutes (kafka-get-offsets.sh --bootstrap-server <brokers> \
         --topic <topic> --time -1): a lagging replica that became leader (unclean leader election) can \
         report a lower high-water mark for a while; Spark itself re-reads the latest offsets \
         fetchOffset.numRetries (3) times, fetchOffset.retryIntervalMs (1 s) apart."
            .into(),
    );
    match went_back {
        // The replay keeps the recorded ends: only a batch planned anew reads the brokers' offsets again.
        Some((last, _)) => w.steps.push(format!(
            "If the offsets are back at or above the checkpoint's: copy the checkpoint, delete offsets/{last} \
             and the .{last}.crc beside it (batch {last} is not committed and recorded the lower offsets, which \
             its replay would use again), and restart the query unchanged."
        )),
        None => {
            w.steps.push("If the offsets are back at or above the checkpoint's, restart the query unchanged.".into())
        }
    }
    w.costs.push(
        "None if the brokers recover: the checkpoint, its state and the exactly-once bookkeeping are kept.".into(),
    );
    Some(w)
}

fn start(input: &PlanInput<'_>, at: &SourceAt<'_>) -> Option<SourceStart> {
    let v = views(input, at);
    if v.is_empty() {
        return None;
    }
    let mut s = SourceStart::default();
    let mut json: BTreeMap<String, BTreeMap<i32, i64>> = BTreeMap::new();
    let mut first_batch: Option<i64> = Some(0);
    let idx = at.index;
    for p in &v {
        let c = p.checkpoint.unwrap_or(0);
        let from = match p.status {
            PartitionStatus::Ok => c,
            PartitionStatus::BelowEarliest => {
                s.data_loss = true;
                s.dropped.push(match p.earliest {
                    Some(e) => format!(
                        "source #{idx}: {} clamped from {c} to -2 (earliest; {e} per your brokers' view): records \
                         {c}..{} aged out, a gap of {} records",
                        p.name(),
                        e.saturating_sub(1),
                        p.lost()
                    ),
                    None => format!(
                        "source #{idx}: {} clamped from {c} to -2 (earliest): the pasted error says the brokers no \
                         longer hold offset {c}; the records from {c} up to their earliest are a gap",
                        p.name()
                    ),
                });
                -2
            }
            PartitionStatus::AheadOfLatest => {
                s.dropped.push(format!(
                    "source #{idx}: {} set from {c} to -2 (earliest): the brokers' latest is {}, below the \
                     checkpoint (topic re-created, or a transient lower high-water mark: retry first); the new \
                     topic is read from its earliest",
                    p.name(),
                    p.latest.unwrap_or(0)
                ));
                -2
            }
            PartitionStatus::PartitionAdded => {
                s.steps.push(format!(
                    "source #{idx}: {} is new since the checkpoint: it starts from -2 (earliest)",
                    p.name()
                ));
                -2
            }
            PartitionStatus::PartitionRemoved | PartitionStatus::TopicMissing => {
                s.data_loss = true;
                s.dropped.push(format!(
                    "source #{idx}: {} left out: {}, and Spark rejects a startingOffsets naming a partition the \
                     brokers do not have (if it does exist, add it back with its offset)",
                    p.name(),
                    if p.status == PartitionStatus::TopicMissing {
                        "your brokers' view names no partition of its topic (deleted, or not listed)"
                    } else {
                        "your brokers' view lists other partitions of its topic but not this one"
                    }
                ));
                continue;
            }
        };
        json.entry(p.topic.clone()).or_default().insert(p.partition, from);
        first_batch = match (first_batch, p.latest, p.earliest) {
            (Some(n), Some(l), e) => {
                let start_at = if from < 0 { e.unwrap_or(0) } else { from };
                Some(n.saturating_add(l.saturating_sub(start_at).max(0)))
            }
            _ => None,
        };
    }
    if json.is_empty() {
        s.steps.push(format!("source #{idx}: no partition of the checkpoint is left to start from; it starts from its own startingOffsets"));
        return Some(s);
    }
    s.options.push(SourceOption::new(idx, "startingOffsets", to_json(&json), true));
    s.costs.push(match first_batch {
        Some(n) => format!("source #{idx}: the first batch reads about {n} records (brokers' latest minus the start); cap it with maxOffsetsPerTrigger"),
        None => format!("source #{idx}: the first batch reads everything from these offsets to the brokers' latest (cap it with maxOffsetsPerTrigger)"),
    });
    if input.ctx.kafka_earliest.is_none() {
        s.steps.push(format!(
            "source #{idx}: these are the checkpoint's offsets, not checked against the brokers: get their earliest \
             offsets (kafka-get-offsets.sh --time -2) and give them to the inspector, which then clamps what aged \
             out and leaves out partitions the brokers no longer have; partitions created since the checkpoint \
             must be added with -2"
        ));
    }
    let keeps_committed = v.iter().any(|p| p.status == PartitionStatus::Ok);
    if keeps_committed {
        if let Some(ts) = batch_time(input, at.batch) {
            s.recompute_after_ms = Some(ts.saturating_add(DEFAULT_RETENTION_MS));
            s.steps.push(format!(
                "source #{idx}: the offsets kept from offsets/{} point at records written after {}; with Kafka's \
                 default retention.ms (7 days; the topic's own setting decides) they start to age out after {}: \
                 recompute the start (fresh kafka-get-offsets.sh --time -2) if you restart later",
                at.batch,
                utc(ts),
                utc(ts.saturating_add(DEFAULT_RETENTION_MS))
            ));
        }
    }
    Some(s)
}

/// Notes on the plan as a whole about the Kafka inputs (what the user gave and what is missing).
pub(super) fn notes(input: &PlanInput<'_>) -> Vec<String> {
    let mut out = Vec::new();
    let has_kafka = super::start_batch(input.cp).is_some_and(|(_, o)| o.iter().any(|s| s.kind == SourceKind::Kafka));
    if !has_kafka {
        return out;
    }
    for (what, v) in [("earliest", &input.ctx.kafka_earliest), ("latest", &input.ctx.kafka_latest)] {
        if let Some(v) = v {
            if !v.without_offset.is_empty() {
                out.push(format!(
                    "The brokers' {what} offsets gave no offset for {} (no leader?): those partitions were judged \
                     as not listed.",
                    v.without_offset.join(", ")
                ));
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use crate::archive::{Limits, MemArchive};
    use crate::kafka_offsets::parse;
    use crate::restart_plan::WayOutKind;
    use crate::Context;

    fn report(ctx: &Context) -> crate::report::CheckpointReport {
        let line = |ts: i64, off: &str| {
            format!("v1\n{{\"batchWatermarkMs\":0,\"batchTimestampMs\":{ts},\"conf\":{{}}}}\n{off}")
        };
        let files = vec![
            ("metadata".to_string(), br#"{"id":"q"}"#.to_vec()),
            ("offsets/0".to_string(), line(1_000, r#"{"t":{"0":40,"1":41,"2":7}}"#).into_bytes()),
            ("commits/0".to_string(), b"v1\n{\"nextBatchWatermarkMs\":0}".to_vec()),
        ];
        let mut a = MemArchive::new("t.zip", files, Limits::default()).unwrap();
        crate::diagnose(&mut a, ctx).checkpoints.remove(0)
    }

    #[test]
    fn the_start_clamps_what_aged_out_and_leaves_out_what_the_brokers_lack() {
        let ctx = Context {
            now_ms: Some(2_000),
            kafka_earliest: Some(parse("t:0:50\nt:1:0\nt:3:0").unwrap()),
            kafka_latest: Some(parse("t:0:90\nt:1:60\nt:3:5").unwrap()),
            ..Default::default()
        };
        let r = report(&ctx);
        let plan = r.restart_plan.expect("a plan for an error verdict");
        let kinds: Vec<WayOutKind> = plan.ways_out.iter().map(|w| w.kind).collect();
        assert_eq!(kinds, vec![WayOutKind::FailOnDataLossFalse, WayOutKind::NewCheckpointBoundedStart]);
        let gap = &plan.ways_out[0];
        assert!(
            gap.data_loss && gap.costs.iter().any(|c| c.contains("t-0: records 40..49 (10 records)")),
            "{:?}",
            gap.costs
        );
        let new = &plan.ways_out[1];
        let start = new.options.iter().find(|o| o.key == "startingOffsets").unwrap();
        // t-0 aged out: earliest; t-1 kept; t-2 gone from the brokers: left out; t-3 new: earliest.
        assert_eq!(start.value, r#"{"t":{"0":-2,"1":41,"3":-2}}"#);
        assert!(start.fresh_checkpoint_only);
        assert!(new.dropped.iter().any(|d| d.contains("t-2 left out")), "{:?}", new.dropped);
        assert!(new.dropped.iter().any(|d| d.contains("t-0 clamped from 40 to -2")), "{:?}", new.dropped);
        assert_eq!(new.recompute_after_ms, Some(1_000 + super::DEFAULT_RETENTION_MS));
        assert!(new
            .snippets
            .iter()
            .any(|s| s.language == "scala" && s.code.contains(r#""""{"t":{"0":-2,"1":41,"3":-2}}""""#)));
    }

    /// Spark's pasted error that it could not fetch a partition's offset (aged out or deleted), no brokers' view
    /// given: the finding explains the error, the plan's ways out are failOnDataLoss=false and a new checkpoint
    /// starting that partition at its earliest (raising retention, too late for it, is not offered), with the
    /// gap's size said to be unknown.
    #[test]
    fn a_pasted_aged_out_error_is_the_finding_and_the_plan_without_the_brokers_view() {
        for text in [
            "java.lang.IllegalStateException: Cannot fetch offset 40. (GroupId: g, TopicPartition: t-0).",
            "KafkaIllegalStateException: [KAFKA_DATA_LOSS.COULD_NOT_READ_OFFSET_RANGE] Some data may have been lost ... Could not read records in offset [40, 55) for topic partition t-0 with consumer group g.",
        ] {
            let ctx = Context { now_ms: Some(9_000_000_000), error_text: Some(text.into()), ..Default::default() };
            let r = report(&ctx);
            let f = r
                .findings
                .iter()
                .find(|f| f.code == crate::report::Code::KafkaOffsetsBelowEarliest)
                .expect("the aged-out finding");
            assert!(f.explains_error_text && f.title.contains("(t-0)"), "{}", f.title);
            assert!(f.evidence.iter().any(|e| e.detail.contains("t-0: next offset 40; the pasted error")));
            assert!(!r.findings.iter().any(|f| f.code == crate::report::Code::ErrorNotExplainedByFiles));
            let plan = r.restart_plan.expect("a plan");
            let kinds: Vec<WayOutKind> = plan.ways_out.iter().map(|w| w.kind).collect();
            assert_eq!(kinds, vec![WayOutKind::FailOnDataLossFalse, WayOutKind::NewCheckpointBoundedStart]);
            assert!(plan.ways_out[0].costs.iter().any(|c| c.contains("t-0: the records from 40 up to the brokers' earliest offset (not given")));
            let start = plan.ways_out[1].options.iter().find(|o| o.key == "startingOffsets").unwrap();
            assert_eq!(start.value, r#"{"t":{"0":-2,"1":41,"2":7}}"#);
        }
    }

    /// A partition added since the checkpoint whose earliest is not 0 fails the restart
    /// (ADDED_PARTITION_DOES_NOT_START_FROM_OFFSET_ZERO); failOnDataLoss=false reads it from its earliest, and
    /// the plan offers that, with what it costs.
    #[test]
    fn a_late_added_partition_has_the_fail_on_data_loss_way_out() {
        let ctx = Context {
            now_ms: Some(2_000),
            kafka_earliest: Some(parse("t:0:0\nt:1:0\nt:2:0\nt:3:7").unwrap()),
            kafka_latest: Some(parse("t:0:90\nt:1:60\nt:2:20\nt:3:20").unwrap()),
            ..Default::default()
        };
        let r = report(&ctx);
        assert_eq!(
            r.restart.error_class.as_deref(),
            Some("KAFKA_DATA_LOSS.ADDED_PARTITION_DOES_NOT_START_FROM_OFFSET_ZERO")
        );
        let plan = r.restart_plan.expect("a plan");
        let w = plan.ways_out.iter().find(|w| w.kind == WayOutKind::FailOnDataLossFalse).expect("failOnDataLoss=false");
        assert!(w.answers.contains(&crate::report::Code::KafkaPartitionsAdded));
        assert!(
            w.costs.iter().any(|c| c.contains("t-3: new since the checkpoint") && c.contains("records 0..6")),
            "{:?}",
            w.costs
        );
    }

    #[test]
    fn without_a_brokers_view_the_start_is_the_committed_offsets_and_says_so() {
        let r = report(&Context {
            now_ms: Some(2_000),
            error_text: Some("java.lang.IllegalStateException: boom".into()),
            ..Default::default()
        });
        let plan = r.restart_plan.expect("a plan");
        let new = plan.ways_out.iter().find(|w| w.kind == WayOutKind::NewCheckpointBoundedStart).unwrap();
        let start = new.options.iter().find(|o| o.key == "startingOffsets").unwrap();
        assert_eq!(start.value, r#"{"t":{"0":40,"1":41,"2":7}}"#);
        assert!(new.steps.iter().any(|s| s.contains("not checked against the brokers")));
    }
}
