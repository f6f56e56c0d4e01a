// The State tab's pictures and trees: rows and bytes per partition, state size on disk by version, stored schemas,
// and the box for a state that does not decode.
import { el, svg } from './dom.js';
import { fmtBytes } from './format.js';

export const MAX_PLOT_BARS = 64;

export function stateError(e) {
  return el('div', { class: 'message state-error', role: 'alert', 'data-testid': 'state-error' },
    el('strong', {}, 'The state could not be read. '),
    e.message ? `${e.message}${/[.!?]$/.test(e.message) ? '' : '.'}` : '',
    e.path ? el('div', {}, 'File: ', el('code', {}, e.path), e.offset !== undefined && e.offset !== null ? `, at byte ${e.offset}` : '') : null,
    e.error_class ? el('div', {}, 'Spark error class: ', el('code', {}, e.error_class)) : null);
}


/** Bars per partition: rows (top) and bytes (bottom: files on disk, decoded JSON as a thin bar). */
export function renderPartitionPlot(parts) {
  if (!parts.length) return el('p', { class: 'muted' }, 'No partitions.');
  const shown = parts.slice(0, MAX_PLOT_BARS);
  const W = 560; const H = 220; const L = 56; const B = 28; const gap = 14;
  const half = (H - B - gap - 10) / 2;
  const bw = (W - L - 8) / shown.length;
  const maxRows = Math.max(1, ...shown.map((p) => p.rows));
  const maxBytes = Math.max(1, ...shown.map((p) => Math.max(p.file_bytes, p.decoded_bytes)));
  const kids = [];
  const axis = (y, label, value) => [svg('text', { x: L - 6, y: y + 4, 'text-anchor': 'end', class: 'tick' }, value),
    svg('text', { x: 4, y: y + 4, class: 'tick' }, label)];
  kids.push(...axis(8, '', String(maxRows)), svg('text', { x: 4, y: 8 + half / 2, class: 'tick' }, 'rows'));
  kids.push(...axis(8 + half + gap, '', fmtBytes(maxBytes)), svg('text', { x: 4, y: 8 + half + gap + half / 2, class: 'tick' }, 'bytes'));
  shown.forEach((p, i) => {
    const x = L + i * bw + bw * 0.12; const w = Math.max(1, bw * 0.76);
    const rh = (p.rows / maxRows) * half;
    kids.push(svg('rect', { x, y: 8 + half - rh, width: w, height: rh, class: 'bar-rows' },
      svg('title', {}, `partition ${p.partition}: ${p.rows} rows`)));
    const fh = (p.file_bytes / maxBytes) * half; const dh = (p.decoded_bytes / maxBytes) * half;
    const y0 = 8 + half + gap + half;
    kids.push(svg('rect', { x, y: y0 - fh, width: w * 0.62, height: fh, class: 'bar-bytes' },
      svg('title', {}, `partition ${p.partition}: ${fmtBytes(p.file_bytes)} of state files on disk (all versions)`)));
    kids.push(svg('rect', { x: x + w * 0.66, y: y0 - Math.max(dh, p.decoded_bytes > 0 ? 1 : 0), width: w * 0.34, height: Math.max(dh, p.decoded_bytes > 0 ? 1 : 0), class: 'bar-decoded' },
      svg('title', {}, `partition ${p.partition}: ${fmtBytes(p.decoded_bytes)} of decoded rows (JSON) at this batch`)));
    if (shown.length <= 32 || i % Math.ceil(shown.length / 32) === 0) {
      kids.push(svg('text', { x: x + w / 2, y: H - 10, 'text-anchor': 'middle', class: 'tick' }, String(p.partition)));
    }
  });
  const mean = shown.reduce((a, p) => a + p.rows, 0) / shown.length;
  const maxP = shown.reduce((a, p) => (p.rows > a.rows ? p : a), shown[0]);
  const skew = mean > 0 ? maxP.rows / mean : 0;
  return el('div', {},
    svg('svg', { viewBox: `0 0 ${W} ${H}`, class: 'plot-svg', role: 'img', 'data-testid': 'state-partition-plot',
      'aria-label': `Rows and bytes for ${shown.length} partitions; largest partition ${maxP.partition} with ${maxP.rows} rows` }, kids),
    el('p', { class: 'legend' }, el('span', {}, el('span', { class: 'sw rows' }), 'rows'),
      el('span', {}, el('span', { class: 'sw bytes' }), 'state files on disk (all versions)'),
      el('span', {}, el('span', { class: 'sw decoded' }), 'decoded rows (JSON) at this batch'),
      skew >= 2 ? el('strong', { class: 'skew', 'data-testid': 'state-skew' }, `Skew: partition ${maxP.partition} holds ${skew.toFixed(1)}× the mean rows`) : ''),
    parts.length > shown.length ? el('p', { class: 'muted' }, `Showing ${shown.length} of ${parts.length} partitions.`) : null);
}

/** State size on disk by version (all partitions; `joinSide` 'left'/'right': both stores of that side). */
export function renderVersionPlot(op, store, joinSide) {
  let versions;
  if (joinSide) {
    const merged = new Map();
    for (const s of op.stores.filter((x) => x.name.startsWith(`${joinSide}-`))) {
      for (const v of s.versions) {
        const m = merged.get(v.version) || { version: v.version, bytes: 0, files: 0, num_keys: null };
        m.bytes += v.bytes; m.files += v.files;
        merged.set(v.version, m);
      }
    }
    versions = [...merged.values()].sort((a, b) => a.version - b.version);
  } else {
    versions = store ? store.versions : [];
  }
  if (!versions.length) return el('p', { class: 'muted' }, 'No state files by version.');
  const shown = versions.slice(-MAX_PLOT_BARS * 2);
  const W = 560; const H = 220; const L = 64; const B = 28; const T = 10;
  const maxB = Math.max(1, ...shown.map((v) => v.bytes));
  const bw = (W - L - 8) / shown.length;
  const kids = [svg('text', { x: L - 6, y: T + 4, 'text-anchor': 'end', class: 'tick' }, fmtBytes(maxB)),
    svg('text', { x: L - 6, y: H - B + 4, 'text-anchor': 'end', class: 'tick' }, '0'),
    svg('line', { x1: L, x2: W - 4, y1: H - B, y2: H - B, class: 'grid' })];
  const ph = H - B - T;
  const pts = [];
  shown.forEach((v, i) => {
    const x = L + i * bw + bw * 0.15; const w = Math.max(1, bw * 0.7);
    const h = (v.bytes / maxB) * ph;
    const k = v.by_kind || {};
    const full = (k.snapshot || 0) + (k.zip || 0) + (k.sst || 0);
    const fh = Math.min(h, (full / maxB) * ph);
    const tip = `version ${v.version} (batch ${v.version - 1}): ${fmtBytes(v.bytes)} in ${v.files} files${Object.keys(k).length ? ` (${Object.entries(k).map(([n, b]) => `${n} ${fmtBytes(b)}`).join(', ')})` : ''}${v.num_keys !== null && v.num_keys !== undefined ? `, ${v.num_keys} keys` : ''}`;
    kids.push(svg('rect', { x, y: H - B - h, width: w, height: h - fh, class: 'bar-bytes' }, svg('title', {}, tip)));
    if (fh > 0) kids.push(svg('rect', { x, y: H - B - fh, width: w, height: fh, class: 'bar-full' }, svg('title', {}, tip)));
    pts.push(`${x + w / 2},${H - B - h}`);
    if (shown.length <= 24 || i % Math.ceil(shown.length / 24) === 0) {
      kids.push(svg('text', { x: x + w / 2, y: H - 10, 'text-anchor': 'middle', class: 'tick' }, String(v.version)));
    }
  });
  if (pts.length > 1) kids.push(svg('polyline', { points: pts.join(' '), class: 'line-size', fill: 'none' }));
  const keys = shown.filter((v) => v.num_keys !== null && v.num_keys !== undefined);
  return el('div', {},
    svg('svg', { viewBox: `0 0 ${W} ${H}`, class: 'plot-svg', role: 'img', 'data-testid': 'state-version-plot',
      'aria-label': `State size by version: ${shown.length} versions, largest ${fmtBytes(maxB)}` }, kids),
    el('p', { class: 'legend' }, el('span', {}, el('span', { class: 'sw bytes' }), 'delta / changelog'),
      el('span', {}, el('span', { class: 'sw full' }), 'snapshot / zip + its SSTs'),
      el('span', {}, 'Bytes per version summed over partitions; x axis: version (= batch id + 1).'),
      keys.length ? ` Keys (RocksDB metadata) at version ${keys[keys.length - 1].version}: ${keys[keys.length - 1].num_keys}.` : ''),
    versions.length > shown.length ? el('p', { class: 'muted' }, `Showing the last ${shown.length} of ${versions.length} versions.`) : null);
}

function schemaTree(node) {
  const fields = node.fields || [];
  return el('ul', { class: 'schema-tree' }, fields.map((f) => el('li', {},
    el('code', {}, f.name), ': ', el('span', { class: 'type' }, f.type === 'struct' ? 'struct' : f.type),
    f.nullable === false ? el('span', { class: 'muted' }, ' (not null)') : '',
    f.fields ? schemaTree(f) : null,
    f.element && f.element.fields ? schemaTree(f.element) : null,
    f.value && f.value.fields ? schemaTree(f.value) : null)));
}

export function renderSchemas(store, stateVar) {
  const d = el('details', { class: 'panel schemas', open: true, 'data-testid': 'state-schemas' }, el('summary', {}, 'Stored schemas'));
  if (!store) {
    d.append(el('p', { class: 'muted' }, 'A join side reads the keyToNumValues and keyWithIndexToValue stores of that side; pick a store to see its schema.'));
    return d;
  }
  const both = (k, v, title) => el('div', { class: 'grid2' },
    el('div', {}, el('h4', {}, `${title}key`), schemaTree(k)), el('div', {}, el('h4', {}, `${title}value`), schemaTree(v)));
  if (store.schema) d.append(both(store.schema.key, store.schema.value, `${store.name}: `));
  if (store.schema_v3) {
    for (const cf of store.schema_v3.column_families) {
      if (stateVar && cf.name !== stateVar && !cf.internal) continue;
      d.append(both(cf.key, cf.value, `column family ${cf.name}${cf.internal ? ' (internal)' : ''}: `));
    }
    d.append(el('p', { class: 'muted' }, 'From ', el('code', {}, store.schema_v3.path)));
  }
  if (store.schema_error) d.append(stateError(store.schema_error));
  return d;
}

