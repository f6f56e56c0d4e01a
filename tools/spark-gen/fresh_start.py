"""Offsets and commits deleted while state/ keeps its files (issue 11: "starting over with old state").

A windowed count/sum with watermark on the default HDFS state store runs 6 batches (availableNow, one input file
each); then `offsets/` and `commits/` are deleted (the logs of a "reset" done by hand) and the checkpoint is
zipped. The restart (a new JVM, on the zip's bytes, same query and one more input file) starts the query as
new at batch 0 on a non-empty state location: Spark 4.1+ refuses (STATE_STORE_CHECKPOINT_LOCATION_NOT_EMPTY,
`spark.sql.streaming.verifyCheckpointDirectoryEmptyOnStart`), older releases start over. Run under each pyspark.
Name: `logs-gone-state-kept-<version>`.
"""
import os
import shutil
import sys

sys.path.insert(0, os.path.dirname(__file__))
import common  # noqa: E402
from missing_changelog import OPERATORS, start, write_input  # noqa: E402  (the same query)

CONFS = {"spark.sql.shuffle.partitions": "3"}


def main():
    import pyspark

    v = pyspark.__version__
    name = f"logs-gone-state-kept-{v}"
    work = common.workdir()
    inp, cp = os.path.join(work, "in"), os.path.join(work, "cp")
    spark = common.session(CONFS)
    for i in range(6):
        write_input(inp, i)
        start(spark, inp, cp).awaitTermination(120)
    spark.stop()
    for d in ("offsets", "commits"):
        shutil.rmtree(os.path.join(cp, d))
    zip_path = common.zip_checkpoint(cp, name)
    write_input(inp, 6)
    record = {
        "name": name,
        "spark_version": v,
        "kind": "structured-streaming",
        "scenario": "windowed count/sum per key with 10s watermark, HDFSBackedStateStoreProvider (default), update mode, noop sink",
        "generator": "tools/spark-gen/fresh_start.py",
        "query": {"operators": OPERATORS,
                  "trigger": "availableNow, one input file per run", "confs": CONFS},
        "mutation": {"kind": "logs-gone", "description": "deleted offsets/ and commits/ (state/, sources/ and metadata kept)"},
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
