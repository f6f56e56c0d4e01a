"""Shared helpers of the real-Spark fixture generators (run by hand, never in CI).

Each generator writes a checkpoint with real Spark (pyspark from PyPI, a JDK from Debian), damages it the way
its kind describes, zips it (the checkpoint AFTER the damage and BEFORE the restart), restarts the same query
with real Spark and records what Spark did, in the record format of ../shared/fixtures (README there):
`name`, `spark_version`, `kind`, `scenario`, `query`, `mutation`, `restart_outcome`, `facts`. The outcome is
Spark's, never ours: the tests compare the inspector's prediction with it.

Setup (once): python3 -m venv /work/spark41 && /work/spark41/bin/pip install pyspark==4.1.4
Run:          JAVA_HOME=/usr/lib/jvm/java-17-openjdk-amd64 /work/spark41/bin/python tools/spark-gen/<kind>.py
Output:       crates/checkpoint-core/tests/data/spark/<name>.zip and <name>.json (or $SPARK_GEN_OUT)
"""
import json
import os
import re
import shutil
import tempfile
import time
import zipfile

# Where the zips and records go (SPARK_GEN_OUT overrides it, e.g. to try a generator without touching the committed
# fixtures).
OUT = os.environ.get("SPARK_GEN_OUT") or os.path.join(os.path.dirname(__file__), "..", "..", "crates", "checkpoint-core", "tests", "data", "spark")


def session(confs, app="spark-gen"):
    """A local[2] SparkSession with `confs` (a dict of SQL confs)."""
    os.environ.setdefault("JAVA_HOME", "/usr/lib/jvm/java-17-openjdk-amd64")
    from pyspark.sql import SparkSession

    b = SparkSession.builder.master("local[2]").appName(app)
    b = b.config("spark.ui.enabled", "false").config("spark.sql.session.timeZone", "UTC")
    for k, v in confs.items():
        b = b.config(k, v)
    s = b.getOrCreate()
    s.sparkContext.setLogLevel("ERROR")
    return s


def _chain(spark, jexc):
    """The cause chain of a Java throwable: class, first 5 message lines, error class (SparkThrowable)."""
    jvm = spark.sparkContext._jvm
    sparkthrowable = jvm.java.lang.Class.forName("org.apache.spark.SparkThrowable")
    out, seen = [], 0
    while jexc is not None and seen < 12:
        msg = jexc.getMessage() or ""
        cls = None
        if sparkthrowable.isInstance(jexc):
            try:
                cls = jexc.getCondition()
            except Exception:  # noqa: BLE001 - older Spark names it getErrorClass
                cls = jexc.getErrorClass()
        out.append({
            "class": jexc.getClass().getName(),
            "message_head": "\n".join(msg.splitlines()[:5]),
            "error_class": cls,
        })
        jexc = jexc.getCause()
        seen += 1
    return out


def run_and_record(spark, start_query, timeout_s=40, settle_batches=2):
    """Starts the query (`start_query()` returns a StreamingQuery), waits for it to fail or to run
    `settle_batches` batches, stops it, and returns the `restart_outcome` record."""
    t0 = time.time()
    try:
        q = start_query()
    except Exception as e:  # noqa: BLE001 - thrown by start()
        jexc = getattr(e, "_origin", None) or getattr(getattr(e, "java_exception", None), "__self__", None)
        jexc = getattr(e, "java_exception", None) if jexc is None else jexc
        chain = _chain(spark, jexc) if jexc is not None else [{"class": type(e).__name__, "message_head": str(e)[:400], "error_class": None}]
        return _outcome(False, "start", chain, [], t0)
    batches = []
    deadline = t0 + timeout_s
    while time.time() < deadline:
        if not q.isActive:
            break
        batches = sorted({p["batchId"] for p in q.recentProgress})
        if len(batches) >= settle_batches:
            break
        time.sleep(0.2)
    jq = q._jsq
    exc = jq.exception()
    if exc.isDefined():
        wrapper = exc.get()
        chain = _chain(spark, wrapper.getCause() if wrapper.getCause() is not None else wrapper)
        out = _outcome(False, "run", chain, batches, t0)
        out["streaming_query_error_class"] = _chain(spark, wrapper)[0]["error_class"]
        return out
    q.stop()
    batches = sorted({p["batchId"] for p in q.recentProgress})
    out = _outcome(True, "run", [], batches, t0)
    # Rows each batch read (numInputRows of its progress): what a restart read, e.g. whether new files were.
    out["input_rows_on_restart"] = {str(p["batchId"]): p["numInputRows"] for p in q.recentProgress}
    return out


def _outcome(ok, phase, chain, batches, t0):
    first = chain[0] if chain else {}
    error_class = next((c["error_class"] for c in chain if c.get("error_class")), None)
    root = chain[-1] if chain else {}
    return {
        "ok": ok,
        "phase": phase,
        "exception": first.get("class"),
        "error_class": error_class,
        "message_head": first.get("message_head"),
        "root_exception": root.get("class"),
        "root_message_head": root.get("message_head"),
        "cause_chain": chain,
        "batches_run_on_restart": batches,
        "seconds": round(time.time() - t0, 1),
    }


def batch_ids(folder):
    if not os.path.isdir(folder):
        return []
    return sorted(int(n) for n in os.listdir(folder) if re.fullmatch(r"\d+", n))


def facts(cp):
    """Facts computed from the checkpoint's files (not from the inspector)."""
    offs, coms = batch_ids(os.path.join(cp, "offsets")), batch_ids(os.path.join(cp, "commits"))
    meta = None
    mp = os.path.join(cp, "metadata")
    if os.path.exists(mp):
        meta = json.loads(open(mp).read().strip().splitlines()[0])
    f = {
        "offsets_batches": offs,
        "commits_batches": coms,
        "last_offset_batch": offs[-1] if offs else None,
        "last_committed_batch": coms[-1] if coms else None,
        "metadata": meta,
    }
    ops = {}
    state = os.path.join(cp, "state")
    for op in sorted(os.listdir(state)) if os.path.isdir(state) else []:
        parts = [int(p) for p in os.listdir(os.path.join(state, op)) if p.isdigit()] if op.isdigit() else []
        if parts:
            ops[op] = {"partitions": sorted(parts)}
    f["state_operators"] = ops
    if offs:
        lines = open(os.path.join(cp, "offsets", str(offs[-1]))).read().splitlines()
        f["offset_log_version_line"] = lines[0]
        f["last_offset_metadata"] = json.loads(lines[1])
        f["num_sources"] = len(lines) - 2
        f["source_offsets_last_batch"] = lines[2:]
    return f


def zip_checkpoint(cp, name):
    """Zips the checkpoint folder (root at the top of the zip) into OUT/<name>.zip."""
    os.makedirs(OUT, exist_ok=True)
    path = os.path.join(OUT, name + ".zip")
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as z:
        for d, _, files in sorted(os.walk(cp)):
            for fn in sorted(files):
                full = os.path.join(d, fn)
                z.write(full, os.path.relpath(full, cp))
    return path


def neutral(text, paths):
    """Replaces machine paths by placeholders in a record."""
    for p, name in paths.items():
        text = text.replace("file:" + p, name).replace(p, name)
    return text


def write_record(name, record, paths):
    os.makedirs(OUT, exist_ok=True)
    text = neutral(json.dumps(record, indent=2), paths)
    with open(os.path.join(OUT, name + ".json"), "w") as f:
        f.write(text + "\n")


def unzip_to(zip_path, folder):
    """Unpacks a fixture zip into `folder` (the restart runs on exactly the zip's bytes)."""
    with zipfile.ZipFile(zip_path) as z:
        z.extractall(folder)
    return folder


def fresh_jvm(script, *args):
    """Runs `script` with `args` in a new Python process, hence a new JVM: a restart there finds no state
    store, RocksDB instance or cache the writing run left in memory (a restart in the writing JVM can be
    served from them and hide a missing file)."""
    import subprocess
    import sys

    subprocess.run([sys.executable, script, *args], check=True)


def restart_recorded(script, zip_path, inp, record, work):
    """Restarts the checkpoint of `zip_path` in a new JVM: saves `record` (all but its outcome) and runs
    `script restart <zip> <input> <pending> <work>`, whose handler calls `finish_restart`."""
    pending = os.path.join(work, record["name"] + ".pending.json")
    with open(pending, "w") as f:
        json.dump(record, f)
    fresh_jvm(script, "restart", zip_path, inp, pending, work)


def finish_restart(zip_path, inp, pending, work, start, after=None, root_name="<checkpoint>"):
    """In the new JVM: unpacks the zip anew, restarts with `start(spark, inp, root)` (`root`: the unpacked zip)
    under the record's confs, lets `after(outcome, root)` add to the outcome, and writes the record."""
    record = json.load(open(pending))
    root = unzip_to(zip_path, os.path.join(work, record["name"] + "-restart"))
    spark = session(record["query"]["confs"])
    outcome = run_and_record(spark, lambda: start(spark, inp, root), timeout_s=120, settle_batches=99)
    spark.stop()
    if after:
        after(outcome, root)
    record["restart_outcome"] = outcome
    write_record(record["name"], record, {root: root_name, inp: "<input1>", work: "<workdir>"})
    print(record["name"], outcome["ok"], outcome["exception"], outcome["error_class"], outcome["batches_run_on_restart"])


def workdir():
    return tempfile.mkdtemp(prefix="spark-gen-")


def workspace():
    """A fresh work folder and, in it, the paths of a file-source -> file-sink query: (work, in, cp, out)."""
    work = workdir()
    return (work,) + tuple(os.path.join(work, d) for d in ("in", "cp", "out"))


def copy_tree(src, dst):
    shutil.copytree(src, dst)
    return dst
