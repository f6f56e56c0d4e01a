// Runs the core compiled to raw wasm (this folder's crate) in Node's V8 on each zip given, in one process, and
// prints per run the time to the verdict (diagnose_progressive's early report) and in all, and the wasm memory:
// the first run is what a page's first diagnosis pays (baseline-compiled code, memory growth), later ones the
// steady state. Profile with Node's sampling profiler and summarise the hottest functions:
//
//   cd tools/wasm-prof && cargo build --release --target wasm32-unknown-unknown --offline
//   node run.mjs /tmp/mid.zip /tmp/mid.zip            # RESERVE_MIB=36: grow the heap first, as the worker does
//   node --cpu-prof --cpu-prof-dir=prof run.mjs /tmp/mid.zip && python3 top.py prof
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const here = path.dirname(fileURLToPath(import.meta.url));
const wasm = fs.readFileSync(path.join(here, 'target/wasm32-unknown-unknown/release/wasm_prof.wasm'));
const mod = await WebAssembly.compile(wasm);
// The core's wasm-bindgen imports (describe, externref) are never called by these exports.
const unused = new Proxy({}, { get: () => () => 0 });
let t0 = 0;
let marks = [];
const inst = await WebAssembly.instantiate(mod, {
  __wbindgen_placeholder__: unused, __wbindgen_externref_xform__: unused,
  env: { mark: () => { marks.push(performance.now() - t0); } },
});
if (process.env.RESERVE_MIB) inst.exports.reserve(Number(process.env.RESERVE_MIB) << 20);
for (const f of process.argv.slice(2)) {
  const zip = fs.readFileSync(f);
  const p = inst.exports.buf(zip.length);
  new Uint8Array(inst.exports.memory.buffer, p, zip.length).set(zip);
  marks = [];
  t0 = performance.now();
  const n = inst.exports.run(p, zip.length);
  const ms = Math.round(performance.now() - t0);
  console.log(JSON.stringify({ zip: path.basename(f), report_bytes: n, verdict_ms: marks.length ? Math.round(marks[0]) : null,
    total_ms: ms, wasm_mib: inst.exports.memory.buffer.byteLength >> 20 }));
}
