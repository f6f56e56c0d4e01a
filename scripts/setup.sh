#!/usr/bin/env bash
# Installs what the build and the tests need; idempotent (each step is skipped when already done).
# Offline-friendly recipe: ../shared/reference/TOOLCHAIN.md (only crates.io, npm and Debian apt are used).
set -euo pipefail
cd "$(dirname "$0")/.."
say() { printf '\n== setup: %s\n' "$*"; }

SUDO=""
if [ "$(id -u)" != 0 ] && command -v sudo >/dev/null; then SUDO="sudo -n"; fi

if ! command -v chromium >/dev/null || ! command -v chromedriver >/dev/null; then
  say "apt: chromium chromium-driver"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq chromium chromium-driver
fi

if ! rustup component list --installed 2>/dev/null | grep -q '^clippy'; then
  say "rustup component clippy"
  rustup component add clippy
fi
if ! rustup target list --installed 2>/dev/null | grep -qx wasm32-unknown-unknown; then
  say "rustup target wasm32-unknown-unknown"
  rustup target add wasm32-unknown-unknown
fi

# Trunk 0.22 needs a newer rustc; 0.21.14 is the verified one.
if ! trunk --version 2>/dev/null | grep -qx 'trunk 0.21.14'; then
  say "cargo install trunk 0.21.14"
  cargo install trunk --version 0.21.14 --locked
fi

# Must equal the crate's pinned wasm-bindgen (=0.2.130); --locked fails for this version (webpki-roots).
if ! wasm-bindgen --version 2>/dev/null | grep -qx 'wasm-bindgen 0.2.130' \
   || ! command -v wasm-bindgen-test-runner >/dev/null; then
  say "cargo install wasm-bindgen-cli 0.2.130"
  cargo install wasm-bindgen-cli --version 0.2.130
fi

# The fuzz step of scripts/test.sh: cargo-fuzz on the machine's nightly toolchain (the only other toolchain).
if rustup toolchain list 2>/dev/null | grep -q '^nightly' \
   && ! cargo +nightly fuzz --version 2>/dev/null | grep -qx 'cargo-fuzz 0.13.2'; then
  say "cargo install cargo-fuzz 0.13.2"
  cargo install cargo-fuzz --version 0.13.2 --locked
fi

for dir in tests/e2e tools/binaryen; do
  if [ ! -d "$dir/node_modules" ] || [ "$dir/package-lock.json" -nt "$dir/node_modules/.package-lock.json" ]; then
    say "npm ci in $dir"
    (cd "$dir" && npm ci --no-audit --no-fund --loglevel=error)
  fi
done

# Trunk.toml has offline = true, which makes trunk run `cargo build --offline`: everything must be fetched first.
say "cargo fetch"
cargo fetch --quiet
