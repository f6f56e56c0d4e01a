#!/usr/bin/env python3
"""Writes rocksdb.zip, the worker's RocksDB warm-up input (crates/checkpoint-web/src/warm_up.rs), from the real
Spark 4.3.0 RocksDB fixture: every file as Spark wrote it, less the state of partitions 1 and 2 and the snapshot
zips before the newest two of partition 0 (the SSTs stay). Deterministic (entries in name order, fixed times).

    python3 crates/checkpoint-web/warmup/make.py [../shared/fixtures/ss-4.3.0-agg-rocksdb.zip]
"""
import os
import re
import sys
import zipfile

here = os.path.dirname(os.path.abspath(__file__))
src = sys.argv[1] if len(sys.argv) > 1 else os.path.join(here, '../../../../shared/fixtures/ss-4.3.0-agg-rocksdb.zip')
with zipfile.ZipFile(src) as z:
    names = sorted(n for n in z.namelist() if not n.endswith('/'))
    zips = sorted((int(m.group(1)) for n in names if (m := re.fullmatch(r'state/0/0/(\d+)\.zip', n))))
    keep_zips = set(zips[-2:])

    def keep(n):
        if re.match(r'state/0/[12]/', n):
            return False
        m = re.fullmatch(r'state/0/0/\.?(\d+)\.zip(\.crc)?', n)
        return not m or int(m.group(1)) in keep_zips

    out = os.path.join(here, 'rocksdb.zip')
    with zipfile.ZipFile(out, 'w', zipfile.ZIP_DEFLATED) as w:
        for n in filter(keep, names):
            info = zipfile.ZipInfo(n, date_time=(2026, 11, 30, 9, 17, 0))
            info.compress_type = zipfile.ZIP_DEFLATED
            w.writestr(info, z.read(n))
print(out, os.path.getsize(out), 'bytes')
