// Shows one small file of the input (text, or a hex dump), read by the worker on click.
import { $ } from './dom.js';
import { fmtBytes } from './format.js';
import { request } from './worker-client.js';

function hexdump(bytes) {
  const lines = [];
  for (let i = 0; i < Math.min(bytes.length, 4096); i += 16) {
    const row = bytes.subarray(i, i + 16);
    const hex = [...row].map((b) => b.toString(16).padStart(2, '0')).join(' ');
    const asc = [...row].map((b) => (b >= 32 && b < 127 ? String.fromCharCode(b) : '.')).join('');
    lines.push(`${i.toString(16).padStart(8, '0')}  ${hex.padEnd(47)}  ${asc}`);
  }
  if (bytes.length > 4096) lines.push(`… ${bytes.length - 4096} more bytes`);
  return lines.join('\n');
}

export async function showEntry(path) {
  const dlg = $('#file-dialog');
  $('#file-dialog-title').textContent = path;
  $('#file-dialog-meta').textContent = 'Reading…';
  $('#file-dialog-body').textContent = '';
  if (!dlg.open) dlg.showModal();
  try {
    const m = await request({ type: 'read-entry', path });
    const bytes = m.bytes;
    let text = null;
    try { text = new TextDecoder('utf-8', { fatal: true }).decode(bytes); } catch (_) { text = null; }
    const binary = text === null || /[\u0000-\u0008\u000e-\u001f]/.test(text);
    $('#file-dialog-meta').textContent = `${fmtBytes(m.size)}${binary ? ', binary (hex dump)' : ', text'}`;
    $('#file-dialog-body').textContent = binary ? hexdump(bytes) : text;
  } catch (e) {
    $('#file-dialog-meta').textContent = e.message || String(e);
  }
}

