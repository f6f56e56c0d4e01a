"""RocksDB state with each block compression Spark's conf allows (issue 12: a compression this inspector does not
decode is "not verified", never damage).

`spark.sql.streaming.stateStore.rocksdb.compression` (RocksDBConf, default `lz4`) names RocksDB's block compression
of the SST files. This writes the same windowed count/sum with watermark (the query of missing_changelog.py) on
RocksDBStateStoreProvider, changelog checkpointing off (so every version is a `<v>.zip` and its SSTs), 3 shuffle
partitions, once per compression; records Spark's own State Data Source reading of the latest state
(`format("statestore")`, rows as `toJSON`, into `<name>.state.jsonl`); zips the checkpoint; and restarts it with the
same Spark in a new JVM on the zip's bytes, recording what Spark did. Nothing is damaged. Name:
`sst-compression-<compression>-<version>`; `sst_compression.py zlib` writes one compression only.
"""
import json
import os
import sys

sys.path.insert(0, os.path.dirname(__file__))
import common  # noqa: E402
from missing_changelog import OPERATORS, start, write_input  # noqa: E402  (the same query)

COMPRESSIONS = ["z", "bzip2", "zstd", "snappy", "lz4hc"]  # RocksJava names: `z` is zlib (`zlib` is no name, so no compression)
BASE = {
    "spark.sql.shuffle.partitions": "3",
    "spark.sql.streaming.stateStore.providerClass": "org.apache.spark.sql.execution.streaming.state.RocksDBStateStoreProvider",
    "spark.sql.streaming.stateStore.rocksdb.changelogCheckpointing.enabled": "false",
}


def state_rows(spark, cp):
    """Spark's State Data Source rows of operator 0's default store at the latest committed batch."""
    df = spark.read.format("statestore").load(cp)
    return sorted((json.loads(r) for r in df.toJSON().collect()), key=lambda r: json.dumps(r, sort_keys=True))


def generate(compression):
    import pyspark

    v = pyspark.__version__
    name = f"sst-compression-{compression}-{v}"
    confs = dict(BASE, **{"spark.sql.streaming.stateStore.rocksdb.compression": compression})
    work = common.workdir()
    inp, cp = os.path.join(work, "in"), os.path.join(work, "cp")
    spark = common.session(confs, app=f"sst-compression-{compression}")
    for i in range(4):
        write_input(inp, i)
        start(spark, inp, cp).awaitTermination(120)
    rows = state_rows(spark, cp)
    spark.stop()
    os.makedirs(common.OUT, exist_ok=True)
    with open(os.path.join(common.OUT, name + ".state.jsonl"), "w") as f:
        for r in rows:
            f.write(json.dumps(r, sort_keys=True) + "\n")
    zip_path = common.zip_checkpoint(cp, name)
    write_input(inp, 4)
    record = {
        "name": name,
        "spark_version": v,
        "kind": "structured-streaming",
        "scenario": f"windowed count/sum per key with 10s watermark, RocksDBStateStoreProvider (changelog checkpointing off), SST block compression {compression}, update mode, noop sink",
        "generator": "tools/spark-gen/sst_compression.py",
        "query": {"operators": OPERATORS, "trigger": "availableNow, one input file per run", "confs": confs},
        "mutation": {"kind": "none", "description": f"no change: the SST files' blocks are compressed with {compression}"},
        "facts": dict(common.facts(cp), state_rows=len(rows)),
    }
    common.restart_recorded(__file__, zip_path, inp, record, work)  # a new JVM, on the zip's bytes


def restart(zip_path, inp, pending, work):
    common.finish_restart(zip_path, inp, pending, work, start)


if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] == "restart":
        restart(*sys.argv[2:6])
    else:
        for c in sys.argv[1:] or COMPRESSIONS:
            generate(c)
