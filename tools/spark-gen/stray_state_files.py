"""Files in a store folder whose names a restart's own listing may parse (issue 12, "not modelled").

Spark builds the names it loads from numbers, but some loads list the store folder and parse every name of a
kind: RocksDB's `getLatestSnapshotVersion` maps every `*.zip` to `stripSuffix(".zip").toLong` (changelog
checkpointing), HDFS's `fetchFiles` maps every `<a>.<b>` name to `a.toLong` (maintenance). A copy left beside
the real files (`old.zip`, `old.delta`, `old.changelog`) is what an operator moving files by hand leaves.

A windowed count/sum with watermark runs with availableNow on each provider and layout (HDFS; RocksDB with
changelog checkpointing off, on, and on with checkpoint format v2), maintenance every 500 ms. Each damage copies
a real file of `state/0/1` under a non-numeric name in the same folder, zips the checkpoint, and restarts the
same query in a new JVM on the zip's bytes (`common.restart_recorded`): the outcome is what Spark did. Names:
`stray-<provider>-<file>-<version>`.

Run: JAVA_HOME=/usr/lib/jvm/java-17-openjdk-amd64 /work/spark41/bin/python tools/spark-gen/stray_state_files.py
"""
import os
import re
import shutil
import sys
import time

sys.path.insert(0, os.path.dirname(__file__))
import common  # noqa: E402

ROCKSDB = "org.apache.spark.sql.execution.streaming.state.RocksDBStateStoreProvider"
BASE = {"spark.sql.shuffle.partitions": "3", "spark.sql.streaming.stateStore.maintenanceInterval": "500ms"}
LAYOUTS = {
    "hdfs": {},
    "rocksdb": {"spark.sql.streaming.stateStore.providerClass": ROCKSDB,
                "spark.sql.streaming.stateStore.rocksdb.changelogCheckpointing.enabled": "false"},
    "rocksdb-changelog": {"spark.sql.streaming.stateStore.providerClass": ROCKSDB,
                          "spark.sql.streaming.stateStore.rocksdb.changelogCheckpointing.enabled": "true",
                          "spark.sql.streaming.stateStore.minDeltasForSnapshot": "2"},
    # Every version a snapshot, and time for the maintenance thread to upload the newest before the session
    # stops: the version a restart loads has its own zip.
    "rocksdb-changelog-snapshotted": {"spark.sql.streaming.stateStore.providerClass": ROCKSDB,
                                      "spark.sql.streaming.stateStore.rocksdb.changelogCheckpointing.enabled": "true",
                                      "spark.sql.streaming.stateStore.minDeltasForSnapshot": "1"},
    # Spark 4.2+'s automatic snapshot repair turned off (its default is on).
    "rocksdb-changelog-snapshotted-norepair": {"spark.sql.streaming.stateStore.providerClass": ROCKSDB,
                                               "spark.sql.streaming.stateStore.rocksdb.changelogCheckpointing.enabled": "true",
                                               "spark.sql.streaming.stateStore.minDeltasForSnapshot": "1",
                                               "spark.sql.streaming.stateStore.autoSnapshotRepair.enabled": "false"},
    "rocksdb-ckptv2": {"spark.sql.streaming.stateStore.providerClass": ROCKSDB,
                       "spark.sql.streaming.stateStore.rocksdb.changelogCheckpointing.enabled": "true",
                       "spark.sql.streaming.stateStore.minDeltasForSnapshot": "2",
                       "spark.sql.streaming.stateStore.checkpointFormatVersion": "2"},
}
# (layout, suffix of the real file copied, the stray name)
DAMAGES = [
    ("hdfs", ".delta", "old.delta"),
    ("hdfs", ".snapshot", "old.snapshot"),
    ("rocksdb", ".zip", "old.zip"),
    ("rocksdb-changelog", ".zip", "old.zip"),
    ("rocksdb-changelog", ".changelog", "old.changelog"),
    ("rocksdb-changelog-snapshotted", ".zip", "old.zip"),
    ("rocksdb-changelog-snapshotted-norepair", ".zip", "old.zip"),
    ("rocksdb-ckptv2", ".zip", "old.zip"),
]
# The query and its input are missing_changelog.py's: a windowed count/sum with watermark over JSON files.
from missing_changelog import OPERATORS, start, write_input  # noqa: E402

STORE = os.path.join("state", "0", "1")


def newest(store, suffix):
    """The newest real file of the store with `suffix` (by version; `<v>[_<uniqueId>]<suffix>`)."""
    found = [(int(m.group(1)), n) for n in os.listdir(store)
             if (m := re.fullmatch(r"(\d+)(_[0-9a-f-]+)?" + re.escape(suffix), n))]
    return max(found)[1] if found else None


def generate(layout, suffix, stray):
    import pyspark

    v = pyspark.__version__
    name = f"stray-{layout}-{stray.replace('.', '-')}-{v}"
    confs = dict(BASE, **LAYOUTS[layout])
    work = common.workdir()
    inp, cp = os.path.join(work, "in"), os.path.join(work, "cp")
    spark = common.session(confs)
    for i in range(8):
        write_input(inp, i)
        q = start(spark, inp, cp)
        q.awaitTermination(120)
    if "-snapshotted" in layout:
        time.sleep(8)  # the maintenance thread uploads the newest version's snapshot while the stores are loaded
    spark.stop()
    store = os.path.join(cp, STORE)
    real = newest(store, suffix)
    if real is None:
        print(name, "skipped: no", suffix, "file in", STORE, sorted(os.listdir(store)))
        return
    shutil.copyfile(os.path.join(store, real), os.path.join(store, stray))
    commits = common.batch_ids(os.path.join(cp, "commits"))
    restart_version = commits[-1] + 1 if commits else 0
    zip_path = common.zip_checkpoint(cp, name)
    facts = common.facts(cp)
    write_input(inp, 8)
    record = {
        "name": name,
        "spark_version": v,
        "kind": "structured-streaming",
        "scenario": f"windowed count/sum per key with 10s watermark, {layout} state store, availableNow, noop sink",
        "generator": "tools/spark-gen/stray_state_files.py",
        "query": {"operators": OPERATORS, "trigger": "availableNow, one input file per run", "confs": confs},
        "mutation": {"kind": "stray-state-file",
                     "description": f"copied {STORE}/{real} to {STORE}/{stray} (a name that is no version)",
                     "added": f"state/0/1/{stray}",
                     "restart_version_has_zip": newest(store, ".zip") is not None and any(
                         re.fullmatch(rf"{restart_version}(_[0-9a-f-]+)?\.zip", n) for n in os.listdir(store))},
        "facts": facts,
    }
    common.restart_recorded(__file__, zip_path, inp, record, work)


def restart(zip_path, inp, pending, work):
    common.finish_restart(zip_path, inp, pending, work, start)


if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] == "restart":
        restart(*sys.argv[2:6])
        raise SystemExit(0)
    only = set(sys.argv[1:])
    for layout, suffix, stray in DAMAGES:
        if not only or layout in only:
            generate(layout, suffix, stray)
