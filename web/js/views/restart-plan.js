// View: the restart plan (the report's `restart_plan`): the ways out of a failing or risky verdict, safest first,
// each with its steps, costs, what a computed start left out, when it goes stale, and PySpark/Scala snippets with
// copy buttons. The snippets are text to paste; nothing here runs them. Text is set with el() only.
import { el } from '../dom.js';

/** First among the views: the plan belongs right under the verdict and the findings. */
export const order = 5;
export const layout = 'wide';

const KIND = {
  repair_in_place: 'repair in place',
  retry: 'retry',
  raise_retention: 'raise retention',
  fail_on_data_loss_false: 'failOnDataLoss=false',
  new_checkpoint_bounded_start: 'new checkpoint, bounded start',
  new_checkpoint: 'new checkpoint',
};

export function render(container, c) {
  const plan = c.restart_plan;
  if (!plan || !Array.isArray(plan.ways_out) || plan.ways_out.length === 0) return;
  const panel = el('div', { class: 'panel restart-plan', 'data-testid': 'restart-plan' },
    el('h3', {}, 'Restart plan: ways out, safest first'));
  for (const n of plan.notes || []) panel.append(el('p', { class: 'muted' }, String(n)));
  const list = el('ol', { class: 'ways-out' });
  for (const w of plan.ways_out) list.append(wayOut(w));
  panel.append(list);
  container.append(panel);
}

function wayOut(w) {
  const li = el('li', { class: 'way-out', 'data-testid': 'way-out', dataset: { kind: String(w.kind || '') } },
    el('div', { class: 'way-title' },
      el('strong', {}, String(w.title || '')), ' ',
      el('span', { class: 'badge' }, KIND[w.kind] || String(w.kind || '')),
      w.data_loss ? el('span', { class: 'badge data-loss', title: 'skips data without an error' }, 'silent gap') : null));
  const items = (label, xs) => (xs && xs.length
    ? el('div', { class: 'way-part' }, el('div', { class: 'muted' }, label), el('ul', {}, xs.map((x) => el('li', {}, String(x)))))
    : null);
  li.append(items('Steps', w.steps) || '', items('Cost', w.costs) || '', items('Left out of the computed start', w.dropped) || '');
  if (typeof w.recompute_after_ms === 'number') {
    li.append(el('p', { class: 'recompute' }, `Recompute this start after ${new Date(w.recompute_after_ms).toISOString()}: it goes stale.`));
  }
  for (const s of w.snippets || []) li.append(snippet(s));
  return li;
}

function snippet(s) {
  const code = String(s.code || '');
  const status = el('span', { class: 'muted copy-status', role: 'status' });
  const button = el('button', {
    type: 'button', class: 'copy-snippet', 'data-testid': 'copy-snippet', dataset: { language: String(s.language || '') },
    onclick: async () => {
      try {
        await navigator.clipboard.writeText(code);
        status.textContent = 'copied';
      } catch (_) {
        status.textContent = 'copy failed: select the text and copy it';
      }
    },
  }, `Copy ${s.language === 'scala' ? 'Scala' : 'PySpark'}`);
  return el('div', { class: 'snippet' },
    el('div', { class: 'snippet-head' }, el('span', {}, s.language === 'scala' ? 'Scala' : 'PySpark'), button, status),
    el('pre', { 'data-testid': 'snippet-code' }, el('code', {}, code)));
}
