//! Sidecars: verifies the Hadoop `.<name>.crc` and the Spark 4.1+ `<name>.crc` of a file whose bytes a stage
//! read (the index of sidecars is made by the listing). A sidecar that does not match its file is also tried
//! on the temp files of other write attempts of the same file (`.<name>.<uuid>[.TID<n>].tmp`): a match shows
//! it was written for those bytes.

use super::{Reader, MAX_SIDECAR_BYTES};
use crate::model::Checkpoint;

/// Largest temp file a mismatching sidecar is tried on.
const MAX_TEMP_BYTES: u64 = 16 * 1024 * 1024;
/// Temp files of the same target a mismatching sidecar is tried on, at most.
const MAX_TEMP_TRIED: usize = 8;

/// Verifies the Hadoop and Spark sidecars of `main` (relative path), whose bytes were read.
pub(crate) fn verify(cp: &mut Checkpoint, rd: &mut Reader<'_>, main: &str, bytes: &[u8]) {
    if let Some(side) = cp.hadoop_crcs.get(main).map(|c| c.path.clone()) {
        let parsed = rd
            .read(&side, MAX_SIDECAR_BYTES)
            .map_err(|e| crate::hadoop::CrcError::Malformed { offset: 0, reason: e.to_string() })
            .and_then(|s| crate::hadoop::parse(&s));
        let r = parsed.as_ref().map_err(Clone::clone).and_then(|c| crate::hadoop::verify(c, bytes));
        let matches = match (&r, &parsed) {
            (Err(_), Ok(crc)) => other_attempt(cp, rd, main, |b| crate::hadoop::verify(crc, b).is_ok()),
            _ => None,
        };
        if let Some(c) = cp.hadoop_crcs.get_mut(main) {
            c.verified = Some(r);
            c.matches = matches;
        }
    }
    if let Some(side) = cp.spark_checksums.get(main).map(|c| c.path.clone()) {
        let parsed = match rd.read(&side, MAX_SIDECAR_BYTES) {
            Ok(s) => crate::checksum::parse(&s)
                .map_err(|(off, why)| format!("checksum file unreadable at byte {off}: {why}")),
            Err(e) => Err(e.to_string()),
        };
        let r = parsed.as_ref().map_err(Clone::clone).and_then(|sum| {
            crate::checksum::verify(sum, bytes).map_err(|m| {
                format!(
                    "Expected (file size: {}, checksum: {}), Computed (file size: {}, checksum: {})",
                    m.expected.0, m.expected.1, m.computed.0, m.computed.1
                )
            })
        });
        let matches = match (&r, &parsed) {
            (Err(_), Ok(sum)) => other_attempt(cp, rd, main, |b| crate::checksum::verify(sum, b).is_ok()),
            _ => None,
        };
        if let Some(c) = cp.spark_checksums.get_mut(main) {
            c.verified = Some(r);
            c.recorded = parsed.ok();
            c.matches = matches;
        }
    }
}

/// The first temp file of another write attempt of `main` whose bytes `fits`.
fn other_attempt(cp: &Checkpoint, rd: &mut Reader<'_>, main: &str, fits: impl Fn(&[u8]) -> bool) -> Option<String> {
    let (dir, name) = match main.rfind('/') {
        Some(i) => (&main[..i], &main[i + 1..]),
        None => ("", main),
    };
    let temps: Vec<String> = cp
        .temp_files
        .iter()
        .filter(|t| t.dir == dir && t.target == name && t.size <= MAX_TEMP_BYTES)
        .take(MAX_TEMP_TRIED)
        .map(|t| t.path.clone())
        .collect();
    temps.into_iter().find(|t| rd.read(t, MAX_TEMP_BYTES).is_ok_and(|b| fits(&b)))
}
