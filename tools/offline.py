#!/usr/bin/env python3
"""Post-build step after `trunk build --release` (scripts/build-web.sh runs it before tools/single_file.py).

1. The build id: $INSPECTOR_BUILD_ID, else `git describe`-like `<short hash>[-dirty] <UTC date>`; written with the
   inspector version into the page's footer (`<span id="build-note">`), so both the hosted page and the single
   file show which build they are.
2. dist/sw.js from web/sw.js: the cache name (build id + a hash of every cached file's bytes, so any change of
   the files makes a new cache) and the list of files to cache (everything in dist/ but the single file and the
   worker itself).

Usage: tools/offline.py [DIST]   (default: dist). Idempotent: running it again on the same dist/ re-stamps it.
"""
import datetime
import hashlib
import json
import os
import re
import subprocess
import sys
from pathlib import Path

repo = Path(__file__).resolve().parent.parent
dist = Path(sys.argv[1] if len(sys.argv) > 1 else "dist")

version = re.search(r'^version\s*=\s*"([^"]+)"', (repo / "Cargo.toml").read_text(), re.M).group(1)
build_id = os.environ.get("INSPECTOR_BUILD_ID", "").strip()
if not build_id:
    def git(*args):
        r = subprocess.run(["git", "-C", str(repo), *args], capture_output=True, text=True)
        return r.stdout.strip() if r.returncode == 0 else ""
    short = git("rev-parse", "--short", "HEAD") or "nogit"
    dirty = "-dirty" if git("status", "--porcelain", "--untracked-files=no") else ""
    build_id = f"{short}{dirty} {datetime.datetime.now(datetime.timezone.utc).strftime('%Y-%m-%d')}"
if not re.fullmatch(r"[A-Za-z0-9 ._:+-]{1,64}", build_id):
    sys.exit(f"error: build id {build_id!r}: letters, digits, space and ._:+- only (at most 64)")

# 1. Footer.
index = dist / "index.html"
html = index.read_text(encoding="utf-8")
note_re = re.compile(r'<span id="build-note"[^>]*>.*?</span>', re.S)
if not note_re.search(html):
    sys.exit("error: no <span id=\"build-note\"> in dist/index.html")
note = f'<span id="build-note" data-build-id="{build_id}">version {version}, build {build_id}</span>'
html = note_re.sub(lambda m: note, html, count=1)
index.write_text(html, encoding="utf-8")

# 2. Service worker.
skip = {"sw.js", "web/sw.js", "checkpoint-inspector.html"}
files = sorted(p.relative_to(dist).as_posix() for p in dist.rglob("*") if p.is_file())
files = [f for f in files if f not in skip]
digest = hashlib.sha256()
for f in files:
    digest.update(f.encode() + b"\0" + (dist / f).read_bytes())
cache_id = re.sub(r"[^A-Za-z0-9._-]", "_", build_id) + "-" + digest.hexdigest()[:12]
sw = (repo / "web" / "sw.js").read_text(encoding="utf-8")
if "__CACHE_ID__" not in sw or "__PRECACHE__" not in sw:
    sys.exit("error: web/sw.js lost its __CACHE_ID__ / __PRECACHE__ markers")
sw = sw.replace("__CACHE_ID__", cache_id).replace("__PRECACHE__", json.dumps(files))
(dist / "sw.js").write_text(sw, encoding="utf-8")
(dist / "web" / "sw.js").unlink(missing_ok=True)
print(f"offline: build {build_id}, service worker cache {cache_id}, {len(files)} files")
