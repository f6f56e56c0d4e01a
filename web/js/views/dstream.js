// View: a DStream checkpoint's times and serialized classes.
import { el, table } from '../dom.js';
import { fmtTime } from '../format.js';

export const order = 50;

export function render(container, c) {
  const d = c.dstream;
  if (!d) return;
  container.append(el('div', { class: 'panel' }, el('h3', {}, 'DStream checkpoint'),
    el('p', {}, `Checkpoint times: ${d.checkpoint_times_ms.map(fmtTime).join(', ') || '—'}`),
    table(['class', 'serialVersionUID'], d.classes.map((k) => [el('code', {}, k.name), el('code', {}, k.serial_version_uid)])),
    d.allowed_classes_setting ? el('p', {}, 'Allow-list setting: ', el('code', {}, d.allowed_classes_setting)) : null));
}
