#!/usr/bin/env bash
# Builds the browser inspector: `trunk build --release` into dist/, the build id and service worker step
# (tools/offline.py), then the CSP hash step and the single
# self-contained dist/checkpoint-inspector.html (tools/single_file.py). Prints the wasm sizes.
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/env.sh
# Build both wasm bins first, one after the other, with the flags Trunk uses (index.html): Trunk then runs two cargo
# builds at once in the same target dir, which can race on the shared dependencies' LTO bitcode on a cold cache.
# The page's bin has the lib's `page` feature (the `Inspector` class); the worker's does not.
cargo build --profile web --offline --target wasm32-unknown-unknown -p checkpoint-web --no-default-features --features page --bin app
cargo build --profile web --offline --target wasm32-unknown-unknown -p checkpoint-web --no-default-features --bin worker
trunk build --release --public-url ./
python3 tools/offline.py dist
python3 tools/single_file.py dist
