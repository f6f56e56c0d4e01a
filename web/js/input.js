// Input: the file picker, the folder picker, drag and drop (a zip, or a folder via the File System entries API),
// and the bundled samples.
import { $, el } from './dom.js';
import { setStatus, showMessage } from './status.js';
import { openFile, openFolder, openDeltaLog, rediagnose } from './diagnosis.js';
import { rememberSettings } from './settings.js';

const MAX_FOLDER_FILES = 200000;

function filesFromFolderInput(fileList) {
  const arr = [...fileList];
  if (arr.length === 0) return null;
  const first = arr[0].webkitRelativePath || arr[0].name;
  const top = first.split('/')[0];
  const files = arr.slice(0, MAX_FOLDER_FILES + 1).map((f) => {
    const rel = f.webkitRelativePath || f.name;
    return { path: rel.startsWith(top + '/') ? rel.slice(top.length + 1) : rel, file: f };
  });
  return { name: top, files };
}

function readAllEntries(dirEntry) {
  // readEntries returns batches; call until empty.
  const reader = dirEntry.createReader();
  return new Promise((resolve, reject) => {
    const out = [];
    const next = () => reader.readEntries((batch) => {
      if (batch.length === 0) resolve(out);
      else { out.push(...batch); next(); }
    }, reject);
    next();
  });
}

function entryFile(fileEntry) {
  return new Promise((resolve, reject) => fileEntry.file(resolve, reject));
}

/** Walks a dropped directory (File System entries API), bounded by MAX_FOLDER_FILES. Paths are relative to it. */
async function walkDirectory(dirEntry) {
  const files = [];
  const stack = [[dirEntry, '']];
  while (stack.length) {
    const [dir, prefix] = stack.pop();
    for (const entry of await readAllEntries(dir)) {
      const path = prefix ? `${prefix}/${entry.name}` : entry.name;
      if (entry.isDirectory) stack.push([entry, path]);
      else if (entry.isFile) {
        files.push({ path, file: await entryFile(entry) });
        if (files.length > MAX_FOLDER_FILES) {
          throw { kind: 'over-limit', message: `The folder ${dirEntry.name} has more than ${MAX_FOLDER_FILES} files, over the inspector's limit.` };
        }
      }
    }
  }
  return files;
}

async function onDrop(ev) {
  ev.preventDefault();
  hideDropzone();
  const dt = ev.dataTransfer;
  if (!dt) return;
  // The second target takes the Delta source table's _delta_log.
  const delta = !!(ev.target && ev.target.closest && ev.target.closest('#delta-drop'));
  delete $('#delta-drop').dataset.over;
  const items = [...(dt.items || [])].filter((i) => i.kind === 'file');
  const entries = items.map((i) => (i.webkitGetAsEntry ? i.webkitGetAsEntry() : null)).filter(Boolean);
  const dir = entries.find((e) => e.isDirectory);
  if (dir) {
    try {
      setStatus(`Listing folder ${dir.name}…`);
      const files = await walkDirectory(dir);
      if (delta) await openDeltaLog({ type: 'delta-log-folder', name: dir.name, files });
      else await openFolder(dir.name, files);
    } catch (e) {
      showMessage(e.message || `Could not read the folder ${dir.name}.`);
    }
    return;
  }
  const files = [...(dt.files || [])];
  if (files.length === 0) return;
  const zip = files.find((f) => /\.zip$/i.test(f.name)) || files[0];
  if (delta) await openDeltaLog({ type: 'delta-log-file', file: zip, name: zip.name });
  else await openFile(zip);
}

let dragDepth = 0;
function hideDropzone() {
  dragDepth = 0;
  $('#dropzone').hidden = true;
}

export function initInputs() {
  $('#file-input').addEventListener('change', (ev) => {
    const f = ev.target.files && ev.target.files[0];
    if (f) openFile(f);
  });
  $('#folder-input').addEventListener('change', (ev) => {
    const got = filesFromFolderInput(ev.target.files || []);
    if (got) {
      if (got.files.length > MAX_FOLDER_FILES) {
        showMessage(`The folder ${got.name} has more than ${MAX_FOLDER_FILES} files, over the inspector's limit.`);
        return;
      }
      openFolder(got.name, got.files);
    }
  });
  $('#delta-log-input').addEventListener('change', (ev) => {
    const f = ev.target.files && ev.target.files[0];
    if (f) openDeltaLog({ type: 'delta-log-file', file: f, name: f.name });
  });
  $('#delta-log-folder-input').addEventListener('change', (ev) => {
    const got = filesFromFolderInput(ev.target.files || []);
    if (got) openDeltaLog({ type: 'delta-log-folder', name: got.name, files: got.files });
  });
  const deltaBox = $('#delta-drop');
  deltaBox.addEventListener('dragover', () => { deltaBox.dataset.over = '1'; });
  deltaBox.addEventListener('dragleave', () => { delete deltaBox.dataset.over; });
  window.addEventListener('dragenter', (ev) => {
    if (![...(ev.dataTransfer?.types || [])].includes('Files')) return;
    ev.preventDefault();
    dragDepth += 1;
    $('#dropzone').hidden = false;
  });
  window.addEventListener('dragover', (ev) => { ev.preventDefault(); if (ev.dataTransfer) ev.dataTransfer.dropEffect = 'copy'; });
  window.addEventListener('dragleave', () => { dragDepth -= 1; if (dragDepth <= 0) hideDropzone(); });
  window.addEventListener('drop', onDrop);
  $('#spark-version').addEventListener('change', () => { rememberSettings(); rediagnose(); });
  $('#verify-all')?.addEventListener('change', () => rediagnose());
  let t = null;
  for (const id of ['#error-text', '#kafka-earliest', '#kafka-latest', '#source-paths']) {
    $(id)?.addEventListener('input', () => {
      clearTimeout(t);
      t = setTimeout(rediagnose, 400);
    });
  }
  $('#file-dialog-close').addEventListener('click', () => $('#file-dialog').close());
}

export async function initSamples() {
  const sel = $('#sample-select');
  let list = [];
  const embedded = document.getElementById('tc-samples');
  if (embedded) {
    try { list = JSON.parse(embedded.textContent).samples; } catch (_) { list = []; }
  } else {
    try {
      const r = await fetch('web/samples/index.json');
      if (r.ok) list = (await r.json()).samples;
    } catch (_) { list = []; }
  }
  for (const s of list) sel.append(el('option', { value: s.file, dataset: { b64: s.base64 || '' } }, s.label));
  sel.addEventListener('change', async () => {
    const s = list.find((x) => x.file === sel.value);
    if (!s) return;
    let blob;
    if (s.base64) {
      blob = new Blob([Uint8Array.from(atob(s.base64), (c) => c.charCodeAt(0))], { type: 'application/zip' });
    } else {
      const r = await fetch(`web/samples/${s.file}`);
      blob = await r.blob();
    }
    await openFile(new File([blob], s.file, { type: 'application/zip' }), true);
  });
}

