"""Golden answers of Spark's State Data Source for the `readChangeFeed` and `snapshotStartBatchId` options.

Runs pyspark's `spark.read.format("statestore")` with those options over the shared real-Spark fixtures (each
fixture zip unpacked to a temp dir; nothing is written to the fixtures) and records, per query, either Spark's
rows (`toJSON`, keys sorted, as the `*.state.jsonl` golden dumps are) or the error class Spark raised. The test
crates/checkpoint-core/tests/state_change_feed.rs compares the inspector with these answers.

Setup (once): python3 -m venv /work/spark43 && /work/spark43/bin/pip install pyspark==4.3.0
Run:          JAVA_HOME=/usr/lib/jvm/java-17-openjdk-amd64 /work/spark43/bin/python tools/spark-gen/state_change_feed.py
Output:       crates/checkpoint-core/tests/data/spark/state-change-feed/<fixture>.cases.jsonl, one case a line:
              {"fixture", "spark_version", "options", "rows": [...]} or {..., "error_class", "message_head"}
"""
import json
import os
import shutil
import sys
import tempfile
import zipfile

sys.path.insert(0, os.path.dirname(__file__))
from common import _chain, session  # noqa: E402

FIXTURES = os.environ.get("FIXTURES") or os.path.join(os.path.dirname(__file__), "..", "..", "..", "shared", "fixtures")
OUT = os.path.join(os.path.dirname(__file__), "..", "..", "crates", "checkpoint-core", "tests", "data", "spark", "state-change-feed")

CF = {"readChangeFeed": "true"}


# Damaged checkpoints (no golden dumps of their own): what Spark raises when a delta / changelog the range needs
# is gone.
BROKEN = ["broken-ss-4.1.4-missing-delta", "broken-ss-4.1.4-missing-changelog-agg-rocksdb-ckptv2"]


def stores(fixture):
    """(operatorId, storeName) of the fixture's state-metadata golden dump (operator 0's default store without)."""
    path = os.path.join(FIXTURES, fixture + ".state-metadata.jsonl")
    if not os.path.exists(path):
        return [(0, "default")]
    return [(r["operatorId"], r["stateStoreName"]) for r in map(json.loads, open(path))]


def cases(fixture):
    """The queries asked of one fixture: change feeds of every store, snapshot replays, and the option checks."""
    out = []
    for op, store in stores(fixture):
        base = {"operatorId": str(op), "storeName": store}
        out.append({**base, **CF, "changeStartBatchId": "0"})
        out.append({**base, **CF, "changeStartBatchId": "5", "changeEndBatchId": "7"})
        for snap, part in [(2, 1), (3, 1), (5, 0), (8, 2), (11, 1)]:
            out.append({**base, "snapshotStartBatchId": str(snap), "snapshotPartitionId": str(part)})
        out.append({**base, "snapshotStartBatchId": "2", "snapshotPartitionId": "1", "batchId": "6"})
    if fixture.endswith("agg-hdfs") or fixture.endswith("agg-rocksdb-changelog"):
        out += [
            {**CF},
            {**CF, "changeStartBatchId": "0", "batchId": "3"},
            {**CF, "changeStartBatchId": "0", "joinSide": "left"},
            {**CF, "changeStartBatchId": "0", "snapshotStartBatchId": "2"},
            {**CF, "changeStartBatchId": "0", "snapshotPartitionId": "1"},
            {**CF, "changeStartBatchId": "-1"},
            {**CF, "changeStartBatchId": "9", "changeEndBatchId": "3"},
            {**CF, "changeStartBatchId": "20"},
            {**CF, "changeStartBatchId": "10", "changeEndBatchId": "14"},
            {"changeStartBatchId": "3"},
            {"changeEndBatchId": "3"},
            {"snapshotStartBatchId": "2"},
            {"snapshotPartitionId": "1"},
            {"snapshotStartBatchId": "-1", "snapshotPartitionId": "1"},
            {"snapshotStartBatchId": "2", "snapshotPartitionId": "-1"},
            {"snapshotStartBatchId": "9", "snapshotPartitionId": "1", "batchId": "6"},
            {"snapshotStartBatchId": "2", "snapshotPartitionId": "7"},
        ]
    return out


def run(spark, fixture, options):
    d = tempfile.mkdtemp(prefix="cf-")
    try:
        zipfile.ZipFile(os.path.join(FIXTURES, fixture + ".zip")).extractall(d)
        rec = {"fixture": fixture, "spark_version": spark.version, "options": options}
        try:
            df = spark.read.format("statestore").options(**options).load(d)
            rows = sorted(json.dumps(json.loads(x), sort_keys=True) for x in df.toJSON().collect())
            rec["rows"] = [json.loads(r) for r in rows]
        except Exception as e:  # noqa: BLE001 - Spark's failure is the answer
            jexc = getattr(e, "_origin", None) or getattr(e, "java_exception", None)
            chain = _chain(spark, jexc) if jexc is not None else [{"class": type(e).__name__, "message_head": str(e)[:400], "error_class": None}]
            first = next((c for c in chain if c["error_class"]), chain[0])
            rec["error_class"] = first["error_class"]
            rec["message_head"] = first["message_head"].replace("file:" + d, "<checkpoint>").replace(d, "<checkpoint>")
            rec["root_exception"] = chain[-1]["class"]
        return rec
    finally:
        shutil.rmtree(d, ignore_errors=True)


def main():
    # transformWithState fixtures are left out: their operator metadata v2 holds the absolute schema paths that
    # were neutralised after generation (/srv/etl/...), so Spark fails on them before reading any state.
    names = sys.argv[1:] or sorted(
        n[: -len(".state-metadata.jsonl")] for n in os.listdir(FIXTURES)
        if n.endswith(".state-metadata.jsonl") and "tws" not in n) + BROKEN
    spark = session({}, app="state-change-feed")
    os.makedirs(OUT, exist_ok=True)
    for fixture in names:
        lines = [json.dumps(run(spark, fixture, o), sort_keys=True) for o in cases(fixture)]
        with open(os.path.join(OUT, fixture + ".cases.jsonl"), "w") as f:
            f.write("\n".join(lines) + "\n")
        print(fixture, len(lines), "cases", flush=True)
    spark.stop()


if __name__ == "__main__":
    main()
