#!/usr/bin/env bash
# Speed of `checkpoint-inspector state` (issue 12) on a generated HDFS checkpoint whose restart version is one
# snapshot per partition (no deltas to replay), next to its floor: `unzip -p` of exactly those snapshot files.
# Prints one JSON line: rows, seconds (best of N runs, wall and user CPU), rows/s, peak RSS, the ratio to the
# floor, and whether the goals hold (>= 1,000,000 rows/s, <= 2x unzip -p). A benchmark, not a test: the goals
# are reported, never asserted.
#
#   tools/scale-bench/state.sh [--rows-per-partition N] [--partitions N] [--runs N] [--zip FILE]
# (default 10 partitions x 100,000 rows = 1,000,000 rows; builds the release CLI and the generator first)
set -euo pipefail
cd "$(dirname "$0")/../.."
rows=100000 parts=10 runs=3 zip=""
while [ $# -gt 0 ]; do
  case "$1" in
    --rows-per-partition) rows=$2; shift 2 ;;
    --partitions) parts=$2; shift 2 ;;
    --runs) runs=$2; shift 2 ;;
    --zip) zip=$2; shift 2 ;;
    *) echo "unknown option $1" >&2; exit 2 ;;
  esac
done
. scripts/env.sh
cargo build --release -q -p checkpoint-core --example scale_checkpoint
cargo build --release -q -p checkpoint-cli
# 10 batches, a snapshot every 10 versions: the restart's version 10 is 10.snapshot in every partition.
zip=${zip:-${TMPDIR:-/tmp}/state-bench-$parts-$rows.zip}
[ -f "$zip" ] || target/release/examples/scale_checkpoint --batches 10 --partitions "$parts" --rows "$rows" \
  --out "$zip" >/dev/null
cli=target/release/checkpoint-inspector
best() { # best wall and user seconds of $runs runs of "$@" (stdout to /dev/null), and the largest RSS (KiB)
  local bw=999999 bu=999999 rss=0 out
  for _ in $(seq "$runs"); do
    out=$( { /usr/bin/time -f '%e %U %M' "$@" >/dev/null; } 2>&1 | tail -1)
    read -r w u m <<<"$out"
    bw=$(python3 -c "print(min($bw, $w))"); bu=$(python3 -c "print(min($bu, $u))")
    [ "$m" -gt "$rss" ] && rss=$m
  done
  echo "$bw $bu $rss"
}
n=$("$cli" state "$zip" | wc -l)
read -r sw su srss <<<"$(best "$cli" state "$zip")"
read -r uw uu _ <<<"$(best unzip -p "$zip" 'state/0/*/10.snapshot')"
python3 - "$n" "$sw" "$su" "$srss" "$uw" "$uu" "$(nproc)" "$(uptime | sed 's/.*load average: //')" <<'EOF'
import json, sys
n, sw, su, rss, uw, uu = int(sys.argv[1]), *map(float, sys.argv[2:7])
print(json.dumps({
    "rows": n, "state_wall_s": sw, "state_user_s": su, "rows_per_s_wall": round(n / sw), "rows_per_s_user": round(n / su),
    "peak_rss_mib": round(rss / 1024, 1), "unzip_p_wall_s": uw, "unzip_p_user_s": uu,
    "ratio_to_unzip_wall": round(sw / uw, 2), "ratio_to_unzip_user": round(su / uu, 2),
    "goal_1m_rows_per_s": n / sw >= 1e6, "goal_2x_unzip": sw <= 2 * uw,
    "cores": int(sys.argv[7]), "load_average": sys.argv[8],
}))
EOF
