//! DStream checkpoints (FORMATS.md §17): which `checkpoint-<time>` file Spark recovers from and which are
//! unreadable, RDD checkpoint folders the recovered graph restores but the input lacks, and the migration
//! note to Structured Streaming. Class findings (gadgets, unexpected content, REPL classes, the allow-list,
//! a pasted class error) are in [`super::dstream_classes`].

use super::BACKUP;
use crate::dstream::info::{folder_exists, rdd_checkpoints};
use crate::dstream::paths::simple;
use crate::dstream::recovery::{recovered, try_order};
use crate::dstream::{CheckpointFile, SparkCheckpoint};
use crate::model::Checkpoint;
use crate::report::{CheckpointKind, Code, Finding, RestartStage, Severity};
use crate::time::utc;
use crate::Context;

/// The last resort for a DStream checkpoint, worded once.
pub const START_OVER: &str = "Last resort: start over on an empty checkpoint directory (move this one away, or give StreamingContext.getOrCreate a new directory). The DStream state (updateStateByKey / mapWithState, windows) and the batches not yet processed are lost; the sources start from their own settings (Kafka: the group's committed offsets or auto.offset.reset).";

pub(crate) fn is_dstream(cp: &Checkpoint) -> bool {
    cp.kind.0 == CheckpointKind::Dstream
}

/// The file Spark recovers from and its content.
pub(crate) fn recovered_checkpoint(cp: &Checkpoint) -> Option<(&CheckpointFile, &SparkCheckpoint)> {
    let f = recovered(&cp.dstream_files)?;
    Some((f, f.content.as_ref().ok()?))
}

fn unreadable_detail(f: &CheckpointFile) -> (String, Option<u64>) {
    match &f.content {
        Err(u) => (
            format!("{}{} (Spark's reader: {})", u.reason, u.place(), u.exception),
            if u.step == "codec" { u.offset } else { None },
        ),
        Ok(_) => (String::new(), None),
    }
}

/// `dstream-checkpoint-unreadable`: each file that does not read; an error (the restart fails) when none does.
/// A file not verified (a limit of this inspector, or the input could not give it) is no such file: the
/// file-not-verified and archive findings name it, and while one is left the restart is not known to fail.
pub fn check_files(cp: &Checkpoint, _ctx: &Context) -> Vec<Finding> {
    if !is_dstream(cp) || cp.dstream_files.is_empty() {
        return Vec::new();
    }
    let files = &cp.dstream_files;
    let order = try_order(files);
    let rec = recovered(files).map(|f| f.path.clone());
    let bad: Vec<&CheckpointFile> =
        order.iter().map(|&i| &files[i]).filter(|f| matches!(&f.content, Err(u) if !u.not_verified)).collect();
    if bad.is_empty() {
        return Vec::new();
    }
    let unverified = files.iter().any(|f| matches!(&f.content, Err(u) if u.not_verified));
    let why = "Spark lists checkpoint-<time> files, sorts them by time (a .bk copy before the file of the same time) and tries them newest first (CheckpointReader.read): it decompresses each with the restarting application's spark.io.compression.codec and deserializes one org.apache.spark.streaming.Checkpoint; any exception makes it try the next file.";
    // No file reads, but one was not verified: Spark may recover from it (the file-not-verified finding).
    let rec = rec.or_else(|| unverified.then(String::new));
    let Some(rec) = rec else {
        let mut f = Finding::new(
            Code::DstreamCheckpointUnreadable,
            Severity::Error,
            format!("None of the {} DStream checkpoint files can be read", files.len()),
        )
        .why(format!("{why} When every file fails, StreamingContext.getOrCreate throws SparkException: Failed to read checkpoint from directory."))
        .fix(&[
            BACKUP.to_string(),
            "If the files were written with another spark.io.compression.codec than the restarting application uses, restart with the writer's codec (they are read with the restarting application's codec).".into(),
            "Restore the checkpoint files from a copy taken while the job was running.".into(),
            START_OVER.into(),
        ])
        .fails(RestartStage::DstreamCheckpointRead, None, "org.apache.spark.SparkException");
        for b in bad {
            let (d, off) = unreadable_detail(b);
            f = f.evidence_sized(&b.path, b.size, d, off);
        }
        return vec![f];
    };
    bad.into_iter()
        .map(|b| {
            let (d, off) = unreadable_detail(b);
            let newer = order.iter().position(|&i| files[i].path == b.path)
                < order.iter().position(|&i| files[i].path == rec);
            let title = if rec.is_empty() {
                format!("{} cannot be read; whether Spark recovers from a file not verified is unknown", b.path)
            } else if newer {
                format!("{} cannot be read; Spark falls back to {rec}", b.path)
            } else {
                format!("{} cannot be read (an older file; Spark recovers from {rec})", b.path)
            };
            Finding::new(Code::DstreamCheckpointUnreadable, Severity::Warning, title)
                .evidence_sized(&b.path, b.size, d, off)
                .why(format!("{why} A newer file that fails costs the batches it covered: they are generated again from the older checkpoint's time."))
                .fix(&[BACKUP.to_string(), match rec.is_empty() {
                    true => "Check the files this inspector could not verify (the file-not-verified or archive-entry-unreadable finding): Spark recovers from the first of them that reads.".to_string(),
                    false => format!("Nothing blocks the restart: it recovers from {rec}. Move the unreadable file away to keep the directory clean."),
                }])
        })
        .collect()
}

/// A one-line picture of the graph: each output stream's chain down to its input.
pub(crate) fn graph_summary(c: &SparkCheckpoint) -> String {
    let g = &c.graph;
    let mut lines = Vec::new();
    for &o in &g.output_streams {
        let mut chain = Vec::new();
        let mut cur = Some(o);
        while let Some(i) = cur {
            if chain.len() > 50 {
                break;
            }
            let Some(s) = g.streams.get(i) else { break };
            chain.push(simple(&s.class).to_string());
            cur = s.parents.first().copied();
        }
        chain.reverse();
        lines.push(chain.join(" → "));
    }
    lines.join("; ")
}

/// `dstream-recovery`: the file Spark recovers from, with its graph.
pub fn check_recovery(cp: &Checkpoint, _ctx: &Context) -> Vec<Finding> {
    if !is_dstream(cp) {
        return Vec::new();
    }
    let Some((f, c)) = recovered_checkpoint(cp) else { return Vec::new() };
    let batch = c.graph.batch_duration_ms.map(|b| format!(", batch duration {b} ms")).unwrap_or_default();
    // A newer file this inspector could not verify comes first: Spark recovers from it when it reads.
    let order = crate::dstream::recovery::try_order(&cp.dstream_files);
    let newer_unverified = order
        .iter()
        .map(|&i| &cp.dstream_files[i])
        .take_while(|g| g.path != f.path)
        .find(|g| matches!(&g.content, Err(u) if u.not_verified));
    let unless = newer_unverified.map(|g| format!(" unless {} (not verified) reads", g.path)).unwrap_or_default();
    let mut fi = Finding::new(
        Code::DstreamRecovery,
        Severity::Info,
        format!(
            "Spark recovers from {} (checkpoint time {}){batch}{unless}",
            f.path,
            c.checkpoint_time_ms.map(utc).unwrap_or_else(|| "unknown".into())
        ),
    )
    .evidence_sized(
        &f.path,
        f.size,
        format!(
            "{} Checkpoint of {} ({}): {} stream(s): {}",
            f.codec,
            c.app_name.as_deref().unwrap_or("?"),
            c.master.as_deref().unwrap_or("?"),
            c.graph.streams.len(),
            graph_summary(c)
        ),
        None,
    )
    .why("CheckpointReader.read tries the checkpoint files newest first and recovers the StreamingContext (its SparkConf, DStream graph and checkpointed RDDs) from the first one that deserializes; generation resumes at the batch after the checkpoint time.")
    .fix(&["Nothing to do unless another finding says so."]);
    if !c.pending_times_ms.is_empty() {
        let mut pending = c.pending_times_ms.clone();
        pending.sort_unstable();
        let times: Vec<String> = pending.iter().map(|t| utc(*t)).collect();
        fi = fi.evidence(&f.path, format!("pending batches re-run on recovery: {}", times.join(", ")), None);
    }
    vec![fi]
}

/// `dstream-rdd-checkpoint-missing`: RDD checkpoint folders the recovered graph restores, absent from the input.
pub fn check_rdd_checkpoints(cp: &Checkpoint, _ctx: &Context) -> Vec<Finding> {
    if !is_dstream(cp) {
        return Vec::new();
    }
    let Some((f, c)) = recovered_checkpoint(cp) else { return Vec::new() };
    let missing: Vec<(String, String, usize)> =
        rdd_checkpoints(c).into_iter().filter(|(rel, _, _)| !folder_exists(cp, rel)).collect();
    let older = older_file_with_all_rdds(cp, f);
    missing
        .into_iter()
        .map(|(rel, recorded, stream)| {
            let st = &c.graph.streams[stream];
            let site = st.creation_site.as_deref().map(|s| format!(" ({s})")).unwrap_or_default();
            let mut fix = vec![
                BACKUP.to_string(),
                format!("Put the folder {rel} back from a copy (it is written by ReliableCheckpointRDD: part-NNNNN files and _partitioner)."),
            ];
            if let Some(o) = &older {
                fix.push(format!("Or move {} and the newer checkpoint files away so Spark recovers from {o}, whose RDD checkpoint folders are all present (the batches after it are generated again).", f.path));
            }
            fix.push(START_OVER.into());
            Finding::new(
                Code::DstreamRddCheckpointMissing,
                Severity::Error,
                format!("RDD checkpoint folder {rel} of {} is missing", simple(&st.class)),
            )
            .evidence_sized(&f.path, f.size, format!("{}{site} checkpoint data names {recorded}", simple(&st.class)), None)
            .evidence(&rel, "absent from the input", None)
            .why(format!("On recovery DStreamGraph.restoreCheckpointData has every DStream restore its checkpointed RDDs: sc.checkpointFile({recorded}) builds a ReliableCheckpointRDD, which requires the folder to exist, so Spark stops with IllegalArgumentException: requirement failed: Checkpoint directory does not exist: {recorded}."))
            .fix(&fix)
            .fails(RestartStage::DstreamRestore, None, "java.lang.IllegalArgumentException")
        })
        .collect()
}

/// An older readable checkpoint file whose RDD checkpoint folders are all in the input.
fn older_file_with_all_rdds(cp: &Checkpoint, rec: &CheckpointFile) -> Option<String> {
    let files = &cp.dstream_files;
    try_order(files)
        .into_iter()
        .map(|i| &files[i])
        .skip_while(|f| f.path != rec.path)
        .skip(1)
        .find(|f| {
            f.content.as_ref().is_ok_and(|c| {
                let rdds = rdd_checkpoints(c);
                !rdds.is_empty() && rdds.iter().all(|(rel, _, _)| folder_exists(cp, rel))
            })
        })
        .map(|f| f.path.clone())
}

/// DStream class → (the DStream API call, its Structured Streaming counterpart).
fn migration_of(class: &str) -> Option<(&'static str, &'static str)> {
    let n = simple(class);
    Some(match n {
        "DirectKafkaInputDStream" | "DeterministicKafkaInputDStream" | "KafkaInputDStream" => (
            "KafkaUtils.createDirectStream",
            "spark.readStream.format(\"kafka\") (offsets are kept in the new checkpoint)",
        ),
        "FileInputDStream" => {
            ("textFileStream / fileStream", "spark.readStream.text(dir) or .format(\"json\"/\"csv\"/...)")
        }
        "SocketInputDStream" | "RawInputDStream" => ("socketTextStream", "spark.readStream.format(\"socket\")"),
        "StateDStream" | "PythonStateDStream" => (
            "updateStateByKey",
            "groupByKey(...).transformWithState (Spark 4.0+; transformWithStateInPandas in PySpark)",
        ),
        "MapWithStateDStream" | "MapWithStateDStreamImpl" | "InternalMapWithStateDStream" => {
            ("mapWithState", "groupByKey(...).transformWithState (Spark 4.0+), with TTL for state timeouts")
        }
        "ForEachDStream" => ("foreachRDD", "writeStream.foreachBatch((df, batchId) => ...)"),
        "WindowedDStream" | "ReducedWindowedDStream" => (
            "window / reduceByKeyAndWindow",
            "groupBy(window($\"time\", \"<length>\", \"<slide>\")).agg(...) with a watermark",
        ),
        "ShuffledDStream" => ("reduceByKey / combineByKey", "groupBy(...).agg(...)"),
        "TransformedDStream" | "PythonTransformedDStream" => {
            ("transform", "DataFrame operations, or foreachBatch for RDD code")
        }
        "QueueInputDStream" | "ConstantInputDStream" => {
            ("queueStream / ConstantInputDStream", "the rate source or MemoryStream (tests)")
        }
        _ => return None,
    })
}

/// `dstream-migration`: how this graph's DStream operations map to Structured Streaming.
pub fn check_migration(cp: &Checkpoint, _ctx: &Context) -> Vec<Finding> {
    if !is_dstream(cp) {
        return Vec::new();
    }
    let Some((f, c)) = recovered_checkpoint(cp) else { return Vec::new() };
    let mut steps: Vec<String> = Vec::new();
    for s in &c.graph.streams {
        if let Some((from, to)) = migration_of(&s.class) {
            let line = format!("{} ({from}) → {to}", simple(&s.class));
            if !steps.contains(&line) {
                steps.push(line);
            }
        }
    }
    steps.push("Structured Streaming keeps its own checkpoint (checkpointLocation): the DStream state cannot be carried over; seed the new query's state from your sink or start it empty.".into());
    vec![Finding::new(
        Code::DstreamMigration,
        Severity::Info,
        "DStreams are legacy: this graph maps to Structured Streaming as follows",
    )
    .evidence_sized(&f.path, f.size, graph_summary(c), None)
    .why("Spark Streaming (DStreams) is no longer developed; Structured Streaming replaces it with DataFrame sources and sinks, exactly-once checkpoints that are JSON and row files instead of serialized Java objects, and state operators. The usual mapping: createDirectStream → readStream.format(\"kafka\"), updateStateByKey / mapWithState → transformWithState, foreachRDD → foreachBatch.")
    .fix(&steps)]
}
