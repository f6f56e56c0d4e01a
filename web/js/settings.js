// The page's settings: the Spark version to restart with, the pasted error, the theme. The version and the theme
// (and the link's redaction choices, share.js) persist across visits in this browser's localStorage, never anywhere
// else; `?spark-version=` in the address wins over the stored version (links carry settings, never data).
import { $, el } from './dom.js';
import { inspector } from './core.js';

export function options() {
  const v = $('#spark-version').value;
  const t = $('#error-text').value;
  const all = $('#verify-all');
  const ke = $('#kafka-earliest')?.value || '';
  const kl = $('#kafka-latest')?.value || '';
  const sp = $('#source-paths')?.value || '';
  return {
    spark_version: v || null, error_text: t.trim() ? t : null, now_ms: Date.now(), verify_all: !!(all && all.checked),
    kafka_earliest: ke.trim() ? ke : null, kafka_latest: kl.trim() ? kl : null,
    source_paths: sp.trim() ? sp : null,
    // Tests: post progress more often than every 100 ms (a fast machine reads a checkpoint in a few steps).
    progress_ms: window.TC_PROGRESS_MS ?? null,
  };
}

/** Fills the version picker with the core's known releases (newest first) and `?spark-version=` of the link. */
export function initSparkVersions() {
  const sel = $('#spark-version');
  if (sel.options.length) return;
  const params = new URLSearchParams(location.search);
  const wanted = inspector().parseSparkVersion(params.get('spark-version') || '') || '';
  const versions = inspector().sparkVersions();
  if (wanted && !versions.includes(wanted)) versions.unshift(wanted);
  sel.append(el('option', { value: '' }, 'Auto (newest consistent)'));
  for (const v of versions) sel.append(el('option', { value: v }, `Spark ${v}`));
  const stored = inspector().parseSparkVersion(load('spark-version') || '') || '';
  if (!wanted && stored && !versions.includes(stored)) sel.append(el('option', { value: stored }, `Spark ${stored}`));
  sel.value = wanted || stored;
}

const PREFIX = 'checkpoint-inspector:';

/** A stored setting, or null (no storage, e.g. disabled by policy, is the same as nothing stored). */
export function load(key) {
  try { return localStorage.getItem(PREFIX + key); } catch (_) { return null; }
}

/** Stores a setting (`null` or '' removes it). */
export function save(key, value) {
  try {
    if (value === null || value === undefined || value === '') localStorage.removeItem(PREFIX + key);
    else localStorage.setItem(PREFIX + key, String(value));
  } catch (_) {
    // Storage refused (private mode, policy): the setting applies to this visit only.
  }
}

const THEMES = ['light', 'dark'];

/** Applies the stored theme at once (before anything renders) and wires the theme picker. */
export function initTheme() {
  const apply = (t) => {
    if (THEMES.includes(t)) document.documentElement.dataset.theme = t;
    else delete document.documentElement.dataset.theme;
  };
  const stored = load('theme');
  apply(stored);
  const sel = $('#theme');
  if (!sel) return;
  sel.value = THEMES.includes(stored) ? stored : '';
  sel.addEventListener('change', () => { apply(sel.value); save('theme', sel.value); });
}

export function rememberSettings() {
  save('spark-version', $('#spark-version').value);
  try {
    const url = new URL(location.href);
    const v = $('#spark-version').value;
    if (v) url.searchParams.set('spark-version', v);
    else url.searchParams.delete('spark-version');
    history.replaceState(null, '', url.toString());
  } catch (_) {
    // file:// pages may refuse replaceState; the setting still applies.
  }
}

