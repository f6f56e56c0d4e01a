#!/usr/bin/env python3
"""Scales the real Spark 4.1.4 RocksDB checkpoint format v2 fixture (ss-4.1.4-agg-rocksdb-ckptv2.zip, 3 partitions)
to N shuffle partitions: partition p holds a copy of partition p % 3's files, each commit's `stateUniqueIds`
lists the ids of those copies for every partition, the offset log's conf and the operator metadata say N
partitions. A benchmark input for `state` and the overview on many checkpoint-v2 partitions (each partition's
load reads the unique id that commits/<v - 1> records for it). Deterministic.

    tools/scale-bench/ckptv2_partitions.py N OUT.zip
"""
import json, os, re, struct, sys, zipfile, zlib

here = os.path.dirname(os.path.abspath(__file__))
SEED = os.path.join(here, '..', '..', '..', 'shared', 'fixtures', 'ss-4.1.4-agg-rocksdb-ckptv2.zip')

def hadoop_crc(data):
    """A Hadoop ChecksumFileSystem `.crc`: b'crc\\0', bytesPerChecksum (512, big-endian), a CRC32 per chunk."""
    out = b'crc\0' + struct.pack('>I', 512)
    for i in range(0, len(data), 512):
        out += struct.pack('>I', zlib.crc32(data[i:i + 512]))
    return out

def main():
    n, out = int(sys.argv[1]), sys.argv[2]
    src = zipfile.ZipFile(SEED)
    with zipfile.ZipFile(out, 'w', zipfile.ZIP_DEFLATED) as z:
        for info in src.infolist():
            name, data = info.filename, src.read(info)
            m = re.match(r'state/0/(\d+)/(.*)$', name)
            if m and m.group(2) != '':
                part = int(m.group(1))
                for p in range(part, n, 3):
                    z.writestr(f'state/0/{p}/{m.group(2)}', data)
                continue
            if re.match(r'commits/\d+$', name):
                head, body = data.decode().split('\n', 1)
                j = json.loads(body)
                ids = j.get('stateUniqueIds', {}).get('0')
                if ids:
                    j['stateUniqueIds']['0'] = [ids[p % 3] for p in range(n)]
                data = (head + '\n' + json.dumps(j, separators=(',', ':'))).encode()
            elif re.match(r'offsets/\d+$', name):
                data = data.replace(b'"spark.sql.shuffle.partitions":"3"', f'"spark.sql.shuffle.partitions":"{n}"'.encode())
            elif name == 'state/0/_metadata/metadata':
                data = re.sub(rb'"numPartitions":3\b', f'"numPartitions":{n}'.encode(), data)
            elif re.match(r'(commits|offsets)/\.\d+\.crc$', name):
                continue  # written with the file it sums, below
            z.writestr(info, data)
            if re.match(r'(commits|offsets)/\d+$', name):
                d, b = name.split('/')
                z.writestr(f'{d}/.{b}.crc', hadoop_crc(data))

main()
