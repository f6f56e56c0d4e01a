// End-to-end tests of sharing a report by link (issue 9, page side) in real headless Chromium: copy the link of a
// diagnosed fixture, open it in a fresh context with the network blocked (hosted page and the file:// single file),
// check that the same verdict, findings and evidence appear and that no redacted value is in the address or the
// page; tampered, truncated and hostile links give the clear message; a link of the first format still opens;
// the Spark version, theme and redaction choices persist across visits.
//
// A link is decoded here too, independently of the page: `report=1.<base64url(zlib(JSON envelope))>`.

import { test, describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import zlib from 'node:zlib';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { chromium } from 'playwright-core';

const here = path.dirname(fileURLToPath(import.meta.url));
const repo = path.resolve(here, '../..');
const dist = path.join(repo, 'dist');
const shared = path.resolve(repo, '../shared');
const cli = process.env.CHECKPOINT_CLI
  || ['target/debug/checkpoint-inspector', 'target/release/checkpoint-inspector'].map((p) => path.join(repo, p)).find((p) => fs.existsSync(p))
  || path.join(repo, 'target/debug/checkpoint-inspector');
const out = path.join(repo, 'test-output', 'share');
fs.mkdirSync(out, { recursive: true });
const SUB_PATH = '/team/inspector/';
const NOW = '1764547200000';

/** Inputs with something to redact: file source paths, a Kafka topic, a Delta table id. */
const INPUTS = [
  path.join(shared, 'fixtures', 'broken-ss-4.1.4-missing-delta.zip'),
  path.join(shared, 'cases', 'case-04-kafka-topic-recreated.zip'),
  path.join(shared, 'cases', 'case-13-delta-log-expired.zip'),
].filter((p) => fs.existsSync(p));

function cliReport(zip) {
  const r = spawnSync(cli, ['diagnose', zip, '--json', '--now', NOW], { encoding: 'utf8', maxBuffer: 64 << 20 });
  assert.ok(r.status === 0 || r.status === 1, `CLI exit ${r.status} for ${zip}: ${r.stderr}`);
  return JSON.parse(r.stdout);
}

/** The values a redacted link must never carry: query ids, the input's name, absolute paths and URIs, Kafka
 *  topics, Delta table ids (read from the report itself). */
function secrets(report) {
  const found = new Set();
  found.add(report.input.name.replace(/\.zip$/, ''));
  const walk = (v, key) => {
    if (typeof v === 'string') {
      if (/^(?:[a-z][a-z0-9+.-]*:\/\/|\/)[^\s"]{3,}/i.test(v) && !/^\/\//.test(v)) found.add(v);
      for (const m of v.matchAll(/(?:file|s3a?|hdfs|abfss?|gs|dbfs):\/\/[^\s"',)]+/gi)) found.add(m[0]);
      if (/^(reservoirId|tableId|table_id|topic)$/i.test(key || '') && v.length > 3) found.add(v);
      return;
    }
    if (Array.isArray(v)) { v.forEach((x) => walk(x, key)); return; }
    if (v && typeof v === 'object') for (const [k, x] of Object.entries(v)) walk(x, k);
  };
  for (const c of report.checkpoints) {
    if (c.query_id) found.add(c.query_id);
    for (const s of c.sources) {
      walk(s.latest_offset, null);
      // Kafka offsets are {"topic": {"partition": offset}}: the keys are the topics.
      if (s.kind === 'kafka' && s.latest_offset && typeof s.latest_offset === 'object') {
        for (const t of Object.keys(s.latest_offset)) found.add(t);
      }
    }
  }
  return [...found].filter((s) => s.length >= 4);
}

/** Decodes `…#report=1.<payload>` like the core does (zlib + base64url), without the page. */
function decodeLink(url) {
  const frag = url.slice(url.indexOf('#') + 1);
  const m = /^report=(\d+)\.([A-Za-z0-9_-]+)$/.exec(frag);
  assert.ok(m, `a #report=<format>.<payload> link: ${frag.slice(0, 80)}`);
  const b64 = m[2].replace(/-/g, '+').replace(/_/g, '/');
  return { format: Number(m[1]), envelope: JSON.parse(zlib.inflateSync(Buffer.from(b64, 'base64')).toString('utf8')) };
}

const MIME = { '.html': 'text/html; charset=utf-8', '.js': 'text/javascript', '.wasm': 'application/wasm',
  '.css': 'text/css', '.svg': 'image/svg+xml', '.json': 'application/json', '.zip': 'application/zip' };
function serve() {
  const server = http.createServer((req, res) => {
    const url = new URL(req.url, 'http://x');
    if (!url.pathname.startsWith(SUB_PATH)) { res.writeHead(404).end(); return; }
    const rel = decodeURIComponent(url.pathname.slice(SUB_PATH.length)) || 'index.html';
    const file = path.resolve(dist, rel);
    if (!file.startsWith(dist + path.sep) || !fs.existsSync(file) || fs.statSync(file).isDirectory()) { res.writeHead(404).end(); return; }
    res.writeHead(200, { 'content-type': MIME[path.extname(file)] || 'application/octet-stream' });
    fs.createReadStream(file).pipe(res);
  });
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve(server)));
}

let browser; let server; let origin; let base;
const single = path.join(dist, 'checkpoint-inspector.html');

async function newPage(opts = {}) {
  const context = await browser.newContext({ viewport: { width: 1280, height: 900 }, ...opts });
  const page = await context.newPage();
  page.errors = [];
  page.on('pageerror', (e) => page.errors.push(String(e)));
  return page;
}

/** A fresh context whose only reachable origin is the page's own (or none at all for file://). */
async function blockedPage(opts = {}) {
  const page = await newPage(opts);
  page.offOrigin = [];
  await page.context().route('**/*', (route) => {
    const u = route.request().url();
    if ((origin && u.startsWith(`${origin}/`)) || u.startsWith('file:') || u.startsWith('blob:') || u.startsWith('data:')) return route.continue();
    page.offOrigin.push(u);
    return route.abort();
  });
  return page;
}

async function ready(page) {
  await page.waitForSelector('body[data-status=ready]', { timeout: 30000 });
}

async function dropFile(page, name, bytes) {
  const n = Number(await page.$eval('#results', (e) => e.dataset.runCount || '0'));
  const dt = await page.evaluateHandle(([b64, fname]) => {
    const d = new DataTransfer();
    d.items.add(new File([Uint8Array.from(atob(b64), (c) => c.charCodeAt(0))], fname, { type: 'application/zip' }));
    return d;
  }, [Buffer.from(bytes).toString('base64'), name]);
  for (const t of ['dragenter', 'dragover', 'drop']) await page.dispatchEvent('main', t, { dataTransfer: dt });
  await page.waitForFunction((k) => {
    const r = document.querySelector('#results');
    return Number(r.dataset.runCount || 0) > k && (r.dataset.pending || '0') === '0' && r.dataset.run !== 'busy';
  }, n, { timeout: 30000 });
}

/** What the page shows per checkpoint: verdict, findings in order, and each finding's evidence text. */
async function shown(page) {
  return page.$$eval('section.checkpoint', (secs) => secs.map((s) => {
    const v = s.querySelector('[data-testid=verdict]');
    return {
      outcome: v.dataset.outcome,
      errorClass: v.dataset.errorClass,
      headline: v.querySelector('.headline').textContent,
      findings: [...s.querySelectorAll('[data-finding-code]')].map((f) => ({
        code: f.dataset.findingCode,
        severity: f.dataset.severity,
        evidence: [...f.querySelectorAll('.body ul li')].length,
      })),
    };
  }));
}

/** Opens the share dialog, copies the link (clipboard), returns it and the preview text. */
async function copyLink(page, ctxOrigin) {
  if (ctxOrigin) await page.context().grantPermissions(['clipboard-read', 'clipboard-write'], { origin: ctxOrigin });
  await page.click('#share-link');
  await page.waitForSelector('#share-dialog[open] #share-url');
  const preview = await page.textContent('#share-preview');
  await page.click('#share-copy');
  await page.waitForFunction(() => document.querySelector('#share-note').textContent.length > 0);
  const url = ctxOrigin ? await page.evaluate(() => navigator.clipboard.readText()) : await page.$eval('#share-url', (i) => i.value);
  assert.equal(url, await page.$eval('#share-url', (i) => i.value), 'the copied link is the one shown');
  return { url, preview };
}

async function openLinkPage(page, url) {
  await page.goto(url);
  await ready(page);
  await page.waitForFunction(() => ['done', 'error'].includes(document.querySelector('#results').dataset.run), null, { timeout: 15000 });
}

before(async () => {
  assert.ok(fs.existsSync(path.join(dist, 'index.html')), 'dist/ is built (scripts/build-web.sh)');
  assert.ok(fs.existsSync(cli), `the CLI is built: ${cli}`);
  server = await serve();
  origin = `http://127.0.0.1:${server.address().port}`;
  base = `${origin}${SUB_PATH}`;
  browser = await chromium.launch({
    executablePath: process.env.CHROMIUM || '/usr/bin/chromium', headless: true,
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update',
      '--disable-sync', '--no-first-run', '--disable-default-apps'],
  });
});

after(async () => {
  await browser?.close();
  server?.close();
});

describe('share a report by link', () => {
  for (const zip of INPUTS) {
    const name = path.basename(zip);
    test(`${name}: the link opens elsewhere with the same verdict and findings, and carries no redacted value`, async () => {
      const want = cliReport(zip);
      const hidden = secrets(want);
      assert.ok(hidden.length > 0, `${name}: something to redact`);
      const page = await newPage();
      await page.goto(base);
      await ready(page);
      await dropFile(page, name, fs.readFileSync(zip));
      const before = await shown(page);
      const { url, preview } = await copyLink(page, origin);
      await page.screenshot({ path: path.join(out, `dialog-${name.replace(/\.zip$/, '')}.png`) });
      assert.ok(url.startsWith(`${base}#report=`), url.slice(0, 120));
      assert.ok(url.length < 16 * 1024 + base.length + 1, `within the 16 KiB budget: ${url.length}`);
      const { format, envelope } = decodeLink(url);
      assert.equal(format, 1);
      assert.deepEqual(JSON.parse(preview), envelope.report, 'the preview is exactly what the link carries');
      for (const s of hidden) {
        assert.ok(!url.includes(s) && !url.includes(encodeURIComponent(s)), `${name}: ${s} not in the URL`);
        assert.ok(!JSON.stringify(envelope).includes(s), `${name}: ${s} not in the link's payload`);
        assert.ok(!preview.includes(s), `${name}: ${s} not in the preview`);
      }
      await page.context().close();

      // Hosted copy, fresh context, nothing reachable but the page's own files.
      const other = await blockedPage();
      await openLinkPage(other, url);
      assert.equal(await other.$eval('#results', (e) => e.dataset.run), 'done', await other.textContent('#message'));
      const banner = await other.textContent('[data-testid=link-banner]');
      assert.match(banner, /came from a link made by checkpoint-inspector \d+\.\d+\.\d+/);
      assert.match(banner, /No checkpoint is loaded/);
      const after = await shown(other);
      assert.deepEqual(after.map((c) => [c.outcome, c.errorClass, c.headline]), before.map((c) => [c.outcome, c.errorClass, c.headline]), 'same verdict');
      const cut = envelope.cut_notes.length > 0;
      assert.deepEqual(after.map((c) => c.findings.map((f) => [f.code, f.severity])), before.map((c) => c.findings.map((f) => [f.code, f.severity])), 'same findings, same order');
      if (!cut) assert.deepEqual(after, before, 'same evidence items');
      // The report area, the banner, the status line and the title (the sample menu lists the bundled fixtures by
      // name, which is the page's own content, not the link's).
      const rendered = (pg) => pg.evaluate(() => [document.title, document.querySelector('#results').outerHTML,
        document.querySelector('#status-text').textContent, document.querySelector('#message').textContent].join('\n'));
      const html = await rendered(other);
      for (const s of hidden) {
        assert.ok(!html.includes(s), `${name}: ${s} not in the rendered page`);
        assert.ok(!other.url().includes(s), `${name}: ${s} not in the address`);
      }
      assert.equal(await other.$('[data-testid=state-tab]'), null, 'no State tab without a checkpoint');
      await other.screenshot({ path: path.join(out, `opened-${name.replace(/\.zip$/, '')}.png`), fullPage: true });
      assert.deepEqual(other.offOrigin, [], 'no request left the page');
      assert.deepEqual(other.errors, []);
      await other.context().close();

      // The single file, offline, opened from file:// with the same fragment.
      const offline = await blockedPage();
      await offline.context().setOffline(true);
      await openLinkPage(offline, `${pathToFileURL(single).href}${url.slice(url.indexOf('#'))}`);
      assert.equal(await offline.$eval('#results', (e) => e.dataset.run), 'done', await offline.textContent('#message'));
      assert.deepEqual((await shown(offline)).map((c) => [c.outcome, c.errorClass, c.findings.map((f) => f.code)]),
        before.map((c) => [c.outcome, c.errorClass, c.findings.map((f) => f.code)]), 'single file: same verdict and findings');
      const shtml = await rendered(offline);
      for (const s of hidden) assert.ok(!shtml.includes(s), `${name}: ${s} not in the single file's page`);
      assert.deepEqual(offline.errors, []);
      await offline.context().close();
    });
  }

  test('tampered, truncated and hostile links give a clear message and render nothing from them', async () => {
    const zip = INPUTS[0];
    const page = await newPage();
    await page.goto(base);
    await ready(page);
    await dropFile(page, path.basename(zip), fs.readFileSync(zip));
    const { url } = await copyLink(page, origin);
    await page.context().close();
    const frag = url.slice(url.indexOf('#') + 1);
    const payloadAt = frag.indexOf('.') + 1;
    const mid = payloadAt + Math.floor((frag.length - payloadAt) / 2);
    const flip = (ch) => (ch === 'A' ? 'B' : 'A');
    const cases = [
      ['tampered', `${frag.slice(0, mid)}${flip(frag[mid])}${frag.slice(mid + 1)}`],
      ['truncated', frag.slice(0, mid)],
      ['hostile-html', 'report=1.<img src=x onerror="window.__pwned=1">'],
      ['hostile-script', `report=1.${Buffer.from('<script>window.__pwned=1</script>').toString('base64url')}`],
      ['newer-format', `report=99.${frag.slice(payloadAt)}`],
      ['empty', 'report='],
    ];
    for (const [label, f] of cases) {
      const p = await blockedPage();
      await openLinkPage(p, `${base}#${f}`);
      assert.equal(await p.$eval('#results', (e) => e.dataset.run), 'error', label);
      const msg = await p.textContent('#message');
      assert.match(msg, /This link's report cannot be shown: \S/, `${label}: ${msg}`);
      assert.ok(await p.isVisible('#message'), label);
      assert.match(await p.$eval('#message', (m) => m.dataset.errorKind), /^link-/, label);
      assert.equal(await p.$$eval('[data-testid=verdict]', (v) => v.length), 0, `${label}: no verdict`);
      assert.equal(await p.evaluate(() => window.__pwned), undefined, `${label}: nothing from the link ran`);
      assert.equal(await p.$$eval('#message *', (n) => n.length), 0, `${label}: the message is text only`);
      if (label === 'tampered' || label === 'hostile-html') await p.screenshot({ path: path.join(out, `error-${label}.png`) });
      assert.deepEqual(p.errors, [], label);
      await p.context().close();
    }
  });

  // Links made by format 1 (tests/e2e/fixtures/link-format-1*.txt; README.md there says how): never change them.
  const oldLinks = fs.readdirSync(path.join(here, 'fixtures')).filter((f) => /^link-format-1.*\.txt$/.test(f)).sort();
  test('old-format link fixtures exist', () => assert.ok(oldLinks.length >= 1, `${oldLinks}`));
  for (const f of oldLinks) {
    test(`a link of the first format still opens: ${f}`, async () => {
      const frag = fs.readFileSync(path.join(here, 'fixtures', f), 'utf8').trim();
      const { format, envelope } = decodeLink(`#${frag}`);
      assert.equal(format, 1);
      const p = await blockedPage();
      await openLinkPage(p, `${base}#${frag}`);
      assert.equal(await p.$eval('#results', (e) => e.dataset.run), 'done', await p.textContent('#message'));
      assert.match(await p.textContent('[data-testid=link-banner]'), new RegExp(`checkpoint-inspector ${envelope.inspector_version.replace(/\./g, '\\.')}`));
      const got = await shown(p);
      assert.deepEqual(got.map((c) => [c.outcome, c.errorClass || '', c.findings.map((x) => x.code).sort()]),
        envelope.report.checkpoints.map((c) => [c.restart.outcome, c.restart.error_class || '', c.findings.map((x) => x.code).sort()]));
      assert.deepEqual(p.offOrigin, []);
      assert.deepEqual(p.errors, []);
      await p.context().close();
    });
  }

  test('the Spark version, the theme and the redaction choices persist across visits', async () => {
    const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
    let page = await context.newPage();
    await page.goto(base);
    await ready(page);
    await page.selectOption('#spark-version', '4.1.4');
    await page.selectOption('#theme', 'dark');
    await dropFile(page, path.basename(INPUTS[0]), fs.readFileSync(INPUTS[0]));
    await page.click('#share-link');
    await page.waitForSelector('#share-dialog[open] [data-category=paths]');
    await page.uncheck('[data-category=paths]');
    await page.waitForFunction(() => !document.querySelector('[data-category=paths]').checked);
    await page.close();
    page = await context.newPage();
    await page.goto(base);
    await ready(page);
    assert.equal(await page.$eval('#spark-version', (s) => s.value), '4.1.4', 'version remembered');
    assert.equal(await page.$eval('html', (h) => h.dataset.theme), 'dark', 'theme remembered');
    assert.equal(await page.evaluate(() => getComputedStyle(document.body).backgroundColor), 'rgb(13, 17, 23)', 'dark colours');
    await dropFile(page, path.basename(INPUTS[0]), fs.readFileSync(INPUTS[0]));
    assert.match(await page.textContent('[data-testid=verdict]'), /Spark 4\.1\.4/, 'the remembered version is used');
    await page.click('#share-link');
    await page.waitForSelector('#share-dialog[open] [data-category=paths]');
    assert.equal(await page.$eval('[data-category=paths]', (c) => c.checked), false, 'redaction choice remembered');
    assert.equal(await page.$eval('[data-category=topics]', (c) => c.checked), true);
    await page.screenshot({ path: path.join(out, 'dark-dialog.png') });
    await page.setViewportSize({ width: 390, height: 844 });
    await page.screenshot({ path: path.join(out, 'narrow-dialog.png') });
    await context.close();
  });

  const CLI_FLAG = new RegExp('(^|\\s)--(' + ['spark-version', 'now', 'error-text', 'delta-log', 'kafka-earliest',
    'kafka-latest', 'sink-log', 'deep', 'verify-budget', 'share-link', 'no-redact', 'share-budget', 'fail-on', 'json',
    'metadata'].join('|') + ')(?![a-z-])');
  test('the verdict speaks the page\'s language: no CLI flag anywhere in the report view', async () => {
    const page = await newPage();
    await page.goto(base);
    await ready(page);
    for (const zip of INPUTS) {
      await dropFile(page, path.basename(zip), fs.readFileSync(zip));
      const texts = await page.$$eval('section.checkpoint [data-testid=verdict], [data-testid=needs]', (n) => n.map((x) => x.textContent));
      // Our CLI's flags (as crates/checkpoint-core/tests/page_words.rs lists them); other tools' commands the
      // page quotes to paste (kafka-get-offsets.sh --time -2, spark-submit --conf) are the user's own advice.
      for (const t of texts) assert.doesNotMatch(t, CLI_FLAG, `${path.basename(zip)}: ${t}`);
    }
    await page.context().close();
  });
});
