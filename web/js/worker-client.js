// The worker client: starts the diagnosis Web Worker (wasm, crates/checkpoint-web/src/worker.rs), sends it requests
// (each with an id) and resolves them with its answer; progress messages go to the request's callback.
import { $ } from './dom.js';
import { setStatus, showMessage } from './status.js';
import { state } from './app-state.js';
import { ready as coreReady } from './core.js';

/** Silence (no progress, no answer) after which a busy worker counts as stuck, in ms (tests may lower it). */
const WATCHDOG_MS = () => window.TC_WATCHDOG_MS || 60000;
let watchdog = null;

/** (Re)arms the watchdog while requests are pending: any message from the worker proves it alive. */
function armWatchdog() {
  clearTimeout(watchdog);
  if (state.pending.size === 0) return;
  const ms = WATCHDOG_MS();
  watchdog = setTimeout(() => {
    stopWorker('stuck', `The inspector's worker did not answer for ${Math.round(ms / 1000)} s and was stopped (the input may be too large or hostile for this browser tab). The page is usable again: drop the input again or another one`);
  }, ms);
}

/**
 * Stops the worker (whatever it is doing: a stuck or a cancelled run), fails every pending request with `kind`,
 * and starts a fresh worker so the page stays usable. The dropped input is forgotten (it lived in the worker).
 */
export function stopWorker(kind, message) {
  clearTimeout(watchdog);
  const w = state.worker;
  state.worker = null;
  state.ready = false;
  state.workerReady = false;
  try { w?.terminate(); } catch (_) { /* already gone */ }
  for (const [, p] of state.pending) p.reject({ kind, message });
  state.pending.clear();
  $('#results').dataset.pending = '0';
  state.input = null;
  document.body.dataset.status = 'loading';
  startWorker();
}

/** The Cancel button: stops the running diagnosis. */
export function cancel() {
  if (state.pending.size === 0) return;
  stopWorker('cancelled', 'Cancelled: the diagnosis was stopped');
}

export function startWorker() {
  // A new worker warms up anew: the flag of the one before does not hold for it.
  delete document.body.dataset.warm;
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
    clearTimeout(watchdog);
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
  // Tests: a worker that has stopped answering (its answers are dropped), so the watchdog's path runs whatever
  // the machine's speed.
  if (window.TC_WORKER_SILENT && m.type !== 'ready') return;
  armWatchdog();
  if (m.type === 'ready') {
    state.workerReady = true;
    $('#version-note').textContent = `checkpoint-inspector ${m.version}`;
    checkReady();
    return;
  }
  // The worker's warm-up ran every round before any request (crates/checkpoint-web/src/warm_up.rs).
  if (m.type === 'warm') {
    document.body.dataset.warm = String(m.rounds);
    return;
  }
  const p = state.pending.get(m.id);
  if (!p) return;
  if (m.type === 'progress') {
    p.onProgress?.(m);
    return;
  }
  // The verdict before the history (a diagnosis of a checkpoint with more batches than the verdict reads): the
  // request goes on until its `report`.
  if (m.type === 'verdict') {
    p.onVerdict?.(m);
    return;
  }
  state.pending.delete(m.id);
  $('#results').dataset.pending = String(state.pending.size);
  armWatchdog();
  if (m.type === 'error') p.reject({ kind: m.kind, message: m.message });
  else p.resolve(m);
}

/** Called once, when the page becomes ready (both wasm modules run), before it says so. */
export const readyHooks = [];

/** The page is ready once both wasm modules run: the worker's (diagnosis) and the page's (rendering). */
export function checkReady() {
  if (!state.workerReady || !coreReady()) return;
  if (!state.ready) for (const hook of readyHooks) hook();
  state.ready = true;
  document.body.dataset.status = 'ready';
  if (!state.last && !state.input) setStatus('Ready. Drop a checkpoint zip or folder, pick a file, or try a sample.');
}
addEventListener('TrunkApplicationStarted', checkReady);

/** Sends `msg` to the worker; resolves with its answer. `onProgress` gets its `progress` messages, `onVerdict`
 *  its `verdict` message (the verdict's report, before the history is read). */
export function request(msg, onProgress, onVerdict) {
  return new Promise((resolve, reject) => {
    if (!state.worker) {
      reject({ kind: 'internal', message: 'The inspector is not loaded yet.' });
      return;
    }
    const id = state.nextId++;
    state.pending.set(id, { resolve, reject, onProgress, onVerdict });
    $('#results').dataset.pending = String(state.pending.size);
    state.worker.postMessage({ ...msg, id });
    armWatchdog();
  });
}

export async function whenReady() {
  while (!state.ready) await new Promise((r) => setTimeout(r, 30));
}

