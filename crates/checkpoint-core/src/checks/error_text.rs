//! Findings driven by the error text the user pasted (`Context::error_text`), tied to checkpoint evidence:
//! the number of sources changed, two writers (CONCURRENT_STREAM_LOG_UPDATE), a stateful operator whose
//! state is not in the checkpoint, and any error class the other checks do not explain.

use super::spark;
use crate::log::offsets::OffsetSeq;
use crate::model::Checkpoint;
use crate::report::{CheckpointKind, Code, Finding, RestartStage, Severity};
use crate::Context;

/// What an error text names.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ParsedError {
    /// Error classes in order of appearance (`STREAM_FAILED` excluded).
    pub error_classes: Vec<String>,
    /// Java exception classes in order: `Caused by:` classes first (outermost first), else line starts.
    pub exceptions: Vec<String>,
    /// The text says the query stopped (`[STREAM_FAILED]`, or "terminated with exception:"), whatever else it
    /// names: PySpark's one line may name nothing below the wrapper ("... terminated with exception: batch 2
    /// doesn't exist").
    pub stream_failed: bool,
}

impl ParsedError {
    /// The specific error class Spark printed (the first below the `STREAM_FAILED` wrapper).
    pub fn error_class(&self) -> Option<&str> {
        self.error_classes.first().map(String::as_str)
    }
    /// The outermost exception below `StreamingQueryException`.
    pub fn exception(&self) -> Option<&str> {
        self.exceptions.first().map(String::as_str)
    }
    /// True when the text says the restart failed: it names an error class, an exception or the query's stop.
    pub fn names_a_failure(&self) -> bool {
        self.error_class().is_some() || self.exception().is_some() || self.stream_failed
    }
}

fn is_exception_name(tok: &str) -> bool {
    let parts: Vec<&str> = tok.split('.').collect();
    if parts.len() < 2 {
        return false;
    }
    let last = parts[parts.len() - 1];
    let pkg_ok = parts[..parts.len() - 1].iter().all(|p| {
        !p.is_empty()
            && p.chars().next().is_some_and(|c| c.is_ascii_lowercase())
            && p.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
    });
    pkg_ok
        && last.chars().next().is_some_and(|c| c.is_ascii_uppercase())
        && last.chars().all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '$')
        && (last.ends_with("Exception")
            || last.ends_with("Error")
            || last.starts_with("Spark")
            || last.starts_with("StateStore"))
}

fn leading_class(s: &str) -> Option<String> {
    let tok: String = s
        .trim_start()
        .chars()
        .take_while(|c| c.is_ascii_alphanumeric() || *c == '.' || *c == '_' || *c == '$')
        .collect();
    is_exception_name(&tok).then_some(tok)
}

/// Extracts error classes (`[NAME]` / `[NAME.SUB]` with an underscore) and exception class names.
pub fn parse_error_text(text: &str) -> ParsedError {
    let mut p = ParsedError {
        stream_failed: text.contains("[STREAM_FAILED]") || text.contains("terminated with exception:"),
        ..ParsedError::default()
    };
    // One pass: from each `[`, the class characters that follow (at most MAX_CLASS_LEN of them) and a `]`; a
    // pasted text of any shape is read in linear time (a search for `]` from every `[` was quadratic).
    let b = text.as_bytes();
    let class_byte = |c: u8| c.is_ascii_uppercase() || c.is_ascii_digit() || c == b'_' || c == b'.';
    let mut i = 0;
    while i < b.len() && p.error_classes.len() < MAX_PARSED {
        if b[i] != b'[' {
            i += 1;
            continue;
        }
        let start = i + 1;
        let mut end = start;
        while end < b.len() && end - start <= MAX_CLASS_LEN && class_byte(b[end]) {
            end += 1;
        }
        if end < b.len() && b[end] == b']' {
            let inner = &text[start..end];
            let ok = inner.len() >= 3 && inner.contains('_') && inner.as_bytes()[0].is_ascii_uppercase();
            if ok && inner != "STREAM_FAILED" && !p.error_classes.iter().any(|c| c == inner) {
                p.error_classes.push(inner.to_string());
            }
        }
        i = end.max(i + 1);
    }
    const WRAPPER: &str = "org.apache.spark.sql.streaming.StreamingQueryException";
    let mut caused = Vec::new();
    let mut starts = Vec::new();
    for line in text.lines() {
        let t = line.trim_start();
        if let Some(rest) = t.strip_prefix("Caused by:") {
            if let Some(c) = leading_class(rest) {
                caused.push(c);
            }
        } else if let Some(c) = leading_class(t) {
            starts.push(c);
        }
    }
    let mut all: Vec<String> = Vec::new();
    let top_is_wrapper = starts.first().is_some_and(|c| c == WRAPPER || c.ends_with(".StreamingQueryException"));
    if top_is_wrapper || starts.is_empty() {
        all.extend(caused);
        all.extend(starts);
    } else {
        all.extend(starts);
        all.extend(caused);
    }
    if all.iter().all(|c| c.ends_with("StreamingQueryException")) {
        // Classes mentioned inside messages ("... java.lang.IllegalStateException: Error reading ...").
        for tok in text.split(|c: char| c.is_whitespace() || c == '(' || c == ')' || c == ',') {
            let tok = tok.trim_end_matches(':');
            if is_exception_name(tok) {
                all.push(tok.to_string());
            }
        }
    }
    for c in all {
        if p.exceptions.len() >= MAX_PARSED {
            break;
        }
        if !c.ends_with("StreamingQueryException") && !p.exceptions.contains(&c) {
            p.exceptions.push(c);
        }
    }
    p
}

/// Error classes (and exception names) kept from one pasted text: a real error names a few; a text naming more is
/// not read further (and each new one is compared with those kept, so the bound keeps the parse linear).
const MAX_PARSED: usize = 64;

/// The longest error class name read (`CANNOT_LOAD_STATE_STORE.CANNOT_READ_DELTA_FILE_KEY_SIZE` is 54).
const MAX_CLASS_LEN: usize = 128;

fn bracket_num(text: &str, after: &str) -> Option<i64> {
    let i = text.find(after)? + after.len();
    let rest = &text[i..];
    let s = rest.find('[')? + 1;
    let e = rest[s..].find(']')? + s;
    rest[s..e].trim().parse().ok()
}

/// Findings the error text calls for.
pub fn check_error_text(cp: &Checkpoint, ctx: &Context) -> Vec<Finding> {
    let Some(text) = ctx.error_text.as_deref() else {
        return vec![];
    };
    if cp.kind.0 != CheckpointKind::StructuredStreaming {
        return vec![];
    }
    let parsed = parse_error_text(text);
    let latest = cp.latest_readable_offsets();
    let mut out = Vec::new();
    for check in [
        source_count_changed,
        concurrent_writers,
        stateful_operator_without_state,
        state_schema_changed,
        state_format_invalidation,
    ] {
        out.extend(check(cp, ctx, text, &parsed, latest));
    }
    // These findings exist because of the pasted text: they explain it by construction.
    for f in &mut out {
        f.explains_error_text = true;
    }
    out
}

/// The pasted assertion on the number of sources (`source-count-changed`).
fn source_count_changed(
    cp: &Checkpoint,
    _ctx: &Context,
    text: &str,
    _parsed: &ParsedError,
    latest: Option<(i64, &OffsetSeq)>,
) -> Vec<Finding> {
    let mut out = Vec::new();
    if text.contains("sources in the checkpoint offsets") {
        let in_ckpt = bracket_num(text, "There are");
        let now = bracket_num(text, "now there are");
        let (id, n) = latest.map(|(id, o)| (id, o.source_count())).unwrap_or((0, 0));
        // At most `MAX_NAMED` sources named (an offsets file may hold thousands of source lines).
        let listed = latest
            .map(|(_, o)| {
                let each = o.offsets.iter().enumerate().take(super::MAX_NAMED);
                let shown: Vec<String> = each
                    .map(|(i, s)| format!("#{i} {} {}", s.kind.as_str(), s.raw.as_deref().unwrap_or("-")))
                    .collect();
                let more = n.saturating_sub(shown.len() as u64);
                if more > 0 {
                    format!("{} and {more} more", shown.join("; "))
                } else {
                    shown.join("; ")
                }
            })
            .unwrap_or_default();
        out.push(
            Finding::new(Code::SourceCountChanged, Severity::Error, format!("The query now has {} source(s); the checkpoint recorded {n}", now.map(|x| x.to_string()).unwrap_or("a different number of".into())))
                .evidence(format!("offsets/{id}"), format!("{n} source offset line(s): {}{}", listed, match (in_ckpt, now) {
                    (Some(c), Some(q)) => format!(" (the error: {c} source(s) in the checkpoint, {q} in the query)"),
                    (Some(c), None) => format!(" (the error: {c} source(s) in the checkpoint)"),
                    _ => String::new(),
                }), None)
                .why("Spark matches sources to the offset lines by position in the logical plan; when the number of streaming sources changes (a union, a join or a new readStream added or removed), it asserts \"There are [N] sources in the checkpoint offsets and now there are [M] sources requested by the query. Cannot continue.\"")
                .fix(&[
                    format!("Restore the query so it reads exactly the {n} recorded source(s) in the same order, then restart."),
                    "To add or remove sources you need a new checkpoint (or Spark 4.3's named sources with spark.sql.streaming.offsetLog.formatVersion=2 from the start).".to_string(),
                    super::new_checkpoint_step(cp),
                ])
                .fails(RestartStage::SourceCount, None, "java.lang.AssertionError"),
        );
    }
    out
}

/// A pasted concurrent-update error (`concurrent-writers`): two writers on one checkpoint.
fn concurrent_writers(
    cp: &Checkpoint,
    _ctx: &Context,
    text: &str,
    parsed: &ParsedError,
    latest: Option<(i64, &OffsetSeq)>,
) -> Vec<Finding> {
    let mut out = Vec::new();
    // Commits beyond the latest offsets file make every restart collide with itself (`commit-ahead-of-offsets`
    // explains the error): no second writer, and restarting once more does not help.
    if cp.last_committed_batch_id() > cp.last_batch_id() {
        return out;
    }
    if parsed.error_classes.iter().any(|c| c == "CONCURRENT_STREAM_LOG_UPDATE" || c == "CONCURRENT_QUERY")
        || text.contains("concurrently using")
        || text.contains("Multiple streaming jobs detected")
    {
        let batch = text
            .split("detected for ")
            .nth(1)
            .and_then(|r| r.split(|c: char| !c.is_ascii_digit()).next())
            .and_then(|n| n.parse::<i64>().ok());
        let mut f = Finding::new(
            Code::ConcurrentWriters,
            Severity::Error,
            "Two queries wrote to this checkpoint at the same time",
        )
        .classes(&["CONCURRENT_STREAM_LOG_UPDATE", "CONCURRENT_QUERY", "_LEGACY_ERROR_TEMP_2207"]);
        match batch {
            Some(b) => {
                let p = if cp.commits.contains_key(&b) { format!("commits/{b}") } else { format!("offsets/{b}") };
                f = f.evidence(
                    &p,
                    format!(
                        "batch {b} named by the error; present in the checkpoint: offsets {} commits {}",
                        cp.offsets.contains_key(&b),
                        cp.commits.contains_key(&b)
                    ),
                    None,
                );
            }
            None => {
                f = f.evidence(
                    latest.map(|(id, _)| format!("offsets/{id}")).unwrap_or("offsets".into()),
                    "latest batch file",
                    None,
                );
            }
        }
        for t in cp.temp_files.iter().take(5) {
            f = f.evidence(&t.path, "leftover temp file of a concurrent or interrupted write", None);
        }
        let orphan = cp.hadoop_crcs.values().find(|c| {
            !c.main_exists
                && (c.main.starts_with("offsets/") || c.main.starts_with("commits/") || c.main.starts_with("sources/"))
        });
        if let Some(o) = orphan {
            f = f.evidence(&o.path, format!("orphan Hadoop sidecar of the absent {}: a rename onto it fails and Spark calls that \"concurrently using\"", o.main), None);
        }
        f = f
            .why("Spark writes each batch's offsets and commit files with an atomic rename that must not overwrite; when the file already exists another writer created it first (another run of the query in a second driver or session, a retried job, or an orphan .crc sidecar).")
            .fix(&[
                "Stop every other run of this query (other drivers, schedulers, retries); only one may use a checkpoint location at a time.".to_string(),
                "Then restart once: the checkpoint itself is consistent (the winner's files).".to_string(),
                "If no other run exists, look for orphan `.<n>.crc` files in offsets/, commits/, sources/<n>/ and delete them.".to_string(),
            ])
            .fails(RestartStage::LogWrite, parsed.error_class().filter(|c| c.starts_with("CONCURRENT")), parsed.exception().unwrap_or("org.apache.spark.SparkException"));
        out.push(f);
    }
    out
}

/// A pasted missing-state error where the state is indeed absent (`stateful-operator-without-state`).
fn stateful_operator_without_state(
    cp: &Checkpoint,
    ctx: &Context,
    text: &str,
    parsed: &ParsedError,
    latest: Option<(i64, &OffsetSeq)>,
) -> Vec<Finding> {
    let mut out = Vec::new();
    let state_err = parsed.error_classes.iter().any(|c| c == "STREAMING_STATEFUL_OPERATOR_MISSING_STATE_DIRECTORY")
        || text.contains("Error reading delta file")
        || text.contains("Error reading streaming state file");
    if state_err {
        let named: Option<(i64, String)> = text.split("/state/").nth(1).and_then(|r| {
            let p: String = r.chars().take_while(|c| !c.is_whitespace() && *c != ',' && *c != ']').collect();
            let op = p.split('/').next()?.parse::<i64>().ok()?;
            Some((op, format!("state/{p}")))
        });
        let op_missing = named.as_ref().is_some_and(|(op, _)| !cp.state.operators.contains_key(op));
        if !cp.state.present || cp.state.operators.is_empty() || op_missing {
            let v = spark(ctx);
            let (path, detail) = match &named {
                Some((op, p)) if cp.state.present => (format!("state/{op}"), format!("absent; the error names {p}")),
                Some((_, p)) => {
                    ("state".to_string(), format!("no state/ directory in the checkpoint; the error names {p}"))
                }
                None => ("state".to_string(), "no state/ directory in the checkpoint".to_string()),
            };
            let committed = cp.last_committed_batch_id();
            out.push(
                Finding::new(Code::StatefulOperatorWithoutState, Severity::Error, "The restarted query has a stateful operator whose state is not in the checkpoint")
                    .classes(&["STREAMING_STATEFUL_OPERATOR_MISSING_STATE_DIRECTORY", "CANNOT_LOAD_STATE_STORE.CANNOT_READ_DELTA_FILE_NOT_EXISTS", "CANNOT_LOAD_STATE_STORE.CANNOT_READ_STREAMING_STATE_FILE"])
                    .evidence(path, detail, None)
                    .evidence(latest.map(|(id, _)| format!("offsets/{id}")).unwrap_or("offsets".into()), format!("batches ran up to {} without this operator's state", committed.map(|c| c.to_string()).unwrap_or("-".into())), None)
                    .why(format!(
                        "Either the state files were deleted or not copied, or the query was changed to add a stateful operator (aggregation, dropDuplicates, join, mapGroupsWithState) that the checkpoint never had. On restart the operator loads state version {} and finds no files; Spark {v} reports {}.",
                        cp.restart_batch().unwrap_or(0),
                        if v.at_least(4, 3) { "STREAMING_STATEFUL_OPERATOR_MISSING_STATE_DIRECTORY" } else if v.at_least(4, 0) { "CANNOT_LOAD_STATE_STORE.CANNOT_READ_DELTA_FILE_NOT_EXISTS for version 1's delta" } else { "\"Error reading delta file ... 1.delta does not exist\"" }
                    ))
                    .fix(&[
                        "If state/ was lost: restore it from the original checkpoint or a backup.".to_string(),
                        "If you added a stateful operator: run the changed query on a NEW checkpoint location (adding stateful operators to an existing checkpoint is not supported), or remove the operator.".to_string(),
                        super::new_checkpoint_step(cp),
                    ])
                    .fails(RestartStage::StateDirectory, parsed.error_class(), parsed.exception().unwrap_or("org.apache.spark.SparkException")),
            );
        }
    }
    out
}

/// A pasted state schema incompatibility (`state-schema-changed`): the stored schemas as evidence.
fn state_schema_changed(
    cp: &Checkpoint,
    _ctx: &Context,
    text: &str,
    parsed: &ParsedError,
    _latest: Option<(i64, &OffsetSeq)>,
) -> Vec<Finding> {
    let mut out = Vec::new();
    let schema_classes = ["STATE_STORE_KEY_SCHEMA_NOT_COMPATIBLE", "STATE_STORE_VALUE_SCHEMA_NOT_COMPATIBLE"];
    let schema_class = parsed.error_classes.iter().find(|c| schema_classes.contains(&c.as_str())).cloned();
    if schema_class.is_some()
        || text.contains("StateSchemaNotCompatible")
        || text.contains("schema doesn't match to the schema for existing state")
    {
        let mut f = Finding::new(
            Code::StateSchemaChanged,
            Severity::Error,
            "The restarted query's state schema does not match the schema stored in the checkpoint",
        )
        .classes(&schema_class.as_deref().map(|c| vec![c]).unwrap_or_else(|| schema_classes.to_vec()));
        f = stored_schemas(f, cp);
        f = f
            .why("Spark checks the key and value schema of every stateful operator against the schema file written by the first run. Changing an aggregation (adding/removing/retyping a column), the grouping keys, or the state type of (flat)MapGroupsWithState changes the state rows, and the old rows cannot be read with the new schema.")
            .fix(&[
                "Revert the query change so the state schema is the stored one, then restart.".to_string(),
                "If the change is needed: run the new query on a NEW checkpoint location (state starts empty) and let it catch up.".to_string(),
                "Only for a change that keeps the rows' layout (a renamed column, say): spark.sql.streaming.stateStore.stateSchemaCheck=false skips the schema check (results may be wrong). It does not skip the check of the loaded rows (spark.sql.streaming.stateStore.formatValidation.enabled): a key or value with other fields still fails, with CANNOT_LOAD_STATE_STORE.KEY_ROW_FORMAT_VALIDATION_FAILURE or VALUE_ROW_FORMAT_VALIDATION_FAILURE (a newcomer's restarts on 4.1.4 with a grouping column added).".to_string(),
                super::new_checkpoint_step(cp),
            ])
            .fails(RestartStage::StateSchema, parsed.error_class(), parsed.exception().unwrap_or("org.apache.spark.sql.execution.streaming.state.StateSchemaNotCompatible"));
        out.push(f);
    }
    out
}

/// The stored key and value schemas as evidence (what to compare with the restarted query).
fn stored_schemas(mut f: Finding, cp: &Checkpoint) -> Finding {
    for (path, s) in &cp.state_schemas {
        match s {
            Ok((k, v)) => f = f.evidence(path, format!("stored key schema {k}; stored value schema {v}"), None),
            Err(p) => f = f.evidence(path, format!("schema file unreadable: {}", p.reason), p.offset),
        }
    }
    if cp.state_schemas.is_empty() {
        f = f.evidence("state", "no readable schema file (Spark 3.5+ writes state/<op>/0/_metadata/schema)", None);
    }
    f
}

/// Spark 3.x's untyped "state format invalidation" (`InvalidUnsafeRowException`, thrown when
/// `StateStoreProvider`'s row format validation, `spark.sql.streaming.stateStore.formatValidation.enabled`, finds a
/// stored key or value row that does not fit the query's schema, e.g. "Variable-length field validation error"):
/// the query changed (or the state was written by an incompatible build), whatever the files look like.
fn state_format_invalidation(
    cp: &Checkpoint,
    _ctx: &Context,
    text: &str,
    parsed: &ParsedError,
    _latest: Option<(i64, &OffsetSeq)>,
) -> Vec<Finding> {
    let schema_class = parsed.error_classes.iter().any(|c| c.starts_with("STATE_STORE_") && c.contains("SCHEMA"));
    let invalidation = text.contains("InvalidUnsafeRowException")
        || text.contains("state format invalidation")
        || text.contains("Variable-length field validation error");
    if schema_class || !invalidation || text.contains("StateSchemaNotCompatible") {
        return vec![];
    }
    let f = Finding::new(
        Code::StateSchemaChanged,
        Severity::Error,
        "The pasted error is Spark's state format invalidation: stored state rows do not fit the restarted query's key or value schema",
    );
    let f = stored_schemas(f, cp)
        .why("Spark 3.x validates the first state rows it loads against the query's key and value schema (InvalidUnsafeRowException: \"The streaming query failed by state format invalidation\"; the detail, e.g. \"Variable-length field validation error\" or \"fields num mismatch\", says which check failed). The files can be intact: the restarted query's grouping keys, aggregation or state type differ from the ones that wrote the state, or the state was written by an incompatible Spark build.")
        .fix(&[
            "Compare the stored key and value schema above (state/<op>/<partition>/_metadata/schema, or state/<op>/_stateSchema/ on Spark 4) with the restarted query: its grouping keys (and their order and types), its aggregation columns, its state type.".to_string(),
            "Revert the query change so the schemas match, then restart on this checkpoint.".to_string(),
            "If the change is needed: run the new query on a NEW checkpoint location (state starts empty) and let it catch up.".to_string(),
            super::new_checkpoint_step(cp),
        ])
        .fails(RestartStage::StateRowValidation, None, "org.apache.spark.sql.execution.streaming.state.InvalidUnsafeRowException");
    vec![f]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_classes_and_exceptions() {
        let t = "org.apache.spark.sql.streaming.StreamingQueryException: [STREAM_FAILED] Query [id = x, runId = y] terminated with exception: [CANNOT_LOAD_STATE_STORE.UNCATEGORIZED] An error occurred.\nCaused by: org.apache.spark.SparkException: [CANNOT_LOAD_STATE_STORE.UNCATEGORIZED] x\nCaused by: org.apache.spark.SparkException: [CHECKPOINT_FILE_CHECKSUM_VERIFICATION_FAILED] y";
        let p = parse_error_text(t);
        assert_eq!(p.error_class(), Some("CANNOT_LOAD_STATE_STORE.UNCATEGORIZED"));
        assert_eq!(p.error_classes[1], "CHECKPOINT_FILE_CHECKSUM_VERIFICATION_FAILED");
        assert_eq!(p.exception(), Some("org.apache.spark.SparkException"));
        let p = parse_error_text("java.lang.IllegalStateException: Failed to read log file x. Incomplete log file");
        assert_eq!(p.exception(), Some("java.lang.IllegalStateException"));
        assert_eq!(p.error_class(), None);
    }
}
