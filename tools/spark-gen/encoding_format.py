"""A session that sets `spark.sql.streaming.stateStore.encodingFormat=avro` restarting a query whose stateful
operator is not transformWithState (issue 12: a newcomer's real-Spark restart failed where the inspector said the
checkpoint's recorded `unsaferow` overrides the session).

Writes the windowed count/sum with watermark of missing_changelog.py on RocksDBStateStoreProvider (three runs,
`unsaferow`, the default), zips it and restarts the same query with the same Spark in a new JVM on the zip's bytes,
the restarting session setting `spark.sql.streaming.stateStore.encodingFormat=avro`, recording what Spark did.
Name: `encoding-format-avro-session-<version>` (Spark 4.0+, where the conf exists).
"""
import os
import sys

sys.path.insert(0, os.path.dirname(__file__))
import common  # noqa: E402
from missing_changelog import OPERATORS, start, write_input  # noqa: E402  (the same query)

KEY = "spark.sql.streaming.stateStore.encodingFormat"
CONFS = {
    "spark.sql.shuffle.partitions": "3",
    "spark.sql.streaming.stateStore.providerClass": "org.apache.spark.sql.execution.streaming.state.RocksDBStateStoreProvider",
}


def main():
    import pyspark

    v = pyspark.__version__
    name = f"encoding-format-avro-session-{v}"
    work = common.workdir()
    inp, cp = os.path.join(work, "in"), os.path.join(work, "cp")
    spark = common.session(CONFS, app=name)
    for i in range(3):
        write_input(inp, i)
        start(spark, inp, cp).awaitTermination(120)
    spark.stop()
    zip_path = common.zip_checkpoint(cp, name)
    write_input(inp, 3)
    record = {
        "name": name,
        "spark_version": v,
        "kind": "structured-streaming",
        "scenario": "windowed count/sum per key with 10s watermark, RocksDB state store (unsaferow), update mode, noop sink; restarted by a session setting encodingFormat=avro",
        "generator": "tools/spark-gen/encoding_format.py",
        "query": {"operators": OPERATORS, "trigger": "availableNow, one input file per run",
                  "confs": dict(CONFS, **{KEY: "avro"})},
        "mutation": {"kind": "session-conf", "description": f"the restarting session sets {KEY}=avro (the checkpoint was written with unsaferow)"},
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
