"""A state schema file (v1/v2, `state/<op>/0/_metadata/schema`) emptied, cut, garbled or deleted, per release.

A file source feeds `dropDuplicates(key, v)` then `groupBy(key).agg(count, sum(v))` (update mode, noop sink) on the
default HDFSBackedStateStoreProvider with 2 shuffle partitions, three batches (availableNow, one input file each):
two stateful operators, each with its schema file under its partition 0 (the only partition that has one). For
each damage of `DAMAGES` a copy of that checkpoint gets the schema file of one operator damaged: emptied, cut in
half, its version string made `v9`, `v3` or `x2`, replaced by a line of text (its Hadoop .crc recomputed, so only
the content damage is met), deleted with its sidecars, or deleted with its `.crc` left (`deleted-crc-kept`); the
copy is zipped (AFTER the damage, BEFORE the restart) and restarted with the same query and Spark in a new JVM on
the zip's bytes after a new input file arrived. When the restart fails, the same zip is restarted once more in
another new JVM with `spark.sql.streaming.stateStore.stateSchemaCheck=false` (`fix_outcome`): whether turning the
check off gets past the damaged file, and what the file is after that run; then the folder that run left is
restarted with the check on again after one more input file (`after_fix_outcome`): whether the fix lasts. Run under
each pyspark (3.5.x, 4.1.x): names `schema-file-<damage>-<version>`.

Run: .../python tools/spark-gen/schema_file.py [damage names]   (all of DAMAGES without arguments; EXTRA when named)
With SCHEMA_GEN_PROVIDER=rocksdb the query runs on RocksDBStateStoreProvider instead (names
`schema-file-rocksdb-<damage>-<version>`): the schema file and its check are the operator's, whatever the provider.
"""
import json
import os
import shutil
import sys

sys.path.insert(0, os.path.dirname(__file__))
import common  # noqa: E402
from rocksdb_members import drop_sidecars, resign  # noqa: E402

CONFS = {"spark.sql.shuffle.partitions": "2"}
ROCKSDB = os.environ.get("SCHEMA_GEN_PROVIDER") == "rocksdb"
if ROCKSDB:
    CONFS["spark.sql.streaming.stateStore.providerClass"] = (
        "org.apache.spark.sql.execution.streaming.state.RocksDBStateStoreProvider")
CHECK = "spark.sql.streaming.stateStore.stateSchemaCheck"
OPERATORS = "readStream.json.dropDuplicates(key,v).groupBy(key).agg(count,sum(v)) update -> noop"
BATCHES = 3


def start(spark, inp, cp):
    from pyspark.sql import functions as F

    df = spark.readStream.schema("key STRING, v LONG").json(inp)
    agg = df.dropDuplicates(["key", "v"]).groupBy("key").agg(F.count("*").alias("n"), F.sum("v").alias("s"))
    return (agg.writeStream.outputMode("update").format("noop").option("checkpointLocation", cp)
            .trigger(availableNow=True).start())


def write_input(inp, i):
    os.makedirs(inp, exist_ok=True)
    with open(os.path.join(inp, f"part-{i:03d}.json"), "w") as f:
        for k in range(4):
            f.write(json.dumps({"key": f"k{k}", "v": i * 10 + k}) + "\n")


def empty(data):
    return b""


def truncated(data):
    return data[: len(data) // 2]


def version(data):
    """The `writeUTF("v2")` header made `writeUTF("v9")`, the rest as written."""
    return data[:3] + b"9" + data[4:]


def v3(data):
    """The `writeUTF("v2")` header made `writeUTF("v3")` (the transformWithState schema format), the rest as written."""
    return data[:3] + b"3" + data[4:]


def header(data):
    """The `writeUTF("v2")` header made `writeUTF("x2")` (no version line), the rest as written."""
    return data[:2] + b"x" + data[3:]


def json_damage(data):
    """The key schema's JSON made invalid, framing and length kept: its first `{` becomes `x`."""
    i = data.index(b'{"type":"struct"')
    return data[:i] + b"x" + data[i + 1:]


def garbage(data):
    return b"this is not a schema file\n"


# name, operator (state/<op>), damage (None: the file and its sidecars deleted; "keep-crc": the file deleted, its
# .crc kept), description.
DAMAGES = [
    ("empty", "0", empty, "emptied (0 bytes)"),
    ("truncated", "0", truncated, "cut to its first half"),
    ("version", "0", version, "its version header writeUTF(\"v2\") changed to writeUTF(\"v9\") (rest unchanged)"),
    ("garbage", "0", garbage, "replaced by the text line 'this is not a schema file'"),
    ("v3", "0", v3, "its version header writeUTF(\"v2\") changed to writeUTF(\"v3\") (rest unchanged)"),
    ("header", "0", header, "its version header writeUTF(\"v2\") changed to writeUTF(\"x2\") (rest unchanged)"),
    ("deleted", "0", None, "deleted (with its .crc)"),
    ("deleted-crc-kept", "0", "keep-crc", "deleted, its Hadoop sidecar .schema.crc left in place"),
    ("empty-op1", "1", empty, "emptied (0 bytes)"),
]


# Run only when named: Spark names an error class for it that ../shared/reference/error-classes.json does not list
# (4.1.4: UNSUPPORTED_DATATYPE), so its record is not kept among the fixtures the tests compare with.
EXTRA = [
    ("json", "0", json_damage, "its key schema JSON made invalid (the first '{' replaced by 'x', length and framing kept)"),
]


def schema_of(cp, op):
    return os.path.join(cp, "state", op, "0", "_metadata", "schema")


def damage(base, work, name, op, change):
    """A copy of `base` with operator `op`'s schema file damaged; returns (folder, mutation record)."""
    cp = common.copy_tree(base, os.path.join(work, name))
    path = schema_of(cp, op)
    rel = os.path.relpath(path, cp)
    before = open(path, "rb").read()
    if change is None or change == "keep-crc":
        os.remove(path)
        if change is None:
            drop_sidecars(os.path.dirname(path), "schema")
        return cp, {"file": rel, "size_before": len(before)}
    after = change(before)
    open(path, "wb").write(after)
    resign(path)
    return cp, {"file": rel, "size_before": len(before), "size_after": len(after), "head_after": after[:16].hex()}


def main():
    import pyspark

    v = pyspark.__version__
    only = set(sys.argv[1:])
    work = common.workdir()
    inp, base = os.path.join(work, "in"), os.path.join(work, "base")
    spark = common.session(CONFS)
    for i in range(BATCHES):
        write_input(inp, i)
        start(spark, inp, base).awaitTermination(120)
    spark.stop()
    write_input(inp, BATCHES)  # a new input file: the restart runs a batch (and opens the state stores)
    schema_files = {op: open(schema_of(base, op), "rb").read().hex() for op in ("0", "1")}
    for dname, op, change, what in DAMAGES + EXTRA:
        if (only and dname not in only) or (not only and (dname, op, change, what) in EXTRA):
            continue
        name = f"schema-file-{'rocksdb-' if ROCKSDB else ''}{dname}-{v}"
        cp, mutation = damage(base, work, name, op, change)
        mutation.update({"kind": f"schema-file-{dname}", "description": f"state/{op}/0/_metadata/schema {what}"
                         + ("" if change in (None, "keep-crc") else "; its Hadoop .crc recomputed")})
        zip_path = common.zip_checkpoint(cp, name)
        facts = common.facts(cp)
        facts["schema_files_before_hex"] = schema_files
        record = {
            "name": name,
            "spark_version": v,
            "kind": "structured-streaming",
            "scenario": "dedup then count/sum per key, "
                        + ("RocksDBStateStoreProvider" if ROCKSDB else "HDFSBackedStateStoreProvider (default)")
                        + ", update mode, noop sink; "
                        "two stateful operators, each with a v1/v2 schema file under its partition 0",
            "generator": "tools/spark-gen/schema_file.py",
            "query": {"operators": OPERATORS, "trigger": "availableNow, one input file per run", "confs": CONFS},
            "mutation": mutation,
            "facts": facts,
        }
        common.restart_recorded(__file__, zip_path, inp, record, work)  # a new JVM, on the zip's bytes
        done = json.load(open(os.path.join(common.OUT, name + ".json")))
        if not done["restart_outcome"]["ok"]:
            common.fresh_jvm(__file__, "fix", zip_path, inp, work)
            # Once more with the check on, on the folder the fix ran on, after one more input file.
            extra = os.path.join(inp, f"part-{BATCHES + 1:03d}.json")
            write_input(inp, BATCHES + 1)
            common.fresh_jvm(__file__, "after-fix", zip_path, inp, work)
            os.remove(extra)


def restart(zip_path, inp, pending, work):
    common.finish_restart(zip_path, inp, pending, work, start)


def fix(zip_path, inp, work):
    """In a new JVM: the same zip restarted with the schema check off; adds `fix` and `fix_outcome` to the record."""
    name = os.path.basename(zip_path)[: -len(".zip")]
    rec_path = os.path.join(common.OUT, name + ".json")
    record = json.load(open(rec_path))
    root = common.unzip_to(zip_path, os.path.join(work, name + "-fix"))
    confs = dict(record["query"]["confs"], **{CHECK: "false"})
    spark = common.session(confs)
    outcome = common.run_and_record(spark, lambda: start(spark, inp, root), timeout_s=120, settle_batches=99)
    spark.stop()
    record["fix"] = {"confs": {CHECK: "false"},
                     "description": "the same zip restarted the same way with the state schema check turned off"}
    record["fix_outcome"] = outcome
    record["fix_outcome"]["schema_file_after"] = file_state(root, record["mutation"]["file"])
    common.write_record(name, record, {root: "<checkpoint>", inp: "<input1>", work: "<workdir>"})
    print(name, "fix:", outcome["ok"], outcome["exception"], outcome["error_class"], outcome["batches_run_on_restart"])


def file_state(root, rel):
    """What the schema file is after a run: absent, or its size and first bytes."""
    path = os.path.join(root, rel)
    if not os.path.exists(path):
        return {"exists": False}
    data = open(path, "rb").read()
    return {"exists": True, "size": len(data), "head": data[:16].hex()}


def after_fix(zip_path, inp, work):
    """In a new JVM: the folder the fix ran on restarted with the record's confs (the check on again), after one
    more input file; adds `after_fix_outcome` to the record."""
    name = os.path.basename(zip_path)[: -len(".zip")]
    rec_path = os.path.join(common.OUT, name + ".json")
    record = json.load(open(rec_path))
    root = os.path.join(work, name + "-fix")
    spark = common.session(record["query"]["confs"])
    outcome = common.run_and_record(spark, lambda: start(spark, inp, root), timeout_s=120, settle_batches=99)
    spark.stop()
    outcome["schema_file_after"] = file_state(root, record["mutation"]["file"])
    record["after_fix_outcome"] = outcome
    record["fix"]["after"] = "then the folder the fix ran on restarted again with the schema check on (its default), after one more input file"
    common.write_record(name, record, {root: "<checkpoint>", inp: "<input1>", work: "<workdir>"})
    print(name, "after fix:", outcome["ok"], outcome["exception"], outcome["error_class"], outcome["batches_run_on_restart"])
    shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] == "restart":
        restart(*sys.argv[2:6])
    elif len(sys.argv) > 1 and sys.argv[1] == "fix":
        fix(*sys.argv[2:5])
    elif len(sys.argv) > 1 and sys.argv[1] == "after-fix":
        after_fix(*sys.argv[2:5])
    else:
        main()
