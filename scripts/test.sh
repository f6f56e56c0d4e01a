#!/usr/bin/env bash
# Sets up, then runs every test: native, wasm (headless Chromium and Node), the fixture conformance report, the web
# build and the browser end-to-end suite. Exits non-zero when a required step fails. Used by .ci/run.
set -uo pipefail
cd "$(dirname "$0")/.."
START=$(date +%s)
FAILED=()
PASSED=0
STEP_LOGS=$(mktemp -d)
DETAILS=()   # a failed step's telling lines, printed again at the very end (CI shows the tail of the output)
step() {   # step <required|report> <name> <command...>
  local kind=$1 name=$2; shift 2
  local t0=$(date +%s) log="$STEP_LOGS/step-$(( PASSED + ${#FAILED[@]} )).log"
  printf '\n==== %s\n' "$name"
  "$@" 2>&1 | tee "$log"
  local rc=${PIPESTATUS[0]}
  if [ "$rc" -eq 0 ]; then
    [ "$kind" = required ] && PASSED=$((PASSED + 1))
    printf '==== ok: %s (%ss)\n' "$name" $(( $(date +%s) - t0 ))
  else
    if [ "$kind" = required ]; then
      FAILED+=("$name"); printf '==== FAILED (exit %s): %s (%ss)\n' "$rc" "$name" $(( $(date +%s) - t0 ))
      DETAILS+=("--- $name: $(failure_lines "$log")")
    else
      printf '==== reported, not failing the run (exit %s): %s (%ss)\n' "$rc" "$name" $(( $(date +%s) - t0 ))
    fi
  fi
}
# The lines that say why a step failed: node's failing-test summary and assertion messages, cargo's panics,
# failed tests and errors, a case's mismatch; at most 14 (no stack frames), each cut to 300 characters.
failure_lines() {
  { sed -n '/failing tests:/,$p' "$1"; grep -E "panicked|^test .* FAILED|^error(\[|:)|AssertionError|Error:|^  - |MISMATCH|FAIL" "$1"; } \
    | grep -vE '^\s*(at |generatedMessage|code:|operator:|\{|\}|$)' | awk '!seen[$0]++' | head -14 | cut -c1-300
}

if ! bash scripts/setup.sh; then echo "setup failed"; exit 1; fi
. scripts/env.sh

step required "formatting (cargo fmt --check)" cargo fmt --all -- --check
step required "sizes (no core file over 800 lines, no function over 120: tools/sizes.py)" python3 tools/sizes.py
step required "lints (cargo clippy, warnings fail)" cargo clippy --workspace --all-targets -- -D warnings
step required "core docs (cargo doc: a broken link, or a public doc linking a private item, fails)" \
  env RUSTDOCFLAGS="-D warnings" cargo doc -p checkpoint-core --no-deps
step required "native tests (cargo test --workspace)" cargo test --workspace
step required "core builds for wasm32" cargo build -p checkpoint-core --target wasm32-unknown-unknown
step required "wasm tests of checkpoint-web (headless Chromium + Node)" \
  cargo test -p checkpoint-web --target wasm32-unknown-unknown
# The conformance report and the e2e suite use the debug CLI that `cargo test --workspace` built (the CLI's
# integration tests build its binary): same core, same answers, no second (release) build of the workspace.
CLI=target/debug/checkpoint-inspector
step required "CLI (debug, from cargo test) is built" cargo build -p checkpoint-cli
if [ -f ../shared/tools/check_cases.py ]; then
  step required "case conformance (../shared/cases: every case's expected verdict, codes and error classes)" \
    python3 ../shared/tools/check_cases.py ../shared/cases --cli "$CLI"
fi
step required "web build (trunk --release + single file)" bash scripts/build-web.sh
step required "browser end-to-end tests (playwright-core + /usr/bin/chromium)" \
  env CHECKPOINT_CLI="$PWD/$CLI" bash -c 'cd tests/e2e && node --test --test-concurrency=1 --test-reporter=spec .'

# Fuzzing (fuzz/, cargo-fuzz on nightly, installed by setup.sh): every target a few seconds from the fixture
# seeds, with the memory and time limits per input; a crash, out-of-memory or timeout fails the run (the input is
# left in fuzz/artifacts/<target>/). Long runs are by hand (fuzz/README.md). A machine without a nightly toolchain
# cannot build the targets: the step says so and passes.
fuzz_short() (   # a subshell: the profile settings below stay in it
  if ! rustup toolchain list 2>/dev/null | grep -q '^nightly'; then echo "no nightly toolchain: fuzzing skipped"; return 0; fi
  # A short run needs coverage, not speed: opt-level 1 (its own target folder) takes about a quarter less CPU to
  # build than the release profile of the long runs (measured: 162 s against 223 s of CPU for the core and the
  # 8 targets); cargo-fuzz keeps debug assertions, overflow checks and line tables on.
  export CARGO_PROFILE_RELEASE_OPT_LEVEL=1 CARGO_TARGET_DIR="$PWD/fuzz/target/short"
  (cd fuzz && bash seed.sh >/dev/null && cargo +nightly fuzz build -O -s none) || return 1
  local t rc=0 log
  log=$(mktemp)
  for t in $(cd fuzz && cargo +nightly fuzz list); do
    if (cd fuzz && cargo +nightly fuzz run -O -s none "$t" "corpus/$t" -- -rss_limit_mb=512 -timeout=5 -max_total_time=8 \
        -print_final_stats=1 >"$log" 2>&1); then
      printf '%s: ' "$t"; grep -E 'stat::number_of_executed_units' "$log" || echo "(no stats)"
    else
      rc=1; echo "$t: FAILED"; grep -E 'SUMMARY|Test unit written|ERROR' "$log" | head -5
    fi
  done
  rm -f "$log"
  return $rc
)
step required "fuzzing, 8 s per target (cargo +nightly fuzz; a crash, OOM or timeout fails)" fuzz_short

printf '\n==== total %ss\n' $(( $(date +%s) - START ))
if [ ${#FAILED[@]} -gt 0 ]; then
  printf 'Why the failed steps failed:\n'; printf '%s\n' "${DETAILS[@]}"
  printf 'FAILED steps:\n'; printf '  - %s\n' "${FAILED[@]}"
  printf 'steps: %s passed, %s failed\n' "$PASSED" "${#FAILED[@]}"
  exit 1
fi
echo "all required steps passed"
printf 'steps: %s passed, 0 failed\n' "$PASSED"
