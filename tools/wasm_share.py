#!/usr/bin/env python3
"""Bytes of a wasm module's code by Rust crate: the size of each function body (code section) attributed to the
crates its (demangled-enough) symbol names, from the module's `name` section. Used to state in the README what
one dependency costs the web build (e.g. the `parquet` crate of the Delta reader).

Usage: python3 tools/wasm_share.py target/wasm32-unknown-unknown/web/worker.wasm [crate ...]
The module must be the one cargo wrote (before wasm-bindgen / wasm-opt, which drop the names); shares of the
final, optimized file scale roughly with these.
"""
import re
import sys


def leb(b, i):
    r = s = 0
    while True:
        x = b[i]
        i += 1
        r |= (x & 0x7F) << s
        s += 7
        if x < 0x80:
            return r, i


def sections(b):
    i = 8
    while i < len(b):
        sid = b[i]
        n, i = leb(b, i + 1)
        yield sid, b[i:i + n]
        i += n


def main():
    data = open(sys.argv[1], "rb").read()
    wanted = sys.argv[2:] or ["parquet"]
    imported = 0
    bodies, names = [], {}
    for sid, body in sections(data):
        if sid == 2:  # imports: functions are numbered after them
            n, i = leb(body, 0)
            for _ in range(n):
                for _ in range(2):
                    ln, i = leb(body, i)
                    i += ln
                kind = body[i]
                i += 1
                if kind == 0:
                    _, i = leb(body, i)
                    imported += 1
                elif kind == 1:
                    i += 1
                    flags, i = leb(body, i)
                    _, i = leb(body, i)
                    if flags & 1:
                        _, i = leb(body, i)
                elif kind == 2:
                    flags, i = leb(body, i)
                    _, i = leb(body, i)
                    if flags & 1:
                        _, i = leb(body, i)
                elif kind == 3:
                    i += 2
        elif sid == 10:
            n, i = leb(body, 0)
            for _ in range(n):
                sz, i = leb(body, i)
                bodies.append(sz)
                i += sz
        elif sid == 0:
            ln, i = leb(body, 0)
            if body[i:i + ln] != b"name":
                continue
            i += ln
            while i < len(body):
                sub = body[i]
                sz, i = leb(body, i + 1)
                if sub == 1:
                    j = i
                    n, j = leb(body, j)
                    for _ in range(n):
                        idx, j = leb(body, j)
                        ln, j = leb(body, j)
                        names[idx] = body[j:j + ln].decode("utf-8", "replace")
                        j += ln
                i += sz
    total = sum(bodies)
    print(f"{sys.argv[1]}: {len(data):,} bytes, code {total:,} bytes in {len(bodies):,} functions ({len(names):,} named)")
    for crate in wanted:
        pat = re.compile(r"(^|[^A-Za-z0-9_])_?(ZN)?\d*" + re.escape(crate) + r"(\d|::|[^A-Za-z0-9_]|$)")
        own = sum(sz for k, sz in enumerate(bodies) if pat.search(names.get(k + imported, "")))
        print(f"  {crate}: {own:,} bytes of code ({100 * own / max(1, total):.1f}%)")


if __name__ == "__main__":
    main()
