#!/usr/bin/env python3
"""Issue 12's scale table on one command: the CLI and (with --page) the page on generated checkpoints, as ratios
against their floors, measured side by side in one run. A benchmark, not a test: goals are reported, never asserted.

    python3 tools/scale-bench/table.py [--runs N] [--page] [--state] [--xl] [--dir DIR] [zip...]

Without zips it builds the release CLI and the generator (crates/checkpoint-core/examples/scale_checkpoint.rs) and
writes the presets small, mid, large and RocksDB mid (with --xl also xl, 2 GB) into DIR (default
$TMPDIR/scale-bench, kept between runs: the generator is deterministic). For each zip, N rounds (default 5), the
commands of a round run one after another (paired: a slow moment of the machine slows them all), medians printed:

- `unzip -l` (the listing floor) and inflating the state a restart loads (the reading floor: CPython's `zipfile`,
  that is C zlib and its CRC32, timed in this process after its own listing of the zip): for every store
  of the restart's version (the newest commit's batch id + 1, from the listing), an HDFS store's newest snapshot
  at or below it and the deltas after, a RocksDB store's `<version>.zip` and the SST files its metadata names;
- `checkpoint-inspector diagnose --json` (the overview; it verifies that state within its read budget) and
  `diagnose --deep --json` (no budget), each with its peak RSS;
- with --page: `tools/scale-bench/page.mjs` (headless Chromium, after `scripts/build-web.sh`), N runs: time to
  the verdict and to the full report, reading the same file in the browser (`File.stream()`, its floor), the
  worker's wasm memory and the main thread's long tasks;
- with --state: `tools/scale-bench/state.sh` (rows/s and the ratio to `unzip -p` of the snapshots it decodes).

Prints a Markdown table, then one JSON line with every median, the machine (cores, CPU, load) and the date.
"""
import argparse
import datetime
import io
import json
import os
import platform
import re
import statistics
import subprocess
import sys
import time
import zipfile

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), '..', '..'))
CLI = os.path.join(REPO, 'target', 'release', 'checkpoint-inspector')
GEN = os.path.join(REPO, 'target', 'release', 'examples', 'scale_checkpoint')
PRESETS = [('small', ['--preset', 'small']), ('mid', ['--preset', 'mid']), ('large', ['--preset', 'large']),
           ('rocksdb-mid', ['--preset', 'mid', '--provider', 'rocksdb'])]


def timed(cmd):
    """Runs `cmd` (stdout and stderr to /dev/null) under `/usr/bin/time` (a forked Python's own memory would count
    in the child's peak); returns (wall seconds, peak RSS in MiB, exit code)."""
    out = os.path.join(os.environ.get('TMPDIR', '/tmp'), f'scale-bench-rss-{os.getpid()}')
    t = time.perf_counter()
    code = subprocess.call(['/usr/bin/time', '-f', '%M', '-o', out, *cmd], stdout=subprocess.DEVNULL,
                           stderr=subprocess.DEVNULL)
    wall = time.perf_counter() - t
    with open(out) as f:
        rss = int(f.read().split()[-1]) / 1024
    return wall, rss, code


def inflate(path, files):
    """The reading floor: seconds to read (inflate, CRC-check) `files` from the zip with CPython's `zipfile` (C zlib),
    its central directory read before the clock starts. (`unzip -p` with a name per file matches every name against
    every entry: 1,265 names on RocksDB mid took it a second.)"""
    z = zipfile.ZipFile(path)
    t = time.perf_counter()
    for f in files:
        z.read(f)
    return time.perf_counter() - t


def restart_state_files(path):
    """The files a restart of the zip's checkpoint loads, from its listing alone (the generated checkpoints have
    one root at the zip's top): the restart's version is the newest commit's batch id + 1."""
    z = zipfile.ZipFile(path)
    names = z.namelist()
    commits = [int(n.split('/')[1]) for n in names if re.fullmatch(r'commits/\d+', n)]
    if not commits:
        return [], 0
    version = max(commits) + 1
    stores = {}
    for n in names:
        m = re.fullmatch(r'(state/\d+/\d+(?:/[^/]+)?)/(\d+)\.(snapshot|delta|zip)', n)
        if m:
            stores.setdefault(m.group(1), []).append((int(m.group(2)), m.group(3), n))
    files, inflated = [], 0
    sizes = {i.filename: i.file_size for i in z.infolist()}
    for d, fs in stores.items():
        zips = [n for v, k, n in fs if k == 'zip' and v == version]
        if zips:  # RocksDB: the version's zip and the SST files its metadata names.
            files += zips
            meta = zipfile.ZipFile(io.BytesIO(z.read(zips[0]))).read('metadata').decode()
            body = json.loads(meta.split('\n', 1)[1])
            files += [f'{d}/SSTs/{s["dfsSstFileName"]}' for s in body.get('sstFiles', [])]
            continue
        snaps = [v for v, k, _ in fs if k == 'snapshot' and v <= version]
        base = max(snaps) if snaps else 0
        files += [n for v, k, n in fs if (k == 'snapshot' and v == base) or (k == 'delta' and base < v <= version)]
    inflated = sum(sizes.get(f, 0) for f in files)
    return files, inflated


def ensure_zips(args):
    if args.zips:
        return [(os.path.basename(z).removesuffix('.zip'), z) for z in args.zips]
    os.makedirs(args.dir, exist_ok=True)
    out = []
    for name, opts in PRESETS + ([('xl', ['--preset', 'xl'])] if args.xl else []):
        z = os.path.join(args.dir, name + '.zip')
        if not os.path.exists(z):
            print(f'writing {z}', file=sys.stderr)
            subprocess.run([GEN, *opts, '--out', z + '.part'], check=True, stdout=subprocess.DEVNULL)
            os.replace(z + '.part', z)
        out.append((name, z))
    return out


def build(args):
    env = dict(os.environ)
    cmd = 'cd "$0" && . scripts/env.sh && cargo build --release -q -p checkpoint-cli -p checkpoint-core --example scale_checkpoint'
    subprocess.run(['bash', '-c', cmd, REPO], check=True, env=env)
    if args.page:
        subprocess.run(['bash', os.path.join(REPO, 'scripts', 'build-web.sh')], check=True, stdout=subprocess.DEVNULL)


def measure_cli(name, path, runs):
    files, inflated = restart_state_files(path)
    cmds = {
        'unzip_l': ['unzip', '-l', path],
        'diagnose': [CLI, 'diagnose', path, '--json'],
        'deep': [CLI, 'diagnose', path, '--json', '--deep'],
    }
    walls = {k: [] for k in [*cmds, 'inflate']}
    rss = {k: 0.0 for k in cmds}
    for _ in range(runs):
        walls['inflate'].append(inflate(path, files))
        for k, c in cmds.items():
            w, r, code = timed(c)
            if k in ('diagnose', 'deep') and code not in (0, 1, 2):
                sys.exit(f'{name}: {" ".join(c)} exited with {code}')
            walls[k].append(w)
            rss[k] = max(rss[k], r)
    med = {k: statistics.median(v) for k, v in walls.items()}
    return {'zip': name, 'bytes': os.path.getsize(path), 'restart_files': len(files), 'restart_bytes': inflated,
            **{f'{k}_s': round(v, 4) for k, v in med.items()},
            'diagnose_rss_mib': round(rss['diagnose'], 1), 'deep_rss_mib': round(rss['deep'], 1)}


def measure_page(zips, runs):
    out = {}
    for _ in range(runs):
        p = subprocess.run(['node', os.path.join(REPO, 'tools', 'scale-bench', 'page.mjs'), *[z for _, z in zips]],
                           check=True, capture_output=True, text=True)
        for line in p.stdout.splitlines():
            r = json.loads(line)
            out.setdefault(r['zip'].removesuffix('.zip'), []).append(r)
    res = {}
    for name, rs in out.items():
        m = lambda k: statistics.median([r[k] for r in rs if r[k] is not None]) if any(r[k] is not None for r in rs) else None
        res[name] = {'verdict_ms': m('verdict_ms'), 'report_ms': m('report_ms'), 'read_file_ms': m('read_file_ms'),
                     'slices': m('slices'), 'wasm_mib': max(r['wasm_mib'] for r in rs),
                     'long_tasks': sum(r['main_thread_long_tasks']['count'] for r in rs),
                     'long_task_max_ms': max(r['main_thread_long_tasks']['max_ms'] for r in rs),
                     'outcomes': sorted({r['outcome'] or 'none' for r in rs})}
    return res


def x(a, b):
    return f'{a / b:.1f}×' if a and b else '—'


def table(cli, page, state):
    cols = [r['zip'] for r in cli]
    rows = [
        ('size, state a restart loads', [f'{r["bytes"] / 1e6:.0f} MB; {r["restart_files"]} files, '
                                         f'{r["restart_bytes"] / 1e6:.0f} MB' for r in cli], ''),
        ('`unzip -l`', [f'{r["unzip_l_s"]:.3f} s' for r in cli], ''),
        ('inflating that state (zlib)', [f'{r["inflate_s"]:.3f} s' for r in cli], ''),
        ('CLI `diagnose --json`', [f'{r["diagnose_s"]:.3f} s (**{x(r["diagnose_s"], r["unzip_l_s"])}** `unzip -l`; '
                                   f'{x(r["diagnose_s"], r["unzip_l_s"] + r["inflate_s"])} listing + inflating)'
                                   for r in cli], '≤ 2× `unzip -l`'),
        ('CLI `diagnose --deep --json`', [f'{r["deep_s"]:.3f} s ({x(r["deep_s"], r["unzip_l_s"] + r["inflate_s"])} '
                                          'listing + inflating)' for r in cli], '≤ 1.5× `unzip -p`'),
        ('CLI peak RSS (overview, deep)', [f'{r["diagnose_rss_mib"]:.0f}, {r["deep_rss_mib"]:.0f} MiB' for r in cli], ''),
    ]
    if page:
        g = lambda n: page.get(n, {})
        rows += [
            ('page, time to verdict', [f'{g(c)["verdict_ms"]:.0f} ms (**{x(g(c)["verdict_ms"] / 1000, r["diagnose_s"])}** '
                                       f'the CLI)' if g(c).get('verdict_ms') else '—' for c, r in zip(cols, cli)],
             '≤ 3× the CLI'),
            ('page, full report', [f'{g(c)["report_ms"]:.0f} ms' if g(c) else '—' for c in cols], ''),
            ('page, reading the file (`File.stream()`)', [f'{g(c)["read_file_ms"]:.0f} ms' if g(c) else '—'
                                                          for c in cols], ''),
            ('page, slices read', [f'{g(c)["slices"]:.0f}' if g(c) else '—' for c in cols], ''),
            ('worker wasm memory', [f'{g(c)["wasm_mib"]} MiB' if g(c) else '—' for c in cols], '≤ 64 MiB'),
            ('main thread, long tasks > 50 ms (all runs)', [f'{g(c)["long_tasks"]} (max {g(c)["long_task_max_ms"]} ms)'
                                                            if g(c) else '—' for c in cols], 'none'),
        ]
    lines = ['| | ' + ' | '.join(cols) + " | issue 12's goal |", '|---' * (len(cols) + 2) + '|']
    lines += [f'| {label} | ' + ' | '.join(vals) + f' | {goal} |' for label, vals, goal in rows]
    if state:
        lines += ['', f'`state` ({state["rows"]:,} rows): {state["state_wall_s"]} s, {state["rows_per_s_wall"]:,} rows/s, '
                      f'{state["ratio_to_unzip_wall"]}× `unzip -p` of its snapshots, peak RSS {state["peak_rss_mib"]} MiB '
                      '(goals: ≥ 1 M rows/s, ≤ 2× `unzip -p`, ≤ 256 MB)']
    return '\n'.join(lines)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    ap.add_argument('zips', nargs='*')
    ap.add_argument('--runs', type=int, default=5)
    ap.add_argument('--page', action='store_true')
    ap.add_argument('--state', action='store_true')
    ap.add_argument('--xl', action='store_true')
    ap.add_argument('--dir', default=os.path.join(os.environ.get('TMPDIR', '/tmp'), 'scale-bench'))
    args = ap.parse_args()
    build(args)
    zips = ensure_zips(args)
    cli = [measure_cli(n, z, args.runs) for n, z in zips]
    page = measure_page(zips, max(1, min(args.runs, 3))) if args.page else None
    state = None
    if args.state:
        s = subprocess.run(['bash', os.path.join(REPO, 'tools', 'scale-bench', 'state.sh'), '--runs', str(args.runs)],
                           check=True, capture_output=True, text=True)
        state = json.loads(s.stdout.strip().splitlines()[-1])
    print(table(cli, page, state))
    cpu = next((l.split(':', 1)[1].strip() for l in open('/proc/cpuinfo') if l.startswith('model name')), platform.machine())
    print(json.dumps({'date': datetime.datetime.now(datetime.timezone.utc).isoformat(timespec='seconds'),
                      'cores': os.cpu_count(), 'cpu': cpu, 'load_average': os.getloadavg(), 'runs': args.runs,
                      'cli': cli, 'page': page, 'state': state}))


if __name__ == '__main__':
    main()
