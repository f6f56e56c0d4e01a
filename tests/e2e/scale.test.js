// End-to-end test of a big checkpoint in the page (issue 12) in real headless Chromium: a checkpoint generated
// by the repo's generator (crates/checkpoint-core/examples/scale_checkpoint.rs, `--preset mid`: 20,000 batches,
// 200 partitions, 94,017 files, from the real Spark 4.3.0 aggregation) is picked with the file input. The page
// shows progress while the worker reads (the bar moves, the status names the files read of those listed), shows
// the verdict before the older batches are read, gives the verdict the CLI gives on the same zip with every batch
// id in the report, keeps the main thread free
// (a script runs while the worker reads), and a second run is cancelled while it reads the history (the verdict stays); the page then diagnoses
// the next input. `SCALE_ZIP=<zip>` runs the same test on a checkpoint generated beforehand (by hand: the 2 GB
// one, `scale_checkpoint --preset xl`; it must have the generator's 20,000 batches).

import { test, describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium } from 'playwright-core';

const here = path.dirname(fileURLToPath(import.meta.url));
const repo = path.resolve(here, '../..');
const dist = path.join(repo, 'dist');
const cli = process.env.CHECKPOINT_CLI
  || ['target/debug/checkpoint-inspector', 'target/release/checkpoint-inspector'].map((p) => path.join(repo, p)).find((p) => fs.existsSync(p))
  || path.join(repo, 'target/debug/checkpoint-inspector');
// The generator is built beside the CLI (`cargo test --workspace` builds the examples).
const generator = process.env.SCALE_CHECKPOINT
  || path.join(path.dirname(cli), 'examples', 'scale_checkpoint');

const MIME = { '.html': 'text/html; charset=utf-8', '.js': 'text/javascript', '.wasm': 'application/wasm',
  '.css': 'text/css', '.svg': 'image/svg+xml', '.json': 'application/json', '.zip': 'application/zip' };

let browser; let server; let base; let zip; let want; let files;

before(async () => {
  if (process.env.SCALE_ZIP) {
    // By hand, on a checkpoint generated beforehand (the 2 GB one: `scale_checkpoint --preset xl`).
    zip = fs.mkdtempSync(path.join(os.tmpdir(), 'scale-')) + '/given.zip';
    fs.symlinkSync(path.resolve(process.env.SCALE_ZIP), zip);
    const l = spawnSync('unzip', ['-Z1', zip], { encoding: 'utf8', maxBuffer: 1 << 30 });
    assert.equal(l.status, 0, `unzip -Z1: ${l.stderr}`);
    files = l.stdout.split('\n').filter((x) => x && !x.endsWith('/')).length;
  } else {
    assert.ok(fs.existsSync(generator), `the generator ${generator} (cargo build --examples -p checkpoint-core)`);
    zip = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'scale-')), 'mid.zip');
    // Small state files (20 rows each) keep a debug build of the generator quick; the file count is the mid one.
    const g = spawnSync(generator, ['--preset', 'mid', '--rows', '20', '--out', zip], { encoding: 'utf8' });
    assert.equal(g.status, 0, `generator: ${g.stderr}`);
    const made = JSON.parse(g.stdout.trim().split('\n').pop());
    assert.equal(made.batches, 20000);
    files = made.entries;
  }
  const r = spawnSync(cli, ['diagnose', zip, '--json'], { encoding: 'utf8', maxBuffer: 256 << 20 });
  assert.ok(r.status === 0 || r.status === 1, `CLI exit ${r.status}: ${r.stderr}`);
  want = JSON.parse(r.stdout);
  server = http.createServer((req, res) => {
    const rel = decodeURIComponent(new URL(req.url, 'http://x').pathname.slice(1)) || 'index.html';
    const file = path.resolve(dist, rel);
    if (!file.startsWith(dist + path.sep) || !fs.existsSync(file) || fs.statSync(file).isDirectory()) { res.writeHead(404).end(); return; }
    res.writeHead(200, { 'content-type': MIME[path.extname(file)] || 'application/octet-stream' });
    fs.createReadStream(file).pipe(res);
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${server.address().port}/`;
  browser = await chromium.launch({
    executablePath: process.env.CHROMIUM || '/usr/bin/chromium', headless: true,
    args: ['--headless', '--no-sandbox', '--disable-gpu'],
  });
});

after(async () => {
  await browser?.close();
  server?.close();
  if (zip) fs.rmSync(path.dirname(zip), { recursive: true, force: true });
});

const runCount = (page) => page.$eval('#results', (r) => Number(r.dataset.runCount || 0));

/** Records every change of the status line, the progress bar, Cancel and the run state from now on (a
 *  MutationObserver in the page: nothing is lost between two polls, however fast the machine). */
async function record(page) {
  await page.evaluate(() => {
    const r = document.querySelector('#results');
    const bar = document.querySelector('#progress');
    const status = document.querySelector('#status-text');
    const cancel = document.querySelector('#cancel');
    window.tcSeen = [];
    const snap = () => window.tcSeen.push({
      busy: r.dataset.run === 'busy', value: bar.value, max: bar.max, barShown: !bar.hidden,
      status: status.textContent, cancel: !cancel.hidden,
      verdict: r.dataset.verdict === 'shown' && !!r.querySelector('[data-testid=history-pending]')
        ? r.querySelector('[data-testid=verdict]')?.dataset.outcome ?? null : null,
    });
    window.tcObserver?.disconnect();
    window.tcObserver = new MutationObserver(snap);
    for (const e of [r, bar, status, cancel]) window.tcObserver.observe(e, { attributes: true, childList: true, characterData: true, subtree: true });
  });
}

/** Waits until a run after `n` has ended (polling; `onSample` sees each poll while it runs), then returns every
 *  state [`record`] saw. */
async function watchRun(page, n, onSample) {
  let last;
  for (let i = 0; i < 6000; i += 1) {
    const s = await page.evaluate((before) => {
      const r = document.querySelector('#results');
      return {
        done: Number(r.dataset.runCount || 0) > before && r.dataset.run !== 'busy' && (r.dataset.pending || '0') === '0',
        busy: r.dataset.run === 'busy', status: document.querySelector('#status-text').textContent,
        cancel: !document.querySelector('#cancel').hidden, verdict: r.dataset.verdict === 'shown',
      };
    }, n);
    last = s;
    if (s.done) return page.evaluate(() => window.tcSeen);
    if (onSample && (await onSample(s))) onSample = null;
    await new Promise((r) => setTimeout(r, 20));
  }
  throw new Error(`no end of the run: ${JSON.stringify(last)}`);
}

describe('a generated mid-size checkpoint (94,017 files) in the page', () => {
  test('progress while it reads, the CLI verdict with every batch, then a cancelled run and recovery', async () => {
    const page = await browser.newPage();
    const errors = [];
    page.on('pageerror', (e) => errors.push(String(e)));
    // Progress every 10 ms instead of 100: a fast machine reads the checkpoint in a second or less.
    await page.addInitScript(() => { window.TC_PROGRESS_MS = 10; });
    await page.goto(base);
    await page.waitForSelector('body[data-status=ready]', { timeout: 60000 });

    let n = await runCount(page);
    await record(page);
    await page.setInputFiles('#file-input', zip);
    const samples = await watchRun(page, n);
    const reading = samples.filter((s) => s.busy && /^Reading .+ \(\d+ files? read of \d+ listed\)/.test(s.status));
    assert.ok(reading.length >= 2, `the status names the files read while the worker reads: ${JSON.stringify(samples.slice(0, 8))}`);
    const counts = reading.map((s) => Number(/\((\d+) files? read of/.exec(s.status)[1]));
    assert.ok(counts.at(-1) > counts[0], `the count of files read grows: ${counts.slice(0, 3)} … ${counts.slice(-3)}`);
    assert.ok(reading.every((s) => Number(/read of (\d+) listed/.exec(s.status)[1]) === files), `out of the ${files} files listed`);
    assert.ok(samples.some((s) => s.busy && s.barShown && s.max === files && s.value > 0 && s.value < s.max),
      `the progress bar moves while the worker reads: ${JSON.stringify(samples.filter((s) => s.busy).slice(-4))}`);
    assert.ok(samples.filter((s) => s.busy).every((s) => s.cancel), 'Cancel is offered for the whole run');
    // The verdict first: shown (the CLI's outcome) while the worker still reads the older batches, which it goes
    // on reading with progress.
    const early = samples.findIndex((s) => s.busy && s.verdict);
    assert.ok(early >= 0, `the verdict is shown before the history is read: ${JSON.stringify(samples.slice(-3))}`);
    assert.equal(samples[early].verdict, want.checkpoints[0].restart.outcome, 'the early verdict is the CLI\'s');
    assert.ok(samples.slice(early).some((s) => s.busy && /files? read of/.test(s.status)), 'progress goes on after the verdict');

    assert.equal(await page.$eval('#results', (e) => e.dataset.run), 'done');
    const c = want.checkpoints[0];
    assert.equal(c.restart.outcome, 'resumes', 'the generated checkpoint is healthy');
    assert.equal(await page.$eval('[data-testid=verdict]', (v) => v.dataset.outcome), c.restart.outcome);
    const got = await page.evaluate(() => {
      const r = window.checkpointInspector.report.checkpoints[0];
      return { batches: r.batches, codes: r.findings.map((f) => f.code).sort() };
    });
    assert.equal(got.batches.length, 20000, 'every batch id is in the report');
    assert.deepEqual(got.batches, c.batches, 'every batch as the CLI reports it (ids, logs, times, watermarks)');
    assert.deepEqual(got.codes, c.findings.map((f) => f.code).sort(), 'the findings equal the CLI\'s');
    assert.ok(await page.$('[data-view=timeline] svg'), 'the timeline plots the batches');

    // Again, cancelled while the worker reads the history, after the verdict, with a re-diagnosis (another Spark
    // version picked, as the verdict invites) queued behind it: the verdict stays, the page says what is missing.
    n = await runCount(page);
    await page.setInputFiles('#file-input', []);
    await page.setInputFiles('#file-input', zip);
    let clicked = null;
    await watchRun(page, n, async (s) => {
      if (!(s.busy && s.cancel && s.verdict && /files? read of/.test(s.status))) return false;
      await page.selectOption('#spark-version', { index: 2 });
      await page.waitForFunction(() => document.querySelector('#results').dataset.pending === '2');
      clicked = s.status;
      await page.click('#cancel');
      return true;
    });
    assert.ok(clicked, 'Cancel was clicked while the worker read the history');
    assert.equal(await page.$eval('#results', (e) => e.dataset.run), 'partial', `cancelled at: ${clicked}`);
    assert.equal(await page.$eval('#message', (e) => e.dataset.errorKind), 'cancelled');
    assert.equal(await page.$eval('[data-testid=verdict]', (v) => v.dataset.outcome), c.restart.outcome, 'the verdict stays');
    assert.match(await page.$eval('#message', (e) => e.textContent), /older batches were not read/);
    assert.match(await page.$eval('[data-testid=history-pending]', (e) => e.textContent), /not read/);
    await page.selectOption('#spark-version', { index: 0 });
    assert.ok(await page.$eval('#cancel', (b) => b.hidden), 'no Cancel button once the run ended');

    // The page recovers: a fresh worker diagnoses the next input.
    await page.waitForSelector('body[data-status=ready]', { timeout: 60000 });
    const small = path.resolve(repo, '../shared/fixtures/ss-4.3.0-agg-hdfs.zip');
    n = await runCount(page);
    await page.setInputFiles('#file-input', small);
    await watchRun(page, n);
    assert.equal(await page.$eval('#results', (e) => e.dataset.run), 'done');
    assert.equal(await page.$eval('[data-testid=verdict]', (v) => v.dataset.outcome), 'resumes');
    assert.deepEqual(errors, []);
    await page.close();
  });
});
