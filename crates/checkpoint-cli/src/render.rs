//! Human-readable rendering of a report for the terminal: the verdict first, then the findings with their
//! evidence, then the summary. Colour (ANSI) only when asked (stdout is a terminal).

use checkpoint_core::present::{self, Frontend};
use checkpoint_core::report::{CheckpointKind, Report, RestartOutcome, Severity};
use std::fmt::Write;

fn paint(s: &str, code: &str, colour: bool) -> String {
    if colour {
        format!("\x1b[{code}m{s}\x1b[0m")
    } else {
        s.to_string()
    }
}

/// At most `max` characters of `s`, control characters shown escaped (`\u{1b}`): a longer text ends with
/// `… (N bytes in all)`, so that one huge value (a 10 MB offset line) cannot flood the terminal nor a hostile file
/// name or query id send escape sequences to it. The JSON output keeps everything as it is.
pub(crate) fn clip(s: &str, max: usize) -> String {
    let mut out = String::new();
    for (n, c) in s.chars().enumerate() {
        if n == max {
            let _ = write!(out, "… ({} bytes in all)", s.len());
            break;
        }
        if c.is_control() {
            let _ = write!(out, "{}", c.escape_unicode());
        } else {
            out.push(c);
        }
    }
    out
}

/// Renders the report.
pub fn human(r: &Report, colour: bool) -> String {
    let mut o = String::new();
    let _ = writeln!(o, "{} ({} bytes, {} files)", clip(&r.input.name, 300), r.input.bytes, r.input.entries);
    for cp in &r.checkpoints {
        let root = if cp.root.is_empty() { "(archive top)".to_string() } else { clip(&cp.root, 300) };
        let kind = match cp.kind {
            CheckpointKind::StructuredStreaming => "Structured Streaming",
            CheckpointKind::Dstream => "DStream",
            CheckpointKind::Unknown => "unknown",
        };
        let _ = writeln!(o, "\n== Checkpoint {root} [{kind}]");
        let code = match cp.restart.outcome {
            RestartOutcome::Resumes | RestartOutcome::ReplaysLastBatch => "1;32",
            RestartOutcome::Fails => "1;31",
            RestartOutcome::Unknown => "1;33",
        };
        let verdict = present::headline(cp, Frontend::Cli);
        let _ = writeln!(o, "{} on Spark {}", paint(&verdict, code, colour), cp.restart.assumed_spark_version);
        if let Some(a) = present::assumption(cp, Frontend::Cli) {
            let _ = writeln!(o, "  ({})", clip(&a, 400));
        }
        if let Some(c) = &cp.restart.error_class {
            let _ = writeln!(o, "  error class: {c}");
        }
        if let Some(e) = &cp.restart.exception {
            let _ = writeln!(o, "  exception:   {e}");
        }
        // The assumption is printed next to the verdict; the summary repeats it for JSON readers only.
        let summary = present::summary(&cp.restart);
        if !summary.is_empty() {
            let _ = writeln!(o, "  {}", clip(summary, 600));
        }
        // What the verdict assumes (the Spark version when none was given, inputs it lacks) belongs next to it.
        for n in present::needs(cp, Frontend::Cli) {
            let _ = writeln!(o, "  note: {}", clip(&n, 2000));
        }
        if !cp.findings.is_empty() {
            let _ = writeln!(o, "\nFindings:");
        }
        for f in present::ordered_findings(cp) {
            let (tag, c) = match f.severity {
                Severity::Error => ("ERROR", "31"),
                Severity::Warning => ("WARN ", "33"),
                Severity::Info => ("INFO ", "36"),
            };
            let star = if f.explains_error_text { " (explains the pasted error)" } else { "" };
            let _ = writeln!(o, "- {} [{}] {}{star}", paint(tag, c, colour), f.code, clip(&f.title, 600));
            if !f.error_classes.is_empty() {
                let _ = writeln!(o, "    Spark error classes: {}", f.error_classes.join(", "));
            }
            for e in &f.evidence {
                let size = e.size.map(|n| format!(" ({n} bytes)")).unwrap_or_default();
                let off = e.offset.map(|x| format!(", byte {x}")).unwrap_or_default();
                let _ = writeln!(o, "    evidence: {}{size}{off}: {}", clip(&e.path, 300), clip(&e.detail, 600));
            }
            if !f.why.is_empty() {
                let _ = writeln!(o, "    why: {}", clip(&f.why, 2000));
            }
            for (i, s) in f.fix.iter().enumerate() {
                let _ = writeln!(o, "    fix {}: {}", i + 1, clip(s, 2000));
            }
        }
        if let Some(plan) = &cp.restart_plan {
            render_plan(&mut o, plan, colour);
        }
        let _ = writeln!(o, "\nSummary:");
        if let Some(d) = &cp.dstream {
            render_dstream(&mut o, d);
            continue;
        }
        let _ = writeln!(
            o,
            "  query id: {}",
            cp.query_id.as_deref().map(|q| clip(q, 200)).unwrap_or_else(|| "(unknown)".into())
        );
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
            let _ = writeln!(o, "  source #{} {}: {}", s.index, s.kind, clip(&off, 300));
        }
        for op in &cp.operators {
            let _ = writeln!(
                o,
                "  operator {}{}: {} partition(s), provider {}, stores [{}], latest state version {}",
                op.operator_id,
                op.name
                    .as_deref()
                    .filter(|n| !n.is_empty())
                    .map(|n| format!(" ({})", clip(n, 100)))
                    .unwrap_or_default(),
                op.partitions,
                op.provider,
                clip(&op.store_names.join(", "), 300),
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
            let _ = writeln!(o, "  forced conf {} = {}{sess}", f.key, clip(&f.recorded, 300));
        }
    }
    o
}

/// The summary of a DStream checkpoint: its files in the order Spark tries them, the graph, the RDD
/// checkpoint folders and the classes by group with the allow-list value.
fn render_dstream(o: &mut String, d: &checkpoint_core::report::DstreamInfo) {
    let _ = writeln!(o, "  DStream checkpoint times: {}", d.checkpoint_times_ms.len());
    for f in &d.files {
        let state = match &f.error {
            None => "readable".to_string(),
            Some(e) => format!("UNREADABLE: {}", clip(e, 300)),
        };
        let _ = writeln!(o, "  file {} ({} bytes, {}): {state}", clip(&f.path, 300), f.bytes, f.codec);
    }
    let _ = writeln!(o, "  recovers from: {}", d.recovers_from.as_deref().map(|p| clip(p, 300)).unwrap_or("-".into()));
    if let Some(c) = &d.checkpoint {
        let name = |x: &Option<String>| x.as_deref().map(|v| clip(v, 200)).unwrap_or_else(|| "-".into());
        let _ = writeln!(
            o,
            "  app {} on {}, checkpoint dir {}",
            name(&c.app_name),
            name(&c.master),
            name(&c.checkpoint_dir)
        );
        for (i, s) in c.graph.streams.iter().enumerate() {
            let role = if c.graph.output_streams.contains(&i) {
                " [output]"
            } else if c.graph.input_streams.contains(&i) {
                " [input]"
            } else {
                ""
            };
            let parents: Vec<String> = s.parents.iter().map(|p| format!("#{p}")).collect();
            let _ = writeln!(
                o,
                "  stream #{i} {}{role} parents [{}] slide {} ms, {} checkpointed batch(es)",
                clip(&s.class, 200),
                parents.join(", "),
                s.slide_duration_ms.map(|v| v.to_string()).unwrap_or_else(|| "-".into()),
                s.checkpoint_data.len()
            );
        }
    }
    for r in &d.rdd_checkpoints {
        let state = if r.exists { "present" } else { "MISSING" };
        let _ = writeln!(o, "  RDD checkpoint {}: {state}", clip(&r.path, 300));
    }
    for group in ["jdk", "scala", "spark", "third_party", "application"] {
        let of: Vec<_> = d.classes.iter().filter(|c| c.group == group).collect();
        if of.is_empty() {
            continue;
        }
        let _ = writeln!(o, "  classes ({group}, {}):", of.len());
        for c in of {
            let proxy = if c.proxy { " (proxy interface)" } else { "" };
            let _ = writeln!(o, "    {} {}{proxy}", clip(&c.name, 300), c.serial_version_uid);
        }
    }
    if !d.allowed_classes_setting.is_empty() {
        let _ = writeln!(o, "  spark.streaming.checkpoint.allowedClasses={}", clip(&d.allowed_classes_setting, 4000));
        let _ = writeln!(o, "    ({})", d.allowed_classes_note);
    }
}

/// The restart plan: the ways out, safest first, each with its steps, costs and snippets (never executed).
fn render_plan(o: &mut String, plan: &checkpoint_core::restart_plan::RestartPlan, colour: bool) {
    if plan.ways_out.is_empty() && plan.notes.is_empty() {
        return;
    }
    let _ = writeln!(o, "\nRestart plan (ways out, safest first):");
    for n in &plan.notes {
        let _ = writeln!(o, "  note: {}", clip(n, 2000));
    }
    for w in &plan.ways_out {
        let kind = serde_json::to_value(w.kind).ok().and_then(|v| v.as_str().map(str::to_string)).unwrap_or_default();
        let gap = if w.data_loss { " [skips data]" } else { "" };
        let _ = writeln!(o, "{}. {} ({kind}){gap}", w.rank, paint(&clip(&w.title, 600), "1", colour));
        for s in &w.steps {
            let _ = writeln!(o, "    step: {}", clip(s, 2000));
        }
        for c in &w.costs {
            let _ = writeln!(o, "    cost: {}", clip(c, 2000));
        }
        for d in &w.dropped {
            let _ = writeln!(o, "    dropped: {}", clip(d, 2000));
        }
        if let Some(t) = w.recompute_after_ms {
            let _ =
                writeln!(o, "    recompute after: {} (the computed start goes stale)", checkpoint_core::time::utc(t));
        }
        for sn in &w.snippets {
            let _ = writeln!(o, "    {}:", sn.language);
            for line in sn.code.lines() {
                let _ = writeln!(o, "      {}", clip(line, 2000));
            }
        }
    }
}
