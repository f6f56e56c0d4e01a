// Time to verdict in the page (headless Chromium) for each zip given, next to reading the same file in the
// browser (File.stream() to its end, the floor), with what the worker read and its wasm memory, and the main
// thread's responsiveness during the run (round trips of a trivial script, and the long tasks over 50 ms the
// browser reports, with the scripts of each blocking long animation frame). Prints one JSON line per zip.
//
//   [CPU_THROTTLE=4] [DIST=/tmp/other-dist] node tools/scale-bench/page.mjs <zip>...
// (after scripts/build-web.sh; tests/e2e's node_modules; DIST= serves another build's dist/, to pair two builds)
import fs from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { createRequire } from 'node:module';

const here = path.dirname(fileURLToPath(import.meta.url));
const repo = path.resolve(here, '../..');
const require = createRequire(path.join(repo, 'tests/e2e/package.json'));
const { chromium } = require('playwright-core');
const dist = path.resolve(process.env.DIST || path.join(repo, "dist"));
const MIME = { '.html': 'text/html; charset=utf-8', '.js': 'text/javascript', '.wasm': 'application/wasm',
  '.css': 'text/css', '.svg': 'image/svg+xml', '.json': 'application/json', '.zip': 'application/zip' };

const server = http.createServer((req, res) => {
  const rel = decodeURIComponent(new URL(req.url, 'http://x').pathname.slice(1)) || 'index.html';
  const file = path.resolve(dist, rel);
  if (!file.startsWith(dist + path.sep) || !fs.existsSync(file) || fs.statSync(file).isDirectory()) {
    res.writeHead(404).end(); return;
  }
  res.writeHead(200, { 'content-type': MIME[path.extname(file)] || 'application/octet-stream' });
  fs.createReadStream(file).pipe(res);
});
await new Promise((r) => server.listen(0, '127.0.0.1', r));
const base = `http://127.0.0.1:${server.address().port}/`;
const browser = await chromium.launch({
  executablePath: process.env.CHROMIUM || '/usr/bin/chromium', headless: true,
  args: ['--headless', '--no-sandbox', '--disable-gpu'],
});

const median = (xs) => { const s = [...xs].sort((a, b) => a - b); return s.length ? s[Math.floor(s.length / 2)] : 0; };

// `CPU_THROTTLE=N`: the page's main thread runs N times slower (Chromium's CPU throttling, as DevTools does): the
// long tasks a slower machine would have, measured on this one.
const throttle = Number(process.env.CPU_THROTTLE || 1);
for (const zip of process.argv.slice(2)) {
  const page = await browser.newPage();
  if (throttle > 1) {
    const cdp = await page.context().newCDPSession(page);
    await cdp.send('Emulation.setCPUThrottlingRate', { rate: throttle });
  }
  await page.goto(base);
  await page.waitForSelector('body[data-status=ready]', { timeout: 60000 });
  // A user picks a file a few seconds after the page loads, by when the worker's warm-up (warm_up.rs) is over;
  // `DROP_AT_READY=1` drops the zip the moment the page is ready instead (a first diagnosis with a cold worker).
  const readyAt = Date.now();
  if (!process.env.DROP_AT_READY) await page.waitForSelector('body[data-warm]', { timeout: 30000 });
  const warmMs = process.env.DROP_AT_READY ? null : Date.now() - readyAt;
  const before = Number(await page.$eval('#results', (e) => e.dataset.runCount || '0'));
  // Long tasks (> 50 ms) on the page's main thread during the run, as the browser measures them.
  await page.evaluate(() => {
    window.__longTasks = [];
    new PerformanceObserver((l) => { for (const e of l.getEntries()) window.__longTasks.push(e.duration); })
      .observe({ type: 'longtask', buffered: false });
    // Long animation frames (> 50 ms) with the scripts that ran in them: where a long task came from.
    window.__frames = [];
    try {
      new PerformanceObserver((l) => {
        for (const e of l.getEntries()) {
          window.__frames.push({
            ms: Math.round(e.duration), blocking_ms: Math.round(e.blockingDuration || 0),
            render_ms: Math.round(e.renderStart ? e.startTime + e.duration - e.renderStart : 0),
            scripts: (e.scripts || []).map((x) => ({
              ms: Math.round(x.duration), invoker: x.invoker, fn: x.sourceFunctionName,
              src: (x.sourceURL || '').split('/').pop(), at: x.sourceCharPosition,
            })),
          });
        }
      }).observe({ type: 'long-animation-frame', buffered: false });
    } catch { /* an older browser: no attribution */ }
  });
  // When the verdict appears (first, before the history, or with the full report), by the page's clock.
  await page.evaluate(() => {
    const r = document.querySelector('#results');
    window.__verdictAt = null;
    const seen = () => {
      if (window.__verdictAt === null && r.querySelector('[data-testid=verdict]') && r.dataset.run !== 'idle') {
        window.__verdictAt = performance.now();
      }
    };
    new MutationObserver(seen).observe(r, { childList: true, subtree: true, attributes: true });
    window.__t0 = performance.now();
  });
  const t0 = Date.now();
  await page.setInputFiles('#file-input', zip);
  const trips = [];
  for (;;) {
    const s = Date.now();
    const done = await page.evaluate((n) => {
      const r = document.querySelector('#results');
      return Number(r.dataset.runCount || 0) > n && (r.dataset.pending || '0') === '0' && r.dataset.run !== 'busy';
    }, before);
    trips.push(Date.now() - s);
    if (done) break;
    if (Date.now() - t0 > 600000) throw new Error(`${zip}: no verdict in 600 s`);
    await new Promise((r) => setTimeout(r, 50));
  }
  const reportMs = Date.now() - t0;
  // null: no verdict was shown (the run ended in an error).
  const verdictMs = await page.evaluate(() => (window.__verdictAt === null ? null : Math.round(window.__verdictAt - window.__t0)));
  const longTasks = await page.evaluate(() => window.__longTasks);
  const frames = await page.evaluate(() => window.__frames.filter((f) => f.blocking_ms > 0));
  const reading = await page.evaluate(() => window.checkpointInspector.reading);
  const outcome = await page.$eval('[data-testid=verdict]', (v) => v.dataset.outcome).catch(() => null);
  const floorMs = await page.evaluate(async () => {
    const f = document.querySelector('#file-input').files[0];
    const s = performance.now();
    const r = f.stream().getReader();
    for (;;) { const { done } = await r.read(); if (done) break; }
    return performance.now() - s;
  });
  console.log(JSON.stringify({
    zip: path.basename(zip), bytes: fs.statSync(zip).size, warm_up_ms: warmMs, outcome, verdict_ms: verdictMs,
    report_ms: reportMs,
    worker_ms: Math.round(reading.ms), slice_read_ms: Math.round(reading.readMs || 0), read_file_ms: Math.round(floorMs),
    slices: reading.reads,
    bytes_read: reading.bytes, wasm_mib: +(reading.wasmBytes / 1048576).toFixed(1),
    main_thread_round_trip_ms: { median: median(trips), max: Math.max(...trips) },
    main_thread_long_tasks: { count: longTasks.length, max_ms: Math.round(Math.max(0, ...longTasks)),
      total_ms: Math.round(longTasks.reduce((a, b) => a + b, 0)) },
    blocking_frames: frames,
  }));
  await page.close();
}
await browser.close();
server.close();
