"""A file source log (`sources/0/`) missing its latest compaction file, restarted (issue 11).

The query of sink_log.py (JSON file source -> parquet file sink) with
spark.sql.streaming.fileSource.log.compactInterval=3 runs 8 batches (one input file each, availableNow), so the
source log holds 2.compact, 5.compact and 6, 7. `sources/0/5.compact` (and its .crc) is deleted; the zip holds
the checkpoint under `chk/` and the output under `out/`; the restart (a new JVM, on the zip's bytes, one more
input file) rebuilds the source's seen files from the log (`FileStreamSource` → `metadataLog.restore()`).
Name: `source-log-latest-compact-missing-<version>`.
"""
import os
import sys

sys.path.insert(0, os.path.dirname(__file__))
import common  # noqa: E402
from sink_log import pack, start, write_input  # noqa: E402

CONFS = {"spark.sql.shuffle.partitions": "3", "spark.sql.streaming.fileSource.log.compactInterval": "3"}


def main():
    import pyspark

    v = pyspark.__version__
    name = f"source-log-latest-compact-missing-{v}"
    work, inp, cp, out = common.workspace()
    spark = common.session(CONFS)
    for i in range(8):
        write_input(inp, i)
        start(spark, inp, cp, out).awaitTermination(120)
    spark.stop()
    before = sorted(os.listdir(os.path.join(cp, "sources", "0")))
    stage = pack(work, name, cp, out)
    for f in ("5.compact", ".5.compact.crc"):
        p = os.path.join(stage, "chk", "sources", "0", f)
        if os.path.exists(p):
            os.remove(p)
    zip_path = common.zip_checkpoint(stage, name)
    write_input(inp, 8)
    record = {
        "name": name,
        "spark_version": v,
        "kind": "structured-streaming",
        "checkpoint_root": "chk",
        "scenario": "JSON file source -> parquet file sink (stateless, append), file source log compactInterval 3; zip holds chk/ and out/",
        "generator": "tools/spark-gen/source_log.py",
        "query": {"operators": "readStream.json.where(id>=0) -> parquet", "trigger": "availableNow, one input file per run", "confs": CONFS},
        "mutation": {"kind": "source-log", "description": "deleted chk/sources/0/5.compact (and its .crc)", "source_log_before": before},
        "facts": common.facts(os.path.join(stage, "chk")),
    }
    # The restart handler of sink_log.py (the same query and zip layout), in a new JVM.
    common.restart_recorded(os.path.join(os.path.dirname(os.path.abspath(__file__)), "sink_log.py"), zip_path, inp, record, work)


if __name__ == "__main__":
    main()
