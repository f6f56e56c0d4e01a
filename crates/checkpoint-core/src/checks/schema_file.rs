//! `state-schema-file-unreadable`: a store's v1/v2 schema file (`state/<op>/0/[<store>/]_metadata/schema`) that
//! Spark's own read fails on: empty, cut short, text or bytes where the binary file should be, a version string
//! it does not read, a schema that is no JSON struct.
//!
//! Spark reads the file whenever it plans a batch of a stateful operator
//! (`StateSchemaCompatibilityChecker.readSchemaFile`: `readUTF` of the version string, `SchemaHelper.SchemaReader`
//! for that version, `StructType.fromString` of the key and value schema), whether or not
//! `spark.sql.streaming.stateStore.stateSchemaCheck` is on; the conf only decides whether a failure of that read
//! (or of the comparison) stops the query. A file that is not there is written anew from the restarted query's
//! schemas. From 4.0 the driver reads it when it plans the batch (`IncrementalExecution`), after the batch's
//! offsets file is written; 3.5 reads it when partition 0's state store opens in a task.
//!
//! Observed with real Spark (`tools/spark-gen/schema_file.py`, `tests/data/spark/schema-file-*`), 4.1.4 and 3.5.9:
//!
//! | the file | 4.1.4 | 3.5.9 |
//! |---|---|---|
//! | emptied, cut in half, a line of text | `java.io.EOFException` (no error class) | `SparkException` "Job aborted due to stage failure: …", cause `java.io.EOFException` |
//! | version string `v9` | `SparkIllegalStateException` `[INVALID_LOG_VERSION.MAX_SUPPORTED_VERSION]` ("maximum supported log version is v3") | `SparkException`, cause `IllegalStateException: UnsupportedLogVersion` (v2 the maximum) |
//! | version string `v3` | `java.io.EOFException` (the v3 reader runs past the v2 content) | as `v9` |
//! | version string `x2` | `SparkIllegalStateException` `[MALFORMED_LOG_FILE]` | `SparkException`, cause `IllegalStateException: Log file was malformed` |
//! | key schema no JSON | `SparkIllegalArgumentException` (a class the reference list lacks, so no fixture) | `SparkException`, the same cause |
//! | deleted with its `.crc` | written anew, the batch runs | the same |
//!
//! On RocksDBStateStoreProvider (4.1.4, `SCHEMA_GEN_PROVIDER=rocksdb`: emptied, `v9`) the same: the file and its
//! read are the operator's, whatever the provider. The schema file of either operator of a two-operator query
//! fails the restart. With `stateSchemaCheck=false`
//! each failing restart ran its batch, but the file stayed as it was, and the next restart with the check on failed
//! the same way again. A `.crc` left without its file is `orphan-hadoop-crc` (`checks/writers.rs`).

use super::{effective_conf_value, legacy, BACKUP};
use crate::model::Checkpoint;
use crate::report::{Code, Finding, RestartStage, Severity};
use crate::state::schema::{java_version, SchemaReadFault, SchemaReadFaultKind};
use crate::Context;

/// The conf that keeps a failed schema read from stopping the query.
pub const SCHEMA_CHECK_CONF: &str = "spark.sql.streaming.stateStore.stateSchemaCheck";

/// What Spark raises for a fault: (error class, exception, Spark's words). 4.x raises the read's own error on the
/// driver; 3.5 raises it in the task that opens partition 0's store, and the query stops with the job's
/// `SparkException` ("Job aborted due to stage failure: …"), the read's error as its cause.
fn spark_error(fault: &SchemaReadFault, ctx: &Context) -> (Option<&'static str>, &'static str, String) {
    let (class, exception, words) = read_error(fault, !legacy(ctx));
    let words = match class {
        Some(c) => format!("{exception}: [{c}] {words}"),
        None => format!("{exception}: {words}"),
    };
    if !legacy(ctx) {
        return (class, exception, words);
    }
    (
        None,
        "org.apache.spark.SparkException",
        format!("org.apache.spark.SparkException: Job aborted due to stage failure: … {words}"),
    )
}

/// The error of the read itself: (error class, exception, words).
fn read_error(fault: &SchemaReadFault, spark4: bool) -> (Option<&'static str>, &'static str, String) {
    let state = if spark4 { "org.apache.spark.SparkIllegalStateException" } else { "java.lang.IllegalStateException" };
    match &fault.kind {
        SchemaReadFaultKind::EndOfFile => (None, "java.io.EOFException", "the file ends before the value does".into()),
        SchemaReadFaultKind::NotModifiedUtf8 => {
            (None, "java.io.UTFDataFormatException", "a string that is not modified UTF-8".into())
        }
        // 4.1.4: `StructType.fromString` falls back to the legacy type parser, which refuses the string.
        SchemaReadFaultKind::Json => (
            None,
            if spark4 {
                "org.apache.spark.SparkIllegalArgumentException"
            } else {
                "java.lang.IllegalArgumentException"
            },
            "Unsupported data type (StructType.fromString cannot read the schema string)".into(),
        ),
        SchemaReadFaultKind::Version(text) => {
            // `SchemaReader.createSchemaReader`: `validateVersion(text, 2)` in 3.5, 3 from 4.0 (the v3 reader).
            let max = if spark4 { 3 } else { 2 };
            match java_version(text) {
                Some(v) if v > max => (
                    spark4.then_some("INVALID_LOG_VERSION.MAX_SUPPORTED_VERSION"),
                    state,
                    format!("UnsupportedLogVersion: the maximum supported log version is v{max}, but encountered v{v}"),
                ),
                // v3 on 4.x: the transformWithState schema reader (column families, chunked strings) reads the v2
                // body past its end (observed on 4.1.4).
                Some(_) => {
                    (None, "java.io.EOFException", "the v3 schema reader runs past the end of the v1/v2 content".into())
                }
                None => (
                    spark4.then_some("MALFORMED_LOG_FILE"),
                    state,
                    format!("Log file was malformed: failed to read correct log version from {text}."),
                ),
            }
        }
    }
}

/// One finding per schema file Spark's read fails on: an error, unless the restart runs with the schema check off.
pub fn check_schema_files(cp: &Checkpoint, ctx: &Context) -> Vec<Finding> {
    let check_off =
        effective_conf_value(cp, ctx, SCHEMA_CHECK_CONF).is_some_and(|v| v.trim().eq_ignore_ascii_case("false"));
    let mut out = Vec::new();
    for (path, fault) in &cp.state_schema_faults {
        let (class, exception, words) = spark_error(fault, ctx);
        let size = cp.file_size(path).unwrap_or(0);
        let operator = path.split('/').nth(1).unwrap_or("?");
        let what = match (&fault.kind, size) {
            (_, 0) => "is empty".to_string(),
            (SchemaReadFaultKind::EndOfFile, _) => "ends too early".to_string(),
            (SchemaReadFaultKind::Version(v), _) => format!("starts with the version string {v:?}"),
            _ => "does not read".to_string(),
        };
        let reason = match cp.state_schemas.get(path) {
            Some(Err(p)) => format!("{}; ", p.reason),
            _ => String::new(),
        };
        let mut f = Finding::new(
            Code::StateSchemaFileUnreadable,
            if check_off { Severity::Warning } else { Severity::Error },
            format!("{path}: the state schema file of operator {operator} {what}; Spark reads it on the restart's first batch"),
        )
        .evidence_sized(path, size, format!("{reason}Spark's read of the value at byte {} fails: {words}", fault.offset), Some(fault.offset))
        .why(format!(
            "Spark writes this file on the operator's first batch and reads it back whenever it plans a batch, to compare the stored key and value schema with the query's ({}). Its read of this file fails{}.",
            if legacy(ctx) { "Spark 3.5: when partition 0's state store opens" } else { "Spark 4: on the driver, after the batch's offsets file is written" },
            if check_off {
                format!(": the restart runs because {SCHEMA_CHECK_CONF}=false keeps the failure from stopping the query, but the file stays as it is, and a restart with the check on fails on it")
            } else {
                String::new()
            }
        ))
        .fix(&[
            BACKUP.to_string(),
            format!("Restore {path} (and its .crc) from a backup or another copy of this checkpoint: Spark writes the file once, on the operator's first batch, so any copy taken after that holds the same bytes."),
            format!("Without a copy, and only if the restarted query is the one that wrote this state: delete {path} and its Hadoop sidecar .schema.crc beside it (both: a .crc left alone makes Spark's rename of the new file fail). Spark writes the file anew from the restarted query's schemas and the restart goes on (observed with real Spark); the check against the schema the state was written with is lost, so a changed aggregation or key would go unnoticed."),
            format!("To restart without touching the files: .config(\"{SCHEMA_CHECK_CONF}\", \"false\") lets the restart run (observed with real Spark), for every stateful operator and on every restart, because the file stays unreadable."),
        ]);
        if !check_off {
            f = f.fails(
                if legacy(ctx) { RestartStage::StateLoad } else { RestartStage::StateSchema },
                class,
                exception,
            );
        }
        if let Some(c) = class {
            f = f.classes(&[c]);
        }
        out.push(f);
    }
    out
}
