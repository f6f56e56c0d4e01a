# Sourced by the other scripts: tool paths and settings for the web build and the browser tests.
export PATH="$PWD/tools/binaryen/node_modules/.bin:$HOME/.cargo/bin:$PATH"   # npm wasm-opt 132 first
export TRUNK_SKIP_VERSION_CHECK=true
export CHROMEDRIVER="${CHROMEDRIVER:-/usr/bin/chromedriver}"
export CHROMIUM="${CHROMIUM:-/usr/bin/chromium}"
