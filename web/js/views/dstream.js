// View: a DStream checkpoint (REPORT-CONTRACT.md `dstream`): its checkpoint times and files in the order Spark
// tries them, the DStream graph of the file it recovers from, the RDD checkpoint folders that graph restores, and
// every class the serialized stream names, grouped, with the allow-list value and a button to copy it.
// Text only through el()/textContent: class names and paths come from the checkpoint, which may be hostile.
import { el, table } from '../dom.js';
import { fmtBytes, fmtTime } from '../format.js';

export const order = 50;

const GROUPS = [
  ['application', 'Application'],
  ['third_party', 'Third-party libraries'],
  ['spark', 'Spark'],
  ['scala', 'Scala'],
  ['jdk', 'JDK'],
];

const simple = (name) => name.split('.').pop();

export function render(container, c) {
  const d = c.dstream;
  if (!d) return;
  container.append(el('div', { class: 'panel', dataset: { testid: 'dstream' } },
    el('h3', {}, 'DStream checkpoint'),
    el('p', { dataset: { testid: 'dstream-times' } },
      `Checkpoint times: ${(d.checkpoint_times_ms || []).map(fmtTime).join(', ') || '—'}`),
    files(d),
    graph(d),
    rdds(d),
    classes(d),
    allowList(d)));
}

function files(d) {
  if (!d.files || d.files.length === 0) return null;
  return el('div', {},
    el('h4', {}, 'Checkpoint files (in the order Spark tries them)'),
    el('p', { class: 'muted' }, d.recovers_from ? `Spark recovers from ${d.recovers_from}.` : 'No file is readable: recovery fails.'),
    table(['file', 'time', { label: 'size', num: true }, 'codec', 'state'],
      d.files.map((f) => [el('code', {}, f.path), fmtTime(f.time_ms), fmtBytes(f.bytes), f.codec,
        f.readable ? (f.path === d.recovers_from ? 'readable (recovered from)' : 'readable') : `unreadable: ${f.error || ''}`]),
      (i) => ({ dataset: { file: d.files[i].path, readable: String(d.files[i].readable) } })));
}

function graph(d) {
  const cp = d.checkpoint;
  if (!cp) return null;
  const g = cp.graph;
  const role = (i) => (g.output_streams.includes(i) ? 'output' : g.input_streams.includes(i) ? 'input' : '');
  const data = (s) => {
    if (!s.checkpoint_data.length) return '—';
    const rdd = s.checkpoint_data.filter((x) => x.rdd_checkpoint).map((x) => x.rdd_checkpoint);
    return rdd.length ? `${s.checkpoint_data.length} batch(es); RDD ${rdd[rdd.length - 1]}` : `${s.checkpoint_data.length} batch(es)`;
  };
  return el('div', { dataset: { testid: 'dstream-graph' } },
    el('h4', {}, 'DStream graph'),
    el('p', {}, `${cp.app_name || '?'} on ${cp.master || '?'}; batch duration ${g.batch_duration_ms ?? '—'} ms; checkpoint time ${fmtTime(cp.checkpoint_time_ms)}`),
    g.output_streams.map((o) => el('p', { class: 'dstream-chain' }, chain(g, o).map((i) => simple(g.streams[i].class)).join(' → '))),
    table([{ label: '#', num: true }, 'stream', 'role', 'parents', { label: 'slide ms', num: true }, 'creation site', 'checkpoint data'],
      g.streams.map((s, i) => [String(i), el('code', { title: s.class }, simple(s.class)), role(i),
        s.parents.map((p) => `#${p}`).join(', ') || '—', s.slide_duration_ms ?? '—', s.creation_site || '—', data(s)])));
}

/** An output stream's chain down to its input (first parents), input first. */
function chain(g, start) {
  const out = [];
  let cur = start;
  while (cur !== undefined && out.length < 64 && !out.includes(cur)) {
    out.push(cur);
    cur = g.streams[cur]?.parents[0];
  }
  return out.reverse();
}

function rdds(d) {
  if (!d.rdd_checkpoints || d.rdd_checkpoints.length === 0) return null;
  return el('div', {},
    el('h4', {}, 'RDD checkpoint folders the graph restores'),
    table(['folder', 'state'], d.rdd_checkpoints.map((r) => [el('code', {}, r.path), r.exists ? 'present' : 'MISSING'])));
}

function classes(d) {
  const all = d.classes || [];
  if (all.length === 0) return el('p', { class: 'muted' }, 'No classes: no checkpoint file could be read.');
  return el('div', { dataset: { testid: 'dstream-classes' } },
    el('h4', {}, `Classes in the checkpoint (${all.length})`),
    GROUPS.map(([g, label]) => {
      const of = all.filter((k) => k.group === g);
      if (of.length === 0) return null;
      return el('div', { dataset: { group: g } },
        el('h5', {}, `${label} (${of.length})`),
        table(['class', 'serialVersionUID', 'where'], of.map((k) => [
          el('code', {}, k.proxy ? `${k.name} (proxy interface)` : k.name),
          el('code', {}, k.serial_version_uid),
          k.path ? el('code', { class: 'muted' }, k.path) : '—']),
        (i) => ({ dataset: { className: of[i].name } })));
    }));
}

function allowList(d) {
  const value = d.allowed_classes_setting || '';
  const note = el('span', { class: 'muted', role: 'status', dataset: { testid: 'allow-list-note' } });
  const copy = async () => {
    try {
      await navigator.clipboard.writeText(value);
      note.textContent = 'Copied.';
    } catch {
      // No clipboard permission (or file://): select the text for a manual copy.
      const r = document.createRange();
      r.selectNodeContents(code);
      const s = window.getSelection();
      s.removeAllRanges();
      s.addRange(r);
      note.textContent = 'Selected: press Ctrl+C to copy.';
    }
  };
  const code = el('code', { dataset: { testid: 'allow-list-value' } }, value || '(nothing outside Spark, Scala and java.*)');
  return el('div', {},
    el('h4', {}, 'spark.streaming.checkpoint.allowedClasses'),
    el('p', {}, code),
    value ? el('button', { type: 'button', dataset: { testid: 'copy-allow-list' }, onclick: copy }, 'Copy allow-list value') : null,
    ' ', note,
    d.allowed_classes_note ? el('p', { class: 'muted' }, d.allowed_classes_note) : null);
}
