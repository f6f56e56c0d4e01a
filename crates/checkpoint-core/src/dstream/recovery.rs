//! Which checkpoint file Spark recovers from, as `CheckpointReader.read` (Checkpoint.scala) does it: the
//! files named `checkpoint-<time>[.bk]`, sorted by time with a `.bk` before the file of the same time
//! (`Checkpoint.getCheckpointFiles`), tried in reverse (newest first, the file before its `.bk`); the first
//! that deserializes wins, and when none does: `SparkException: Failed to read checkpoint from directory`.
//! Then `DStreamGraph.restoreCheckpointData` has every DStream restore its checkpointed RDDs
//! (`sc.checkpointFile(path)`: `ReliableCheckpointRDD` requires the folder to exist).

use super::CheckpointFile;

/// Indexes of `files` in the order Spark tries them (newest time first; a file before its `.bk`).
pub fn try_order(files: &[CheckpointFile]) -> Vec<usize> {
    let mut idx: Vec<usize> = (0..files.len()).collect();
    idx.sort_by(|&a, &b| {
        let (fa, fb) = (&files[a], &files[b]);
        fb.time_ms.cmp(&fa.time_ms).then(fa.backup.cmp(&fb.backup)).then(fa.path.cmp(&fb.path))
    });
    idx
}

/// The file Spark recovers from: the first readable one in [`try_order`].
pub fn recovered(files: &[CheckpointFile]) -> Option<&CheckpointFile> {
    try_order(files).into_iter().map(|i| &files[i]).find(|f| f.content.is_ok())
}

/// The folder an RDD checkpoint path names, relative to the checkpoint root: the part after the recorded
/// `checkpointDir`, else its last two segments (`<uuid>/rdd-<id>`, where `ReliableRDDCheckpointData` puts
/// it under the checkpoint directory).
pub fn rdd_folder(checkpoint_dir: Option<&str>, path: &str) -> String {
    if let Some(dir) = checkpoint_dir.map(|d| d.trim_end_matches('/')).filter(|d| !d.is_empty()) {
        if let Some(rest) = path.strip_prefix(dir).and_then(|r| r.strip_prefix('/')) {
            return rest.trim_end_matches('/').to_string();
        }
    }
    let segs: Vec<&str> = path.trim_end_matches('/').rsplit('/').take(2).collect();
    segs.into_iter().rev().collect::<Vec<_>>().join("/")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn f(path: &str, time_ms: i64, backup: bool, ok: bool) -> CheckpointFile {
        CheckpointFile {
            path: path.into(),
            time_ms,
            backup,
            size: 0,
            codec: crate::codec::Codec::Lz4Block,
            stream_bytes: None,
            content: if ok {
                Ok(Default::default())
            } else {
                Err(super::super::Unreadable {
                    step: "codec",
                    offset: None,
                    reason: String::new(),
                    exception: "",
                    not_verified: false,
                })
            },
        }
    }

    #[test]
    fn newest_first_and_the_file_before_its_backup() {
        let files = vec![
            f("checkpoint-1000.bk", 1000, true, true),
            f("checkpoint-2000", 2000, false, false),
            f("checkpoint-1000", 1000, false, true),
            f("checkpoint-2000.bk", 2000, true, true),
        ];
        let order: Vec<&str> = try_order(&files).into_iter().map(|i| files[i].path.as_str()).collect();
        assert_eq!(order, ["checkpoint-2000", "checkpoint-2000.bk", "checkpoint-1000", "checkpoint-1000.bk"]);
        assert_eq!(recovered(&files).map(|f| f.path.as_str()), Some("checkpoint-2000.bk"));
    }

    #[test]
    fn rdd_folders_are_relative_to_the_recorded_directory() {
        let dir = Some("file:/srv/etl/chk");
        assert_eq!(rdd_folder(dir, "file:/srv/etl/chk/7f24/rdd-142"), "7f24/rdd-142");
        assert_eq!(rdd_folder(Some("hdfs://nn/other"), "file:/srv/etl/chk/7f24/rdd-142"), "7f24/rdd-142");
        assert_eq!(rdd_folder(None, "rdd-1"), "rdd-1");
    }
}
