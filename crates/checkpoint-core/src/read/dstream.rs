//! DStream stage: reads every `checkpoint-<ms>[.bk]` file of a DStream root (capped per file) and decodes
//! it with [`crate::dstream::read_file`] (codec sniffed, serialization parsed without executing anything,
//! the `Checkpoint` walked). A file the archive cannot give is kept with its reason.

use super::Reader;
use crate::dstream::{read_file, recovery, CheckpointFile, Unreadable};
use crate::layout::dstream_time;
use crate::model::{Checkpoint, NotVerified};

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
            Err(e) => {
                // Its content was not seen: a zip entry that does not unpack is the archive's finding, a limit
                // the file-not-verified one; neither is known to fail.
                let not_verified = e.is_content_unseen();
                if e.is_entry_damage() {
                    cp.archive_unreadable.insert(path.clone(), e.clone());
                }
                CheckpointFile {
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
                        not_verified,
                    }),
                }
            }
        };
        cp.dstream_files.push(file);
    }
    note_not_verified(cp);
}

/// Records the files not verified (a limit, or the input could not give them): a restart reads one when Spark
/// tries it before the file it recovers from (newest first), which makes the verdict unknown.
fn note_not_verified(cp: &mut Checkpoint) {
    let order = recovery::try_order(&cp.dstream_files);
    let recovered = order.iter().position(|&i| cp.dstream_files[i].content.is_ok()).unwrap_or(order.len());
    for (at, &i) in order.iter().enumerate() {
        let f = &cp.dstream_files[i];
        if let Err(u) = &f.content {
            if u.not_verified {
                let reason = format!("{}{} ({} step)", u.reason, u.place(), u.step);
                cp.not_verified.push(NotVerified { path: f.path.clone(), reason, restart_reads: at < recovered });
            }
        }
    }
}
