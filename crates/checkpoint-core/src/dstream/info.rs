//! The report's `dstream` object (REPORT-CONTRACT.md) from the model: the files in Spark's order, the one
//! it recovers from, that file's classes, allow-list value, `Checkpoint` fields and graph, and the RDD
//! checkpoint folders the graph restores.

use super::classes::allowed_classes_setting;
use super::recovery::{rdd_folder, recovered, try_order};
use super::{CheckpointFile, SparkCheckpoint};
use crate::model::Checkpoint;
use crate::report::*;

/// What to check before using the allow-list value.
pub const ALLOWED_CLASSES_NOTE: &str = "spark.streaming.checkpoint.allowedClasses is not in the released Apache Spark jars up to 4.1 (a vendor runtime setting); check the format your runtime accepts (exact names, wildcards, array classes) and whether its default list already covers Scala and java.* classes.";

/// True for a conf key whose value Spark's default `spark.redaction.regex`
/// (`(?i)secret|password|token|access[.]key`) masks.
pub fn redacted_key(key: &str) -> bool {
    let k = key.to_ascii_lowercase();
    ["secret", "password", "token", "access.key"].iter().any(|w| k.contains(w))
}

/// The RDD checkpoint folders a checkpoint's graph restores: (relative folder, recorded path, stream index).
pub fn rdd_checkpoints(c: &SparkCheckpoint) -> Vec<(String, String, usize)> {
    let mut out: Vec<(String, String, usize)> = Vec::new();
    for (i, st) in c.graph.streams.iter().enumerate() {
        for d in &st.checkpoint_data {
            if let Some(p) = &d.rdd_checkpoint {
                let rel = rdd_folder(c.checkpoint_dir.as_deref(), p);
                if !out.iter().any(|(r, _, _)| *r == rel) {
                    out.push((rel, p.clone(), i));
                }
            }
        }
    }
    out
}

/// True when the folder `rel` is in the input (as a folder or as the parent of a file).
pub fn folder_exists(cp: &Checkpoint, rel: &str) -> bool {
    cp.dirs.contains(rel) || cp.files.iter().any(|f| f.path.starts_with(&format!("{rel}/")))
}

fn file_info(f: &CheckpointFile) -> DstreamFileInfo {
    DstreamFileInfo {
        path: f.path.clone(),
        time_ms: f.time_ms,
        backup: f.backup,
        bytes: f.size,
        codec: f.codec.short_name().to_string(),
        stream_bytes: f.stream_bytes,
        readable: f.content.is_ok(),
        error: f.content.as_ref().err().map(|u| match u.offset {
            Some(o) => format!("{} (byte {o})", u.reason),
            None => u.reason.clone(),
        }),
    }
}

fn checkpoint_info(c: &SparkCheckpoint) -> DstreamCheckpointInfo {
    let g = &c.graph;
    DstreamCheckpointInfo {
        master: c.master.clone(),
        app_name: c.app_name.clone(),
        jars: c.jars.clone(),
        checkpoint_time_ms: c.checkpoint_time_ms,
        checkpoint_dir: c.checkpoint_dir.clone(),
        checkpoint_duration_ms: c.checkpoint_duration_ms,
        pending_times_ms: c.pending_times_ms.clone(),
        spark_conf: c
            .spark_conf
            .iter()
            .map(|(k, v)| (k.clone(), if redacted_key(k) { "*********(redacted)".into() } else { v.clone() }))
            .collect(),
        graph: DstreamGraphInfo {
            batch_duration_ms: g.batch_duration_ms,
            remember_duration_ms: g.remember_duration_ms,
            zero_time_ms: g.zero_time_ms,
            output_streams: g.output_streams.clone(),
            input_streams: g.input_streams.clone(),
            streams: g
                .streams
                .iter()
                .map(|s| DstreamStreamInfo {
                    class: s.class.clone(),
                    parents: s.parents.clone(),
                    remember_duration_ms: s.remember_duration_ms,
                    slide_duration_ms: s.slide_duration_ms,
                    checkpoint_duration_ms: s.checkpoint_duration_ms,
                    must_checkpoint: s.must_checkpoint,
                    creation_site: s.creation_site.clone(),
                    checkpoint_data: s
                        .checkpoint_data
                        .iter()
                        .map(|d| DstreamCheckpointDatum {
                            time_ms: d.time_ms,
                            rdd_checkpoint: d.rdd_checkpoint.clone(),
                            summary: d.summary.clone(),
                        })
                        .collect(),
                })
                .collect(),
        },
    }
}

/// The `dstream` object of a DStream root.
pub fn dstream_info(cp: &Checkpoint) -> DstreamInfo {
    let files = &cp.dstream_files;
    let rec = recovered(files);
    let content = rec.and_then(|f| f.content.as_ref().ok());
    let classes: Vec<DstreamClass> = content
        .map(|c| {
            c.classes
                .iter()
                .map(|k| DstreamClass {
                    name: k.name.clone(),
                    serial_version_uid: k.suid.to_string(),
                    group: k.group.as_str().to_string(),
                    proxy: k.proxy,
                    path: k.path.clone(),
                })
                .collect()
        })
        .unwrap_or_default();
    DstreamInfo {
        checkpoint_times_ms: cp.dstream_times_ms.clone(),
        allowed_classes_setting: content.map(|c| allowed_classes_setting(&c.classes)).unwrap_or_default(),
        allowed_classes_note: ALLOWED_CLASSES_NOTE.to_string(),
        classes,
        files: try_order(files).into_iter().map(|i| file_info(&files[i])).collect(),
        recovers_from: rec.map(|f| f.path.clone()),
        checkpoint: content.map(checkpoint_info),
        rdd_checkpoints: content
            .map(|c| {
                rdd_checkpoints(c)
                    .into_iter()
                    .map(|(path, recorded, _)| DstreamRddCheckpoint {
                        exists: folder_exists(cp, &path),
                        path,
                        recorded,
                    })
                    .collect()
            })
            .unwrap_or_default(),
    }
}
