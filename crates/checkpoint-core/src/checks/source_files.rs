//! File source, Auto Loader and the other sources (rate, memory, socket, unknown ones).
//!
//! File source: `FileStreamSourceLog` (apache/spark sql/core/src/main/scala/org/apache/spark/sql/execution/
//! streaming/FileStreamSourceLog.scala) records per batch the files read; every `compactInterval`-th batch is a
//! `.compact` file holding all entries so far. `FileStreamSourceOffset.logOffset` is the batch id in that log.
//! Auto Loader (Databricks `cloudFiles`, closed source; FORMATS.md §19.2): its file-tracking store is a
//! RocksDB under `sources/<n>/rocksdb/` whose format is not public, and a schema location keeps `_schemas/<n>`.

use crate::model::Checkpoint;
use crate::report::{CheckpointKind, Code, Finding, Severity};
use crate::source::SourceKind;
use crate::Context;

fn sources(cp: &Checkpoint) -> Vec<(usize, &crate::log::offsets::SourceOffset)> {
    cp.latest_readable_offsets().map(|(_, o)| o.offsets.iter().enumerate().collect()).unwrap_or_default()
}

fn clip(s: &str, n: usize) -> String {
    let c: String = s.chars().take(n).collect();
    if c.len() < s.len() {
        format!("{c}…")
    } else {
        c
    }
}

/// The end `logOffset` in batch `b` of the source `name` (the v2 layout names each source line, whose order
/// need not be kept) or, without a name, of the source at `index` (Spark pairs v1 lines by position).
pub(crate) fn log_offset_of(cp: &Checkpoint, b: i64, name: Option<&str>, index: usize) -> Option<i64> {
    let index = match name {
        Some(n) => {
            cp.offsets.get(&b)?.file.content.as_ref().ok()?.offsets.iter().position(|o| o.name.as_deref() == Some(n))?
        }
        None => index,
    };
    log_offset(cp, b, index)
}

/// The end `logOffset` of a file source in batch `b`, when readable.
pub(crate) fn log_offset(cp: &Checkpoint, b: i64, index: usize) -> Option<i64> {
    let o = cp.offsets.get(&b)?.file.content.as_ref().ok()?.offsets.get(index)?;
    let j = o.json.as_ref()?;
    j.get("logOffset").and_then(|v| v.as_i64()).or_else(|| j.as_i64())
}

/// A file source's log: files per batch, compactions, and what a restart reads again.
pub fn check_file_source(cp: &Checkpoint, _ctx: &Context) -> Vec<Finding> {
    if cp.kind.0 != CheckpointKind::StructuredStreaming {
        return vec![];
    }
    let mut out = Vec::new();
    for (n, log) in &cp.source_logs {
        let compacts: Vec<i64> = log.listed.iter().filter(|(_, v)| v.2).map(|(k, _)| *k).collect();
        let total: u64 = log
            .read
            .range(compacts.last().copied().unwrap_or(i64::MIN)..)
            .filter_map(|(_, f)| f.file.content.as_ref().ok())
            .map(|b| b.entry_count())
            .sum();
        let mut f = Finding::new(
            Code::FileSourceFiles,
            Severity::Info,
            format!(
                "File source #{n}: {} batch file(s) in {}/ ({} compaction(s)), {total} file(s) recorded{}",
                log.listed.len(),
                log.dir,
                compacts.len(),
                if compacts.is_empty() { "" } else { " from the newest compaction on" }
            ),
        );
        for (id, lf) in log.read.iter().rev().take(5) {
            match &lf.file.content {
                Ok(b) => {
                    // Sizes are a sink's field; of a source log's entries only when hand-made, and summed as far
                    // as they were kept.
                    let sizes: Vec<i64> = b.entries.iter().filter_map(|e| e.size).collect();
                    let bytes = match (sizes.is_empty(), b.complete()) {
                        (true, _) => String::new(),
                        (false, true) => format!(", {} bytes", sizes.iter().fold(0i64, |a, x| a.saturating_add(*x))),
                        (false, false) => format!(
                            ", {} bytes in the entries kept",
                            sizes.iter().fold(0i64, |a, x| a.saturating_add(*x))
                        ),
                    };
                    let names: Vec<String> = b.entries.iter().take(3).map(|e| clip(&e.path, 160)).collect();
                    let shown = names.len() as u64;
                    let more = if b.entry_count() > shown {
                        format!(" and {} more", b.entry_count() - shown)
                    } else {
                        String::new()
                    };
                    let kind = if lf.compact { "compaction of every batch up to here" } else { "batch" };
                    f = f.evidence_sized(
                        &lf.file.path,
                        lf.file.size,
                        format!("{kind} {id}: {} file(s){bytes}: {}{more}", b.entry_count(), names.join(", ")),
                        None,
                    );
                }
                Err(e) => f = f.evidence(&lf.file.path, format!("does not parse: {e}"), Some(e.offset())),
            }
        }
        let committed = cp.last_committed_batch_id();
        let last = cp.last_batch_id();
        let rerun = match (committed, last) {
            (Some(c), Some(l)) if l > c => {
                let from = log_offset(cp, c, *n as usize);
                let to = log_offset(cp, l, *n as usize);
                match (from, to) {
                    (Some(a), Some(b)) if b > a => format!(
                        "Batch {l} is planned but not committed: a restart runs it again and reads the files of sources/{n}/ batches {}..={b} again (a non-idempotent sink may get their rows twice).",
                        a + 1
                    ),
                    _ => format!("Batch {l} is planned but not committed: a restart runs it again with the same files."),
                }
            }
            _ => "Every planned batch is committed: a restart on this checkpoint reads no file again.".to_string(),
        };
        f = f
            .why(format!(
                "The file source remembers what it read only in this log: each batch file lists the files of one batch and every compaction (.compact) repeats all files so far. {rerun} A NEW checkpoint has no such record and reads every file of the path again."
            ))
            .fix(&["Keep sources/<n>/ with the checkpoint; to start a new checkpoint without re-reading, see the restart plan."]);
        out.push(f);
    }
    out
}

/// Auto Loader sources: the offset, the file-tracking store's files, the schema versions.
pub fn check_autoloader(cp: &Checkpoint, _ctx: &Context) -> Vec<Finding> {
    if cp.kind.0 != CheckpointKind::StructuredStreaming {
        return vec![];
    }
    let mut out = Vec::new();
    for (i, o) in sources(cp).into_iter().filter(|(_, o)| o.kind == SourceKind::AutoLoader) {
        let prefix = format!("sources/{i}/rocksdb/");
        let store: Vec<&crate::state_files::FileRef> =
            cp.files.iter().filter(|f| f.path.starts_with(&prefix)).collect();
        let bytes: u64 = store.iter().map(|f| f.size).sum();
        let mut f = Finding::new(
            Code::AutoLoaderSource,
            Severity::Info,
            format!("Auto Loader source #{i}: file-tracking store of {} file(s), {bytes} bytes; {} schema version(s) in the input", store.len(), cp.schema_log.len()),
        )
        .evidence(
            format!("offsets/{}", cp.latest_readable_offsets().map(|(b, _)| b).unwrap_or(0)),
            format!("offset {}", clip(o.raw.as_deref().unwrap_or("-").trim(), 400)),
            None,
        );
        for s in store.iter().take(20) {
            f = f.evidence_sized(
                &s.path,
                s.size,
                "file-tracking store (RocksDB; its format is not public, contents not read)",
                None,
            );
        }
        if store.len() > 20 {
            f = f.evidence(&prefix, format!("{} more file(s)", store.len() - 20), None);
        }
        let mut prev: Option<&Vec<String>> = None;
        for (v, sf) in &cp.schema_log {
            match &sf.content {
                Ok(cols) => {
                    let added: Vec<&String> = match prev {
                        Some(p) => cols.iter().filter(|c| !p.contains(c)).collect(),
                        None => Vec::new(),
                    };
                    let what = if prev.is_none() {
                        format!("schema version {v}: {} column(s)", cols.len())
                    } else if added.is_empty() {
                        format!("schema version {v}: {} column(s), none added", cols.len())
                    } else {
                        format!(
                            "schema version {v}: {} column(s), added: {}",
                            cols.len(),
                            clip(&added.iter().map(|s| s.as_str()).collect::<Vec<_>>().join(", "), 400)
                        )
                    };
                    f = f.evidence_sized(&sf.path, sf.size, what, None);
                    prev = Some(cols);
                }
                Err(e) => f = f.evidence_sized(&sf.path, sf.size, format!("does not parse: {e}"), Some(e.offset())),
            }
        }
        f = f
            .why("Auto Loader keeps which files it discovered in a RocksDB store inside the checkpoint (not Spark's file source log) and its inferred schemas in the schema location's _schemas/<n> files. The offset JSON is Auto Loader's own.")
            .fix(&[
                "Keep one checkpoint per stream: a checkpoint copied or shared between two streams makes each skip files the other recorded.",
                "Changing the source path on this checkpoint makes every file under the new path new to the store (the old path's files stay recorded): plan a path change as a new checkpoint (see the restart plan) and deduplicate.",
                "Databricks' cloud_files_state('<checkpoint path>') lists the files the store recorded.",
            ]);
        out.push(f);
    }
    out
}

/// A pasted `UnknownFieldException`: Auto Loader's schema evolution stop.
pub fn check_autoloader_schema_error(cp: &Checkpoint, ctx: &Context) -> Vec<Finding> {
    let Some(text) = ctx.error_text.as_deref() else { return vec![] };
    if cp.kind.0 != CheckpointKind::StructuredStreaming || !text.contains("UnknownFieldException") {
        return vec![];
    }
    let line = text.lines().find(|l| l.contains("UnknownFieldException")).unwrap_or("");
    let mut f = Finding::new(
        Code::AutoLoaderSchemaEvolution,
        Severity::Warning,
        "Auto Loader stopped on new columns (UnknownFieldException): a restart continues with the updated schema",
    )
    .evidence("", format!("pasted error: {}", clip(line.trim(), 400)), None);
    if let Some((v, sf)) = cp.schema_log.iter().next_back() {
        let cols = sf.content.as_ref().map(|c| c.len()).unwrap_or(0);
        f = f.evidence_sized(
            &sf.path,
            sf.size,
            format!("newest schema version {v} ({cols} column(s)): the schema the restart uses"),
            None,
        );
    }
    f.explains_error_text = true;
    vec![f.why("With cloudFiles.schemaEvolutionMode=addNewColumns (the default when no schema is given) Auto Loader stops the stream when it meets new columns, after merging them into the schema location as a new _schemas/<n> version; the stop is by design, not damage.")
        .fix(&[
            "Restart the stream (run it as a job with retries so that this happens by itself); it reads with the new schema.",
            "To keep the schema instead, set cloudFiles.schemaEvolutionMode to rescue (new columns go to _rescued_data) or none, or give a schema.",
        ])]
}

/// Sources named from their offset's shape: rate, memory/socket, unknown ones (raw offset shown).
pub fn check_other_sources(cp: &Checkpoint, _ctx: &Context) -> Vec<Finding> {
    if cp.kind.0 != CheckpointKind::StructuredStreaming {
        return vec![];
    }
    let batch = cp.latest_readable_offsets().map(|(b, _)| b).unwrap_or(0);
    let mut out = Vec::new();
    for (i, o) in sources(cp) {
        let name = match o.kind {
            SourceKind::Rate if o.json.as_ref().is_some_and(|j| j.get("offset").is_some()) => {
                "rate-micro-batch (RatePerMicroBatchStream: rows emitted so far and the logical timestamp)"
            }
            SourceKind::Rate => "continuous rate source (RateStreamOffset: a value and run time per partition)",
            SourceKind::Memory => {
                "a LongOffset: MemoryStream, the socket source or the rate source's seconds (they hold no data across runs)"
            }
            SourceKind::None => "a source with no offset yet",
            SourceKind::Unknown => "an unknown source (Event Hubs, Kinesis, a custom source): its offset is kept as it is",
            _ => continue,
        };
        out.push(
            Finding::new(Code::SourceOffsetShape, Severity::Info, format!("Source #{i}: {name}"))
                .evidence(format!("offsets/{batch}"), format!("offset {}", clip(o.raw.as_deref().unwrap_or("-").trim(), 400)), Some(o.offset))
                .why("The offsets file does not name its sources; the kind is read from the offset's shape. An unknown shape is not an error: Spark hands the offset back to the same source on restart.")
                .fix(&["Nothing to do for a restart; a new checkpoint starts such a source from its own options."]),
        );
    }
    out
}
