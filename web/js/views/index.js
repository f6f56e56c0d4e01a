// The views registry. The report view calls every view listed here for each checkpoint of the report, in the order
// of their `order` export (then by name), each in its own container:
//
//   export function render(container, checkpointReport, page) { container.append(...); }
//   export const order = 100;      // optional, default 100: lower comes first (built-ins use 10..50)
//   export const layout = 'wide';  // optional: 'wide' (default, full width), 'wide-half' / 'narrow-half' (two columns)
//
// `checkpointReport` is one element of the report's `checkpoints` (REPORT-CONTRACT.md); `page` is the page's API for
// views (see `pageApi` in ../report-view.js: the whole report, the input's file listing, element builders,
// formatting, the worker, whether the report is read-only from a link). A view that has nothing to show leaves the
// container empty (it is then removed). A view that throws is shown as a one-line error; the others still render.
// Set text with el()/textContent only, never innerHTML: report data may come from a hostile checkpoint or a link.
//
// Adding a view: write web/js/views/<feature>.js and add ONE line here, `export * as <name> from './<feature>.js';`
// (keep a blank line between lines, so that branches adding views merge without conflicts).

export * as timeline from './timeline.js';

export * as sources from './sources.js';

export * as operators from './operators.js';

export * as confs from './confs.js';

export * as dstream from './dstream.js';


export * as restartPlan from './restart-plan.js';
