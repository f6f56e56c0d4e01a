//! Delta checkpoint files in Parquet, read with the `parquet` crate of arrow-rs (record API, pure-Rust
//! codecs: snappy, lz4, gzip; no Arrow). Each row is turned into JSON (`Row::to_json_value`: a struct is
//! an object, a map an object with string keys, a null action column `null`), which is the form of the
//! commit files, so [`super::actions::actions_of`] reads both.

use bytes::Bytes;
use parquet::file::reader::{FileReader, SerializedFileReader};

/// Why a Parquet file could not be read, with the byte offset when known.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ParquetError {
    /// Byte offset of the damage (the footer, for a missing magic), when known.
    pub offset: Option<u64>,
    /// What the reader said.
    pub reason: String,
}

/// Calls `each` with every row of the file as JSON, in file order; stops at the first error. Returns the
/// number of rows read.
pub fn for_each_row(bytes: Vec<u8>, mut each: impl FnMut(serde_json::Value)) -> Result<u64, ParquetError> {
    let len = bytes.len() as u64;
    if bytes.len() < 12 || &bytes[..4] != b"PAR1" {
        return Err(ParquetError { offset: Some(0), reason: "not a Parquet file (no PAR1 magic at the start)".into() });
    }
    if &bytes[bytes.len() - 4..] != b"PAR1" {
        return Err(ParquetError {
            offset: Some(len - 4),
            reason: "no PAR1 magic at the end: the file is cut (a partial copy or an interrupted write)".into(),
        });
    }
    let reader = SerializedFileReader::new(Bytes::from(bytes))
        .map_err(|e| ParquetError { offset: Some(len.saturating_sub(8)), reason: format!("footer: {e}") })?;
    let rows = reader.get_row_iter(None).map_err(|e| ParquetError { offset: None, reason: e.to_string() })?;
    let mut n = 0u64;
    for row in rows {
        let row = row.map_err(|e| ParquetError { offset: None, reason: format!("row {n}: {e}") })?;
        each(row.to_json_value());
        n += 1;
    }
    Ok(n)
}
