//! `state-codec-mismatch`: the state files a restart loads are compressed with another codec than the one Spark
//! decompresses them with.
//!
//! Spark reads `.delta`, `.snapshot` and `.changelog` files with the codec named by
//! `spark.sql.streaming.stateStore.compression.codec` (`HDFSBackedStateStoreProvider`, `RocksDBFileManager`:
//! `CompressionCodec.createCodec(sparkConf, storeConf.compressionCodec)`). On restart that conf comes from the
//! latest offsets file, over the session's value; an offsets file that does not record it (a checkpoint begun
//! before Spark 3.1 recorded it, whose state files followed `spark.io.compression.codec`) gets `lz4`
//! (`OffsetSeqMetadata.setSessionConf`, `relevantSQLConfDefaultValues`). The file's own framing is sniffed by
//! the read stage ([`crate::model::StateFileIntegrity::codec`]); [`ReadCodec`] is what Spark will use.
//! Tested against real Spark restarts (`tools/spark-gen/codec_mismatch.py`, `tests/spark_codec_mismatch.rs`).

use super::{new_checkpoint_step, BACKUP, MAX_NAMED};
use crate::codec::Codec;
use crate::model::Checkpoint;
use crate::report::{Code, Finding, RestartStage, Severity};
use crate::SparkVersion;

/// The conf naming the codec of state files.
pub const CODEC_CONF: &str = "spark.sql.streaming.stateStore.compression.codec";

/// The codec a restart decompresses state files with, and where that comes from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReadCodec {
    /// The codec.
    pub codec: Codec,
    /// The latest offsets file, `offsets/<batch id>`.
    pub offsets: String,
    /// The value that file records for [`CODEC_CONF`]; `None` when it records none (Spark sets `lz4`).
    pub recorded: Option<String>,
}

/// The codec a restart on Spark `v` reads state files with: from the latest readable offsets file's metadata,
/// `lz4` when it records none. `None` before Spark 3.1 (the codec was `spark.io.compression.codec`, which no
/// file records), without offsets metadata, or for a value that is no codec Spark ships (a class of its own).
pub fn read_codec(cp: &Checkpoint, v: SparkVersion) -> Option<ReadCodec> {
    if !v.at_least(3, 1) {
        return None;
    }
    let (id, offsets) = cp.latest_readable_offsets()?;
    let conf = &offsets.metadata.as_ref()?.conf;
    let recorded = conf.get(CODEC_CONF).cloned();
    let codec = match &recorded {
        Some(name) => Codec::from_spark_name(name)?,
        None => Codec::Lz4Block,
    };
    Some(ReadCodec { codec, offsets: format!("offsets/{id}"), recorded })
}

/// The codec of a state file a restart loads when it is known and not the one Spark reads it with.
pub(super) fn mismatch(cp: &Checkpoint, path: &str, read: Option<&ReadCodec>) -> Option<Codec> {
    let read = read?;
    let codec = cp.integrity_of(path)?.codec?;
    (codec != Codec::Unknown && codec != read.codec).then_some(codec)
}

/// What lz4-java, snappy-java, zstd-jni or compress-lzf recognise a codec's framing by.
fn framing(c: Codec) -> &'static str {
    match c {
        Codec::Lz4Block => "lz4-java's block header `LZ4Block`",
        Codec::Snappy => "snappy-java's stream header `\\x82SNAPPY\\0`",
        Codec::Zstd => "a zstd frame's magic number `28 B5 2F FD`",
        Codec::Lzf => "an LZF chunk's `ZV`",
        Codec::Unknown => "no codec's header",
    }
}

/// The detail of one file's mismatch, for evidence.
pub(super) fn detail(file: Codec, read: &ReadCodec) -> String {
    format!(
        "compressed with {file} (it starts with {}), but the restart decompresses state files with {}",
        framing(file),
        read.codec
    )
}

/// One chain file in another codec: its path, which store it is of (`operator 0, partition 1`), its codec.
pub(super) struct Mismatched {
    pub(super) path: String,
    pub(super) where_: String,
    pub(super) codec: Codec,
}

/// The one `state-codec-mismatch` finding of a checkpoint: the restart fails at the first store it loads.
/// `class` and `exception` are what Spark `v` raises for a state file it cannot read.
pub(super) fn finding(
    cp: &Checkpoint,
    v: SparkVersion,
    read: &ReadCodec,
    files: &[Mismatched],
    class: Option<&str>,
    exception: &str,
) -> Finding {
    let mut written: Vec<Codec> = files.iter().map(|m| m.codec).collect();
    written.sort_by_key(|c| c.short_name());
    written.dedup();
    let names: Vec<&str> = written.iter().map(|c| c.short_name()).collect();
    let title = format!(
        "State files of {} store(s) are compressed with {}, but the restart reads them with {}",
        files.len(),
        names.join(" and "),
        read.codec
    );
    let source = match &read.recorded {
        Some(value) => format!("the latest offsets file: it records {CODEC_CONF} = {value}"),
        None => format!("the latest offsets file: it does not record {CODEC_CONF}, so Spark sets lz4"),
    };
    let mut f = Finding::new(Code::StateCodecMismatch, Severity::Error, title)
        .classes(&class.into_iter().collect::<Vec<_>>())
        .evidence(&read.offsets, source, None);
    for m in files.iter().take(MAX_NAMED) {
        f = f.evidence(&m.path, format!("{} ({})", detail(m.codec, read), m.where_), Some(0));
    }
    let why = format!(
        "Spark decompresses every .delta, .snapshot and .changelog with the codec of {CODEC_CONF}, and on restart \
         takes that conf from the latest offsets file, over the session's value; when the file records none (a \
         checkpoint begun before Spark 3.1 recorded it, whose state files followed spark.io.compression.codec) it \
         sets lz4. {}. Reading a {} file with {} fails ({}), so Spark {v} cannot load the state.",
        match &read.recorded {
            Some(value) => format!("{} records {value}", read.offsets),
            None => format!("{} records none", read.offsets),
        },
        names.join("/"),
        read.codec,
        match read.codec {
            Codec::Lz4Block => "lz4-java: java.io.IOException: Stream is corrupted, or an EOFException",
            Codec::Zstd => "zstd-jni: Unknown frame descriptor",
            Codec::Snappy => "snappy-java: FAILED_TO_UNCOMPRESS",
            _ => "the codec's header is not there",
        },
    );
    let fix = match written.as_slice() {
        [one] => vec![
            BACKUP.to_string(),
            format!(
                "Make the restart read {one}: in {}, add \"{CODEC_CONF}\":\"{one}\" to the \"conf\" object of the \
                 metadata (its second line){}. Setting the conf in the session does not help: the offsets file's \
                 value overrides it.",
                read.offsets,
                match read.offsets.rsplit_once('/') {
                    Some((dir, id)) if cp.crc_of(&read.offsets).is_some() => {
                        format!(", and delete its Hadoop sidecar {dir}/.{id}.crc (it would no longer match)")
                    }
                    _ => String::new(),
                },
            ),
            format!("Then restart: Spark reads the {one} files and goes on writing {one}."),
            new_checkpoint_step(cp),
        ],
        _ => vec![
            BACKUP.to_string(),
            format!(
                "The state files mix codecs ({}): restore the files that are not {} from the checkpoint they \
                 were copied from, or from a backup.",
                names.join(", "),
                read.codec
            ),
            new_checkpoint_step(cp),
        ],
    };
    f.why(why).fix(&fix).fails(RestartStage::StateLoad, class, exception)
}
