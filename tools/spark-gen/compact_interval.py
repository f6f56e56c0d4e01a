"""File source and sink logs reopened with another compaction interval, and a new checkpoint writing into an old
output (issue 12: a newcomer's real-Spark restarts found the inspector saying "resumes" or "starts from the
beginning" where Spark failed or lost data).

A stateless JSON file source -> parquet file sink (or the noop sink for the `source-*` variants) runs twelve
batches with Spark's default confs (one input file each, availableNow), so each log holds `9.compact`, `10` and
`11`: exactly one compaction file, from which Spark derives the interval when the log is reopened
(`CompactibleFileStreamLog.compactInterval` → `deriveCompactInterval`, with the session's conf as the default).
The checkpoint (with the output under `out/`) is zipped, and the same query restarted in a new JVM on the zip's
bytes with one more input file, under the session confs of the variant (recorded as `query.confs`):

| variant | restart |
|---|---|
| `source-interval-2` | `spark.sql.streaming.fileSource.log.compactInterval=2`: Spark derives 2 and opens `sources/0/11.compact` |
| `source-interval-2-fixed` | the same checkpoint, the conf set back to 10 (the way out) |
| `sink-interval-2` | `spark.sql.streaming.fileSink.log.compactInterval=2`: the sink log's chain under 2 needs `11.compact`; the record adds what a batch reader of the output through the log gets after the restart |
| `sink-log-deleted` | the output's whole `_spark_metadata` deleted (the checkpoint kept): the restart's batch 12 runs and starts a new log; the record adds what a batch reader of the output gets after it |
| `sink-ahead-new-checkpoint` | a NEW checkpoint (its query started once with no input: `metadata` only) writing into the old output, whose log is at batch 11; the record adds the output files before and after the restart (the restart's batch 0 plans every input file) |

Name: `file-log-restart-<variant>-<version>`; `compact_interval.py <variant> ...` writes those variants only.
"""
import json
import os
import shutil
import sys

sys.path.insert(0, os.path.dirname(__file__))
import common  # noqa: E402

BASE = {"spark.sql.shuffle.partitions": "3"}
RESTART_CONFS = {
    "source-interval-2": dict(BASE, **{"spark.sql.streaming.fileSource.log.compactInterval": "2"}),
    "source-interval-2-fixed": dict(BASE, **{"spark.sql.streaming.fileSource.log.compactInterval": "10"}),
    "sink-interval-2": dict(BASE, **{"spark.sql.streaming.fileSink.log.compactInterval": "2"}),
    "sink-ahead-new-checkpoint": BASE,
    "sink-log-deleted": BASE,
}
VARIANTS = list(RESTART_CONFS)


def start(spark, inp, cp, out, noop):
    df = spark.readStream.schema("id LONG, name STRING").json(inp).where("id >= 0")
    w = df.writeStream.format("noop") if noop else df.writeStream.format("parquet").option("path", out)
    return w.option("checkpointLocation", cp).trigger(availableNow=True).start()


def write_input(inp, i):
    os.makedirs(inp, exist_ok=True)
    with open(os.path.join(inp, f"part-{i:03d}.json"), "w") as f:
        for k in range(3):
            f.write(json.dumps({"id": i * 10 + k, "name": f"n{k}"}) + "\n")


def generate(variant):
    import pyspark

    v = pyspark.__version__
    name = f"file-log-restart-{variant}-{v}"
    noop = variant.startswith("source-")
    work = common.workdir()
    inp, cp, out = (os.path.join(work, d) for d in ("in", "cp", "out"))
    spark = common.session(BASE, app=name)
    for i in range(12):
        write_input(inp, i)
        start(spark, inp, cp, out, noop).awaitTermination(120)
    chk = cp
    if variant == "sink-ahead-new-checkpoint":
        # A new checkpoint: its query started once while its input folder was empty (it writes `metadata` only).
        empty, chk = os.path.join(work, "empty-in"), os.path.join(work, "cp-new")
        os.makedirs(empty)
        start(spark, empty, chk, os.path.join(work, "unused-out"), True).awaitTermination(120)
    spark.stop()
    stage = os.path.join(work, "stage")
    shutil.copytree(chk, os.path.join(stage, "chk"))
    if not noop:
        shutil.copytree(out, os.path.join(stage, "out"))
    if variant == "sink-log-deleted":
        shutil.rmtree(os.path.join(stage, "out", "_spark_metadata"))
    zip_path = common.zip_checkpoint(stage, name)
    # The new checkpoint reads the same input folder: the twelve files there are new to it, and one more arrives.
    write_input(inp, 12)
    record = {
        "name": name,
        "spark_version": v,
        "kind": "structured-streaming",
        "checkpoint_root": "chk",
        "scenario": ("JSON file source -> noop sink" if noop else "JSON file source -> parquet file sink")
                    + " (stateless, append), Spark's default log confs while writing; zip holds chk/ (checkpoint)"
                    + ("" if noop else " and out/ (output with _spark_metadata)"),
        "generator": "tools/spark-gen/compact_interval.py",
        "query": {"operators": "readStream.json.where(id>=0) -> " + ("noop" if noop else "parquet"),
                  "trigger": "availableNow, one input file per run", "confs": RESTART_CONFS[variant]},
        "mutation": {"kind": variant,
                     "description": ("a new checkpoint (metadata only) zipped with the old output, whose log is at batch 11"
                                     if variant == "sink-ahead-new-checkpoint" else
                                     "deleted out/_spark_metadata (the whole sink log)" if variant == "sink-log-deleted" else
                                     "none: the restart's session sets " + ", ".join(f"{k}={val}" for k, val in RESTART_CONFS[variant].items() if "compactInterval" in k)),
                     "source_log_before": sorted(os.listdir(os.path.join(cp, "sources", "0"))),
                     "sink_log_before": None if noop else sorted(os.listdir(os.path.join(out, "_spark_metadata"))),
                     "output_files_before": None if noop else len([f for f in os.listdir(out) if f.endswith(".parquet")])},
        "facts": common.facts(os.path.join(stage, "chk")),
    }
    common.restart_recorded(__file__, zip_path, inp, record, work)


def restart(zip_path, inp, pending, work):
    kind = json.load(open(pending))["mutation"]["kind"]
    noop = kind.startswith("source-")

    def after(outcome, root):
        if noop:
            return
        out = os.path.join(root, "out")
        outcome["sink_log_after_restart"] = sorted(os.listdir(os.path.join(out, "_spark_metadata")))
        outcome["output_files_after_restart"] = len([f for f in os.listdir(out) if f.endswith(".parquet")])
        # What a batch reader of the output through its log gets (spark.read on the folder reads _spark_metadata).
        spark = common.session(BASE, app="reader")
        try:
            outcome["rows_read_through_the_log_after_restart"] = spark.read.parquet(out).count()
        except Exception as e:  # noqa: BLE001 - the reader's failure is the fact recorded
            lines = [line for line in str(e).splitlines() if "Exception" in line or "exist" in line]
            outcome["reader_error_after_restart"] = (lines[0] if lines else str(e).splitlines()[0])[:300]
        finally:
            spark.stop()

    common.finish_restart(zip_path, inp, pending, work,
                          lambda spark, i, root: start(spark, i, os.path.join(root, "chk"), os.path.join(root, "out"), noop),
                          after=after, root_name="<checkpoint-zip-root>")


if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] == "restart":
        restart(*sys.argv[2:6])
        raise SystemExit(0)
    for variant in sys.argv[1:] or VARIANTS:
        generate(variant)
