"""State files written with one codec, read on restart with another (issue 12: the codec is sniffed by the inspector,
but Spark reads with the codec the offset log decides).

On restart Spark takes `spark.sql.streaming.stateStore.compression.codec` from the latest offsets file's conf,
over the session's value; when the file does not record it (a checkpoint started before Spark recorded it, whose
state files followed `spark.io.compression.codec`), Spark injects `lz4` (OffsetSeq.scala,
`relevantSQLConfDefaultValues`). This writes the windowed count/sum with watermark of missing_changelog.py with a
state codec, then edits the offsets files as the variant says, zips that and restarts it with the same Spark in a
new JVM on the zip's bytes (the restarting session still sets the writer's codec), recording what Spark did:

| variant | provider | files written with | offsets files |
|---|---|---|---|
| `hdfs-snappy-unrecorded` | HDFS | snappy | the codec key removed from every offsets file |
| `hdfs-zstd-recorded-lz4` | HDFS | zstd | the latest offsets file records `lz4` |
| `hdfs-lz4-unrecorded` | HDFS | lz4 | the codec key removed (control: Spark's default is the files' codec) |
| `rocksdb-zstd-unrecorded` | RocksDB, changelog checkpointing | zstd | the codec key removed |
| `hdfs-snappy-unrecorded-fixed` | HDFS | snappy | the codec key removed, then the inspector's way out: the latest offsets file records `snappy` |

Name: `codec-mismatch-<variant>-<version>`; `codec_mismatch.py <variant>` writes one variant only.
"""
import json
import os
import sys

sys.path.insert(0, os.path.dirname(__file__))
import common  # noqa: E402
from missing_changelog import OPERATORS, start, write_input  # noqa: E402  (the same query)

KEY = "spark.sql.streaming.stateStore.compression.codec"
ROCKSDB = "org.apache.spark.sql.execution.streaming.state.RocksDBStateStoreProvider"
# variant: (provider class or None for HDFS, codec the files are written with, what the edit does to the offsets)
VARIANTS = {
    "hdfs-snappy-unrecorded": (None, "snappy", "unrecorded"),
    "hdfs-zstd-recorded-lz4": (None, "zstd", "latest-lz4"),
    "hdfs-lz4-unrecorded": (None, "lz4", "unrecorded"),
    "rocksdb-zstd-unrecorded": (ROCKSDB, "zstd", "unrecorded"),
    "hdfs-snappy-unrecorded-fixed": (None, "snappy", "unrecorded-fixed"),
}


def edit_offsets(cp, edit, written):
    """Rewrites the offsets files' metadata line: the codec key removed from each (`unrecorded`), or the latest
    one's set to lz4 (`latest-lz4`), or removed from each and the latest one's set to `written` (`unrecorded-fixed`:
    the way out `state-codec-mismatch` gives). Returns the files changed."""
    folder = os.path.join(cp, "offsets")
    ids = common.batch_ids(folder)
    targets = ids if edit.startswith("unrecorded") else ids[-1:]
    changed = []
    for b in targets:
        path = os.path.join(folder, str(b))
        lines = open(path).read().split("\n")
        meta = json.loads(lines[1])
        if edit.startswith("unrecorded"):
            meta["conf"].pop(KEY, None)
        if edit == "latest-lz4":
            meta["conf"][KEY] = "lz4"
        if edit == "unrecorded-fixed" and b == ids[-1]:
            meta["conf"][KEY] = written
        lines[1] = json.dumps(meta, separators=(",", ":"))
        open(path, "w").write("\n".join(lines))
        crc = os.path.join(folder, f".{b}.crc")
        if os.path.exists(crc):
            os.remove(crc)  # a stale Hadoop .crc would fail the read before the state is reached
        changed.append(f"offsets/{b}")
    return changed


def generate(variant):
    import pyspark

    v = pyspark.__version__
    provider, codec, edit = VARIANTS[variant]
    name = f"codec-mismatch-{variant}-{v}"
    confs = {
        "spark.sql.shuffle.partitions": "3",
        "spark.sql.streaming.stateStore.minDeltasForSnapshot": "2",
        KEY: codec,
    }
    if provider:
        confs["spark.sql.streaming.stateStore.providerClass"] = provider
        confs["spark.sql.streaming.stateStore.rocksdb.changelogCheckpointing.enabled"] = "true"
    work = common.workdir()
    inp, cp = os.path.join(work, "in"), os.path.join(work, "cp")
    spark = common.session(confs, app=f"codec-mismatch-{variant}")
    for i in range(5):
        write_input(inp, i)
        start(spark, inp, cp).awaitTermination(120)
    spark.stop()
    changed = edit_offsets(cp, edit, codec)
    zip_path = common.zip_checkpoint(cp, name)
    write_input(inp, 5)
    record = {
        "name": name,
        "spark_version": v,
        "kind": "structured-streaming",
        "scenario": f"windowed count/sum per key with 10s watermark, {'RocksDB (changelog checkpointing)' if provider else 'HDFS'} state store, state files compressed with {codec}, update mode, noop sink",
        "generator": "tools/spark-gen/codec_mismatch.py",
        "query": {"operators": OPERATORS, "trigger": "availableNow, one input file per run", "confs": confs},
        "mutation": {
            "kind": "codec",
            "description": {
                "unrecorded": f"removed {KEY} from the conf of every offsets file (and their .crc files)",
                "latest-lz4": f"set {KEY} to lz4 in the conf of the latest offsets file (and removed its .crc)",
                "unrecorded-fixed": f"removed {KEY} from the conf of every offsets file (and their .crc files), then set it to {codec} in the latest one",
            }[edit],
            "files": changed,
            "written_with": codec,
        },
        "facts": common.facts(cp),
    }
    common.restart_recorded(__file__, zip_path, inp, record, work)  # a new JVM, on the zip's bytes


def restart(zip_path, inp, pending, work):
    common.finish_restart(zip_path, inp, pending, work, start)


if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] == "restart":
        restart(*sys.argv[2:6])
        raise SystemExit(0)
    for variant in sys.argv[1:] or VARIANTS:
        generate(variant)
