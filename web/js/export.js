// Export: the report as Markdown or JSON (downloads) and a short summary for the clipboard, rendered by the page's
// wasm (crates/checkpoint-web) from the report the page shows.
import { $, el } from './dom.js';
import { state } from './app-state.js';
import { inspector } from './core.js';

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
export function markdown() {
  return state.last ? inspector().markdown(state.last.reportJson) : null;
}
export function summary() {
  return state.last ? inspector().summary(state.last.reportJson) : null;
}
export function exportMarkdown() {
  if (state.last) download(`${baseName()}-inspection.md`, 'text/markdown', markdown());
}
export function exportJson() {
  if (state.last) download(`${baseName()}-inspection.json`, 'application/json', `${JSON.stringify(state.last.report, null, 2)}\n`);
}
export async function copySummary() {
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

