#!/usr/bin/env python3
"""Writes `diagnose --json` (plain and --deep, at a fixed now) of every shared input and repo test zip into OUTDIR,
one file per run (stdout, stderr, exit status), so that a refactor can be shown not to change any report:

    python3 tools/report_snapshot.py OLD_CLI /tmp/before   # e.g. a worktree of main built before the change
    python3 tools/report_snapshot.py target/debug/checkpoint-inspector /tmp/after
    diff -r /tmp/before /tmp/after

Inputs: ../shared/**/*.zip (cases with their `cli_args`, files beside the case resolved) and tests/data/**/*.zip.
"""
import concurrent.futures as cf
import glob
import json
import os
import subprocess
import sys

NOW = '2026-12-01T00:00:00Z'


def main():
    cli, out = sys.argv[1], sys.argv[2]
    os.makedirs(out, exist_ok=True)
    repo = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    shared = os.path.join(os.path.dirname(repo), 'shared')
    zips = sorted(glob.glob(shared + '/**/*.zip', recursive=True)) + sorted(glob.glob(repo + '/tests/data/**/*.zip', recursive=True))
    jobs = []
    for z in zips:
        args = []
        expect = z[:-4] + '.expect.json'
        if z.startswith(os.path.join(shared, 'cases')) and os.path.exists(expect):
            folder = os.path.dirname(z)
            for a in json.load(open(expect)).get('cli_args', []):
                p = os.path.join(folder, a)
                args.append(p if os.path.exists(p) else a)
        for deep in ([], ['--deep']):
            name = os.path.relpath(z, os.path.dirname(repo)).replace('/', '_') + ('.deep' if deep else '') + '.json'
            # A case that pins its own clock keeps it (the CLI refuses `--now` twice).
            now = [] if any(a == '--now' or a.startswith('--now=') for a in args) else ['--now', NOW]
            jobs.append(([cli, 'diagnose', z, '--json'] + now + args + deep, os.path.join(out, name)))

    def run(job):
        cmd, path = job
        try:
            p = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
            text = f'{p.stdout}\n--stderr--\n{p.stderr}\n--rc {p.returncode}\n'
        except subprocess.TimeoutExpired:
            text = 'TIMEOUT\n'
        with open(path, 'w') as f:
            f.write(text)

    with cf.ThreadPoolExecutor(2) as ex:
        list(ex.map(run, jobs))
    print(f'{len(jobs)} runs of {len(zips)} inputs in {out}')


if __name__ == '__main__':
    main()
