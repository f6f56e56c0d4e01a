//! Human-readable rendering of a report for the terminal: the verdict first, then the findings with their
//! evidence, then the summary. Colour (ANSI) only when asked (stdout is a terminal).

use checkpoint_core::report::{CheckpointKind, Report, RestartOutcome, Severity};
use std::fmt::Write;

fn paint(s: &str, code: &str, colour: bool) -> String {
    if colour {
        format!("\x1b[{code}m{s}\x1b[0m")
    } else {
        s.to_string()
    }
}

/// Renders the report.
pub fn human(r: &Report, colour: bool) -> String {
    let mut o = String::new();
    let _ = writeln!(o, "{} ({} bytes, {} files)", r.input.name, r.input.bytes, r.input.entries);
    for cp in &r.checkpoints {
        let root = if cp.root.is_empty() { "(archive top)".to_string() } else { cp.root.clone() };
        let kind = match cp.kind {
            CheckpointKind::StructuredStreaming => "Structured Streaming",
            CheckpointKind::Dstream => "DStream",
            CheckpointKind::Unknown => "unknown",
        };
        let _ = writeln!(o, "\n== Checkpoint {root} [{kind}]");
        let (verdict, code) = match cp.restart.outcome {
            RestartOutcome::Resumes => ("WILL RESTART (resumes)", "1;32"),
            RestartOutcome::ReplaysLastBatch => ("WILL RESTART (replays the last batch)", "1;32"),
            RestartOutcome::Fails => ("WILL NOT RESTART", "1;31"),
            RestartOutcome::Unknown => ("RESTART UNKNOWN", "1;33"),
        };
        let _ = writeln!(o, "{} on Spark {}", paint(verdict, code, colour), cp.restart.assumed_spark_version);
        if let Some(c) = &cp.restart.error_class {
            let _ = writeln!(o, "  error class: {c}");
        }
        if let Some(e) = &cp.restart.exception {
            let _ = writeln!(o, "  exception:   {e}");
        }
        if !cp.restart.summary.is_empty() {
            let _ = writeln!(o, "  {}", cp.restart.summary);
        }
        // What the verdict assumes (the Spark version when none was given, inputs it lacks) belongs next to it.
        for n in &cp.needs {
            let _ = writeln!(o, "  note: {n}");
        }
        if !cp.findings.is_empty() {
            let _ = writeln!(o, "\nFindings:");
        }
        for f in &cp.findings {
            let (tag, c) = match f.severity {
                Severity::Error => ("ERROR", "31"),
                Severity::Warning => ("WARN ", "33"),
                Severity::Info => ("INFO ", "36"),
            };
            let star = if f.explains_error_text { " (explains the pasted error)" } else { "" };
            let _ = writeln!(o, "- {} [{}] {}{star}", paint(tag, c, colour), f.code, f.title);
            if !f.error_classes.is_empty() {
                let _ = writeln!(o, "    Spark error classes: {}", f.error_classes.join(", "));
            }
            for e in &f.evidence {
                let off = e.offset.map(|x| format!(" @ byte {x}")).unwrap_or_default();
                let _ = writeln!(o, "    evidence: {}{off}: {}", e.path, e.detail);
            }
            if !f.why.is_empty() {
                let _ = writeln!(o, "    why: {}", f.why);
            }
            for (i, s) in f.fix.iter().enumerate() {
                let _ = writeln!(o, "    fix {}: {s}", i + 1);
            }
        }
        let _ = writeln!(o, "\nSummary:");
        let _ = writeln!(o, "  query id: {}", cp.query_id.as_deref().unwrap_or("(unknown)"));
        let opt = |x: Option<i64>| x.map(|v| v.to_string()).unwrap_or_else(|| "-".into());
        let _ = writeln!(
            o,
            "  batches: {} (last planned {}, last committed {})",
            cp.batches.len(),
            opt(cp.last_batch_id),
            opt(cp.last_committed_batch_id)
        );
        for s in &cp.sources {
            let off = s.latest_offset.as_ref().map(|v| v.to_string()).unwrap_or_else(|| "-".into());
            let _ = writeln!(o, "  source #{} {}: {off}", s.index, s.kind);
        }
        for op in &cp.operators {
            let _ = writeln!(
                o,
                "  operator {}{}: {} partition(s), provider {}, stores [{}], latest state version {}",
                op.operator_id,
                op.name.as_deref().filter(|n| !n.is_empty()).map(|n| format!(" ({n})")).unwrap_or_default(),
                op.partitions,
                op.provider,
                op.store_names.join(", "),
                opt(op.latest_version)
            );
        }
        if let Some(v) = cp.restart.state_version_loaded {
            let _ = writeln!(o, "  a restart loads state version {v}");
        }
        let important: Vec<_> = cp
            .forced_conf
            .iter()
            .filter(|f| {
                f.key == "spark.sql.shuffle.partitions" || f.key.contains("providerClass") || f.session.is_some()
            })
            .collect();
        for f in important {
            let sess = f.session.as_ref().map(|s| format!(" (session: {s}, overridden)")).unwrap_or_default();
            let _ = writeln!(o, "  forced conf {} = {}{sess}", f.key, f.recorded);
        }
        if let Some(d) = &cp.dstream {
            let _ = writeln!(o, "  DStream checkpoint times: {}", d.checkpoint_times_ms.len());
        }
    }
    o
}
