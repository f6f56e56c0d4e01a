//! Checksum mismatches of the files that were read, outside `state/` (state files are judged by the state
//! checks, which know whether Spark verifies them): Hadoop `.crc` sidecars (FORMATS.md §18) and Spark 4.1+
//! checksum files (§15). Spark does not verify the Hadoop sidecar when it reads the offset log (observed
//! with 3.5.9, 4.1.4 and 4.3.0; FileContext on the local file system skips it), so these are warnings. When
//! the file parses and the evidence shows the sidecar was written for other bytes (another length, another
//! attempt's temp file), the sidecar is blamed (`stale-checksum-sidecar`, [`super::stale_sidecar`]).

use super::spark;
use super::stale_sidecar::{self, ReadPath, SidecarKind, Stale};
use crate::model::Checkpoint;
use crate::report::{Code, Finding, Severity};
use crate::Context;

/// The stale-sidecar finding of a log file that parses, when the evidence shows its sidecar is foreign.
fn stale_log(cp: &Checkpoint, ctx: &Context, main: &str, kind: SidecarKind) -> Option<Finding> {
    let decoded = stale_sidecar::log_decoded(cp, main)?;
    if !stale_sidecar::shown_foreign(cp, main, kind) {
        return None;
    }
    let s = Stale {
        main,
        kind,
        read: ReadPath::Log,
        decoded: decoded.clone(),
        role: decoded,
        fails: None,
        repaired_from: None,
    };
    stale_sidecar::stale_finding(cp, spark(ctx), &s)
}

/// Reports sidecar mismatches and hand-edited offset metadata keys.
pub fn check_checksums(cp: &Checkpoint, ctx: &Context) -> Vec<Finding> {
    let v = spark(ctx);
    let mut out = Vec::new();
    for c in cp.hadoop_crcs.values() {
        if c.main.starts_with("state/") {
            continue;
        }
        if let Some(Err(e)) = &c.verified {
            if let Some(f) = stale_log(cp, ctx, &c.main, SidecarKind::Hadoop) {
                out.push(f);
                continue;
            }
            let offset = match e {
                crate::hadoop::CrcError::Mismatch { offset, .. } => Some(*offset),
                _ => None,
            };
            // Parsed and not the newer file (an edit leaves the data file newer than its sidecar): either file.
            let edited = stale_sidecar::modified_after(cp, &c.main, &c.path).is_some();
            let why = match stale_sidecar::log_decoded(cp, &c.main).filter(|_| !edited) {
                Some(d) => format!(
                    "{} parses ({d}), so either it was changed after Spark wrote it (edited by hand, rewritten by a second writer) or the sidecar is another write attempt's. Spark {v} does not verify the sidecar when it reads checkpoint logs (FileContext on the local file system skips it), so it uses the content as is; Hadoop tools that do verify fail with ChecksumException.",
                    c.main
                ),
                None => format!(
                    "The file was changed after Spark wrote it (edited by hand, truncated or damaged in a copy). Spark {v} does not verify the sidecar when it reads checkpoint logs, so it will use the changed content as is; Hadoop tools that do verify fail with ChecksumException."
                ),
            };
            out.push(
                Finding::new(
                    Code::HadoopCrcMismatch,
                    Severity::Warning,
                    format!("{} does not match its Hadoop checksum {}", c.main, c.path),
                )
                .evidence(&c.main, format!("{e}"), offset)
                .evidence(&c.path, "Hadoop .crc sidecar (CRC32 per 512-byte chunk)", None)
                .why(why)
                .fix(&[
                    super::BACKUP.to_string(),
                    format!(
                        "Compare {} with a backup; if the change was intended, delete the stale {} so the two agree.",
                        c.main, c.path
                    ),
                ]),
            );
        }
    }
    for c in cp.spark_checksums.values() {
        if c.main.starts_with("state/") {
            continue;
        }
        if let Some(Err(e)) = &c.verified {
            if let Some(f) = stale_log(cp, ctx, &c.main, SidecarKind::Spark) {
                out.push(f);
                continue;
            }
            // Restore the file only when it does not parse; when it does, the checksum file may be the stale one.
            let restore = match stale_sidecar::log_decoded(cp, &c.main) {
                Some(d) => format!("{} parses ({d}): compare it with a backup; if its content is right, delete the stale {} so the two agree.", c.main, c.path),
                None => format!("Restore {} from a backup.", c.main),
            };
            out.push(
                Finding::new(Code::SparkChecksumMismatch, Severity::Warning, format!("{} does not match its Spark checksum file {}", c.main, c.path))
                    .classes(&["CHECKPOINT_FILE_CHECKSUM_VERIFICATION_FAILED"])
                    .evidence(&c.main, e.clone(), None)
                    .why("Spark 4.1+ writes a CRC32C checksum file next to checkpoint files it writes through its checksum file manager and fails with CHECKPOINT_FILE_CHECKSUM_VERIFICATION_FAILED when it reads a file that no longer matches.")
                    .fix(&[super::BACKUP.to_string(), restore]),
            );
        }
    }
    if let Some((id, o)) = cp.latest_readable_offsets() {
        if let Some(m) = &o.metadata {
            if !m.unknown_keys.is_empty() {
                out.push(
                    Finding::new(Code::OffsetsUnknownKeys, Severity::Warning, format!("offsets/{id} has metadata keys Spark does not know: {}", m.unknown_keys.join(", ")))
                        .evidence(format!("offsets/{id}"), format!("unknown keys {:?}; batchWatermarkMs = {}", m.unknown_keys, m.batch_watermark_ms.map(|x| x.to_string()).unwrap_or_else(|| "absent (Spark uses 0)".into())), None)
                        .why("Spark ignores keys it does not know in OffsetSeqMetadata; a misspelled batchWatermarkMs or batchTimestampMs silently becomes 0, which changes watermark-based results (late data, state eviction) of the replayed batch.")
                        .fix(&[super::BACKUP, "Fix the key spelling (e.g. batchWatermarkMs) if the file was edited by hand."]),
                );
            }
            if m.conf_not_kept > 0 {
                let n = m.conf.len() + m.conf_not_kept;
                out.push(
                    Finding::new(Code::OffsetsUnknownKeys, Severity::Warning, format!("offsets/{id} records {n} confs, far more than Spark writes (about twenty)"))
                        .evidence(format!("offsets/{id}"), format!("conf: {n} entries; the first {} are kept and shown, {} more were checked as JSON only", m.conf.len(), m.conf_not_kept), None)
                        .why("Spark records only the SQL confs a restart must keep (OffsetSeqMetadata.relevantSQLConfs, about twenty) and applies only those on restart; other keys in the conf map are ignored. So many entries mean the file was edited or generated by something else than Spark.")
                        .fix(&[super::BACKUP, "Compare the file with one Spark wrote (an older offsets file of this checkpoint) if it was edited by hand."]),
                );
            }
        }
    }
    out
}
