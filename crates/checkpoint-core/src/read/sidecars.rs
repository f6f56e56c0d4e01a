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
    let side = Sidecars::read(cp, rd, main);
    let mut sums = side.verifier();
    sums.update(bytes);
    let results = sums.finish();
    side.record(cp, rd, main, results);
}

/// The sidecars of one main file, read and parsed; for a main file read in pieces, they are read first
/// ([`Sidecars::read`]), its pieces handed to [`Sidecars::verifier`], and the results recorded
/// ([`Sidecars::record`]): the same outcome as [`verify`], without the whole file.
pub(crate) struct Sidecars {
    hadoop: Option<Result<crate::hadoop::HadoopCrc, crate::hadoop::CrcError>>,
    spark: Option<Result<crate::checksum::SparkChecksum, String>>,
}

/// The sums of a main file's pieces against its sidecars ([`Sidecars::verifier`]).
pub(crate) struct Verifiers<'a> {
    hadoop: Option<crate::hadoop::Verifier<'a>>,
    spark: Option<crate::checksum::Verifier<'a>>,
}

/// What [`Verifiers::finish`] found: per sidecar (when there is one and it parsed), its answer.
pub(crate) struct Results {
    hadoop: Option<Result<(), crate::hadoop::CrcError>>,
    spark: Option<Result<(), String>>,
}

impl Sidecars {
    /// Reads and parses the sidecars of `main` (relative path), when the listing has them.
    pub(crate) fn read(cp: &Checkpoint, rd: &mut Reader<'_>, main: &str) -> Self {
        // A `.crc` holds 4 bytes per 512 of its file: its cap grows with the file's size.
        let crc_cap = super::sidecar_cap(cp.file_size(main).unwrap_or(0));
        // A sidecar the archive cannot give (a compression method or encryption this inspector does not unpack,
        // overlapping entries, a limit, a damaged zip entry) is not checked: the archive's own findings name it,
        // and nothing is known of its bytes (it is no stale sidecar).
        let hadoop =
            cp.hadoop_crcs.get(main).and_then(|c| rd.read(&c.path, crc_cap).ok()).map(|s| crate::hadoop::parse(&s));
        let spark = cp.spark_checksums.get(main).and_then(|c| rd.read(&c.path, MAX_SIDECAR_BYTES).ok()).map(|s| {
            crate::checksum::parse(&s).map_err(|(off, why)| format!("checksum file unreadable at byte {off}: {why}"))
        });
        Sidecars { hadoop, spark }
    }

    /// A verifier of the main file's pieces.
    pub(crate) fn verifier(&self) -> Verifiers<'_> {
        Verifiers {
            hadoop: self.hadoop.as_ref().and_then(|c| c.as_ref().ok()).map(crate::hadoop::Verifier::new),
            spark: self.spark.as_ref().and_then(|c| c.as_ref().ok()).map(crate::checksum::Verifier::new),
        }
    }

    /// Records the outcome in `cp`'s sidecar index; a sidecar that does not match is tried on the temp files
    /// of other write attempts of `main`.
    pub(crate) fn record(self, cp: &mut Checkpoint, rd: &mut Reader<'_>, main: &str, results: Results) {
        if let Some(parsed) = self.hadoop {
            let r = match (&parsed, results.hadoop) {
                (Err(e), _) => Err(e.clone()),
                (Ok(_), Some(r)) => r,
                (Ok(_), None) => Ok(()),
            };
            let matches = match (&r, &parsed) {
                (Err(_), Ok(crc)) => other_attempt(cp, rd, main, |b| crate::hadoop::verify(crc, b).is_ok()),
                _ => None,
            };
            if let Some(c) = cp.hadoop_crcs.get_mut(main) {
                c.verified = Some(r);
                c.matches = matches;
            }
        }
        if let Some(parsed) = self.spark {
            let r = match (&parsed, results.spark) {
                (Err(e), _) => Err(e.clone()),
                (Ok(_), Some(r)) => r,
                (Ok(_), None) => Ok(()),
            };
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
}

impl Verifiers<'_> {
    /// The next piece of the main file.
    pub(crate) fn update(&mut self, piece: &[u8]) {
        if let Some(v) = &mut self.hadoop {
            v.update(piece);
        }
        if let Some(v) = &mut self.spark {
            v.update(piece);
        }
    }

    /// The answers, once every piece is handed.
    pub(crate) fn finish(self) -> Results {
        Results {
            hadoop: self.hadoop.map(crate::hadoop::Verifier::finish),
            spark: self.spark.map(|v| {
                v.finish().map_err(|m| {
                    format!(
                        "Expected (file size: {}, checksum: {}), Computed (file size: {}, checksum: {})",
                        m.expected.0, m.expected.1, m.computed.0, m.computed.1
                    )
                })
            }),
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
