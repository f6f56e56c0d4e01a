//! Delta checkpoint files in Parquet, read with the `parquet` crate of arrow-rs (record API, pure-Rust
//! codecs: snappy, lz4, gzip; no Arrow). Each row is turned into JSON (`Row::to_json_value`: a struct is
//! an object, a map an object with string keys, a null action column `null`), which is the form of the
//! commit files, so [`super::actions::actions_of`] reads both.
//!
//! The record API panics on some corrupt files instead of returning an error (and the page, on wasm32, aborts
//! on a panic): [`super::parquet_guard`] checks what it would panic on before any row is read.

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

/// How a [`ParquetError`] of the native backstop starts: the `parquet` crate panicked on the file, which
/// [`super::parquet_guard`] should have refused (tests look for it).
pub const PANIC_CAUGHT: &str = "the Parquet reader failed on this file";

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
    backstop(|| read_checked(bytes, &mut each))
}

/// Walks the footer ([`super::page_headers::check_footer`]), opens it, runs [`super::parquet_guard::check`], then
/// reads the rows with the record API.
fn read_checked(bytes: Vec<u8>, each: &mut dyn FnMut(serde_json::Value)) -> Result<u64, ParquetError> {
    let footer_at = footer_start(&bytes);
    let footer_end = bytes.len() - 8;
    if footer_at as usize != footer_end {
        super::page_headers::check_footer(&bytes, footer_at as usize, footer_end)?;
    }
    let bytes = Bytes::from(bytes);
    let reader = SerializedFileReader::new(bytes.clone())
        .map_err(|e| ParquetError { offset: Some(footer_at), reason: format!("footer: {e}") })?;
    super::parquet_guard::check(&reader, &bytes, footer_at)?;
    let rows = reader.get_row_iter(None).map_err(|e| ParquetError { offset: None, reason: e.to_string() })?;
    let mut n = 0u64;
    for row in rows {
        let row = row.map_err(|e| ParquetError { offset: None, reason: format!("row {n}: {e}") })?;
        each(row.to_json_value());
        n += 1;
    }
    Ok(n)
}

/// A native backstop only, for a panic of the `parquet` crate that [`super::parquet_guard`] did not foresee: the
/// panic is caught and the file refused with an error. It is no fix: on wasm32 (the page) a panic aborts and
/// cannot be caught, and the fuzz build (`cfg(fuzzing)`) lets the panic through so that the fuzzer reports it;
/// every panic found belongs in the guard. The default panic hook still prints the panic to stderr (the report on
/// stdout is whole; a library does not replace the process's hook).
#[cfg(not(any(target_arch = "wasm32", fuzzing)))]
fn backstop(read: impl FnOnce() -> Result<u64, ParquetError>) -> Result<u64, ParquetError> {
    std::panic::catch_unwind(std::panic::AssertUnwindSafe(read)).unwrap_or_else(|panic| {
        let said = panic
            .downcast_ref::<&str>()
            .map(|s| s.to_string())
            .or_else(|| panic.downcast_ref::<String>().cloned())
            .unwrap_or_default();
        Err(ParquetError { offset: None, reason: format!("{PANIC_CAUGHT}: {said}") })
    })
}

/// No backstop where a panic cannot be caught (wasm32) or must be seen (the fuzz build).
#[cfg(any(target_arch = "wasm32", fuzzing))]
fn backstop(read: impl FnOnce() -> Result<u64, ParquetError>) -> Result<u64, ParquetError> {
    read()
}

/// Where the footer (the file metadata) starts: it ends 8 bytes before the end of the file, its length in the 4
/// bytes before the closing magic; the length field's own offset when that length does not fit the file.
/// `bytes` is at least 12 bytes long.
fn footer_start(bytes: &[u8]) -> u64 {
    let len = bytes.len() as u64;
    let field = len - 8;
    let footer_len = bytes[bytes.len() - 8..bytes.len() - 4].iter().rev().fold(0u64, |n, b| n << 8 | u64::from(*b));
    field.checked_sub(footer_len).filter(|at| *at >= 4).unwrap_or(field)
}
