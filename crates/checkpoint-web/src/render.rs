//! The report for people: Markdown for a ticket and a short plain-text summary for the clipboard.
//!
//! Both render the same [`Report`] value the page shows; nothing is recomputed here.

use checkpoint_core::present::{self, Frontend};
use checkpoint_core::report::{CheckpointReport, Finding, Severity};
use checkpoint_core::Report;
use std::fmt::Write;

/// The verdict sentence for one checkpoint (the core's words: [`present::verdict`]).
pub fn verdict(c: &CheckpointReport) -> String {
    present::verdict(c)
}

fn severity_word(s: Severity) -> &'static str {
    present::severity_word(s)
}

/// Findings in display order (the core's order: [`present::ordered_findings`]).
pub fn ordered_findings(c: &CheckpointReport) -> Vec<&Finding> {
    present::ordered_findings(c)
}

/// Escapes text for a Markdown table cell or inline text (pipes and line breaks).
fn cell(s: &str) -> String {
    s.replace('|', "\\|").replace(['\r', '\n'], " ")
}

fn root_label(c: &CheckpointReport) -> String {
    if c.root.is_empty() {
        "(archive top)".to_string()
    } else {
        c.root.clone()
    }
}

fn opt_i64(v: Option<i64>) -> String {
    v.map(|x| x.to_string()).unwrap_or_else(|| "—".to_string())
}

/// The whole report as GitHub-flavoured Markdown: verdict, findings (evidence, why, fix), batches, sources,
/// recorded confs (forced ones marked) and operators, per checkpoint.
pub fn markdown(report: &Report) -> String {
    let mut s = String::new();
    let _ = writeln!(s, "# Spark checkpoint inspection: {}", cell(&report.input.name));
    let _ = writeln!(
        s,
        "\n_checkpoint-inspector {} · {} bytes · {} entries · {} checkpoint(s)_",
        report.inspector_version,
        report.input.bytes,
        report.input.entries,
        report.checkpoints.len()
    );
    if report.checkpoints.is_empty() {
        let _ = writeln!(s, "\nNo Spark checkpoint was found in this input.");
    }
    for c in &report.checkpoints {
        checkpoint_markdown(&mut s, c);
    }
    s
}

fn checkpoint_markdown(s: &mut String, c: &CheckpointReport) {
    let kind = serde_json::to_value(c.kind).ok().and_then(|v| v.as_str().map(str::to_string)).unwrap_or_default();
    let _ = writeln!(s, "\n## Checkpoint `{}` ({kind})", root_label(c));
    let _ = writeln!(s, "\n**Verdict on Spark {}: {}.**", c.restart.assumed_spark_version, verdict(c));
    if let Some(ex) = &c.restart.exception {
        let _ = writeln!(s, "Exception: `{ex}`.");
    }
    let summary = present::summary(&c.restart);
    if !summary.is_empty() {
        let _ = writeln!(s, "\n{summary}");
    }
    if let Some(a) = present::assumption(c, Frontend::Document) {
        let _ = writeln!(s, "\n_The verdict {a}._");
    }
    let _ = writeln!(
        s,
        "\n- Query id: {}\n- Last planned batch (offsets/): {}\n- Last committed batch (commits/): {}",
        c.query_id.as_deref().unwrap_or("—"),
        opt_i64(c.last_batch_id),
        opt_i64(c.last_committed_batch_id)
    );
    let findings = ordered_findings(c);
    let _ = writeln!(s, "\n### Findings ({})", findings.len());
    if findings.is_empty() {
        let _ = writeln!(s, "\nNo findings.");
    }
    for f in findings {
        let _ = writeln!(
            s,
            "\n#### {} — {} (`{}`){}",
            severity_word(f.severity).to_uppercase(),
            cell(&f.title),
            f.code,
            if f.explains_error_text { " — explains the pasted error" } else { "" }
        );
        if !f.error_classes.is_empty() {
            let list: Vec<String> = f.error_classes.iter().map(|e| format!("`{e}`")).collect();
            let _ = writeln!(s, "\nSpark error classes: {}", list.join(", "));
        }
        if !f.evidence.is_empty() {
            let _ = writeln!(s, "\nEvidence:");
            for e in &f.evidence {
                let size = e.size.map(|n| format!(" ({n} bytes)")).unwrap_or_default();
                let off = e.offset.map(|o| format!(", byte {o}")).unwrap_or_default();
                let _ = writeln!(s, "- `{}`{size}{off}: {}", e.path, cell(&e.detail));
            }
        }
        if !f.why.is_empty() {
            let _ = writeln!(s, "\nWhy: {}", f.why);
        }
        if !f.fix.is_empty() {
            let _ = writeln!(s, "\nFix (safest first):");
            for (i, step) in f.fix.iter().enumerate() {
                let _ = writeln!(s, "{}. {}", i + 1, cell(step));
            }
        }
    }
    if !c.batches.is_empty() {
        let _ = writeln!(s, "\n### Batches\n\n| batch | offsets | committed | timestamp (UTC ms) | watermark (ms) |");
        let _ = writeln!(s, "|---:|:---:|:---:|---:|---:|");
        for b in &c.batches {
            let _ = writeln!(
                s,
                "| {} | {} | {} | {} | {} |",
                b.batch_id,
                if b.has_offsets { "yes" } else { "**no**" },
                if b.committed { "yes" } else { "**no**" },
                opt_i64(b.timestamp_ms),
                opt_i64(b.watermark_ms)
            );
        }
    }
    if !c.sources.is_empty() {
        let _ = writeln!(s, "\n### Sources (latest offsets)\n\n| # | kind | latest offset |\n|---:|---|---|");
        for src in &c.sources {
            let off = src.latest_offset.as_ref().map(|v| v.to_string()).unwrap_or_else(|| "—".into());
            let _ = writeln!(s, "| {} | {} | `{}` |", src.index, cell(&src.kind), cell(&off));
        }
    }
    if !c.conf.is_empty() {
        let _ = writeln!(s, "\n### Recorded confs\n\n| conf | recorded value | forced on restart |\n|---|---|---|");
        for (k, v) in &c.conf {
            let forced = c.forced_conf.iter().find(|f| &f.key == k);
            let mark = match forced {
                Some(f) => match &f.session {
                    Some(sv) => format!("**yes** (session sets {})", cell(sv)),
                    None => "**yes**".to_string(),
                },
                None => String::new(),
            };
            let _ = writeln!(s, "| `{}` | `{}` | {} |", cell(k), cell(v), mark);
        }
    }
    if !c.operators.is_empty() {
        let _ = writeln!(
            s,
            "\n### Stateful operators\n\n| operator | name | stores | partitions | provider | latest version |\n|---:|---|---|---:|---|---:|"
        );
        for o in &c.operators {
            let _ = writeln!(
                s,
                "| {} | {} | {} | {} | {} | {} |",
                o.operator_id,
                o.name.as_deref().unwrap_or("—"),
                cell(&o.store_names.join(", ")),
                o.partitions,
                cell(&o.provider),
                opt_i64(o.latest_version)
            );
        }
    }
    let needs = present::needs(c, Frontend::Document);
    if !needs.is_empty() {
        let _ = writeln!(s, "\n### To sharpen the diagnosis");
        for n in &needs {
            let _ = writeln!(s, "- {}", cell(n));
        }
    }
}

/// A few plain-text lines for the clipboard: per checkpoint the verdict and the top findings.
pub fn summary(report: &Report) -> String {
    let mut s = String::new();
    if report.checkpoints.is_empty() {
        let _ = writeln!(s, "{}: no Spark checkpoint found.", report.input.name);
    }
    for c in &report.checkpoints {
        let errors = c.findings.iter().filter(|f| f.severity == Severity::Error).count();
        let warnings = c.findings.iter().filter(|f| f.severity == Severity::Warning).count();
        let where_ =
            if c.root.is_empty() { report.input.name.clone() } else { format!("{}:{}", report.input.name, c.root) };
        let _ = writeln!(
            s,
            "{where_}: on Spark {} the query {} ({errors} error(s), {warnings} warning(s)).",
            c.restart.assumed_spark_version,
            verdict(c)
        );
        for f in ordered_findings(c).into_iter().filter(|f| f.severity != Severity::Info).take(3) {
            let _ = writeln!(s, "- [{}] {} ({})", severity_word(f.severity), f.title, f.code);
        }
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use checkpoint_core::checks::catalogue::Code;
    use checkpoint_core::report::{
        BatchInfo, CheckpointKind, Evidence, ForcedConf, InputInfo, RestartOutcome, RestartPrediction,
    };

    fn sample() -> Report {
        let finding = |code: Code, sev: Severity, explains: bool| Finding {
            code,
            severity: sev,
            title: format!("title of {code}"),
            error_classes: vec!["CANNOT_LOAD_STATE_STORE.CANNOT_READ_DELTA_FILE_NOT_EXISTS".into()],
            evidence: vec![Evidence {
                path: "state/0/1/7.delta".into(),
                detail: "absent | gone".into(),
                offset: None,
                size: None,
            }],
            why: "because".into(),
            fix: vec!["first".into(), "second".into()],
            explains_error_text: explains,
            restart_failure: None,
        };
        Report {
            inspector_version: "0.1.0".into(),
            input: InputInfo { name: "chk.zip".into(), bytes: 10, entries: 2 },
            checkpoints: vec![CheckpointReport {
                root: String::new(),
                kind: CheckpointKind::StructuredStreaming,
                query_id: Some("q".into()),
                batches: vec![BatchInfo {
                    batch_id: 0,
                    has_offsets: true,
                    committed: false,
                    timestamp_ms: Some(5),
                    watermark_ms: Some(0),
                    next_watermark_ms: None,
                }],
                last_batch_id: Some(0),
                last_committed_batch_id: None,
                conf: [("spark.sql.shuffle.partitions".to_string(), "3".to_string())].into_iter().collect(),
                sources: vec![],
                operators: vec![],
                findings: vec![
                    finding(Code::LogFilesNotRead, Severity::Info, false),
                    finding(Code::OperatorMetadataUnreadable, Severity::Warning, true),
                    finding(Code::MetadataUnreadable, Severity::Error, false),
                ],
                restart: RestartPrediction {
                    outcome: RestartOutcome::Fails,
                    error_class: Some("CANNOT_LOAD_STATE_STORE.CANNOT_READ_DELTA_FILE_NOT_EXISTS".into()),
                    exception: Some("org.apache.spark.SparkException".into()),
                    assumed_spark_version: "4.1.4".into(),
                    first_batch_id: None,
                    state_version_loaded: None,
                    summary: String::new(),
                    assumption: None,
                },
                dstream: None,
                forced_conf: vec![ForcedConf {
                    key: "spark.sql.shuffle.partitions".into(),
                    recorded: "3".into(),
                    session: Some("5".into()),
                    note: "n".into(),
                }],
                needs: vec![],
                hints: vec![],
                restart_plan: None,
                sink_logs: vec![],
            }],
        }
    }

    #[test]
    fn orders_explaining_findings_first_then_by_severity() {
        let r = sample();
        let codes: Vec<&str> = ordered_findings(&r.checkpoints[0]).iter().map(|f| f.code.as_str()).collect();
        assert_eq!(codes, ["operator-metadata-unreadable", "metadata-unreadable", "log-files-not-read"]);
    }

    #[test]
    fn markdown_has_verdict_findings_and_forced_conf() {
        let md = markdown(&sample());
        assert!(md.contains(
            "**Verdict on Spark 4.1.4: will fail with CANNOT_LOAD_STATE_STORE.CANNOT_READ_DELTA_FILE_NOT_EXISTS.**"
        ));
        assert!(md.contains("#### ERROR — title of metadata-unreadable (`metadata-unreadable`)"));
        assert!(md.contains("- `state/0/1/7.delta`: absent \\| gone"));
        assert!(md.contains("1. first\n2. second"));
        assert!(md.contains("| `spark.sql.shuffle.partitions` | `3` | **yes** (session sets 5) |"));
        assert!(
            md.find("operator-metadata-unreadable").unwrap_or(usize::MAX)
                < md.find("(`metadata-unreadable`)").unwrap_or(0)
        );
    }

    #[test]
    fn summary_names_verdict_and_counts() {
        let s = summary(&sample());
        assert!(s.starts_with("chk.zip: on Spark 4.1.4 the query will fail with CANNOT_LOAD_STATE_STORE"));
        assert!(s.contains("(1 error(s), 1 warning(s))"));
        assert!(!s.contains("log-files-not-read"));
    }

    #[test]
    fn verdict_words() {
        let mut r = sample();
        let c = &mut r.checkpoints[0];
        c.restart.outcome = RestartOutcome::ReplaysLastBatch;
        c.restart.first_batch_id = Some(11);
        assert_eq!(verdict(c), "will replay batch 11");
        c.restart.outcome = RestartOutcome::Resumes;
        c.restart.first_batch_id = None;
        assert_eq!(verdict(c), "will resume");
    }
}
