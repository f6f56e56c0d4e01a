"""Spark 4.3's named sources: `spark.readStream.name("src_a")` with source evolution on (offsets v2, lines
`src_a:{"logOffset":N}`), whose file source log is `sources/src_a/`, not `sources/0/`.

The query: JSON file source(s) -> parquet file sink (stateless, append), one input file per availableNow run,
confs spark.sql.streaming.offsetLog.formatVersion=2 and spark.sql.streaming.queryEvolution.enableSourceEvolution
=true. Two variants, each zipped (checkpoint under `chk/`, output under `out/`) and restarted in a new JVM on
the zip's bytes with one more input file per source:

- `named-source-log-latest-missing`: three batches of `src_a`, then `chk/sources/src_a/2` (and its .crc) deleted.
- `named-source-added`: three batches of `src_a`, then a batch of `src_a` and a second named source `src_b`
  (a union); the restart reads both.

Run: JAVA_HOME=/usr/lib/jvm/java-17-openjdk-amd64 /work/spark43/bin/python tools/spark-gen/named_sources.py
Name: `<variant>-<version>` (Spark 4.3+ only: older releases have no named sources).
"""
import os
import sys

sys.path.insert(0, os.path.dirname(__file__))
import common  # noqa: E402
from sink_log import pack, write_input  # noqa: E402

CONFS = {
    "spark.sql.shuffle.partitions": "2",
    "spark.sql.streaming.offsetLog.formatVersion": "2",
    "spark.sql.streaming.queryEvolution.enableSourceEvolution": "true",
}


def start(spark, base, cp, out, names):
    """The query over `base/<name>/` for each source name, unioned, into the parquet sink `out`."""
    dfs = [spark.readStream.name(n).schema("id LONG, name STRING").json(os.path.join(base, n)) for n in names]
    df = dfs[0]
    for d in dfs[1:]:
        df = df.unionByName(d)
    return (df.where("id >= 0").writeStream.format("parquet").option("path", out).option("checkpointLocation", cp)
            .trigger(availableNow=True).start())


def run(variant):
    import pyspark

    v = pyspark.__version__
    name = f"{variant}-{v}"
    work, base, cp, out = common.workspace()
    spark = common.session(CONFS)
    for i in range(3):
        write_input(os.path.join(base, "src_a"), i)
        start(spark, base, cp, out, ["src_a"]).awaitTermination(120)
    names = ["src_a"]
    if variant == "named-source-added":
        names = ["src_a", "src_b"]
        write_input(os.path.join(base, "src_a"), 3)
        write_input(os.path.join(base, "src_b"), 100)
        start(spark, base, cp, out, names).awaitTermination(120)
    spark.stop()
    before = sorted(os.listdir(os.path.join(cp, "sources")))
    stage = pack(work, name, cp, out)
    description = "none: the checkpoint after a batch that added the named source src_b"
    if variant == "named-source-log-latest-missing":
        for f in ("2", ".2.crc"):
            p = os.path.join(stage, "chk", "sources", "src_a", f)
            if os.path.exists(p):
                os.remove(p)
        description = "deleted chk/sources/src_a/2 (and its .crc), the newest file of the named source's log"
    zip_path = common.zip_checkpoint(stage, name)
    for n in names:
        write_input(os.path.join(base, n), 200 if n == "src_b" else 9)
    record = {
        "name": name,
        "spark_version": v,
        "kind": "structured-streaming",
        "checkpoint_root": "chk",
        "scenario": "named JSON file source(s) (offsets v2, source evolution on) -> parquet file sink; zip holds chk/ and out/",
        "generator": "tools/spark-gen/named_sources.py",
        "query": {"operators": f"readStream.name({', '.join(names)}).json (union) -> parquet", "trigger": "availableNow, one input file per source per run", "confs": CONFS, "source_names": names},
        "mutation": {"kind": variant, "description": description, "source_dirs_before": before},
        "facts": common.facts(os.path.join(stage, "chk")),
    }
    common.restart_recorded(os.path.abspath(__file__), zip_path, base, record, work)


def restart(zip_path, base, pending, work):
    import json

    names = json.load(open(pending))["query"]["source_names"]
    common.finish_restart(zip_path, base, pending, work,
                          lambda spark, b, root: start(spark, b, os.path.join(root, "chk"), os.path.join(root, "out"), names),
                          root_name="<checkpoint-zip-root>")


if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] == "restart":
        restart(*sys.argv[2:6])
    else:
        for variant in sys.argv[1:] or ["named-source-log-latest-missing", "named-source-added"]:
            run(variant)
