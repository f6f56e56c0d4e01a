//! The one entry point front ends call: [`diagnose`] an archive into a [`Report`].

use crate::archive::Archive;
use crate::checks;
use crate::layout::{find_roots, Root};
use crate::model::Checkpoint;
use crate::predict::predict;
use crate::present::{Frontend, Hint};
use crate::read::{read_checkpoint, read_root_members, ReadOptions};
use crate::report::*;
use crate::{Context, SparkVersion};
use std::collections::BTreeMap;

/// Diagnoses every checkpoint root in `archive` for the user's `ctx` and returns the report (the contract
/// of `REPORT-CONTRACT.md`). Never fails: unreadable files become findings. Reads lazily: the listing, the
/// log files, and the state files a restart would load.
pub fn diagnose(archive: &mut dyn Archive, ctx: &Context) -> Report {
    diagnose_with(archive, ctx, None)
}

/// [`diagnose`] with the verdict first, for a front end that shows it while the history is read (the page's
/// worker). `on_verdict` is called once with a report built from what a restart reads (the latest two offsets
/// files, the latest commit, the offsets of the batch it starts from, the state it loads: Spark's
/// `MicroBatchExecution.populateStartOffsets` reads `offsetLog.getLatest()`, the offsets of the batch before
/// it and `commitLog.getLatest()`, then the state stores at that batch) and the newest
/// [`crate::read::log_files::VERDICT_LOG_FILES`] log files, the older ones listed with
/// [`crate::log::LogError::Deferred`]; then those are read and the full report is returned, equal to
/// [`diagnose`]'s. The early report's restart prediction is the full one's. Its findings rest on the files read
/// so far: findings about older batches, and those that weigh the whole history (the offsets-rewritten and
/// watermark checks), may differ in the full report.
///
/// Without an early report (`on_verdict` not called; one pass, as [`diagnose`]): several checkpoint roots (their
/// log budget is shared in order), a DStream checkpoint, nothing more to read, a pasted error (`error_text`: the
/// finding that explains it may be about an older file, which the prediction cites), or an archive whose total
/// read limit ([`Archive::bytes_left`]) does not leave room for the state verification budget, the log budget
/// and [`VERDICT_FIRST_SPARE_BYTES`] more (the two orders could then hit the limit on different files; the
/// page's "verify every state file" has no state budget, so it takes one pass).
pub fn diagnose_progressive(archive: &mut dyn Archive, ctx: &Context, on_verdict: &mut dyn FnMut(&Report)) -> Report {
    diagnose_with(archive, ctx, Some(on_verdict))
}

fn diagnose_with(archive: &mut dyn Archive, ctx: &Context, mut on_verdict: Option<&mut dyn FnMut(&Report)>) -> Report {
    let roots = find_roots(archive.entries());
    // A Delta source table's `_delta_log/` dropped in the same zip as the checkpoint.
    let mut with_logs;
    let mut ctx = ctx;
    if !roots.is_empty() && crate::delta::reader::find_delta_logs(archive.entries()).iter().any(|d| !d.is_empty()) {
        with_logs = ctx.clone();
        // The first log of each input and folder is kept (a set, for any number of logs).
        let mut known: std::collections::HashSet<(String, String)> =
            with_logs.delta_logs.iter().map(|l| (l.input.clone(), l.dir.clone())).collect();
        for log in crate::delta::reader::read_delta_logs(archive) {
            if !log.dir.is_empty() && known.insert((log.input.clone(), log.dir.clone())) {
                with_logs.delta_logs.push(log);
            }
        }
        ctx = &with_logs;
    }
    // The input's file log budgets (entries kept, bytes read), shared in order by the sink logs beside the
    // checkpoints and the roots.
    let mut file_log_left = file_log_budget(ctx);
    // A file sink's output folder (`<out>/_spark_metadata/`) zipped beside the checkpoint.
    let mut with_sink;
    if !roots.is_empty() && archive.entries().iter().any(|e| e.path.contains("_spark_metadata/")) {
        with_sink = ctx.clone();
        // The first log of each folder is kept (a set: one sink log per folder, of any number of folders).
        let mut dirs: std::collections::HashSet<String> = with_sink.sink_logs.iter().map(|l| l.dir.clone()).collect();
        // Those inside a checkpoint root are its own (its read stage reads them): read here are the others only,
        // those of output folders (a root of kind unknown) among them.
        let inside: Vec<String> =
            roots.iter().filter(|r| r.kind != CheckpointKind::Unknown).map(crate::read::listing::prefix_of).collect();
        for log in crate::read::file_logs::read_sink_logs_outside(archive, &inside, &mut file_log_left) {
            if dirs.insert(log.dir.clone()) {
                with_sink.sink_logs.push(log);
            }
        }
        ctx = &with_sink;
    }
    let input = InputInfo {
        name: archive.name().to_string(),
        bytes: archive.input_bytes(),
        entries: archive.entries().iter().filter(|e| !e.is_dir).count() as u64,
    };
    let mut checkpoints = Vec::new();
    if roots.is_empty() {
        let root = Root { path: String::new(), kind: CheckpointKind::Unknown };
        let cp = read_checkpoint(archive, &root, false);
        let mut r = report_for(&cp, ctx);
        r.findings.push(no_checkpoint_finding(archive, &input));
        checkpoints.push(r);
    }
    // Each root lists only its own entries (one pass over the listing for all roots), and the state
    // verification budget is the archive's, shared by its roots in order.
    let skipped: Vec<Root> = roots.get(MAX_ROOTS..).map(<[Root]>::to_vec).unwrap_or_default();
    let roots = &roots[..roots.len().min(MAX_ROOTS)];
    let members = crate::layout::members(archive.entries(), roots);
    let budget = ctx.verify_budget_bytes.unwrap_or(crate::read::DEFAULT_VERIFY_BUDGET);
    let mut budget_left = budget;
    let mut log_left = crate::read::MAX_TOTAL_LOG_BYTES;
    // Verdict first only for one root (with several, the log budget is shared in order, so each root is read
    // whole before the next), and where the early prediction cannot differ: see `diagnose_progressive`.
    let room = budget
        .saturating_add(crate::read::MAX_TOTAL_LOG_BYTES)
        .saturating_add(file_log_left.1)
        .saturating_add(VERDICT_FIRST_SPARE_BYTES);
    let fits = archive.bytes_left().is_some_and(|left| left >= room);
    let early = roots.len() == 1 && ctx.error_text.is_none() && fits;
    for (root, members) in roots.iter().zip(&members) {
        let opts = ReadOptions {
            verify_state: true,
            check_rows: true,
            budget_bytes: budget_left,
            log_budget_bytes: log_left,
            verdict_log_files: ctx.verdict_log_files.unwrap_or(crate::read::log_files::VERDICT_LOG_FILES),
            file_log_entry_bytes: file_log_left.0,
            file_log_bytes: file_log_left.1,
        };
        let mut cp = match on_verdict.as_mut().filter(|_| early) {
            Some(tell) => {
                let (mut cp, history) = crate::read::read_root_verdict_first(archive, root, members, &opts);
                if let Some(history) = history {
                    cp.verify_budget.0 = budget;
                    let verdict = vec![report_for(&cp, ctx)];
                    tell(&Report {
                        inspector_version: INSPECTOR_VERSION.to_string(),
                        input: input.clone(),
                        checkpoints: verdict,
                    });
                    crate::read::read_history(archive, root, &mut cp, history);
                }
                cp
            }
            None => read_root_members(archive, root, members, &opts),
        };
        budget_left = budget_left.saturating_sub(cp.verify_budget.1);
        log_left = log_left.saturating_sub(log_bytes_read(&cp));
        file_log_left = cp.file_log_budget_left;
        cp.verify_budget.0 = budget;
        checkpoints.push(report_for(&cp, ctx));
    }
    if let (Some(first), Some(report)) = (skipped.first(), checkpoints.first_mut()) {
        let mut f = Finding::new(
            Code::RootsNotDiagnosed,
            Severity::Info,
            format!("{} checkpoint roots found; the first {MAX_ROOTS} are diagnosed, {} are not", MAX_ROOTS + skipped.len(), skipped.len()),
        )
        .evidence(first.path.clone(), "the first root not diagnosed (roots are taken in path order)", None)
        .why("One run diagnoses a bounded number of checkpoint roots so that an input with thousands of them is still answered quickly and in bounded memory.")
        .fix(&["Zip the checkpoint folders you want checked separately (or a parent folder holding fewer of them)."]);
        for r in skipped.iter().skip(1).take(9) {
            f = f.evidence(r.path.clone(), "not diagnosed", None);
        }
        report.findings.push(f);
    }
    Report { inspector_version: INSPECTOR_VERSION.to_string(), input, checkpoints }
}

/// Bytes of the archive's total read limit that [`diagnose_progressive`] leaves for reads other than the state,
/// log and file log budgets (metadata, sidecars, temp files, schema files) before it takes its verdict-first
/// path.
pub const VERDICT_FIRST_SPARE_BYTES: u64 = 512 * 1024 * 1024;

/// Checkpoint roots diagnosed in one run; more are named in a `roots-not-diagnosed` finding.
pub const MAX_ROOTS: usize = 1000;

/// Bytes of offsets and commits files a root read (its share of the archive's log budget).
fn log_bytes_read(cp: &Checkpoint) -> u64 {
    let read = |c: Result<(), &crate::log::LogError>| !matches!(c, Err(crate::log::LogError::NotRead { .. }));
    let offsets = cp.offsets.values().filter(|f| read(f.file.content.as_ref().map(|_| ()))).map(|f| f.file.size);
    let commits = cp.commits.values().filter(|f| read(f.file.content.as_ref().map(|_| ()))).map(|f| f.file.size);
    offsets.chain(commits).fold(0u64, u64::saturating_add)
}

/// The Spark version assumed for a checkpoint: the user's, else the newest release (which reads every
/// older checkpoint format).
pub fn assumed_version(cp: &Checkpoint, ctx: &Context) -> SparkVersion {
    ctx.spark_version.unwrap_or_else(|| SparkVersion::NEWEST.max(cp.min_writer_version()))
}

fn explains(f: &Finding, text: &str, cp: &Checkpoint) -> bool {
    if f.error_classes
        .iter()
        .any(|c| text.contains(&format!("[{c}]")) || (c.contains('.') && text.contains(c.as_str())))
    {
        return true;
    }
    let root = if cp.root.is_empty() { String::new() } else { format!("{}/", cp.root) };
    if f.evidence.iter().any(|e| {
        !e.path.is_empty()
            && e.path.contains('/')
            && (text.contains(&format!("/{}", e.path)) || text.contains(&format!("{root}{}", e.path)))
    }) {
        return true;
    }
    if let Some(r) = &f.restart_failure {
        let generic = [
            "org.apache.spark.SparkException",
            "java.lang.IllegalStateException",
            "org.apache.spark.SparkRuntimeException",
            "java.io.IOException",
        ];
        if !generic.contains(&r.exception.as_str()) && text.contains(&r.exception) {
            return true;
        }
    }
    // MicroBatchExecution.validateOffsetLogAndGetPrevOffset: "batch <latest - 1> doesn't exist".
    if matches!(f.code, Code::OffsetsGap | Code::AsyncProgressTracking)
        && cp.last_batch_id().is_some_and(|l| text.contains(&format!("batch {} doesn't exist", l - 1)))
    {
        return true;
    }
    // FileStreamSource's path check: "Wrong basePath <given> for the root path: <a recorded file>".
    if f.code == Code::FileSourcePath && f.restart_failure.is_some() && text.contains("Wrong basePath") {
        return true;
    }
    // Damaged state files explain decompression / zip / checksum failures that name no path.
    let damage_words =
        ["Stream is corrupted", "LZ4Exception", "ZipException", "ChecksumException", "invalid entry CRC"];
    if (f.code == Code::StateFileCorrupt || f.code == Code::StateFileCrcMismatchUnchecked)
        && damage_words.iter().any(|w| text.contains(w))
    {
        return true;
    }
    // State files in another codec: the reading codec's own failure (lz4-java, zstd-jni, snappy-java, compress-lzf),
    // which 3.5 names inside the job's SparkException only.
    let codec_words = [
        "Stream is corrupted",
        "java.io.EOFException",
        "Unknown frame descriptor",
        "FAILED_TO_UNCOMPRESS",
        "did not start with 2 byte signature",
    ];
    if f.code == Code::StateCodecMismatch && codec_words.iter().any(|w| text.contains(w)) {
        return true;
    }
    // A file source log that misses a batch the restart reads: `HDFSMetadataLog.verifyBatchIds`' words, or the
    // assertion a logOffset going backwards trips, neither naming a path.
    if f.code == Code::SourceLogBatchMissing && source_log_words(f, text) {
        return true;
    }
    // A schema file Spark cannot read: 3.5 names only the read's error, inside the job's SparkException.
    let schema_words = [
        "java.io.EOFException",
        "UnsupportedLogVersion",
        "Log file was malformed",
        "UTFDataFormatException",
        "Unsupported data type",
    ];
    if f.code == Code::StateSchemaFileUnreadable && schema_words.iter().any(|w| text.contains(w)) {
        return true;
    }
    false
}

/// `source-log-batch-missing` explains "batch N doesn't exist" for a batch file it names (`sources/<n>/N`), and the
/// assertion a logOffset going backwards trips when that is its failure.
fn source_log_words(f: &Finding, text: &str) -> bool {
    let named = text.split("batch ").skip(1).any(|r| {
        let n: String = r.chars().take_while(|c| c.is_ascii_digit()).collect();
        !n.is_empty() && r[n.len()..].starts_with(" doesn't exist") && f.title.contains(&format!("/{n}"))
    });
    let backwards = text.contains("assertion failed")
        && f.restart_failure.as_ref().is_some_and(|r| r.exception == "java.lang.AssertionError");
    named || backwards
}

/// Short meanings of error classes the pasted text may name that no check ties to a file (from Spark's
/// error-conditions and FORMATS.md §16).
fn class_meaning(c: &str) -> Option<&'static str> {
    Some(match c {
        "STATE_STORE_KEY_SCHEMA_NOT_COMPATIBLE" | "STATE_STORE_VALUE_SCHEMA_NOT_COMPATIBLE" => {
            "the restarted query's state schema differs from the schema stored in the checkpoint (an aggregation, key or state type was changed)"
        }
        "STREAMING_STATEFUL_OPERATOR_NOT_MATCH_IN_STATE_METADATA" => {
            "the stateful operators of the restarted plan differ from those recorded in state/<op>/_metadata"
        }
        "STATE_STORE_INVALID_CONFIG_AFTER_RESTART" | "STATE_STORE_INVALID_PROVIDER" => {
            "a state store setting (provider, encoding) was changed between runs"
        }
        "CONCURRENT_QUERY" => "another run of the same query (same id) is active",
        "STREAM_FAILED" => "the query stopped with an exception (the cause follows in the text)",
        _ if c.starts_with("CANNOT_LOAD_STATE_STORE") => "a state store partition could not be loaded",
        _ if c.starts_with("DELTA_") || c.starts_with("DIFFERENT_DELTA_TABLE") => "the Delta Lake source refused to continue",
        _ => return None,
    })
}

/// A finding for a pasted error that no check explains: what Spark said, and that the files do not show why.
fn unexplained_error(cp: &Checkpoint, text: &str) -> Option<Finding> {
    let p = crate::checks::error_text::parse_error_text(text);
    let class = p.error_class().map(str::to_string);
    let exc = p.exception().map(str::to_string);
    // PySpark's one line names only the wrapper: "[STREAM_FAILED] Query [...] terminated with exception: <message>".
    let message = text
        .split_once("terminated with exception:")
        .map(|(_, m)| m.lines().next().unwrap_or("").trim().chars().take(300).collect::<String>())
        .filter(|m| !m.is_empty());
    if class.is_none() && exc.is_none() && message.is_none() {
        return None;
    }
    let what = class
        .clone()
        .or(exc.clone())
        .unwrap_or_else(|| format!("STREAM_FAILED (\"{}\")", message.as_deref().unwrap_or_default()));
    let meaning = class.as_deref().and_then(class_meaning);
    let mut f = Finding::new(
        Code::ErrorNotExplainedByFiles,
        Severity::Error,
        format!("Spark reported {what}; the checkpoint files do not show the cause"),
    )
    .why(format!(
        "{}Nothing in the files this tool reads (logs, state layout, checksums, state file integrity) explains it, so the cause is most likely a change of the query or its environment (schema, operators, sources, confs, library versions).",
        meaning.map(|m| format!("{what}: {m}. ")).unwrap_or_default()
    ))
    .fix(&[
        "Compare the restarted query with the one that wrote the checkpoint (operators, sources, schema, confs).".to_string(),
    ]
    .into_iter()
    .chain(text.contains("Wrong basePath").then(|| "\"Wrong basePath\" is the file source's path check (the path it reads now does not hold the files its log recorded): give that path, with the source's number, to compare it with the log.".to_string()))
    .chain([crate::checks::new_checkpoint_step(cp)])
    .collect::<Vec<_>>());
    if let Some(c) = &class {
        f = f.classes(&[c.as_str()]);
    }
    if let Some(id) = cp.last_batch_id() {
        f = f.evidence(format!("offsets/{id}"), "the latest planned batch", None);
    }
    Some(f)
}

pub(crate) fn report_for(cp: &Checkpoint, ctx_in: &Context) -> CheckpointReport {
    let mut ctx = ctx_in.clone();
    ctx.spark_version = Some(assumed_version(cp, ctx_in));
    let mut findings = checks::run_all(cp, &ctx);
    if let Some(text) = ctx.error_text.as_deref() {
        for f in &mut findings {
            f.explains_error_text = f.explains_error_text || explains(f, text, cp);
        }
        // A failure the text explains is what happened; findings that predicted a different failure stay.
        if !findings.iter().any(|f| f.explains_error_text) {
            if let Some(f) = unexplained_error(cp, text) {
                findings.push(f);
            }
        }
    }
    crate::present::sort_findings(&mut findings);
    // A bounded number of findings of each code (the others folded into one), before the prediction and the
    // restart plan (a way out per finding) read them.
    let mut findings = checks::fold_repeated(findings);
    crate::present::sort_findings(&mut findings);
    let mut restart = predict(cp, &ctx, &findings);
    let mut hints = Vec::new();
    if ctx_in.spark_version.is_none() && cp.kind.0 == CheckpointKind::StructuredStreaming {
        let hint = Hint::SparkVersionAssumed {
            assumed: restart.assumed_spark_version.clone(),
            written_by_at_least: cp.min_writer_version().to_string(),
        };
        let note = hint.text(Frontend::Cli);
        restart.summary = format!("{} ({note}.)", restart.summary).trim_start().to_string();
        restart.assumption = Some(note);
        hints.push(hint);
    }
    let restart_plan = crate::restart_plan::plan(cp, &ctx, &findings, &restart);
    let needs = needs(cp, &ctx);
    hints.extend(needs.iter().cloned());
    let conf = cp.recorded_conf();
    let batches = batches(cp);
    let sources = cp
        .latest_readable_offsets()
        .map(|(_, o)| {
            o.offsets
                .iter()
                .enumerate()
                .map(|(i, s)| SourceInfo {
                    index: i,
                    kind: s.kind.as_str().to_string(),
                    latest_offset: match (&s.json, &s.raw) {
                        (Some(j), _) => Some(j.clone()),
                        (None, Some(r)) => Some(serde_json::Value::String(r.clone())),
                        _ => None,
                    },
                    name: s.name.clone(),
                })
                .collect()
        })
        .unwrap_or_default();
    let operators = cp.state.operators.values().map(|o| operator_info(cp, o)).collect();
    CheckpointReport {
        root: cp.root.clone(),
        kind: cp.kind.0,
        query_id: cp.metadata.as_ref().and_then(|m| m.content.as_ref().ok()).map(|m| m.id.clone()),
        batches,
        last_batch_id: cp.last_batch_id(),
        last_committed_batch_id: cp.last_committed_batch_id(),
        conf: conf.clone(),
        sources,
        operators,
        findings,
        restart,
        dstream: if cp.kind.0 == CheckpointKind::Dstream { Some(crate::dstream::info::dstream_info(cp)) } else { None },
        forced_conf: forced_conf(&conf, &ctx.session_conf),
        needs: needs.iter().map(|h| h.text(Frontend::Cli)).collect(),
        hints,
        restart_plan,
        sink_logs: crate::checks::sink_log::sink_log_info(cp, &ctx),
    }
}

/// The report's view of one stateful operator: name, stores, partitions, provider, versions, state size and
/// the state files per store and partition.
fn operator_info(cp: &Checkpoint, o: &crate::state_files::OperatorFiles) -> OperatorInfo {
    let meta = cp.operator_metadata.get(&o.operator_id).and_then(|m| m.content.as_ref().ok());
    let mut stores: Vec<String> = o.partitions.values().flat_map(|p| p.stores.keys().cloned()).collect();
    if let Some(m) = meta {
        stores.extend(m.stores.iter().map(|s| s.store_name.clone()));
    }
    stores.sort();
    stores.dedup();
    if stores.is_empty() {
        stores.push("default".into());
    }
    let latest = o.partitions.values().flat_map(|p| p.stores.values()).filter_map(|s| s.latest_version()).max();
    let mut state_files: Vec<crate::report::StoreFilesOverview> = o
        .partitions
        .values()
        .flat_map(|p| p.stores.iter().filter_map(|(n, f)| crate::report::StoreFilesOverview::of(n, p.partition, f)))
        .collect();
    state_files.sort_by(|a, b| (&a.store, a.partition).cmp(&(&b.store, b.partition)));
    OperatorInfo {
        operator_id: o.operator_id,
        state_files,
        name: meta.and_then(|m| m.operator_name.clone()),
        store_names: stores,
        partitions: o.partitions.len() as u64,
        provider: cp.operator_provider(o.operator_id),
        latest_version: latest,
        state_size: cp
            .state_growth
            .get(&o.operator_id)
            .map(|pts| {
                pts.iter()
                    .map(|p| StateSizePoint {
                        version: p.version,
                        snapshot_partitions: p.partitions,
                        snapshot_bytes: p.snapshot_bytes,
                        snapshot_keys: p.keys,
                        delta_bytes: p.delta_bytes,
                    })
                    .collect()
            })
            .unwrap_or_default(),
    }
}

/// The input's file log budgets: bytes of entries kept, bytes of log files read (the context's, else the
/// defaults).
fn file_log_budget(ctx: &Context) -> (u64, u64) {
    (
        ctx.file_log_entry_bytes.unwrap_or(crate::read::MAX_FILE_LOG_ENTRY_BYTES),
        ctx.file_log_bytes.unwrap_or(crate::read::MAX_FILE_LOG_TOTAL_BYTES),
    )
}

/// What extra input would sharpen the prediction (worded per front end by [`Hint::text`]).
fn needs(cp: &Checkpoint, ctx: &Context) -> Vec<Hint> {
    let mut out = Vec::new();
    if cp.kind.0 != CheckpointKind::StructuredStreaming {
        return out;
    }
    let v = ctx.spark_version.unwrap_or(SparkVersion::NEWEST);
    // No --spark-version: said next to the verdict (`RestartPrediction::assumption`), not here.
    let fmt_key = "spark.sql.streaming.stateStore.checkpointFormatVersion";
    let v2_commits = cp.commits.values().any(|c| c.file.content.as_ref().is_ok_and(|m| m.version == 2));
    // 4.3 reads the checkpoint's own format whatever the session sets: nothing is assumed there.
    if v2_commits
        && !v.at_least(4, 3)
        && !ctx.session_conf.contains_key(fmt_key)
        && !cp.recorded_conf().contains_key(fmt_key)
    {
        out.push(Hint::CommitLogV2FormatAssumed { key: fmt_key.to_string() });
    }
    if !cp.unverified.is_empty() {
        out.push(Hint::StateNotVerified { count: cp.unverified.len() });
    }
    // The pasted error's "offset was changed from A to B" gives the brokers' latest of its partitions.
    let latest_known = ctx.kafka_latest.is_some()
        || ctx
            .error_text
            .as_deref()
            .is_some_and(|t| !crate::checks::kafka::offsets_changed_in_error(t).topics.is_empty());
    let given = match (ctx.kafka_earliest.is_some(), latest_known) {
        (true, true) => None,
        (true, false) => Some(Some("earliest".to_string())),
        (false, true) => Some(Some("latest".to_string())),
        (false, false) => Some(None),
    };
    if let Some(given) = given {
        let kafka: Vec<usize> = cp
            .latest_readable_offsets()
            .map(|(_, o)| {
                o.offsets
                    .iter()
                    .enumerate()
                    .filter(|(_, s)| s.kind == crate::source::SourceKind::Kafka)
                    .map(|(i, _)| i)
                    .collect()
            })
            .unwrap_or_default();
        if !kafka.is_empty() {
            out.push(Hint::KafkaOffsetsNotGiven { sources: kafka, given });
        }
    }
    let file_sources: Vec<usize> = cp
        .source_logs
        .iter()
        .filter(|(n, log)| !ctx.source_paths.contains_key(n) && !log.listed.is_empty())
        .map(|(n, _)| *n as usize)
        .collect();
    if !file_sources.is_empty() {
        out.push(Hint::SourcePathNotGiven { sources: file_sources });
    }
    let without_log: Vec<usize> =
        crate::delta::facts::delta_sources(cp, ctx).iter().filter(|s| s.log.is_none()).map(|s| s.index).collect();
    if !without_log.is_empty() {
        out.push(Hint::DeltaLogWanted { sources: without_log });
    }
    let logs = cp.source_logs.values().chain(&cp.sink_logs).chain(&ctx.sink_logs);
    let batches = || logs.clone().flat_map(|l| l.read.values());
    let entries: u64 = batches().filter_map(|b| b.file.content.as_ref().ok()).map(|b| b.not_kept).sum();
    let past = |e: &crate::log::LogError| matches!(e, crate::log::LogError::NotVerified { reason } if reason.contains(crate::read::file_logs::PAST_FILE_LOG_BYTES));
    let files = batches().filter(|b| b.file.content.as_ref().is_err_and(past)).count();
    if entries > 0 || files > 0 {
        out.push(Hint::FileLogsNotKept { entries, files });
    }
    if !cp.state.present && cp.last_committed_batch_id().is_some() {
        out.push(Hint::StatelessAssumed {});
    }
    let repair_key = "spark.sql.streaming.stateStore.autoSnapshotRepair.enabled";
    if v.at_least(4, 2)
        && !ctx.session_conf.contains_key(repair_key)
        && !cp.state_integrity.values().all(|i| i.problem.is_none())
    {
        out.push(Hint::SnapshotRepairAssumed { key: repair_key.to_string() });
    }
    out
}

fn batches(cp: &Checkpoint) -> Vec<BatchInfo> {
    let mut ids: Vec<i64> = cp.offsets.keys().chain(cp.commits.keys()).copied().collect();
    ids.sort_unstable();
    ids.dedup();
    ids.into_iter()
        .map(|id| {
            let md = cp.offsets.get(&id).and_then(|f| f.file.content.as_ref().ok()).and_then(|o| o.metadata.as_ref());
            BatchInfo {
                batch_id: id,
                has_offsets: cp.offsets.contains_key(&id),
                committed: cp.commits.contains_key(&id),
                timestamp_ms: md.and_then(|m| m.batch_timestamp_ms),
                watermark_ms: md.map(|m| m.batch_watermark_ms.unwrap_or(0)),
                next_watermark_ms: cp
                    .commits
                    .get(&id)
                    .and_then(|c| c.file.content.as_ref().ok())
                    .map(|c| c.next_batch_watermark_ms),
            }
        })
        .collect()
}

/// The recorded confs Spark forces over the session on restart, with notes for the ones that matter.
pub fn forced_conf(recorded: &BTreeMap<String, String>, session: &BTreeMap<String, String>) -> Vec<ForcedConf> {
    recorded
        .iter()
        .map(|(k, v)| {
            let note = match k.as_str() {
                "spark.sql.shuffle.partitions" => {
                    "Number of state partitions; fixed for the life of a stateful checkpoint."
                }
                "spark.sql.streaming.stateStore.providerClass" => {
                    "State store provider (HDFS or RocksDB); the checkpoint's files are in its format."
                }
                "spark.sql.streaming.stateStore.compression.codec" => "Codec of the state files.",
                "spark.sql.streaming.stateStore.rocksdb.formatVersion" => "RocksDB format version of the state.",
                "spark.sql.streaming.aggregation.stateFormatVersion" => "Row layout of aggregation state.",
                "spark.sql.streaming.join.stateFormatVersion" => "Row layout of stream-stream join state.",
                "spark.sql.streaming.flatMapGroupsWithState.stateFormatVersion" => {
                    "Row layout of (flat)MapGroupsWithState state."
                }
                "spark.sql.streaming.multipleWatermarkPolicy" => "How several watermarks combine (min/max).",
                "spark.sql.streaming.stateStore.encodingFormat" => "Encoding of state rows (unsaferow/avro).",
                "spark.sql.streaming.stateStore.rowChecksum.enabled" => {
                    "Row checksums in the state values (Spark 4.3+); Spark 4.1 and older cannot read such values."
                }
                "spark.sql.streaming.stateStore.rocksdb.mergeOperatorVersion" => {
                    "RocksDB merge format of list state (2 from Spark 4.2); 4.1 and older read only 1."
                }
                "spark.sql.streaming.statefulOperator.useStrictDistribution" => {
                    "Partitioning rule of stateful operators."
                }
                _ => "Recorded in the offset log; the restarted query uses this value if it is one of the confs its Spark records (OffsetSeqMetadata.relevantSQLConfs), and ignores it otherwise.",
            };
            ForcedConf {
                key: k.clone(),
                recorded: v.clone(),
                session: session.get(k).filter(|s| *s != v).cloned(),
                note: note.to_string(),
            }
        })
        .collect()
}

/// `no-checkpoint-found` for an input without a checkpoint root: what it holds instead (no file, archives
/// inside it, a Delta table's `_delta_log`) and what to give.
fn no_checkpoint_finding(archive: &dyn Archive, input: &InputInfo) -> Finding {
    // Archives inside the input (a zip of a zip, a tarball zipped): the checkpoint is likely in one of them.
    let inner: Vec<String> = archive
        .entries()
        .iter()
        .filter(|e| !e.is_dir && !crate::layout::is_finder_metadata(&e.path) && is_archive_name(&e.path))
        .map(|e| e.path.clone())
        .collect();
    let mut f = Finding::new(
        Code::NoCheckpointFound,
        Severity::Warning,
        if input.entries == 0 {
            "No Spark checkpoint found in the input: it holds no file".to_string()
        } else if inner.is_empty() {
            "No Spark checkpoint found in the input".to_string()
        } else {
            format!("No Spark checkpoint found in the input, which holds {}", crate::checks::some_of(&inner, inner.len() as u64))
        },
    )
    .evidence("", format!("{} file(s) listed; none is a `metadata`, `offsets/<n>`, `commits/<n>`, `state/<op>/` or `checkpoint-<ms>` file", input.entries), None);
    for p in inner.iter().take(3) {
        f = f.evidence(p, "an archive inside the input: its files are not looked into", None);
    }
    let mut fix = Vec::new();
    if !crate::delta::reader::find_delta_logs(archive.entries()).is_empty() {
        fix.push("This holds a Delta table's _delta_log, not a checkpoint: give it beside the checkpoint (CLI --delta-log; in the page, \"Delta table log (optional)\") to check the checkpoint's Delta source against it.".to_string());
    }
    if let Some(p) = inner.first() {
        fix.push(format!(
            "Give the archive inside ({p}) instead: unzip the outer one first (a zip inside a zip is not opened)."
        ));
    }
    fix.push(
        "Zip the checkpointLocation folder itself (or a parent of it): zip -r checkpoint.zip <checkpointLocation>."
            .to_string(),
    );
    f.why("A Structured Streaming checkpoint folder holds metadata, offsets/, commits/ and usually state/; a DStream checkpoint holds checkpoint-<time> files.")
        .fix(&fix)
}

/// True for the name of an archive a user may have zipped by mistake (a zip of a zip, a tarball): `.zip`,
/// `.tar`, `.tgz`, `.gz`, `.bz2`, `.xz`, `.zst`, `.7z`, `.rar`, case-insensitive.
fn is_archive_name(path: &str) -> bool {
    let name = path.rsplit('/').next().unwrap_or(path).to_ascii_lowercase();
    [".zip", ".tar", ".tgz", ".gz", ".bz2", ".xz", ".zst", ".7z", ".rar"].iter().any(|x| name.ends_with(x))
}
