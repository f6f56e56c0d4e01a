//! Sources' own metadata files under the checkpoint: the Kafka source's initial offsets (`sources/<n>/0`)
//! and Auto Loader's schema log (`_schemas/<n>` of a `cloudFiles.schemaLocation`, often the checkpoint
//! itself).
//!
//! Kafka: `KafkaSourceInitialOffsetWriter.serialize` (apache/spark connector/kafka-0-10-sql/src/main/scala/
//! org/apache/spark/sql/kafka010/KafkaSourceInitialOffsetWriter.scala, and the same writer inside
//! KafkaSource.scala) writes one zero byte ("to support Spark 2.1.0", SPARK-19517), then `v1\n`, then the
//! `KafkaSourceOffset` JSON; its `deserialize` skips the first byte and also accepts a bare JSON (2.1.0).
//!
//! Auto Loader's schema files are not documented byte for byte (Databricks, closed source): a version line
//! and a JSON object whose `dataSchemaJson` (and `partitionSchemaJson`) hold Spark struct types as JSON text.
//! This reader takes that shape, or a struct JSON directly, and keeps the top-level column names.

use super::{json_error, lines_with_offsets, parse_version_line, utf8, LogError};

/// Parses a Kafka initial offsets file into its `{"topic":{"partition":offset}}` JSON.
pub fn parse_initial_offsets(bytes: &[u8]) -> Result<serde_json::Value, LogError> {
    if bytes.is_empty() {
        return Err(LogError::Empty);
    }
    let skip = usize::from(bytes[0] == 0);
    let text = utf8(&bytes[skip..]).map_err(|e| shift(e, skip as u64))?;
    let (json, at) = if text.starts_with('v') {
        let nl = text.find('\n').ok_or(LogError::MissingLine {
            offset: bytes.len() as u64,
            message: "Log file was malformed: no newline after the version line".into(),
        })?;
        parse_version_line(text[..nl].trim_end_matches('\r'))?;
        (&text[nl + 1..], nl + 1)
    } else {
        (text, 0)
    };
    let v: serde_json::Value =
        serde_json::from_str(json.trim_end()).map_err(|e| json_error(&e, json, (skip + at) as u64, 2))?;
    if !v.is_object() {
        return Err(LogError::BadJson {
            offset: (skip + at) as u64,
            line: 2,
            message: "not a {\"topic\":{\"partition\":offset}} object".into(),
            eof: false,
            data: true,
        });
    }
    Ok(v)
}

fn shift(e: LogError, by: u64) -> LogError {
    match e {
        LogError::NotUtf8 { offset } => LogError::NotUtf8 { offset: offset + by },
        other => other,
    }
}

/// The top-level column names of one Auto Loader schema file (data columns, then partition columns).
pub fn parse_schema_file(bytes: &[u8]) -> Result<Vec<String>, LogError> {
    if bytes.is_empty() {
        return Err(LogError::Empty);
    }
    let text = utf8(bytes)?;
    let mut it = lines_with_offsets(text).filter(|(_, l)| !l.trim().is_empty());
    let Some((o0, first)) = it.next() else { return Err(LogError::Empty) };
    let (off, json) = if first.starts_with('v') {
        parse_version_line(first.trim())?;
        let Some((o, _)) = it.next() else {
            return Err(LogError::MissingLine {
                offset: bytes.len() as u64,
                message: "no schema after the version line".into(),
            });
        };
        (o, &text[o as usize..])
    } else {
        (o0, &text[o0 as usize..])
    };
    let v: serde_json::Value = serde_json::from_str(json.trim_end()).map_err(|e| json_error(&e, json, off, 2))?;
    let bad = |m: &str| LogError::BadJson { offset: off, line: 2, message: m.into(), eof: false, data: true };
    let mut cols = Vec::new();
    if v.get("type").and_then(|t| t.as_str()) == Some("struct") {
        cols.extend(field_names(&v));
    } else {
        let mut any = false;
        for key in ["dataSchemaJson", "partitionSchemaJson"] {
            if let Some(s) = v.get(key).and_then(|s| s.as_str()) {
                let st: serde_json::Value =
                    serde_json::from_str(s).map_err(|_| bad("a schema JSON text does not parse"))?;
                cols.extend(field_names(&st));
                any = true;
            }
        }
        if !any {
            return Err(bad("neither a struct schema nor dataSchemaJson"));
        }
    }
    Ok(cols)
}

fn field_names(st: &serde_json::Value) -> Vec<String> {
    st.get("fields")
        .and_then(|f| f.as_array())
        .into_iter()
        .flatten()
        .filter_map(|f| f.get("name").and_then(|n| n.as_str()).map(str::to_string))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kafka_initial_offsets_as_the_writer_writes_them() {
        let mut b = vec![0u8];
        b.extend_from_slice(b"v1\n{\"t\":{\"0\":5,\"1\":0}}");
        assert_eq!(parse_initial_offsets(&b).unwrap()["t"]["0"], 5);
        // Spark 2.1.0's bare JSON.
        assert_eq!(parse_initial_offsets(b"{\"t\":{\"0\":1}}").unwrap()["t"]["0"], 1);
        assert!(matches!(parse_initial_offsets(b""), Err(LogError::Empty)));
        assert!(matches!(parse_initial_offsets(b"\0v1\n{\"t\":"), Err(LogError::BadJson { eof: true, .. })));
        assert!(matches!(parse_initial_offsets(b"\0vx\n{}"), Err(LogError::MalformedVersion { .. })));
    }

    #[test]
    fn schema_files_give_their_columns() {
        let s = "v1\n{\"dataSchemaJson\":\"{\\\"type\\\":\\\"struct\\\",\\\"fields\\\":[{\\\"name\\\":\\\"id\\\",\\\"type\\\":\\\"long\\\",\\\"nullable\\\":true,\\\"metadata\\\":{}}]}\",\"partitionSchemaJson\":\"{\\\"type\\\":\\\"struct\\\",\\\"fields\\\":[{\\\"name\\\":\\\"day\\\",\\\"type\\\":\\\"string\\\",\\\"nullable\\\":true,\\\"metadata\\\":{}}]}\"}";
        assert_eq!(parse_schema_file(s.as_bytes()).unwrap(), vec!["id".to_string(), "day".to_string()]);
        assert!(parse_schema_file(b"v1\n{\"x\":1}").is_err());
        assert!(parse_schema_file(b"v1\n").is_err());
    }
}
