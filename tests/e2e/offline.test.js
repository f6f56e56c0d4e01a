// The hosted inspector offline (run with `node --test`, after scripts/build-web.sh): after a first visit its
// service worker has cached the page, both wasm modules and the samples, so the page loads and diagnoses with the
// network cut (server stopped and the context offline); a rebuilt dist/ replaces the cached copy (new cache, old
// one deleted, new build shown); the worker requests nothing but the page's own files.
//
// It works on a copy of dist/ in a temporary folder (the "rebuild" re-runs tools/offline.py on that copy with
// another build id), served from a sub-path by a small static server that can be stopped and started again.

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
const fixturesDir = path.resolve(repo, '../shared/fixtures');
const out = path.join(repo, 'test-output', 'offline');
const SUB_PATH = '/team/inspector/';
fs.mkdirSync(out, { recursive: true });

const MIME = { '.html': 'text/html; charset=utf-8', '.js': 'text/javascript', '.wasm': 'application/wasm',
  '.css': 'text/css', '.svg': 'image/svg+xml', '.json': 'application/json', '.zip': 'application/zip' };

let dist; let server; let port; let browser; let context; let page;
const sockets = new Set();
const served = []; // every path the server answered

function start() {
  server = http.createServer((req, res) => {
    const url = new URL(req.url, 'http://x');
    served.push(url.pathname);
    if (!url.pathname.startsWith(SUB_PATH)) { res.writeHead(404).end(); return; }
    const rel = decodeURIComponent(url.pathname.slice(SUB_PATH.length)) || 'index.html';
    const file = path.resolve(dist, rel);
    if (!file.startsWith(dist + path.sep) || !fs.existsSync(file) || fs.statSync(file).isDirectory()) {
      res.writeHead(404).end(); return;
    }
    res.writeHead(200, { 'content-type': MIME[path.extname(file)] || 'application/octet-stream' });
    fs.createReadStream(file).pipe(res);
  });
  server.on('connection', (s) => { sockets.add(s); s.on('close', () => sockets.delete(s)); });
  return new Promise((resolve) => server.listen(port || 0, '127.0.0.1', () => { port = server.address().port; resolve(); }));
}

function stop() {
  for (const s of sockets) s.destroy();
  return new Promise((resolve) => server.close(() => resolve()));
}

const base = () => `http://127.0.0.1:${port}${SUB_PATH}`;

async function cut() { await stop(); await context.setOffline(true); }
async function reconnect() { await context.setOffline(false); await start(); }

async function loaded() {
  await page.waitForSelector('body[data-status=ready]', { timeout: 30000 });
  await page.waitForFunction(() => document.querySelector('#sample-select').options.length > 1, null, { timeout: 10000 });
}

const buildNote = () => page.$eval('#build-note', (e) => e.dataset.buildId);
const cacheNames = () => page.evaluate(() => caches.keys());

async function dropFixture(name) {
  const bytes = fs.readFileSync(path.join(fixturesDir, name));
  const n = Number(await page.$eval('#results', (e) => e.dataset.runCount || '0'));
  const dt = await page.evaluateHandle(([b64, fname]) => {
    const b = Uint8Array.from(atob(b64), (c) => c.charCodeAt(0));
    const d = new DataTransfer();
    d.items.add(new File([b], fname, { type: 'application/zip' }));
    return d;
  }, [bytes.toString('base64'), name]);
  for (const t of ['dragenter', 'dragover', 'drop']) await page.dispatchEvent('main', t, { dataTransfer: dt });
  await page.waitForFunction((k) => Number(document.querySelector('#results').dataset.runCount || 0) > k
    && document.querySelector('#results').dataset.run !== 'busy', n, { timeout: 30000 });
  return page.$eval('[data-testid=verdict]', (v) => v.dataset.outcome);
}

function restamp(buildId) {
  const r = spawnSync('python3', [path.join(repo, 'tools/offline.py'), dist], {
    encoding: 'utf8', env: { ...process.env, INSPECTOR_BUILD_ID: buildId } });
  assert.equal(r.status, 0, r.stderr);
}

before(async () => {
  const src = path.join(repo, 'dist');
  assert.ok(fs.existsSync(path.join(src, 'sw.js')), 'dist/ is built with its service worker (scripts/build-web.sh)');
  dist = fs.mkdtempSync(path.join(os.tmpdir(), 'inspector-offline-'));
  fs.cpSync(src, dist, { recursive: true });
  restamp('e2e-first');
  await start();
  browser = await chromium.launch({
    executablePath: process.env.CHROMIUM || '/usr/bin/chromium', headless: true,
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking',
      '--disable-component-update', '--disable-sync', '--no-first-run', '--disable-default-apps'],
  });
  context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
  page = await context.newPage();
});

after(async () => {
  await browser?.close();
  if (server?.listening) await stop();
  if (dist) fs.rmSync(dist, { recursive: true, force: true });
});

describe('hosted page offline (service worker)', () => {
  test('first visit caches the page; with the network cut it loads and diagnoses again', async () => {
    const swRequests = [];
    context.on('request', (r) => { if (r.serviceWorker()) swRequests.push(r.url()); });
    await page.goto(base());
    await loaded();
    await page.waitForSelector('html[data-offline=ready]', { timeout: 30000 });
    assert.equal(await buildNote(), 'e2e-first');
    const names = await cacheNames();
    assert.equal(names.length, 1, `one cache: ${names}`);
    assert.match(names[0], /^checkpoint-inspector-e2e-first-/);
    // The worker asked for nothing but the page's own files (the list tools/offline.py wrote into sw.js).
    const sw = fs.readFileSync(path.join(dist, 'sw.js'), 'utf8');
    const files = JSON.parse(sw.match(/const FILES = (\[.*\]);/)[1]);
    assert.ok(files.includes('index.html') && files.some((f) => f.endsWith('_bg.wasm')) && files.some((f) => f.startsWith('web/samples/')));
    assert.ok(swRequests.length >= files.length, `the worker cached the files: ${swRequests.length}`);
    for (const u of swRequests) {
      const rel = decodeURIComponent(u.slice(base().length));
      assert.ok(u.startsWith(base()) && (files.includes(rel) || rel === 'sw.js'), `unexpected request of the worker: ${u}`);
    }

    await cut();
    const before = served.length;
    await page.reload();
    await loaded();
    assert.equal(await buildNote(), 'e2e-first');
    assert.equal(await dropFixture('broken-ss-4.1.4-missing-delta.zip'), 'fails', 'the diagnosis runs offline');
    // A fresh tab of the same browser profile, with the query and fragment a shared link has, loads too.
    const tab = await context.newPage();
    await tab.goto(`${base()}?spark-version=4.1.4#theme=dark`);
    await tab.waitForSelector('body[data-status=ready]', { timeout: 30000 });
    await tab.close();
    assert.equal(served.length, before, 'nothing reached the server while the network was cut');
    await page.screenshot({ path: path.join(out, 'offline-reload.png'), fullPage: true });
    await reconnect();
  });

  test('a rebuilt dist/ replaces the cached copy', async () => {
    restamp('e2e-second');
    // The next visit is still served from the old cache, while the browser sees the new sw.js and installs it.
    await page.reload();
    await loaded();
    await page.evaluate(async () => (await navigator.serviceWorker.getRegistration()).update());
    await page.waitForFunction(async () => {
      const k = await caches.keys();
      const reg = await navigator.serviceWorker.getRegistration();
      return k.length === 1 && k[0].startsWith('checkpoint-inspector-e2e-second-')
        && reg.active && reg.active.state === 'activated' && !reg.installing && !reg.waiting;
    }, null, { timeout: 30000, polling: 250 });
    // The page says a newer build was installed.
    await page.waitForSelector('#update-note', { timeout: 10000 });
    await page.reload();
    await loaded();
    assert.equal(await buildNote(), 'e2e-second', 'the new build is shown');
    // And it is the new build that is there offline.
    await cut();
    await page.reload();
    await loaded();
    assert.equal(await buildNote(), 'e2e-second');
    const names = await cacheNames();
    assert.equal(names.length, 1, `the old cache was deleted: ${names}`);
    await reconnect();
  });

  test('the single file registers no service worker', async () => {
    const single = fs.readFileSync(path.join(dist, 'checkpoint-inspector.html'), 'utf8');
    assert.ok(!single.includes('sw-register.js') && !single.includes('serviceWorker.register'));
    const csp = fs.readFileSync(path.join(dist, 'index.html'), 'utf8').match(/Content-Security-Policy" content="([^"]*)"/)[1];
    assert.match(csp, /worker-src 'self'/);
    assert.match(csp, /default-src 'none'/);
  });
});
