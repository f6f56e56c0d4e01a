#!/usr/bin/env python3
"""Post-build step after `trunk build --release`.

1. Hosted build (dist/index.html): adds the sha256 of every inline <script> (e.g. Trunk's bootstrap, if any) to the
   CSP's script-src, so `script-src 'self'` stays strict (the hash can only be known after the build).
2. Writes dist/checkpoint-inspector.html: one self-contained file that works from file:// with no server. The
   stylesheet, icon, page script (the ES modules of web/js/, joined into one script by `bundle`), the worker (its
   wasm-bindgen glue plus the wasm as base64, started from a blob: URL) and the samples are inlined; its CSP is
   `connect-src 'none'` with hashes for the inline script and style.
3. Prints the sizes (wasm raw and gzip, single file).
4. Fails when the worker's wasm or the single file is over the size budget the README states.

Usage: tools/single_file.py [DIST]   (default: dist)
"""
import base64
import graphlib
import gzip
import hashlib
import json
import re
import sys
from pathlib import Path

dist = Path(sys.argv[1] if len(sys.argv) > 1 else "dist")
html_path = dist / "index.html"
html = html_path.read_text(encoding="utf-8")


def sha256_b64(text: str) -> str:
    return "'sha256-" + base64.b64encode(hashlib.sha256(text.encode("utf-8")).digest()).decode() + "'"


CSP_RE = re.compile(r'(<meta http-equiv="Content-Security-Policy" content=")([^"]*)(")')


def set_csp(doc: str, csp: str) -> str:
    if not CSP_RE.search(doc):
        sys.exit("error: no CSP meta tag in index.html")
    return CSP_RE.sub(lambda m: m.group(1) + csp + m.group(3), doc, count=1)



# The page's ES modules (web/js/) joined into one script for the single file: a file:// page cannot load module
# files, and blob:/data: module URLs would need a looser CSP. Each module becomes a function scope that returns its
# exports (modules run once, dependencies first, as the browser runs them). The modules keep to a subset this
# reads exactly, and anything else is an error, never a silent miss:
#   import { a, b as c } from './x.js';      import * as ns from './x.js';      export * as name from './x.js';
#   export function / async function / const / class NAME      (no `export let`, default exports or cycles)
IMPORT_RE = re.compile(r"^import\s*\{([^}]*)\}\s*from\s*'(\.{1,2}/[^']+)';[ \t]*$", re.M)
IMPORT_NS_RE = re.compile(r"^import\s+\*\s+as\s+([\w$]+)\s+from\s+'(\.{1,2}/[^']+)';[ \t]*$", re.M)
EXPORT_NS_RE = re.compile(r"^export\s+\*\s+as\s+([\w$]+)\s+from\s+'(\.{1,2}/[^']+)';[ \t]*$", re.M)
EXPORT_DECL_RE = re.compile(r"^export\s+(async\s+function\*?|function\*?|const|class)\s+([\w$]+)", re.M)


def bundle(entry: Path) -> str:
    modules = {}  # path -> (source without import/export syntax, [(dep path, binding js)], [export names])
    todo = [entry.resolve()]
    while todo:
        path = todo.pop()
        if path in modules:
            continue
        src = path.read_text(encoding="utf-8")
        deps = []

        def dep(spec):
            target = (path.parent / spec).resolve()
            if not target.is_file():
                sys.exit(f"error: {path.name} imports {spec}, which does not exist")
            todo.append(target)
            return target

        exports = []

        def named(m):
            names = []
            for part in m.group(1).split(","):
                part = part.strip()
                if not part:
                    continue
                mm = re.fullmatch(r"([\w$]+)(?:\s+as\s+([\w$]+))?", part)
                if not mm:
                    sys.exit(f"error: {path.name}: cannot read the import {part!r}")
                names.append(mm.group(1) + (": " + mm.group(2) if mm.group(2) else ""))
            deps.append((dep(m.group(2)), "const { " + ", ".join(names) + " } = "))
            return ""

        def namespace(m):
            deps.append((dep(m.group(2)), f"const {m.group(1)} = "))
            return ""

        def reexport(m):
            exports.append((m.group(1), dep(m.group(2))))
            return ""

        body = IMPORT_RE.sub(named, src)
        body = IMPORT_NS_RE.sub(namespace, body)
        body = EXPORT_NS_RE.sub(reexport, body)

        def decl(m):
            exports.append((m.group(2), None))
            return m.group(1) + " " + m.group(2)

        body = EXPORT_DECL_RE.sub(decl, body)
        left = re.findall(r"^[ \t]*(?:import|export)\b.*$", body, re.M)
        if left:
            sys.exit(f"error: {path.name}: import/export the single-file bundler does not read: {left[0].strip()}")
        modules[path] = (body, deps, exports)
    order = list(graphlib.TopologicalSorter(
        {p: {d for d, _ in m[1]} | {d for _, d in m[2] if d} for p, m in modules.items()}).static_order())
    ids = {p: f"__tc_m{i}" for i, p in enumerate(order)}
    root = entry.resolve().parent
    out = []
    for p in order:
        body, deps, exports = modules[p]
        head = "".join(f"{binding}{ids[d]};\n" for d, binding in deps)
        ret = ", ".join(f"{n}: {ids[d]}" if d else n for n, d in exports)
        out.append(f"// ---- {p.relative_to(root)}\nconst {ids[p]} = (() => {{\n{head}{body}\nreturn Object.freeze({{ {ret} }});\n}})();\n")
    return "".join(out)


# 1. Hosted build: hash inline scripts into script-src.
inline_scripts = re.findall(r"<script(?![^>]*\bsrc=)(?![^>]*application/json)[^>]*>(.*?)</script>", html, re.S)
hosted_csp = CSP_RE.search(html).group(2)
if inline_scripts and any(sha256_b64(x) not in hosted_csp for x in inline_scripts):
    hashes = " ".join(h for h in (sha256_b64(s) for s in inline_scripts) if h not in hosted_csp)
    hosted_csp = re.sub(r"script-src ([^;]*)", lambda m: "script-src " + m.group(1) + " " + hashes, hosted_csp, count=1)
    html = set_csp(html, hosted_csp)
    html_path.write_text(html, encoding="utf-8")
    print(f"hosted CSP: hashed {len(inline_scripts)} inline script(s)")

# 2. Single file.
web = dist / "web"
css = (web / "style.css").read_text(encoding="utf-8")
icon_uri = "data:image/svg+xml;base64," + base64.b64encode((web / "icon.svg").read_bytes()).decode()
app_js = bundle(web / "js" / "main.js")
worker_glue = (dist / "worker.js").read_text(encoding="utf-8")
wasm = (dist / "worker_bg.wasm").read_bytes()
worker_src = (
    worker_glue
    + "\nwasm_bindgen({ module_or_path: Uint8Array.from(atob("
    + json.dumps(base64.b64encode(wasm).decode())
    + "), (c) => c.charCodeAt(0)) });\n"
)


def js_string(s: str) -> str:
    """A JS string literal safe inside an inline <script>."""
    return json.dumps(s).replace("</", "<\\/").replace("<!--", "<\\!--")


# The page's wasm (Trunk's main app): its ES-module glue inlined, initialised from base64 bytes instead of a fetch,
# then exposed like Trunk's bootstrap does (window.wasmBindings + the TrunkApplicationStarted event).
app_glue_path = next(dist.glob("app-*.js"))
app_glue = app_glue_path.read_text(encoding="utf-8")
app_wasm = next(p for p in dist.glob("app-*_bg.wasm")).read_bytes()
exports = re.findall(r"^export (?:function|class) (\w+)", app_glue, re.M)
if not exports or "__wbg_init as default" not in app_glue:
    sys.exit(f"error: unexpected wasm-bindgen glue in {app_glue_path.name}")
glue_script = (
    app_glue
    + "\nconst __tc_wasm = await __wbg_init({ module_or_path: Uint8Array.from(atob("
    + json.dumps(base64.b64encode(app_wasm).decode())
    + "), (c) => c.charCodeAt(0)) });\n"
    + "window.wasmBindings = { " + ", ".join(exports) + " };\n"
    + "dispatchEvent(new CustomEvent('TrunkApplicationStarted', { detail: { wasm: __tc_wasm } }));\n"
)

boot = (
    "window.TC_WORKER_URL = URL.createObjectURL(new Blob(["
    + js_string(worker_src)
    + "], { type: 'text/javascript' }));\n"
)
page_script = boot + app_js
for name, text in (("web/js (bundled)", page_script), (app_glue_path.name, glue_script)):
    if "</script" in text.lower():
        sys.exit(f"error: {name} contains '</script', cannot inline it")

samples_index = json.loads((web / "samples" / "index.json").read_text(encoding="utf-8"))
samples = []
for s in samples_index["samples"]:
    data = (web / "samples" / s["file"]).read_bytes()
    samples.append({"file": s["file"], "label": s["label"], "base64": base64.b64encode(data).decode()})
samples_json = json.dumps({"samples": samples}).replace("</", "<\\/")

single = html
single = re.sub(r'<link rel="stylesheet" href="web/style.css">', lambda m: "<style>" + css + "</style>", single)
single = single.replace('href="web/icon.svg"', f'href="{icon_uri}"').replace('src="web/icon.svg"', f'src="{icon_uri}"')
single, n = re.subn(r'<script type="module" src="web/js/main.js"></script>', "", single)
if n != 1:
    sys.exit("error: index.html does not load web/js/main.js")
# No service worker in the single file (file:// has none; the hosted build registers it).
single = re.sub(r'<script type="module" src="web/js/sw-register.js"></script>', "", single)
single = re.sub(r'<link rel="copy-file"[^>]*>', "", single)
# Drop any Trunk bootstrap / preload links (none for a worker-only page, but be safe).
single = re.sub(r"<link[^>]*rel=\"(?:modulepreload|preload)\"[^>]*>", "", single)
single = re.sub(r"<script(?![^>]*\bsrc=)(?![^>]*application/json)[^>]*>.*?</script>", "", single, flags=re.S)
tail = (
    '<script type="application/json" id="tc-samples">' + samples_json + "</script>\n"
    + '<script type="module">' + glue_script + "</script>\n"
    + '<script type="module">' + page_script + "</script>\n</body>"
)
single = single.replace("</body>", tail, 1)
single_csp = (
    "default-src 'none'; "
    f"script-src 'wasm-unsafe-eval' {sha256_b64(glue_script)} {sha256_b64(page_script)}; "
    f"style-src {sha256_b64(css)}; "
    "img-src data:; worker-src blob:; connect-src 'none'; base-uri 'none'; form-action 'none'"
)
single = set_csp(single, single_csp)
out = dist / "checkpoint-inspector.html"
out.write_text(single, encoding="utf-8")

# 3. Sizes.
for label, data in (("worker_bg.wasm (diagnosis, in the Web Worker)", wasm), ("app_bg.wasm (page: presenting and exporting reports)", app_wasm)):
    print(f"{label}: {len(data):,} bytes ({len(gzip.compress(data, 9)):,} gzip -9)")
print(f"checkpoint-inspector.html (single file): {out.stat().st_size:,} bytes")

# 4. The size budget the README states ("Sizes"): a build over it fails.
BUDGET = {"worker_bg.wasm": (len(wasm), 3_700_000), "checkpoint-inspector.html": (out.stat().st_size, 6_100_000)}
over = [f"{name}: {size:,} bytes, budget {limit:,}" for name, (size, limit) in BUDGET.items() if size > limit]
if over:
    sys.exit("over the size budget (README, Sizes): " + "; ".join(over))
