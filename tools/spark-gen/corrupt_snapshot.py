"""A byte flipped in the snapshot a restart loads first, per release (issue 11: which releases repair).

The shared fixtures show Spark 4.3's automatic snapshot repair passing over a damaged snapshot and 4.1 failing.
This writes a windowed count/sum with watermark on the HDFS state store (snapshots every 2 deltas), flips one byte
at offset 65 of the newest `.snapshot` of state/0/1 at or below the restart version (its .crc and checksum
sidecars untouched, so only the content is damaged), zips that and restarts it (a new JVM, on the zip's bytes)
with the same Spark. Run under each pyspark. Name: `corrupt-snapshot-hdfs-<version>`.
"""
import os
import sys

sys.path.insert(0, os.path.dirname(__file__))
import common  # noqa: E402
from missing_changelog import OPERATORS, start, write_input  # noqa: E402  (the same query)

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
        "query": {"operators": OPERATORS,
                  "trigger": "availableNow, one input file per run", "confs": CONFS},
        "mutation": {"kind": "j", "description": f"flipped one byte (offset 65) in state/0/1/{target}.snapshot without touching its .crc / checksum sidecars",
                     "file": f"state/0/1/{target}.snapshot", "snapshots": snaps},
        "facts": common.facts(cp),
    }
    common.restart_recorded(__file__, zip_path, inp, record, work)  # a new JVM, on the zip's bytes


def restart(zip_path, inp, pending, work):
    common.finish_restart(zip_path, inp, pending, work, start)

if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] == "restart":
        restart(*sys.argv[2:6])
    else:
        main()
