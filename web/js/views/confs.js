// View: the confs recorded in the latest offsets file; those a restart forces over the session are marked.
import { el, table } from '../dom.js';

export const order = 40;

export function render(container, c) {
  if (c.kind === 'dstream') return; // a DStream checkpoint has no batches, sources, operators or SQL confs
  container.append(confs(c));
}

function confs(c) {
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
