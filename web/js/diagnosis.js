// Running a diagnosis: sends the input to the worker, shows progress, then the report or a clear message.
import { $ } from './dom.js';
import { fmtBytes } from './format.js';
import { state } from './app-state.js';
import { request, whenReady } from './worker-client.js';
import { setStatus, showMessage, clearMessage, progressStart, progressUpdate, progressEnd } from './status.js';
import { options } from './settings.js';
import { render, renderVerdict } from './report-view.js';
import { listingOf } from './listing.js';

const ERROR_HELP = {
  // 'not-a-zip': the message itself says what the file is instead and what to give.
  empty: 'The input is empty: there is nothing to inspect.',
  'over-limit': 'The input is over one of the inspector\'s safety limits, so it was not read further.',
  'bad-path': 'The zip contains an unsafe entry path; it was not read.',
  cancelled: 'Drop the input again to diagnose it.',
};

// ---------------------------------------------------------------------------------------------------------------
// Running a diagnosis
/** The options a run used, without the clock: a re-diagnosis with the same ones would give the same report. */
const optionsKey = (o) => JSON.stringify({ ...o, now_ms: undefined });
let lastOptions = null;
/** The newest run: an older one still answered by the worker (it runs requests in order) shows nothing. */
let latestRun = 0;
/** The run whose early verdict is on screen without its full report (0: none). */
let verdictRun = 0;

async function run(msg, label) {
  const mine = ++latestRun;
  await whenReady();
  lastOptions = optionsKey(msg.options || {});
  clearMessage();
  dropLinkFromAddress();
  const results = $('#results');
  results.dataset.run = 'busy';
  results.dataset.verdict = 'none';
  progressStart(label);
  // The verdict, when the worker sends it before reading the older batches: shown at once, the run goes on.
  const onVerdict = (v) => {
    if (mine !== latestRun) return;
    state.last = null;
    renderVerdict(JSON.parse(v.report_head), JSON.parse(v.presented));
    verdictRun = mine;
    results.dataset.verdict = 'shown';
  };
  try {
    const m = await request(msg, progressUpdate, onVerdict);
    if (mine !== latestRun) return;
    // Receiving the worker's message is a main-thread task of its own (a big report's texts are copied in it);
    // parsing and the verdict's rendering come in the next one.
    await new Promise((resolve) => setTimeout(resolve, 0));
    // The verdict first: the report without its batch lists (`report_head`) and the core's presentation are
    // small; the batch lists (`batches`, columns) are made in a later task, before the views that plot them.
    const report = JSON.parse(m.report_head || m.report);
    state.last = {
      report, reportJson: m.report, batchColumns: m.report_head ? m.batches : null,
      presented: m.presented ? JSON.parse(m.presented) : null, entries: listingOf(m),
      entriesTotal: m.entries_total || 0, ms: m.ms, bytesRead: m.bytes_read, reads: m.reads, readMs: m.read_ms,
      wasmBytes: m.wasm_bytes,
    };
    verdictRun = 0;
    await render();
    state.runs += 1;
    results.dataset.runCount = String(state.runs);
    results.dataset.run = 'done';
    const read = m.bytes_read !== undefined ? ` (${m.reads} slice reads of the ${fmtBytes(report.input.bytes)} file)` : '';
    setStatus(`Diagnosed ${report.input.name} in ${Math.round(m.ms)} ms${read}.`);
  } catch (e) {
    if (mine !== latestRun) return;
    const kind = e.kind || 'internal';
    state.last = null;
    // A verdict already shown stays: it rests on the files a restart reads; only the history is missing. That of
    // an earlier run stays when this one was cancelled or stopped (it says which Spark version it assumed).
    const verdictShown = verdictRun === mine || (verdictRun !== 0 && (kind === 'cancelled' || kind === 'stuck'));
    verdictRun = 0;
    if (!verdictShown) $('#results').replaceChildren();
    const help = ERROR_HELP[kind] ? ` ${ERROR_HELP[kind]}` : '';
    const text = String(e.message || e);
    const partial = verdictShown ? ' The verdict shown comes from the files a restart reads; the older batches were not read, so the timeline and the findings about them are missing.' : '';
    showMessage(`${/[.!?]$/.test(text) ? text : `${text}.`}${partial}${help}`);
    const box = $('#message');
    box.dataset.errorKind = kind;
    state.runs += 1;
    results.dataset.runCount = String(state.runs);
    results.dataset.run = verdictShown ? 'partial' : 'error';
    document.querySelectorAll('[data-testid=history-pending]').forEach((n) => { n.textContent = 'The older batches were not read.'; });
    setStatus(kind === 'cancelled' ? 'Cancelled.' : kind === 'stuck' ? 'Stopped a stuck worker.' : 'Could not diagnose this input.');
  } finally {
    if (mine === latestRun) progressEnd();
  }
}

export function openFile(file, fromSample = false) {
  if (!fromSample) $('#sample-select').value = '';
  state.input = { name: file.name };
  $('#intro').hidden = true;
  return run({ type: 'open-file', file, name: file.name, options: options() }, `Opening ${file.name}…`);
}

export function openFolder(name, files) {
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

/** A Delta source table's `_delta_log` (zip `file`, or a dropped folder's `files`): the worker keeps it and
 * re-diagnoses the open checkpoint with it (or, with none open yet, says what it read). */
export async function openDeltaLog(msg) {
  await whenReady();
  const status = $('#delta-log-status');
  const box = $('#delta-drop');
  if (!state.input) {
    clearMessage();
    try {
      const m = await request({ ...msg, options: options() });
      const t = (m.tables || []).map((x) => `table ${x.table_id || 'unknown'} (versions ${x.versions})`).join('; ');
      status.textContent = `Delta log read: ${t}. Now drop the checkpoint.`;
      box.dataset.loaded = '1';
    } catch (e) {
      status.textContent = String(e.message || e);
      delete box.dataset.loaded;
    }
    return;
  }
  await run({ ...msg, options: options() }, `Reading the Delta log ${msg.name}…`);
  if ($('#results').dataset.run === 'done') {
    status.textContent = `Delta log ${msg.name} is used for the Delta sources.`;
    box.dataset.loaded = '1';
  } else {
    delete box.dataset.loaded;
  }
}

export function rediagnose() {
  if (!state.input) return Promise.resolve();
  // A typed option's debounce can fire after a drop that already used it: nothing changed, nothing to re-run.
  if (optionsKey(options()) === lastOptions) return Promise.resolve();
  return run({ type: 'rediagnose', options: options() }, `Diagnosing ${state.input.name} again…`);
}


/** A dropped checkpoint replaces a shared report: the address no longer carries the link's `#report=`. */
function dropLinkFromAddress() {
  if (!/^#report=/.test(location.hash)) return;
  try {
    history.replaceState(null, '', location.href.split('#')[0]);
  } catch (_) {
    // file:// may refuse; the dropped checkpoint is shown all the same.
  }
}
