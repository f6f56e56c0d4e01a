#!/usr/bin/env python3
"""Post-build step after `trunk build --release`.

1. Hosted build (dist/index.html): adds the sha256 of every inline <script> (e.g. Trunk's bootstrap, if any) to the
   CSP's script-src, so `script-src 'self'` stays strict (the hash can only be known after the build).
2. Writes dist/checkpoint-inspector.html: one self-contained file that works from file:// with no server. The
   stylesheet, icon, page script, the worker (its wasm-bindgen glue plus the wasm as base64, started from a blob:
   URL) and the samples are inlined; its CSP is `connect-src 'none'` with hashes for the inline script and style.
3. Prints the sizes (wasm raw and gzip, single file).

Usage: tools/single_file.py [DIST]   (default: dist)
"""
import base64
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
app_js = (web / "app.js").read_text(encoding="utf-8")
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
exports = re.findall(r"^export function (\w+)", app_glue, re.M)
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
for name, text in (("app.js", page_script), (app_glue_path.name, glue_script)):
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
single = re.sub(r'<script type="module" src="web/app.js"></script>', "", single)
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
for label, data in (("worker_bg.wasm (diagnosis, in the Web Worker)", wasm), ("app_bg.wasm (page: report rendering)", app_wasm)):
    print(f"{label}: {len(data):,} bytes ({len(gzip.compress(data, 9)):,} gzip -9)")
print(f"checkpoint-inspector.html (single file): {out.stat().st_size:,} bytes")
