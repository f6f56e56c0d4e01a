#!/usr/bin/env bash
# Sets everything up, builds the inspector and serves dist/ on http://127.0.0.1:8080/ (with the samples).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
bash scripts/build-web.sh
PORT="${PORT:-8080}"
echo
echo "Spark checkpoint inspector: http://127.0.0.1:${PORT}/"
echo "Single file (open it straight from disk): $PWD/dist/checkpoint-inspector.html"
echo "Ctrl-C to stop."
exec python3 -m http.server "$PORT" --bind 127.0.0.1 --directory dist
