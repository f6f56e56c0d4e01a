//! DStream stage: reads every `checkpoint-<ms>[.bk]` file of a DStream root (capped per file) and decodes
//! it with [`crate::dstream::read_file`] (codec sniffed, serialization parsed without executing anything,
//! the `Checkpoint` walked). A file the archive cannot give is kept with its reason.

use super::Reader;
use crate::dstream::{read_file, CheckpointFile, Unreadable};
use crate::layout::dstream_time;
use crate::model::Checkpoint;

/// Cap for one checkpoint file as stored (real ones are a few KiB).
pub const MAX_DSTREAM_FILE_BYTES: u64 = 64 * 1024 * 1024;

/// Reads the checkpoint files at the root of a DStream checkpoint into [`Checkpoint::dstream_files`].
pub(crate) fn read_dstream_files(cp: &mut Checkpoint, rd: &mut Reader<'_>) {
    let names: Vec<(String, u64, i64)> = cp
        .files
        .iter()
        .filter(|f| !f.path.contains('/'))
        .filter_map(|f| dstream_time(&f.path).map(|t| (f.path.clone(), f.size, t)))
        .collect();
    for (path, size, time_ms) in names {
        let backup = path.ends_with(".bk");
        let file = match rd.read(&path, MAX_DSTREAM_FILE_BYTES) {
            Ok(bytes) => {
                let f = read_file(&path, time_ms, backup, &bytes);
                super::sidecars::verify(cp, rd, &path, &bytes);
                f
            }
            Err(e) => CheckpointFile {
                path: path.clone(),
                time_ms,
                backup,
                size,
                codec: crate::codec::Codec::Unknown,
                stream_bytes: None,
                content: Err(Unreadable {
                    step: "archive",
                    offset: None,
                    reason: format!("the file could not be taken from the input: {e}"),
                    exception: "java.io.IOException",
                }),
            },
        };
        cp.dstream_files.push(file);
    }
}
