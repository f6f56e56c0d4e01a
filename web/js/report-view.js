// The report view: per checkpoint the verdict, the facts, the findings (evidence, why, fix) and what would sharpen
// the diagnosis, then every registered view (./views/index.js: timeline, sources, operators, confs, ...); the
// input's files; and the tabs (Diagnosis, State).
import { $, el, svg, table } from './dom.js';
import { fmtBytes, fmtTime, fmtAge } from './format.js';
import { state } from './app-state.js';
import { request } from './worker-client.js';
import { showEntry } from './file-view.js';
import { exportMarkdown, exportJson, copySummary } from './export.js';
import { resetStateBrowser, openStateBrowser } from './state-browser.js';
import { inspector } from './core.js';
import { openShareDialog, linkBanner } from './share.js';
import * as registry from './views/index.js';

const MAX_SHOWN_BYTES = 256 * 1024;

/** The registered views, in display order. */
export const views = Object.entries(registry)
  .map(([name, m]) => ({ name, module: m, order: Number.isFinite(m.order) ? m.order : 100, layout: m.layout || 'wide' }))
  .filter((v) => typeof v.module.render === 'function')
  .sort((a, b) => a.order - b.order || (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));

const VERDICT_ICON = { resumes: '✓', replays_last_batch: '↻', fails: '✕', unknown: '?' };

function archivePath(root, path) {
  return root ? `${root}/${path}` : path;
}

/** A file path: a button that shows the file when it is in the input and small enough, else plain code. */
export function pathLink(root, path) {
  const full = archivePath(root, path);
  const size = state.last?.entries?.sizeOf(full);
  if (size !== undefined && size <= MAX_SHOWN_BYTES) {
    return el('button', { type: 'button', class: 'linkish', title: `Show ${full} (${fmtBytes(size)})`, onclick: () => showEntry(full) }, path);
  }
  return el('code', {}, path);
}

/** A checkpoint's `batches` (the report's objects) from the worker's columns (crates/checkpoint-web/src/worker.rs,
 *  `batch_columns`): NaN is none; `next_watermark_ms` is left out when none, as in the report's JSON. */
export function batchesOf(cols) {
  if (!cols) return [];
  const { batch_id: id, flags, timestamp_ms: ts, watermark_ms: wm, next_watermark_ms: next } = cols;
  const num = (v) => (Number.isNaN(v) ? null : v);
  const out = new Array(id.length);
  for (let i = 0; i < id.length; i += 1) {
    const b = { batch_id: id[i], has_offsets: (flags[i] & 1) !== 0, committed: (flags[i] & 2) !== 0, timestamp_ms: num(ts[i]), watermark_ms: num(wm[i]) };
    if (!Number.isNaN(next[i])) b.next_watermark_ms = next[i];
    out[i] = b;
  }
  return out;
}

/** The next macrotask: lets the browser paint and handle input between the parts of a big report. */
const nextTask = () => new Promise((resolve) => setTimeout(resolve, 0));

/**
 * Renders `state.last`: the verdict, facts and findings of every checkpoint at once, then (each in its own task,
 * so the main thread never blocks for long on a big report) the batch lists, every view, the files. Resolves
 * when everything is shown; a newer run started meanwhile stops it.
 */
export async function render() {
  const last = state.last;
  const { report } = last;
  const root = $('#results');
  const parts = [];
  parts.push(el('div', { class: 'toolbar' },
    el('button', { type: 'button', class: 'primary', id: 'export-md', onclick: exportMarkdown }, 'Export Markdown'),
    el('button', { type: 'button', id: 'export-json', onclick: exportJson }, 'Export JSON'),
    el('button', { type: 'button', id: 'copy-summary', onclick: copySummary }, 'Copy summary'),
    el('button', { type: 'button', id: 'share-link', onclick: openShareDialog, title: 'A link that carries this report (redacted; you see exactly what it holds first)' }, 'Copy link to this report'),
    el('span', { class: 'muted', id: 'copy-note', role: 'status' }),
  ));
  if (report.checkpoints.length === 0) {
    parts.push(el('div', { class: 'verdict', 'data-testid': 'verdict', dataset: { outcome: 'unknown', errorClass: '' } },
      el('div', { class: 'icon', 'aria-hidden': 'true' }, '?'),
      el('div', { class: 'headline' }, 'No Spark checkpoint found'),
      el('div', { class: 'detail' }, `${report.input.name} holds ${report.input.entries} entries, none of which looks like a checkpoint (metadata, offsets/, commits/, state/).`)));
  }
  const link = last.link;
  if (link) parts.unshift(linkBanner(link));
  const diag = el('div', { id: 'panel-diagnosis', role: 'tabpanel', 'aria-labelledby': 'tab-diagnosis' });
  const page = pageApi(report);
  // The worker sends the core's presentation with the report; a shared link's report is presented here.
  const shown = last.presented || inspector().present(last.reportJson);
  const pending = report.checkpoints.map((c, i) => {
    const views = el('div', { class: 'views' });
    diag.append(renderCheckpoint(c, report, shown[i], views));
    return { c, views };
  });
  resetStateBrowser();
  const stateWasOpen = document.querySelector('#tab-state')?.getAttribute('aria-selected') === 'true';
  if (link) {
    // A report from a link: no checkpoint is loaded, so there are no files to list and no state to browse.
    parts.push(diag);
  } else {
    diag.append(renderFiles());
    const statePanelEl = el('div', { id: 'panel-state', role: 'tabpanel', 'aria-labelledby': 'tab-state', hidden: true, class: 'state-browser', 'data-testid': 'state-panel' });
    parts.push(renderTabs(), diag, statePanelEl);
  }
  root.replaceChildren(...parts);
  if (stateWasOpen && !link) selectTab('state');
  if (last.batchColumns) {
    await nextTask();
    if (state.last !== last) return;
    report.checkpoints.forEach((c, i) => { c.batches = batchesOf(last.batchColumns[i]); });
    last.batchColumns = null;
  }
  for (const { c, views: box } of pending) {
    for (const v of views) {
      await nextTask();
      if (state.last !== last) return;
      const container = renderView(v, c, page);
      if (container.childNodes.length) box.append(container);
    }
  }
}

/**
 * The verdict's report (the worker's `verdict` message: what a restart reads, before the older offsets and
 * commits are read), shown while the history is read: each checkpoint's verdict, facts and findings, and a
 * note that the rest is coming. `render` then replaces it with the full report.
 */
export function renderVerdict(report, presented) {
  const diag = el('div', { id: 'panel-diagnosis', 'data-testid': 'verdict-first' });
  report.checkpoints.forEach((c, i) => {
    const rest = el('p', { class: 'muted', 'data-testid': 'history-pending' },
      `Reading the older batches' offsets and commits for the timeline and the findings about them; the verdict rests on the files a restart reads, which are read.`);
    diag.append(renderCheckpoint(c, report, presented[i], el('div', { class: 'views' }, rest)));
  });
  $('#results').replaceChildren(diag);
}

/** One checkpoint: `p` is the core's presentation of it (`Inspector.present`: headline, summary, assumption, needs, finding order). */
function renderCheckpoint(c, report, p, views) {
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
  el('div', { class: 'headline' }, p.headline),
  el('div', { class: 'detail' }, `Assuming a restart on Spark ${r.assumed_spark_version}${state.last && state.last.link ? '' : ' (change it above)'}.`,
    r.exception ? ` Exception: ${r.exception}.` : ''),
  p.assumption ? el('div', { class: 'detail', 'data-testid': 'assumption' }, `${p.assumption[0].toUpperCase()}${p.assumption.slice(1)}.`) : null,
  p.summary ? el('div', { class: 'detail' }, p.summary) : null);
  const facts = el('ul', { class: 'facts' },
    el('li', {}, 'Query id ', el('b', {}, c.query_id || '—')),
    el('li', {}, 'Last planned batch ', el('b', {}, c.last_batch_id ?? '—')),
    el('li', {}, 'Last committed batch ', el('b', {}, c.last_committed_batch_id ?? '—')),
    r.state_version_loaded !== undefined && r.state_version_loaded !== null ? el('li', {}, 'State version loaded ', el('b', {}, r.state_version_loaded)) : null,
    el('li', {}, 'Findings ', el('b', {}, c.findings.length)));

  const findings = p.finding_order.map((i) => c.findings[i]);
  const fpanel = el('div', { class: 'panel' }, el('h3', {}, `Findings (${findings.length})`),
    findings.length ? el('div', { class: 'findings' }, findings.map((f, i) => renderFinding(f, c, i === 0 && f.severity !== 'info')))
      : el('p', { class: 'muted' }, 'No findings.'));
  const needs = p.needs.length ? el('div', { class: 'panel' }, el('h3', {}, 'To sharpen the diagnosis'), el('ul', { 'data-testid': 'needs' }, p.needs.map((n) => el('li', {}, n)))) : null;

  sec.append(head, verdict, facts, fpanel, needs || '', views);
  return sec;
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

/** Rows of the files table built per task when the panel is opened. */
const FILE_ROWS_PER_TASK = 1000;

/** The input's files: a closed panel whose table is built when it is first opened, a slice per task. */
function renderFiles() {
  const { entries, entriesTotal } = state.last;
  const d = el('details', { class: 'panel files' }, el('summary', {}, `Files in the input (${entriesTotal})`));
  let built = false;
  // Built on the summary's click (mouse or keyboard, before the panel opens) or on any other opening.
  const build = async () => {
    if (built) return;
    built = true;
    const last = state.last;
    const shown = entries.rows(0, 5000);
    const row = ([p, s]) => [s <= MAX_SHOWN_BYTES ? el('button', { type: 'button', class: 'linkish', onclick: () => showEntry(p) }, p) : el('code', { title: 'too large to show' }, p), fmtBytes(s)];
    const headers = ['path', { label: 'size', num: true }];
    const t = table(headers, shown.slice(0, FILE_ROWS_PER_TASK).map(row));
    d.append(el('div', { class: 'files-list' }, t));
    if (entriesTotal > shown.length) d.append(el('p', { class: 'muted' }, `Listing the first ${shown.length} of ${entriesTotal} files.`));
    const body = t.querySelector('tbody') || t;
    for (let i = FILE_ROWS_PER_TASK; i < shown.length; i += FILE_ROWS_PER_TASK) {
      await nextTask();
      if (state.last !== last) return;
      const more = table(headers, shown.slice(i, i + FILE_ROWS_PER_TASK).map(row));
      body.append(...(more.querySelector('tbody') || more).childNodes);
    }
  };
  d.querySelector('summary').addEventListener('click', build);
  d.addEventListener('toggle', () => { if (d.open) build(); });
  return d;
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

/** What a view gets besides its checkpoint (the third argument of `render`). */
function pageApi(report) {
  const last = state.last;
  return {
    /** The whole report (`checkpoints`, `input`, `inspector_version`). */
    report,
    /** The input's files as `[path, size]` (cut at the worker's listing limit) and how many there are in all. */
    get entries() { return last ? last.entries.rows() : []; },
    entriesTotal: last ? last.entriesTotal : 0,
    /** True when the report came from a shared link: there is no checkpoint to read files or state from. */
    readOnly: Boolean(last && last.link),
    /** Element builders (text only, never HTML) and a table: see ./dom.js. */
    el, svg, table,
    /** Formatting: bytes, UTC times, ages. */
    fmtBytes, fmtTime, fmtAge,
    /** A file path of a checkpoint as a button that opens the file (when it is in the input and small), else code. */
    pathLink,
    /** Shows one file of the input (archive path) in the file dialog. */
    showEntry,
    /** Sends a request to the diagnosis worker (see crates/checkpoint-web/src/worker.rs); resolves with its answer. */
    request,
  };
}

/** One registered view of a checkpoint in its container (a view that throws says so in its place). */
function renderView(v, c, page) {
  const container = el('div', { class: `view view-${v.layout}`, dataset: { view: v.name } });
  try {
    v.module.render(container, c, page);
  } catch (e) {
    container.replaceChildren(el('p', { class: 'message', role: 'alert' }, `The ${v.name} view failed: ${e && e.message ? e.message : e}`));
  }
  return container;
}
