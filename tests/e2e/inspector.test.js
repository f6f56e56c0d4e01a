// End-to-end tests of the browser inspector in real headless Chromium (playwright-core driving /usr/bin/chromium),
// run with `node --test` (scripts/test.sh builds dist/ and the CLI first; CHECKPOINT_CLI names the CLI binary).
//
// The golden answer for every page result is the CLI's JSON for the same zip (`checkpoint-inspector diagnose <zip>
// --json`): the page and the CLI render the same core, so verdict and finding codes must be equal.
// Screenshots of each state go to test-output/ (gitignored) for a person to look at.

import { test, describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import zlib from 'node:zlib';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { chromium } from 'playwright-core';
import { fmtBytes } from '../../web/js/format.js';

const here = path.dirname(fileURLToPath(import.meta.url));
const repo = path.resolve(here, '../..');
const dist = path.join(repo, 'dist');
const fixturesDir = path.resolve(repo, '../shared/fixtures');
const dstreamDir = path.resolve(repo, '../shared/dstream');
const cli = process.env.CHECKPOINT_CLI
  || ['target/debug/checkpoint-inspector', 'target/release/checkpoint-inspector'].map((p) => path.join(repo, p)).find((p) => fs.existsSync(p))
  || path.join(repo, 'target/debug/checkpoint-inspector');
const out = path.join(repo, 'test-output');
const SUB_PATH = '/some/sub/path/'; // dist must work from any sub-path (relative URLs)

fs.mkdirSync(path.join(out, 'fixtures'), { recursive: true });

const zips = fs.readdirSync(fixturesDir).filter((f) => f.endsWith('.zip')).sort();

/** The CLI's report for a zip (exit 0 or 1; 2 = unreadable input, reported as {unreadable: stderr}). */
function cliReport(zipPath, extra = []) {
  const r = spawnSync(cli, ['diagnose', zipPath, '--json', ...extra], { encoding: 'utf8', maxBuffer: 64 << 20 });
  if (r.status === 2) return { unreadable: r.stderr.trim() };
  assert.ok(r.status === 0 || r.status === 1, `CLI exit ${r.status} for ${zipPath}: ${r.stderr}`);
  return JSON.parse(r.stdout);
}

/** What the CLI report says the page must show, per checkpoint. */
function expected(report) {
  return report.checkpoints.map((c) => ({
    outcome: c.restart.outcome,
    errorClass: c.restart.error_class || '',
    codes: c.findings.map((f) => f.code).sort(),
  }));
}

/** What the page shows, per checkpoint section. */
async function shown(page) {
  return page.$$eval('section.checkpoint', (secs) => secs.map((s) => {
    const v = s.querySelector('[data-testid=verdict]');
    return {
      outcome: v.dataset.outcome,
      errorClass: v.dataset.errorClass,
      codes: [...s.querySelectorAll('[data-finding-code]')].map((f) => f.dataset.findingCode).sort(),
    };
  }));
}

// A minimal static server for dist/ under a sub-path (python's http.server is what scripts/serve.sh uses).
const MIME = { '.html': 'text/html; charset=utf-8', '.js': 'text/javascript', '.wasm': 'application/wasm',
  '.css': 'text/css', '.svg': 'image/svg+xml', '.json': 'application/json', '.zip': 'application/zip' };
function serve() {
  const server = http.createServer((req, res) => {
    const url = new URL(req.url, 'http://x');
    if (!url.pathname.startsWith(SUB_PATH)) { res.writeHead(404).end(); return; }
    let rel = decodeURIComponent(url.pathname.slice(SUB_PATH.length)) || 'index.html';
    const file = path.resolve(dist, rel);
    if (!file.startsWith(dist + path.sep) || !fs.existsSync(file) || fs.statSync(file).isDirectory()) {
      res.writeHead(404).end(); return;
    }
    res.writeHead(200, { 'content-type': MIME[path.extname(file)] || 'application/octet-stream' });
    fs.createReadStream(file).pipe(res);
  });
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve(server)));
}

let browser; let server; let origin; let base;
const requests = []; // every request any page or worker made: {url, phase}
let phase = 'load';

async function newPage(opts = {}) {
  // Service workers are blocked here: this suite checks the page's own requests; offline.test.js tests the worker.
  const context = await browser.newContext({ acceptDownloads: true, viewport: { width: 1280, height: 800 }, serviceWorkers: 'block', ...opts });
  context.on('request', (r) => requests.push({ url: r.url(), phase }));
  const page = await context.newPage();
  const errors = [];
  page.on('pageerror', (e) => errors.push(String(e)));
  page.errors = errors;
  return page;
}

async function open(page, url) {
  phase = 'load';
  await page.goto(url);
  await page.waitForSelector('body[data-status=ready]', { timeout: 30000 });
  await page.waitForFunction(() => document.querySelector('#sample-select').options.length > 1, null, { timeout: 10000 });
  phase = 'after-load';
}

async function runCount(page) {
  return Number(await page.$eval('#results', (e) => e.dataset.runCount || '0'));
}

/** Waits until the page finished one more diagnosis than `before`. */
async function waitRun(page, before) {
  // Settled: at least one more run finished and no request is still in flight (runs can overlap, e.g. a version
  // change while a drop is being diagnosed; the last one wins).
  await page.waitForFunction((n) => {
    const r = document.querySelector('#results');
    return Number(r.dataset.runCount || 0) > n && (r.dataset.pending || '0') === '0' && r.dataset.run !== 'busy';
  }, before, { timeout: 30000 });
}

/** Drops files onto the page like a user does (a DataTransfer with File objects, on the page body). */
async function dropFile(page, name, bytes) {
  const n = await runCount(page);
  const dt = await page.evaluateHandle(([b64, fname]) => {
    const b = Uint8Array.from(atob(b64), (c) => c.charCodeAt(0));
    const d = new DataTransfer();
    d.items.add(new File([b], fname, { type: 'application/zip' }));
    return d;
  }, [Buffer.from(bytes).toString('base64'), name]);
  for (const t of ['dragenter', 'dragover', 'drop']) await page.dispatchEvent('main', t, { dataTransfer: dt });
  await waitRun(page, n);
}

async function shot(page, name, fullPage = true) {
  await page.screenshot({ path: path.join(out, `${name}.png`), fullPage });
}

/** A zip with one deflated entry of zeros named `entry`: ratio far over the inspector's limit (a zip bomb). */
function bombZip(entry = 'bomb.bin') {
  const name = Buffer.from(entry);
  const raw = Buffer.alloc(8 << 20);
  const comp = zlib.deflateRawSync(raw, { level: 9 });
  const crc = zlib.crc32(raw); // the limit check happens on the central directory, before any CRC check
  const local = Buffer.alloc(30); local.writeUInt32LE(0x04034b50, 0); local.writeUInt16LE(20, 4); local.writeUInt16LE(8, 8);
  local.writeUInt32LE(crc >>> 0, 14); local.writeUInt32LE(comp.length, 18); local.writeUInt32LE(raw.length, 22); local.writeUInt16LE(name.length, 26);
  const central = Buffer.alloc(46); central.writeUInt32LE(0x02014b50, 0); central.writeUInt16LE(20, 4); central.writeUInt16LE(20, 6);
  central.writeUInt16LE(8, 10); central.writeUInt32LE(crc >>> 0, 16); central.writeUInt32LE(comp.length, 20); central.writeUInt32LE(raw.length, 24);
  central.writeUInt16LE(name.length, 28);
  const cdOffset = 30 + name.length + comp.length;
  const eocd = Buffer.alloc(22); eocd.writeUInt32LE(0x06054b50, 0); eocd.writeUInt16LE(1, 8); eocd.writeUInt16LE(1, 10);
  eocd.writeUInt32LE(46 + name.length, 12); eocd.writeUInt32LE(cdOffset, 16);
  return Buffer.concat([local, name, comp, central, name, eocd]);
}

/** A stored zip whose one entry is 40 folders deep: over the inspector's path depth limit. */
function deepZip() {
  const name = Buffer.from(Array.from({ length: 40 }, (_, i) => `d${i}`).join('/') + '/metadata');
  const local = Buffer.alloc(30); local.writeUInt32LE(0x04034b50, 0); local.writeUInt16LE(20, 4); local.writeUInt16LE(name.length, 26);
  const central = Buffer.alloc(46); central.writeUInt32LE(0x02014b50, 0); central.writeUInt16LE(20, 4); central.writeUInt16LE(20, 6);
  central.writeUInt16LE(name.length, 28);
  const eocd = Buffer.alloc(22); eocd.writeUInt32LE(0x06054b50, 0); eocd.writeUInt16LE(1, 8); eocd.writeUInt16LE(1, 10);
  eocd.writeUInt32LE(46 + name.length, 12); eocd.writeUInt32LE(30 + name.length, 16);
  return Buffer.concat([local, name, central, name, eocd]);
}

// A one-entry stored zip whose zip64 end record claims 1,000,000,000 entries: over the entry limit, refused from
// the end record before anything is parsed (the whole-archive limit that stops a run).
function entryCountBombZip() {
  const name = Buffer.from('metadata');
  const body = Buffer.from('{}');
  const local = Buffer.alloc(30); local.writeUInt32LE(0x04034b50, 0); local.writeUInt16LE(20, 4);
  local.writeUInt32LE(body.length, 18); local.writeUInt32LE(body.length, 22); local.writeUInt16LE(name.length, 26);
  const central = Buffer.alloc(46); central.writeUInt32LE(0x02014b50, 0); central.writeUInt16LE(20, 4); central.writeUInt16LE(20, 6);
  central.writeUInt32LE(body.length, 20); central.writeUInt32LE(body.length, 24); central.writeUInt16LE(name.length, 28);
  const head = Buffer.concat([local, name, body]);
  const cd = Buffer.concat([central, name]);
  const z64At = head.length + cd.length;
  const z64 = Buffer.alloc(56); z64.writeUInt32LE(0x06064b50, 0); z64.writeBigUInt64LE(44n, 4); z64.writeUInt16LE(45, 12);
  z64.writeUInt16LE(45, 14); z64.writeBigUInt64LE(1000000000n, 24); z64.writeBigUInt64LE(1000000000n, 32);
  z64.writeBigUInt64LE(BigInt(cd.length), 40); z64.writeBigUInt64LE(BigInt(head.length), 48);
  const loc = Buffer.alloc(20); loc.writeUInt32LE(0x07064b50, 0); loc.writeBigUInt64LE(BigInt(z64At), 8); loc.writeUInt32LE(1, 16);
  const eocd = Buffer.alloc(22, 0xff); eocd.writeUInt32LE(0x06054b50, 0); eocd.writeUInt32LE(0, 4); eocd.writeUInt16LE(0, 20);
  return Buffer.concat([head, cd, z64, loc, eocd]);
}

function offOrigin(list) {
  return list.filter((r) => !(r.url.startsWith(origin + '/') || r.url.startsWith('blob:') || r.url.startsWith('data:')));
}

before(async () => {
  assert.ok(fs.existsSync(path.join(dist, 'index.html')), 'dist/ is built (scripts/build-web.sh)');
  assert.ok(fs.existsSync(cli), `the CLI is built: ${cli}`);
  server = await serve();
  origin = `http://127.0.0.1:${server.address().port}`;
  base = `${origin}${SUB_PATH}`;
  browser = await chromium.launch({
    executablePath: process.env.CHROMIUM || '/usr/bin/chromium', headless: true,
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking',
      '--disable-component-update', '--disable-sync', '--no-first-run', '--disable-default-apps'],
  });
});

after(async () => {
  await browser?.close();
  server?.close();
});

describe('hosted build (dist/ served from a sub-path)', () => {
  let page;
  before(async () => {
    page = await newPage();
    await open(page, base);
  });

  test('loads with the wasm worker, the CSP and the privacy note', async () => {
    assert.equal(await page.$eval('body', (b) => b.dataset.status), 'ready');
    const first = await page.$eval('input', (i) => i.type === 'file' && i.id);
    assert.equal(first, 'file-input', 'the first input of the page is the checkpoint picker');
    const csp = await page.$eval('meta[http-equiv=Content-Security-Policy]', (m) => m.content);
    assert.match(csp, /connect-src 'self'/);
    assert.match(csp, /default-src 'none'/);
    assert.match(await page.textContent('#privacy'), /Nothing is uploaded/);
    const loadReqs = requests.filter((r) => r.phase === 'load').map((r) => r.url);
    assert.ok(loadReqs.some((u) => u.endsWith('worker_bg.wasm')), `the worker fetched its wasm: ${loadReqs.join(' ')}`);
    assert.deepEqual(offOrigin(requests), [], 'no request leaves the page origin');
    await shot(page, '01-ready');
  });

  for (const zip of zips) {
    test(`drop ${zip}: verdict and findings equal the CLI's`, async () => {
      const bytes = fs.readFileSync(path.join(fixturesDir, zip));
      const want = cliReport(path.join(fixturesDir, zip));
      await dropFile(page, zip, bytes);
      if (want.unreadable) {
        assert.equal(await page.$eval('#results', (e) => e.dataset.run), 'error');
        assert.ok(await page.isVisible('#message'));
        return;
      }
      assert.equal(await page.$eval('#results', (e) => e.dataset.run), 'done', await page.textContent('#message'));
      const got = await shown(page);
      assert.deepEqual(got, expected(want), `${zip}: page vs CLI`);
      if (want.checkpoints.length === 0) {
        assert.equal(await page.$eval('[data-testid=verdict]', (v) => v.dataset.outcome), 'unknown');
      }
      // Findings are shown most severe first (those explaining a pasted error would come before).
      const rank = { error: 0, warning: 1, info: 2 };
      const perCheckpoint = await page.$$eval('section.checkpoint', (secs) => secs.map((s) => [...s.querySelectorAll('[data-severity]')].map((f) => f.dataset.severity)));
      for (const list of perCheckpoint) {
        for (let i = 1; i < list.length; i++) assert.ok(rank[list[i - 1]] <= rank[list[i]], `${zip}: findings sorted by severity: ${list}`);
      }
      await page.screenshot({ path: path.join(out, 'fixtures', `${zip.replace(/\.zip$/, '')}.png`) });
    });
  }

  test('changing the Spark version re-diagnoses for that version', async () => {
    const zip = 'broken-ss-4.3.0-agg-rocksdb-ckptv2-restarted-on-3.5.9.zip';
    await dropFile(page, zip, fs.readFileSync(path.join(fixturesDir, zip)));
    for (const v of ['3.5.9', '4.3.0']) {
      const n = await runCount(page);
      await page.selectOption('#spark-version', v);
      await waitRun(page, n);
      const want = cliReport(path.join(fixturesDir, zip), ['--spark-version', v]);
      assert.deepEqual(await shown(page), expected(want), `on Spark ${v}`);
      assert.match(await page.textContent('[data-testid=verdict]'), new RegExp(`Spark ${v.replace(/\./g, '\\.')}`));
      assert.match(page.url(), new RegExp(`spark-version=${v}`), 'the link carries the setting');
      if (v === '3.5.9') await shot(page, '02-version-3.5.9');
    }
    const n = await runCount(page);
    await page.selectOption('#spark-version', '');
    await waitRun(page, n);
  });

  test('pasting the error text brings the findings that explain it to the top', async () => {
    const name = 'broken-ss-4.1.4-missing-delta';
    const zip = path.join(fixturesDir, `${name}.zip`);
    const record = JSON.parse(fs.readFileSync(path.join(fixturesDir, `${name}.json`), 'utf8'));
    const errorText = record.restart_outcome.message_head;
    await dropFile(page, `${name}.zip`, fs.readFileSync(zip));
    const n = await runCount(page);
    await page.fill('#error-text', errorText);
    await waitRun(page, n);
    const tmp = path.join(os.tmpdir(), `err-${process.pid}.txt`);
    fs.writeFileSync(tmp, errorText);
    const want = cliReport(zip, ['--error-text', tmp]);
    const explaining = want.checkpoints[0].findings.filter((f) => f.explains_error_text).map((f) => f.code);
    assert.ok(explaining.length > 0, 'the CLI says some finding explains the pasted error');
    const codes = await page.$$eval('[data-finding-code]', (fs) => fs.map((f) => [f.dataset.findingCode, f.dataset.explains === 'true']));
    const top = codes.slice(0, explaining.length);
    assert.deepEqual(top.map(([c]) => c).sort(), [...explaining].sort(), 'explaining findings first');
    assert.ok(top.every(([, e]) => e), 'and marked');
    await shot(page, '03-error-pasted');
    const n2 = await runCount(page);
    await page.fill('#error-text', '');
    await waitRun(page, n2);
  });

  test('the path a file source reads now, typed in its box, gives the CLI\'s verdict (real Spark restarts)', async () => {
    // tools/spark-gen/source_path.py: batch 0 read in-a/; Spark failed the restart on in-b/ (Wrong basePath) and
    // went on with the glob in-[b]. The paths come from the zip's own log.
    const zip = path.join(repo, 'crates/checkpoint-core/tests/data/spark/source-path-changed-4.1.4.zip');
    const log = spawnSync('unzip', ['-p', zip, 'chk/sources/0/0'], { encoding: 'utf8' });
    assert.equal(log.status, 0, log.stderr);
    const file = JSON.parse(log.stdout.split('\n')[1]).path.replace(/^file:\/\//, '');
    const parent = path.dirname(path.dirname(file));
    await dropFile(page, 'source-path-changed-4.1.4.zip', fs.readFileSync(zip));
    for (const [given, outcome] of [[`${parent}/in-b`, 'fails'], [`${parent}/in-[b]`, 'resumes']]) {
      const n = await runCount(page);
      await page.fill('#source-paths', given);
      await waitRun(page, n);
      const want = expected(cliReport(zip, ['--source-path', given]));
      const got = (await shown(page)).filter((c) => c.codes.includes('file-source-path'));
      assert.equal(got.length, 1, `one checkpoint shows the path's finding for ${given}`);
      assert.equal(got[0].outcome, outcome, `${given}: Spark's own outcome`);
      assert.deepEqual(got, want.filter((c) => c.codes.includes('file-source-path')), `${given}: the CLI's verdict and findings`);
    }
    const n = await runCount(page);
    await page.fill('#source-paths', '');
    await waitRun(page, n);
  });

  test('a finding expands from the keyboard to its evidence, why and fix; a small file opens on click', async () => {
    const name = 'broken-ss-4.1.4-missing-delta.zip';
    await dropFile(page, name, fs.readFileSync(path.join(fixturesDir, name)));
    const summaries = await page.$$('details.finding > summary');
    assert.ok(summaries.length > 0);
    const last = summaries[summaries.length - 1];
    const wasOpen = await last.evaluate((s) => s.parentElement.open);
    await last.focus();
    await page.keyboard.press('Enter');
    assert.equal(await last.evaluate((s) => s.parentElement.open), !wasOpen, 'Enter toggles a finding');
    const body = await page.textContent('details.finding[open] .body');
    assert.match(body, /Fix, safest first|Evidence|Why/);
    // Raw file view: the files panel lists every entry; open `metadata`.
    await page.click('details.files > summary');
    const n = await page.$$eval('details.files button.linkish', (b) => b.length);
    assert.ok(n > 0);
    await page.click('details.files button.linkish >> text=/^metadata$/');
    await page.waitForFunction(() => document.querySelector('#file-dialog-body').textContent.length > 0);
    const text = await page.textContent('#file-dialog-body');
    const record = JSON.parse(fs.readFileSync(path.join(fixturesDir, name.replace('.zip', '.json')), 'utf8'));
    assert.ok(text.includes(record.facts.metadata.id), `metadata shows the query id: ${text}`);
    await shot(page, '04-file-view', false);
    await page.click('#file-dialog-close');
  });

  test('the files panel lists every file and its size, names outside ASCII included; paths in findings open', async () => {
    // The fixture re-rooted under a folder named outside ASCII (one character outside the BMP: two UTF-16 units),
    // so the listing's path ends, counted in UTF-16 by the worker, are checked against Python's own listing.
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'listing-'));
    const zip = path.join(dir, 'rerooted.zip');
    const py = `import json, sys, zipfile
src, dst = sys.argv[1], sys.argv[2]
out = []
with zipfile.ZipFile(src) as a, zipfile.ZipFile(dst, 'w', zipfile.ZIP_DEFLATED) as b:
    for i in a.infolist():
        name = 'prüfung-😀-ß/' + i.filename
        b.writestr(name, a.read(i))
        if not i.is_dir():
            out.append([name, i.file_size])
print(json.dumps(out))`;
    const r = spawnSync('python3', ['-c', py, path.join(fixturesDir, 'broken-ss-4.1.4-missing-delta.zip'), zip], { encoding: 'utf8' });
    assert.equal(r.status, 0, r.stderr);
    const want = JSON.parse(r.stdout);
    await dropFile(page, 'rerooted.zip', fs.readFileSync(zip));
    fs.rmSync(dir, { recursive: true, force: true });
    await page.click('details.files > summary');
    await page.waitForFunction((n) => document.querySelectorAll('details.files tbody tr').length === n, want.length);
    const rows = await page.$$eval('details.files tbody tr', (trs) => trs.map((tr) => [...tr.cells].map((c) => c.textContent)));
    const fmt = want.map((w) => fmtBytes(w[1]));
    assert.deepEqual(rows.map((x) => x[0]).sort(), want.map((w) => w[0]).sort(), 'every file, each path exact');
    const sizeOf = new Map(want.map((w, i) => [w[0], fmt[i]]));
    assert.ok(rows.every(([p, s]) => sizeOf.get(p) === s), 'each file with its size');
    // A path named in a finding is a button that shows the file, its size in the title.
    const links = await page.$$eval('details.finding button.linkish[title]', (b) => b.map((x) => x.title));
    assert.ok(links.length > 0, 'a finding names a file of the input');
    for (const t of links) {
      const m = /^Show (.+) \((.+)\)$/.exec(t);
      assert.ok(m && sizeOf.get(m[1]) === m[2], `the finding's file is listed with its size: ${t}`);
    }
    await page.click('details.files > summary');
  });

  test('export Markdown and JSON, copy the summary', async () => {
    const name = 'broken-ss-4.3.0-missing-last-commit.zip';
    const want = cliReport(path.join(fixturesDir, name));
    await dropFile(page, name, fs.readFileSync(path.join(fixturesDir, name)));
    const [dl] = await Promise.all([page.waitForEvent('download'), page.click('#export-md')]);
    assert.equal(dl.suggestedFilename(), 'broken-ss-4.3.0-missing-last-commit-inspection.md');
    const md = fs.readFileSync(await dl.path(), 'utf8');
    fs.writeFileSync(path.join(out, 'export.md'), md);
    assert.ok(md.startsWith(`# Spark checkpoint inspection: ${name}`));
    assert.match(md, /\*\*Verdict on Spark \d+\.\d+\.\d+: will /);
    for (const f of want.checkpoints[0].findings) assert.ok(md.includes(`(\`${f.code}\`)`), `Markdown has ${f.code}`);
    const [dj] = await Promise.all([page.waitForEvent('download'), page.click('#export-json')]);
    const json = JSON.parse(fs.readFileSync(await dj.path(), 'utf8'));
    assert.deepEqual(expected(json), expected(want), 'exported JSON has the CLI verdict and findings');
    assert.deepEqual(json.checkpoints[0].batches, want.checkpoints[0].batches);
    await page.context().grantPermissions(['clipboard-read', 'clipboard-write'], { origin });
    await page.click('#copy-summary');
    await page.waitForFunction(() => document.querySelector('#copy-note').textContent.length > 0);
    const clip = await page.evaluate(() => navigator.clipboard.readText());
    assert.ok(clip.startsWith(`${name}: on Spark `), clip);
  });

  test('a DStream checkpoint shows its files, graph and grouped classes; the allow-list value copies', async () => {
    const names = fs.readdirSync(dstreamDir).filter((f) => f.endsWith('.zip')).sort();
    assert.equal(names.length, 3, `DStream checkpoints: ${names}`);
    for (const name of names) {
      const want = cliReport(path.join(dstreamDir, name));
      await dropFile(page, name, fs.readFileSync(path.join(dstreamDir, name)));
      assert.deepEqual(await shown(page), expected(want), `${name}: page vs CLI`);
      const d = want.checkpoints[0].dstream;
      const files = await page.$$eval('[data-testid=dstream] tr[data-file]', (rows) => rows.map((r) => r.dataset.file));
      assert.deepEqual(files, d.files.map((f) => f.path), `${name}: files in Spark's order`);
      const rows = await page.$$eval('[data-testid=dstream-classes] tr[data-class-name]',
        (trs) => trs.map((r) => [r.dataset.className, r.closest('[data-group]').dataset.group, r.cells[1].textContent]));
      assert.deepEqual(rows.map((r) => r[0]).sort(), d.classes.map((k) => k.name).sort(), `${name}: every class listed`);
      for (const k of d.classes) {
        assert.ok(rows.some(([n, g, uid]) => n === k.name && g === k.group && uid === k.serial_version_uid), `${name}: ${k.name} in ${k.group}`);
      }
      const streams = d.checkpoint.graph.streams.map((s) => s.class.split('.').pop());
      const graphText = await page.textContent('[data-testid=dstream-graph]');
      for (const s of streams) assert.ok(graphText.includes(s), `${name}: graph shows ${s}`);
      assert.equal(await page.textContent('[data-testid=allow-list-value]'), d.allowed_classes_setting);
    }
    // The Scala job's allow-list names its spark-shell classes; the button copies exactly the value.
    const last = 'dstream-3.5.9-scala-caseclass.zip';
    const want = cliReport(path.join(dstreamDir, last));
    await dropFile(page, last, fs.readFileSync(path.join(dstreamDir, last)));
    await page.context().grantPermissions(['clipboard-read', 'clipboard-write'], { origin });
    await page.click('[data-testid=copy-allow-list]');
    await page.waitForFunction(() => document.querySelector('[data-testid=allow-list-note]').textContent.length > 0);
    const clip = await page.evaluate(() => navigator.clipboard.readText());
    assert.equal(clip, want.checkpoints[0].dstream.allowed_classes_setting);
    assert.match(clip, /\$line14\.\$read/);
    await shot(page, '05b-dstream');
  });

  test('a timeline shows the uncommitted tail', async () => {
    const name = 'broken-ss-4.3.0-missing-last-commit.zip';
    await dropFile(page, name, fs.readFileSync(path.join(fixturesDir, name)));
    const notes = await page.textContent('[data-testid=timeline-notes]');
    const record = JSON.parse(fs.readFileSync(path.join(fixturesDir, name.replace('.zip', '.json')), 'utf8'));
    const last = record.facts.last_offset_batch;
    assert.match(notes, new RegExp(`Uncommitted tail: batch ${last}\\b`));
    assert.equal(await page.$$eval('.plot rect.cell-tail', (r) => r.length), 1);
    await shot(page, '05-uncommitted-tail');
  });

  test('a checkpoint zipped with its output folder shows the sink log next to its batches', async () => {
    // Real Spark 4.3.0: a new checkpoint (batch 0 of the real run) beside the real output of batches 0..=3.
    const zipPath = path.join(out, 'sink-ahead.zip');
    const py = `import zipfile,sys
def files(p, pre):
    z = zipfile.ZipFile(p); return [(pre + n, z.read(n)) for n in z.namelist() if not n.endswith('/')]
a = files(sys.argv[1], 'chk/') + files(sys.argv[2], 'out/')
later = lambda n: n.startswith('chk/') and any(n.endswith('/' + b) or n.endswith('/.%s.crc' % b) for b in '123')
with zipfile.ZipFile(sys.argv[3], 'w', zipfile.ZIP_DEFLATED) as z:
    [z.writestr(n, b) for n, b in a if not later(n)]`;
    const r = spawnSync('python3', ['-c', py, path.join(fixturesDir, 'ss-4.3.0-stateless.zip'),
      path.join(fixturesDir, 'ss-4.3.0-stateless.sink-output.zip'), zipPath]);
    assert.equal(r.status, 0, String(r.stderr));
    const cliLogs = cliReport(zipPath).checkpoints.find((c) => c.root === 'chk').sink_logs;
    assert.deepEqual(cliLogs.map((l) => [l.dir, l.skipped_batch_ids]), [['out/_spark_metadata', [1, 2, 3]]]);
    await dropFile(page, 'sink-ahead.zip', fs.readFileSync(zipPath));
    const skipped = await page.$$eval('.plot rect.cell-skipped', (rs) => rs.map((x) => Number(x.dataset.sinkBatch)));
    assert.deepEqual(skipped, [1, 2, 3]);
    assert.equal(await page.$$eval('.plot rect.cell-sink', (rs) => rs.length), 1); // batch 0: in both
    const notes = await page.textContent('[data-testid=timeline-notes]');
    assert.match(notes, /Sink log out\/_spark_metadata: batches 0\.\.3/);
    assert.match(notes, /The restart skips sink batches 1\.\.3 without writing/);
    assert.doesNotMatch(notes, /Gap:/); // sink batches beyond the checkpoint are not holes in its logs
    await shot(page, '05b-sink-log-ahead');
  });

  test('the state files matrix shows the versions the core lists, the missing delta named', async () => {
    // Real Spark 4.1.4: state/0/1/7.delta (and snapshots 9, 12 of partition 1) deleted.
    const name = 'broken-ss-4.1.4-missing-delta.zip';
    await dropFile(page, name, fs.readFileSync(path.join(fixturesDir, name)));
    const cells = await page.$$eval('.state-matrix tr', (trs) => trs.map((tr) => [...tr.querySelectorAll('td')].map((td) => td.textContent)));
    const row = cells.find((r) => r[0] === '0/default');
    assert.ok(row, JSON.stringify(cells));
    assert.equal(row[1], '1–12 · 4 snap');
    assert.equal(row[2], '1–12 · 2 snap · no 7');
  });

  test('a sample loads from the menu', async () => {
    const n = await runCount(page);
    const samples = await page.$$eval('#sample-select option', (o) => o.map((x) => x.value).filter(Boolean));
    assert.ok(samples.length >= 4, `samples: ${samples}`);
    const sample = samples.find((s) => s.startsWith('broken')) || samples[0];
    phase = 'sample';
    await page.selectOption('#sample-select', sample);
    await waitRun(page, n);
    const want = cliReport(path.join(repo, 'web/samples', sample));
    assert.deepEqual(await shown(page), expected(want));
    const sampleReqs = requests.filter((r) => r.phase === 'sample');
    assert.ok(sampleReqs.every((r) => r.url === `${base}web/samples/${sample}`), `only the sample file: ${JSON.stringify(sampleReqs)}`);
    phase = 'after-load';
    await shot(page, '06-sample');
  });

  test('clear messages for a file that is not a zip, is empty, or is over a limit', async () => {
    for (const [name, bytes, kind, re] of [
      ['notes.txt', Buffer.from('hello, this is not a zip'), 'not-a-zip', /notes\.txt is not a zip archive: it is text .*zip -r checkpoint\.zip/],
      ['empty.zip', Buffer.alloc(0), 'empty', /empty\.zip is empty/],
      ['many.zip', entryCountBombZip(), 'over-limit', /number of entries is 1000000000, over the limit of 400000/],
    ]) {
      await dropFile(page, name, bytes);
      assert.equal(await page.$eval('#results', (e) => e.dataset.run), 'error', name);
      assert.equal(await page.$eval('#message', (e) => e.dataset.errorKind), kind, name);
      assert.match(await page.textContent('#message'), re);
      assert.equal(await page.$$eval('[data-testid=verdict]', (v) => v.length), 0);
      await shot(page, `07-error-${kind}`, false);
    }
  });

  // One entry deeper than the path depth limit is named as not verified, the rest of the zip diagnosed (it
  // refused the whole zip before).
  test('an entry deeper than the path depth limit is named, the rest diagnosed', async () => {
    await dropFile(page, 'deep.zip', deepZip());
    assert.equal(await page.$eval('#results', (e) => e.dataset.run), 'done', await page.textContent('#message'));
    const [cp] = await shown(page);
    assert.ok(cp.codes.includes('file-not-verified'), JSON.stringify(cp.codes));
    assert.match(await page.textContent('#results'), /not verified/);
  });

  // Issue 12: one bomb entry no longer refuses the whole zip: it is listed, not inflated, and named as not
  // verified (a limit of the inspector, not damage), the rest is diagnosed, and the tab lives on.
  test('a zip bomb entry is named as not verified, the rest diagnosed, the tab alive', async () => {
    await dropFile(page, 'bomb.zip', bombZip('offsets/0'));
    assert.equal(await page.$eval('#results', (e) => e.dataset.run), 'done', await page.textContent('#message'));
    const [cp] = await shown(page);
    assert.equal(cp.outcome, 'fails', 'no metadata file: Spark 4.3 fails before it reads the offsets');
    assert.ok(cp.codes.includes('file-not-verified'), JSON.stringify(cp.codes));
    assert.match(await page.textContent('section.checkpoint'), /offsets\/0/);
    assert.equal(await page.evaluate(() => 1 + 1), 2, 'the page still runs script');
    await shot(page, '07-bomb-not-verified', false);
  });

  // Issue 12: a state folder named by a huge number (state/111111111111, state/0/4000000000) is answered at once
  // with a finding, never a walk over every id below it (which took 12-19 GB natively).
  test('huge-number state folders give findings, not a crashed tab', async () => {
    const z = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'huge-')), 'huge.zip');
    const py = 'import sys,zipfile\nsrc=zipfile.ZipFile(sys.argv[2])\nz=zipfile.ZipFile(sys.argv[1],"w",zipfile.ZIP_DEFLATED)\nfor n in src.namelist(): z.writestr(n, src.read(n))\nz.writestr("state/0/4000000000/1.delta","x"); z.writestr("state/111111111111/0/1.delta","x")\nz.close()';
    const made = spawnSync('python3', ['-c', py, z, path.join(fixturesDir, 'ss-4.3.0-agg-hdfs.zip')]);
    assert.equal(made.status, 0, String(made.stderr));
    await dropFile(page, 'huge.zip', fs.readFileSync(z));
    assert.equal(await page.$eval('#results', (e) => e.dataset.run), 'done', await page.textContent('#message'));
    const [cp] = await shown(page);
    assert.ok(cp.codes.includes('state-operator-missing') && cp.codes.includes('state-partition-extra'), JSON.stringify(cp.codes));
    assert.match(await page.textContent('section.checkpoint'), /111111111110 ids/);
    assert.equal(await page.evaluate(() => 1 + 1), 2, 'the page still runs script');
  });

  // Issue 12: a Cancel button while a run is busy, and a watchdog that stops a worker that stops answering; the
  // page says so and diagnoses the next input.
  test('Cancel stops a long diagnosis; the watchdog stops a silent worker; the page recovers', async () => {
    // A stopped worker is replaced by a fresh one, which loads the page's own worker files again.
    phase = 'worker-restart';
    const big = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'roots-')), 'roots.zip');
    // 1200 roots of 41 small files each: a diagnosis long enough to be cancelled while it runs.
    const py = 'import sys,zipfile\nz=zipfile.ZipFile(sys.argv[1],"w")\nfor i in range(1200):\n  z.writestr(f"r{i:04}/metadata","{\\"id\\":\\"a\\"}")\n  for b in range(20):\n    z.writestr(f"r{i:04}/offsets/{b}","v1\\n{}\\n{}"); z.writestr(f"r{i:04}/commits/{b}","v1\\n{}")\nz.close()';
    const made = spawnSync('python3', ['-c', py, big]);
    assert.equal(made.status, 0, String(made.stderr));
    let n = await runCount(page);
    const dt = await page.evaluateHandle((b64) => {
      const b = Uint8Array.from(atob(b64), (c) => c.charCodeAt(0));
      const d = new DataTransfer();
      d.items.add(new File([b], 'roots.zip', { type: 'application/zip' }));
      return d;
    }, fs.readFileSync(big).toString('base64'));
    for (const t of ['dragenter', 'dragover', 'drop']) await page.dispatchEvent('main', t, { dataTransfer: dt });
    await page.waitForFunction(() => document.querySelector('#results').dataset.pending === '1' && !document.querySelector('#cancel').hidden);
    await page.click('#cancel');
    await waitRun(page, n);
    assert.equal(await page.$eval('#results', (e) => e.dataset.run), 'error');
    assert.equal(await page.$eval('#message', (e) => e.dataset.errorKind), 'cancelled');
    assert.match(await page.textContent('#message'), /Cancelled/);
    assert.ok(await page.$eval('#cancel', (b) => b.hidden), 'no Cancel button once the run ended');

    // A worker that stops answering (its messages dropped): the watchdog stops it and says so.
    await page.evaluate(() => { window.TC_WATCHDOG_MS = 300; window.TC_WORKER_SILENT = true; });
    await dropFile(page, 'bomb.zip', bombZip('offsets/0'));
    assert.equal(await page.$eval('#message', (e) => e.dataset.errorKind), 'stuck');
    assert.match(await page.textContent('#message'), /did not answer .* and was stopped/);
    await page.evaluate(() => { delete window.TC_WATCHDOG_MS; delete window.TC_WORKER_SILENT; });

    n = await runCount(page);
    await dropFile(page, 'bomb.zip', bombZip('offsets/0'));
    assert.equal(await page.$eval('#results', (e) => e.dataset.run), 'done', 'a fresh worker diagnoses the next input');
    assert.ok(requests.filter((r) => r.phase === 'worker-restart').every((r) => r.url.startsWith(`${base}worker`) || r.url.startsWith('blob:') || r.url.startsWith('data:')),
      'only the worker files are fetched again');
    phase = 'after-load';
    await shot(page, '07-after-cancel-and-watchdog', false);
  });

  test('no request left the origin, and none at all after load (except a chosen sample)', async () => {
    assert.deepEqual(offOrigin(requests), []);
    const after = requests.filter((r) => r.phase === 'after-load' && !r.url.startsWith('blob:') && !r.url.startsWith('data:'));
    assert.deepEqual(after, [], 'dropping and diagnosing makes no network request');
    assert.deepEqual(page.errors, [], 'no uncaught page errors');
  });

  // The worker's warm-up (crates/checkpoint-web/src/warm_up.rs): the drops above came during it (each ends it);
  // here a page left alone runs every round, without a request, and then diagnoses as the CLI does.
  test('a page left alone warms its worker up, then diagnoses as the CLI does', async () => {
    const fresh = await newPage();
    await open(fresh, base);
    await fresh.waitForSelector('body[data-warm]', { timeout: 30000 });
    assert.equal(await fresh.$eval('body', (b) => b.dataset.warm), '24', 'every warm-up round ran');
    assert.equal(await fresh.$eval('#results', (e) => e.dataset.runCount || '0'), '0', 'nothing was shown');
    const zip = 'broken-ss-4.3.0-missing-delta-join.zip';
    await dropFile(fresh, zip, fs.readFileSync(path.join(fixturesDir, zip)));
    assert.deepEqual(await shown(fresh), expected(cliReport(path.join(fixturesDir, zip))));
    assert.deepEqual(fresh.errors, []);
    await fresh.context().close();
  });
});

describe('folders', () => {
  let page; let dir;
  const name = 'broken-ss-4.1.4-missing-delta';
  before(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'chk-'));
    const target = path.join(dir, 'my-checkpoint');
    const r = spawnSync('python3', ['-c', 'import sys,zipfile; zipfile.ZipFile(sys.argv[1]).extractall(sys.argv[2])',
      path.join(fixturesDir, `${name}.zip`), target]);
    assert.equal(r.status, 0, String(r.stderr));
    page = await newPage();
    await open(page, base);
  });
  after(() => fs.rmSync(dir, { recursive: true, force: true }));

  test('drop a folder (File System entries API): same diagnosis as its zip', async () => {
    const files = [];
    const walk = (d, rel) => {
      for (const e of fs.readdirSync(d, { withFileTypes: true })) {
        const p = path.join(d, e.name); const r = rel ? `${rel}/${e.name}` : e.name;
        if (e.isDirectory()) walk(p, r); else files.push([r, fs.readFileSync(p).toString('base64')]);
      }
    };
    walk(path.join(dir, 'my-checkpoint'), '');
    const n = await runCount(page);
    // Chromium cannot synthesise a directory drag, so the drop carries a FileSystemDirectoryEntry-shaped tree of real
    // File objects; the page walks it with createReader/readEntries/file exactly as it walks a real dropped folder.
    await page.evaluate(([list]) => {
      const mkDir = (nm) => ({ isDirectory: true, isFile: false, name: nm, children: new Map() });
      const root = mkDir('my-checkpoint');
      for (const [rel, b64] of list) {
        const parts = rel.split('/'); let d = root;
        for (const p of parts.slice(0, -1)) { if (!d.children.has(p)) d.children.set(p, mkDir(p)); d = d.children.get(p); }
        const file = new File([Uint8Array.from(atob(b64), (c) => c.charCodeAt(0))], parts.at(-1));
        d.children.set(parts.at(-1), { isDirectory: false, isFile: true, name: parts.at(-1), file: (ok) => ok(file) });
      }
      const wire = (d) => {
        if (!d.isDirectory) return d;
        const kids = [...d.children.values()].map(wire);
        d.createReader = () => { let done = false; return { readEntries: (ok) => { const r = done ? [] : kids; done = true; setTimeout(() => ok(r)); } }; };
        return d;
      };
      wire(root);
      const ev = new Event('drop', { bubbles: true, cancelable: true });
      Object.defineProperty(ev, 'dataTransfer', { value: { items: [{ kind: 'file', webkitGetAsEntry: () => root }], files: [] } });
      document.querySelector('main').dispatchEvent(ev);
    }, [files]);
    await waitRun(page, n);
    const want = cliReport(path.join(fixturesDir, `${name}.zip`));
    assert.deepEqual(await shown(page), expected(want));
    assert.match(await page.textContent('#status-text'), /my-checkpoint/);
    await shot(page, '08-folder-drop');
  });

  test('pick a folder (<input webkitdirectory>): same diagnosis as its zip', async () => {
    const n = await runCount(page);
    await page.setInputFiles('#folder-input', path.join(dir, 'my-checkpoint'));
    await waitRun(page, n);
    const want = cliReport(path.join(fixturesDir, `${name}.zip`));
    assert.deepEqual(await shown(page), expected(want));
  });

  test('pick a zip with the first file input', async () => {
    const n = await runCount(page);
    const zip = path.join(fixturesDir, 'ss-4.3.0-join.zip');
    await page.setInputFiles('input[type=file] >> nth=0', zip);
    await waitRun(page, n);
    assert.deepEqual(await shown(page), expected(cliReport(zip)));
  });
});

describe('a big zip', () => {
  let dir;
  before(() => { dir = fs.mkdtempSync(path.join(os.tmpdir(), 'big-')); });
  after(() => fs.rmSync(dir, { recursive: true, force: true }));

  test('is read lazily in the worker while the page stays responsive', async () => {
    // A real checkpoint plus 160 MiB of stored side files (like big state files): the page must not read it whole.
    const big = path.join(dir, 'big-checkpoint.zip');
    const src = path.join(fixturesDir, 'ss-4.3.0-agg-hdfs.zip');
    const py = `import sys, zipfile
src, dst = sys.argv[1], sys.argv[2]
blob = bytes(range(256)) * 4096
with zipfile.ZipFile(src) as zi, zipfile.ZipFile(dst, 'w', zipfile.ZIP_STORED) as zo:
    for info in zi.infolist():
        zo.writestr(info, zi.read(info.filename))
    for i in range(160):
        zo.writestr(f'exports/part-{i:05d}.bin', blob)
`;
    const r = spawnSync('python3', ['-c', py, src, big]);
    assert.equal(r.status, 0, String(r.stderr));
    const size = fs.statSync(big).size;
    assert.ok(size > 160 * 1024 * 1024);
    const page = await newPage();
    await open(page, base);
    await page.evaluate(() => { window.__ticks = 0; setInterval(() => { window.__ticks += 1; }, 10); });
    const n = await runCount(page);
    await page.setInputFiles('#file-input', big); // by path: Playwright does not copy the file
    await waitRun(page, n);
    const want = cliReport(big);
    assert.deepEqual(await shown(page), expected(want));
    const reading = await page.evaluate(() => window.checkpointInspector.reading);
    assert.ok(reading.bytes < size / 20, `read ${reading.bytes} of ${size} bytes`);
    assert.ok(await page.evaluate(() => window.__ticks) > 0, 'the main thread kept running');
    await shot(page, '11-big-zip', false);
  });
});

describe('settings in the link, narrow and dark', () => {
  test('?spark-version=4.1.4 preselects the version', async () => {
    const page = await newPage();
    await open(page, `${base}?spark-version=4.1.4`);
    assert.equal(await page.$eval('#spark-version', (s) => s.value), '4.1.4');
    const zip = 'broken-ss-4.3.0-agg-hdfs-restarted-on-3.5.9.zip';
    await dropFile(page, zip, fs.readFileSync(path.join(fixturesDir, zip)));
    const want = cliReport(path.join(fixturesDir, zip), ['--spark-version', '4.1.4']);
    assert.deepEqual(await shown(page), expected(want));
    assert.match(await page.textContent('[data-testid=verdict]'), /Spark 4\.1\.4/);
  });

  test('readable on a narrow window and in dark mode', async () => {
    for (const [label, opts] of [['narrow', { viewport: { width: 390, height: 844 } }], ['dark', { colorScheme: 'dark' }]]) {
      const page = await newPage(opts);
      await open(page, base);
      const zip = 'broken-ss-4.1.4-missing-delta.zip';
      await dropFile(page, zip, fs.readFileSync(path.join(fixturesDir, zip)));
      const overflow = await page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);
      assert.ok(overflow <= 1, `${label}: no horizontal page scroll (${overflow}px)`);
      await shot(page, `09-${label}`);
      if (label === 'dark') {
        const bg = await page.evaluate(() => getComputedStyle(document.body).backgroundColor);
        assert.equal(bg, 'rgb(13, 17, 23)', 'dark background from prefers-color-scheme');
      }
    }
  });
});

// ---------------------------------------------------------------------------------------------------------------
// The Delta source table's log: a second drop target; the page's verdict equals the CLI's with --delta-log.
const casesDir = path.resolve(repo, '../shared/cases');

/** Drops a file on one element (the Delta log box) like a user does. */
async function dropOn(page, selector, name, bytes) {
  const n = await runCount(page);
  const dt = await page.evaluateHandle(([b64, fname]) => {
    const b = Uint8Array.from(atob(b64), (c) => c.charCodeAt(0));
    const d = new DataTransfer();
    d.items.add(new File([b], fname, { type: 'application/zip' }));
    return d;
  }, [Buffer.from(bytes).toString('base64'), name]);
  for (const t of ['dragenter', 'dragover', 'drop']) await page.dispatchEvent(selector, t, { dataTransfer: dt });
  await waitRun(page, n);
}

describe('Delta source table log', () => {
  const cases = ['case-13-delta-log-expired', 'case-27-delta-table-recreated', 'case-28-delta-schema-drop-after-add'];
  for (const c of cases) {
    test(`${c}: drop the checkpoint, then its _delta_log on the Delta box: the CLI's verdict`, async () => {
      const page = await newPage();
      await open(page, base);
      const zip = path.join(casesDir, `${c}.zip`);
      const log = path.join(casesDir, `${c}.delta_log.zip`);
      await dropFile(page, `${c}.zip`, fs.readFileSync(zip));
      const without = await shown(page);
      assert.deepEqual(without, expected(cliReport(zip)), 'without the log: the CLI without --delta-log');
      await dropOn(page, '#delta-drop', `${c}.delta_log.zip`, fs.readFileSync(log));
      const got = await shown(page);
      assert.deepEqual(got, expected(cliReport(zip, ['--delta-log', log])), 'with the log: the CLI with --delta-log');
      assert.equal(got[0].outcome, 'fails');
      assert.match(await page.$eval('#delta-log-status', (e) => e.textContent), /is used for the Delta sources/);
      assert.deepEqual(page.errors, []);
      await shot(page, `10-delta-${c}`);
    });
  }

  test('the log first, then the checkpoint; narrow and dark; the countdown without a log', async () => {
    const c = 'case-13-delta-log-expired';
    for (const [label, opts] of [['wide-light', {}], ['narrow-dark', { viewport: { width: 390, height: 844 }, colorScheme: 'dark' }]]) {
      const page = await newPage(opts);
      await open(page, base);
      // Before any checkpoint: the log is read and kept.
      await page.setInputFiles('#delta-log-input', path.join(casesDir, `${c}.delta_log.zip`));
      await page.waitForFunction(() => /Delta log read: table 60ce0cd1/.test(document.querySelector('#delta-log-status').textContent));
      await dropFile(page, `${c}.zip`, fs.readFileSync(path.join(casesDir, `${c}.zip`)));
      const got = await shown(page);
      assert.deepEqual(got, expected(cliReport(path.join(casesDir, `${c}.zip`), ['--delta-log', path.join(casesDir, `${c}.delta_log.zip`)])));
      assert.ok(got[0].codes.includes('delta-version-expired'));
      const overflow = await page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);
      assert.ok(overflow <= 1, `${label}: no horizontal page scroll (${overflow}px)`);
      await shot(page, `11-delta-${label}`);
    }
    // Without the log: the retention countdown is a finding, as in the CLI.
    const page = await newPage();
    await open(page, base);
    await dropFile(page, `${c}.zip`, fs.readFileSync(path.join(casesDir, `${c}.zip`)));
    assert.ok((await shown(page))[0].codes.includes('delta-retention-countdown'));
  });
});

// ---------------------------------------------------------------------------------------------------------------
// The State tab: golden row counts from Spark's own statestore reader output (<fixture>.state.jsonl).
const stateFixtures = fs.readdirSync(fixturesDir).filter((f) => f.endsWith('.state.jsonl')).sort()
  .map((f) => f.replace(/\.state\.jsonl$/, '')).filter((n) => fs.existsSync(path.join(fixturesDir, `${n}.zip`)));

/** Spark's rows of operator 0: store `default` (or its first state variable), else the first store Spark read. */
function goldenGroup(name) {
  const rows = fs.readFileSync(path.join(fixturesDir, `${name}.state.jsonl`), 'utf8').split('\n').filter((l) => l.trim()).map((l) => JSON.parse(l));
  const op0 = rows.filter((r) => (r.operatorId ?? 0) === 0);
  const store = op0.some((r) => (r.storeName || 'default') === 'default') ? 'default' : (op0[0].storeName || 'default');
  const inStore = op0.filter((r) => (r.storeName || 'default') === store);
  const stateVar = inStore.find((r) => r.stateVarName)?.stateVarName || null;
  return { store, stateVar, rows: inStore.filter((r) => (r.stateVarName || null) === stateVar) };
}

/** A leaf of a key that reads the same in Spark's JSON and ours: a non-timestamp string or an integer. */
function keyLeaf(v) {
  if (v && typeof v === 'object') {
    for (const x of Object.values(v)) { const l = keyLeaf(x); if (l !== null) return l; }
    return null;
  }
  if (typeof v === 'string' && v && !/^\d{4}-\d\d-\d\dT/.test(v)) return v;
  if (Number.isInteger(v)) return String(v);
  return null;
}

/** Waits until the state panel has no request in flight and shows rows or an error. */
async function stateSettled(page) {
  await page.waitForFunction(() => {
    const p = document.querySelector('#panel-state');
    return p && (p.dataset.pending || '0') === '0' && (p.dataset.rows === 'ready' || p.dataset.rows === 'error' || p.dataset.state === 'error' || p.dataset.state === 'empty');
  }, null, { timeout: 30000 });
}

async function openStateTab(page) {
  await page.click('[data-testid=state-tab]');
  await stateSettled(page);
}

/** Picks the store (or state variable) in the store picker by its label. */
async function pickStore(page, store, stateVar) {
  const options = await page.$$eval('#state-store option', (os) => os.map((o) => ({ value: o.value, label: o.textContent })));
  const want = stateVar ? `${store} · state variable ${stateVar}` : `${store} (`;
  const o = options.find((x) => x.label.startsWith(want));
  assert.ok(o, `store picker offers ${want}: ${options.map((x) => x.label).join(' | ')}`);
  const before = await page.$eval('#state-store', (s) => s.value);
  if (before !== o.value) {
    await page.selectOption('#state-store', o.value);
    await stateSettled(page);
  }
}

async function rowsShown(page) {
  return page.$eval('[data-testid=state-rows]', (t) => ({
    rowCount: Number(t.dataset.rowCount), total: Number(t.dataset.totalRows), all: Number(t.dataset.allRows),
    partitions: [...t.querySelectorAll('tbody tr')].map((r) => r.dataset.partition),
  }));
}

describe('state browser', () => {
  let page;
  before(async () => {
    page = await newPage();
    await open(page, base);
    fs.mkdirSync(path.join(out, 'state'), { recursive: true });
  });

  test('fixtures with Spark statestore output exist', () => {
    assert.ok(stateFixtures.length >= 10, `found ${stateFixtures.length}`);
  });

  for (const name of stateFixtures) {
    test(`${name}: the State tab shows Spark's row count; search narrows it`, async () => {
      const g = goldenGroup(name);
      await dropFile(page, `${name}.zip`, fs.readFileSync(path.join(fixturesDir, `${name}.zip`)));
      // The diagnosis alone decodes no state: the state panel is empty until the tab is opened.
      assert.equal(await page.$eval('#panel-state', (p) => p.childElementCount), 0, 'no state work before the tab is opened');
      await openStateTab(page);
      await pickStore(page, g.store, g.stateVar);
      const err = await page.$('[data-testid=state-error]');
      assert.equal(err, null, err ? await err.textContent() : '');
      const got = await rowsShown(page);
      assert.equal(got.total, g.rows.length, `${name}: rows of op 0 ${g.store} ${g.stateVar || ''}`);
      assert.equal(got.rowCount, Math.min(g.rows.length, 100));
      const wantParts = g.rows.map((r) => String(r.partition_id)).sort();
      assert.deepEqual([...got.partitions].sort(), wantParts, `${name}: partition of every row`);
      assert.ok(await page.isVisible('[data-testid=state-partition-plot]'), 'rows/bytes per partition plot');
      assert.ok(await page.isVisible('[data-testid=state-version-plot]'), 'size by version plot');
      assert.ok((await page.$$('[data-testid=state-schemas] .schema-tree li')).length > 0, 'schema trees');
      await page.screenshot({ path: path.join(out, 'state', `${name}.png`), fullPage: true });
      // Search by a leaf of one of Spark's keys: exactly the rows whose key holds it.
      const needle = keyLeaf(g.rows[Math.floor(g.rows.length / 2)].key);
      assert.ok(needle !== null, 'a searchable key leaf');
      const expectCount = g.rows.filter((r) => JSON.stringify(r.key).toLowerCase().includes(needle.toLowerCase())).length;
      await page.fill('#state-search', needle);
      await page.waitForFunction((n) => Number(document.querySelector('[data-testid=state-rows]')?.dataset.totalRows) === n
        && (document.querySelector('#panel-state').dataset.pending || '0') === '0', expectCount, { timeout: 15000 });
      const narrowed = await rowsShown(page);
      assert.equal(narrowed.total, expectCount);
      assert.equal(narrowed.all, g.rows.length, 'the unfiltered count stays');
      if (expectCount < g.rows.length) assert.ok(narrowed.total < got.total, 'search narrows the rows');
      await page.fill('#state-search', '');
      await page.waitForFunction((n) => Number(document.querySelector('[data-testid=state-rows]')?.dataset.totalRows) === n, g.rows.length);
      await page.click('[data-testid=diagnosis-tab]');
    });
  }

  test('paging with the keyboard; a partition filter', async () => {
    const name = stateFixtures.find((n) => goldenGroup(n).rows.length > 10) || stateFixtures[0];
    const g = goldenGroup(name);
    await dropFile(page, `${name}.zip`, fs.readFileSync(path.join(fixturesDir, `${name}.zip`)));
    await openStateTab(page);
    await pickStore(page, g.store, g.stateVar);
    await page.selectOption('#state-page-size', '10');
    await stateSettled(page);
    let r = await rowsShown(page);
    assert.equal(r.rowCount, Math.min(10, g.rows.length));
    assert.equal(r.total, g.rows.length);
    if (g.rows.length > 10) {
      await page.focus('.state-table');
      await page.keyboard.press('PageDown');
      await page.waitForFunction(() => /^Page 2 /.test(document.querySelector('[data-testid=state-page]').textContent));
      await stateSettled(page);
      r = await rowsShown(page);
      assert.equal(r.rowCount, g.rows.length - 10 > 10 ? 10 : g.rows.length - 10, 'second page');
      assert.equal(await page.evaluate(() => document.activeElement.classList.contains('state-table')), true, 'focus stays on the table');
      await page.keyboard.press('PageUp');
      await page.waitForFunction(() => /^Page 1 /.test(document.querySelector('[data-testid=state-page]').textContent));
    }
    const p = g.rows[0].partition_id;
    await page.selectOption('#state-partition', String(p));
    await stateSettled(page);
    await page.waitForFunction((pp) => [...document.querySelectorAll('[data-testid=state-rows] tbody tr')].every((t) => t.dataset.partition === String(pp)), p);
    r = await rowsShown(page);
    assert.equal(r.total, g.rows.filter((x) => x.partition_id === p).length, `rows of partition ${p}`);
    await page.click('[data-testid=diagnosis-tab]');
  });

  test('a state file that does not decode is shown with its file and offset', async () => {
    // Fixtures whose state the CLI cannot read (same core): the page shows the same file, not a blank table.
    let checked = 0;
    for (const zip of zips.filter((z) => z.startsWith('broken-') && /corrupt-state|missing-delta/.test(z))) {
      const r = spawnSync(cli, ['state', path.join(fixturesDir, zip), '--json'], { encoding: 'utf8', maxBuffer: 64 << 20 });
      if (r.status === 0) continue;
      const m = /checkpoint-inspector: ([^\s:]+?)(?:!\/[^\s:]*)?(?: \(byte (\d+)\))?:/.exec(r.stderr);
      if (!m) continue;
      await dropFile(page, zip, fs.readFileSync(path.join(fixturesDir, zip)));
      await openStateTab(page);
      // The CLI read operator 0's `default` store (its defaults); compare only where the page offers that store.
      const labels = await page.$$eval('#state-store option', (os) => os.map((o) => o.textContent));
      if (!labels.some((l) => l.startsWith('default ('))) { await page.click('[data-testid=diagnosis-tab]'); continue; }
      await pickStore(page, 'default', null);
      const box = await page.$('[data-testid=state-error]');
      assert.ok(box, `${zip}: an error box`);
      const text = await box.textContent();
      assert.ok(text.includes(m[1]), `${zip}: names ${m[1]}: ${text}`);
      if (m[2]) assert.match(text, new RegExp(`byte ${m[2]}`), `${zip}: the byte offset`);
      if (checked === 0) await page.screenshot({ path: path.join(out, 'state', `error-${zip.replace(/\.zip$/, '')}.png`), fullPage: true });
      checked += 1;
      await page.click('[data-testid=diagnosis-tab]');
    }
    assert.ok(checked >= 2, `checked ${checked} broken fixtures`);
  });

  // The Changes view (Spark's readChangeFeed): Spark 4.3.0's own answers for the same options, the core's
  // goldens (tools/spark-gen/state_change_feed.py). HDFS, RocksDB with changelog checkpointing, and RocksDB without
  // (where Spark itself refuses the change feed).
  const changeAnswers = path.join(repo, 'crates/checkpoint-core/tests/data/spark/state-change-feed');
  /** Spark's answer ({rows} or {error_class}) for readChangeFeed of op 0 `default` over start..end (end undefined:
   *  Spark's default) or, with `opts`, for exactly those options. */
  function sparkChangeFeed(name, start, end, opts) {
    const want = opts || { changeStartBatchId: String(start), operatorId: '0', readChangeFeed: 'true', storeName: 'default',
      ...(end === undefined ? {} : { changeEndBatchId: String(end) }) };
    const sorted = (o) => JSON.stringify(Object.keys(o).sort().map((k) => [k, o[k]]));
    const cases = fs.readFileSync(path.join(changeAnswers, `${name}.cases.jsonl`), 'utf8').split('\n').filter((l) => l.trim()).map((l) => JSON.parse(l));
    const c = cases.find((x) => sorted(x.options) === sorted(want));
    assert.ok(c, `${name}: Spark answered ${JSON.stringify(want)}`);
    return c;
  }
  /** The last committed batch of a fixture, from its zip's own listing (commits/<n>). */
  function lastCommitted(name) {
    const py = 'import re,sys,zipfile\nprint(max(int(m.group(1)) for n in zipfile.ZipFile(sys.argv[1]).namelist() for m in [re.fullmatch(r"(?:.*/)?commits/(\\d+)", n)] if m))';
    const r = spawnSync('python3', ['-c', py, path.join(fixturesDir, `${name}.zip`)], { encoding: 'utf8' });
    assert.equal(r.status, 0, r.stderr);
    return Number(r.stdout.trim());
  }
  async function changeRowsShown(page) {
    return page.$$eval('[data-testid=state-rows] tbody tr', (trs) => trs.map((tr) => {
      const td = [...tr.querySelectorAll('td')];
      return { batch: Number(tr.dataset.batch), type: tr.dataset.changeType, partition: Number(tr.dataset.partition),
        typeText: td[1].textContent, key: td[3].textContent, value: td[4].textContent };
    }));
  }
  /** Spark's rows against the page's: same count, and each of Spark's rows matched by batch, change type, partition
   *  and the text of its key. */
  function assertSameChanges(shownRows, spark, what) {
    assert.equal(shownRows.length, spark.length, `${what}: rows`);
    const unused = [...shownRows];
    for (const r of spark) {
      const leaf = keyLeaf(r.key);
      const i = unused.findIndex((x) => x.batch === r.batch_id && x.type === r.change_type && x.partition === r.partition_id
        && (leaf === null || x.key.includes(leaf)));
      assert.ok(i >= 0, `${what}: Spark's row ${JSON.stringify(r)} is shown`);
      unused.splice(i, 1);
    }
  }
  async function setChangeRange(page, start, end) {
    for (const [id, v] of [['#state-change-start', start], ['#state-change-end', end]]) {
      await page.fill(id, String(v));
      await page.press(id, 'Tab');
    }
    await stateSettled(page);
  }

  for (const name of ['ss-4.3.0-agg-hdfs', 'ss-4.3.0-agg-rocksdb-changelog', 'ss-4.3.0-agg-rocksdb']) {
    test(`${name}: Changes shows Spark's change feed of the last committed batch and of a range; a wrong range shows Spark's error class`, async () => {
      await dropFile(page, `${name}.zip`, fs.readFileSync(path.join(fixturesDir, `${name}.zip`)));
      await openStateTab(page);
      await pickStore(page, 'default', null);
      // The toggle by keyboard: arrow keys move between the two radio buttons.
      await page.focus('#state-mode-state');
      await page.keyboard.press('ArrowRight');
      await page.waitForFunction(() => document.querySelector('#panel-state').dataset.mode === 'changes');
      await stateSettled(page);
      assert.equal(await page.$eval('#state-mode-changes', (i) => i.checked && document.activeElement === i), true, 'Changes checked, focus kept');
      const last = lastCommitted(name);
      assert.equal(await page.inputValue('#state-change-start'), String(last), 'start defaults to the last committed batch');
      assert.equal(await page.inputValue('#state-change-end'), String(last), 'end defaults to the last committed batch');
      assert.match(await page.textContent('[data-testid=state-change-range]'), new RegExp(`0–${last}`), 'the valid range is shown');
      const full = sparkChangeFeed(name, 0);
      if (full.error_class) {
        // Spark refuses this store's change feed (RocksDB without changelog checkpointing): its error class is shown.
        const box = await page.textContent('[data-testid=state-error]');
        assert.ok(box.includes(full.error_class), `${name}: ${box} names ${full.error_class}`);
        await page.screenshot({ path: path.join(out, 'state', `changes-error-${name}.png`), fullPage: true });
        await page.check('#state-mode-state');
        await stateSettled(page);
        await page.click('[data-testid=diagnosis-tab]');
        return;
      }
      assert.equal(await page.$('[data-testid=state-error]'), null, 'no error at the default range');
      assert.equal(await page.$eval('[data-testid=state-rows]', (t) => t.dataset.changeFeed), `${last}-${last}`);
      const heads = await page.$$eval('[data-testid=state-rows] thead th', (ths) => ths.map((t) => t.textContent));
      assert.deepEqual(heads.slice(0, 2), ['batch_id', 'change_type']);
      const atLast = full.rows.filter((r) => r.batch_id === last);
      assert.ok(atLast.length > 0, `${name}: Spark has changes at batch ${last}`);
      let shownRows = await changeRowsShown(page);
      assertSameChanges(shownRows, atLast, `${name} ${last}..${last}`);
      // Deletes read without colour: the word and a "(removed …)" value.
      for (const r of shownRows.filter((x) => x.type === 'delete')) {
        assert.match(r.typeText, /delete/); assert.match(r.value, /removed/);
      }
      await page.screenshot({ path: path.join(out, 'state', `changes-${name}.png`), fullPage: true });
      // A range: Spark's rows of batches 5..7 (deletes and updates).
      await setChangeRange(page, 5, 7);
      await page.waitForFunction(() => document.querySelector('[data-testid=state-rows]')?.dataset.changeFeed === '5-7');
      shownRows = await changeRowsShown(page);
      const range = sparkChangeFeed(name, 5, 7).rows;
      assert.ok(range.some((r) => r.change_type === 'delete') && range.some((r) => r.change_type === 'update'));
      assertSameChanges(shownRows, range, `${name} 5..7`);
      // Ranges Spark refuses: the end before the start, and an end past the last committed batch.
      assert.ok(14 > last);
      for (const [start, end] of [[9, 3], [10, 14]]) {
        const opts = { changeEndBatchId: String(end), changeStartBatchId: String(start), readChangeFeed: 'true' };
        const want = sparkChangeFeed(name, null, null, opts).error_class;
        assert.ok(want, `${name}: Spark refused ${start}..${end}`);
        await setChangeRange(page, start, end);
        await page.waitForSelector('[data-testid=state-error]');
        const box = await page.textContent('[data-testid=state-error]');
        assert.ok(box.includes(want), `${name} ${start}..${end}: ${box} names ${want}`);
      }
      await page.screenshot({ path: path.join(out, 'state', `changes-bad-range-${name}.png`), fullPage: true });
      // Back to the current state: no change columns.
      await page.check('#state-mode-state');
      await stateSettled(page);
      const heads2 = await page.$$eval('[data-testid=state-rows] thead th', (ths) => ths.map((t) => t.textContent));
      assert.equal(heads2[0], 'partition');
      assert.deepEqual(page.errors, []);
      await page.click('[data-testid=diagnosis-tab]');
    });
  }

  test('Changes in the dark theme and on a narrow window', async () => {
    const name = 'ss-4.3.0-agg-hdfs';
    for (const [label, opts] of [['dark', { colorScheme: 'dark' }], ['narrow', { viewport: { width: 390, height: 844 } }]]) {
      const p = await newPage(opts);
      await open(p, base);
      await dropFile(p, `${name}.zip`, fs.readFileSync(path.join(fixturesDir, `${name}.zip`)));
      await openStateTab(p);
      await p.check('#state-mode-changes');
      await stateSettled(p);
      const rows = await changeRowsShown(p);
      assert.ok(rows.some((r) => r.type === 'delete'), `${label}: delete rows shown`);
      const [fg, bg] = await p.$eval('tr.change-delete .change-badge', (b) => [getComputedStyle(b).color, getComputedStyle(b).backgroundColor]);
      assert.notEqual(fg, bg);
      const overflow = await p.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);
      assert.ok(overflow <= 1, `${label}: no horizontal page scroll (${overflow}px)`);
      await p.screenshot({ path: path.join(out, 'state', `${label}-changes-${name}.png`), fullPage: true });
      assert.deepEqual(p.errors, []);
      await p.context().close();
    }
  });

  test('narrow and dark', async () => {
    const name = stateFixtures.find((n) => /join/.test(n)) || stateFixtures[0];
    for (const [label, opts] of [['narrow', { viewport: { width: 390, height: 844 } }], ['dark', { colorScheme: 'dark' }]]) {
      const p = await newPage(opts);
      await open(p, base);
      await dropFile(p, `${name}.zip`, fs.readFileSync(path.join(fixturesDir, `${name}.zip`)));
      await openStateTab(p);
      const overflow = await p.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);
      assert.ok(overflow <= 1, `${label}: no horizontal page scroll (${overflow}px)`);
      await p.screenshot({ path: path.join(out, 'state', `${label}-${name}.png`), fullPage: true });
      assert.deepEqual(p.errors, []);
      await p.context().close();
    }
  });

  test('needs hints speak of the page, not of CLI flags', async () => {
    let seen = 0;
    for (const zip of zips) {
      const want = cliReport(path.join(fixturesDir, zip));
      if (want.unreadable || !want.checkpoints.some((c) => (c.needs || []).length)) continue;
      await dropFile(page, zip, fs.readFileSync(path.join(fixturesDir, zip)));
      const texts = await page.$$eval('[data-testid=needs] li', (ls) => ls.map((l) => l.textContent));
      assert.ok(texts.length > 0, zip);
      for (const t of texts) assert.doesNotMatch(t, /--[a-z]/, `${zip}: ${t}`);
      seen += 1;
      if (seen >= 3) break;
    }
    assert.ok(seen > 0, 'some fixture has needs hints');
    assert.deepEqual(page.errors, []);
  });
});

describe('single self-contained file, opened from file://', () => {
  test('diagnoses a dropped fixture and a sample with no network at all', async () => {
    const file = path.join(dist, 'checkpoint-inspector.html');
    assert.ok(fs.existsSync(file), 'dist/checkpoint-inspector.html is built');
    const page = await newPage();
    const mine = [];
    page.context().on('request', (r) => mine.push(r.url()));
    await page.goto(pathToFileURL(file).href);
    await page.waitForSelector('body[data-status=ready]', { timeout: 30000 });
    const csp = await page.$eval('meta[http-equiv=Content-Security-Policy]', (m) => m.content);
    assert.match(csp, /connect-src 'none'/);
    for (const zip of ['broken-ss-4.3.0-missing-metadata.zip', 'ss-4.1.4-agg-rocksdb-ckptv2.zip']) {
      await dropFile(page, zip, fs.readFileSync(path.join(fixturesDir, zip)));
      assert.deepEqual(await shown(page), expected(cliReport(path.join(fixturesDir, zip))), zip);
    }
    // The State tab works in the single file too (its worker is inlined).
    await openStateTab(page);
    const inSingle = await rowsShown(page);
    assert.equal(inSingle.total, goldenGroup('ss-4.1.4-agg-rocksdb-ckptv2').rows.length, 'state rows in the single file');
    await page.click('[data-testid=diagnosis-tab]');
    await shot(page, '10-single-file');
    const n = await runCount(page);
    const sample = await page.$$eval('#sample-select option', (o) => o.map((x) => x.value).filter(Boolean)[0]);
    await page.selectOption('#sample-select', sample);
    await waitRun(page, n);
    assert.deepEqual(await shown(page), expected(cliReport(path.join(repo, 'web/samples', sample))));
    const network = mine.filter((u) => !u.startsWith('file:') && !u.startsWith('blob:') && !u.startsWith('data:'));
    assert.deepEqual(network, [], 'the single file makes no network request');
    assert.deepEqual(page.errors, []);
  });
});

// ---------------------------------------------------------------------------------------------------------------
// The Kafka offsets boxes and the restart plan: case 04 (a Kafka topic re-created) with the brokers' offsets pasted
// in both forms gives the CLI's plan, with copy buttons, in light and dark, narrow and wide.
describe('Kafka offsets and the restart plan', () => {
  const casesDir = path.resolve(repo, '../shared/cases');
  const name = 'case-04-kafka-topic-recreated';
  const earliestJson = fs.readFileSync(path.join(casesDir, `${name}.kafka_earliest.json`), 'utf8');
  const latestText = 'payments-events:0:300\npayments-events:1:480\n';

  test('pasted earliest (JSON) and latest (kafka-get-offsets.sh lines) give the CLI\'s plan; snippets copy', async () => {
    const want = cliReport(path.join(casesDir, `${name}.zip`),
      ['--kafka-earliest', path.join(casesDir, `${name}.kafka_earliest.json`), '--kafka-latest', latestText]);
    const plan = want.checkpoints[0].restart_plan;
    assert.ok(plan && plan.ways_out.length > 0, 'the CLI plans ways out');
    const from = requests.length;   // this test's requests only (the list is shared by the suite)
    for (const [label, opts] of [['wide-light', {}], ['narrow-light', { viewport: { width: 390, height: 844 } }],
      ['wide-dark', { colorScheme: 'dark' }], ['narrow-dark', { colorScheme: 'dark', viewport: { width: 390, height: 844 } }]]) {
      const page = await newPage({ ...opts, permissions: ['clipboard-read', 'clipboard-write'] });
      await open(page, base);
      await page.fill('#kafka-earliest', earliestJson);
      await page.fill('#kafka-latest', latestText);
      await dropFile(page, `${name}.zip`, fs.readFileSync(path.join(casesDir, `${name}.zip`)));
      // The boxes' debounce (400 ms) fires after the drop, which already used them: no second run.
      const runs = await runCount(page);
      await page.waitForTimeout(600);
      assert.equal(await runCount(page), runs, `${label}: the offsets typed before the drop do not run it again`);
      assert.deepEqual(await shown(page), expected(want), `${label}: page vs CLI`);
      const kinds = await page.$$eval('[data-testid=way-out]', (ws) => ws.map((w) => w.dataset.kind));
      assert.deepEqual(kinds, plan.ways_out.map((w) => w.kind), `${label}: the ways out in the CLI's order`);
      const codes = await page.$$eval('[data-testid=snippet-code]', (cs) => cs.map((c) => c.textContent));
      assert.deepEqual(codes, plan.ways_out.flatMap((w) => w.snippets.map((s) => s.code)), `${label}: snippets as text`);
      const first = page.locator('[data-testid=copy-snippet]').first();
      await first.click();
      const copied = await page.evaluate(() => navigator.clipboard.readText());
      assert.equal(copied, codes[0], `${label}: the copy button copies its snippet`);
      const overflow = await page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);
      assert.ok(overflow <= 1, `${label}: no horizontal page scroll (${overflow}px)`);
      assert.deepEqual(page.errors, [], `${label}: no page error`);
      await shot(page, `10-restart-plan-${label}`);
      await page.context().close();
    }
    assert.deepEqual(offOrigin(requests.slice(from)), [], 'no request leaves the page origin');
  });

  test('text that is neither form is a clear message naming the line', async () => {
    const page = await newPage();
    await open(page, base);
    await page.fill('#kafka-latest', 'this is not an offset');
    await dropFile(page, `${name}.zip`, fs.readFileSync(path.join(casesDir, `${name}.zip`)));
    assert.match(await page.textContent('#message'), /Kafka latest offsets: line 1/);
    await page.context().close();
  });
});
