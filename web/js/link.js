// Opening a shared link (`#report=…`, made by share.js or the CLI's `diagnose --share-link`) on any copy of the page,
// hosted or the single file: the core reads it (format version, bounded inflate, typed checks), the page renders the
// report read-only with a banner (report-view.js: share.js's linkBanner). A damaged, truncated or hostile link gives
// a clear message; everything from a link is rendered as text, never as HTML.
import { $ } from './dom.js';
import { state } from './app-state.js';
import { inspector } from './core.js';
import { setStatus, showMessage, clearMessage } from './status.js';
import { render } from './report-view.js';
import { Listing } from './listing.js';

/** Opens the report of a `#report=` address, if there is one; returns whether there was one. */
export function openFromAddress() {
  const hash = location.hash || '';
  if (!/^#report=/.test(hash)) return false;
  openLink(hash);
  return true;
}

/** Shows the report a link carries, read-only; or says clearly why the link cannot be read. */
export async function openLink(text) {
  clearMessage();
  const results = $('#results');
  let shared;
  try {
    shared = inspector().openShareFragment(text);
    state.input = null;
    state.last = { report: shared.report, reportJson: shared.report_json, entries: new Listing(), entriesTotal: 0, link: shared };
    await render();
  } catch (e) {
    // A damaged link (the core's typed error), or a report this page cannot present (e.g. from a far newer inspector).
    state.last = null;
    state.input = null;
    results.replaceChildren();
    const box = $('#message');
    showMessage(`This link's report cannot be shown: ${e.message || e}`);
    box.dataset.errorKind = `link-${e.kind || 'damaged'}`;
    results.dataset.run = 'error';
    results.dataset.runCount = String((state.runs += 1));
    setStatus('The link could not be read.');
    return;
  }
  $('#intro').hidden = true;
  results.dataset.run = 'done';
  results.dataset.runCount = String((state.runs += 1));
  setStatus(`Showing a shared report made by checkpoint-inspector ${shared.inspector_version}.`);
}

export function initLinks() {
  window.addEventListener('hashchange', () => openFromAddress());
}
