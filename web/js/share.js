// Share by link. "Copy link to this report" puts the report (never the checkpoint: no file contents, no state rows),
// redacted and compressed by the core (checkpoint_core::share, through the page's wasm), into the address's
// `#report=` fragment, which browsers never send to a server. Before copying, the user sees exactly what the link
// carries (the redacted report) and can turn redaction off per category; the choices persist in this browser.
// Opening such a link: link.js. Everything from a link is shown as text, never as HTML.
import { $, el } from './dom.js';
import { state } from './app-state.js';
import { inspector } from './core.js';
import { load, save } from './settings.js';

const KEEP_KEY = 'share-keep';

/** The categories the user chose NOT to redact (stored; unknown names are dropped by the core). */
function kept() {
  try {
    const v = JSON.parse(load(KEEP_KEY) || '[]');
    return Array.isArray(v) ? v.filter((x) => typeof x === 'string') : [];
  } catch (_) {
    return [];
  }
}

/** This page's address without its fragment: a link opens on the same copy of the inspector (hosted or file). */
function base() {
  return location.href.split('#')[0];
}

function fmtKiB(n) {
  return `${(n / 1024).toFixed(1)} KiB`;
}

/** Builds the link for the shown report with the current choices and fills the dialog. */
function refresh() {
  const keep = kept();
  const box = $('#share-body');
  // A new diagnosis is under way (its verdict may be shown already): there is no full report to share yet.
  if (!state.last) {
    box.replaceChildren(el('p', { class: 'muted', 'data-testid': 'share-waiting' }, 'The report is being read again; open this dialog again once it is shown in full.'));
    return;
  }
  let link;
  try {
    link = inspector().shareLink(state.last.reportJson, Object.fromEntries(keep.map((c) => [c, false])));
  } catch (e) {
    box.replaceChildren(el('p', { class: 'message', role: 'alert', 'data-testid': 'share-error' }, `The link could not be made: ${e.message || e}`));
    return;
  }
  const url = `${base()}#${link.fragment}`;
  const toggles = el('fieldset', { class: 'share-toggles' }, el('legend', {}, 'Redact (replace with placeholders such as topic-1, <path-2>)'),
    inspector().shareCategories().map((c) => {
      const id = `share-redact-${c.name}`;
      const input = el('input', { type: 'checkbox', id, 'data-category': c.name, checked: !keep.includes(c.name) });
      input.addEventListener('change', () => {
        const next = new Set(kept());
        if (input.checked) next.delete(c.name); else next.add(c.name);
        save(KEEP_KEY, JSON.stringify([...next].sort()));
        refresh();
      });
      const n = link.replaced[c.name];
      return el('div', { class: 'toggle' }, input, el('label', { for: id }, el('b', {}, c.name), ` — ${c.description}`,
        n ? el('span', { class: 'muted' }, ` (${n} value${n === 1 ? '' : 's'} replaced)`) : ''));
    }));
  const urlInput = el('input', { type: 'text', id: 'share-url', readonly: true, value: url, 'aria-label': 'The link', spellcheck: 'false' });
  const copy = el('button', { type: 'button', class: 'primary', id: 'share-copy' }, 'Copy link');
  const note = el('span', { class: 'muted', id: 'share-note', role: 'status' });
  copy.addEventListener('click', async () => {
    try {
      await navigator.clipboard.writeText(url);
      note.textContent = 'Link copied.';
    } catch (_) {
      // Clipboard refused (permission, file://): the link is selected for Ctrl+C.
      urlInput.focus();
      urlInput.select();
      note.textContent = 'Press Ctrl+C (⌘C) to copy the selected link.';
    }
  });
  box.replaceChildren(
    toggles,
    el('div', { class: 'share-row' }, urlInput, copy),
    note,
    el('p', { class: 'muted', 'data-testid': 'share-size' },
      `The link is ${fmtKiB(link.bytes)} (budget ${fmtKiB(link.budget_bytes)}). File contents and state rows are never in a link.`),
    link.cut_notes.length ? el('div', { class: 'message', 'data-kind': 'warning', 'data-testid': 'share-cut' },
      el('strong', {}, 'Cut to fit the link: '), el('ul', {}, link.cut_notes.map((n) => el('li', {}, n)))) : '',
    el('details', { class: 'share-preview', open: true },
      el('summary', {}, 'Exactly what the link carries'),
      el('pre', { id: 'share-preview', tabindex: '0' }, link.preview)));
}

/** "Copy link to this report": opens the dialog with the preview and the toggles. */
export function openShareDialog() {
  if (!state.last) return;
  const dlg = $('#share-dialog');
  refresh();
  if (!dlg.open) dlg.showModal();
}

export function initShare() {
  $('#share-dialog-close').addEventListener('click', () => $('#share-dialog').close());
}

/** The banner above a report from a link: where it came from, which inspector made it, that nothing is loaded. */
export function linkBanner(shared) {
  const redacted = shared.redacted.length ? shared.redacted.join(', ') : 'nothing';
  return el('div', { class: 'banner', role: 'note', 'data-testid': 'link-banner' },
    el('strong', {}, 'Shared report, read-only. '),
    `It came from a link made by checkpoint-inspector ${shared.inspector_version} (link format ${shared.format_version}). `,
    'No checkpoint is loaded: files and state cannot be opened. ',
    `Redacted when shared: ${redacted}.`,
    shared.cut_notes.length ? el('div', {}, 'Cut to fit the link: ', shared.cut_notes.join(' ')) : null,
    el('div', {}, 'Drop the checkpoint itself to diagnose it here.'));
}
