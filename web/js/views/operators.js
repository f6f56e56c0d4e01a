// View: the stateful operators, and the state files per operator/store and partition from the input's listing.
import { el, table } from '../dom.js';

export const order = 30;

export function render(container, c, page) {
  if (c.kind === 'dstream') return; // a DStream checkpoint has no batches, sources, operators or SQL confs
  container.append(operators(c, page.entries, page.entriesTotal));
}

function operators(c, entries, entriesTotal) {
  if (!c.operators || c.operators.length === 0) return el('div', { class: 'panel' }, el('h3', {}, 'Stateful operators'), el('p', { class: 'muted' }, 'No state/ directory: the query is stateless (or its state is missing).'));
  const partitionsExpected = Number((c.conf || {})['spark.sql.shuffle.partitions']);
  const rows = c.operators.map((o) => {
    const short = Number.isFinite(partitionsExpected) && partitionsExpected > 0 && o.partitions < partitionsExpected;
    return [String(o.operator_id), o.name || '—', o.store_names.join(', '),
      short ? el('span', { class: 'missing', title: `spark.sql.shuffle.partitions is ${partitionsExpected}` }, `${o.partitions} of ${partitionsExpected} (missing)`) : String(o.partitions),
      o.provider, o.latest_version ?? '—'];
  });
  return el('div', { class: 'panel' }, el('h3', {}, 'Stateful operators × partitions × versions'),
    table([{ label: 'op', num: true }, 'name', 'stores', { label: 'partitions', num: true }, 'provider', { label: 'latest version', num: true }], rows),
    stateMatrix(c, partitionsExpected, entries, entriesTotal));
}

/**
 * State files per operator/store and partition, from the input's file listing (what is on disk, not a diagnosis):
 * the range of versions with a delta/changelog/zip file, snapshots, and versions missing inside that range.
 */
function stateMatrix(c, partitionsExpected, entries, entriesTotal) {
  const prefix = c.root ? `${c.root}/state/` : 'state/';
  const rows = new Map(); // "op/store" -> Map(partition -> {versions:Set, snaps:Set})
  let maxPart = -1;
  for (const [p] of entries) {
    if (!p.startsWith(prefix)) continue;
    const parts = p.slice(prefix.length).split('/');
    if (parts.length < 3 || parts.length > 4 || !/^\d+$/.test(parts[0]) || !/^\d+$/.test(parts[1])) continue;
    const m = /^(\d+)(?:_[0-9a-fA-F-]+)?\.(delta|snapshot|changelog|zip)$/.exec(parts[parts.length - 1]);
    if (!m) continue;
    const key = `${parts[0]}/${parts.length === 4 ? parts[2] : 'default'}`;
    const part = Number(parts[1]);
    maxPart = Math.max(maxPart, part);
    if (!rows.has(key)) rows.set(key, new Map());
    const cell = rows.get(key).get(part) || { versions: new Set(), snaps: new Set() };
    if (m[2] === 'snapshot' || m[2] === 'zip') cell.snaps.add(Number(m[1]));
    if (m[2] !== 'snapshot') cell.versions.add(Number(m[1]));
    rows.get(key).set(part, cell);
  }
  if (rows.size === 0) return null;
  const nParts = Math.max(maxPart + 1, Number.isFinite(partitionsExpected) ? partitionsExpected : 0);
  const shownParts = Math.min(nParts, 32);
  const header = ['operator/store', ...Array.from({ length: shownParts }, (_, i) => `p${i}`)];
  const body = [...rows.keys()].sort().map((key) => [el('code', {}, key), ...Array.from({ length: shownParts }, (_, i) => {
    const cell = rows.get(key).get(i);
    if (!cell) return el('span', { class: 'missing', title: `no state files for partition ${i}` }, 'missing');
    const all = [...cell.versions, ...cell.snaps];
    const lo = Math.min(...all); const hi = Math.max(...all);
    const gaps = [];
    const vs = [...cell.versions].sort((a, b) => a - b);
    for (let k = 1; k < vs.length; k++) for (let v = vs[k - 1] + 1; v < vs[k] && gaps.length < 5; v++) gaps.push(v);
    return el('span', { title: `versions ${lo}..${hi}; snapshots ${[...cell.snaps].sort((a, b) => a - b).join(', ') || 'none'}` },
      `${lo}–${hi}`, cell.snaps.size ? el('span', { class: 'muted' }, ` · ${cell.snaps.size} snap`) : '',
      gaps.length ? el('span', { class: 'missing' }, ` · no ${gaps.join(', ')}`) : '');
  })]);
  return el('details', { class: 'state-matrix', open: true },
    el('summary', {}, 'State files per partition (versions on disk)'),
    table(header, body),
    nParts > shownParts ? el('p', { class: 'muted' }, `Showing ${shownParts} of ${nParts} partitions.`) : null,
    entriesTotal > entries.length ? el('p', { class: 'muted' }, 'The file listing was cut; some files may not be counted.') : null);
}
