//! Evidence of two writers on one checkpoint (FORMATS.md §2, §16.1): leftover temp files of atomic
//! writes, temp copies that disagree with the renamed file, `batchTimestampMs` going backwards, and
//! orphan Hadoop `.crc` sidecars that make Spark's next rename fail with a misleading "concurrently using"
//! error.

use super::BACKUP;
use crate::model::Checkpoint;
use crate::report::{CheckpointKind, Code, Finding, RestartStage, Severity};
use crate::Context;

/// How a temp copy of a file log batch differs from the renamed file, when both parse and they differ. The
/// lists compare by their count and their paths' digest, kept whole or not; the paths not in the renamed file
/// are named when both lists are kept whole.
fn file_log_copy_differs(cp: &Checkpoint, t: &crate::model::TempFile, final_path: &str) -> Option<String> {
    let (Some(Ok(tmp)), Some(b)) = (&t.file_log, t.target_batch) else { return None };
    let n = t.dir.strip_prefix("sources/").and_then(|n| n.parse::<u32>().ok());
    let fin = n
        .and_then(|n| cp.source_logs.get(&n))
        .or_else(|| cp.sink_logs.iter().find(|l| l.dir == t.dir))
        .and_then(|l| l.read.get(&b))
        .and_then(|f| f.file.content.as_ref().ok())?;
    if tmp.entry_count() == fin.entry_count() && tmp.paths_digest == fin.paths_digest {
        return None;
    }
    let named = if tmp.complete() && fin.complete() {
        let committed: std::collections::HashSet<&str> = fin.entries.iter().map(|e| e.path.as_str()).collect();
        let extra: Vec<&str> = tmp.entries.iter().map(|e| e.path.as_str()).filter(|p| !committed.contains(p)).collect();
        if extra.is_empty() {
            "-".to_string()
        } else {
            super::some_of(extra.iter().copied(), extra.len() as u64)
        }
    } else {
        "not named (the lists are longer than this inspector keeps in memory)".to_string()
    };
    Some(format!(
        "this copy of batch {b} lists {} file(s), the renamed {final_path} lists {}; not in the committed list: {named}",
        tmp.entry_count(),
        fin.entry_count(),
    ))
}

/// Temp files and timestamps.
pub fn check_writers(cp: &Checkpoint, ctx: &Context) -> Vec<Finding> {
    let _ = ctx;
    if cp.kind.0 != CheckpointKind::StructuredStreaming {
        return vec![];
    }
    let mut out = Vec::new();
    let last = cp.last_batch_id();
    let last_commit = cp.last_committed_batch_id();
    for t in &cp.temp_files {
        let final_path = if t.dir.is_empty() { t.target.clone() } else { format!("{}/{}", t.dir, t.target) };
        let final_exists = cp.has_file(&final_path);
        // Compare with the renamed file when both parse.
        let mut differs: Option<String> = None;
        if let (Some(Ok(tmp)), Some(b)) = (&t.offsets, t.target_batch) {
            if let Some(Ok(fin)) = cp.offsets.get(&b).map(|f| &f.file.content) {
                let ts_t = tmp.metadata.as_ref().and_then(|m| m.batch_timestamp_ms);
                let ts_f = fin.metadata.as_ref().and_then(|m| m.batch_timestamp_ms);
                let raws =
                    |o: &crate::log::offsets::OffsetSeq| o.offsets.iter().map(|s| s.raw.clone()).collect::<Vec<_>>();
                if ts_t != ts_f || raws(tmp) != raws(fin) || tmp.not_kept != fin.not_kept {
                    // At most `MAX_NAMED` offsets of each copy (a file may hold thousands of source lines).
                    let list = |o: &crate::log::offsets::OffsetSeq| {
                        super::some_of(o.offsets.iter().map(|s| s.raw.as_deref().unwrap_or("-")), o.source_count())
                    };
                    differs = Some(format!(
                        "this copy of batch {b}: batchTimestampMs {}, offsets [{}]; the renamed {final_path}: batchTimestampMs {}, offsets [{}]",
                        ts_t.map(|x| x.to_string()).unwrap_or("-".into()),
                        list(tmp),
                        ts_f.map(|x| x.to_string()).unwrap_or("-".into()),
                        list(fin),
                    ));
                }
            }
        }
        if let Some(d) = file_log_copy_differs(cp, t, &final_path) {
            differs = Some(d);
        }
        // Only offsets/commits are numbered by batch id (a file source log counts its own entries).
        let committed = (t.dir == "offsets" || t.dir == "commits")
            && t.target_batch.is_some_and(|b| last_commit.is_some_and(|c| b <= c));
        let f = if let Some(d) = differs {
            Finding::new(
                Code::ConcurrentWriterTempFile,
                Severity::Warning,
                format!("A second, different copy of {final_path} was left by another writer"),
            )
            .evidence(&t.path, d, None)
            .evidence(&final_path, if committed { "the renamed file (batch committed)" } else { "the renamed file" }, None)
            .why("Spark writes log files atomically (temp file, then rename). A temp file with different content for an existing batch means two runs planned the same batch at the same time; the one whose rename won is the checkpoint's truth and the other run's plan was discarded (its extra input was not part of that batch).")
            .fix(&[
                "Make sure only one query runs on this checkpoint (stop duplicate jobs, check schedulers and retries).".to_string(),
                format!("Delete the leftover {} after a backup; it is never read.", t.path),
                "Check the sink for output of the losing run if it wrote any.".to_string(),
            ])
        } else {
            Finding::new(
                Code::LeftoverTempFile,
                Severity::Warning,
                format!("Leftover temp file {} of an interrupted write", t.path),
            )
            .evidence_sized(&t.path, t.size, format!("meant to become {final_path}{}", if final_exists { " (which exists)" } else { " (which does not exist)" }), None)
            .why("Spark writes checkpoint files atomically through a temp file `.<name>.<uuid>.tmp` and a rename. A leftover temp file means a writer died mid-write or two writers raced. Spark ignores these files (they are not batch files), so the restart is not affected.")
            .fix(&[
                "Check that no other query or job uses this checkpoint.".to_string(),
                format!("Delete {} (after a backup); it is never read.", t.path),
            ])
        };
        out.push(f);
    }
    // batchTimestampMs going backwards.
    let mut prev: Option<(i64, i64)> = None;
    for (id, f) in &cp.offsets {
        let Some(ts) =
            f.file.content.as_ref().ok().and_then(|o| o.metadata.as_ref()).and_then(|m| m.batch_timestamp_ms)
        else {
            continue;
        };
        if let Some((pid, pts)) = prev {
            if ts < pts && ts != 0 {
                out.push(
                    Finding::new(Code::BatchTimestampBackwards, Severity::Warning, format!("batchTimestampMs goes backwards from batch {pid} to batch {id}"))
                        .evidence(format!("offsets/{pid}"), format!("batchTimestampMs {pts}"), None)
                        .evidence(format!("offsets/{id}"), format!("batchTimestampMs {ts} ({} ms earlier)", pts - ts), None)
                        .why("Each batch records the processing time it was planned at. A later batch planned at an earlier time means another writer (a second process or a restored copy) wrote these offsets, or the driver clock jumped back.")
                        .fix(&["Make sure only one query runs on this checkpoint; compare with your job scheduler's history."]),
                );
            }
        }
        prev = Some((*id, ts));
    }
    let _ = last;
    out
}

/// Orphan Hadoop `.crc` sidecars in the logs Spark writes next, and other orphans.
pub fn check_orphan_crc(cp: &Checkpoint, ctx: &Context) -> Vec<Finding> {
    let mut out = Vec::new();
    let next = cp.restart_batch();
    for c in cp.hadoop_crcs.values().filter(|c| !c.main_exists) {
        let dir = c.main.rfind('/').map(|i| &c.main[..i]).unwrap_or("");
        let name = c.main.rsplit('/').next().unwrap_or("");
        let source_log = dir.starts_with("sources/") && dir[8..].parse::<u32>().is_ok();
        let is_log = dir == "offsets" || dir == "commits" || source_log;
        let batch = crate::log::parse_batch_file_name(name, source_log).map(|b| b.0);
        if is_log && cp.kind.0 == CheckpointKind::StructuredStreaming {
            // The id Spark writes next in this log: offsets after the latest planned batch; the commit of the
            // batch the restart runs; a file source log after its own latest entry (its ids are the source's
            // log offsets, not batch ids).
            let next_id = match dir {
                "offsets" => Some(cp.last_batch_id().map(|l| l + 1).unwrap_or(0)),
                "commits" => next,
                _ => {
                    let n = dir[8..].parse::<u32>().ok();
                    Some(
                        n.and_then(|n| cp.source_logs.get(&n))
                            .and_then(|l| l.listed.keys().next_back())
                            .map(|l| l + 1)
                            .unwrap_or(0),
                    )
                }
            };
            if let (Some(b), Some(n)) = (batch, next_id) {
                let written_first = b == n;
                let later = b >= n;
                if later {
                    let mut f = Finding::new(
                        Code::OrphanHadoopCrc,
                        if written_first { Severity::Error } else { Severity::Warning },
                        format!("Orphan checksum file {} blocks Spark from writing {}", c.path, c.main),
                    )
                    .classes(&["_LEGACY_ERROR_TEMP_2207", "CONCURRENT_STREAM_LOG_UPDATE"])
                    .evidence(&c.path, format!("sidecar of {} which does not exist", c.main), None)
                    .why(format!(
                        "Hadoop's local file system keeps a `.<name>.crc` next to every file and renames it with the file. When Spark writes {} (temp file + rename without overwrite), the rename fails because `{}` already exists, and Spark reports it as \"Multiple streaming queries are concurrently using {dir}\" (SparkConcurrentModificationException, FileAlreadyExistsException) although no other query runs.",
                        c.main, c.path
                    ))
                    .fix(&[BACKUP.to_string(), format!("Delete the orphan {} (its main file is gone, so it protects nothing).", c.path)]);
                    if written_first {
                        f = f.fails(
                            RestartStage::LogWrite,
                            None,
                            "org.apache.spark.SparkConcurrentModificationException",
                        );
                    }
                    out.push(f);
                    continue;
                }
            }
        }
        if is_partition0_schema_file(&c.main) && cp.kind.0 == CheckpointKind::StructuredStreaming {
            out.push(orphan_schema_crc(cp, ctx, &c.path, &c.main));
            continue;
        }
        out.push(
            Finding::new(Code::OrphanHadoopCrc, Severity::Info, format!("Checksum sidecar {} has no main file", c.path))
                .evidence(&c.path, format!("{} is absent", c.main), None)
                .why("The file it protected was deleted without its Hadoop .crc sidecar (a manual delete or a partial copy).")
                .fix(&[format!("Delete {} after checking why {} is gone.", c.path, c.main)]),
        );
    }
    let orphans: Vec<_> = cp.spark_checksums.values().filter(|c| !c.main_exists).collect();
    if !orphans.is_empty() {
        let mut f = Finding::new(
            Code::OrphanSparkChecksum,
            Severity::Info,
            format!("{} Spark checksum file(s) without their main file", orphans.len()),
        )
        .why("Spark 4.1+ writes `<name>.crc` next to checkpoint files; when a file is deleted (by maintenance or by hand) its checksum file can remain. Harmless by itself; it shows which files existed.")
        .fix(&["No action needed for the restart."]);
        for o in orphans.iter().take(10) {
            f = f.evidence(&o.path, format!("{} is absent", o.main), None);
        }
        out.push(f);
    }
    out
}

/// `state/<op>/0/_metadata/schema` or `state/<op>/0/<store>/_metadata/schema`: the v1/v2 schema file of a store.
fn is_partition0_schema_file(path: &str) -> bool {
    let parts: Vec<&str> = path.split('/').collect();
    let numbered = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
    matches!(parts.as_slice(), ["state", op, "0", "_metadata", "schema"] | ["state", op, "0", _, "_metadata", "schema"] if numbered(op))
}

/// The `.crc` of a store's schema file left without the file: Spark writes the file anew on the next batch it
/// plans (a temp file renamed without overwrite, `.crc` with it), and the rename finds the old `.crc` in its place
/// (observed, 4.1.4: `FileAlreadyExistsException: Rename destination …/_metadata/.schema.crc already exists.`;
/// 3.5.9: the job's `SparkException`, that as its cause;
/// with `spark.sql.streaming.stateStore.stateSchemaCheck=false` the failure does not stop the query, the file is
/// there after that batch, and the next restart with the check on goes on).
fn orphan_schema_crc(cp: &Checkpoint, ctx: &Context, crc: &str, main: &str) -> Finding {
    let conf = super::schema_file::SCHEMA_CHECK_CONF;
    let check_off = super::effective_conf_value(cp, ctx, conf).is_some_and(|v| v.trim().eq_ignore_ascii_case("false"));
    let f = Finding::new(
        Code::OrphanHadoopCrc,
        if check_off { Severity::Warning } else { Severity::Error },
        format!("Orphan checksum file {crc} blocks Spark from writing the state schema file {main}"),
    )
    .evidence(crc, format!("sidecar of {main}, which does not exist"), None)
    .why(format!(
        "A store whose schema file is gone gets a new one, written from the restarted query's schemas when Spark plans the next batch: a temp file renamed without overwrite, its Hadoop `.crc` renamed with it. The rename finds the old `{crc}` in its place and fails (FileAlreadyExistsException: Rename destination … already exists){}.",
        if check_off { format!("; {conf}=false keeps that failure from stopping the query") } else { String::new() }
    ))
    .fix(&[
        BACKUP.to_string(),
        format!("Restore {main} from a backup or another copy of this checkpoint (Spark writes it once, on the operator's first batch), or delete the orphan {crc}: Spark then writes {main} anew from the restarted query's schemas (observed with real Spark)."),
    ]);
    if check_off {
        return f;
    }
    // 3.5 writes the file in the task that opens partition 0's store: the job's SparkException, this as its cause.
    match super::legacy(ctx) {
        true => f.fails(RestartStage::StateLoad, None, "org.apache.spark.SparkException"),
        false => f.fails(RestartStage::StateSchema, None, "org.apache.hadoop.fs.FileAlreadyExistsException"),
    }
}
