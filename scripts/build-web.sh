#!/usr/bin/env bash
# Builds the browser inspector: `trunk build --release` into dist/, then the CSP hash step and the single
# self-contained dist/checkpoint-inspector.html (tools/single_file.py). Prints the wasm sizes.
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/env.sh
trunk build --release --public-url ./
python3 tools/single_file.py dist
