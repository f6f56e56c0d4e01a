"""RocksDB snapshot zips: every member a restart opens, and the SST files their metadata lists (issue 11).

A windowed count (10 s windows, 10 s watermark) over a rate source runs on RocksDBStateStoreProvider with
3 shuffle partitions, update mode, a noop sink. Two base checkpoints:

* changelog checkpointing OFF: every version is a `<v>.zip` (CURRENT, MANIFEST-*, OPTIONS-*, metadata) plus
  the SST files under `SSTs/` its metadata lists;
* changelog checkpointing ON (minDeltasForSnapshot=2, maintenance every second): `<v>.changelog` for every
  version and a `<v>.zip` now and then;
* the same with state checkpoint format v2 (`<v>_<uniqueId>.zip/.changelog`), written by its own run:
  `rocksdb_members.py sst-missing-ckptv2` (a damage name as argument runs only that damage).

Each damage is done on a copy of a base checkpoint, in the store folder state/0/1, on the snapshot a restart
loads (the zip of the restart version, i.e. the newest zip): an SST its metadata lists is deleted; a member of
the zip is emptied, replaced by garbage or removed (the zip is rewritten with the other members byte for byte;
its Hadoop .crc and Spark 4.1 checksum file are recomputed, so only the damage made on purpose is met). The
damaged copy is zipped (the checkpoint AFTER the damage and BEFORE the restart), restarted with the same query
and Spark version, and what Spark did is recorded. For the changelog-on SST case the fix "move the newest zip
away" is applied to other copies, zipped and restarted too: moving only the newest zip (`-move-newest`) and
moving every zip whose metadata lists the deleted SST (`-after-fix`), to record what Spark does then.
"""
import json
import os
import re
import shutil
import struct
import sys
import time
import zipfile
import zlib

sys.path.insert(0, os.path.dirname(__file__))
import common  # noqa: E402

PROVIDER = "org.apache.spark.sql.execution.streaming.state.RocksDBStateStoreProvider"
BASE_CONFS = {
    "spark.sql.shuffle.partitions": "3",
    "spark.sql.streaming.stateStore.providerClass": PROVIDER,
}
CHANGELOG_ON = {
    "spark.sql.streaming.stateStore.rocksdb.changelogCheckpointing.enabled": "true",
    "spark.sql.streaming.stateStore.minDeltasForSnapshot": "2",
    "spark.sql.streaming.stateStore.maintenanceInterval": "1s",
}
CHANGELOG_OFF = {"spark.sql.streaming.stateStore.rocksdb.changelogCheckpointing.enabled": "false"}
CL = "spark.sql.streaming.stateStore.rocksdb.changelogCheckpointing.enabled"
CKPT = "spark.sql.streaming.stateStore.checkpointFormatVersion"
CKPT_V2 = dict(CHANGELOG_ON, **{"spark.sql.streaming.stateStore.checkpointFormatVersion": "2"})
STORE = os.path.join("state", "0", "1")


def start(spark, cp):
    from pyspark.sql import functions as F

    df = spark.readStream.format("rate").option("rowsPerSecond", "10").load()
    agg = (df.withWatermark("timestamp", "10 seconds")
           .groupBy(F.window("timestamp", "10 seconds"), (F.col("value") % 5).alias("k"))
           .count())
    return (agg.writeStream.format("noop").outputMode("update").option("checkpointLocation", cp)
            .trigger(processingTime="1 second").start())


def write_base(confs, cp, batches):
    spark = common.session(confs, app="rocksdb-members-write")
    q = start(spark, cp)
    deadline = time.time() + 120
    while time.time() < deadline:
        if len(common.batch_ids(os.path.join(cp, "commits"))) >= batches:
            break
        time.sleep(0.5)
    time.sleep(6)  # the maintenance thread uploads pending snapshots while the stores are loaded
    q.stop()
    time.sleep(2)
    spark.stop()


def state_facts(cp):
    """The state operators and partitions on disk and the provider (from the files, not the inspector)."""
    ops = {}
    state = os.path.join(cp, "state")
    for op in sorted(os.listdir(state)) if os.path.isdir(state) else []:
        if op.isdigit():
            parts = sorted(int(p) for p in os.listdir(os.path.join(state, op)) if p.isdigit())
            ops[op] = {"partitions": parts}
    return {"state_operators": ops, "state_store_provider": PROVIDER}


def zips_of(store):
    return sorted((int(m.group(1)), n) for n in os.listdir(store) if (m := re.fullmatch(r"(\d+)(_[0-9a-f-]+)?\.zip", n)))


def zip_metadata(path):
    with zipfile.ZipFile(path) as z:
        raw = z.read("metadata").decode()
    return json.loads(raw.split("\n", 1)[1])


def drop_sidecars(folder, name):
    """Deletes the Hadoop .crc, the Spark 4.1+ checksum file and its .crc of a deleted file."""
    for side in ("." + name + ".crc", name + ".crc", "." + name + ".crc.crc"):
        p = os.path.join(folder, side)
        if os.path.exists(p):
            os.remove(p)


def _crc32c(data):
    crc = 0xFFFFFFFF
    for b in data:
        crc ^= b
        for _ in range(8):
            crc = (crc >> 1) ^ (0x82F63B78 if crc & 1 else 0)
    return crc ^ 0xFFFFFFFF


def _hadoop_crc(path):
    """Rewrites the Hadoop .crc sidecar of `path` (header `crc\\0`, 512 bytes per chunk, CRC32 per chunk)."""
    side = os.path.join(os.path.dirname(path), "." + os.path.basename(path) + ".crc")
    if not os.path.exists(side):
        return
    data = open(path, "rb").read()
    out = b"crc\x00" + struct.pack(">i", 512)
    for i in range(0, len(data), 512):
        out += struct.pack(">I", zlib.crc32(data[i:i + 512]) & 0xFFFFFFFF)
    open(side, "wb").write(out)


def resign(path):
    """Recomputes every sidecar of a rewritten file (Hadoop .crc, Spark 4.1+ checksum file and its .crc), so
    the only damage Spark meets is the one made on purpose."""
    _hadoop_crc(path)
    side = path + ".crc"
    if os.path.exists(side):
        data = open(path, "rb").read()
        j = json.loads(open(side).read())
        v = _crc32c(data)
        j["value"] = v - (1 << 32) if v >= 1 << 31 else v
        j["mainFileSize"] = len(data)
        open(side, "w").write(json.dumps(j, separators=(",", ":")))
        _hadoop_crc(side)


def rewrite_zip(path, change):
    """Rewrites the zip with `change(name, data) -> data or None (drop)` applied to every member."""
    with zipfile.ZipFile(path) as z:
        members = [(i, z.read(i.filename)) for i in z.infolist()]
    with zipfile.ZipFile(path, "w") as out:
        for info, data in members:
            new = change(info.filename, data)
            if new is not None:
                out.writestr(info, new)
    resign(path)


def flip_middle(data):
    i = len(data) // 2
    return data[:i] + bytes([data[i] ^ 0xFF]) + data[i + 1:]


def member_change(prefix, new):
    def change(name, data):
        return new if name == prefix or (prefix.endswith("-") and name.startswith(prefix)) else data
    return change


def delete_sst(store, which):
    """Deletes one SST the newest zip lists: `which` = "newest" (only that zip lists it) or "shared" (the one
    listed by the most zips). Returns (sst name, versions whose metadata lists it)."""
    zips = zips_of(store)
    listed = {v: [f["dfsSstFileName"] for f in zip_metadata(os.path.join(store, n)).get("sstFiles") or []]
              for v, n in zips}
    latest = listed[zips[-1][0]]
    refs = {s: [v for v, ssts in listed.items() if s in ssts] for s in latest}
    sst = max(latest) if which == "newest" else max(latest, key=lambda s: (len(refs[s]), s))
    os.remove(os.path.join(store, "SSTs", sst))
    drop_sidecars(os.path.join(store, "SSTs"), sst)
    return sst, refs[sst]


def cut_sst(store, keep):
    """Cuts the newest SST the newest zip lists to `keep(size)` bytes (sidecars recomputed). Returns
    (sst name, versions whose metadata lists it)."""
    zips = zips_of(store)
    listed = {v: [f["dfsSstFileName"] for f in zip_metadata(os.path.join(store, n)).get("sstFiles") or []]
              for v, n in zips}
    sst = max(listed[zips[-1][0]])
    path = os.path.join(store, "SSTs", sst)
    data = open(path, "rb").read()
    open(path, "wb").write(data[: keep(len(data))])
    resign(path)
    return sst, [v for v, ssts in listed.items() if sst in ssts]


def newest_zip(store):
    return os.path.join(store, zips_of(store)[-1][1])


DAMAGES = [
    # (name suffix, base, description, function(store) -> extra mutation fields)
    ("sst-missing-newest", "off", "deleted the newest SST listed by the newest zip of state/0/1 (listed by that zip only)",
     lambda st: dict(zip(("sst", "referenced_by"), delete_sst(st, "newest")))),
    ("sst-missing-shared", "off", "deleted the SST of the newest zip of state/0/1 that the most zips list",
     lambda st: dict(zip(("sst", "referenced_by"), delete_sst(st, "shared")))),
    ("sst-truncated", "off", "cut the newest SST listed by the newest zip of state/0/1 to half its size",
     lambda st: dict(zip(("sst", "referenced_by"), cut_sst(st, lambda n: n // 2)), size_mismatch=True)),
    ("sst-empty", "off", "emptied the newest SST listed by the newest zip of state/0/1 (0 bytes)",
     lambda st: dict(zip(("sst", "referenced_by"), cut_sst(st, lambda n: 0)), size_mismatch=True)),
    ("current-empty", "off", "emptied the CURRENT member of the newest zip of state/0/1 (0 bytes)",
     lambda st: rewrite_zip(newest_zip(st), member_change("CURRENT", b""))),
    ("current-garbage", "off", "CURRENT of the newest zip of state/0/1 names a MANIFEST the zip does not hold",
     lambda st: rewrite_zip(newest_zip(st), member_change("CURRENT", b"MANIFEST-999999\n"))),
    ("manifest-empty", "off", "emptied the MANIFEST-* member of the newest zip of state/0/1 (0 bytes)",
     lambda st: rewrite_zip(newest_zip(st), member_change("MANIFEST-", b""))),
    ("manifest-corrupt", "off", "flipped one byte in the middle of the MANIFEST-* member of the newest zip of state/0/1",
     lambda st: rewrite_zip(newest_zip(st), lambda n, d: flip_middle(d) if n.startswith("MANIFEST-") else d)),
    ("options-empty", "off", "emptied the OPTIONS-* member of the newest zip of state/0/1 (0 bytes)",
     lambda st: rewrite_zip(newest_zip(st), member_change("OPTIONS-", b""))),
    ("metadata-empty", "off", "emptied the metadata member of the newest zip of state/0/1 (0 bytes)",
     lambda st: rewrite_zip(newest_zip(st), member_change("metadata", b""))),
    ("metadata-garbage", "off", "cut the metadata member of the newest zip of state/0/1 after its version line and 20 JSON bytes",
     lambda st: rewrite_zip(newest_zip(st), lambda n, d: d[: d.index(b"\n") + 21] if n == "metadata" else d)),
    ("metadata-version", "off", "replaced the version line of the metadata member of the newest zip of state/0/1 by v9",
     lambda st: rewrite_zip(newest_zip(st), lambda n, d: b"v9" + d[d.index(b"\n"):] if n == "metadata" else d)),
    ("metadata-missing", "off", "removed the metadata member from the newest zip of state/0/1",
     lambda st: rewrite_zip(newest_zip(st), lambda n, d: None if n == "metadata" else d)),
    ("sst-missing-changelog", "on", "deleted the SST of the newest zip of state/0/1 that the most zips list (changelog checkpointing on)",
     lambda st: dict(zip(("sst", "referenced_by"), delete_sst(st, "shared")))),
    ("sst-missing-ckptv2", "v2", "deleted the SST of the newest zip of state/0/1 that the most zips list (changelog on, checkpoint format v2)",
     lambda st: dict(zip(("sst", "referenced_by"), delete_sst(st, "shared")))),
]


def main():
    import pyspark

    version = pyspark.__version__
    work = common.workdir()
    # Changelog on first: in one Python process, a second SparkContext's stores were seen uploading no
    # snapshot in the maintenance thread (4.1.4), and only the changelog-on base needs it.
    # The checkpoint format v2 base is written in its own run (`rocksdb_members.py sst-missing-ckptv2`).
    bases = {"on": (os.path.join(work, "base-on"), dict(BASE_CONFS, **CHANGELOG_ON)),
             "v2": (os.path.join(work, "base-v2"), dict(BASE_CONFS, **CKPT_V2)),
             "off": (os.path.join(work, "base-off"), dict(BASE_CONFS, **CHANGELOG_OFF))}
    only = set(sys.argv[1:])
    needed = {key for suffix, key, _, _ in DAMAGES if (suffix in only if only else key != "v2")}
    for key, (cp, confs) in bases.items():
        if key in needed:
            write_base(confs, cp, 6 if key == "off" else 9)
    restarts = []
    for suffix, key, desc, damage in DAMAGES:
        if only and suffix not in only:
            continue
        base, confs = bases[key]
        name = f"rocksdb-{suffix}-{version}"
        cp = common.copy_tree(base, os.path.join(work, name))
        extra = damage(os.path.join(cp, STORE)) or {}
        common.zip_checkpoint(cp, name)
        facts = dict(common.facts(cp), **state_facts(cp))
        restarts.append((name, cp, confs, dict({"kind": suffix, "description": desc}, **extra), facts))
        if suffix in ("sst-missing-changelog", "sst-missing-ckptv2"):
            # Two ways out tried: moving only the newest zip away (Spark then loads the next older zip, which may
            # list the same SST), and moving every zip that lists the SST away (the fix the inspector names).
            for tag, versions in (("move-newest", [zips_of(os.path.join(cp, STORE))[-1][0]]),
                                  ("after-fix", extra["referenced_by"])):
                fix = common.copy_tree(cp, os.path.join(work, f"{name}-{tag}"))
                store = os.path.join(fix, STORE)
                moved = [n for v, n in zips_of(store) if v in versions]
                for m in moved:
                    os.remove(os.path.join(store, m))
                    drop_sidecars(store, m)
                common.zip_checkpoint(fix, f"{name}-{tag}")
                restarts.append((f"{name}-{tag}", fix, confs,
                                 dict(extra, kind=f"{suffix}-{tag}",
                                      description=desc + f"; then moved {', '.join(STORE + '/' + m for m in moved)} (and sidecars) out of the checkpoint"),
                                 dict(common.facts(fix), **state_facts(fix))))
    # One restart session, as a new driver would be: the stores written above are not loaded in it.
    spark = common.session(dict(BASE_CONFS, **CHANGELOG_OFF), app="rocksdb-members-restart")
    for name, cp, confs, mutation, facts in restarts:
        spark.conf.unset(CKPT)
        for k, v in confs.items():
            spark.conf.set(k, v)
        outcome = common.run_and_record(spark, lambda: start(spark, cp), timeout_s=60)
        record = {
            "name": name,
            "spark_version": version,
            "kind": "structured-streaming",
            "scenario": "rate source -> 10s tumbling-window count per key with 10s watermark, RocksDBStateStoreProvider, "
                        f"changelog checkpointing {'ON' if confs[CL] == 'true' else 'OFF'}"
                        f"{', checkpoint format v2' if CKPT in confs else ''}, update mode, noop sink",
            "generator": "tools/spark-gen/rocksdb_members.py",
            "query": {"confs": confs},
            "mutation": mutation,
            "restart_outcome": outcome,
            "facts": facts,
        }
        common.write_record(name, record, {cp: "<checkpoint>", work: "<workdir>"})
        print(name, outcome["ok"], outcome["exception"], outcome["error_class"], outcome["root_exception"], flush=True)
    spark.stop()
    shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
