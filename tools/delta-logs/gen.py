#!/usr/bin/env python3
"""Writes small real Delta tables with the `deltalake` Python package (delta-rs) for the reader's tests, and a
record of what the writer did beside each log (`<name>.record.json`). Only the `_delta_log/` of each table is
kept (zipped as `<name>.delta_log.zip`); the data files are dropped. Never edit the outputs by hand.

    python3 -m venv /tmp/dl && /tmp/dl/bin/pip install deltalake==1.6.6 pyarrow
    /tmp/dl/bin/python tools/delta-logs/gen.py crates/checkpoint-core/tests/data/delta

What is written (each step done by delta-rs itself; the record lists what it accepted and what it refused):
- `colmap`: a table created with column mapping (name), change data feed and deletion vectors (protocol 3/7
  with reader/writer features), three appends, a checkpoint (create_checkpoint), two more appends. In-commit
  timestamps were asked for too: delta-rs 1.6.6 refuses `delta.enableInCommitTimestamps` (the record says so).
  v2 checkpoints (sidecars) and multi-part checkpoints cannot be written by delta-rs: not generated here.
- `checkpointed`: ten one-row appends with checkpointInterval 4 (post-commit checkpoints), a delete, an
  explicit checkpoint and log cleanup with a zero retention (cleanup_metadata), so the log starts past 0.
"""
import json, os, shutil, sys, tempfile, time, zipfile
import pyarrow as pa
import deltalake
from deltalake import DeltaTable, write_deltalake

OUT = sys.argv[1] if len(sys.argv) > 1 else "out"
os.makedirs(OUT, exist_ok=True)


def rows(start, n, extra=False):
    cols = {"id": pa.array(range(start, start + n), pa.int64()), "name": pa.array([f"r{i}" for i in range(start, start + n)])}
    return pa.table(cols)


def zip_log(table_dir, name, record):
    log = os.path.join(table_dir, "_delta_log")
    files = []
    with zipfile.ZipFile(os.path.join(OUT, f"{name}.delta_log.zip"), "w", zipfile.ZIP_DEFLATED) as z:
        for root, _, names in os.walk(log):
            for n in sorted(names):
                p = os.path.join(root, n)
                rel = os.path.relpath(p, table_dir)
                z.write(p, rel)
                files.append(rel)
    record["writer"] = f"deltalake {deltalake.__version__}"
    record["log_files"] = sorted(files)
    dt = DeltaTable(table_dir)
    record["table_id"] = dt.metadata().id
    record["latest_version"] = dt.version()
    record["configuration"] = dt.metadata().configuration
    p = dt.protocol()
    record["protocol"] = {"minReaderVersion": p.min_reader_version, "minWriterVersion": p.min_writer_version,
                          "readerFeatures": p.reader_features, "writerFeatures": p.writer_features}
    hist = dt.history()
    record["history"] = sorted(
        [{"version": h.get("version"), "timestamp": h.get("timestamp"), "operation": h.get("operation"),
          "inCommitTimestamp": h.get("inCommitTimestamp")} for h in hist], key=lambda h: h["version"])
    with open(os.path.join(OUT, f"{name}.record.json"), "w") as f:
        json.dump(record, f, indent=2, sort_keys=True)
        f.write("\n")


def colmap():
    d = tempfile.mkdtemp()
    record = {"steps": []}
    for conf in ({"delta.enableInCommitTimestamps": "true"},
                 {"delta.columnMapping.mode": "name", "delta.enableChangeDataFeed": "true",
                  "delta.enableDeletionVectors": "true"}):
        try:
            write_deltalake(d, rows(0, 2), configuration=conf)
            record["steps"].append(f"create with {conf}: accepted")
            break
        except Exception as e:  # the writer refuses a feature: say so and try the next
            record["steps"].append(f"create with {conf}: refused ({type(e).__name__}: {str(e)[:200]})")
            shutil.rmtree(d); d = tempfile.mkdtemp()
    for i in range(3):
        time.sleep(0.05)
        write_deltalake(d, rows(10 + i * 2, 2), mode="append")
    record["steps"].append("3 appends")
    DeltaTable(d).create_checkpoint()
    record["steps"].append("create_checkpoint()")
    for i in range(2):
        write_deltalake(d, rows(100 + i, 1), mode="append")
    record["steps"].append("2 appends")
    zip_log(d, "colmap", record)


def checkpointed():
    d = tempfile.mkdtemp()
    record = {"steps": []}
    write_deltalake(d, rows(0, 1), configuration={"delta.checkpointInterval": "4", "delta.logRetentionDuration": "interval 0 seconds"})
    for i in range(1, 10):
        write_deltalake(d, rows(i, 1), mode="append")
    record["steps"].append("10 one-row appends, checkpointInterval 4, logRetentionDuration 'interval 0 seconds'")
    dt = DeltaTable(d)
    dt.delete("id = 3")
    record["steps"].append("delete id = 3")
    dt = DeltaTable(d)
    dt.create_checkpoint()
    record["steps"].append("create_checkpoint()")
    time.sleep(1.1)
    deleted = dt.cleanup_metadata()
    record["steps"].append(f"cleanup_metadata(): {deleted!r}")
    zip_log(d, "checkpointed", record)


colmap()
checkpointed()
