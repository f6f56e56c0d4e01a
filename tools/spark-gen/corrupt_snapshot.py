"""A byte flipped in the snapshot a restart loads first, per release (issue 11: which releases repair).

The shared fixtures show Spark 4.3's automatic snapshot repair passing over a damaged snapshot and 4.1 failing.
This writes a windowed count/sum with watermark on the HDFS state store (snapshots every 2 deltas), flips one byte
at offset 65 of the newest `.snapshot` of state/0/1 at or below the restart version (its .crc and checksum
sidecars untouched, so only the content is damaged), zips that and restarts it (a new JVM, on the zip's bytes)
with the same Spark. Run under each pyspark. Name: `corrupt-snapshot-hdfs-<version>`.
"""
import json
import os
import sys

sys.path.insert(0, os.path.dirname(__file__))
import common  # noqa: E402
from missing_changelog import start, write_input  # noqa: E402  (the same query)

CONFS = {
    "spark.sql.shuffle.partitions": "3",
    "spark.sql.streaming.stateStore.minDeltasForSnapshot": "2",
    "spark.sql.streaming.stateStore.maintenanceInterval": "500ms",
}


def main():
    import pyspark

    v = pyspark.__version__
    name = f"corrupt-snapshot-hdfs-{v}"
    work = common.workdir()
    inp, cp = os.path.join(work, "in"), os.path.join(work, "cp")
    spark = common.session(CONFS)
    for i in range(10):
        write_input(inp, i)
        start(spark, inp, cp).awaitTermination(120)
    spark.stop()
    commits = common.batch_ids(os.path.join(cp, "commits"))
    restart_version = commits[-1] + 1
    store = os.path.join(cp, "state", "0", "1")
    snaps = sorted(int(f.split(".")[0]) for f in os.listdir(store) if f.endswith(".snapshot") and f.split(".")[0].isdigit())
    target = max(s for s in snaps if s <= restart_version)
    path = os.path.join(store, f"{target}.snapshot")
    data = bytearray(open(path, "rb").read())
    data[65] ^= 0xFF
    open(path, "wb").write(bytes(data))
    zip_path = common.zip_checkpoint(cp, name)
    write_input(inp, 10)
    record = {
        "name": name,
        "spark_version": v,
        "kind": "structured-streaming",
        "scenario": "windowed count/sum per key with 10s watermark, HDFSBackedStateStoreProvider, update mode, noop sink",
        "generator": "tools/spark-gen/corrupt_snapshot.py",
        "query": {"operators": "readStream.json.withWatermark(ts,10s).groupBy(window(ts,10s),key).agg(count,sum(v)) update -> noop",
                  "trigger": "availableNow, one input file per run", "confs": CONFS},
        "mutation": {"kind": "j", "description": f"flipped one byte (offset 65) in state/0/1/{target}.snapshot without touching its .crc / checksum sidecars",
                     "file": f"state/0/1/{target}.snapshot", "snapshots": snaps},
        "facts": common.facts(cp),
    }
    pending = os.path.join(work, "record.json")
    with open(pending, "w") as f:
        json.dump(record, f)
    common.fresh_jvm(__file__, "restart", zip_path, inp, pending, work)


def restart(zip_path, inp, pending, work):
    record = json.load(open(pending))
    cp = common.unzip_to(zip_path, os.path.join(work, "restart"))
    spark = common.session(record["query"]["confs"])
    outcome = common.run_and_record(spark, lambda: start(spark, inp, cp), timeout_s=120, settle_batches=99)
    spark.stop()
    record["restart_outcome"] = outcome
    common.write_record(record["name"], record, {cp: "<checkpoint>", inp: "<input1>", work: "<workdir>"})
    print(record["name"], outcome["ok"], outcome["exception"], outcome["error_class"], outcome["batches_run_on_restart"])


if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] == "restart":
        restart(*sys.argv[2:6])
    else:
        main()
