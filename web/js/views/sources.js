// View: the sources and their latest offsets.
import { el, table } from '../dom.js';

/** Where the report view places this view among the others (lower first) and how wide it is. */
export const order = 20;
export const layout = 'narrow-half';

export function render(container, c) {
  if (c.kind === 'dstream') return; // a DStream checkpoint has no batches, sources, operators or SQL confs
  container.append(sources(c));
}

function sources(c) {
  if (!c.sources || c.sources.length === 0) return el('div', { class: 'panel' }, el('h3', {}, 'Sources'), el('p', { class: 'muted' }, 'No source offsets recorded.'));
  return el('div', { class: 'panel' }, el('h3', {}, 'Sources (latest offsets)'),
    table([{ label: '#', num: true }, 'kind', 'latest offset'],
      c.sources.map((s) => [String(s.index), s.name ? `${s.kind} (${s.name})` : s.kind,
        el('code', {}, s.latest_offset === null || s.latest_offset === undefined ? '—' : JSON.stringify(s.latest_offset))])));
}
