// The status line, the progress bar (with its Cancel button, shown while a run is busy) and the message box.
import { $ } from './dom.js';

export function setStatus(text) {
  $('#status-text').textContent = text;
}
export function showMessage(text, kind = 'error') {
  const m = $('#message');
  m.textContent = text;
  m.dataset.kind = kind;
  m.hidden = false;
}
export function clearMessage() {
  $('#message').hidden = true;
  $('#message').textContent = '';
}
let progressTimer = null;
export function progressStart(label) {
  const bar = $('#progress');
  bar.removeAttribute('value');
  clearTimeout(progressTimer);
  // Only show the bar for anything that takes longer than a moment.
  progressTimer = setTimeout(() => { bar.hidden = false; }, 150);
  $('#cancel').hidden = false;
  setStatus(label);
}
export function progressUpdate(m) {
  const bar = $('#progress');
  if (m.total > 0) {
    bar.max = m.total;
    bar.value = Math.min(m.done, m.total);
  }
  setStatus(`Reading ${m.path} (${m.done} file${m.done === 1 ? '' : 's'} read of ${m.total} listed)…`);
}
export function progressEnd() {
  clearTimeout(progressTimer);
  $('#progress').hidden = true;
  $('#cancel').hidden = true;
}

