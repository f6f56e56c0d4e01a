// DOM helpers shared by every module: element and SVG builders, a table, `$`. Text is always set as text
// (textContent / text nodes), never as HTML: report data may come from a hostile checkpoint or a shared link.

export const $ = (sel) => document.querySelector(sel);

/** Creates an element: el('div', {class: 'x', dataset: {a: 1}}, child, 'text', ...). */
export function el(tag, attrs, ...children) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v === undefined || v === null || v === false) continue;
    if (k === 'class') e.className = v;
    else if (k === 'dataset') Object.assign(e.dataset, v);
    else if (k === 'text') e.textContent = v;
    else if (k.startsWith('on')) e.addEventListener(k.slice(2), v);
    else e.setAttribute(k, v === true ? '' : String(v));
  }
  for (const c of children.flat(Infinity)) {
    if (c === undefined || c === null || c === false) continue;
    e.append(c instanceof Node ? c : document.createTextNode(String(c)));
  }
  return e;
}

const SVG_NS = 'http://www.w3.org/2000/svg';
export function svg(tag, attrs, ...children) {
  const e = document.createElementNS(SVG_NS, tag);
  for (const [k, v] of Object.entries(attrs || {})) if (v !== undefined && v !== null) e.setAttribute(k, String(v));
  for (const c of children.flat(Infinity)) if (c !== undefined && c !== null) e.append(c instanceof Node ? c : document.createTextNode(String(c)));
  return e;
}

export function table(headers, rows, rowAttrs) {
  return el('div', { class: 'table-wrap' }, el('table', {},
    el('thead', {}, el('tr', {}, headers.map((h) => el('th', { class: h.num ? 'num' : null, scope: 'col' }, h.label || h)))),
    el('tbody', {}, rows.map((cells, i) => el('tr', rowAttrs ? rowAttrs(i) : {}, cells.map((cell, j) => el('td', { class: headers[j].num ? 'num' : null }, cell)))))));
}
