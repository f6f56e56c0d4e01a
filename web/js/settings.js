// The page's settings: the Spark version to restart with and the pasted error (links carry settings, never data).
import { $, el } from './dom.js';

export function options() {
  const v = $('#spark-version').value;
  const t = $('#error-text').value;
  return { spark_version: v || null, error_text: t.trim() ? t : null, now_ms: Date.now() };
}

export function initSparkVersions() {
  const sel = $('#spark-version');
  const params = new URLSearchParams(location.search);
  const wanted = (params.get('spark-version') || '').trim();
  const versions = [...SPARK_VERSIONS];
  if (/^\d+\.\d+(\.\d+)?$/.test(wanted) && !versions.includes(wanted)) versions.push(wanted);
  sel.append(el('option', { value: '' }, 'Auto (newest consistent)'));
  for (const v of versions.reverse()) sel.append(el('option', { value: v }, `Spark ${v}`));
  if (versions.includes(wanted)) sel.value = wanted;
}

export function rememberSettings() {
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

