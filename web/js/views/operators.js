// View: the stateful operators, and the state files per operator/store and partition (the core's listing).
import { el, table } from '../dom.js';

export const order = 30;

export function render(container, c) {
  if (c.kind === 'dstream') return; // a DStream checkpoint has no batches, sources, operators or SQL confs
  container.append(operators(c));
}

function operators(c) {
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
    stateMatrix(c, partitionsExpected));
}

/**
 * State files per operator/store and partition, as the core lists them (`operators[].state_files`: what is on
 * disk, not a diagnosis): the range of versions, the snapshots, and versions missing inside that range.
 */
function stateMatrix(c, partitionsExpected) {
  const rows = new Map(); // "op/store" -> Map(partition -> overview)
  let maxPart = -1;
  for (const o of c.operators) {
    for (const f of o.state_files || []) {
      const key = `${o.operator_id}/${f.store}`;
      if (!rows.has(key)) rows.set(key, new Map());
      rows.get(key).set(f.partition, f);
      maxPart = Math.max(maxPart, f.partition);
    }
  }
  if (rows.size === 0) return null;
  const nParts = Math.max(maxPart + 1, Number.isFinite(partitionsExpected) ? partitionsExpected : 0);
  const shownParts = Math.min(nParts, 32);
  const header = ['operator/store', ...Array.from({ length: shownParts }, (_, i) => `p${i}`)];
  const body = [...rows.keys()].sort().map((key) => [el('code', {}, key), ...Array.from({ length: shownParts }, (_, i) => {
    const f = rows.get(key).get(i);
    if (!f) return el('span', { class: 'missing', title: `no state files for partition ${i}` }, 'missing');
    return el('span', { title: `versions ${f.first_version}..${f.last_version}; snapshots ${f.snapshot_versions.join(', ') || 'none'}` },
      `${f.first_version}–${f.last_version}`, f.snapshots ? el('span', { class: 'muted' }, ` · ${f.snapshots} snap`) : '',
      f.missing_versions.length ? el('span', { class: 'missing' }, ` · no ${f.missing_versions.join(', ')}`) : '');
  })]);
  return el('details', { class: 'state-matrix', open: true },
    el('summary', {}, 'State files per partition (versions on disk)'),
    table(header, body),
    nParts > shownParts ? el('p', { class: 'muted' }, `Showing ${shownParts} of ${nParts} partitions.`) : null);
}
