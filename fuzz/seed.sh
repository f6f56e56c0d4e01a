#!/usr/bin/env bash
# Seeds every fuzz target's corpus (fuzz/corpus/<target>/) from the real fixtures in ../shared/fixtures:
# whole small zips (diagnose_zip; read_ahead after a byte of read options), log files (log_readers), state files (codecs, rocksdb_files;
# also the SSTs of tests/data/spark/sst-compression-*), rows (unsafe_row,
# avro: decoded from a fixture by the fuzzers' own first inputs), overlay picks and DStream checkpoint files
# (javaser, from ../shared/dstream), Delta checkpoint parquet files (delta_parquet, from ../shared/cases and the
# generated Delta logs). Deterministic; idempotent.
set -euo pipefail
cd "$(dirname "$0")"
python3 - <<'PY'
import hashlib, os, zipfile, glob
fx = sorted(glob.glob('../../shared/fixtures/*.zip'))
def put(target, data):
    d = os.path.join('corpus', target); os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, hashlib.sha1(data).hexdigest()), 'wb') as f: f.write(data)
for z in fx:
    if os.path.getsize(z) < 256 * 1024:
        put('diagnose_zip', open(z, 'rb').read())
        put('read_ahead', bytes([len(z) % 8]) + open(z, 'rb').read())
    zf = zipfile.ZipFile(z)
    for i, n in enumerate(zf.namelist()):
        b = zf.read(n)
        base = n.rsplit('/', 1)[-1]
        if len(b) > 1 << 20: continue
        if n.startswith(('offsets/', 'commits/', 'sources/')) or base == 'metadata' or '_spark_metadata' in n or '_metadata/' in n or base.endswith('.crc'):
            put('log_readers', b)
        if base.endswith(('.delta', '.snapshot')):
            put('codecs', b); put('unsafe_row', bytes([0]) + b[:256])
        if base.endswith('.changelog'):
            put('codecs', b); put('rocksdb_files', b)
        if base.endswith('.sst'):
            put('rocksdb_files', b)
        if i % 7 == 0 and len(b) < 4096:
            put('overlay', bytes([len(fx) % 3, i % 256]) + b)
# RocksDB SSTs with every block compression Spark's conf allows (zlib, bzip2, zstd, snappy, LZ4HC), written by
# real Spark (tools/spark-gen/sst_compression.py).
for z in sorted(glob.glob('../crates/checkpoint-core/tests/data/spark/sst-compression-*.zip')):
    zf = zipfile.ZipFile(z)
    for n in zf.namelist():
        if n.endswith('.sst'):
            put('rocksdb_files', zf.read(n))
# DStream checkpoints (../shared/dstream): the `checkpoint-<ms>` files, as stored (codec-framed) and, for the
# raw Java serialization stream, without the 4-byte stream header the target puts back itself.
for z in sorted(glob.glob('../../shared/dstream/*.zip')):
    zf = zipfile.ZipFile(z)
    for n in zf.namelist():
        base = n.rsplit('/', 1)[-1]
        if base.startswith('checkpoint-'):
            b = zf.read(n)
            if len(b) <= 1 << 20:
                put('javaser', b)
                if b[:2] == bytes([0xAC, 0xED]):
                    put('javaser', b[4:])
put('javaser', bytes([0x70]))
# Delta checkpoints in Parquet (delta_parquet): the `_delta_log/*.checkpoint.parquet` of the Delta cases
# (../shared/cases: Delta Spark, delta-rs) and of the logs tools/delta-logs/gen.py wrote (delta-rs).
for z in sorted(glob.glob('../../shared/cases/*.zip') + glob.glob('../crates/checkpoint-core/tests/data/delta/*.zip')):
    zf = zipfile.ZipFile(z)
    for n in zf.namelist():
        if '_delta_log/' in n and n.endswith('.parquet') and '.checkpoint.' in n:
            put('delta_parquet', zf.read(n))
# Share links (share_link): the link kept as test data, as text (0), its JSON (1), and strings of the fixtures'
# reports replaced (2: fixture, string number, text), with and without redaction, with a small budget.
import base64, zlib
link = open('../crates/checkpoint-core/src/share/testdata/v1-link.txt').read().strip()
payload = link.split('report=1.', 1)[1]
envelope = zlib.decompress(base64.urlsafe_b64decode(payload + '=' * (-len(payload) % 4)))
def mode(form, flags=0):  # the target's first byte: the form (byte % 3) and the option bits 0x10, 0x20
    return bytes([next(b for b in range(256) if b % 3 == form and b & 0x30 == flags)])
for flags in (0x00, 0x10, 0x20):
    put('share_link', mode(0, flags) + link.encode())
    put('share_link', mode(1, flags) + envelope)
for text in (b'/data/in', b's3a://bucket/key', b'host.example:9092', b'\xc3\xa9\xe2\x80\xa6', b'password=x'):
    for fixture in range(3):
        for string in (0, 7, 40, 120):
            put('share_link', mode(2) + bytes([fixture, string]) + text)
put('avro', bytes([0, 2, 0x61, 4, 0]))
put('avro', bytes([1, 2, 2, 0, 0]))
PY
for d in corpus/*; do echo "$(basename "$d"): $(ls "$d" | wc -l) seeds"; done
