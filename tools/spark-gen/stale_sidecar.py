"""Stale checksum sidecars: a data file that decodes, next to a sidecar of another write attempt (issue 11).

A 10 s tumbling-window count/sum per key (file source, 10 s watermark, update mode, noop sink) runs three
batches twice, into two checkpoints A and B whose last batch reads different rows, so the last state file
of each partition (and the last offsets file) differs between them: B is another write attempt of the same
files. For each case of `CASES` (provider, Spark checksum files on or off, RocksDB changelog checkpointing,
which data file, which sidecar) a copy of A gets that one sidecar of B in place of its own (a Spark checksum
file comes with its own Hadoop sidecar; one case also leaves B's file as the temp file of an atomic write,
which the stale sidecar matches). Each copy is zipped (after the swap, before the restart) and restarted
with real Spark after a new input file arrived; a second copy with the stale sidecar deleted (the fix) is
restarted too. The record holds what Spark did on both (`restart_outcome`, `fix_outcome`).

Run: .../python tools/spark-gen/stale_sidecar.py [case names]   (all cases without arguments)
"""
import json
import os
import shutil
import sys
import zipfile

sys.path.insert(0, os.path.dirname(__file__))
import common  # noqa: E402

PROVIDER = "org.apache.spark.sql.execution.streaming.state.HDFSBackedStateStoreProvider"
ROCKSDB = "org.apache.spark.sql.execution.streaming.state.RocksDBStateStoreProvider"
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


def own_crc(rel):
    """The Hadoop sidecar of a file (relative path)."""
    d, n = os.path.split(rel)
    return os.path.join(d, f".{n}.crc")


# name, provider, Spark checksum files, changelog checkpointing, data file (`delta`, `zip`, `changelog`,
# `offsets`), which sidecar is the other attempt's (`hadoop`, `spark`), leave the other attempt's temp file.
CASES = [
    ("stale-crc-delta-hdfs-4.1.4", PROVIDER, False, False, "delta", "hadoop", False),
    ("stale-crc-delta-tmp-hdfs-4.1.4", PROVIDER, False, False, "delta", "hadoop", True),
    ("stale-crc-last-offsets-4.1.4", PROVIDER, False, False, "offsets", "hadoop", False),
    ("stale-checksum-delta-hdfs-4.1.4", PROVIDER, True, False, "delta", "spark", False),
    ("stale-crc-delta-checksummed-hdfs-4.1.4", PROVIDER, True, False, "delta", "hadoop", False),
    ("stale-crc-zip-rocksdb-4.1.4", ROCKSDB, False, False, "zip", "hadoop", False),
    ("stale-checksum-zip-rocksdb-4.1.4", ROCKSDB, True, False, "zip", "spark", False),
    ("stale-crc-sst-rocksdb-4.1.4", ROCKSDB, False, False, "sst", "hadoop", False),
    ("stale-checksum-changelog-rocksdb-4.1.4", ROCKSDB, True, True, "changelog", "spark", False),
    ("stale-crc-changelog-rocksdb-4.1.4", ROCKSDB, True, True, "changelog", "hadoop", False),
]


def state_operators(names):
    """`state_operators` of the shared fixtures' facts from the checkpoint's relative file paths."""
    ops = {}
    for n in names:
        parts = n.split("/")
        if len(parts) >= 4 and parts[0] == "state" and parts[1].isdigit() and parts[2].isdigit():
            ops.setdefault(parts[1], set()).add(int(parts[2]))
    return {op: {"partitions": sorted(ps)} for op, ps in sorted(ops.items())}


def files_of(cp):
    return [os.path.relpath(os.path.join(d, f), cp) for d, _, fs in os.walk(cp) for f in fs]


def confs_of(provider, checksums, changelog):
    c = dict(CONFS)
    c["spark.sql.streaming.stateStore.providerClass"] = provider
    c[CHECKSUM] = "true" if checksums else "false"
    if provider == ROCKSDB:
        c["spark.sql.streaming.stateStore.rocksdb.changelogCheckpointing.enabled"] = "true" if changelog else "false"
    return c


def set_confs(spark, confs):
    for k, v in confs.items():
        spark.conf.set(k, v)


def generate(spark, work, confs, tag):
    """Runs A and B with `confs`; returns their folders and the input folder of A."""
    set_confs(spark, confs)
    ina, inb = os.path.join(work, f"in-a-{tag}"), os.path.join(work, f"in-b-{tag}")
    a, b = os.path.join(work, f"a-{tag}"), os.path.join(work, f"b-{tag}")
    run_batches(spark, ina, a, 0)
    run_batches(spark, inb, b, 1)
    return a, b, ina


def zip_ssts(cp, part, v):
    """localFileName -> dfsSstFileName of the SST files `state/0/<part>/<v>.zip` lists."""
    with zipfile.ZipFile(os.path.join(cp, "state", "0", str(part), f"{v}.zip")) as z:
        meta = json.loads(z.read("metadata").decode().split("\n", 1)[1])
    return {f["localFileName"]: f["dfsSstFileName"] for f in meta.get("sstFiles", [])}


def pick_sst(a, b):
    """An SST file A's last zip lists and the SST of the same local name B's lists: (A's path, B's path)."""
    for p in range(3):
        v = last_version(a, p, ".zip")
        sa, sb = zip_ssts(a, p, v), zip_ssts(b, p, v)
        for local, dfs in sorted(sa.items()):
            if local in sb:
                fa, fb = f"state/0/{p}/SSTs/{dfs}", f"state/0/{p}/SSTs/{sb[local]}"
                if open(os.path.join(a, fa), "rb").read() != open(os.path.join(b, fb), "rb").read():
                    return fa, fb
    raise SystemExit("no SST of the same local name differs between the two attempts")


def mutate(name, a, b, work, data, sidecar, temp):
    """A copy of A with one sidecar of B's; returns (folder, mutation record)."""
    if data == "sst":
        main, other = pick_sst(a, b)
        c = common.copy_tree(a, os.path.join(work, name))
        side = own_crc(main)
        shutil.copyfile(os.path.join(b, own_crc(other)), os.path.join(c, side))
        return c, {"kind": "stale-hadoop-sidecar", "file": main, "sidecar": side,
                   "description": f"replaced the Hadoop sidecar {side} of an SST file the last zip lists by the one another write attempt (checkpoint B) wrote for its SST of the same local name ({os.path.basename(other)}); {main} itself is untouched"}
    if data == "offsets":
        last = max(common.batch_ids(os.path.join(a, "offsets")))
        main = f"offsets/{last}"
    else:
        p, v = pick_partition(a, b, "." + data)
        main = f"state/0/{p}/{v}.{data}"
    c = common.copy_tree(a, os.path.join(work, name))
    side = own_crc(main) if sidecar == "hadoop" else main + ".crc"
    swap(b, c, side)
    what = "the Hadoop sidecar" if sidecar == "hadoop" else "the Spark checksum file"
    also = ""
    if sidecar == "spark":
        swap(b, c, own_crc(side))
        also = f" (and its own Hadoop sidecar {own_crc(side)})"
    m = {"kind": f"stale-{sidecar}-sidecar", "file": main, "sidecar": side,
         "description": f"replaced {what} {side}{also} by the one another write attempt (checkpoint B: the same query, other rows in the last batch) wrote for its own {os.path.basename(main)}; {main} itself is untouched"}
    if temp:
        t = f"{os.path.dirname(main)}/.{os.path.basename(main)}.6f1c2a9e-8d4b-4c3a-9e2f-5b7d1a0c3e48.TID41.tmp"
        shutil.copyfile(os.path.join(b, main), os.path.join(c, t))
        m["temp_file"] = t
        m["description"] += f"; B's {os.path.basename(main)} is left beside it as the temp file {t} of its atomic write"
    return c, m


def apply_fix(c, work, name, mutation):
    """A copy of the mutated checkpoint with the stale sidecar (and its own Hadoop sidecar) deleted."""
    f = common.copy_tree(c, os.path.join(work, name + "-fixed"))
    deleted = [mutation["sidecar"]]
    if os.path.exists(os.path.join(f, own_crc(mutation["sidecar"]))):
        deleted.append(own_crc(mutation["sidecar"]))
    for d in deleted:
        os.remove(os.path.join(f, d))
    return f, deleted


def main():
    import pyspark

    only = set(sys.argv[1:])
    work = common.workdir()
    spark = common.session(CONFS)
    runs = {}
    todo = []
    for name, provider, checksums, changelog, data, sidecar, temp in CASES:
        if only and name not in only:
            continue
        confs = confs_of(provider, checksums, changelog)
        key = (provider, checksums, changelog)
        if key not in runs:
            runs[key] = generate(spark, work, confs, f"run{len(runs)}")
        a, b, ina = runs[key]
        c, mutation = mutate(name, a, b, work, data, sidecar, temp)
        common.zip_checkpoint(c, name)
        fixed, deleted = apply_fix(c, work, name, mutation)
        todo.append((name, provider, confs, c, fixed, deleted, ina, mutation))
    # A new input file, so the restart runs a batch (and loads the state).
    for ina in sorted({x[6] for x in todo}):
        add_input(ina, 3, 0)
    for name, provider, confs, c, fixed, deleted, ina, mutation in todo:
        facts = common.facts(c)
        facts["state_operators"] = state_operators(files_of(c))
        set_confs(spark, confs)
        outcome = common.run_and_record(spark, lambda: start(spark, ina, c), settle_batches=1)
        fix_outcome = common.run_and_record(spark, lambda: start(spark, ina, fixed), settle_batches=1)
        store = "RocksDBStateStoreProvider" if provider == ROCKSDB else "HDFSBackedStateStoreProvider"
        record = {
            "name": name,
            "spark_version": pyspark.__version__,
            "kind": "structured-streaming",
            "scenario": f"file source -> withWatermark(ts,10s).groupBy(window(ts,10s),key).agg(count,sum(v)) update -> noop, {store}, 3 batches (availableNow each); a second checkpoint B of the same query with other rows in the last batch is the other write attempt",
            "generator": "tools/spark-gen/stale_sidecar.py",
            "query": {"confs": confs, "trigger": "availableNow (generation and restart)"},
            "mutation": mutation,
            "restart_outcome": outcome,
            "fix": {"deleted": deleted, "description": "a second copy of the zipped checkpoint with the stale sidecar (and its own Hadoop sidecar) deleted, restarted the same way"},
            "fix_outcome": fix_outcome,
            "facts": facts,
        }
        common.write_record(name, record, {fixed: "<checkpoint>", c: "<checkpoint>", ina: "<input>", work: "<workdir>"})
        print(name, outcome["ok"], outcome["exception"], outcome["error_class"], outcome["batches_run_on_restart"], "fixed:", fix_outcome["ok"], fix_outcome["batches_run_on_restart"])
    spark.stop()


if __name__ == "__main__":
    main()
