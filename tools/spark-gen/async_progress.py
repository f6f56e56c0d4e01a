"""Async progress tracking, then a restart with it turned off (issue 11).

A stateless rate -> noop query runs with asyncProgressTrackingEnabled=true (interval 1000 ms) and a 100 ms
trigger, so offsets and commits are written about every tenth batch. The zip is the checkpoint as that run
left it. Two restarts are recorded on copies of it: without the option (Spark's documented failure,
"batch N doesn't exist") and with it (resumes).
"""
import os
import sys
import time

sys.path.insert(0, os.path.dirname(__file__))
import common  # noqa: E402

NAME = "async-progress-4.1.4"
CONFS = {"spark.sql.shuffle.partitions": "3"}
ASYNC = {"asyncProgressTrackingEnabled": "true", "asyncProgressTrackingCheckpointIntervalMs": "1000"}


def start(spark, cp, options):
    df = spark.readStream.format("rate").option("rowsPerSecond", "20").load()
    w = df.selectExpr("value", "value % 7 AS k").writeStream.format("noop").option("checkpointLocation", cp)
    for k, v in options.items():
        w = w.option(k, v)
    return w.trigger(processingTime="100 milliseconds").start()


def main():
    import pyspark

    work = common.workdir()
    cp = os.path.join(work, "cp")
    spark = common.session(CONFS)
    q = start(spark, cp, ASYNC)
    time.sleep(25)
    q.stop()
    time.sleep(1)
    common.zip_checkpoint(cp, NAME)
    facts = common.facts(cp)
    off = common.copy_tree(cp, os.path.join(work, "restart-off"))
    on = common.copy_tree(cp, os.path.join(work, "restart-on"))
    outcome_off = common.run_and_record(spark, lambda: start(spark, off, {}))
    outcome_on = common.run_and_record(spark, lambda: start(spark, on, ASYNC), settle_batches=3)
    spark.stop()
    base = {
        "spark_version": pyspark.__version__,
        "kind": "structured-streaming",
        "scenario": "rate source -> noop sink, stateless, asyncProgressTrackingEnabled=true (interval 1000 ms), trigger 100 ms",
        "generator": "tools/spark-gen/async_progress.py",
        "facts": facts,
    }
    paths = {cp: "<checkpoint>", off: "<checkpoint>", on: "<checkpoint>", work: "<workdir>"}
    common.write_record(NAME, dict(base, name=NAME, query={"confs": CONFS, "writer_options": ASYNC, "restart_writer_options": {}},
                                   mutation={"kind": "async-off", "description": "no file change; restarted WITHOUT asyncProgressTrackingEnabled"},
                                   restart_outcome=outcome_off), paths)
    common.write_record(NAME + ".async-on", dict(base, name=NAME + ".async-on", zip=NAME + ".zip",
                                                 query={"confs": CONFS, "writer_options": ASYNC, "restart_writer_options": ASYNC},
                                                 mutation={"kind": "none", "description": "no file change; restarted with the same async options"},
                                                 restart_outcome=outcome_on), paths)
    print(NAME, facts["offsets_batches"], facts["commits_batches"], outcome_off["ok"], outcome_off["exception"], outcome_on["ok"])


if __name__ == "__main__":
    main()
