"""Spark's own text of state rows: `spark.read.format("statestore").load(ckpt).toJSON()`, line for line.

Writes a checkpoint of one streaming aggregation whose grouping key and aggregation buffer hold the types whose
text is easy to get wrong: decimals of every shape Java's BigDecimal.toString gives (`3.00`, `0.01`, `0E-10`,
`1E-8`, 31 digits), a buffer that repeats field names (`avg` and `sum` both keep `sum` and `count`), floats,
doubles (-0.0, infinities, 1e-300), dates, timestamps, binary, arrays with nulls, structs, strings with escapes
and non-ASCII, and maps (`first` of a map keeps it in the buffer) whose keys and values are decimals, doubles,
floats, dates, arrays, structs and timestamps. Then reads it back with Spark's State Data Source and records every row as `toJSON` writes it.
The test crates/checkpoint-core/tests/state_tojson.rs compares the inspector's `state` text with these lines,
byte for byte.

Setup (once): python3 -m venv /work/spark41 && /work/spark41/bin/pip install pyspark==4.1.4 (4.0+: the State
              Data Source)
Run:          JAVA_HOME=/usr/lib/jvm/java-17-openjdk-amd64 /work/spark41/bin/python tools/spark-gen/state_tojson.py [hdfs|rocksdb ...]
Output:       crates/checkpoint-core/tests/data/spark/state-tojson-<provider>-<version>.zip (the checkpoint) and
              .rows.jsonl (Spark's toJSON lines of the last committed batch's state, sorted)
"""
import json
import os
import sys

sys.path.insert(0, os.path.dirname(__file__))
from common import OUT, session, workdir, zip_checkpoint  # noqa: E402

PROVIDERS = {
    "hdfs": "org.apache.spark.sql.execution.streaming.state.HDFSBackedStateStoreProvider",
    "rocksdb": "org.apache.spark.sql.execution.streaming.state.RocksDBStateStoreProvider",
}

SCHEMA = ("k int, s string, d decimal(38,10), dt date, ts timestamp, f double, arr array<int>, "
          "m map<string,int>, st struct<a:int,b:string>, small decimal(5,2)")

# Decimal(38,10) values (as text) whose BigDecimal.toString differ in shape, and decimal(5,2) ones.
BIG = ["100000000000000000003.0000000007", "0", "0.00000001", "-0.0000000123", "12.5", None]
SMALL = ["3.00", "0.01", "0", "-1.50", "999.99", None]
DOUBLES = [1.5, -0.0, float("inf"), 2.25, 1e-300, 3.0]
STRINGS = ["a", "\u00e9\u2713", "", "tab\tquote\"back\\", None, "x"]


def write_inputs(folder, files=3):
    os.makedirs(folder, exist_ok=True)
    for i in range(files):
        with open(os.path.join(folder, "part-%d.json" % i), "w") as f:
            for j in range(6):
                row = {
                    "k": j if j != 4 else None,
                    "s": STRINGS[j],
                    "d": BIG[(i + j) % len(BIG)],
                    "dt": "2024-02-%02d" % (j + 1),
                    "ts": "2024-01-01T00:%02d:00.000Z" % (i * 6 + j),
                    "f": DOUBLES[j],
                    "arr": [j, None, i] if j != 1 else [],
                    "m": {"x": i * j, "y": None},
                    "st": {"a": j, "b": None if j == 0 else "b%d" % j},
                    "small": SMALL[(i * 2 + j) % len(SMALL)],
                }
                # Literal JSON numbers for the decimals (a string would be read as null by a decimal column).
                text = json.dumps({k: v for k, v in row.items() if k not in ("d", "small")})
                extra = "".join(',"%s":%s' % (k, row[k]) for k in ("d", "small") if row[k] is not None)
                f.write(text[:-1] + extra + "}\n")


def run(provider):
    from pyspark.sql import functions as F

    work = workdir()
    inp, ckpt = os.path.join(work, "in"), os.path.join(work, "ckpt")
    write_inputs(inp)
    spark = session({
        "spark.sql.shuffle.partitions": "2",
        "spark.sql.streaming.stateStore.providerClass": PROVIDERS[provider],
    }, app="state-tojson")
    df = spark.readStream.schema(SCHEMA).option("maxFilesPerTrigger", 1).json(inp)
    df = df.withColumn("bin", F.expr("cast(s as binary)")).withColumn("fl", F.expr("cast(f as float)"))
    agg = df.groupBy("k", "s", "d", "dt", "st", "arr", "bin", "fl", "small").agg(
        F.sum("d").alias("sum_d"), F.avg("f").alias("avg_f"), F.sum("small").alias("sum_small"),
        F.collect_list("s").alias("strings"), F.max(F.col("m")["x"]).alias("max_x"), F.first("st").alias("first_st"),
        F.min("ts").alias("min_ts"), F.max("arr").alias("max_arr"), F.count("*").alias("n"),
        # Maps in the buffer (`first` keeps its input's type): keys and values of the types whose text differs.
        F.first("m").alias("first_m"),
        F.first(F.create_map(F.coalesce("small", F.lit(0).cast("decimal(5,2)")), F.col("f"))).alias("m_dec_dbl"),
        F.first(F.create_map(F.col("f"), F.col("arr"))).alias("m_dbl_arr"),
        F.first(F.create_map(F.col("dt"), F.col("st"), F.lit("2000-01-01").cast("date"), F.lit(None).cast("struct<a:int,b:string>"))).alias("m_date_st"),
        F.first(F.create_map(F.lit("d"), F.col("d"), F.lit("fl"), F.col("fl").cast("decimal(38,10)"))).alias("m_str_dec"),
        F.first(F.create_map(F.col("fl"), F.col("ts"))).alias("m_fl_ts"))
    q = agg.writeStream.format("noop").outputMode("update").option("checkpointLocation", ckpt) \
        .trigger(availableNow=True).start()
    q.awaitTermination()
    rows = sorted(spark.read.format("statestore").load(ckpt).toJSON().collect())
    name = "state-tojson-%s-%s" % (provider, spark.version)
    spark.stop()
    zip_checkpoint(ckpt, name)
    with open(os.path.join(OUT, name + ".rows.jsonl"), "w") as f:
        for r in rows:
            f.write(r + "\n")
    print(name, len(rows), "rows")


if __name__ == "__main__":
    for p in sys.argv[1:] or ["hdfs", "rocksdb"]:
        run(p)
