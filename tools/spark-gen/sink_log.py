"""A file sink's `_spark_metadata` log at a compaction boundary, damaged, restarted (issue 11).

A stateless JSON file source -> parquet file sink with spark.sql.streaming.fileSink.log.compactInterval=3 runs
8 batches (one input file each, availableNow), so the sink log holds 2.compact, 5.compact and 6, 7 (older
plain files are deleted by Spark's own log cleanup or kept, as Spark decides). Damaged copies, each zipped with
the checkpoint under `chk/` and the output under `out/`, then restarted (a new JVM, on the zip's bytes) with
one more input file so that batch 8 (a compaction batch) runs:
  - `sink-log-latest-compact-missing`: out/_spark_metadata/5.compact deleted;
  - `sink-log-batch-after-compact-missing`: out/_spark_metadata/6 deleted;
  - `sink-log-ahead`: the checkpoint replaced by one that only ran batch 0 (a new checkpoint, old output);
  - `sink-log-latest-missing-mid-interval`: the checkpoint and output as they were after batch 6 (so the restart's
    batch 7 is no compaction batch), out/_spark_metadata/6 deleted: the log behind the commit log.
"""
import json
import os
import shutil
import sys

sys.path.insert(0, os.path.dirname(__file__))
import common  # noqa: E402

CONFS = {"spark.sql.shuffle.partitions": "3", "spark.sql.streaming.fileSink.log.compactInterval": "3"}


def start(spark, inp, cp, out):
    df = spark.readStream.schema("id LONG, name STRING").json(inp)
    return (df.where("id >= 0").writeStream.format("parquet").option("path", out).option("checkpointLocation", cp)
            .trigger(availableNow=True).start())


def write_input(inp, i):
    os.makedirs(inp, exist_ok=True)
    with open(os.path.join(inp, f"part-{i:03d}.json"), "w") as f:
        for k in range(3):
            f.write(json.dumps({"id": i * 10 + k, "name": f"n{k}"}) + "\n")


def pack(work, name, chk, out):
    stage = os.path.join(work, name + "-stage")
    shutil.copytree(chk, os.path.join(stage, "chk"))
    shutil.copytree(out, os.path.join(stage, "out"))
    return stage


def main():
    import pyspark

    work, inp, cp, out = common.workspace()
    spark = common.session(CONFS)
    first = None
    for i in range(8):
        write_input(inp, i)
        start(spark, inp, cp, out).awaitTermination(120)
        if i == 0:
            first = shutil.copytree(cp, os.path.join(work, "cp-after-batch-0"))
        if i == 6:
            mid_cp = shutil.copytree(cp, os.path.join(work, "cp-after-batch-6"))
            mid_out = shutil.copytree(out, os.path.join(work, "out-after-batch-6"))
    spark.stop()
    cases = {
        "sink-log-latest-compact-missing-" + pyspark.__version__: ("deleted out/_spark_metadata/5.compact (and its .crc)", cp, ["5.compact"]),
        "sink-log-batch-after-compact-missing-" + pyspark.__version__: ("deleted out/_spark_metadata/6 (and its .crc)", cp, ["6"]),
        "sink-log-ahead-" + pyspark.__version__: ("the checkpoint is the one written after batch 0 only (a new checkpoint writing into an output folder whose log is at batch 7)", first, []),
        "sink-log-latest-missing-mid-interval-" + pyspark.__version__: ("the checkpoint and output as after batch 6, out/_spark_metadata/6 (and its .crc) deleted", mid_cp, ["6"]),
    }
    write_input(inp, 8)
    for name, (desc, chk, remove) in cases.items():
        src_out = mid_out if chk is mid_cp else out
        meta = sorted(os.listdir(os.path.join(src_out, "_spark_metadata")))
        stage = pack(work, name, chk, src_out)
        for r in remove:
            for f in (r, f".{r}.crc"):
                p = os.path.join(stage, "out", "_spark_metadata", f)
                if os.path.exists(p):
                    os.remove(p)
        zip_path = common.zip_checkpoint(stage, name)
        record = {
            "name": name,
            "spark_version": pyspark.__version__,
            "kind": "structured-streaming",
            "checkpoint_root": "chk",
            "scenario": "JSON file source -> parquet file sink (stateless, append), sink log compactInterval 3; zip holds chk/ (checkpoint) and out/ (output with _spark_metadata)",
            "generator": "tools/spark-gen/sink_log.py",
            "query": {"operators": "readStream.json.where(id>=0) -> parquet", "trigger": "availableNow, one input file per run", "confs": CONFS},
            "mutation": {"kind": "sink-log", "description": desc, "sink_log_before": meta},
            "facts": common.facts(os.path.join(stage, "chk")),
        }
        common.restart_recorded(__file__, zip_path, inp, record, work)


def restart(zip_path, inp, pending, work):
    """The restart of a zip holding `chk/` and `out/` (also used by source_log.py), with the sink log and the
    output files after it."""
    def after(outcome, root):
        out = os.path.join(root, "out")
        outcome["sink_log_after_restart"] = sorted(os.listdir(os.path.join(out, "_spark_metadata")))
        outcome["output_files_after_restart"] = sorted(f for f in os.listdir(out) if f.endswith(".parquet"))

    restart_with(zip_path, inp, pending, work, after)


def restart_with(zip_path, inp, pending, work, after):
    """Restarts this module's query on a zip holding `chk/` and `out/` (also used by source_path.py), reading
    `inp`; `after(outcome, root)` adds what the restart left to the record."""
    common.finish_restart(zip_path, inp, pending, work,
                          lambda spark, i, root: start(spark, i, os.path.join(root, "chk"), os.path.join(root, "out")),
                          after=after, root_name="<checkpoint-zip-root>")

if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] == "restart":
        restart(*sys.argv[2:6])
    else:
        main()
