#!/usr/bin/env python3
"""Hottest functions of a Node .cpuprofile (the newest in DIR), self and inclusive, with Rust hashes cut:

    python3 top.py DIR [N]
"""
import collections
import glob
import json
import os
import re
import sys


def main():
    d = sys.argv[1]
    n = int(sys.argv[2]) if len(sys.argv) > 2 else 40
    prof = json.load(open(max(glob.glob(os.path.join(d, '*.cpuprofile')), key=os.path.getmtime)))
    nodes = {x['id']: x for x in prof['nodes']}
    parent = {c: x['id'] for x in prof['nodes'] for c in x.get('children', [])}
    name = lambda i: re.sub(r'(::h|17h)[0-9a-f]{16}E?$', '', nodes[i]['callFrame']['functionName'] or '(anonymous)')
    own, incl = collections.Counter(), collections.Counter()
    for s in prof['samples']:
        own[name(s)] += 1
        seen, i = set(), s
        while i is not None:
            k = name(i)
            if k not in seen:
                incl[k] += 1
                seen.add(k)
            i = parent.get(i)
    total = len(prof['samples']) or 1
    for title, c in (('self', own), ('inclusive', incl)):
        print(f'--- {title} ({total} samples)')
        for k, v in c.most_common(n):
            print(f'{100 * v / total:5.1f}% {k[-140:]}')


if __name__ == '__main__':
    main()
