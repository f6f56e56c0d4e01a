//! The Kafka brokers' view of a topic's offsets, as the user gives it: Spark's own JSON
//! (`{"topic":{"0":123}}`, the shape of `startingOffsets` and `KafkaSourceOffset`, apache/spark
//! connector/kafka-0-10-sql/src/main/scala/org/apache/spark/sql/kafka010/JsonUtils.scala), or the text
//! `kafka-get-offsets.sh --bootstrap-server <b> --topic <t> --time -2` (earliest) / `--time -1` (latest)
//! prints: one `topic:partition:offset` line per partition (Kafka's `GetOffsetShell`).

use std::collections::BTreeMap;

/// Offsets per topic and partition (`topic → partition → offset`).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct KafkaOffsets {
    /// Topic → partition → offset.
    pub topics: BTreeMap<String, BTreeMap<i32, i64>>,
    /// Lines of pasted text that named a partition without an offset (`topic:0:`), kept to say so.
    pub without_offset: Vec<String>,
    /// The view names only some partitions (those a pasted error names, or an uncommitted batch recorded): a
    /// partition it does not name is not judged by it (neither removed nor added nor a missing topic).
    pub partial: bool,
}

impl KafkaOffsets {
    /// The offset of one partition, when given.
    pub fn get(&self, topic: &str, partition: i32) -> Option<i64> {
        self.topics.get(topic).and_then(|p| p.get(&partition)).copied()
    }
    /// True when the view names at least one partition of `topic`.
    pub fn has_topic(&self, topic: &str) -> bool {
        self.topics.get(topic).is_some_and(|p| !p.is_empty())
    }
    /// Spark's JSON form of these offsets, `{"topic":{"0":123}}` (topics and partitions sorted).
    pub fn to_json(&self) -> String {
        to_json(&self.topics)
    }
}

/// Spark's `startingOffsets` / `KafkaSourceOffset` JSON of `topic → partition → offset`: partitions are
/// JSON object keys (strings), in ascending numeric order as Spark's `JsonUtils.partitionOffsets` writes them.
pub fn to_json(topics: &BTreeMap<String, BTreeMap<i32, i64>>) -> String {
    let mut s = String::from("{");
    for (i, (t, parts)) in topics.iter().enumerate() {
        if i > 0 {
            s.push(',');
        }
        s.push_str(&serde_json::Value::String(t.clone()).to_string());
        s.push_str(":{");
        for (j, (p, o)) in parts.iter().enumerate() {
            if j > 0 {
                s.push(',');
            }
            s.push_str(&format!("\"{p}\":{o}"));
        }
        s.push('}');
    }
    s.push('}');
    s
}

/// Parses the brokers' view: Spark's JSON, or `kafka-get-offsets.sh` lines. Blank lines and lines starting
/// with `#` or `$` (a pasted prompt) are skipped; any other line that is not `topic:partition:offset` is an
/// error naming its line number. Offsets must be 0 or more (the brokers' view has no -1/-2 placeholders).
pub fn parse(text: &str) -> Result<KafkaOffsets, String> {
    let t = text.trim();
    if t.is_empty() {
        return Err("empty: give {\"topic\":{\"0\":123}} or kafka-get-offsets.sh lines topic:partition:offset".into());
    }
    if t.starts_with('{') {
        return parse_json(t);
    }
    let mut out = KafkaOffsets::default();
    for (n, line) in text.lines().enumerate() {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') || line.starts_with('$') {
            continue;
        }
        let mut it = line.rsplitn(3, ':');
        let (off, part, topic) = (it.next(), it.next(), it.next());
        let (Some(off), Some(part), Some(topic)) = (off, part, topic) else {
            return Err(format!("line {}: not topic:partition:offset: {}", n + 1, clip(line)));
        };
        if !valid_topic(topic) {
            return Err(format!("line {}: not a Kafka topic name: {}", n + 1, clip(topic)));
        }
        let part: i32 =
            part.trim().parse().map_err(|_| format!("line {}: partition is not a number: {}", n + 1, clip(line)))?;
        if off.trim().is_empty() {
            out.without_offset.push(format!("{topic}-{part}"));
            continue;
        }
        let off: i64 =
            off.trim().parse().map_err(|_| format!("line {}: offset is not a number: {}", n + 1, clip(line)))?;
        if off < 0 || part < 0 {
            return Err(format!("line {}: negative partition or offset: {}", n + 1, clip(line)));
        }
        out.topics.entry(topic.to_string()).or_default().insert(part, off);
    }
    if out.topics.is_empty() && out.without_offset.is_empty() {
        return Err("no topic:partition:offset line found".into());
    }
    Ok(out)
}

fn parse_json(t: &str) -> Result<KafkaOffsets, String> {
    let v: serde_json::Value = serde_json::from_str(t).map_err(|e| format!("not JSON: {e}"))?;
    let obj = v.as_object().ok_or("not a JSON object {\"topic\":{\"0\":123}}")?;
    let mut out = KafkaOffsets::default();
    for (topic, parts) in obj {
        let parts = parts.as_object().ok_or_else(|| format!("topic {}: not an object of partitions", clip(topic)))?;
        let m = out.topics.entry(topic.clone()).or_default();
        for (p, o) in parts {
            let p: i32 =
                p.parse().map_err(|_| format!("topic {}: partition {} is not a number", clip(topic), clip(p)))?;
            let o = o.as_i64().ok_or_else(|| format!("{}-{p}: offset is not an integer", clip(topic)))?;
            if o < 0 || p < 0 {
                return Err(format!("{}-{p}: negative partition or offset {o}", clip(topic)));
            }
            m.insert(p, o);
        }
    }
    Ok(out)
}

/// Kafka's legal topic characters (`Topic.validate`: ASCII alphanumerics, `.`, `_`, `-`; at most 249).
fn valid_topic(t: &str) -> bool {
    !t.is_empty() && t.len() <= 249 && t.bytes().all(|b| b.is_ascii_alphanumeric() || b"._-".contains(&b))
}

fn clip(s: &str) -> String {
    let c: String = s.chars().take(80).collect();
    if c.len() < s.len() {
        format!("{c}…")
    } else {
        c
    }
}

/// Offsets per topic and partition read from a `KafkaSourceOffset` JSON of the offset log (partitions that are
/// not numbers and negative placeholders are left out).
pub fn from_source_offset(json: &serde_json::Value) -> BTreeMap<String, BTreeMap<i32, i64>> {
    let mut out: BTreeMap<String, BTreeMap<i32, i64>> = BTreeMap::new();
    for (t, parts) in json.as_object().into_iter().flatten() {
        let m = out.entry(t.clone()).or_default();
        for (p, o) in parts.as_object().into_iter().flatten() {
            if let (Ok(p), Some(o)) = (p.parse::<i32>(), o.as_i64()) {
                m.insert(p, o);
            }
        }
    }
    out
}

/// How one partition of the checkpoint stands against the brokers' view.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PartitionStatus {
    /// Within the brokers' range (or no view to compare with).
    Ok,
    /// The checkpoint's offset is below the earliest: records `[checkpoint, earliest)` aged out.
    BelowEarliest,
    /// The checkpoint's offset is beyond the latest (high-water mark): topic re-created or a lower
    /// high-water mark reported.
    AheadOfLatest,
    /// The brokers' view names the topic but not this partition.
    PartitionRemoved,
    /// The brokers' view names no partition of this topic.
    TopicMissing,
    /// The brokers have this partition of a checkpoint topic; the checkpoint does not.
    PartitionAdded,
}

/// One partition compared with the brokers' view.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PartitionView {
    /// Topic.
    pub topic: String,
    /// Partition.
    pub partition: i32,
    /// The checkpoint's offset (the next offset to read), `None` for an added partition.
    pub checkpoint: Option<i64>,
    /// The brokers' earliest offset, when given.
    pub earliest: Option<i64>,
    /// The brokers' latest offset, when given.
    pub latest: Option<i64>,
    /// The verdict.
    pub status: PartitionStatus,
}

impl PartitionView {
    /// `topic-partition`, as Spark and Kafka print a `TopicPartition`.
    pub fn name(&self) -> String {
        format!("{}-{}", self.topic, self.partition)
    }
    /// Records aged out before they were read (`earliest - checkpoint`), for `BelowEarliest`.
    pub fn lost(&self) -> i64 {
        match (self.status, self.checkpoint, self.earliest) {
            (PartitionStatus::BelowEarliest, Some(c), Some(e)) => e.saturating_sub(c),
            _ => 0,
        }
    }
}

/// Compares the checkpoint's offsets with the brokers' earliest and latest offsets (either may be absent).
/// A topic is judged only by a view that names at least one of its partitions; a complete view naming none of
/// a topic's partitions makes it `TopicMissing`. A [`KafkaOffsets::partial`] view judges only the partitions it
/// names (ahead of its latest, below its earliest). Partitions of topics the checkpoint does not hold are left
/// out. Ordered by topic, then partition.
pub fn compare(
    checkpoint: &BTreeMap<String, BTreeMap<i32, i64>>,
    earliest: Option<&KafkaOffsets>,
    latest: Option<&KafkaOffsets>,
) -> Vec<PartitionView> {
    let mut out = Vec::new();
    let views: Vec<&KafkaOffsets> = earliest.into_iter().chain(latest).collect();
    let complete: Vec<&KafkaOffsets> = views.iter().copied().filter(|v| !v.partial).collect();
    for (topic, parts) in checkpoint {
        let known = complete.iter().any(|v| v.has_topic(topic));
        let mut all: std::collections::BTreeSet<i32> = parts.keys().copied().collect();
        for v in &complete {
            if let Some(p) = v.topics.get(topic) {
                all.extend(p.keys().copied());
            }
        }
        for p in all {
            let e = earliest.and_then(|v| v.get(topic, p));
            let l = latest.and_then(|v| v.get(topic, p));
            let listed = complete.iter().any(|v| v.get(topic, p).is_some());
            let c = parts.get(&p).copied();
            let status = match c {
                None => PartitionStatus::PartitionAdded,
                Some(_) if views.is_empty() => PartitionStatus::Ok,
                Some(_) if !complete.is_empty() && !known => PartitionStatus::TopicMissing,
                Some(_) if !complete.is_empty() && !listed => PartitionStatus::PartitionRemoved,
                Some(c) if l.is_some_and(|l| c > l) => PartitionStatus::AheadOfLatest,
                Some(c) if e.is_some_and(|e| c < e) => PartitionStatus::BelowEarliest,
                Some(_) => PartitionStatus::Ok,
            };
            out.push(PartitionView {
                topic: topic.clone(),
                partition: p,
                checkpoint: c,
                earliest: e,
                latest: l,
                status,
            });
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A partial view (a pasted error naming one partition) judges that partition only: the others are neither
    /// removed nor a missing topic.
    #[test]
    fn a_partial_view_judges_only_the_partitions_it_names() {
        let cp: BTreeMap<String, BTreeMap<i32, i64>> =
            [("t".to_string(), [(0, 500), (1, 480)].into_iter().collect())].into_iter().collect();
        let mut latest = parse("t:0:300").unwrap();
        latest.partial = true;
        let v = compare(&cp, None, Some(&latest));
        let st: Vec<PartitionStatus> = v.iter().map(|p| p.status).collect();
        assert_eq!(st, vec![PartitionStatus::AheadOfLatest, PartitionStatus::Ok]);
        latest.partial = false;
        let st: Vec<PartitionStatus> = compare(&cp, None, Some(&latest)).iter().map(|p| p.status).collect();
        assert_eq!(st, vec![PartitionStatus::AheadOfLatest, PartitionStatus::PartitionRemoved]);
    }

    #[test]
    fn parses_spark_json() {
        let o = parse(r#"{"payments-events":{"0":0,"1":12}}"#).unwrap();
        assert_eq!(o.get("payments-events", 1), Some(12));
        assert_eq!(o.to_json(), r#"{"payments-events":{"0":0,"1":12}}"#);
    }

    #[test]
    fn parses_kafka_get_offsets_lines() {
        let text = "$ kafka-get-offsets.sh --bootstrap-server b:9092 --topic t --time -2\nt:0:5\nt:10:7\n\nt:2:\n";
        let o = parse(text).unwrap();
        assert_eq!(o.get("t", 10), Some(7));
        assert_eq!(o.without_offset, vec!["t-2".to_string()]);
        assert_eq!(o.to_json(), r#"{"t":{"0":5,"10":7}}"#);
    }

    #[test]
    fn compares_with_the_brokers_view() {
        let cp = from_source_offset(&serde_json::json!({"a":{"0":5,"1":50,"2":9},"gone":{"0":3}}));
        let e = parse("a:0:10\na:1:0\na:3:0\nother:0:0").unwrap();
        let l = parse(r#"{"a":{"0":20,"1":40,"3":4}}"#).unwrap();
        let v = compare(&cp, Some(&e), Some(&l));
        let st: Vec<(String, PartitionStatus)> = v.iter().map(|p| (p.name(), p.status)).collect();
        use PartitionStatus::*;
        assert_eq!(
            st,
            vec![
                ("a-0".into(), BelowEarliest),
                ("a-1".into(), AheadOfLatest),
                ("a-2".into(), PartitionRemoved),
                ("a-3".into(), PartitionAdded),
                ("gone-0".into(), TopicMissing)
            ]
        );
        assert_eq!(v[0].lost(), 5);
        assert!(compare(&cp, None, None).iter().all(|p| p.status == Ok));
    }

    #[test]
    fn rejects_what_is_not_offsets() {
        assert!(parse("").is_err());
        assert!(parse("hello world").unwrap_err().contains("line 1"));
        assert!(parse("t:x:1").is_err());
        assert!(parse(r#"{"t":{"0":-1}}"#).is_err());
        assert!(parse(r#"{"t":[1]}"#).is_err());
        assert!(parse("bad topic:0:1").is_err());
    }
}
