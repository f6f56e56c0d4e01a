// Spark checkpoint inspector: the page's entry module. Plain DOM, no framework, no build step: the hosted build
// loads these ES modules as they are (<script type="module" src="web/js/main.js">); tools/single_file.py joins them
// into one inline script for the file:// single file.
//
// The diagnosis runs in a Web Worker (wasm, crates/checkpoint-web/src/worker.rs): the page sends it the dropped
// File (never its bytes: the worker reads slices lazily) and renders the Report it posts back. Nothing here talks
// to the network except to fetch the page's own samples (hosted build only).
//
// Modules by concern: input.js (pickers, drop, samples) → diagnosis.js (runs) → worker-client.js (requests) →
// report-view.js (verdict, findings, then every view of views/index.js) · state-browser.js + state-charts.js (the
// State tab) · file-view.js · export.js · settings.js · status.js · dom.js / format.js (helpers) · app-state.js.
import { state } from './app-state.js';
import { initSparkVersions, initTheme } from './settings.js';
import { initInputs, initSamples } from './input.js';
import { startWorker, checkReady, readyHooks, cancel } from './worker-client.js';
import { $ } from './dom.js';
import { markdown, summary } from './export.js';
import { views } from './report-view.js';
import { initShare } from './share.js';
import { initLinks, openFromAddress } from './link.js';

// Test/scripting hook (read-only): the last report shown.
window.checkpointInspector = {
  get report() { return state.last ? state.last.report : null; },
  /** What the worker read from the dropped file for the last diagnosis: {bytes, reads, readMs (time in those reads), ms, wasmBytes}. */
  get reading() {
    const l = state.last;
    return l ? { bytes: l.bytesRead, reads: l.reads, readMs: l.readMs, ms: l.ms, wasmBytes: l.wasmBytes } : null;
  },
  get markdown() { return markdown(); },
  get summary() { return summary(); },
  /** The names of the registered views, in display order. */
  get views() { return views.map((v) => v.name); },
};

initTheme();
readyHooks.push(initSparkVersions);
// A shared link (#report=…) opens once the page's wasm runs (it reads the link).
readyHooks.push(openFromAddress);
initInputs();
initShare();
initLinks();
initSamples();
$('#cancel').addEventListener('click', cancel);
startWorker();
checkReady();
