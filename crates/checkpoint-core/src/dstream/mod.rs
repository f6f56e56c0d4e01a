//! DStream (Spark Streaming) checkpoints (FORMATS.md §17): `checkpoint-<ms>` files and their `.bk` copies,
//! each one `org.apache.spark.streaming.Checkpoint` written by Java serialization inside Spark's
//! compression codec (not recorded: sniffed by [`crate::codec`]).
//!
//! [`read_file`] decodes one file into a [`CheckpointFile`]: the codec, the serialization tree
//! ([`crate::javaser`], never executed), and the walk of the `Checkpoint` ([`walk`]: master, app name, jars,
//! times, SparkConf, the `DStreamGraph` and each DStream's checkpointed RDD folders) with every class the
//! stream names ([`classes`]). [`recovery`] orders the files the way `CheckpointReader.read` tries them.
//! [`gadgets`] is the one list of known deserialization gadget classes. Spark sources mirrored:
//! `streaming/src/main/scala/org/apache/spark/streaming/{Checkpoint,DStreamGraph}.scala`,
//! `streaming/.../dstream/{DStream,DStreamCheckpointData}.scala` (3.5).

pub mod classes;
pub mod collections;
pub mod gadgets;
pub mod info;
pub mod paths;
pub mod recovery;
pub mod walk;

#[cfg(test)]
mod tests;

use crate::codec::Codec;
use crate::javaser::{Limits, SerError, SerErrorKind};
use classes::ClassEntry;

/// Largest decompressed checkpoint file read (real ones are tens of KiB).
pub const MAX_DECOMPRESSED: usize = 64 << 20;

/// A `checkpoint-<ms>[.bk]` file and what it holds.
#[derive(Debug, Clone, PartialEq)]
pub struct CheckpointFile {
    /// Path relative to the checkpoint root.
    pub path: String,
    /// The time in its name (ms since the epoch).
    pub time_ms: i64,
    /// True for a `.bk` copy.
    pub backup: bool,
    /// Size in bytes as listed.
    pub size: u64,
    /// The codec sniffed from its first bytes (`Unknown` = none recognised: read as uncompressed).
    pub codec: Codec,
    /// Bytes of the serialization stream (after decompression), when it decompressed.
    pub stream_bytes: Option<u64>,
    /// The walked checkpoint, or why Spark cannot read the file.
    pub content: Result<SparkCheckpoint, Unreadable>,
}

/// Why a checkpoint file cannot be read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Unreadable {
    /// What failed: `archive`, `codec`, `serialization` or `checkpoint` (the object is not a Checkpoint).
    pub step: &'static str,
    /// Byte offset: in the file for `codec`, in the decompressed stream otherwise.
    pub offset: Option<u64>,
    /// Plain words.
    pub reason: String,
    /// The Java exception Spark's reader would meet (`java.io.StreamCorruptedException`, ...).
    pub exception: &'static str,
    /// A limit of this inspector (the decompressed stream over [`MAX_DECOMPRESSED`], the serialization parser's
    /// depth, handles, values or bytes) or the input (a zip entry that does not unpack, a file over the per-entry
    /// limit) stopped the read, not the file's content: it is not verified, not known to fail.
    pub not_verified: bool,
}

impl Unreadable {
    /// Where the read stopped, in words: ` at byte N of the file` (the codec) or ` at byte N of the decompressed
    /// stream`; empty when no offset is known.
    pub fn place(&self) -> String {
        match (self.step, self.offset) {
            ("codec", Some(o)) => format!(" at byte {o} of the file"),
            (_, Some(o)) => format!(" at byte {o} of the decompressed stream"),
            _ => String::new(),
        }
    }
}

/// What a `Checkpoint` object holds.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct SparkCheckpoint {
    /// `master`.
    pub master: Option<String>,
    /// `framework` (the app name).
    pub app_name: Option<String>,
    /// `jars`.
    pub jars: Vec<String>,
    /// `checkpointTime`.
    pub checkpoint_time_ms: Option<i64>,
    /// `checkpointDir`.
    pub checkpoint_dir: Option<String>,
    /// `checkpointDuration`.
    pub checkpoint_duration_ms: Option<i64>,
    /// `pendingTimes`: batches generated but not completed (re-run on recovery).
    pub pending_times_ms: Vec<i64>,
    /// `sparkConfPairs`, as recorded.
    pub spark_conf: Vec<(String, String)>,
    /// The `DStreamGraph`.
    pub graph: Graph,
    /// Every class the stream names, in first-seen order.
    pub classes: Vec<ClassEntry>,
    /// Objects after the `Checkpoint`, resets, a `TC_EXCEPTION`: things Spark's writer never produces.
    pub oddities: Vec<String>,
}

/// `DStreamGraph`.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Graph {
    /// `batchDuration`.
    pub batch_duration_ms: Option<i64>,
    /// `rememberDuration`.
    pub remember_duration_ms: Option<i64>,
    /// `zeroTime`.
    pub zero_time_ms: Option<i64>,
    /// `outputStreams`, as indexes into `streams`.
    pub output_streams: Vec<usize>,
    /// `inputStreams`, as indexes into `streams`.
    pub input_streams: Vec<usize>,
    /// Every DStream reachable from them.
    pub streams: Vec<DStreamNode>,
}

/// One DStream of the graph.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct DStreamNode {
    /// Its class (`org.apache.spark.streaming.dstream.StateDStream`).
    pub class: String,
    /// Parents (`parent`, `parents`), as indexes into [`Graph::streams`].
    pub parents: Vec<usize>,
    /// `rememberDuration`.
    pub remember_duration_ms: Option<i64>,
    /// The slide: `slideDuration`/`_slideDuration` when recorded, else the parent's, else the batch duration.
    pub slide_duration_ms: Option<i64>,
    /// `checkpointDuration` (set for stateful and checkpointed streams).
    pub checkpoint_duration_ms: Option<i64>,
    /// `mustCheckpoint`.
    pub must_checkpoint: bool,
    /// `creationSite.shortForm` (the API call that made it, e.g. `updateStateByKey at ...`).
    pub creation_site: Option<String>,
    /// `checkpointData.data`: batch time → what was checkpointed.
    pub checkpoint_data: Vec<CheckpointDatum>,
}

/// One entry of a DStream's `checkpointData.data`.
#[derive(Debug, Clone, PartialEq)]
pub struct CheckpointDatum {
    /// The batch time (ms).
    pub time_ms: i64,
    /// An RDD checkpoint folder (the value is a path string: state streams).
    pub rdd_checkpoint: Option<String>,
    /// Otherwise what the value is (e.g. `12 file names`, `3 org.apache.spark.rdd.kafka.KafkaRDDPartition`).
    pub summary: String,
}

/// Reads one checkpoint file's bytes: sniff and decompress, parse the serialization stream, walk it.
pub fn read_file(path: &str, time_ms: i64, backup: bool, bytes: &[u8]) -> CheckpointFile {
    let codec = crate::codec::sniff(bytes);
    let mut f = CheckpointFile {
        path: path.to_string(),
        time_ms,
        backup,
        size: bytes.len() as u64,
        codec,
        stream_bytes: None,
        content: Err(Unreadable {
            step: "codec",
            offset: None,
            reason: String::new(),
            exception: "",
            not_verified: false,
        }),
    };
    let raw = if codec == Codec::Unknown {
        bytes.to_vec()
    } else {
        match crate::codec::decompress(bytes, MAX_DECOMPRESSED) {
            Ok(d) => d,
            Err(e) => {
                f.content = Err(Unreadable {
                    step: "codec",
                    offset: Some(e.offset),
                    reason: format!("the {} stream does not decompress: {}", e.codec, e.message),
                    exception: if e.kind == crate::codec::CodecErrorKind::Truncated {
                        "java.io.EOFException"
                    } else {
                        "java.io.IOException"
                    },
                    not_verified: e.kind == crate::codec::CodecErrorKind::OverLimit,
                });
                return f;
            }
        }
    };
    f.stream_bytes = Some(raw.len() as u64);
    f.content = read_stream(&raw, codec);
    f
}

fn read_stream(raw: &[u8], codec: Codec) -> Result<SparkCheckpoint, Unreadable> {
    let limits = Limits { max_bytes: MAX_DECOMPRESSED, ..Limits::default() };
    let stream = crate::javaser::parse(raw, &limits).map_err(|e: SerError| {
        let head = if codec == Codec::Unknown && !raw.starts_with(&crate::javaser::STREAM_HEADER) {
            "not compressed with a codec Spark writes and not a Java serialization stream".to_string()
        } else {
            format!("the Java serialization stream is refused: {}", e.kind)
        };
        Unreadable {
            step: "serialization",
            offset: Some(e.offset),
            reason: head,
            exception: match e.kind {
                // A declared length past the end is met by Java as the end of the stream too.
                crate::javaser::SerErrorKind::Truncated | crate::javaser::SerErrorKind::LengthTooLarge(_) => {
                    "java.io.EOFException"
                }
                _ => "java.io.StreamCorruptedException",
            },
            not_verified: matches!(
                e.kind,
                SerErrorKind::TooLarge(_)
                    | SerErrorKind::TooDeep(_)
                    | SerErrorKind::TooManyHandles(_)
                    | SerErrorKind::TooManyNodes(_)
            ),
        }
    })?;
    walk::walk(&stream)
}
