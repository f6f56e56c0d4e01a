"""Log files and state folders deleted by hand, per release (issue 12: a newcomer's real-Spark restarts showed the
inspector saying "resumes" where Spark fails).

Writes the windowed count/sum with watermark of missing_changelog.py (one stateful operator; `two-operators`
variants put a dropDuplicatesWithinWatermark before it) on the HDFS state store (RocksDB with state checkpoint
format v2 for `-ckptv2`), ten runs of one input file each, applies the accident, zips that and restarts the same
query with the same Spark in a new JVM on the zip's bytes, recording what Spark did:

| variant | accident |
|---|---|
| `offsets-latest-deleted` | the latest offsets file (and its .crc) deleted: the commit log is one batch ahead |
| `offsets-latest-deleted-fixed` | the same, then the way out: the commit files above the new latest offsets file deleted |
| `offsets-latest-deleted-ckptv2` | the latest offsets file deleted, RocksDB state with checkpoint format v2 (4.x) |
| `source-log-latest-deleted` | the file source log's latest batch file (`sources/0/<n>`, and its .crc) deleted; the latest batch read no new file (a batch for the watermark), and a new input file arrives before the restart |
| `source-log-compact-header-only` | the file source log's newest file `sources/0/9.compact` cut to its version line (its entries lost, the file still parses) |
| `source-log-newest-header-only` | eleven runs, so the newest file is the plain `sources/0/10`; it is cut to its version line |
| `source-log-latest-deleted-fixed` | the same, then the way out: the new input file moved aside for a first restart (which logs the deleted batch's own files as that batch again), and back for a second; the record is the second's |
| `source-log-deleted` | the whole `sources/` folder deleted |
| `source-log-latest-deleted-stateless`, `source-log-deleted-stateless` | the same on a stateless query (a projection: no watermark, so no batch without data, and the latest batch reads the latest log file) |
| `operator-state-deleted` | two stateful operators; `state/0` (the first operator's whole state) deleted |
| `commits-two-deleted`, `commits-two-deleted-ckptv2` | the last two commit files deleted: the commit log trails the offset log by two |
| `uncommitted-input-deleted-stateless` | the stateless projection; the latest commit file deleted (the batch was running when the query died) and the input file that batch's source log entry lists deleted from the input folder (a retention job) |

The repo keeps every variant on 3.5.9, 4.1.4 and 4.3.0, and `offsets-latest-deleted` on 3.4.4 (where the commit
collision is still an assert).

A successful restart records the rows each batch read (`input_rows_on_restart`) and, for the `source-log-*` variants,
the file source log after it (`after_restart`): which files its newest batch lists, and the latest logOffset.

Name: `log-accident-<variant>-<version>`; `log_accidents.py <variant> ...` writes those variants only.
"""
import json
import os
import shutil
import sys
import urllib.parse

sys.path.insert(0, os.path.dirname(__file__))
import common  # noqa: E402
from missing_changelog import OPERATORS, write_input  # noqa: E402  (the same input)

HDFS = {
    "spark.sql.shuffle.partitions": "3",
    "spark.sql.streaming.stateStore.minDeltasForSnapshot": "2",
}
CKPT_V2 = dict(HDFS, **{
    "spark.sql.streaming.stateStore.providerClass": "org.apache.spark.sql.execution.streaming.state.RocksDBStateStoreProvider",
    "spark.sql.streaming.stateStore.rocksdb.changelogCheckpointing.enabled": "true",
    "spark.sql.streaming.stateStore.checkpointFormatVersion": "2",
})
TWO_OPERATORS = "readStream.json.withWatermark(ts,10s).dropDuplicatesWithinWatermark(key,v).groupBy(window(ts,10s),key).agg(count,sum(v)) update -> noop"


def start(spark, inp, cp, two=False, stateless=False):
    from pyspark.sql import functions as F

    df = spark.readStream.schema("key STRING, v LONG, ts TIMESTAMP").json(inp)
    if stateless:
        return (df.select("key", (F.col("v") * 2).alias("v2")).writeStream.format("noop")
                .option("checkpointLocation", cp).trigger(availableNow=True).start())
    df = df.withWatermark("ts", "10 seconds")
    if two:
        df = df.dropDuplicatesWithinWatermark(["key", "v"])
    agg = df.groupBy(F.window("ts", "10 seconds"), "key").agg(F.count("*").alias("n"), F.sum("v").alias("s"))
    return (agg.writeStream.outputMode("update").format("noop").option("checkpointLocation", cp)
            .trigger(availableNow=True).start())


def rm(cp, rel):
    """Deletes `rel` (a file or folder) and the Hadoop .crc beside a file; returns what went."""
    p = os.path.join(cp, rel)
    gone = []
    if os.path.isdir(p):
        shutil.rmtree(p)
        gone.append(rel)
    elif os.path.exists(p):
        os.remove(p)
        gone.append(rel)
    d, name = os.path.split(rel)
    crc = os.path.join(d, f".{name}.crc")
    if os.path.exists(os.path.join(cp, crc)):
        os.remove(os.path.join(cp, crc))
        gone.append(crc)
    return gone


def accident(variant, cp):
    """Applies the variant's accident; returns (description, files deleted)."""
    latest = lambda d: common.batch_ids(os.path.join(cp, d))[-1]  # noqa: E731
    if variant.startswith("offsets-latest-deleted"):
        n = latest("offsets")
        gone = rm(cp, f"offsets/{n}")
        if variant.endswith("-fixed"):
            for c in common.batch_ids(os.path.join(cp, "commits")):
                if c > n - 1:
                    gone += rm(cp, f"commits/{c}")
            return f"deleted offsets/{n}, then the commit files above offsets/{n - 1} (the way out)", gone
        return f"deleted the latest offsets file offsets/{n}; the commit log goes to {latest('commits')}", gone
    if variant.startswith("commits-two-deleted"):
        n = latest("commits")
        return f"deleted the last two commit files commits/{n - 1} and commits/{n}", rm(cp, f"commits/{n - 1}") + rm(cp, f"commits/{n}")
    fixed = variant.endswith("-fixed")
    variant = variant.removesuffix("-stateless").removesuffix("-fixed")
    if variant == "source-log-latest-deleted":
        # The newest file, a plain batch file `<n>` or a compaction `<n>.compact`.
        names = [f for f in os.listdir(os.path.join(cp, "sources", "0")) if f.split(".")[0].isdigit() and not f.endswith(".crc")]
        newest = max(names, key=lambda f: int(f.split(".")[0]))
        way_out = (", then the way out: the file arrived since moved aside for a first restart, and back for a second"
                   if fixed else "")
        return f"deleted the file source log's latest batch file sources/0/{newest}{way_out}", rm(cp, f"sources/0/{newest}")
    if variant == "source-log-deleted":
        return "deleted the whole sources/ folder", rm(cp, "sources")
    if variant in ("source-log-compact-header-only", "source-log-newest-header-only"):
        names = [f for f in os.listdir(os.path.join(cp, "sources", "0")) if f.split(".")[0].isdigit() and not f.endswith(".crc")]
        newest = max(names, key=lambda f: int(f.split(".")[0]))
        with open(os.path.join(cp, "sources", "0", newest), "w") as f:
            f.write("v1")
        return f"cut the file source log's newest file sources/0/{newest} to its version line", rm(cp, f"sources/0/.{newest}.crc")
    if variant == "uncommitted-input-deleted":
        n = latest("commits")
        gone = rm(cp, f"commits/{n}")
        # The input files the source log lists for the batch (in `<n>` or `<n>.compact`; its logOffset is its
        # batch id on this query: one file and one batch per run), deleted from the input folder.
        name = str(n) if os.path.exists(os.path.join(cp, "sources", "0", str(n))) else f"{n}.compact"
        lines = open(os.path.join(cp, "sources", "0", name)).read().splitlines()[1:]
        paths = [e["path"] for e in map(json.loads, filter(str.strip, lines)) if e.get("batchId") == n]
        for uri in paths:
            local = urllib.parse.unquote(urllib.parse.urlparse(uri).path)
            os.remove(local)
            gone.append(local)
        return (f"deleted commits/{n} (batch {n} planned, not committed) and the {len(paths)} input file(s) "
                f"sources/0/{n} lists for it"), gone
    if variant == "operator-state-deleted":
        return "deleted state/0, the first stateful operator's whole state (state/1 kept)", rm(cp, "state/0")
    raise SystemExit(f"unknown variant {variant}")


VARIANTS = ["offsets-latest-deleted", "offsets-latest-deleted-fixed", "offsets-latest-deleted-ckptv2",
            "source-log-latest-deleted", "source-log-latest-deleted-fixed",
            "source-log-compact-header-only", "source-log-newest-header-only", "source-log-deleted", "operator-state-deleted",
            "source-log-latest-deleted-stateless", "source-log-deleted-stateless",
            "commits-two-deleted", "commits-two-deleted-ckptv2", "uncommitted-input-deleted-stateless"]
STATELESS = "readStream.json.select(key, v * 2) -> noop"


def generate(variant):
    import pyspark

    v = pyspark.__version__
    if variant.endswith("-ckptv2") and v.startswith("3."):
        return
    if variant == "operator-state-deleted" and v.startswith(("3.0", "3.1", "3.2", "3.3", "3.4")):
        return  # dropDuplicatesWithinWatermark is 3.5+
    name = f"log-accident-{variant}-{v}"
    confs = CKPT_V2 if variant.endswith("-ckptv2") else HDFS
    two = variant == "operator-state-deleted"
    stateless = variant.endswith("-stateless")
    work = common.workdir()
    inp, cp = os.path.join(work, "in"), os.path.join(work, "cp")
    spark = common.session(confs, app=name)
    runs = 11 if variant == "source-log-newest-header-only" else 10
    for i in range(runs):
        write_input(inp, i)
        start(spark, inp, cp, two, stateless).awaitTermination(120)
    spark.stop()
    description, gone = accident(variant, cp)
    zip_path = common.zip_checkpoint(cp, name)
    if variant != "source-log-latest-deleted-fixed":  # there, the new file is moved back after a first restart
        write_input(inp, runs)
    record = {
        "name": name,
        "spark_version": v,
        "kind": "structured-streaming",
        "scenario": ("two stateful operators (dropDuplicatesWithinWatermark, then a windowed count/sum)" if two
                     else "a stateless projection" if stateless
                     else "windowed count/sum per key with 10s watermark")
                    + (", RocksDB state store with checkpoint format v2" if variant.endswith("-ckptv2") else ", HDFS state store")
                    + ", update mode, noop sink",
        "generator": "tools/spark-gen/log_accidents.py",
        "query": {"operators": TWO_OPERATORS if two else STATELESS if stateless else OPERATORS,
                  "trigger": "availableNow, one input file per run", "confs": confs},
        "mutation": {"kind": variant, "description": description, "removed": gone},
        "facts": common.facts(cp),
    }
    common.restart_recorded(__file__, zip_path, inp, record, work)  # a new JVM, on the zip's bytes


def restart(zip_path, inp, pending, work):
    kind = json.load(open(pending))["mutation"]["kind"]
    two, stateless = kind == "operator-state-deleted", kind.endswith("-stateless")

    def go(spark, i, c):
        if kind == "source-log-latest-deleted-fixed":
            # The way out: a first restart while the new file is moved aside lists only the deleted batch's own
            # files (read before) and logs them as that batch again; the file moved back is then read.
            start(spark, i, c).awaitTermination(120)
            write_input(i, 10)
        return start(spark, i, c, two, stateless)

    after = source_log_after if kind.startswith("source-log") else None
    common.finish_restart(zip_path, inp, pending, work, go, after)


def source_log_after(outcome, root):
    """What the restart left in the file source log: its newest file, the input files that batch lists, and the
    logOffset of the latest offsets file."""
    src = os.path.join(root, "sources", "0")
    names = [f for f in os.listdir(src) if f.split(".")[0].isdigit() and not f.endswith(".crc")] if os.path.isdir(src) else []
    if not names:
        outcome["after_restart"] = {"source_log_newest": None}
        return
    newest = max(names, key=lambda f: int(f.split(".")[0]))
    n = int(newest.split(".")[0])
    entries = [json.loads(line) for line in open(os.path.join(src, newest)).read().splitlines()[1:] if line.strip()]
    last = common.batch_ids(os.path.join(root, "offsets"))[-1]
    offsets = open(os.path.join(root, "offsets", str(last))).read().splitlines()
    outcome["after_restart"] = {
        "source_log_newest": f"sources/0/{newest}",
        "files_logged_as_newest_batch": sorted(os.path.basename(e["path"]) for e in entries if e.get("batchId") == n),
        "latest_offsets_batch": last,
        "latest_source_offset": offsets[2] if len(offsets) > 2 else None,
    }


if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] == "restart":
        restart(*sys.argv[2:6])
        raise SystemExit(0)
    for variant in sys.argv[1:] or VARIANTS:
        generate(variant)
