// Service worker of the hosted inspector (dist/sw.js; tools/offline.py fills in the cache name and the file list
// at build time). On first visit it caches the page, its scripts, both wasm modules and the samples; afterwards
// it serves them from that cache, so the page loads with no network at all. A new build has a new cache name
// (build id + content hash), which makes this file differ: the browser installs the new worker, which caches the
// new files, takes over at once and deletes the old caches.
//
// It makes no request of its own beyond the page's own files (listed below, same origin, same folder), and
// never touches a request for anything else: such a request goes to the network as it would without a worker
// (the page's CSP forbids other origins anyway).
'use strict';

const CACHE = 'checkpoint-inspector-__CACHE_ID__';
/** Paths relative to this file's folder (the page's folder). */
const FILES = __PRECACHE__;

const scope = new URL('./', self.location.href);

self.addEventListener('install', (event) => {
  event.waitUntil((async () => {
    const cache = await caches.open(CACHE);
    // `no-cache`: revalidate with the server, so an older copy in the HTTP cache never lands in a new build.
    await cache.addAll(FILES.map((f) => new Request(new URL(f, scope), { cache: 'no-cache' })));
    await self.skipWaiting();
  })());
});

self.addEventListener('activate', (event) => {
  event.waitUntil((async () => {
    for (const key of await caches.keys()) {
      if (key.startsWith('checkpoint-inspector-') && key !== CACHE) await caches.delete(key);
    }
    await self.clients.claim();
  })());
});

self.addEventListener('fetch', (event) => {
  const req = event.request;
  if (req.method !== 'GET') return;
  const url = new URL(req.url);
  if (url.origin !== scope.origin || !url.pathname.startsWith(scope.pathname)) return;
  event.respondWith((async () => {
    const cache = await caches.open(CACHE);
    // The page itself, whatever its query (`?spark-version=`) or fragment (`#report=`).
    const key = req.mode === 'navigate' ? new URL('index.html', scope) : url;
    const hit = await cache.match(key, { ignoreSearch: true });
    return hit || fetch(req);
  })());
});
