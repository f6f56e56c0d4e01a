//! What a pasted Spark error says about the Kafka brokers, for the checks and the restart plan when the brokers'
//! own offsets are not given: the partitions whose offsets went back ("offset was changed from A to B": the
//! brokers' latest) and the partitions Spark could not read because the brokers no longer hold the offset (aged
//! out or deleted: the brokers' earliest is above it).

use crate::kafka_offsets::{KafkaOffsets, PartitionStatus, PartitionView};
use crate::Context;

/// `Partition <topic>-<p>'s offset was changed from A to B` (3.5) / `Partition <topic>-<p> offset was changed
/// from A to B` (4.0+, `KAFKA_DATA_LOSS.PARTITION_OFFSET_CHANGED`) in the pasted error: the brokers' latest B.
pub fn offsets_changed_in_error(text: &str) -> KafkaOffsets {
    // It names the partitions that failed, not every partition the brokers have.
    let mut out = KafkaOffsets { partial: true, ..Default::default() };
    let key = "offset was changed from ";
    for (i, _) in text.match_indices(key) {
        // The partition is named just before (a bounded look back keeps a text of many matches linear).
        let mut from = i.saturating_sub(400);
        while !text.is_char_boundary(from) {
            from += 1;
        }
        let before = &text[from..i];
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

/// The partitions a pasted error says the brokers no longer hold, each with the offset Spark could not read
/// (`topic → partition → offset`; a partial view): the brokers' earliest offset is above it. The forms, as
/// Spark and the Kafka client write them:
/// - `Cannot fetch offset 500. (GroupId: g, TopicPartition: t-0).` (`KafkaDataConsumer.get` before 4.0,
///   with failOnDataLoss=true);
/// - `Could not read records in offset [500, 600) for topic partition t-0 with consumer group g`
///   (`KAFKA_DATA_LOSS.COULD_NOT_READ_OFFSET_RANGE`, 4.0+);
/// - `Fetch position FetchPosition{offset=500, …} is out of range for partition t-0` and
///   `Offsets out of range with no configured reset policy for partitions: {t-0=500}` (the Kafka client's
///   `OffsetOutOfRangeException`, the cause of both).
///
/// A fetch that timed out ("Cannot fetch record for offset 500 in 2 milliseconds") is no such loss.
pub fn aged_out_in_error(text: &str) -> KafkaOffsets {
    let mut out = KafkaOffsets { partial: true, ..Default::default() };
    let mut add = |tp: &str, offset: Option<i64>| {
        let tp = tp.trim().trim_end_matches(['.', ')', ',']);
        if let (Some((topic, p)), Some(offset)) = (tp.rsplit_once('-'), offset) {
            if let Ok(p) = p.parse::<i32>() {
                out.topics.entry(topic.to_string()).or_default().entry(p).or_insert(offset);
            }
        }
    };
    let number = |s: &str| -> Option<i64> {
        let end = s.find(|c: char| !c.is_ascii_digit()).unwrap_or(s.len());
        s[..end].parse().ok()
    };
    // The text after `key` up to `stop` (or the end), within the next 400 bytes.
    let field = |s: &str, key: &str, stop: &[char]| -> Option<String> {
        let w = &s[..s.len().min(400)];
        let at = w.find(key)? + key.len();
        let rest = &w[at..];
        Some(rest[..rest.find(stop).unwrap_or(rest.len())].to_string())
    };
    for (key, tp_key, stop) in [
        ("Cannot fetch offset ", "TopicPartition: ", &[')', ','][..]),
        ("Could not read records in offset [", " for topic partition ", &[' ', '\n'][..]),
        ("FetchPosition{offset=", "out of range for partition ", &[' ', '\n'][..]),
    ] {
        for (i, _) in text.match_indices(key) {
            let after = &text[i + key.len()..];
            if let Some(tp) = field(after, tp_key, stop) {
                add(&tp, number(after));
            }
        }
    }
    let key = "no configured reset policy for partitions: {";
    for (i, _) in text.match_indices(key) {
        let after = &text[i + key.len()..];
        let body = &after[..after.find('}').unwrap_or(after.len()).min(4000)];
        for pair in body.split(',') {
            if let Some((tp, o)) = pair.split_once('=') {
                add(tp, number(o.trim()));
            }
        }
    }
    out
}

/// Marks the partitions a pasted error says the brokers no longer hold ([`aged_out_in_error`]) as below the
/// brokers' earliest, their earliest unknown, when the brokers' earliest offsets are not given (given, they
/// decide). Only partitions judged fine so far change.
pub fn mark_pasted_aged_out(views: &mut [PartitionView], ctx: &Context) {
    if ctx.kafka_earliest.is_some() {
        return;
    }
    let Some(gone) = ctx.error_text.as_deref().map(aged_out_in_error).filter(|o| !o.topics.is_empty()) else {
        return;
    };
    for p in views.iter_mut() {
        if p.status == PartitionStatus::Ok && p.checkpoint.is_some() && gone.get(&p.topic, p.partition).is_some() {
            p.status = PartitionStatus::BelowEarliest;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_the_partitions_spark_could_not_fetch() {
        let t35 = "java.lang.IllegalStateException: Cannot fetch offset 500. (GroupId: spark-kafka-source-1-driver-0, TopicPartition: payments-events-0).\n Some data may have been lost";
        assert_eq!(aged_out_in_error(t35).get("payments-events", 0), Some(500));
        let t40 = "[KAFKA_DATA_LOSS.COULD_NOT_READ_OFFSET_RANGE] Some data may have been lost ... Could not read records in offset [500, 600) for topic partition a-b-12 with consumer group g.";
        assert_eq!(aged_out_in_error(t40).get("a-b", 12), Some(500));
        let client = "Caused by: org.apache.kafka.clients.consumer.OffsetOutOfRangeException: Fetch position FetchPosition{offset=7, offsetEpoch=Optional.empty, currentLeader=LeaderAndEpoch{leader=Optional[b:9092 (id: 1 rack: null)], epoch=0}} is out of range for partition t-3";
        assert_eq!(aged_out_in_error(client).get("t", 3), Some(7));
        let old = "OffsetOutOfRangeException: Offsets out of range with no configured reset policy for partitions: {t-0=5, t-1=9}";
        let o = aged_out_in_error(old);
        assert_eq!((o.get("t", 0), o.get("t", 1)), (Some(5), Some(9)));
        assert!(o.partial);
        // A timeout is not a loss.
        assert!(aged_out_in_error("Cannot fetch record for offset 500 in 2 milliseconds").topics.is_empty());
    }
}
