//! Sidecars: verifies the Hadoop `.<name>.crc` and the Spark 4.1+ `<name>.crc` of a file whose bytes a stage
//! read (the index of sidecars is made by the listing).

use super::{Reader, MAX_SIDECAR_BYTES};
use crate::model::Checkpoint;

/// Verifies the Hadoop and Spark sidecars of `main` (relative path), whose bytes were read.
pub(crate) fn verify(cp: &mut Checkpoint, rd: &mut Reader<'_>, main: &str, bytes: &[u8]) {
    if let Some(side) = cp.hadoop_crcs.get(main).map(|c| c.path.clone()) {
        let r = match rd.read(&side, MAX_SIDECAR_BYTES) {
            Ok(s) => crate::hadoop::parse(&s).and_then(|c| crate::hadoop::verify(&c, bytes)),
            Err(e) => Err(crate::hadoop::CrcError::Malformed { offset: 0, reason: e.to_string() }),
        };
        if let Some(c) = cp.hadoop_crcs.get_mut(main) {
            c.verified = Some(r);
        }
    }
    if let Some(side) = cp.spark_checksums.get(main).map(|c| c.path.clone()) {
        let r = match rd.read(&side, MAX_SIDECAR_BYTES) {
            Ok(s) => match crate::checksum::parse(&s) {
                Ok(sum) => crate::checksum::verify(&sum, bytes).map_err(|m| {
                    format!(
                        "Expected (file size: {}, checksum: {}), Computed (file size: {}, checksum: {})",
                        m.expected.0, m.expected.1, m.computed.0, m.computed.1
                    )
                }),
                Err((off, why)) => Err(format!("checksum file unreadable at byte {off}: {why}")),
            },
            Err(e) => Err(e.to_string()),
        };
        if let Some(c) = cp.spark_checksums.get_mut(main) {
            c.verified = Some(r);
        }
    }
}
