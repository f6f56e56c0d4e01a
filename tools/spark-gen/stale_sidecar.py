"""Stale checksum sidecars: a data file that decodes, next to a sidecar of another write attempt (issue 11).

A 10 s tumbling-window count/sum per key (file source, 10 s watermark, HDFSBackedStateStoreProvider, update
mode, noop sink) runs three batches twice, into two checkpoints A and B whose last batch reads different
rows, so the last state delta of each partition (and the last offsets file) differs between them: B is
another write attempt of the same files. Copies of A then get one sidecar of B in place of A's own:

* `stale-crc-delta-hdfs-4.1.4`: Spark checksum files off; the Hadoop `.<v>.delta.crc` of the delta the
  restart reads last is B's.
* `stale-crc-delta-tmp-hdfs-4.1.4`: the same, and B's delta is left beside it as the temp file of an atomic
  write (`.<v>.delta.<uuid>.TID<n>.tmp`), which the stale sidecar matches.
* `stale-checksum-delta-hdfs-4.1.4`: Spark checksum files on (4.1's default); the Spark checksum file
  `<v>.delta.crc` (with its own Hadoop sidecar) of that delta is B's.
* `stale-crc-delta-checksummed-hdfs-4.1.4`: checksum files on; only the Hadoop `.<v>.delta.crc` is B's.
* `stale-crc-last-offsets-4.1.4`: checksum files off; the Hadoop `.crc` of the last offsets file is B's.

With `rocksdb` as argument, the same query on RocksDBStateStoreProvider (changelog checkpointing off, so
every version is a `<v>.zip`):

* `stale-crc-zip-rocksdb-4.1.4`: checksum files off; the Hadoop `.<v>.zip.crc` of the zip the restart
  loads is B's.
* `stale-checksum-zip-rocksdb-4.1.4`: checksum files on; the Spark checksum file `<v>.zip.crc` (with its
  Hadoop sidecar) of that zip is B's.

Each copy is zipped (after the swap, before the restart) and restarted with real Spark after a new input
file arrived; the record holds what Spark did.
"""
import json
import os
import shutil
import sys

sys.path.insert(0, os.path.dirname(__file__))
import common  # noqa: E402

PROVIDER = "org.apache.spark.sql.execution.streaming.state.HDFSBackedStateStoreProvider"
ROCKSDB = "org.apache.spark.sql.execution.streaming.state.RocksDBStateStoreProvider"
ROCKSDB_CONFS = {"spark.sql.streaming.stateStore.rocksdb.changelogCheckpointing.enabled": "false"}
CHECKSUM = "spark.sql.streaming.checkpoint.fileChecksum.enabled"
CONFS = {
    "spark.sql.shuffle.partitions": "3",
    "spark.sql.streaming.stateStore.providerClass": PROVIDER,
    # No snapshots: a restart replays every delta, the last one included.
    "spark.sql.streaming.stateStore.minDeltasForSnapshot": "1000",
    # No no-data batch: the last delta is the last data batch's, which differs between A and B.
    "spark.sql.streaming.noDataMicroBatches.enabled": "false",
}
KEYS = ["a", "b", "c", "d", "e", "f"]


def rows(batch, salt):
    """Input rows of a batch: every key in window `batch`, values that depend on `salt` in the last batch."""
    out = []
    for i, k in enumerate(KEYS):
        v = i + 1 + (salt * 10 if batch == 2 else 0)
        out.append({"ts": f"2024-01-01 00:00:{batch * 10 + i:02d}", "key": k, "v": v})
    return out


def add_input(folder, batch, salt):
    os.makedirs(folder, exist_ok=True)
    with open(os.path.join(folder, f"part-{batch}.json"), "w") as f:
        for r in rows(batch, salt):
            f.write(json.dumps(r) + "\n")


def start(spark, inp, cp):
    df = spark.readStream.schema("ts TIMESTAMP, key STRING, v LONG").json(inp)
    from pyspark.sql import functions as F

    agg = (df.withWatermark("ts", "10 seconds").groupBy(F.window("ts", "10 seconds"), "key")
           .agg(F.count("*").alias("n"), F.sum("v").alias("total")))
    return (agg.writeStream.outputMode("update").format("noop").option("checkpointLocation", cp)
            .trigger(availableNow=True).start())


def run_batches(spark, inp, cp, salt):
    for b in range(3):
        add_input(inp, b, salt)
        q = start(spark, inp, cp)
        q.awaitTermination(60)


def last_version(cp, part, ext):
    d = os.path.join(cp, "state", "0", str(part))
    vs = [int(n[: -len(ext)]) for n in os.listdir(d) if n.endswith(ext)]
    return max(vs)


def pick_partition(a, b, ext=".delta"):
    """A partition whose last delta (zip) differs between A and B."""
    for p in range(3):
        v = last_version(a, p, ext)
        fa = os.path.join(a, "state", "0", str(p), f"{v}{ext}")
        fb = os.path.join(b, "state", "0", str(p), f"{v}{ext}")
        if os.path.exists(fb) and open(fa, "rb").read() != open(fb, "rb").read():
            return p, v
    raise SystemExit("no partition's last delta differs between the two attempts")


def swap(src_cp, dst_cp, rel):
    shutil.copyfile(os.path.join(src_cp, rel), os.path.join(dst_cp, rel))


def generate(spark, work, checksums):
    """Runs A and B with checksum files on or off; returns their folders and the input folder of A."""
    spark.conf.set(CHECKSUM, "true" if checksums else "false")
    tag = "on" if checksums else "off"
    ina, inb = os.path.join(work, f"in-a-{tag}"), os.path.join(work, f"in-b-{tag}")
    a, b = os.path.join(work, f"a-{tag}"), os.path.join(work, f"b-{tag}")
    run_batches(spark, ina, a, 0)
    run_batches(spark, inb, b, 1)
    return a, b, ina


def rocksdb_cases(spark, work):
    """The RocksDB variants: the sidecars of the last zip."""
    cases = []
    for checksums in (False, True):
        a, b, ina = generate(spark, work, checksums)
        p, v = pick_partition(a, b, ".zip")
        sdir = f"state/0/{p}"
        if not checksums:
            c = common.copy_tree(a, os.path.join(work, "crc-zip"))
            swap(b, c, f"{sdir}/.{v}.zip.crc")
            cases.append(("stale-crc-zip-rocksdb-4.1.4", checksums, c, ina, {
                "kind": "stale-hadoop-crc", "file": f"{sdir}/{v}.zip", "sidecar": f"{sdir}/.{v}.zip.crc",
                "description": f"replaced the Hadoop sidecar {sdir}/.{v}.zip.crc by the one another write attempt (checkpoint B, same query, different rows in the last batch) wrote for its own {v}.zip; {v}.zip and the SST files are untouched"}))
        else:
            c = common.copy_tree(a, os.path.join(work, "checksum-zip"))
            swap(b, c, f"{sdir}/{v}.zip.crc")
            swap(b, c, f"{sdir}/.{v}.zip.crc.crc")
            cases.append(("stale-checksum-zip-rocksdb-4.1.4", checksums, c, ina, {
                "kind": "stale-spark-checksum", "file": f"{sdir}/{v}.zip", "sidecar": f"{sdir}/{v}.zip.crc",
                "description": f"replaced the Spark checksum file {sdir}/{v}.zip.crc (and its Hadoop sidecar .{v}.zip.crc.crc) by the ones another write attempt (checkpoint B) wrote for its own {v}.zip; {v}.zip itself is untouched"}))
    return cases


def main():
    import pyspark

    rocks = sys.argv[1:] == ["rocksdb"]
    work = common.workdir()
    confs = dict(CONFS, **{"spark.sql.streaming.stateStore.providerClass": ROCKSDB}, **ROCKSDB_CONFS) if rocks else CONFS
    spark = common.session(confs)
    cases = rocksdb_cases(spark, work) if rocks else []  # (name, checksums, copy folder, input folder, mutation)
    for checksums in () if rocks else (False, True):
        a, b, ina = generate(spark, work, checksums)
        p, v = pick_partition(a, b)
        sdir = f"state/0/{p}"
        if not checksums:
            c = common.copy_tree(a, os.path.join(work, "crc-delta"))
            swap(b, c, f"{sdir}/.{v}.delta.crc")
            cases.append(("stale-crc-delta-hdfs-4.1.4", checksums, c, ina, {
                "kind": "stale-hadoop-crc", "file": f"{sdir}/{v}.delta", "sidecar": f"{sdir}/.{v}.delta.crc",
                "description": f"replaced the Hadoop sidecar {sdir}/.{v}.delta.crc by the one another write attempt (checkpoint B, same query, different rows in the last batch) wrote for its own {v}.delta; {v}.delta itself is untouched"}))
            c = common.copy_tree(a, os.path.join(work, "crc-delta-tmp"))
            swap(b, c, f"{sdir}/.{v}.delta.crc")
            tmp = f"{sdir}/.{v}.delta.6f1c2a9e-8d4b-4c3a-9e2f-5b7d1a0c3e48.TID41.tmp"
            shutil.copyfile(os.path.join(b, f"{sdir}/{v}.delta"), os.path.join(c, tmp))
            cases.append(("stale-crc-delta-tmp-hdfs-4.1.4", checksums, c, ina, {
                "kind": "stale-hadoop-crc-with-temp", "file": f"{sdir}/{v}.delta", "sidecar": f"{sdir}/.{v}.delta.crc", "temp_file": tmp,
                "description": f"replaced {sdir}/.{v}.delta.crc by the sidecar of another write attempt (checkpoint B) and left that attempt's {v}.delta beside it as the temp file {tmp} of its atomic write; {v}.delta itself is untouched"}))
            last = max(common.batch_ids(os.path.join(a, "offsets")))
            c = common.copy_tree(a, os.path.join(work, "crc-offsets"))
            swap(b, c, f"offsets/.{last}.crc")
            cases.append(("stale-crc-last-offsets-4.1.4", checksums, c, ina, {
                "kind": "stale-hadoop-crc", "file": f"offsets/{last}", "sidecar": f"offsets/.{last}.crc", "batch": last,
                "description": f"replaced offsets/.{last}.crc by the sidecar another write attempt (checkpoint B) wrote for its own offsets/{last}; offsets/{last} itself is untouched"}))
        else:
            c = common.copy_tree(a, os.path.join(work, "checksum-delta"))
            swap(b, c, f"{sdir}/{v}.delta.crc")
            swap(b, c, f"{sdir}/.{v}.delta.crc.crc")
            cases.append(("stale-checksum-delta-hdfs-4.1.4", checksums, c, ina, {
                "kind": "stale-spark-checksum", "file": f"{sdir}/{v}.delta", "sidecar": f"{sdir}/{v}.delta.crc",
                "description": f"replaced the Spark checksum file {sdir}/{v}.delta.crc (and its Hadoop sidecar .{v}.delta.crc.crc) by the ones another write attempt (checkpoint B) wrote for its own {v}.delta; {v}.delta itself is untouched"}))
            c = common.copy_tree(a, os.path.join(work, "crc-delta-checksummed"))
            swap(b, c, f"{sdir}/.{v}.delta.crc")
            cases.append(("stale-crc-delta-checksummed-hdfs-4.1.4", checksums, c, ina, {
                "kind": "stale-hadoop-crc", "file": f"{sdir}/{v}.delta", "sidecar": f"{sdir}/.{v}.delta.crc",
                "description": f"Spark checksum files on; replaced only the Hadoop sidecar {sdir}/.{v}.delta.crc by the one another write attempt (checkpoint B) wrote for its own {v}.delta; {v}.delta and its Spark checksum file are untouched"}))
    for name, checksums, c, ina, mutation in cases:
        common.zip_checkpoint(c, name)
    # A new input file, so the restart runs a batch (and loads the state).
    for ina in sorted({x[3] for x in cases}):
        add_input(ina, 3, 0)
    for name, checksums, c, ina, mutation in cases:
        facts = common.facts(c)
        spark.conf.set(CHECKSUM, "true" if checksums else "false")
        outcome = common.run_and_record(spark, lambda: start(spark, ina, c), settle_batches=1)
        confs = dict(confs, **{CHECKSUM: "true" if checksums else "false"})
        record = {  # noqa: E501
            "name": name,
            "spark_version": pyspark.__version__,
            "kind": "structured-streaming",
            "scenario": "file source -> withWatermark(ts,10s).groupBy(window(ts,10s),key).agg(count,sum(v)) update -> noop, " + ("RocksDBStateStoreProvider (changelog checkpointing off)" if rocks else "HDFSBackedStateStoreProvider") + ", 3 batches (availableNow each); a second checkpoint B of the same query with other rows in the last batch is the other write attempt",
            "generator": "tools/spark-gen/stale_sidecar.py",
            "query": {"confs": confs, "trigger": "availableNow (generation and restart)"},
            "mutation": mutation,
            "restart_outcome": outcome,
            "facts": facts,
        }
        common.write_record(name, record, {c: "<checkpoint>", ina: "<input>", work: "<workdir>"})
        print(name, outcome["ok"], outcome["exception"], outcome["error_class"], outcome["batches_run_on_restart"])
    spark.stop()


if __name__ == "__main__":
    main()
