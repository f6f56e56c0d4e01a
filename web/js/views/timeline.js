// View: the batch timeline (offsets vs commits per batch id, batch timestamps and watermark; gaps and the tail;
// the file sink's log beside the checkpoint, with the batches a restart skips and those its reader misses).
import { el, svg } from '../dom.js';
import { fmtTime, fmtAge } from '../format.js';

const MAX_PLOT_BATCHES = 300;

/** Where the report view places this view among the others (lower first) and how wide it is. */
export const order = 10;
export const layout = 'wide-half';

/** The batch timeline: offsets vs commits per batch id, batch timestamps and watermark; gaps and the tail marked. */
export function render(container, c) {
  if (c.kind === 'dstream') return; // a DStream checkpoint has no batches, sources, operators or SQL confs
  container.append(el('div', { class: 'panel plot' }, el('h3', {}, 'Batch timeline'), timeline(c)));
}

function timeline(c) {
  const all = c.batches || [];
  if (all.length === 0) return el('p', { class: 'muted' }, 'No batches in offsets/ or commits/.');
  const batches = all.slice(-MAX_PLOT_BATCHES);
  const byId = new Map(batches.map((b) => [b.batch_id, b]));
  const lo = batches[0].batch_id;
  // The core's view of the sink log (report.sink_logs): the same rules as the sink-log-* findings.
  const sink = (c.sink_logs || [])[0];
  const sinkIds = new Set(sink ? sink.batch_ids : []);
  const compactIds = new Set(sink ? sink.compact_batch_ids : []);
  const skipped = new Set(sink ? sink.skipped_batch_ids : []);
  const sinkMissing = new Set(sink ? sink.missing_batch_ids : []);
  const sinkCell = (g, id, bx, bw, y, h) => {
    const isCompact = compactIds.has(id);
    let cls = null; let tip = null;
    if (sinkMissing.has(id)) { cls = 'cell-missing'; tip = `sink batch ${id}: ${id}${isCompact ? '.compact' : ''} absent, and reading the log needs it`; }
    else if (skipped.has(id)) { cls = 'cell-skipped'; tip = `sink batch ${id}: in the sink log but not in the checkpoint; the restart skips it (no data written)`; }
    else if (sinkIds.has(id)) { cls = 'cell-sink'; tip = `sink batch ${id}: ${sink.dir}/${id}${isCompact ? '.compact (compaction)' : ''}`; }
    if (cls) g.append(svg('rect', { class: cls, x: bx.toFixed(2), y, width: bw.toFixed(2), height: h, rx: Math.min(3, bw / 3), 'data-sink-batch': id }, svg('title', {}, tip)));
  };
  const sinkTop = sink ? Math.max(-1, ...sink.batch_ids.slice(-1), ...sink.missing_batch_ids.slice(-1)) : -1;
  const hi = Math.min(Math.max(batches[batches.length - 1].batch_id, sinkTop), lo + 2 * MAX_PLOT_BATCHES);
  const span = Math.max(1, hi - lo + 1);
  const W = 640; const padL = 96; const padR = 12;
  const plotW = W - padL - padR;
  const cw = plotW / span;
  // Two small line charts, each on its own time axis: batch timestamps (processing time) and the watermark
  // (event time) usually lie far apart, so one shared axis would flatten both.
  const seriesDefs = [['timestamp_ms', 'batch timestamp', 'line-ts', 'dot-ts'], ['watermark_ms', 'watermark', 'line-wm', 'dot-wm']]
    .filter(([key]) => batches.some((b) => b[key] !== null && b[key] !== undefined && b[key] > 0));
  const hasTimes = seriesDefs.length > 0;
  const subH = 46; const subGap = 24; const top = 16; const laneH = 18; const laneGap = 6;
  const lanesY = top + seriesDefs.length * (subH + subGap);
  const nLanes = sink ? 3 : 2;
  const H = lanesY + nLanes * laneH + (nLanes - 1) * laneGap + 28;
  const x = (id) => padL + (id - lo) * cw;
  const g = svg('svg', { viewBox: `0 0 ${W} ${H}`, role: 'img', 'aria-label': `Batch timeline for batches ${lo} to ${hi}` });
  g.append(svg('title', {}, `Batches ${lo}..${hi}: offsets and commits per batch id${hasTimes ? ', batch timestamps and watermark' : ''}`));
  const lastCommitted = c.last_committed_batch_id;
  seriesDefs.forEach(([key, label, lineCls, dotCls], k) => {
    const y0 = top + k * (subH + subGap);
    const pts0 = batches.filter((b) => b[key] !== null && b[key] !== undefined && b[key] > 0);
    const vals = pts0.map((b) => b[key]);
    const tmin = Math.min(...vals); const tmax = Math.max(...vals);
    const tspan = Math.max(1, tmax - tmin);
    const y = (t) => y0 + subH - ((t - tmin) / tspan) * subH;
    const fmtAxis = (t) => (tspan < 86400000 ? new Date(t).toISOString().slice(11, 19) : new Date(t).toISOString().slice(0, 16).replace('T', ' '));
    g.append(svg('line', { class: 'grid', x1: padL, x2: W - padR, y1: y0 + subH, y2: y0 + subH }));
    g.append(svg('line', { class: 'grid', x1: padL, x2: W - padR, y1: y0, y2: y0 }));
    g.append(svg('text', { class: 'axis', x: padL - 4, y: y0 + 4, 'text-anchor': 'end' }, fmtAxis(tmax)));
    if (tmax !== tmin) g.append(svg('text', { class: 'axis', x: padL - 4, y: y0 + subH + 3, 'text-anchor': 'end' }, fmtAxis(tmin)));
    g.append(svg('text', { class: 'label', x: W - padR, y: y0 - 4, 'text-anchor': 'end' }, label));
    const pts = pts0.map((b) => [x(b.batch_id) + cw / 2, tmax === tmin ? y0 + subH / 2 : y(b[key]), b]);
    if (pts.length > 1) g.append(svg('polyline', { class: lineCls, points: pts.map(([px, py]) => `${px.toFixed(1)},${py.toFixed(1)}`).join(' ') }));
    for (const [px, py, b] of pts) {
      g.append(svg('circle', { class: dotCls, cx: px.toFixed(1), cy: py.toFixed(1), r: Math.min(3, Math.max(1.5, cw / 3)) },
        svg('title', {}, `batch ${b.batch_id} ${label} ${fmtTime(b[key])}`)));
    }
  });
  const lanes = [['offsets', 'has_offsets', lanesY], ['commits', 'committed', lanesY + laneH + laneGap]];
  const sinkY = lanesY + 2 * (laneH + laneGap);
  for (const [label, , ly] of lanes) g.append(svg('text', { class: 'label', x: padL - 6, y: ly + laneH / 2 + 4, 'text-anchor': 'end' }, label));
  if (sink) g.append(svg('text', { class: 'label', x: padL - 6, y: sinkY + laneH / 2 + 4, 'text-anchor': 'end' }, 'sink log'));
  for (let id = lo; id <= hi; id++) {
    const b = byId.get(id);
    const bx = x(id) + Math.min(1, cw * 0.1);
    const bw = Math.max(1, cw - Math.min(2, cw * 0.2));
    if (sink) sinkCell(g, id, bx, bw, sinkY, laneH);
    if (!b && id > batches[batches.length - 1].batch_id) continue; // beyond the checkpoint: only the sink lane
    if (!b) {
      g.append(svg('rect', { class: 'gap', x: x(id), y: lanesY, width: cw, height: 2 * laneH + laneGap }, svg('title', {}, `batch ${id}: neither offsets nor commits (gap)`)));
      continue;
    }
    for (const [label, key, ly] of lanes) {
      const present = b[key];
      const isTail = label === 'offsets' && present && !b.committed && (lastCommitted === null || lastCommitted === undefined || id > lastCommitted);
      const cls = !present ? 'cell-missing' : isTail ? 'cell-tail' : `cell-${label}`;
      const tip = `batch ${id}: ${label}/${id} ${present ? 'present' : 'absent'}${isTail ? ' (planned, not committed)' : ''}` +
        (label === 'offsets' && b.timestamp_ms ? `, timestamp ${fmtTime(b.timestamp_ms)}` : '') +
        (label === 'offsets' && b.watermark_ms ? `, watermark ${fmtTime(b.watermark_ms)}` : '');
      g.append(svg('rect', { class: cls, x: bx.toFixed(2), y: ly, width: bw.toFixed(2), height: laneH, rx: Math.min(3, bw / 3) }, svg('title', {}, tip)));
    }
  }
  const tickEvery = Math.max(1, Math.ceil(span / 10));
  for (let id = lo; id <= hi; id += tickEvery) {
    g.append(svg('text', { class: 'axis', x: (x(id) + cw / 2).toFixed(1), y: H - 8, 'text-anchor': 'middle' }, id));
  }
  if ((hi - lo) % tickEvery !== 0) g.append(svg('text', { class: 'axis', x: (x(hi) + cw / 2).toFixed(1), y: H - 8, 'text-anchor': 'middle' }, hi));
  const missing = [];
  const lastId = batches[batches.length - 1].batch_id; // sink batches beyond it are not gaps of the checkpoint
  for (let id = lo; id <= lastId; id++) if (!byId.has(id)) missing.push(id);
  const tail = batches.filter((b) => b.has_offsets && !b.committed && (lastCommitted === null || lastCommitted === undefined || b.batch_id > lastCommitted)).map((b) => b.batch_id);
  const legend = el('div', { class: 'legend' },
    el('span', {}, el('span', { class: 'sw offsets' }), 'offsets written'),
    el('span', {}, el('span', { class: 'sw commits' }), 'committed'),
    el('span', {}, el('span', { class: 'sw tail' }), 'planned, not committed'),
    el('span', {}, el('span', { class: 'sw missing' }), 'missing'),
    sink ? el('span', {}, el('span', { class: 'sw sink' }), 'sink log batch') : null,
    sink && skipped.size ? el('span', {}, el('span', { class: 'sw skipped' }), 'sink batch the restart skips') : null,
    hasTimes ? el('span', {}, el('span', { class: 'sw ts' }), 'batch timestamp') : null,
    hasTimes ? el('span', {}, el('span', { class: 'sw wm' }), 'watermark') : null);
  const notes = [];
  if (all.length > batches.length) notes.push(`Showing the last ${batches.length} of ${all.length} batches.`);
  if (tail.length) notes.push(`Uncommitted tail: batch${tail.length > 1 ? 'es' : ''} ${tail.join(', ')}.`);
  if (missing.length) notes.push(`Gap: no files for batch${missing.length > 1 ? 'es' : ''} ${missing.slice(0, 20).join(', ')}${missing.length > 20 ? '…' : ''}.`);
  if (sink) {
    const ids = sink.batch_ids;
    notes.push(`Sink log ${sink.dir}: ${ids.length ? `batches ${ids[0]}..${ids[ids.length - 1]}` : 'no batch files'}` +
      ` (compaction every ${sink.compact_interval}).`);
    if (skipped.size) notes.push(`The restart skips sink batches ${rangeText([...skipped])} without writing: their data is lost.`);
    if (sinkMissing.size) notes.push(`Sink log files missing that reading the log needs: ${rangeText([...sinkMissing])}.`);
    if ((c.sink_logs || []).length > 1) notes.push(`${c.sink_logs.length - 1} more sink log(s) are in the findings.`);
  }
  const lastTs = [...batches].reverse().find((b) => b.timestamp_ms)?.timestamp_ms;
  if (lastTs) notes.push(`Last batch timestamp ${fmtTime(lastTs)} (${fmtAge(lastTs)}).`);
  return el('div', {}, el('div', { class: 'plot-scroll' }, g), legend, notes.length ? el('p', { class: 'muted', 'data-testid': 'timeline-notes' }, notes.join(' ')) : null);
}

/** `1..4, 7` for a sorted list of ids, at most 20 ranges. */
function rangeText(ids) {
  ids.sort((a, b) => a - b);
  const parts = [];
  for (let i = 0; i < ids.length && parts.length < 20; i++) {
    let j = i;
    while (j + 1 < ids.length && ids[j + 1] === ids[j] + 1) j++;
    parts.push(i === j ? `${ids[i]}` : `${ids[i]}..${ids[j]}`);
    i = j;
  }
  return parts.join(', ') + (parts.length >= 20 ? '…' : '');
}
