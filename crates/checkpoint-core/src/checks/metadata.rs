//! The root `metadata` file (FORMATS.md §1, §16 step 1) and the Spark 2.4 escaped-path problem.

use super::{conf_bool, effective_conf, spark, BACKUP};
use crate::model::Checkpoint;
use crate::report::{CheckpointKind, Code, Finding, RestartStage, Severity};
use crate::Context;

/// `metadata` missing while offsets/commits exist, or unreadable.
pub fn check_metadata(cp: &Checkpoint, ctx: &Context) -> Vec<Finding> {
    if cp.kind.0 != CheckpointKind::StructuredStreaming {
        return vec![];
    }
    let v = spark(ctx);
    let has_logs = !cp.offsets.is_empty() || !cp.commits.is_empty();
    match &cp.metadata {
        None if has_logs => {
            let conf = effective_conf(cp, ctx);
            let verify = v.at_least(4, 3) && conf_bool(&conf, "spark.sql.streaming.checkpoint.verifyMetadataExists.enabled", true);
            let mut f = Finding::new(
                Code::MetadataMissing,
                if verify { Severity::Error } else { Severity::Warning },
                "The checkpoint's metadata file (the query id) is missing while its offset/commit logs hold batches",
            )
            .classes(&["STREAMING_CHECKPOINT_MISSING_METADATA_FILE"])
            .evidence(
                "metadata",
                format!(
                    "absent; offsets/ has {} file(s), commits/ has {} file(s)",
                    cp.offsets.len(),
                    cp.commits.len()
                ),
                None,
            )
            .why(if verify {
                format!(
                    "Spark {v} checks at start() that a checkpoint with offset or commit logs also has its metadata \
                     file and refuses to start (STREAMING_CHECKPOINT_MISSING_METADATA_FILE). Older Spark silently \
                     writes a new metadata file with a NEW query id and continues from the logs."
                )
            } else {
                format!(
                    "Spark {v} does not check this: it writes a new metadata file with a NEW query id and continues \
                     from the offset and commit logs. Anything keyed on the query id (exactly-once sinks, \
                     foreachBatch idempotency, Delta txnAppId, monitoring) sees a different query. Spark 4.3 \
                     refuses to start instead (STREAMING_CHECKPOINT_MISSING_METADATA_FILE)."
                )
            })
            .fix(&[
                BACKUP.to_string(),
                "Restore the `metadata` file from a backup or another copy of this checkpoint (it is one line: {\"id\":\"<query id>\"}); if you know the old query id (logs, the Spark UI, listener events) you can recreate it with exactly that id.".to_string(),
                "If the query id does not matter to your sink, recreate `metadata` with a new id, or on Spark 4.3 set spark.sql.streaming.checkpoint.verifyMetadataExists.enabled=false to let Spark write one.".to_string(),
                super::new_checkpoint_step(cp),
            ]);
            if verify {
                f = f.fails(RestartStage::Metadata, Some("STREAMING_CHECKPOINT_MISSING_METADATA_FILE"), "org.apache.spark.SparkRuntimeException");
            }
            vec![f]
        }
        Some(m) => match &m.content {
            Ok(_) => vec![],
            // Not verified (a limit of this inspector): `budgets::check_not_verified` says so.
            Err(crate::log::LogError::NotVerified { .. }) => vec![],
            Err(crate::log::LogError::Unreadable { reason, archive_damaged: true }) => {
                vec![super::logs::archive_entry_unreadable(&m.path, m.size, reason, true)]
            }
            Err(e) => vec![Finding::new(Code::MetadataUnreadable, Severity::Error, "The checkpoint's metadata file cannot be read")
                .evidence_sized(&m.path, m.size, e.to_string(), Some(e.offset()))
                .why("Spark reads `metadata` when the query is created (StreamMetadata.read) and fails if it does not parse; the query id cannot be recovered from it.")
                .fix(&[
                    BACKUP.to_string(),
                    "Restore `metadata` from a backup, or rewrite it as one line {\"id\":\"<query id>\"} with the old query id if you know it (else a new UUID).".to_string(),
                ])
                .fails(RestartStage::Metadata, None, metadata_exception(e))],
        },
        None => vec![],
    }
}

/// The exception `StreamMetadata.read` throws on a `metadata` file that does not parse: json4s reads it through
/// Jackson, which refuses an empty stream itself (`MismatchedInputException: No content to map due to
/// end-of-input`, a newcomer's restart on 4.1.4); other damage as for any log file.
fn metadata_exception(e: &crate::log::LogError) -> &'static str {
    match e {
        crate::log::LogError::BadJson { message, .. } if message.starts_with("No content to map") => {
            "com.fasterxml.jackson.databind.exc.MismatchedInputException"
        }
        e => e.spark_exception(),
    }
}

/// Decodes `%XX` escapes once (the one URL decoder of the crate: Spark's escaped folders, file sink and source
/// log URIs, share-link redaction). `None` when nothing changes or the result is not UTF-8; a `%` not followed
/// by two hex digits is kept as it is.
pub(crate) fn unescape_once(s: &str) -> Option<String> {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    let mut changed = false;
    while i < b.len() {
        if b[i] == b'%' {
            let hex = |c: u8| (c as char).to_digit(16);
            if let (Some(h), Some(l)) = (b.get(i + 1).and_then(|c| hex(*c)), b.get(i + 2).and_then(|c| hex(*c))) {
                out.push((h * 16 + l) as u8);
                i += 3;
                changed = true;
                continue;
            }
        }
        out.push(b[i]);
        i += 1;
    }
    if changed {
        String::from_utf8(out).ok()
    } else {
        None
    }
}

/// Folder names escaped by Spark 2.4 (`%2520`-style), which Spark 3.0+ rejects (`_LEGACY_ERROR_TEMP_2263`
/// for a checkpoint, `_LEGACY_ERROR_TEMP_2200` for a sink's `_spark_metadata`).
pub fn check_escaped_path(cp: &Checkpoint, ctx: &Context) -> Vec<Finding> {
    let mut out = Vec::new();
    let mut paths: Vec<(String, bool)> = vec![(cp.root.clone(), cp.kind.0 != CheckpointKind::Unknown)];
    for s in &cp.sink_logs {
        paths.push((s.dir.clone(), false));
    }
    for (p, is_checkpoint) in paths {
        for comp in p.split('/') {
            let mut cur = comp.to_string();
            let mut rounds = 0;
            while let Some(n) = unescape_once(&cur) {
                cur = n;
                rounds += 1;
                if rounds > 8 {
                    break;
                }
            }
            if rounds == 0 {
                continue;
            }
            let class = if is_checkpoint { "_LEGACY_ERROR_TEMP_2263" } else { "_LEGACY_ERROR_TEMP_2200" };
            let sev = if spark(ctx).at_least(3, 0) { Severity::Error } else { Severity::Warning };
            let evidence_path = if is_checkpoint { "metadata".to_string() } else { p.clone() };
            out.push(
                Finding::new(
                    Code::EscapedPath,
                    sev,
                    format!("Folder name {comp:?} is percent-escaped ({rounds} round(s)); it decodes to {cur:?}"),
                )
                .classes(&[class])
                .evidence(evidence_path, format!("folder {comp:?} in {p:?} decodes to {cur:?} after {rounds} round(s) of URL decoding"), None)
                .why("Spark 2.4 and older escaped special characters of the checkpoint (and file sink) path when it created folders, so the folder on disk is not the path the query names. Spark 3.0+ detects the escaped legacy folder and stops with an error asking you to move it (see the 3.0 migration guide).")
                .fix(&[
                    BACKUP.to_string(),
                    format!("Move/rename the folder {comp:?} to {cur:?} (the path your query passes), and likewise the sink output's `_spark_metadata` folder, then restart."),
                    "Or, to keep the legacy location, set spark.sql.streaming.checkpoint.escapedPathCheck.enabled=false (only if you are sure nothing else uses the unescaped path).".to_string(),
                ]),
            );
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::unescape_once;

    #[test]
    fn one_round_of_hex_escapes_only() {
        assert_eq!(unescape_once("chk%2520x").as_deref(), Some("chk%20x"));
        assert_eq!(unescape_once("a%41%42").as_deref(), Some("aAB"));
        assert_eq!(unescape_once("plain"), None);
        assert_eq!(unescape_once("%+1 and %2"), None, "a sign or a cut escape is not hex");
        assert_eq!(unescape_once("%zz%"), None);
        assert_eq!(unescape_once("%ff"), None, "not UTF-8");
    }
}
