//! The checkpoint root's `metadata` file (FORMATS.md §1): one line of JSON `{"id":"<query uuid>"}`, no
//! version line. Mirrors Spark's `StreamMetadata.read` (json4s `Serialization.read[StreamMetadata]`).

use super::{json_error, lines_with_offsets, utf8, LogError};

/// The parsed `metadata` file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StreamMetadata {
    /// The stable query id (a UUID string as written).
    pub id: String,
}

/// Parses the `metadata` file. Errors: empty file (Jackson "No content to map due to end-of-input", a
/// data error), bad JSON, or no string `id` field (json4s `MappingException`).
pub fn parse(bytes: &[u8]) -> Result<StreamMetadata, LogError> {
    let text = utf8(bytes)?;
    let Some((off, first)) = lines_with_offsets(text).find(|(_, l)| !l.trim().is_empty()) else {
        return Err(LogError::BadJson {
            offset: bytes.len() as u64,
            line: 1,
            message: "No content to map due to end-of-input".into(),
            eof: false,
            data: true,
        });
    };
    // Spark reads the whole stream as one JSON document; the file has a single line.
    let rest = &text[off as usize..];
    let v: serde_json::Value = match serde_json::from_str(rest) {
        Ok(v) => v,
        Err(e) => return Err(json_error(&e, first, off, 1)),
    };
    match v.get("id").and_then(|i| i.as_str()) {
        Some(id) => Ok(StreamMetadata { id: id.to_string() }),
        None => Err(LogError::BadJson {
            offset: off,
            line: 1,
            message: "No usable value for id (no string field \"id\")".into(),
            eof: false,
            data: true,
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_and_rejects() {
        assert_eq!(parse(br#"{"id":"abc"}"#).unwrap().id, "abc");
        assert!(matches!(parse(b""), Err(LogError::BadJson { data: true, .. })));
        assert!(matches!(parse(br#"{"id":"ab"#), Err(LogError::BadJson { eof: true, .. })));
        assert!(matches!(parse(br#"{"x":1}"#), Err(LogError::BadJson { data: true, .. })));
    }
}
