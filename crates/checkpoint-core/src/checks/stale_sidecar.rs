//! `stale-checksum-sidecar`: a Hadoop `.crc` sidecar (FORMATS.md §18) or a Spark 4.1+ checksum file (§15)
//! that disagrees with a data file which decodes completely. The data file is intact (a state file's codec
//! blocks and record stream, a RocksDB zip's metadata, a log file's JSON all read), so the sidecar is the bad
//! file: written for other bytes by another write attempt of the same file (a retried or speculative task, a
//! second writer, a copy that mixed two attempts) or before the file was rewritten. The fix is about the
//! sidecar; the data file is never to be restored.
//!
//! Which reads verify which sidecar (Spark 4.1.4 and Hadoop 3.4 source; the real checkpoints of
//! `tools/spark-gen/stale_sidecar.py` confirm each):
//! * `FileContextBasedCheckpointFileManager.open` (offset and commit logs, `metadata`, the HDFS provider's
//!   `.delta`/`.snapshot`, changelogs) calls `FileContext.open(path)`; `LocalFs` is a `ChecksumFs`, whose
//!   one-argument `open` is `FilterFs.open(Path)`, straight to the raw local file system: the `.crc` is never
//!   read (stale-crc-delta-hdfs-4.1.4, stale-crc-last-offsets-4.1.4 resume).
//! * The RocksDB provider unzips `<v>.zip` with `Utils.unzipFilesFromFile(fs, ..)` and copies SST files with
//!   `FileSystem.copyToLocalFile`: `LocalFileSystem` (a `ChecksumFileSystem`) verifies the `.crc` and throws
//!   `org.apache.hadoop.fs.ChecksumException`, reported as `CANNOT_LOAD_STATE_STORE.UNCATEGORIZED`
//!   (stale-crc-zip-rocksdb-4.1.4). The zip's Spark checksum file is not read (stale-checksum-zip-rocksdb-4.1.4).
//! * `ChecksumCheckpointFileManager` (4.1+, `spark.sql.streaming.checkpoint.fileChecksum.enabled`, default true)
//!   wraps the state store providers' file manager and verifies the checksum file when the provider closes a
//!   `.delta`, `.snapshot` or `.changelog` it read: `CHECKPOINT_FILE_CHECKSUM_VERIFICATION_FAILED` under
//!   `CANNOT_LOAD_STATE_STORE.UNCATEGORIZED` (stale-checksum-delta-hdfs-4.1.4). A missing checksum file is
//!   only a warning in Spark's log ("No checksum file found ..., hence no checksum verification").

use super::BACKUP;
use crate::hadoop::CrcError;
use crate::model::Checkpoint;
use crate::report::{Code, Finding, RestartStage, Severity};
use crate::SparkVersion;

/// The conf that turns Spark's checkpoint file checksums on (4.1+, default true).
pub const CHECKSUM_CONF: &str = "spark.sql.streaming.checkpoint.fileChecksum.enabled";

/// How Spark reads a data file, which decides which of its sidecars it verifies.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ReadPath {
    /// Through the checkpoint file manager without the checksum wrapper (logs, `metadata`).
    Log,
    /// A state store provider's `.delta`, `.snapshot` or `.changelog`, through the (4.1+ checksum-wrapped)
    /// checkpoint file manager.
    StateStream,
    /// A RocksDB `<v>.zip`, unzipped through Hadoop's `FileSystem`.
    Zip,
}

/// Which sidecar disagrees.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SidecarKind {
    /// The Hadoop `.<name>.crc`.
    Hadoop,
    /// The Spark 4.1+ `<name>.crc`.
    Spark,
}

/// True when Spark `v` verifies a sidecar of `kind` on a read of `path` (with checksum files `checksums_on`).
pub fn spark_verifies(kind: SidecarKind, path: ReadPath, v: SparkVersion, checksums_on: bool) -> bool {
    match kind {
        SidecarKind::Hadoop => path == ReadPath::Zip,
        SidecarKind::Spark => path == ReadPath::StateStream && v.at_least(4, 1) && checksums_on,
    }
}

/// A data file that decodes, its disagreeing sidecar, and what a restart does about it.
#[derive(Debug, Clone)]
pub struct Stale<'a> {
    /// The data file (relative path).
    pub main: &'a str,
    /// Which sidecar.
    pub kind: SidecarKind,
    /// How Spark reads the data file.
    pub read: ReadPath,
    /// How the data file decodes (the evidence that it is intact), e.g. `12 puts, 0 removals, ...`.
    pub decoded: String,
    /// What reads it: `state version 3 of operator 0, partition 0`, `the offset log (batch 2)`.
    pub role: String,
    /// When Spark verifies the sidecar and fails: (error class, exception).
    pub fails: Option<(Option<&'static str>, &'static str)>,
    /// Spark 4.3's snapshot repair rebuilds the version without this file: the files it uses.
    pub repaired_from: Option<String>,
}

/// The sidecar's path and what it records against the data file, when it disagrees.
fn sidecar_evidence(cp: &Checkpoint, main: &str, kind: SidecarKind) -> Option<(String, String)> {
    let size = cp.file_size(main).unwrap_or(0);
    let name = main.rsplit('/').next().unwrap_or(main);
    match kind {
        SidecarKind::Hadoop => {
            let c = cp.crc_of(main)?;
            let e = c.verified.as_ref()?.as_ref().err()?;
            let mut d = match e {
                CrcError::Mismatch { offset, expected, actual } => format!(
                    "Hadoop sidecar of {main} (CRC32 per chunk): the chunk at byte {offset} has CRC32 {} recorded but {} in {main} ({size} bytes): it was written for other bytes",
                    *expected as i32, *actual as i32
                ),
                CrcError::LengthMismatch { chunks, expected_chunks } => format!(
                    "Hadoop sidecar of {main}: it covers {chunks} chunk(s) but {main} has {size} bytes ({expected_chunks} chunk(s)): it was written for a file of another length"
                ),
                CrcError::Malformed { offset, reason } => {
                    format!("not a Hadoop sidecar (at byte {offset}: {reason}), so it describes no bytes of {main}")
                }
            };
            if let Some(t) = &c.matches {
                d.push_str(&format!(
                    "; its CRCs match {t}, the temp file another write attempt of {name} left: the sidecar is that attempt's"
                ));
            }
            d.push_str(&mtime_note(cp, &c.path, main));
            Some((c.path.clone(), d))
        }
        SidecarKind::Spark => {
            let c = cp.checksum_of(main)?;
            let e = c.verified.as_ref()?.as_ref().err()?;
            let mut d = format!("Spark checksum file of {main}: {e}");
            if let Some(r) = &c.recorded {
                if let Some(ts) = r.timestamp_ms {
                    d.push_str(&format!("; timestampMs {ts} ({})", crate::time::utc(ts)));
                }
                if let Some(w) = r.creator.as_deref().filter(|w| !w.is_empty()) {
                    d.push_str(&format!(" by {w}"));
                }
                if r.main_file_size != size {
                    d.push_str(&format!(
                        "; it records a file of {} bytes, {main} has {size}: it was written for a file of another length",
                        r.main_file_size
                    ));
                } else {
                    d.push_str(": it was written for other bytes of the same length");
                }
            }
            if let Some(t) = &c.matches {
                d.push_str(&format!("; it matches {t}, the temp file another write attempt of {name} left"));
            }
            d.push_str(&mtime_note(cp, &c.path, main));
            Some((c.path.clone(), d))
        }
    }
}

/// Zip times have a 2 s resolution: a file modified more than this after another was written later.
const MTIME_SLACK_MS: i64 = 2_000;

/// Milliseconds by which `later` was last modified after `earlier`, when both times are known and the gap
/// is beyond the zip time resolution.
pub fn modified_after(cp: &Checkpoint, later: &str, earlier: &str) -> Option<i64> {
    let (a, b) = (cp.modified_ms(later)?, cp.modified_ms(earlier)?);
    (a - b > MTIME_SLACK_MS).then_some(a - b)
}

/// The sidecar of `main` of this kind (path), when listed.
fn sidecar_path(cp: &Checkpoint, main: &str, kind: SidecarKind) -> Option<String> {
    match kind {
        SidecarKind::Hadoop => cp.crc_of(main).map(|c| c.path.clone()),
        SidecarKind::Spark => cp.checksum_of(main).map(|c| c.path.clone()),
    }
}

/// True when the evidence shows the sidecar, not the data file, changed: it covers another length, it matches
/// another attempt's temp file, or it was modified after the data file (Spark writes both together; an edit
/// of the data file leaves the data file the newer one).
pub fn shown_foreign(cp: &Checkpoint, main: &str, kind: SidecarKind) -> bool {
    let side = sidecar_path(cp, main, kind).unwrap_or_default();
    if modified_after(cp, main, &side).is_some() {
        // The data file is the newer one: it was changed after the sidecar was written.
        return false;
    }
    modified_after(cp, &side, main).is_some()
        || match kind {
            SidecarKind::Hadoop => cp.crc_of(main).is_some_and(|c| {
                c.matches.is_some()
                    || matches!(&c.verified, Some(Err(CrcError::LengthMismatch { .. } | CrcError::Malformed { .. })))
            }),
            SidecarKind::Spark => cp.checksum_of(main).is_some_and(|c| {
                c.matches.is_some() || c.recorded.as_ref().is_none_or(|r| Some(r.main_file_size) != cp.file_size(main))
            }),
        }
}

/// "; modified 6 s after <name>" when the sidecar is the newer file.
fn mtime_note(cp: &Checkpoint, side: &str, main: &str) -> String {
    match modified_after(cp, side, main) {
        Some(ms) => format!("; it was modified {} s after {main}, which Spark writes together with it", ms / 1000),
        None => String::new(),
    }
}

/// The finding for one stale sidecar; `None` when the sidecar does not disagree.
pub fn stale_finding(cp: &Checkpoint, v: SparkVersion, s: &Stale<'_>) -> Option<Finding> {
    let (side, detail) = sidecar_evidence(cp, s.main, s.kind)?;
    let what = match s.kind {
        SidecarKind::Hadoop => "Hadoop .crc sidecar",
        SidecarKind::Spark => "Spark checksum file",
    };
    // The checksum file has a Hadoop sidecar of its own, which would be left orphaned.
    let own = cp.crc_of(&side).map(|c| c.path.clone());
    let delete = match &own {
        Some(o) => format!("{side} and its own sidecar {o}"),
        None => side.clone(),
    };
    let fatal = s.fails.is_some() && s.repaired_from.is_none();
    let mut f = Finding::new(
        Code::StaleChecksumSidecar,
        if fatal { Severity::Error } else { Severity::Warning },
        format!("{side} is stale: {} decodes completely, the {what} does not describe it", s.main),
    )
    .evidence(&side, detail, None)
    .evidence(s.main, format!("decodes completely: {}", s.decoded), None);
    let blame = format!(
        "{} ({}) decodes completely, so the data file is intact and the {what} is the bad file: it was written for other bytes, by another write attempt of the same file (a retried or concurrent task, a second writer, a copy that mixed two attempts) or before the file was rewritten.",
        s.main, s.role
    );
    let how = match s.read {
        ReadPath::Log => "reads checkpoint logs through FileContext, which on the local file system skips the .crc (LocalFs passes open(path) straight to the raw file system)",
        ReadPath::StateStream => match s.kind {
            SidecarKind::Hadoop => "reads state files through FileContext, which on the local file system skips the .crc",
            SidecarKind::Spark if !v.at_least(4, 1) => "does not read Spark checksum files (4.1 added them)",
            SidecarKind::Spark => "verifies Spark checksum files only when spark.sql.streaming.checkpoint.fileChecksum.enabled is true",
        },
        ReadPath::Zip => "unzips RocksDB snapshots through Hadoop's FileSystem without reading their Spark checksum files",
    };
    let mut steps = vec![BACKUP.to_string()];
    steps.push(format!(
        "Delete {delete}; keep {}. Spark reads a file that has no {what} without checking it ({}).",
        s.main,
        match s.kind {
            SidecarKind::Hadoop => "Hadoop skips a missing .crc",
            SidecarKind::Spark => "Spark 4.1+ only logs \"No checksum file found\"",
        }
    ));
    match (&s.fails, &s.repaired_from) {
        (Some(_), Some(files)) => {
            f = f.classes(&["CANNOT_LOAD_STATE_STORE.UNCATEGORIZED", "CANNOT_LOAD_STATE_STORE.AUTO_SNAPSHOT_REPAIR_FAILED"]).why(format!(
                "{blame} Spark {v} verifies the {what} when it loads this snapshot and fails, then its automatic snapshot repair (spark.sql.streaming.stateStore.autoSnapshotRepair.enabled, default true in 4.3) rebuilds the version from {files}. The restart goes on; the stale sidecar stays."
            ));
        }
        (Some((class, exc)), None) => {
            let mut classes = vec![class.unwrap_or("CANNOT_LOAD_STATE_STORE.UNCATEGORIZED")];
            let cause = match s.kind {
                SidecarKind::Spark => {
                    classes.push("CHECKPOINT_FILE_CHECKSUM_VERIFICATION_FAILED");
                    steps.push(format!(
                        "Or restart with {CHECKSUM_CONF}=false: Spark then neither verifies nor writes checksum files."
                    ));
                    "CHECKPOINT_FILE_CHECKSUM_VERIFICATION_FAILED"
                }
                SidecarKind::Hadoop => "org.apache.hadoop.fs.ChecksumException: Checksum error",
            };
            f = f
                .classes(&classes)
                .why(format!(
                    "{blame} Spark {v} verifies the {what} when it reads {} and fails although the data is intact: {} caused by {cause}.",
                    s.main,
                    class.unwrap_or("a SparkException")
                ))
                .fails(RestartStage::StateLoad, *class, exc);
        }
        (None, _) => {
            f = f.why(format!(
                "{blame} Spark {v} {how}, so the restart reads {} as it is and goes on. Tools that verify the sidecar (hadoop fs -get, a copy through Hadoop's FileSystem) fail on it with ChecksumException or a checksum error.",
                s.main
            ));
        }
    }
    Some(f.fix(&steps))
}

/// How a log file outside `state/` decodes, when it was read and parses (`None`: not read, or it does not
/// parse).
pub fn log_decoded(cp: &Checkpoint, path: &str) -> Option<String> {
    if let Some(m) = cp.metadata.as_ref().filter(|m| m.path == path) {
        return m.content.is_ok().then(|| "the metadata file parses (query id)".to_string());
    }
    if let Some(f) = cp.offsets.values().find(|f| f.file.path == path) {
        return f.file.content.as_ref().ok().map(|o| {
            format!("a v{} offsets file of batch {} with {} source offset(s)", o.version, f.batch_id, o.source_count())
        });
    }
    if let Some(f) = cp.commits.values().find(|f| f.file.path == path) {
        return f.file.content.is_ok().then(|| format!("the commit file of batch {}", f.batch_id));
    }
    for log in cp.source_logs.values().chain(cp.sink_logs.iter()) {
        if let Some(f) = log.read.values().find(|f| f.file.path == path) {
            return f
                .file
                .content
                .as_ref()
                .ok()
                .map(|b| format!("batch {} of the file log {} ({} entries)", f.batch_id, log.dir, b.entry_count()));
        }
    }
    None
}
