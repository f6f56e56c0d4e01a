// The core's decisions, as the page's wasm (crates/checkpoint-web, class `Inspector`) exposes them: how a report is
// presented (verdict words, finding order, hints worded for the page), the Spark versions to offer, Markdown and the
// summary. Nothing of it is re-derived here. Available once the page's wasm runs (`ready()`).

/** The page's wasm class, or null before it has loaded. */
export function inspector() {
  return (window.wasmBindings && window.wasmBindings.Inspector) || null;
}

/** True once the page's wasm is running. */
export function ready() {
  return inspector() !== null;
}
