//! What a source's offset JSON says about the source (FORMATS.md §4): file, rate, Kafka, Delta, Auto Loader,
//! memory, or unknown (kept raw). Recognition is by shape, since the offsets file does not name the source.

/// The kind of source an offset belongs to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum SourceKind {
    /// `FileStreamSourceOffset`: `{"logOffset":N}` (or a bare number in 2.0-era checkpoints, see `Memory`).
    File,
    /// `rate` (`LongOffset` seconds are indistinguishable from memory; this is `rate-micro-batch`
    /// `{"offset":N,"timestamp":T}` or the continuous rate map `{"0":{"value":..,"runTimeMs":..}}`).
    Rate,
    /// `KafkaSourceOffset`: `{"topic":{"partition":offset}}`.
    Kafka,
    /// Delta Lake: `{"sourceVersion":..,"reservoirId":..,"reservoirVersion":..,"index":..,"isStartingVersion":..}`.
    Delta,
    /// Databricks Auto Loader (`cloudFiles`): `{"seqNum":..,"sourceVersion":..,...}`.
    AutoLoader,
    /// A bare `LongOffset` number: MemoryStream, socket, or the `rate` source's seconds.
    Memory,
    /// No offset yet (`-`).
    None,
    /// Anything else; the raw text is kept.
    Unknown,
}

impl SourceKind {
    /// The report's name: `file` | `rate` | `kafka` | `delta` | `autoloader` | `memory` | `unknown`.
    pub fn as_str(&self) -> &'static str {
        match self {
            SourceKind::File => "file",
            SourceKind::Rate => "rate",
            SourceKind::Kafka => "kafka",
            SourceKind::Delta => "delta",
            SourceKind::AutoLoader => "autoloader",
            SourceKind::Memory => "memory",
            SourceKind::None | SourceKind::Unknown => "unknown",
        }
    }
}

/// Recognises a source from its offset text (`raw`, `None` for `-`) and its JSON (`json`, when it parses).
pub fn classify_offset(raw: Option<&str>, json: Option<&serde_json::Value>) -> SourceKind {
    let Some(_raw) = raw else {
        return SourceKind::None;
    };
    let Some(v) = json else {
        return SourceKind::Unknown;
    };
    match v {
        serde_json::Value::Number(_) => SourceKind::Memory,
        serde_json::Value::Object(o) => {
            let has = |k: &str| o.contains_key(k);
            if has("logOffset") && o.len() <= 2 {
                SourceKind::File
            } else if has("reservoirId") || has("reservoirVersion") {
                SourceKind::Delta
            } else if has("seqNum")
                || (has("sourceVersion") && (has("lastBackfillStartTimeMs") || has("lastBackfillFinishTimeMs")))
            {
                SourceKind::AutoLoader
            } else if (has("offset") && has("timestamp") && o.len() == 2)
                || (!o.is_empty()
                    && o.values()
                        .all(|p| p.as_object().is_some_and(|m| m.contains_key("value") && m.contains_key("runTimeMs"))))
            {
                SourceKind::Rate
            } else if !o.is_empty()
                && o.values().all(|p| {
                    p.as_object().is_some_and(|m| m.iter().all(|(k, x)| k.parse::<i64>().is_ok() && x.is_i64()))
                })
            {
                SourceKind::Kafka
            } else {
                SourceKind::Unknown
            }
        }
        _ => SourceKind::Unknown,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn k(s: &str) -> SourceKind {
        classify_offset(Some(s), serde_json::from_str(s).ok().as_ref())
    }

    #[test]
    fn recognises_sources() {
        assert_eq!(k(r#"{"logOffset":3}"#), SourceKind::File);
        assert_eq!(k("1"), SourceKind::Memory);
        assert_eq!(k(r#"{"offset":10,"timestamp":2000}"#), SourceKind::Rate);
        assert_eq!(k(r#"{"topicA":{"0":23,"1":-1},"topicB":{"0":0}}"#), SourceKind::Kafka);
        assert_eq!(
            k(r#"{"sourceVersion":1,"reservoirId":"x","reservoirVersion":12,"index":-1,"isStartingVersion":false}"#),
            SourceKind::Delta
        );
        assert_eq!(k(r#"{"seqNum":5,"sourceVersion":1,"lastBackfillStartTimeMs":1}"#), SourceKind::AutoLoader);
        assert_eq!(k("garbage"), SourceKind::Unknown);
        assert_eq!(classify_offset(None, None), SourceKind::None);
    }
}
