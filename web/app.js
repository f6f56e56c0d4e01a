// Spark checkpoint inspector: the page. Plain DOM, no framework, no build step.
// The diagnosis runs in a Web Worker (wasm, crates/checkpoint-web/src/worker.rs); this file sends it the dropped
// File (never its bytes: the worker reads slices lazily) and renders the Report it posts back.
// Nothing here talks to the network except to fetch the page's own samples (hosted build only).

const SPARK_VERSIONS = ['3.3.4', '3.4.4', '3.5.0', '3.5.9', '4.0.0', '4.0.5', '4.1.0', '4.1.4', '4.2.0', '4.3.0'];
const SEVERITY_RANK = { error: 0, warning: 1, info: 2 };
const MAX_FOLDER_FILES = 200000;
const MAX_PLOT_BATCHES = 300;

const $ = (sel) => document.querySelector(sel);

/** Creates an element: el('div', {class: 'x', dataset: {a: 1}}, child, 'text', ...). */
function el(tag, attrs, ...children) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v === undefined || v === null || v === false) continue;
    if (k === 'class') e.className = v;
    else if (k === 'dataset') Object.assign(e.dataset, v);
    else if (k === 'text') e.textContent = v;
    else if (k.startsWith('on')) e.addEventListener(k.slice(2), v);
    else e.setAttribute(k, v === true ? '' : String(v));
  }
  for (const c of children.flat(Infinity)) {
    if (c === undefined || c === null || c === false) continue;
    e.append(c instanceof Node ? c : document.createTextNode(String(c)));
  }
  return e;
}

const SVG_NS = 'http://www.w3.org/2000/svg';
function svg(tag, attrs, ...children) {
  const e = document.createElementNS(SVG_NS, tag);
  for (const [k, v] of Object.entries(attrs || {})) if (v !== undefined && v !== null) e.setAttribute(k, String(v));
  for (const c of children.flat(Infinity)) if (c !== undefined && c !== null) e.append(c instanceof Node ? c : document.createTextNode(String(c)));
  return e;
}

// ---------------------------------------------------------------------------------------------------------------
// State
const state = {
  worker: null,
  workerReady: false,
  ready: false,
  nextId: 1,
  pending: new Map(), // id -> {resolve, reject, onProgress}
  input: null, // {name} of what the worker holds
  last: null, // {report, reportJson, entries, entriesTotal, ms, bytesRead, reads}
  entrySizes: new Map(),
  runs: 0,
};

// ---------------------------------------------------------------------------------------------------------------
// Worker
function startWorker() {
  const url = window.TC_WORKER_URL || './worker_loader.js';
  let w;
  try {
    w = new Worker(url);
  } catch (e) {
    showMessage(`The inspector could not start its worker: ${e.message}`);
    setStatus('Failed to start.');
    return;
  }
  state.worker = w;
  w.onmessage = (ev) => onWorkerMessage(ev.data);
  w.onerror = (ev) => {
    ev.preventDefault?.();
    const msg = ev.message || 'the worker stopped';
    for (const [, p] of state.pending) p.reject({ kind: 'internal', message: `Internal error in the inspector: ${msg}` });
    state.pending.clear();
    if (!state.ready) {
      showMessage(`The inspector could not load its WebAssembly module: ${msg}`);
      setStatus('Failed to load.');
    }
    // Start a fresh worker so the page stays usable.
    state.ready = false;
    state.workerReady = false;
    state.worker = null;
    document.body.dataset.status = 'loading';
    setTimeout(startWorker, 50);
  };
}

function onWorkerMessage(m) {
  if (!m || typeof m !== 'object') return;
  if (m.type === 'ready') {
    state.workerReady = true;
    $('#version-note').textContent = `checkpoint-inspector ${m.version}`;
    checkReady();
    return;
  }
  const p = state.pending.get(m.id);
  if (!p) return;
  if (m.type === 'progress') {
    p.onProgress?.(m);
    return;
  }
  state.pending.delete(m.id);
  $('#results').dataset.pending = String(state.pending.size);
  if (m.type === 'error') p.reject({ kind: m.kind, message: m.message });
  else p.resolve(m);
}

/** The page is ready once both wasm modules run: the worker's (diagnosis) and the page's (rendering). */
function checkReady() {
  if (!state.workerReady || !window.wasmBindings) return;
  state.ready = true;
  document.body.dataset.status = 'ready';
  if (!state.last && !state.input) setStatus('Ready. Drop a checkpoint zip or folder, pick a file, or try a sample.');
}
addEventListener('TrunkApplicationStarted', checkReady);

function request(msg, onProgress) {
  return new Promise((resolve, reject) => {
    if (!state.worker) {
      reject({ kind: 'internal', message: 'The inspector is not loaded yet.' });
      return;
    }
    const id = state.nextId++;
    state.pending.set(id, { resolve, reject, onProgress });
    $('#results').dataset.pending = String(state.pending.size);
    state.worker.postMessage({ ...msg, id });
  });
}

async function whenReady() {
  while (!state.ready) await new Promise((r) => setTimeout(r, 30));
}

// ---------------------------------------------------------------------------------------------------------------
// Options and URL settings (links carry settings, never data)
function options() {
  const v = $('#spark-version').value;
  const t = $('#error-text').value;
  return { spark_version: v || null, error_text: t.trim() ? t : null, now_ms: Date.now() };
}

function initSparkVersions() {
  const sel = $('#spark-version');
  const params = new URLSearchParams(location.search);
  const wanted = (params.get('spark-version') || '').trim();
  const versions = [...SPARK_VERSIONS];
  if (/^\d+\.\d+(\.\d+)?$/.test(wanted) && !versions.includes(wanted)) versions.push(wanted);
  sel.append(el('option', { value: '' }, 'Auto (newest consistent)'));
  for (const v of versions.reverse()) sel.append(el('option', { value: v }, `Spark ${v}`));
  if (versions.includes(wanted)) sel.value = wanted;
}

function rememberSettings() {
  try {
    const url = new URL(location.href);
    const v = $('#spark-version').value;
    if (v) url.searchParams.set('spark-version', v);
    else url.searchParams.delete('spark-version');
    history.replaceState(null, '', url.toString());
  } catch (_) {
    // file:// pages may refuse replaceState; the setting still applies.
  }
}

// ---------------------------------------------------------------------------------------------------------------
// Status, progress, messages
function setStatus(text) {
  $('#status-text').textContent = text;
}
function showMessage(text, kind = 'error') {
  const m = $('#message');
  m.textContent = text;
  m.dataset.kind = kind;
  m.hidden = false;
}
function clearMessage() {
  $('#message').hidden = true;
  $('#message').textContent = '';
}
let progressTimer = null;
function progressStart(label) {
  const bar = $('#progress');
  bar.removeAttribute('value');
  clearTimeout(progressTimer);
  // Only show the bar for anything that takes longer than a moment.
  progressTimer = setTimeout(() => { bar.hidden = false; }, 150);
  setStatus(label);
}
function progressUpdate(m) {
  const bar = $('#progress');
  if (m.total > 0) {
    bar.max = m.total;
    bar.value = Math.min(m.done, m.total);
  }
  setStatus(`Reading ${m.path} (${m.done} file${m.done === 1 ? '' : 's'} read of ${m.total} listed)…`);
}
function progressEnd() {
  clearTimeout(progressTimer);
  $('#progress').hidden = true;
}

const ERROR_HELP = {
  'not-a-zip': 'This file is not a zip archive. Zip the checkpoint folder (e.g. `zip -r chk.zip <checkpointLocation>`), or drop the folder itself.',
  empty: 'The input is empty: there is nothing to inspect.',
  'over-limit': 'The input is over one of the inspector\'s safety limits, so it was not read further.',
  'bad-path': 'The zip contains an unsafe entry path; it was not read.',
};

// ---------------------------------------------------------------------------------------------------------------
// Running a diagnosis
async function run(msg, label) {
  await whenReady();
  clearMessage();
  const results = $('#results');
  results.dataset.run = 'busy';
  progressStart(label);
  try {
    const m = await request(msg, progressUpdate);
    const report = JSON.parse(m.report);
    state.last = {
      report, reportJson: m.report, entries: m.entries || [],
      entriesTotal: m.entries_total || 0, ms: m.ms, bytesRead: m.bytes_read, reads: m.reads,
    };
    state.entrySizes = new Map(state.last.entries.map(([p, s]) => [p, s]));
    render();
    state.runs += 1;
    results.dataset.runCount = String(state.runs);
    results.dataset.run = 'done';
    const read = m.bytes_read !== undefined ? ` (${m.reads} slice reads of the ${fmtBytes(report.input.bytes)} file)` : '';
    setStatus(`Diagnosed ${report.input.name} in ${Math.round(m.ms)} ms${read}.`);
  } catch (e) {
    const kind = e.kind || 'internal';
    state.last = null;
    $('#results').replaceChildren();
    const help = ERROR_HELP[kind] ? ` ${ERROR_HELP[kind]}` : '';
    const text = String(e.message || e);
    showMessage(`${/[.!?]$/.test(text) ? text : `${text}.`}${help}`);
    const box = $('#message');
    box.dataset.errorKind = kind;
    state.runs += 1;
    results.dataset.runCount = String(state.runs);
    results.dataset.run = 'error';
    setStatus('Could not diagnose this input.');
  } finally {
    progressEnd();
  }
}

function openFile(file, fromSample = false) {
  if (!fromSample) $('#sample-select').value = '';
  state.input = { name: file.name };
  $('#intro').hidden = true;
  return run({ type: 'open-file', file, name: file.name, options: options() }, `Opening ${file.name}…`);
}

function openFolder(name, files) {
  $('#sample-select').value = '';
  state.input = { name };
  $('#intro').hidden = true;
  if (files.length === 0) {
    showMessage(`The folder ${name} is empty: there is nothing to inspect.`);
    $('#results').dataset.run = 'error';
    return Promise.resolve();
  }
  return run({ type: 'open-folder', name, files, options: options() }, `Opening folder ${name} (${files.length} files)…`);
}

function rediagnose() {
  if (!state.input) return Promise.resolve();
  return run({ type: 'rediagnose', options: options() }, `Diagnosing ${state.input.name} again…`);
}

// ---------------------------------------------------------------------------------------------------------------
// Input: file picker, folder picker, drag and drop (zip or folder via the File System entries API), samples
function filesFromFolderInput(fileList) {
  const arr = [...fileList];
  if (arr.length === 0) return null;
  const first = arr[0].webkitRelativePath || arr[0].name;
  const top = first.split('/')[0];
  const files = arr.slice(0, MAX_FOLDER_FILES + 1).map((f) => {
    const rel = f.webkitRelativePath || f.name;
    return { path: rel.startsWith(top + '/') ? rel.slice(top.length + 1) : rel, file: f };
  });
  return { name: top, files };
}

function readAllEntries(dirEntry) {
  // readEntries returns batches; call until empty.
  const reader = dirEntry.createReader();
  return new Promise((resolve, reject) => {
    const out = [];
    const next = () => reader.readEntries((batch) => {
      if (batch.length === 0) resolve(out);
      else { out.push(...batch); next(); }
    }, reject);
    next();
  });
}

function entryFile(fileEntry) {
  return new Promise((resolve, reject) => fileEntry.file(resolve, reject));
}

/** Walks a dropped directory (File System entries API), bounded by MAX_FOLDER_FILES. Paths are relative to it. */
async function walkDirectory(dirEntry) {
  const files = [];
  const stack = [[dirEntry, '']];
  while (stack.length) {
    const [dir, prefix] = stack.pop();
    for (const entry of await readAllEntries(dir)) {
      const path = prefix ? `${prefix}/${entry.name}` : entry.name;
      if (entry.isDirectory) stack.push([entry, path]);
      else if (entry.isFile) {
        files.push({ path, file: await entryFile(entry) });
        if (files.length > MAX_FOLDER_FILES) {
          throw { kind: 'over-limit', message: `The folder ${dirEntry.name} has more than ${MAX_FOLDER_FILES} files, over the inspector's limit.` };
        }
      }
    }
  }
  return files;
}

async function onDrop(ev) {
  ev.preventDefault();
  hideDropzone();
  const dt = ev.dataTransfer;
  if (!dt) return;
  const items = [...(dt.items || [])].filter((i) => i.kind === 'file');
  const entries = items.map((i) => (i.webkitGetAsEntry ? i.webkitGetAsEntry() : null)).filter(Boolean);
  const dir = entries.find((e) => e.isDirectory);
  if (dir) {
    try {
      setStatus(`Listing folder ${dir.name}…`);
      const files = await walkDirectory(dir);
      await openFolder(dir.name, files);
    } catch (e) {
      showMessage(e.message || `Could not read the folder ${dir.name}.`);
    }
    return;
  }
  const files = [...(dt.files || [])];
  if (files.length === 0) return;
  const zip = files.find((f) => /\.zip$/i.test(f.name)) || files[0];
  await openFile(zip);
}

let dragDepth = 0;
function hideDropzone() {
  dragDepth = 0;
  $('#dropzone').hidden = true;
}

function initInputs() {
  $('#file-input').addEventListener('change', (ev) => {
    const f = ev.target.files && ev.target.files[0];
    if (f) openFile(f);
  });
  $('#folder-input').addEventListener('change', (ev) => {
    const got = filesFromFolderInput(ev.target.files || []);
    if (got) {
      if (got.files.length > MAX_FOLDER_FILES) {
        showMessage(`The folder ${got.name} has more than ${MAX_FOLDER_FILES} files, over the inspector's limit.`);
        return;
      }
      openFolder(got.name, got.files);
    }
  });
  window.addEventListener('dragenter', (ev) => {
    if (![...(ev.dataTransfer?.types || [])].includes('Files')) return;
    ev.preventDefault();
    dragDepth += 1;
    $('#dropzone').hidden = false;
  });
  window.addEventListener('dragover', (ev) => { ev.preventDefault(); if (ev.dataTransfer) ev.dataTransfer.dropEffect = 'copy'; });
  window.addEventListener('dragleave', () => { dragDepth -= 1; if (dragDepth <= 0) hideDropzone(); });
  window.addEventListener('drop', onDrop);
  $('#spark-version').addEventListener('change', () => { rememberSettings(); rediagnose(); });
  let t = null;
  $('#error-text').addEventListener('input', () => {
    clearTimeout(t);
    t = setTimeout(rediagnose, 400);
  });
  $('#file-dialog-close').addEventListener('click', () => $('#file-dialog').close());
}

async function initSamples() {
  const sel = $('#sample-select');
  let list = [];
  const embedded = document.getElementById('tc-samples');
  if (embedded) {
    try { list = JSON.parse(embedded.textContent).samples; } catch (_) { list = []; }
  } else {
    try {
      const r = await fetch('web/samples/index.json');
      if (r.ok) list = (await r.json()).samples;
    } catch (_) { list = []; }
  }
  for (const s of list) sel.append(el('option', { value: s.file, dataset: { b64: s.base64 || '' } }, s.label));
  sel.addEventListener('change', async () => {
    const s = list.find((x) => x.file === sel.value);
    if (!s) return;
    let blob;
    if (s.base64) {
      blob = new Blob([Uint8Array.from(atob(s.base64), (c) => c.charCodeAt(0))], { type: 'application/zip' });
    } else {
      const r = await fetch(`web/samples/${s.file}`);
      blob = await r.blob();
    }
    await openFile(new File([blob], s.file, { type: 'application/zip' }), true);
  });
}

// ---------------------------------------------------------------------------------------------------------------
// Rendering
function fmtBytes(n) {
  if (n === undefined || n === null) return '—';
  if (n < 1024) return `${n} B`;
  if (n < 1024 * 1024) return `${(n / 1024).toFixed(1)} KiB`;
  if (n < 1024 ** 3) return `${(n / 1024 / 1024).toFixed(1)} MiB`;
  return `${(n / 1024 ** 3).toFixed(2)} GiB`;
}
function fmtTime(ms) {
  if (ms === null || ms === undefined) return '—';
  if (ms === 0) return '0';
  const d = new Date(ms);
  return Number.isNaN(d.getTime()) ? String(ms) : d.toISOString().replace('T', ' ').replace('.000Z', 'Z');
}
function fmtAge(ms) {
  if (ms === null || ms === undefined) return '';
  const s = Math.round((Date.now() - ms) / 1000);
  if (s < 0) return 'in the future';
  if (s < 120) return `${s} s ago`;
  if (s < 7200) return `${Math.round(s / 60)} min ago`;
  if (s < 172800) return `${Math.round(s / 3600)} h ago`;
  return `${Math.round(s / 86400)} days ago`;
}

function verdictText(c) {
  const r = c.restart;
  switch (r.outcome) {
    case 'resumes': return r.first_batch_id !== undefined && r.first_batch_id !== null ? `Will resume with batch ${r.first_batch_id}` : 'Will resume';
    case 'replays_last_batch': {
      const b = r.first_batch_id ?? c.last_batch_id;
      return b !== null && b !== undefined ? `Will replay batch ${b}` : 'Will replay the last batch';
    }
    case 'fails': return `Will fail with ${r.error_class || r.exception || 'an error'}`;
    default: return 'Outcome unknown';
  }
}
const VERDICT_ICON = { resumes: '✓', replays_last_batch: '↻', fails: '✕', unknown: '?' };

function sortedFindings(c) {
  return c.findings
    .map((f, i) => ({ f, i }))
    .sort((a, b) => (Number(b.f.explains_error_text) - Number(a.f.explains_error_text))
      || (SEVERITY_RANK[a.f.severity] - SEVERITY_RANK[b.f.severity]) || (a.i - b.i))
    .map((x) => x.f);
}

function archivePath(root, path) {
  return root ? `${root}/${path}` : path;
}

/** A file path: a button that shows the file when it is in the input and small enough, else plain code. */
function pathLink(root, path) {
  const full = archivePath(root, path);
  const size = state.entrySizes.get(full);
  if (size !== undefined && size <= 256 * 1024) {
    return el('button', { type: 'button', class: 'linkish', title: `Show ${full} (${fmtBytes(size)})`, onclick: () => showEntry(full) }, path);
  }
  return el('code', {}, path);
}

function render() {
  const { report } = state.last;
  const root = $('#results');
  const parts = [];
  parts.push(el('div', { class: 'toolbar' },
    el('button', { type: 'button', class: 'primary', id: 'export-md', onclick: exportMarkdown }, 'Export Markdown'),
    el('button', { type: 'button', id: 'export-json', onclick: exportJson }, 'Export JSON'),
    el('button', { type: 'button', id: 'copy-summary', onclick: copySummary }, 'Copy summary'),
    el('span', { class: 'muted', id: 'copy-note', role: 'status' }),
  ));
  if (report.checkpoints.length === 0) {
    parts.push(el('div', { class: 'verdict', 'data-testid': 'verdict', dataset: { outcome: 'unknown', errorClass: '' } },
      el('div', { class: 'icon', 'aria-hidden': 'true' }, '?'),
      el('div', { class: 'headline' }, 'No Spark checkpoint found'),
      el('div', { class: 'detail' }, `${report.input.name} holds ${report.input.entries} entries, none of which looks like a checkpoint (metadata, offsets/, commits/, state/).`)));
  }
  const diag = el('div', { id: 'panel-diagnosis', role: 'tabpanel', 'aria-labelledby': 'tab-diagnosis' });
  for (const c of report.checkpoints) diag.append(renderCheckpoint(c, report));
  diag.append(renderFiles());
  const statePanelEl = el('div', { id: 'panel-state', role: 'tabpanel', 'aria-labelledby': 'tab-state', hidden: true, class: 'state-browser', 'data-testid': 'state-panel' });
  const stateWasOpen = document.querySelector('#tab-state')?.getAttribute('aria-selected') === 'true';
  resetStateBrowser();
  parts.push(renderTabs(), diag, statePanelEl);
  root.replaceChildren(...parts);
  if (stateWasOpen) selectTab('state');
}

function renderCheckpoint(c, report) {
  const r = c.restart;
  const sec = el('section', { class: 'checkpoint', dataset: { root: c.root } });
  const head = el('div', { class: 'checkpoint-head' },
    el('h2', {}, c.root ? `Checkpoint ${c.root}` : `Checkpoint ${report.input.name}`),
    el('span', { class: 'muted' }, `${c.kind.replace('_', ' ')} · ${fmtBytes(report.input.bytes)} · ${report.input.entries} entries`));
  const verdict = el('div', {
    class: 'verdict', 'data-testid': 'verdict', role: 'status',
    dataset: { outcome: r.outcome, errorClass: r.error_class || '' },
  },
  el('div', { class: 'icon', 'aria-hidden': 'true' }, VERDICT_ICON[r.outcome] || '?'),
  el('div', { class: 'headline' }, verdictText(c)),
  el('div', { class: 'detail' }, `Assuming a restart on Spark ${r.assumed_spark_version} (change it above).`,
    r.exception ? ` Exception: ${r.exception}.` : ''),
  r.summary ? el('div', { class: 'detail' }, r.summary) : null);
  const facts = el('ul', { class: 'facts' },
    el('li', {}, 'Query id ', el('b', {}, c.query_id || '—')),
    el('li', {}, 'Last planned batch ', el('b', {}, c.last_batch_id ?? '—')),
    el('li', {}, 'Last committed batch ', el('b', {}, c.last_committed_batch_id ?? '—')),
    r.state_version_loaded !== undefined && r.state_version_loaded !== null ? el('li', {}, 'State version loaded ', el('b', {}, r.state_version_loaded)) : null,
    el('li', {}, 'Findings ', el('b', {}, c.findings.length)));

  const findings = sortedFindings(c);
  const fpanel = el('div', { class: 'panel' }, el('h3', {}, `Findings (${findings.length})`),
    findings.length ? el('div', { class: 'findings' }, findings.map((f, i) => renderFinding(f, c, i === 0 && f.severity !== 'info')))
      : el('p', { class: 'muted' }, 'No findings.'));
  const needs = c.needs && c.needs.length ? el('div', { class: 'panel' }, el('h3', {}, 'To sharpen the diagnosis'), el('ul', { 'data-testid': 'needs' }, c.needs.map((n) => el('li', {}, pageWording(n))))) : null;

  sec.append(head, verdict, facts, fpanel, needs || '',
    el('div', { class: 'grid2' },
      el('div', { class: 'panel plot' }, el('h3', {}, 'Batch timeline'), renderTimeline(c)),
      el('div', {}, renderSources(c))),
    renderOperators(c), renderConfs(c));
  if (c.dstream) sec.append(renderDstream(c.dstream));
  return sec;
}

/**
 * The core's hints speak to the CLI ("give --spark-version X.Y.Z", "give --conf k=v"); on the page they point at the
 * page's own controls instead. The core's text is not changed, only reworded here.
 */
function pageWording(text) {
  const cap = (m, s) => (/^[A-Z]/.test(m) ? s[0].toUpperCase() + s.slice(1) : s);
  return String(text)
    .replace(/give --spark-version X\.Y\.Z for the version you restart with/gi, (m) => cap(m, 'pick the Spark version you restart with above ("Restart with Spark")'))
    .replace(/give --spark-version(\s+\S+)?/gi, (m) => cap(m, 'pick the Spark version above'))
    .replace(/give --conf ([\w.-]+)=([^\s.;,)]+) if your session disables it/gi, (m, k, v) => cap(m, `if your restarted session sets ${k}=${v}, the verdict may differ`))
    .replace(/give --conf ([\w.-]+)=<[^>]*>/gi, (m, k) => cap(m, `the verdict changes if the restarted session sets ${k} to another value`))
    .replace(/give --conf ([\w.-]+)=([^\s.;,)]+)/gi, (m, k, v) => cap(m, `the verdict may differ when the restarted session sets ${k}=${v}`))
    .replace(/--error-text\b/gi, 'the error box above');
}

function renderFinding(f, c, open) {
  const d = el('details', { class: 'finding', dataset: { findingCode: f.code, severity: f.severity } });
  if (open) d.open = true;
  if (f.explains_error_text) d.dataset.explains = 'true';
  d.append(el('summary', {},
    el('span', { class: `badge ${f.severity}` }, f.severity),
    f.explains_error_text ? el('span', { class: 'badge explains' }, 'explains your error') : null,
    el('span', { class: 'title' }, f.title),
    el('span', { class: 'code mono' }, f.code)));
  const body = el('div', { class: 'body' });
  if (f.error_classes && f.error_classes.length) {
    body.append(el('h4', {}, 'Spark error classes'), el('div', {}, f.error_classes.map((e, i) => [i ? ', ' : '', el('code', {}, e)])));
  }
  if (f.evidence && f.evidence.length) {
    body.append(el('h4', {}, 'Evidence'), el('ul', {}, f.evidence.map((e) => el('li', {},
      pathLink(c.root, e.path), e.offset !== undefined && e.offset !== null ? ` (byte ${e.offset})` : '', ': ', e.detail))));
  }
  if (f.why) body.append(el('h4', {}, 'Why'), el('p', {}, f.why));
  if (f.fix && f.fix.length) body.append(el('h4', {}, 'Fix, safest first'), el('ol', {}, f.fix.map((s) => el('li', {}, s))));
  d.append(body);
  return d;
}

/** The batch timeline: offsets vs commits per batch id, batch timestamps and watermark; gaps and the tail marked. */
function renderTimeline(c) {
  const all = c.batches || [];
  if (all.length === 0) return el('p', { class: 'muted' }, 'No batches in offsets/ or commits/.');
  const batches = all.slice(-MAX_PLOT_BATCHES);
  const byId = new Map(batches.map((b) => [b.batch_id, b]));
  const lo = batches[0].batch_id;
  const hi = batches[batches.length - 1].batch_id;
  const span = Math.max(1, hi - lo + 1);
  const W = 640; const padL = 96; const padR = 12;
  const plotW = W - padL - padR;
  const cw = plotW / span;
  // Two small line charts, each on its own time axis: batch timestamps (processing time) and the watermark
  // (event time) usually lie far apart, so one shared axis would flatten both.
  const seriesDefs = [['timestamp_ms', 'batch timestamp', 'line-ts', 'dot-ts'], ['watermark_ms', 'watermark', 'line-wm', 'dot-wm']]
    .filter(([key]) => batches.some((b) => b[key] !== null && b[key] !== undefined && b[key] > 0));
  const hasTimes = seriesDefs.length > 0;
  const subH = 46; const subGap = 24; const top = 16; const laneH = 18; const laneGap = 6;
  const lanesY = top + seriesDefs.length * (subH + subGap);
  const H = lanesY + 2 * laneH + laneGap + 28;
  const x = (id) => padL + (id - lo) * cw;
  const g = svg('svg', { viewBox: `0 0 ${W} ${H}`, role: 'img', 'aria-label': `Batch timeline for batches ${lo} to ${hi}` });
  g.append(svg('title', {}, `Batches ${lo}..${hi}: offsets and commits per batch id${hasTimes ? ', batch timestamps and watermark' : ''}`));
  const lastCommitted = c.last_committed_batch_id;
  seriesDefs.forEach(([key, label, lineCls, dotCls], k) => {
    const y0 = top + k * (subH + subGap);
    const pts0 = batches.filter((b) => b[key] !== null && b[key] !== undefined && b[key] > 0);
    const vals = pts0.map((b) => b[key]);
    const tmin = Math.min(...vals); const tmax = Math.max(...vals);
    const tspan = Math.max(1, tmax - tmin);
    const y = (t) => y0 + subH - ((t - tmin) / tspan) * subH;
    const fmtAxis = (t) => (tspan < 86400000 ? new Date(t).toISOString().slice(11, 19) : new Date(t).toISOString().slice(0, 16).replace('T', ' '));
    g.append(svg('line', { class: 'grid', x1: padL, x2: W - padR, y1: y0 + subH, y2: y0 + subH }));
    g.append(svg('line', { class: 'grid', x1: padL, x2: W - padR, y1: y0, y2: y0 }));
    g.append(svg('text', { class: 'axis', x: padL - 4, y: y0 + 4, 'text-anchor': 'end' }, fmtAxis(tmax)));
    if (tmax !== tmin) g.append(svg('text', { class: 'axis', x: padL - 4, y: y0 + subH + 3, 'text-anchor': 'end' }, fmtAxis(tmin)));
    g.append(svg('text', { class: 'label', x: W - padR, y: y0 - 4, 'text-anchor': 'end' }, label));
    const pts = pts0.map((b) => [x(b.batch_id) + cw / 2, tmax === tmin ? y0 + subH / 2 : y(b[key]), b]);
    if (pts.length > 1) g.append(svg('polyline', { class: lineCls, points: pts.map(([px, py]) => `${px.toFixed(1)},${py.toFixed(1)}`).join(' ') }));
    for (const [px, py, b] of pts) {
      g.append(svg('circle', { class: dotCls, cx: px.toFixed(1), cy: py.toFixed(1), r: Math.min(3, Math.max(1.5, cw / 3)) },
        svg('title', {}, `batch ${b.batch_id} ${label} ${fmtTime(b[key])}`)));
    }
  });
  const lanes = [['offsets', 'has_offsets', lanesY], ['commits', 'committed', lanesY + laneH + laneGap]];
  for (const [label, , ly] of lanes) g.append(svg('text', { class: 'label', x: padL - 6, y: ly + laneH / 2 + 4, 'text-anchor': 'end' }, label));
  for (let id = lo; id <= hi; id++) {
    const b = byId.get(id);
    const bx = x(id) + Math.min(1, cw * 0.1);
    const bw = Math.max(1, cw - Math.min(2, cw * 0.2));
    if (!b) {
      g.append(svg('rect', { class: 'gap', x: x(id), y: lanesY, width: cw, height: 2 * laneH + laneGap }, svg('title', {}, `batch ${id}: neither offsets nor commits (gap)`)));
      continue;
    }
    for (const [label, key, ly] of lanes) {
      const present = b[key];
      const isTail = label === 'offsets' && present && !b.committed && (lastCommitted === null || lastCommitted === undefined || id > lastCommitted);
      const cls = !present ? 'cell-missing' : isTail ? 'cell-tail' : `cell-${label}`;
      const tip = `batch ${id}: ${label}/${id} ${present ? 'present' : 'absent'}${isTail ? ' (planned, not committed)' : ''}` +
        (label === 'offsets' && b.timestamp_ms ? `, timestamp ${fmtTime(b.timestamp_ms)}` : '') +
        (label === 'offsets' && b.watermark_ms ? `, watermark ${fmtTime(b.watermark_ms)}` : '');
      g.append(svg('rect', { class: cls, x: bx.toFixed(2), y: ly, width: bw.toFixed(2), height: laneH, rx: Math.min(3, bw / 3) }, svg('title', {}, tip)));
    }
  }
  const tickEvery = Math.max(1, Math.ceil(span / 10));
  for (let id = lo; id <= hi; id += tickEvery) {
    g.append(svg('text', { class: 'axis', x: (x(id) + cw / 2).toFixed(1), y: H - 8, 'text-anchor': 'middle' }, id));
  }
  if ((hi - lo) % tickEvery !== 0) g.append(svg('text', { class: 'axis', x: (x(hi) + cw / 2).toFixed(1), y: H - 8, 'text-anchor': 'middle' }, hi));
  const missing = [];
  for (let id = lo; id <= hi; id++) if (!byId.has(id)) missing.push(id);
  const tail = batches.filter((b) => b.has_offsets && !b.committed && (lastCommitted === null || lastCommitted === undefined || b.batch_id > lastCommitted)).map((b) => b.batch_id);
  const legend = el('div', { class: 'legend' },
    el('span', {}, el('span', { class: 'sw offsets' }), 'offsets written'),
    el('span', {}, el('span', { class: 'sw commits' }), 'committed'),
    el('span', {}, el('span', { class: 'sw tail' }), 'planned, not committed'),
    el('span', {}, el('span', { class: 'sw missing' }), 'missing'),
    hasTimes ? el('span', {}, el('span', { class: 'sw ts' }), 'batch timestamp') : null,
    hasTimes ? el('span', {}, el('span', { class: 'sw wm' }), 'watermark') : null);
  const notes = [];
  if (all.length > batches.length) notes.push(`Showing the last ${batches.length} of ${all.length} batches.`);
  if (tail.length) notes.push(`Uncommitted tail: batch${tail.length > 1 ? 'es' : ''} ${tail.join(', ')}.`);
  if (missing.length) notes.push(`Gap: no files for batch${missing.length > 1 ? 'es' : ''} ${missing.slice(0, 20).join(', ')}${missing.length > 20 ? '…' : ''}.`);
  const lastTs = [...batches].reverse().find((b) => b.timestamp_ms)?.timestamp_ms;
  if (lastTs) notes.push(`Last batch timestamp ${fmtTime(lastTs)} (${fmtAge(lastTs)}).`);
  return el('div', {}, el('div', { class: 'plot-scroll' }, g), legend, notes.length ? el('p', { class: 'muted', 'data-testid': 'timeline-notes' }, notes.join(' ')) : null);
}

function table(headers, rows, rowAttrs) {
  return el('div', { class: 'table-wrap' }, el('table', {},
    el('thead', {}, el('tr', {}, headers.map((h) => el('th', { class: h.num ? 'num' : null, scope: 'col' }, h.label || h)))),
    el('tbody', {}, rows.map((cells, i) => el('tr', rowAttrs ? rowAttrs(i) : {}, cells.map((cell, j) => el('td', { class: headers[j].num ? 'num' : null }, cell)))))));
}

function renderSources(c) {
  if (!c.sources || c.sources.length === 0) return el('div', { class: 'panel' }, el('h3', {}, 'Sources'), el('p', { class: 'muted' }, 'No source offsets recorded.'));
  return el('div', { class: 'panel' }, el('h3', {}, 'Sources (latest offsets)'),
    table([{ label: '#', num: true }, 'kind', 'latest offset'],
      c.sources.map((s) => [String(s.index), s.name ? `${s.kind} (${s.name})` : s.kind,
        el('code', {}, s.latest_offset === null || s.latest_offset === undefined ? '—' : JSON.stringify(s.latest_offset))])));
}

function renderConfs(c) {
  const keys = Object.keys(c.conf || {});
  if (keys.length === 0) return el('div', { class: 'panel' }, el('h3', {}, 'Recorded confs'), el('p', { class: 'muted' }, 'No confs recorded in the latest offsets file.'));
  const forced = new Map((c.forced_conf || []).map((f) => [f.key, f]));
  const rows = keys.map((k) => {
    const f = forced.get(k);
    return [el('code', {}, k), el('code', {}, c.conf[k]),
      f ? el('span', {}, el('strong', {}, 'forced'), f.session !== undefined && f.session !== null ? ` (session sets ${f.session})` : '', f.note ? ` — ${f.note}` : '') : ''];
  });
  return el('div', { class: 'panel confs' }, el('h3', {}, `Recorded confs (${keys.length}; ${forced.size} forced on restart)`),
    table(['conf', 'recorded value', 'on restart'], rows, (i) => (forced.has(keys[i]) ? { class: 'forced', dataset: { forced: 'true' } } : {})));
}

function renderOperators(c) {
  if (!c.operators || c.operators.length === 0) return el('div', { class: 'panel' }, el('h3', {}, 'Stateful operators'), el('p', { class: 'muted' }, 'No state/ directory: the query is stateless (or its state is missing).'));
  const partitionsExpected = Number((c.conf || {})['spark.sql.shuffle.partitions']);
  const rows = c.operators.map((o) => {
    const short = Number.isFinite(partitionsExpected) && partitionsExpected > 0 && o.partitions < partitionsExpected;
    return [String(o.operator_id), o.name || '—', o.store_names.join(', '),
      short ? el('span', { class: 'missing', title: `spark.sql.shuffle.partitions is ${partitionsExpected}` }, `${o.partitions} of ${partitionsExpected} (missing)`) : String(o.partitions),
      o.provider, o.latest_version ?? '—'];
  });
  return el('div', { class: 'panel' }, el('h3', {}, 'Stateful operators × partitions × versions'),
    table([{ label: 'op', num: true }, 'name', 'stores', { label: 'partitions', num: true }, 'provider', { label: 'latest version', num: true }], rows),
    stateMatrix(c, partitionsExpected));
}

/**
 * State files per operator/store and partition, from the input's file listing (what is on disk, not a diagnosis):
 * the range of versions with a delta/changelog/zip file, snapshots, and versions missing inside that range.
 */
function stateMatrix(c, partitionsExpected) {
  const prefix = c.root ? `${c.root}/state/` : 'state/';
  const rows = new Map(); // "op/store" -> Map(partition -> {versions:Set, snaps:Set})
  let maxPart = -1;
  for (const [p] of state.last.entries) {
    if (!p.startsWith(prefix)) continue;
    const parts = p.slice(prefix.length).split('/');
    if (parts.length < 3 || parts.length > 4 || !/^\d+$/.test(parts[0]) || !/^\d+$/.test(parts[1])) continue;
    const m = /^(\d+)(?:_[0-9a-fA-F-]+)?\.(delta|snapshot|changelog|zip)$/.exec(parts[parts.length - 1]);
    if (!m) continue;
    const key = `${parts[0]}/${parts.length === 4 ? parts[2] : 'default'}`;
    const part = Number(parts[1]);
    maxPart = Math.max(maxPart, part);
    if (!rows.has(key)) rows.set(key, new Map());
    const cell = rows.get(key).get(part) || { versions: new Set(), snaps: new Set() };
    if (m[2] === 'snapshot' || m[2] === 'zip') cell.snaps.add(Number(m[1]));
    if (m[2] !== 'snapshot') cell.versions.add(Number(m[1]));
    rows.get(key).set(part, cell);
  }
  if (rows.size === 0) return null;
  const nParts = Math.max(maxPart + 1, Number.isFinite(partitionsExpected) ? partitionsExpected : 0);
  const shownParts = Math.min(nParts, 32);
  const header = ['operator/store', ...Array.from({ length: shownParts }, (_, i) => `p${i}`)];
  const body = [...rows.keys()].sort().map((key) => [el('code', {}, key), ...Array.from({ length: shownParts }, (_, i) => {
    const cell = rows.get(key).get(i);
    if (!cell) return el('span', { class: 'missing', title: `no state files for partition ${i}` }, 'missing');
    const all = [...cell.versions, ...cell.snaps];
    const lo = Math.min(...all); const hi = Math.max(...all);
    const gaps = [];
    const vs = [...cell.versions].sort((a, b) => a - b);
    for (let k = 1; k < vs.length; k++) for (let v = vs[k - 1] + 1; v < vs[k] && gaps.length < 5; v++) gaps.push(v);
    return el('span', { title: `versions ${lo}..${hi}; snapshots ${[...cell.snaps].sort((a, b) => a - b).join(', ') || 'none'}` },
      `${lo}–${hi}`, cell.snaps.size ? el('span', { class: 'muted' }, ` · ${cell.snaps.size} snap`) : '',
      gaps.length ? el('span', { class: 'missing' }, ` · no ${gaps.join(', ')}`) : '');
  })]);
  return el('details', { class: 'state-matrix', open: true },
    el('summary', {}, 'State files per partition (versions on disk)'),
    table(header, body),
    nParts > shownParts ? el('p', { class: 'muted' }, `Showing ${shownParts} of ${nParts} partitions.`) : null,
    state.last.entriesTotal > state.last.entries.length ? el('p', { class: 'muted' }, 'The file listing was cut; some files may not be counted.') : null);
}

function renderDstream(d) {
  return el('div', { class: 'panel' }, el('h3', {}, 'DStream checkpoint'),
    el('p', {}, `Checkpoint times: ${d.checkpoint_times_ms.map(fmtTime).join(', ') || '—'}`),
    table(['class', 'serialVersionUID'], d.classes.map((k) => [el('code', {}, k.name), el('code', {}, k.serial_version_uid)])),
    d.allowed_classes_setting ? el('p', {}, 'Allow-list setting: ', el('code', {}, d.allowed_classes_setting)) : null);
}

function renderFiles() {
  const { entries, entriesTotal } = state.last;
  const d = el('details', { class: 'panel files' }, el('summary', {}, `Files in the input (${entriesTotal})`));
  const shown = entries.slice(0, 5000);
  d.append(el('div', { class: 'files-list' }, table(['path', { label: 'size', num: true }],
    shown.map(([p, s]) => [s <= 256 * 1024 ? el('button', { type: 'button', class: 'linkish', onclick: () => showEntry(p) }, p) : el('code', { title: 'too large to show' }, p), fmtBytes(s)]))));
  if (entriesTotal > shown.length) d.append(el('p', { class: 'muted' }, `Listing the first ${shown.length} of ${entriesTotal} files.`));
  return d;
}

function hexdump(bytes) {
  const lines = [];
  for (let i = 0; i < Math.min(bytes.length, 4096); i += 16) {
    const row = bytes.subarray(i, i + 16);
    const hex = [...row].map((b) => b.toString(16).padStart(2, '0')).join(' ');
    const asc = [...row].map((b) => (b >= 32 && b < 127 ? String.fromCharCode(b) : '.')).join('');
    lines.push(`${i.toString(16).padStart(8, '0')}  ${hex.padEnd(47)}  ${asc}`);
  }
  if (bytes.length > 4096) lines.push(`… ${bytes.length - 4096} more bytes`);
  return lines.join('\n');
}

async function showEntry(path) {
  const dlg = $('#file-dialog');
  $('#file-dialog-title').textContent = path;
  $('#file-dialog-meta').textContent = 'Reading…';
  $('#file-dialog-body').textContent = '';
  if (!dlg.open) dlg.showModal();
  try {
    const m = await request({ type: 'read-entry', path });
    const bytes = m.bytes;
    let text = null;
    try { text = new TextDecoder('utf-8', { fatal: true }).decode(bytes); } catch (_) { text = null; }
    const binary = text === null || /[\u0000-\u0008\u000e-\u001f]/.test(text);
    $('#file-dialog-meta').textContent = `${fmtBytes(m.size)}${binary ? ', binary (hex dump)' : ', text'}`;
    $('#file-dialog-body').textContent = binary ? hexdump(bytes) : text;
  } catch (e) {
    $('#file-dialog-meta').textContent = e.message || String(e);
  }
}

// ---------------------------------------------------------------------------------------------------------------
// State browser (the "State" tab). Nothing is decoded until the tab is opened: the worker then lists operators,
// stores, schemas and sizes by version (`state-overview`), and decodes one selection at a time (`state-rows`),
// which it keeps for paging and search.
const STATE_PAGE_SIZES = [10, 100, 500];
const MAX_PLOT_BARS = 64;
const sb = {
  overview: null, // parsed overview, or null
  loading: null, // the overview request in flight
  seq: 0, // drops stale row responses
  pending: 0,
  sel: null, // {operator_id, store_name, state_var, join_side, batch_id}
  partition: null,
  search: '',
  page: 0,
  result: null,
  searchTimer: null,
  pageSize: 100,
};

function resetStateBrowser() {
  sb.overview = null; sb.loading = null; sb.sel = null; sb.partition = null; sb.search = ''; sb.page = 0; sb.result = null;
  sb.seq += 1;
}

/** The tabs above the results: the diagnosis (default) and the state browser. */
function renderTabs() {
  const tab = (id, label, selected) => el('button', {
    type: 'button', role: 'tab', id: `tab-${id}`, 'aria-controls': `panel-${id}`, 'aria-selected': String(selected),
    tabindex: selected ? '0' : '-1', 'data-testid': id === 'state' ? 'state-tab' : 'diagnosis-tab',
    onclick: () => selectTab(id),
  }, label);
  const bar = el('div', { class: 'tabs', role: 'tablist', 'aria-label': 'Views' },
    tab('diagnosis', 'Diagnosis', true), tab('state', 'State', false));
  bar.addEventListener('keydown', (ev) => {
    if (ev.key !== 'ArrowRight' && ev.key !== 'ArrowLeft') return;
    const next = document.querySelector('#tab-state').getAttribute('aria-selected') === 'true' ? 'diagnosis' : 'state';
    selectTab(next);
    document.querySelector(`#tab-${next}`).focus();
  });
  return bar;
}

function selectTab(id) {
  for (const t of ['diagnosis', 'state']) {
    const on = t === id;
    const b = document.querySelector(`#tab-${t}`);
    if (!b) continue;
    b.setAttribute('aria-selected', String(on));
    b.tabIndex = on ? 0 : -1;
    document.querySelector(`#panel-${t}`).hidden = !on;
  }
  if (id === 'state') openStateBrowser();
}

function statePanel() {
  return document.querySelector('#panel-state');
}

async function openStateBrowser() {
  const panel = statePanel();
  if (!panel || sb.overview || sb.loading) return;
  panel.dataset.state = 'loading';
  panel.replaceChildren(el('div', { class: 'status-line' },
    el('progress', { id: 'state-progress' }), el('span', { id: 'state-status', role: 'status' }, 'Listing the state stores…')));
  const mySeq = sb.seq;
  sb.loading = request({ type: 'state-overview' }, (m) => stateProgress(m, 'Listing'));
  try {
    const m = await sb.loading;
    if (mySeq !== sb.seq) return;
    sb.overview = JSON.parse(m.overview);
    renderStateBrowser();
  } catch (e) {
    if (mySeq !== sb.seq) return;
    panel.dataset.state = 'error';
    panel.replaceChildren(stateError({ message: e.message || String(e) }));
  } finally {
    sb.loading = null;
  }
}

function stateProgress(m, verb) {
  const bar = document.querySelector('#state-progress');
  if (bar && m.total > 0) { bar.max = m.total; bar.value = Math.min(m.done, m.total); }
  const s = document.querySelector('#state-status');
  if (s) s.textContent = `${verb}: reading ${m.path} (${m.done} of ${m.total} files)…`;
}

function stateError(e) {
  return el('div', { class: 'message state-error', role: 'alert', 'data-testid': 'state-error' },
    el('strong', {}, 'The state could not be read. '),
    e.message ? `${e.message}${/[.!?]$/.test(e.message) ? '' : '.'}` : '',
    e.path ? el('div', {}, 'File: ', el('code', {}, e.path), e.offset !== undefined && e.offset !== null ? `, at byte ${e.offset}` : '') : null,
    e.error_class ? el('div', {}, 'Spark error class: ', el('code', {}, e.error_class)) : null);
}

/** The choices of the "store" picker for one operator: stores, state variables (transformWithState), join sides. */
function storeChoices(op) {
  const out = [];
  if (op.join) {
    out.push({ label: 'join side: left (joined input rows)', sel: { store_name: 'default', join_side: 'left' } });
    out.push({ label: 'join side: right (joined input rows)', sel: { store_name: 'default', join_side: 'right' } });
  }
  for (const s of op.stores) {
    if (s.state_vars && s.state_vars.length) {
      for (const v of s.state_vars) out.push({ label: `${s.name} · state variable ${v}`, sel: { store_name: s.name, state_var: v }, store: s });
      const timers = (s.schema_v3?.column_families || []).some((c) => /^\$(proc|event)Timers_keyToTimestamp$/.test(c.name));
      if (timers) out.push({ label: `${s.name} · registered timers`, sel: { store_name: s.name, read_registered_timers: true }, store: s });
    } else {
      out.push({ label: `${s.name} (${s.provider})`, sel: { store_name: s.name }, store: s });
    }
  }
  return out;
}

function currentOperator() {
  return sb.overview.operators.find((o) => o.operator_id === sb.sel.operator_id) || sb.overview.operators[0];
}

function currentStore() {
  const op = currentOperator();
  return op.stores.find((s) => s.name === sb.sel.store_name) || null;
}

function renderStateBrowser() {
  const panel = statePanel();
  const o = sb.overview;
  if (!o.operators.length) {
    panel.dataset.state = 'empty';
    panel.replaceChildren(el('p', { class: 'muted', 'data-testid': 'state-empty' }, 'This input has no state/ folder: the query is stateless, or its state is missing.'));
    return;
  }
  if (!sb.sel) {
    const op = o.operators[0];
    sb.sel = { operator_id: op.operator_id, ...(storeChoices(op).find((c) => !c.sel.join_side) || storeChoices(op)[0]).sel, batch_id: null };
  }
  const op = currentOperator();
  const choices = storeChoices(op);
  const choiceIdx = Math.max(0, choices.findIndex((c) => c.sel.store_name === sb.sel.store_name
    && (c.sel.state_var || null) === (sb.sel.state_var || null) && (c.sel.join_side || null) === (sb.sel.join_side || null)
    && Boolean(c.sel.read_registered_timers) === Boolean(sb.sel.read_registered_timers)));
  const opSel = el('select', { id: 'state-operator', onchange: (ev) => {
    const next = o.operators.find((x) => String(x.operator_id) === ev.target.value);
    const c = storeChoices(next);
    sb.sel = { operator_id: next.operator_id, ...(c.find((x) => !x.sel.join_side) || c[0]).sel, batch_id: sb.sel.batch_id };
    sb.partition = null; sb.page = 0;
    renderStateBrowser();
  } }, o.operators.map((x) => el('option', { value: x.operator_id, selected: x.operator_id === op.operator_id },
    `${x.operator_id}${x.operator_name ? ` · ${x.operator_name}` : ''}`)));
  const storeSel = el('select', { id: 'state-store', onchange: (ev) => {
    const c = choices[Number(ev.target.value)];
    sb.sel = { operator_id: op.operator_id, ...c.sel, batch_id: sb.sel.batch_id };
    sb.partition = null; sb.page = 0;
    renderStateBrowser();
  } }, choices.map((c, i) => el('option', { value: i, selected: i === choiceIdx }, c.label)));
  const partSel = el('select', { id: 'state-partition', onchange: (ev) => {
    sb.partition = ev.target.value === '' ? null : Number(ev.target.value); sb.page = 0; loadStateRows();
  } }, el('option', { value: '' }, 'all'), op.partitions.map((p) => el('option', { value: p, selected: sb.partition === p }, `partition ${p}`)));
  const last = o.committed_batches.last;
  const batchIn = el('input', { id: 'state-batch', type: 'number', min: 0, step: 1, inputmode: 'numeric',
    placeholder: last === null || last === undefined ? 'none committed' : `${last} (last committed)`,
    value: sb.sel.batch_id ?? '', onchange: (ev) => {
      const v = ev.target.value.trim();
      sb.sel = { ...sb.sel, batch_id: v === '' ? null : Math.max(0, Math.floor(Number(v))) };
      sb.page = 0; loadStateRows();
    } });
  const search = el('input', { id: 'state-search', type: 'search', placeholder: 'text in the key JSON', value: sb.search,
    'aria-describedby': 'state-search-help', oninput: (ev) => {
      clearTimeout(sb.searchTimer);
      sb.searchTimer = setTimeout(() => { sb.search = ev.target.value; sb.page = 0; loadStateRows(); }, 200);
    } });
  const sizeSel = el('select', { id: 'state-page-size', onchange: (ev) => { sb.pageSize = Number(ev.target.value); sb.page = 0; loadStateRows(); } },
    STATE_PAGE_SIZES.map((n) => el('option', { value: n, selected: n === sb.pageSize }, `${n} rows`)));
  const pickers = el('div', { class: 'controls state-pickers' },
    el('div', { class: 'control' }, el('label', { for: 'state-operator' }, 'Operator'), opSel),
    el('div', { class: 'control' }, el('label', { for: 'state-store' }, 'Store'), storeSel),
    el('div', { class: 'control' }, el('label', { for: 'state-partition' }, 'Partition'), partSel),
    el('div', { class: 'control' }, el('label', { for: 'state-batch' }, 'Batch id'), batchIn),
    el('div', { class: 'control' }, el('label', { for: 'state-page-size' }, 'Rows per page'), sizeSel),
    el('div', { class: 'control span3' }, el('label', { for: 'state-search' }, 'Search keys'), search,
      el('span', { id: 'state-search-help', class: 'muted small' }, 'Rows whose key (as JSON) contains this text, ignoring case.')));
  const store = currentStore();
  panel.dataset.state = 'ready';
  panel.replaceChildren(...[
    el('p', { class: 'muted' }, `Read in your browser with the same options as Spark's statestore reader (operatorId, storeName, stateVarName, joinSide, batchId). Committed batches: ${o.committed_batches.count ? `${o.committed_batches.first}–${last}` : 'none'}.`),
    pickers,
    el('div', { class: 'status-line' }, el('progress', { id: 'state-progress', hidden: true }), el('span', { id: 'state-status', role: 'status', 'aria-live': 'polite' })),
    el('div', { id: 'state-result' }),
    el('div', { class: 'grid2' },
      el('div', { class: 'panel plot' }, el('h3', {}, 'Rows and bytes per partition'), el('div', { id: 'state-partition-plot' }, el('p', { class: 'muted' }, 'Shown once the rows are read.'))),
      el('div', { class: 'panel plot' }, el('h3', {}, 'State size on disk by version'), renderVersionPlot(op, store))),
    renderSchemas(store, sb.sel.state_var),
    o.notes && o.notes.length ? el('details', { class: 'panel' }, el('summary', {}, `Files that could not be read for sizes (${o.notes.length})`),
      el('ul', {}, o.notes.slice(0, 50).map((n) => el('li', {}, el('code', {}, n.path), n.offset !== null && n.offset !== undefined ? ` at byte ${n.offset}` : '', `: ${n.message}`)))) : null,
  ].filter(Boolean));
  loadStateRows();
}

async function loadStateRows() {
  const panel = statePanel();
  const mySeq = ++sb.seq;
  sb.pending += 1;
  panel.dataset.pending = String(sb.pending);
  const bar = document.querySelector('#state-progress');
  const status = document.querySelector('#state-status');
  const slow = setTimeout(() => { if (bar) bar.hidden = false; }, 150);
  if (status) status.textContent = 'Reading state…';
  try {
    const m = await request({ type: 'state-rows', selection: sb.sel, partition: sb.partition, search: sb.search, page: sb.page, page_size: sb.pageSize },
      (p) => stateProgress(p, 'Decoding'));
    if (mySeq !== sb.seq) return;
    const target = document.querySelector('#state-result');
    if (m.type === 'state-error') {
      const e = JSON.parse(m.error);
      sb.result = null;
      target.replaceChildren(stateError(e));
      panel.dataset.rows = 'error';
      document.querySelector('#state-partition-plot')?.replaceChildren(el('p', { class: 'muted' }, 'No rows: the state could not be read.'));
      if (status) status.textContent = '';
      return;
    }
    sb.result = JSON.parse(m.result);
    sb.page = sb.result.page;
    renderStateRows();
    const r = sb.result;
    if (status) status.textContent = `${r.total_rows} rows at batch ${r.batch_id} (version ${r.batch_id + 1}), decoded in ${Math.round(r.ms)} ms.`;
    panel.dataset.rows = 'ready';
  } catch (e) {
    if (mySeq !== sb.seq) return;
    document.querySelector('#state-result')?.replaceChildren(stateError({ message: e.message || String(e) }));
    panel.dataset.rows = 'error';
  } finally {
    clearTimeout(slow);
    if (bar) bar.hidden = true;
    sb.pending -= 1;
    panel.dataset.pending = String(sb.pending);
  }
}

/** A JSON value as compact readable text: objects as `name: value` pairs, strings unquoted. */
function jsonCell(v) {
  if (v === null || v === undefined) return el('span', { class: 'muted' }, 'null');
  if (Array.isArray(v)) return el('span', { class: 'jv' }, '[', v.map((x, i) => [i ? ', ' : '', jsonCell(x)]), ']');
  if (typeof v === 'object') {
    const keys = Object.keys(v);
    return el('span', { class: 'jv' }, keys.map((k, i) => [i ? ', ' : '', el('span', { class: 'jk' }, `${k}: `),
      typeof v[k] === 'object' && v[k] !== null && !Array.isArray(v[k]) ? ['{', jsonCell(v[k]), '}'] : jsonCell(v[k])]));
  }
  return el('span', { class: typeof v === 'string' ? 'js' : 'jn' }, String(v));
}

function renderStateRows() {
  const r = sb.result;
  const go = (p) => { if (p >= 0 && p < r.pages && p !== r.page) { sb.page = p; loadStateRows(); } };
  const pager = el('div', { class: 'pager', role: 'group', 'aria-label': 'Pages of rows' },
    el('button', { type: 'button', 'data-testid': 'state-prev', disabled: r.page === 0, onclick: () => go(r.page - 1), 'aria-label': 'Previous page' }, '‹ Previous'),
    el('span', { 'data-testid': 'state-page' }, `Page ${r.page + 1} of ${r.pages}`),
    el('button', { type: 'button', 'data-testid': 'state-next', disabled: r.page + 1 >= r.pages, onclick: () => go(r.page + 1), 'aria-label': 'Next page' }, 'Next ›'),
    el('span', { class: 'muted' }, r.matching_rows === r.total_rows ? `${r.total_rows} rows` : `${r.matching_rows} of ${r.total_rows} rows match`));
  const tbl = el('table', { 'data-testid': 'state-rows', 'data-row-count': r.rows.length, 'data-total-rows': r.matching_rows, 'data-all-rows': r.total_rows,
    'aria-label': 'State rows' },
  el('thead', {}, el('tr', {}, el('th', { class: 'num', scope: 'col' }, 'partition'), el('th', { scope: 'col' }, 'key'), el('th', { scope: 'col' }, 'value'))),
  el('tbody', {}, r.rows.map((row) => el('tr', { 'data-partition': row.partition_id },
    el('td', { class: 'num' }, String(row.partition_id)), el('td', { class: 'mono' }, jsonCell(row.key)), el('td', { class: 'mono' }, jsonCell(row.value))))));
  const wrap = el('div', { class: 'table-wrap state-table', tabindex: '0', 'aria-label': 'State rows; PageUp/PageDown change the page' }, tbl);
  wrap.addEventListener('keydown', (ev) => {
    if (ev.key === 'PageDown' || (ev.key === 'ArrowRight' && ev.altKey)) { ev.preventDefault(); go(r.page + 1); }
    if (ev.key === 'PageUp' || (ev.key === 'ArrowLeft' && ev.altKey)) { ev.preventDefault(); go(r.page - 1); }
    if (ev.key === 'Home' && ev.ctrlKey) { ev.preventDefault(); go(0); }
    if (ev.key === 'End' && ev.ctrlKey) { ev.preventDefault(); go(r.pages - 1); }
  });
  const hadFocus = document.activeElement && document.activeElement.classList.contains('state-table');
  // The table is always there (tests and scripts read its counts); an empty page says why.
  const empty = r.rows.length ? null
    : el('p', { class: 'muted' }, r.total_rows ? 'No row matches.' : 'The store is empty at this batch.');
  document.querySelector('#state-result').replaceChildren(pager, wrap, empty || '');
  if (hadFocus) document.querySelector('.state-table')?.focus();
  document.querySelector('#state-partition-plot')?.replaceChildren(renderPartitionPlot(r.partitions));
}

/** Bars per partition: rows (top) and bytes (bottom: files on disk, decoded JSON as a thin bar). */
function renderPartitionPlot(parts) {
  if (!parts.length) return el('p', { class: 'muted' }, 'No partitions.');
  const shown = parts.slice(0, MAX_PLOT_BARS);
  const W = 560; const H = 220; const L = 56; const B = 28; const gap = 14;
  const half = (H - B - gap - 10) / 2;
  const bw = (W - L - 8) / shown.length;
  const maxRows = Math.max(1, ...shown.map((p) => p.rows));
  const maxBytes = Math.max(1, ...shown.map((p) => Math.max(p.file_bytes, p.decoded_bytes)));
  const kids = [];
  const axis = (y, label, value) => [svg('text', { x: L - 6, y: y + 4, 'text-anchor': 'end', class: 'tick' }, value),
    svg('text', { x: 4, y: y + 4, class: 'tick' }, label)];
  kids.push(...axis(8, '', String(maxRows)), svg('text', { x: 4, y: 8 + half / 2, class: 'tick' }, 'rows'));
  kids.push(...axis(8 + half + gap, '', fmtBytes(maxBytes)), svg('text', { x: 4, y: 8 + half + gap + half / 2, class: 'tick' }, 'bytes'));
  shown.forEach((p, i) => {
    const x = L + i * bw + bw * 0.12; const w = Math.max(1, bw * 0.76);
    const rh = (p.rows / maxRows) * half;
    kids.push(svg('rect', { x, y: 8 + half - rh, width: w, height: rh, class: 'bar-rows' },
      svg('title', {}, `partition ${p.partition}: ${p.rows} rows`)));
    const fh = (p.file_bytes / maxBytes) * half; const dh = (p.decoded_bytes / maxBytes) * half;
    const y0 = 8 + half + gap + half;
    kids.push(svg('rect', { x, y: y0 - fh, width: w * 0.62, height: fh, class: 'bar-bytes' },
      svg('title', {}, `partition ${p.partition}: ${fmtBytes(p.file_bytes)} of state files on disk (all versions)`)));
    kids.push(svg('rect', { x: x + w * 0.66, y: y0 - Math.max(dh, p.decoded_bytes > 0 ? 1 : 0), width: w * 0.34, height: Math.max(dh, p.decoded_bytes > 0 ? 1 : 0), class: 'bar-decoded' },
      svg('title', {}, `partition ${p.partition}: ${fmtBytes(p.decoded_bytes)} of decoded rows (JSON) at this batch`)));
    if (shown.length <= 32 || i % Math.ceil(shown.length / 32) === 0) {
      kids.push(svg('text', { x: x + w / 2, y: H - 10, 'text-anchor': 'middle', class: 'tick' }, String(p.partition)));
    }
  });
  const mean = shown.reduce((a, p) => a + p.rows, 0) / shown.length;
  const maxP = shown.reduce((a, p) => (p.rows > a.rows ? p : a), shown[0]);
  const skew = mean > 0 ? maxP.rows / mean : 0;
  return el('div', {},
    svg('svg', { viewBox: `0 0 ${W} ${H}`, class: 'plot-svg', role: 'img', 'data-testid': 'state-partition-plot',
      'aria-label': `Rows and bytes for ${shown.length} partitions; largest partition ${maxP.partition} with ${maxP.rows} rows` }, kids),
    el('p', { class: 'legend' }, el('span', {}, el('span', { class: 'sw rows' }), 'rows'),
      el('span', {}, el('span', { class: 'sw bytes' }), 'state files on disk (all versions)'),
      el('span', {}, el('span', { class: 'sw decoded' }), 'decoded rows (JSON) at this batch'),
      skew >= 2 ? el('strong', { class: 'skew', 'data-testid': 'state-skew' }, `Skew: partition ${maxP.partition} holds ${skew.toFixed(1)}× the mean rows`) : ''),
    parts.length > shown.length ? el('p', { class: 'muted' }, `Showing ${shown.length} of ${parts.length} partitions.`) : null);
}

/** State size on disk by version (all partitions; join sides: both stores of the side). */
function renderVersionPlot(op, store) {
  let versions;
  if (sb.sel.join_side) {
    const merged = new Map();
    for (const s of op.stores.filter((x) => x.name.startsWith(`${sb.sel.join_side}-`))) {
      for (const v of s.versions) {
        const m = merged.get(v.version) || { version: v.version, bytes: 0, files: 0, num_keys: null };
        m.bytes += v.bytes; m.files += v.files;
        merged.set(v.version, m);
      }
    }
    versions = [...merged.values()].sort((a, b) => a.version - b.version);
  } else {
    versions = store ? store.versions : [];
  }
  if (!versions.length) return el('p', { class: 'muted' }, 'No state files by version.');
  const shown = versions.slice(-MAX_PLOT_BARS * 2);
  const W = 560; const H = 220; const L = 64; const B = 28; const T = 10;
  const maxB = Math.max(1, ...shown.map((v) => v.bytes));
  const bw = (W - L - 8) / shown.length;
  const kids = [svg('text', { x: L - 6, y: T + 4, 'text-anchor': 'end', class: 'tick' }, fmtBytes(maxB)),
    svg('text', { x: L - 6, y: H - B + 4, 'text-anchor': 'end', class: 'tick' }, '0'),
    svg('line', { x1: L, x2: W - 4, y1: H - B, y2: H - B, class: 'grid' })];
  const ph = H - B - T;
  const pts = [];
  shown.forEach((v, i) => {
    const x = L + i * bw + bw * 0.15; const w = Math.max(1, bw * 0.7);
    const h = (v.bytes / maxB) * ph;
    const k = v.by_kind || {};
    const full = (k.snapshot || 0) + (k.zip || 0) + (k.sst || 0);
    const fh = Math.min(h, (full / maxB) * ph);
    const tip = `version ${v.version} (batch ${v.version - 1}): ${fmtBytes(v.bytes)} in ${v.files} files${Object.keys(k).length ? ` (${Object.entries(k).map(([n, b]) => `${n} ${fmtBytes(b)}`).join(', ')})` : ''}${v.num_keys !== null && v.num_keys !== undefined ? `, ${v.num_keys} keys` : ''}`;
    kids.push(svg('rect', { x, y: H - B - h, width: w, height: h - fh, class: 'bar-bytes' }, svg('title', {}, tip)));
    if (fh > 0) kids.push(svg('rect', { x, y: H - B - fh, width: w, height: fh, class: 'bar-full' }, svg('title', {}, tip)));
    pts.push(`${x + w / 2},${H - B - h}`);
    if (shown.length <= 24 || i % Math.ceil(shown.length / 24) === 0) {
      kids.push(svg('text', { x: x + w / 2, y: H - 10, 'text-anchor': 'middle', class: 'tick' }, String(v.version)));
    }
  });
  if (pts.length > 1) kids.push(svg('polyline', { points: pts.join(' '), class: 'line-size', fill: 'none' }));
  const keys = shown.filter((v) => v.num_keys !== null && v.num_keys !== undefined);
  return el('div', {},
    svg('svg', { viewBox: `0 0 ${W} ${H}`, class: 'plot-svg', role: 'img', 'data-testid': 'state-version-plot',
      'aria-label': `State size by version: ${shown.length} versions, largest ${fmtBytes(maxB)}` }, kids),
    el('p', { class: 'legend' }, el('span', {}, el('span', { class: 'sw bytes' }), 'delta / changelog'),
      el('span', {}, el('span', { class: 'sw full' }), 'snapshot / zip + its SSTs'),
      el('span', {}, 'Bytes per version summed over partitions; x axis: version (= batch id + 1).'),
      keys.length ? ` Keys (RocksDB metadata) at version ${keys[keys.length - 1].version}: ${keys[keys.length - 1].num_keys}.` : ''),
    versions.length > shown.length ? el('p', { class: 'muted' }, `Showing the last ${shown.length} of ${versions.length} versions.`) : null);
}

function schemaTree(node) {
  const fields = node.fields || [];
  return el('ul', { class: 'schema-tree' }, fields.map((f) => el('li', {},
    el('code', {}, f.name), ': ', el('span', { class: 'type' }, f.type === 'struct' ? 'struct' : f.type),
    f.nullable === false ? el('span', { class: 'muted' }, ' (not null)') : '',
    f.fields ? schemaTree(f) : null,
    f.element && f.element.fields ? schemaTree(f.element) : null,
    f.value && f.value.fields ? schemaTree(f.value) : null)));
}

function renderSchemas(store, stateVar) {
  const d = el('details', { class: 'panel schemas', open: true, 'data-testid': 'state-schemas' }, el('summary', {}, 'Stored schemas'));
  if (!store) {
    d.append(el('p', { class: 'muted' }, 'A join side reads the keyToNumValues and keyWithIndexToValue stores of that side; pick a store to see its schema.'));
    return d;
  }
  const both = (k, v, title) => el('div', { class: 'grid2' },
    el('div', {}, el('h4', {}, `${title}key`), schemaTree(k)), el('div', {}, el('h4', {}, `${title}value`), schemaTree(v)));
  if (store.schema) d.append(both(store.schema.key, store.schema.value, `${store.name}: `));
  if (store.schema_v3) {
    for (const cf of store.schema_v3.column_families) {
      if (stateVar && cf.name !== stateVar && !cf.internal) continue;
      d.append(both(cf.key, cf.value, `column family ${cf.name}${cf.internal ? ' (internal)' : ''}: `));
    }
    d.append(el('p', { class: 'muted' }, 'From ', el('code', {}, store.schema_v3.path)));
  }
  if (store.schema_error) d.append(stateError(store.schema_error));
  return d;
}

// ---------------------------------------------------------------------------------------------------------------
// Export
function baseName() {
  return (state.last?.report.input.name || 'checkpoint').replace(/\.zip$/i, '');
}
function download(name, type, text) {
  const url = URL.createObjectURL(new Blob([text], { type }));
  const a = el('a', { href: url, download: name });
  document.body.append(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(url), 1000);
}
function markdown() {
  return state.last ? window.wasmBindings.renderMarkdown(state.last.reportJson) : null;
}
function summary() {
  return state.last ? window.wasmBindings.renderSummary(state.last.reportJson) : null;
}
function exportMarkdown() {
  if (state.last) download(`${baseName()}-inspection.md`, 'text/markdown', markdown());
}
function exportJson() {
  if (state.last) download(`${baseName()}-inspection.json`, 'application/json', `${JSON.stringify(state.last.report, null, 2)}\n`);
}
async function copySummary() {
  if (!state.last) return;
  const note = $('#copy-note');
  try {
    await navigator.clipboard.writeText(summary());
    note.textContent = 'Summary copied.';
  } catch (_) {
    // Clipboard permission denied (or file://): fall back to a selection the user can copy.
    const ta = el('textarea', { rows: 4, 'aria-label': 'Summary' });
    ta.value = summary();
    note.replaceChildren('Copy this: ', ta);
    ta.select();
  }
}

// ---------------------------------------------------------------------------------------------------------------
// Test/scripting hook (read-only): the last report shown.
window.checkpointInspector = {
  get report() { return state.last ? state.last.report : null; },
  /** What the worker read from the dropped file for the last diagnosis: {bytes, reads, ms}. */
  get reading() { return state.last ? { bytes: state.last.bytesRead, reads: state.last.reads, ms: state.last.ms } : null; },
  get markdown() { return markdown(); },
  get summary() { return summary(); },
};

initSparkVersions();
initInputs();
initSamples();
startWorker();
checkReady();
