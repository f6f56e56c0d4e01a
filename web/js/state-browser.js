// The State tab: a paged browser over the state rows the worker decodes with the core's reader (the same rows as
// Spark's State Data Source). Nothing is decoded until the tab is opened: the worker then lists operators, stores,
// schemas and sizes by version (`state-overview`), and decodes one selection at a time (`state-rows`), which it
// keeps for paging and search. Two views: the current state at a batch (Spark's `statestore` reader), and the changes
// of a range of batches (its `readChangeFeed` option: one row per put or removal, with `batch_id` and `change_type`).
import { el } from './dom.js';
import { request } from './worker-client.js';
import { stateError, renderPartitionPlot, renderVersionPlot, renderSchemas } from './state-charts.js';

const STATE_PAGE_SIZES = [10, 100, 500];
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
  mode: 'state', // 'state' (the state at a batch) or 'changes' (readChangeFeed over a range of batches)
  change: { start: null, end: null }, // changeStartBatchId / changeEndBatchId; null = the last committed batch
};

export function resetStateBrowser() {
  sb.overview = null; sb.loading = null; sb.sel = null; sb.partition = null; sb.search = ''; sb.page = 0; sb.result = null;
  sb.change = { start: null, end: null };
  sb.seq += 1;
}

/** The tabs above the results: the diagnosis (default) and the state browser. */
function statePanel() {
  return document.querySelector('#panel-state');
}

export async function openStateBrowser() {
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

/** The selection sent to the worker: the picked store, and in the Changes view Spark's change-feed options (no
 *  batchId: Spark refuses it together with readChangeFeed). Spark's own checks answer a wrong range. */
function requestSelection() {
  if (sb.mode !== 'changes') return sb.sel;
  const last = sb.overview.committed_batches.last ?? null;
  return { ...sb.sel, batch_id: null, read_change_feed: true,
    change_start_batch_id: sb.change.start ?? last, change_end_batch_id: sb.change.end ?? last };
}

/** The batches whose changes are on disk for a store: versions with a delta (HDFS) or changelog (RocksDB) file. */
function changeFileBatches(store) {
  const b = (store?.versions || []).filter((v) => v.by_kind && (v.by_kind.delta || v.by_kind.changelog)).map((v) => v.batch_id);
  return b.length ? { first: Math.min(...b), last: Math.max(...b) } : null;
}

/** A batch id typed in a box: null when empty (the default), else the integer as typed (a negative one is passed
 *  on: Spark's own check answers it). */
function batchValue(text) {
  const v = text.trim();
  if (v === '' || !Number.isFinite(Number(v))) return null;
  return Math.trunc(Number(v));
}

/** The "Current state / Changes" toggle: two radio buttons (arrow keys move between them). */
function modeToggle() {
  const pick = (mode) => {
    sb.mode = mode; sb.page = 0;
    renderStateBrowser();
    document.querySelector(`#state-mode-${mode}`)?.focus();
  };
  const radio = (mode, label) => el('label', { class: 'mode-option' },
    el('input', { type: 'radio', name: 'state-mode', id: `state-mode-${mode}`, value: mode, checked: sb.mode === mode,
      'data-testid': `state-mode-${mode}`, onchange: () => pick(mode) }), el('span', {}, label));
  return el('fieldset', { class: 'mode-toggle', 'data-testid': 'state-mode' },
    el('legend', {}, 'View'),
    radio('state', 'Current state'), radio('changes', 'Changes'));
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
  const store = currentStore();
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
  const changes = sb.mode === 'changes';
  const sizeControl = el('div', { class: 'control' }, el('label', { for: 'state-page-size' }, 'Rows per page'), sizeSel);
  // Current state: batch id, then page size; Changes: page size, then the range boxes and their help on a row.
  const batchControls = changes ? [sizeControl, ...changeRangeControls(last, store)]
    : [el('div', { class: 'control' }, el('label', { for: 'state-batch' }, 'Batch id'), batchIn), sizeControl];
  const pickers = el('div', { class: 'controls state-pickers' },
    el('div', { class: 'control wide' }, modeToggle()),
    el('div', { class: 'control' }, el('label', { for: 'state-operator' }, 'Operator'), opSel),
    el('div', { class: 'control' }, el('label', { for: 'state-store' }, 'Store'), storeSel),
    el('div', { class: 'control' }, el('label', { for: 'state-partition' }, 'Partition'), partSel),
    ...batchControls,
    el('div', { class: 'control span3' }, el('label', { for: 'state-search' }, 'Search keys'), search,
      el('span', { id: 'state-search-help', class: 'muted small' }, 'Rows whose key (as JSON) contains this text, ignoring case.')));
  panel.dataset.state = 'ready';
  panel.dataset.mode = sb.mode;
  const intro = changes
    ? "Changes: what each batch's state file (HDFS delta, RocksDB changelog) put or removed, read in your browser as Spark's statestore reader does with readChangeFeed (changeStartBatchId, changeEndBatchId)."
    : "Read in your browser with the same options as Spark's statestore reader (operatorId, storeName, stateVarName, joinSide, batchId).";
  panel.replaceChildren(...[
    el('p', { class: 'muted' }, `${intro} Committed batches: ${o.committed_batches.count ? `${o.committed_batches.first}–${last}` : 'none'}.`),
    pickers,
    el('div', { class: 'status-line' }, el('progress', { id: 'state-progress', hidden: true }), el('span', { id: 'state-status', role: 'status', 'aria-live': 'polite' })),
    el('div', { id: 'state-result' }),
    el('div', { class: 'grid2' },
      el('div', { class: 'panel plot' }, el('h3', {}, 'Rows and bytes per partition'), el('div', { id: 'state-partition-plot' }, el('p', { class: 'muted' }, 'Shown once the rows are read.'))),
      el('div', { class: 'panel plot' }, el('h3', {}, 'State size on disk by version'), renderVersionPlot(op, store, sb.sel.join_side))),
    renderSchemas(store, sb.sel.state_var),
    o.notes && o.notes.length ? el('details', { class: 'panel' }, el('summary', {}, `Files that could not be read for sizes (${o.notes.length})`),
      el('ul', {}, o.notes.slice(0, 50).map((n) => el('li', {}, el('code', {}, n.path), n.offset !== null && n.offset !== undefined ? ` at byte ${n.offset}` : '', `: ${n.message}`)))) : null,
  ].filter(Boolean));
  loadStateRows();
}

/** The Changes view's two batch boxes (changeStartBatchId, changeEndBatchId), both the last committed batch by
 *  default: the batch that wrote the state version a restart loads, i.e. what changed in the batch before it. */
function changeRangeControls(last, store) {
  const files = sb.sel.join_side ? null : changeFileBatches(store);
  const box = (id, key, label) => el('div', { class: 'control' }, el('label', { for: id }, label),
    el('input', { id, type: 'number', step: 1, inputmode: 'numeric', 'aria-describedby': 'state-change-help',
      placeholder: last === null || last === undefined ? 'none committed' : `${last} (last committed)`,
      value: sb.change[key] ?? last ?? '', onchange: (ev) => {
        sb.change = { ...sb.change, [key]: batchValue(ev.target.value) };
        sb.page = 0; loadStateRows();
      } }));
  const valid = last === null || last === undefined ? 'No committed batch: Spark reads no change feed.'
    : `Valid: 0–${last} (the end at most the last committed batch, ${last}, and not before the start)`
      + (files ? `; change files on disk for batches ${files.first}–${files.last}.` : '.');
  return [
    box('state-change-start', 'start', 'From batch'),
    box('state-change-end', 'end', 'To batch'),
    el('div', { class: 'control span2' }, el('span', { id: 'state-change-help', class: 'muted small', 'data-testid': 'state-change-range' },
      `${valid} The default, ${last ?? 'none'}–${last ?? 'none'}, is the last committed batch: the one that wrote the state a restart loads.`)),
  ];
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
    const m = await request({ type: 'state-rows', selection: requestSelection(), partition: sb.partition, search: sb.search, page: sb.page, page_size: sb.pageSize },
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
    const f = r.change_feed;
    if (status) {
      status.textContent = f
        ? `${r.total_rows} changes in batches ${f.start_batch_id}–${f.end_batch_id} (state versions ${f.start_batch_id + 1}–${f.end_batch_id + 1}), decoded in ${Math.round(r.ms)} ms.`
        : `${r.total_rows} rows at batch ${r.batch_id} (version ${r.batch_id + 1}), decoded in ${Math.round(r.ms)} ms.`;
    }
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

/** A change type as a badge that reads without colour: a sign and the word Spark uses. */
function changeBadge(t) {
  const sign = t === 'delete' ? '−' : t === 'update' ? '+' : '•';
  return el('span', { class: `change-badge change-${t}` }, el('span', { 'aria-hidden': 'true' }, `${sign} `), t);
}

function rowCells(row, feed) {
  const del = feed && row.change_type === 'delete';
  const attrs = { 'data-partition': row.partition_id };
  if (feed) { attrs['data-batch'] = row.batch_id; attrs['data-change-type'] = row.change_type; attrs.class = `change-row change-${row.change_type}`; }
  return el('tr', attrs,
    feed ? el('td', { class: 'num' }, String(row.batch_id)) : null,
    feed ? el('td', {}, changeBadge(row.change_type)) : null,
    el('td', { class: 'num' }, String(row.partition_id)), el('td', { class: 'mono' }, jsonCell(row.key)),
    el('td', { class: 'mono' }, del ? el('span', { class: 'muted removed' }, '(removed: no value)') : jsonCell(row.value)));
}

function renderStateRows() {
  const r = sb.result;
  const go = (p) => { if (p >= 0 && p < r.pages && p !== r.page) { sb.page = p; loadStateRows(); } };
  const pager = el('div', { class: 'pager', role: 'group', 'aria-label': 'Pages of rows' },
    el('button', { type: 'button', 'data-testid': 'state-prev', disabled: r.page === 0, onclick: () => go(r.page - 1), 'aria-label': 'Previous page' }, '‹ Previous'),
    el('span', { 'data-testid': 'state-page' }, `Page ${r.page + 1} of ${r.pages}`),
    el('button', { type: 'button', 'data-testid': 'state-next', disabled: r.page + 1 >= r.pages, onclick: () => go(r.page + 1), 'aria-label': 'Next page' }, 'Next ›'),
    el('span', { class: 'muted' }, r.matching_rows === r.total_rows ? `${r.total_rows} rows` : `${r.matching_rows} of ${r.total_rows} rows match`));
  const feed = Boolean(r.change_feed);
  const head = [feed ? el('th', { class: 'num', scope: 'col' }, 'batch_id') : null, feed ? el('th', { scope: 'col' }, 'change_type') : null,
    el('th', { class: 'num', scope: 'col' }, 'partition'), el('th', { scope: 'col' }, 'key'), el('th', { scope: 'col' }, 'value')].filter(Boolean);
  const tbl = el('table', { 'data-testid': 'state-rows', 'data-row-count': r.rows.length, 'data-total-rows': r.matching_rows, 'data-all-rows': r.total_rows,
    'data-change-feed': feed ? `${r.change_feed.start_batch_id}-${r.change_feed.end_batch_id}` : '', class: feed ? 'changes' : null, 'aria-label': feed ? 'State changes' : 'State rows' },
  el('thead', {}, el('tr', {}, head)),
  el('tbody', {}, r.rows.map((row) => rowCells(row, feed))));
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
    : el('p', { class: 'muted' }, r.total_rows ? 'No row matches.' : feed ? 'No change in these batches.' : 'The store is empty at this batch.');
  document.querySelector('#state-result').replaceChildren(pager, wrap, empty || '');
  if (hadFocus) document.querySelector('.state-table')?.focus();
  document.querySelector('#state-partition-plot')?.replaceChildren(renderPartitionPlot(r.partitions));
}

