// Registers the hosted inspector's service worker (sw.js beside index.html), so that the page works offline after
// the first visit. Only over http(s): never in the single-file build (file://, and tools/single_file.py drops this
// script), nor where the browser has no service workers. Sets <html data-offline="ready"> once the page's files
// are cached and the worker controls the page, and tells when a newer build has been installed.
if ('serviceWorker' in navigator && /^https?:$/.test(location.protocol) && !window.TC_WORKER_URL) {
  const hadController = Boolean(navigator.serviceWorker.controller);
  navigator.serviceWorker.addEventListener('controllerchange', () => {
    document.documentElement.dataset.offline = 'ready';
    if (!hadController) return;
    const note = document.getElementById('build-note');
    if (note && !document.getElementById('update-note')) {
      const s = document.createElement('span');
      s.id = 'update-note';
      s.textContent = ' · a newer build was installed: reload the page to use it';
      note.after(s);
    }
  });
  addEventListener('load', () => {
    navigator.serviceWorker.register('./sw.js', { scope: './' }).then(async () => {
      await navigator.serviceWorker.ready;
      if (navigator.serviceWorker.controller) document.documentElement.dataset.offline = 'ready';
    }).catch((e) => {
      document.documentElement.dataset.offline = 'unavailable';
      console.warn('offline copy not available:', e && e.message);
    });
  });
}
