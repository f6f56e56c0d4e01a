//! The restart prediction (resumes / replays the last batch / fails with which error class or exception)
//! for the assumed Spark version, following the order in which Spark checks things on restart
//! (FORMATS.md §16): the earliest failing finding wins. When the user pasted the error Spark printed and it
//! names an error class or exception, the prediction follows what Spark really printed.

use crate::checks::error_text::parse_error_text;
use crate::model::Checkpoint;
use crate::report::{CheckpointKind, Finding, RestartOutcome, RestartPrediction};
use crate::Context;

/// Predicts the restart for one checkpoint from its findings (already matched to the error text).
pub fn predict(cp: &Checkpoint, ctx: &Context, findings: &[Finding]) -> RestartPrediction {
    let v = ctx.spark_version.unwrap_or(crate::SparkVersion::NEWEST);
    let first_batch_id = cp.restart_batch();
    let stateful = cp.state.present && !cp.state.operators.is_empty();
    let mut p = RestartPrediction {
        outcome: RestartOutcome::Resumes,
        error_class: None,
        exception: None,
        assumed_spark_version: v.to_string(),
        first_batch_id,
        state_version_loaded: if stateful { first_batch_id } else { None },
        summary: String::new(),
        assumption: None,
    };
    if cp.kind.0 == CheckpointKind::Unknown {
        p.outcome = RestartOutcome::Unknown;
        p.first_batch_id = None;
        p.summary = "Not a Structured Streaming checkpoint; no restart prediction.".into();
        return p;
    }
    let failing = findings
        .iter()
        .filter_map(|f| f.restart_failure.as_ref().map(|r| (f, r)))
        .min_by_key(|(f, r)| (if f.explains_error_text { 0 } else { 1 }, r.stage));
    let parsed = ctx.error_text.as_deref().map(parse_error_text);
    if let Some(pe) = parsed.as_ref().filter(|pe| pe.names_a_failure()) {
        as_pasted(&mut p, pe, failing, findings);
        return p;
    }
    // A zip entry a restart reads could not be unpacked, is in the zip twice with different bytes, or the input
    // could not give it: unless Spark fails before reading the logs (stage < 20, FORMATS.md §16), the outcome
    // depends on that file.
    let unreadable = findings.iter().find(|f| {
        matches!(f.code, crate::report::Code::ArchiveEntryUnreadable | crate::report::Code::ArchiveEntryDuplicated)
            && f.severity == crate::report::Severity::Error
    });
    if let Some(u) =
        unreadable.filter(|_| failing.is_none_or(|(_, r)| r.stage >= crate::report::RestartStage::LatestOffsets))
    {
        p.outcome = RestartOutcome::Unknown;
        // A zip entry that does not unpack (its title says so) is mended by zipping again; a file a directory
        // input does not give, by the finding's own fix.
        p.summary = if u.title.contains("zip entry") {
            format!("Unknown: {}; re-create the zip and run again.", u.title)
        } else {
            format!("Unknown: {}.", u.title)
        };
        return p;
    }
    // A file a restart reads was not verified (a limit of this inspector, a zip it cannot unpack): unless
    // Spark fails before, the outcome depends on that file.
    let limited = findings.iter().find(|f| {
        matches!(
            f.code,
            crate::report::Code::FileNotVerified
                | crate::report::Code::ArchiveCompressionUnsupported
                | crate::report::Code::ArchiveEntriesOverlap
        ) && f.severity == crate::report::Severity::Warning
    });
    if let Some(u) =
        limited.filter(|_| failing.is_none_or(|(_, r)| r.stage >= crate::report::RestartStage::LatestOffsets))
    {
        p.outcome = RestartOutcome::Unknown;
        p.summary = format!("Unknown: {}.", u.title);
        return p;
    }
    // An offsets file a restart reads has more sources than were examined one by one: unless Spark fails by
    // then (its source count, an offset examined), what those sources do on restart is not verified.
    let not_examined = findings.iter().find(|f| {
        f.code == crate::report::Code::SourceLinesNotExamined && f.severity == crate::report::Severity::Warning
    });
    if let Some(u) =
        not_examined.filter(|_| failing.is_none_or(|(_, r)| r.stage > crate::report::RestartStage::SourceOffsets))
    {
        p.outcome = RestartOutcome::Unknown;
        p.summary = format!("Unknown: {}.", u.title);
        return p;
    }
    if let Some((f, r)) = failing {
        p.outcome = RestartOutcome::Fails;
        p.error_class = r.error_class.clone();
        p.exception = Some(r.exception.clone());
        p.summary = format!("Spark {v} fails: {}.", f.title);
        return p;
    }
    if cp.kind.0 == CheckpointKind::Dstream {
        p.first_batch_id = None;
        p.summary = match crate::dstream::recovery::recovered(&cp.dstream_files) {
            Some(f) => format!("Spark {v} recovers the StreamingContext from {} and goes on.", f.path),
            None => "No DStream checkpoint file to recover from: the StreamingContext is created anew.".into(),
        };
        return p;
    }
    let replay = match (cp.last_batch_id(), cp.last_committed_batch_id()) {
        (Some(l), Some(c)) => c < l,
        (Some(_), None) => true,
        _ => false,
    };
    if replay {
        p.outcome = RestartOutcome::ReplaysLastBatch;
        p.summary = format!(
            "Spark {v} re-runs batch {} (planned, not committed) and goes on.",
            first_batch_id.map(|b| b.to_string()).unwrap_or_default()
        );
    } else if cp.offsets.is_empty() && cp.commits.is_empty() {
        p.summary = "No batch recorded yet: the query starts from the beginning.".into();
    } else {
        p.summary =
            format!("Spark {v} resumes with batch {}.", first_batch_id.map(|b| b.to_string()).unwrap_or_default());
    }
    p
}

/// The prediction of a pasted error that names a failure: its class and exception (else the failing finding's,
/// else the wrapper's), and the finding that explains it.
fn as_pasted(
    p: &mut RestartPrediction,
    pe: &crate::checks::error_text::ParsedError,
    failing: Option<(&Finding, &crate::report::RestartFailure)>,
    findings: &[Finding],
) {
    p.outcome = RestartOutcome::Fails;
    p.error_class = pe.error_class().map(str::to_string).or_else(|| legacy_class(failing, pe));
    p.exception = pe
        .exception()
        .map(str::to_string)
        .or_else(|| failing.map(|(_, r)| r.exception.clone()))
        .or_else(|| pe.stream_failed.then(|| "org.apache.spark.sql.streaming.StreamingQueryException".to_string()));
    let why = findings.iter().find(|f| f.explains_error_text).map(|f| f.title.clone());
    p.summary = match why {
        Some(t) => format!("Fails as in the pasted error: {t}."),
        None => "Fails as in the pasted error; the files do not show the cause (see the findings).".into(),
    };
}

/// Spark prints no `[CLASS]` for a legacy error class (`_LEGACY_ERROR_TEMP_…`; `getCondition()` still names it):
/// the finding that explains the pasted text and fails with the same exception knows it.
fn legacy_class(
    failing: Option<(&Finding, &crate::report::RestartFailure)>,
    pe: &crate::checks::error_text::ParsedError,
) -> Option<String> {
    failing
        .filter(|(f, r)| f.explains_error_text && pe.exception() == Some(r.exception.as_str()))
        .and_then(|(_, r)| r.error_class.clone())
        .filter(|c| c.starts_with("_LEGACY_ERROR_TEMP_"))
}
