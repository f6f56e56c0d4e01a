"""Async progress tracking, then a restart with it turned off (issue 11).

A stateless rate -> noop query runs with asyncProgressTrackingEnabled=true (interval 1000 ms) and a 100 ms
trigger, so offsets and commits are written only once a second. Two checkpoints are kept, each as the run left
it: one whose batch before the latest was never written (`-gap-before-latest`: the run is stopped and
restarted with the same options until the offset log ends that way), one whose latest two batches were both
written (`-written-tail`). On copies of each, two restarts are recorded: without the option (Spark's
documented failure, "batch N doesn't exist", when the batch before the latest has no offsets file) and with it.
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


def tail_gap(cp):
    offs = common.batch_ids(os.path.join(cp, "offsets"))
    return len(offs) > 1 and offs[-2] != offs[-1] - 1


def record(work, cp, name):
    """Zips the checkpoint, then records both restarts in a new JVM on the zip's bytes."""
    common.zip_checkpoint(cp, name)
    common.fresh_jvm(__file__, "restart", name, work)


def restart(name, work):
    """Both restarts of `<name>.zip`, each on a fresh unpacking of it, in this (new) JVM."""
    import pyspark

    zip_path = os.path.join(common.OUT, name + ".zip")
    spark = common.session(CONFS)
    off = common.unzip_to(zip_path, os.path.join(work, name + "-off"))
    on = common.unzip_to(zip_path, os.path.join(work, name + "-on"))
    facts = common.facts(off)
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
    paths = {off: "<checkpoint>", on: "<checkpoint>", work: "<workdir>"}
    common.write_record(name, dict(base, name=name, query={"confs": CONFS, "writer_options": ASYNC, "restart_writer_options": {}},
                                   mutation={"kind": "async-off", "description": "no file change; restarted WITHOUT asyncProgressTrackingEnabled"},
                                   restart_outcome=outcome_off), paths)
    common.write_record(name + ".async-on", dict(base, name=name + ".async-on", zip=name + ".zip",
                                                 query={"confs": CONFS, "writer_options": ASYNC, "restart_writer_options": ASYNC},
                                                 mutation={"kind": "none", "description": "no file change; restarted with the same async options"},
                                                 restart_outcome=outcome_on), paths)
    print(name, facts["offsets_batches"], outcome_off["ok"], outcome_off["exception"], outcome_on["ok"])


def main():
    work = common.workdir()
    spark = common.session(CONFS)
    done = []
    for name, want_gap in (("async-progress-4.1.4-gap-before-latest", True), ("async-progress-4.1.4-written-tail", False)):
        cp = os.path.join(work, name)
        for attempt in range(20):
            q = start(spark, cp, ASYNC)
            time.sleep(6 + attempt % 3)
            q.stop()
            time.sleep(1)
            if tail_gap(cp) == want_gap and len(common.batch_ids(os.path.join(cp, "offsets"))) >= 8:
                break
        else:
            raise SystemExit(f"{name}: the run never ended in the wanted shape")
        done.append((name, cp))
    spark.stop()
    for name, cp in done:
        record(work, cp, name)


if __name__ == "__main__":
    if len(sys.argv) > 2 and sys.argv[1] == "restart":
        restart(sys.argv[2], sys.argv[3] if len(sys.argv) > 3 else common.workdir())
    else:
        main()
