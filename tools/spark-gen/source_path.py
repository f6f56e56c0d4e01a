"""A file source restarted on a changed path (issue 10: "source path changed").

The query of sink_log.py (JSON file source -> parquet file sink, availableNow) reads the folder `in-a/` (three
files) in batch 0; the zip holds the checkpoint under `chk/` and the output under `out/`. Two restarts (each a
new JVM, on the zip's bytes) read the sibling folder `in-b/` instead:
  - `source-path-changed-<version>`: the path `<work>/in-b` as it is;
  - `source-path-changed-glob-<version>`: the glob `<work>/in-[b]` (the same folder; a glob path sets no
    `basePath` for the files a restart plans again).
`in-b/` holds:
  - `part-000.json`: a copy of a file batch 0 read (same name, new folder, modified now);
  - `new.json`: modified now;
  - `old-6d.json`: modified 6 days before the newest file batch 0 read (inside the default maxFileAge, 7 days);
  - `old-10d.json`: modified 10 days before it (outside it).
Spark does not compare the path: `FileStreamSource` seeds `seenFiles` from the log by full path, then purges at
the newest recorded modification time minus maxFileAge, so the record says which of in-b's files the restart's
batch read (`files_read_on_restart`, from the new `sources/0/1`).
"""
import json
import os
import shutil
import sys

sys.path.insert(0, os.path.dirname(__file__))
import common  # noqa: E402
from sink_log import pack, restart_with, start, write_input  # noqa: E402

CONFS = {"spark.sql.shuffle.partitions": "3"}
DAY_MS = 24 * 3600 * 1000


def main():
    import pyspark

    v = pyspark.__version__
    name = f"source-path-changed-{v}"
    work = common.workdir()
    a, b = os.path.join(work, "in-a"), os.path.join(work, "in-b")
    cp, out = os.path.join(work, "cp"), os.path.join(work, "out")
    for i in range(3):
        write_input(a, i)
    spark = common.session(CONFS)
    start(spark, a, cp, out).awaitTermination(120)
    spark.stop()
    stage = pack(work, name, cp, out)
    zip_path = common.zip_checkpoint(stage, name)
    newest = max(os.stat(os.path.join(a, f)).st_mtime_ns // 1_000_000 for f in os.listdir(a) if f.endswith(".json"))
    os.makedirs(b)
    shutil.copy(os.path.join(a, "part-000.json"), os.path.join(b, "part-000.json"))
    files = {"part-000.json": None, "new.json": None, "old-6d.json": newest - 6 * DAY_MS, "old-10d.json": newest - 10 * DAY_MS}
    for i, (f, mtime) in enumerate(files.items()):
        p = os.path.join(b, f)
        if not os.path.exists(p):
            with open(p, "w") as out_f:
                out_f.write(json.dumps({"id": 100 + i, "name": f}) + "\n")
        if mtime is not None:
            os.utime(p, ns=(mtime * 1_000_000, mtime * 1_000_000))
    new_path_files = [{"name": f, "modified_ms": os.stat(os.path.join(b, f)).st_mtime_ns // 1_000_000} for f in sorted(files)]
    for rec_name, path, given in ((name, b, "in-b"), (f"source-path-changed-glob-{v}", os.path.join(work, "in-[b]"), "in-[b]")):
        restart_on(rec_name, name, path, given, zip_path, stage, newest, new_path_files, work)


def restart_on(rec_name, zip_name, path, given, zip_path, stage, newest, new_path_files, work):
    v = zip_name.rsplit("-", 1)[1]
    record = {
        "name": rec_name,
        "zip": zip_name + ".zip",
        "spark_version": v,
        "kind": "structured-streaming",
        "checkpoint_root": "chk",
        "scenario": "JSON file source -> parquet file sink (stateless, append); batch 0 read in-a/ (3 files); zip holds chk/ and out/",
        "generator": "tools/spark-gen/source_path.py",
        "query": {"operators": "readStream.json(path).where(id>=0) -> parquet", "trigger": "availableNow", "confs": CONFS},
        "mutation": {
            "kind": "source-path",
            "description": f"the restart reads {given} (in-b/, the sibling folder of in-a/) instead of in-a/; nothing in the checkpoint changed",
            "old_path": "in-a",
            "new_path": given,
            "newest_recorded_modified_ms": newest,
            "new_path_files": new_path_files,
        },
        "facts": common.facts(os.path.join(stage, "chk")),
    }
    common.restart_recorded(os.path.abspath(__file__), zip_path, path, record, work)


def restart(zip_path, inp, pending, work):
    """The restart on the new path, with the files its batch read (the new `sources/0/1`)."""
    def after(outcome, root):
        log = os.path.join(root, "chk", "sources", "0", "1")
        read = []
        if os.path.exists(log):
            for line in open(log).read().splitlines()[1:]:
                read.append(os.path.basename(json.loads(line)["path"]))
        outcome["files_read_on_restart"] = sorted(read)

    restart_with(zip_path, inp, pending, work, after)


if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] == "restart":
        restart(*sys.argv[2:6])
    else:
        main()
