"""A RocksDB changelog a restart needs is gone, per release and state checkpoint format (issue 11).

Which error class Spark raises for it differs by release and by `checkpointFormatVersion` (v2 plans the load
from the commit log's lineage). Run this under each pyspark (3.5.x, 4.0.x, 4.1.x, 4.2.x, 4.3.x): it writes a
windowed count/sum with watermark on RocksDBStateStoreProvider with changelog checkpointing (format v1, and v2
on 4.0+), deletes the changelog of a middle version in state/0/1 and every snapshot at or above it (with
their sidecars), zips that, restarts the same query (availableNow) with the same Spark and records what Spark
did. Names: `missing-changelog-<version>-ckptv<1|2>`.
"""
import json
import os
import re
import sys

sys.path.insert(0, os.path.dirname(__file__))
import common  # noqa: E402

BASE = {
    "spark.sql.shuffle.partitions": "3",
    "spark.sql.streaming.stateStore.providerClass": "org.apache.spark.sql.execution.streaming.state.RocksDBStateStoreProvider",
    "spark.sql.streaming.stateStore.rocksdb.changelogCheckpointing.enabled": "true",
    "spark.sql.streaming.stateStore.minDeltasForSnapshot": "2",
    "spark.sql.streaming.stateStore.maintenanceInterval": "500ms",
}


OPERATORS = "readStream.json.withWatermark(ts,10s).groupBy(window(ts,10s),key).agg(count,sum(v)) update -> noop"


def start(spark, inp, cp):
    from pyspark.sql import functions as F

    df = spark.readStream.schema("key STRING, v LONG, ts TIMESTAMP").json(inp)
    agg = (df.withWatermark("ts", "10 seconds").groupBy(F.window("ts", "10 seconds"), "key")
           .agg(F.count("*").alias("n"), F.sum("v").alias("s")))
    return (agg.writeStream.outputMode("update").format("noop").option("checkpointLocation", cp)
            .trigger(availableNow=True).start())


def write_input(inp, i):
    os.makedirs(inp, exist_ok=True)
    with open(os.path.join(inp, f"part-{i:03d}.json"), "w") as f:
        for k in range(6):
            ts = f"2026-01-01T00:{i // 6:02d}:{(i * 10) % 60:02d}Z"
            f.write(json.dumps({"key": f"k{k}", "v": i * 10 + k, "ts": ts}) + "\n")


def version_of(name):
    m = re.match(r"^(\d+)(?:_[0-9a-f-]+)?\.(changelog|zip)$", name)
    return (int(m.group(1)), m.group(2)) if m else None


def generate(fmt):
    import pyspark

    v = pyspark.__version__
    name = f"missing-changelog-{v}-ckptv{fmt}"
    confs = dict(BASE)
    if fmt == 2:
        confs["spark.sql.streaming.stateStore.checkpointFormatVersion"] = "2"
    work = common.workdir()
    inp, cp = os.path.join(work, "in"), os.path.join(work, "cp")
    spark = common.session(confs)
    for i in range(12):
        write_input(inp, i)
        q = start(spark, inp, cp)
        q.awaitTermination(120)
    spark.stop()  # no maintenance thread may upload a snapshot after the damage
    store = os.path.join(cp, "state", "0", "1")
    files = sorted(os.listdir(store))
    versions_before = {}
    for f in files:
        vk = version_of(f)
        if vk:
            versions_before.setdefault(str(vk[0]), []).append(f)
    changelogs = sorted(vk[0] for f in files if (vk := version_of(f)) and vk[1] == "changelog")
    target = changelogs[len(changelogs) // 2 + 1]
    removed = []
    for f in files:
        vk = version_of(f.lstrip(".").removesuffix(".crc"))
        if vk and ((vk[1] == "changelog" and vk[0] == target) or (vk[1] == "zip" and vk[0] >= target)):
            os.remove(os.path.join(store, f))
            removed.append(f"state/0/1/{f}")
    zip_path = common.zip_checkpoint(cp, name)
    facts = common.facts(cp)
    write_input(inp, 12)
    record = {
        "name": name,
        "spark_version": v,
        "kind": "structured-streaming",
        "scenario": "windowed count/sum per key with 10s watermark on RocksDBStateStoreProvider, changelog checkpointing ON"
                    + (", state checkpoint format v2" if fmt == 2 else ""),
        "generator": "tools/spark-gen/missing_changelog.py",
        "query": {"operators": OPERATORS,
                  "trigger": "availableNow, one input file per run", "confs": confs},
        "mutation": {"kind": "c", "description": f"deleted the changelog of version {target} in state/0/1 plus every snapshot at or above that version (and their .crc files)",
                     "removed": removed, "versions_before": versions_before},
        "facts": facts,
    }
    common.restart_recorded(__file__, zip_path, inp, record, work)  # a new JVM, on the zip's bytes


def restart(zip_path, inp, pending, work):
    common.finish_restart(zip_path, inp, pending, work, start)

if __name__ == "__main__":
    import pyspark

    if len(sys.argv) > 1 and sys.argv[1] == "restart":
        restart(*sys.argv[2:6])
        raise SystemExit(0)
    fmts = [1, 2] if not pyspark.__version__.startswith("3.") else [1]
    for fmt in (int(a) for a in sys.argv[1:]) if len(sys.argv) > 1 else fmts:
        generate(fmt)
