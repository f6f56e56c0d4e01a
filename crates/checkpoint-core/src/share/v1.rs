//! Share link format 1: `report=1.<payload>`, payload = base64url (RFC 4648 §5, no padding) of the zlib stream
//! (RFC 1950: deflate plus an Adler-32 of the text, so a damaged link is detected) of the envelope's JSON text:
//!
//! ```json
//! {"format":1,"inspector_version":"0.1.0","redacted":["ids","paths"],"cut_notes":["..."],"report":{...}}
//! ```
//!
//! This reader is kept for as long as the inspector exists: a link made today must open on every later page.
//! A new format gets a new module and a new number; this one is never changed.

use super::{ShareError, SharedReport, MAX_INFLATED_BYTES};
use base64::engine::general_purpose::{GeneralPurpose, GeneralPurposeConfig};
use base64::engine::DecodePaddingMode;
use base64::Engine;
use flate2::{Compress, Compression, Decompress, FlushCompress, FlushDecompress, Status};
use serde_json::Value;

/// The format number written before the `.`.
pub const VERSION: u32 = 1;

/// base64url without padding when writing; padding accepted when reading (some tools add it).
const B64: GeneralPurpose = GeneralPurpose::new(
    &base64::alphabet::URL_SAFE,
    GeneralPurposeConfig::new().with_encode_padding(false).with_decode_padding_mode(DecodePaddingMode::Indifferent),
);

/// The payload (after `1.`) for an envelope's JSON text. Deterministic: the same text gives the same payload.
pub fn write(envelope_json: &[u8]) -> String {
    let mut c = Compress::new(Compression::best(), true);
    let mut out = Vec::with_capacity(envelope_json.len() / 3 + 64);
    loop {
        let before_in = c.total_in() as usize;
        if out.capacity() - out.len() < 1024 {
            out.reserve(out.capacity().max(4096));
        }
        let status = c.compress_vec(&envelope_json[before_in..], &mut out, FlushCompress::Finish);
        match status {
            Ok(Status::StreamEnd) => break,
            Ok(_) => continue,
            // Compressing into a growing Vec cannot fail; stop rather than loop if it ever does.
            Err(_) => break,
        }
    }
    B64.encode(out)
}

/// Reads a format-1 payload: base64url → inflate (at most [`MAX_INFLATED_BYTES`]) → JSON → envelope checks.
///
/// Errors: [`ShareError::BadEncoding`] (a character outside base64url, with its position),
/// [`ShareError::Truncated`] (the data ends early), [`ShareError::Corrupt`] (the zlib stream or its checksum is
/// wrong), [`ShareError::TooLarge`] (inflates past the limit: a bomb), [`ShareError::NotJson`],
/// [`ShareError::NotAReport`].
pub fn read(payload: &str) -> Result<SharedReport, ShareError> {
    if payload.is_empty() {
        return Err(ShareError::Truncated { detail: "the link has no data after \"report=1.\"".into() });
    }
    let bytes = B64.decode(payload.as_bytes()).map_err(|e| match e {
        base64::DecodeError::InvalidByte(offset, byte) => ShareError::BadEncoding { offset, byte: byte as char },
        base64::DecodeError::InvalidLength(_) | base64::DecodeError::InvalidLastSymbol(_, _) => {
            ShareError::Truncated { detail: "the link's data stops in the middle of a character group".into() }
        }
        base64::DecodeError::InvalidPadding => {
            ShareError::BadEncoding { offset: payload.find('=').unwrap_or(0), byte: '=' }
        }
    })?;
    let json = inflate(&bytes)?;
    let v: Value = serde_json::from_slice(&json).map_err(|e| ShareError::NotJson { detail: e.to_string() })?;
    envelope(v)
}

fn inflate(data: &[u8]) -> Result<Vec<u8>, ShareError> {
    let mut d = Decompress::new(true);
    let mut out: Vec<u8> = Vec::new();
    let mut chunk = vec![0u8; 32 * 1024];
    loop {
        let in_before = d.total_in() as usize;
        let out_before = d.total_out();
        let status = d
            .decompress(&data[in_before.min(data.len())..], &mut chunk, FlushDecompress::None)
            .map_err(|e| ShareError::Corrupt { detail: format!("the compressed data is damaged ({e})") })?;
        let produced = (d.total_out() - out_before) as usize;
        if out.len() + produced > MAX_INFLATED_BYTES {
            return Err(ShareError::TooLarge { max: MAX_INFLATED_BYTES });
        }
        out.extend_from_slice(&chunk[..produced]);
        if status == Status::StreamEnd {
            let used = d.total_in() as usize;
            if used < data.len() {
                return Err(ShareError::Corrupt {
                    detail: format!("{} unexpected bytes after the end of the data", data.len() - used),
                });
            }
            return Ok(out);
        }
        if produced == 0 && d.total_in() as usize == in_before {
            return Err(ShareError::Truncated { detail: "the compressed data ends before its end mark".into() });
        }
    }
}

fn envelope(v: Value) -> Result<SharedReport, ShareError> {
    let bad = |what: &str| ShareError::NotAReport { detail: what.to_string() };
    let Value::Object(mut m) = v else { return Err(bad("the link's data is not a JSON object")) };
    match m.get("format").and_then(Value::as_u64) {
        Some(1) => {}
        _ => return Err(bad("the link's data does not say it is format 1")),
    }
    let inspector_version = m
        .get("inspector_version")
        .and_then(Value::as_str)
        .filter(|s| !s.is_empty() && s.len() <= 64)
        .ok_or_else(|| bad("no inspector_version"))?
        .to_string();
    let strings = |v: Option<&Value>, what: &str| -> Result<Vec<String>, ShareError> {
        match v {
            None => Ok(Vec::new()),
            Some(Value::Array(a)) => {
                a.iter().map(|x| x.as_str().map(str::to_string).ok_or_else(|| bad(what))).collect()
            }
            Some(_) => Err(bad(what)),
        }
    };
    let redacted = strings(m.get("redacted"), "redacted is not a list of names")?;
    let cut_notes = strings(m.get("cut_notes"), "cut_notes is not a list of texts")?;
    let report = m.remove("report").ok_or_else(|| bad("no report"))?;
    let checkpoints_ok =
        report.get("checkpoints").and_then(Value::as_array).is_some_and(|a| a.iter().all(Value::is_object));
    if !report.is_object() || !checkpoints_ok {
        return Err(bad("the report has no list of checkpoints"));
    }
    Ok(SharedReport { format_version: VERSION, inspector_version, redacted, cut_notes, report })
}
