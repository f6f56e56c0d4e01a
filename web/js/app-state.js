// The page's shared state: the worker, requests in flight, and the last report shown.

export const state = {
  worker: null,
  workerReady: false,
  ready: false,
  nextId: 1,
  pending: new Map(), // id -> {resolve, reject, onProgress, onVerdict}
  input: null, // {name} of what the worker holds
  last: null, // {report, reportJson, entries (a Listing: ./listing.js), entriesTotal, ms, bytesRead, reads}
  runs: 0,
};
