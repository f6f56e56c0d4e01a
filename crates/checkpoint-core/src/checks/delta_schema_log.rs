//! `delta-schema-tracking-log`: the Delta source's schema tracking logs under the checkpoint
//! (`schemaTrackingLocation`, [`crate::delta::schema_log`]): what they hold, the entries a restart reads that
//! Delta's read fails on, and a log of another table than the source's. Mirrors delta-io/delta
//! `sources/DeltaSourceMetadataTrackingLog.scala` and `streaming/SchemaTrackingLog.scala`.

use super::delta_log::versions;
use super::BACKUP;
use crate::delta::facts::delta_sources;
use crate::delta::schema_log::SchemaLogFault;
use crate::model::Checkpoint;
use crate::report::{Code, Finding, RestartStage, Severity};
use crate::Context;

/// The Delta source's schema tracking logs under the checkpoint: what they hold, entries Delta cannot read, and a
/// log of another table than the source's.
pub fn check_schema_tracking_logs(cp: &Checkpoint, ctx: &Context) -> Vec<Finding> {
    let mut out = Vec::new();
    let ids: Vec<String> = delta_sources(cp, ctx).iter().filter_map(|s| s.reservoir_id().map(str::to_string)).collect();
    for l in &cp.delta_schema_logs {
        let seen: Vec<i64> = l.entries.iter().map(|e| e.delta_commit_version).collect();
        let mut f = Finding::new(
            Code::DeltaSchemaTrackingLog,
            Severity::Info,
            format!(
                "Delta schema tracking log {} (table {}): {} entr{} for table versions {}",
                l.dir,
                l.dir_table_id,
                l.entries.len(),
                if l.entries.len() == 1 { "y" } else { "ies" },
                versions(&seen)
            ),
        );
        for e in l.entries.iter().rev().take(3) {
            let cols = crate::delta::schema::columns(&e.data_schema_json)
                .map(|c| c.iter().map(|c| c.path.clone()).collect::<Vec<_>>().join(", "))
                .unwrap_or_else(|| "schema does not parse".into());
            f = f.evidence(
                &e.path,
                format!("deltaCommitVersion {}, tableId {}: columns {cols}", e.delta_commit_version, e.table_id),
                None,
            );
        }
        let mut why = "The stream was started with schemaTrackingLocation: Delta keeps the schema per table version here and reads every batch with the schema recorded for it, so non-additive changes (column mapping renames and drops, type widening) can be crossed once acknowledged.".to_string();
        // (error class, exception) of the first failure a restart meets: the latest entry's, then the previous one's.
        let mut failure: Option<(Option<&'static str>, &'static str)> = None;
        let read = l.read_on_restart();
        for p in l.problems.iter().rev() {
            let (latest, previous) = read.unwrap_or((p.seq, p.seq));
            let which = if p.seq == latest {
                "the latest entry"
            } else if p.seq == previous {
                "the entry before the latest"
            } else {
                f = f.evidence(&p.problem.path, format!("{} (an older entry: a restart reads only the latest entry and the one before it, so it does not fail on this one)", p.problem.reason), p.problem.offset);
                continue;
            };
            // The previous entry's table id is not checked (only the latest's is).
            let error = if p.seq == previous && p.fault == SchemaLogFault::NoTableId {
                None
            } else {
                schema_log_error(&p.fault, !super::legacy(ctx))
            };
            f = f.evidence(&p.problem.path, format!("{}: {}", which, p.problem.reason), p.problem.offset);
            match error {
                Some((class, exception, words)) if failure.is_none() => {
                    f.severity = Severity::Error;
                    failure = Some((class, exception));
                    why.push_str(&format!(" Delta reads {which} when the stream starts, and that read fails: {words} (DeltaSourceMetadataTrackingLog, JsonSchemaSerializer.deserialize)."));
                }
                None if p.fault == SchemaLogFault::Unreadable && f.severity == Severity::Info => {
                    f.severity = Severity::Warning;
                    why.push_str(&format!(
                        " The file of {which} could not be read here, so whether Delta reads it is not verified."
                    ));
                }
                _ => {}
            }
        }
        let other = l.entries.iter().find(|e| !ids.is_empty() && !ids.contains(&e.table_id));
        if let (Some(e), [id]) = (other, ids.as_slice()) {
            f.severity = Severity::Error;
            f = f.evidence(&e.path, format!("tableId {} but the Delta source reads table {id}", e.table_id), None);
            failure = failure.or(Some((
                Some("DELTA_STREAMING_SCHEMA_LOG_INCOMPATIBLE_DELTA_TABLE_ID"),
                "org.apache.spark.sql.delta.DeltaAnalysisException",
            )));
            why.push_str(" Its table id is not the source's: Delta refuses a schema log of another table (PersistedMetadata.validateAgainstSourceTableId).");
        }
        f = f.why(why).fix(&[
            BACKUP.to_string(),
            "If it is damaged or of another table: restore it from a backup, or point schemaTrackingLocation at a new folder under the checkpoint (Delta initialises it again from the stream's position).".to_string(),
        ]);
        if let Some((class, exception)) = failure {
            if let Some(c) = class {
                f = f.classes(&[c]);
            }
            f = f.fails(RestartStage::SourceOffsets, class, exception);
        }
        out.push(f);
    }
    out
}

/// What Delta raises reading a schema log entry with `fault` as the latest (or previous) entry: (error class,
/// exception, words); `None` when the file could not be read here (not verified). Delta's deserializer
/// (`JsonSchemaSerializer.deserialize`) turns only an entry with no line into
/// `DELTA_STREAMING_SCHEMA_LOG_DESERIALIZE_FAILED`; the version line goes through Spark's
/// `MetadataVersionUtil.validateVersion(text, 1)` (4.x: `INVALID_LOG_VERSION.MAX_SUPPORTED_VERSION` /
/// `MALFORMED_LOG_FILE`, a `SparkIllegalStateException`; 3.x a plain `IllegalStateException`), and the JSON
/// through Jackson, whose exceptions carry no class.
fn schema_log_error(fault: &SchemaLogFault, spark4: bool) -> Option<(Option<&'static str>, &'static str, String)> {
    let state = if spark4 { "org.apache.spark.SparkIllegalStateException" } else { "java.lang.IllegalStateException" };
    Some(match fault {
        SchemaLogFault::Empty => (
            Some("DELTA_STREAMING_SCHEMA_LOG_DESERIALIZE_FAILED"),
            "org.apache.spark.sql.delta.DeltaRuntimeException",
            "the file has no line".to_string(),
        ),
        SchemaLogFault::Version(text) => match crate::state::schema::java_version(text) {
            Some(v) => (
                spark4.then_some("INVALID_LOG_VERSION.MAX_SUPPORTED_VERSION"),
                state,
                format!("UnsupportedLogVersion: the maximum supported log version is v1, but encountered v{v}"),
            ),
            None => (
                spark4.then_some("MALFORMED_LOG_FILE"),
                state,
                format!("Log file was malformed: failed to read correct log version from {text}."),
            ),
        },
        SchemaLogFault::NotUtf8 => (None, "java.nio.charset.MalformedInputException", "bytes that are not UTF-8".into()),
        SchemaLogFault::Json => (None, "com.fasterxml.jackson.core.JsonParseException", "its JSON line does not parse".into()),
        SchemaLogFault::Shape => (
            None,
            "com.fasterxml.jackson.databind.exc.MismatchedInputException",
            "a field of its JSON has the wrong type".into(),
        ),
        SchemaLogFault::NoTableId => (
            Some("DELTA_STREAMING_SCHEMA_LOG_INCOMPATIBLE_DELTA_TABLE_ID"),
            "org.apache.spark.sql.delta.DeltaAnalysisException",
            "it has no tableId, which Jackson reads as null, and the table id check (PersistedMetadata.validateAgainstSourceTableId) refuses it".into(),
        ),
        SchemaLogFault::Unreadable => return None,
    })
}
