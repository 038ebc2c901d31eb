#!/usr/bin/env bash
# `flint serve` under concurrent full-range merges, with and without a memory budget:
# four hours of 10-second profiles of 3,200 samples (1,440 files, made by
# flint-fixture-gen) pushed to a server, then 1, 4 and 8 concurrent
# `flint fold grpc://…` of the whole range. For each: every client's wall time and
# outcome, and the server's peak RSS (VmHWM, a fresh server per run).
#
#   bench/serve-memory.sh [BUDGET]     # BUDGET default 256MiB
#
# FLINT_BIN names another build to measure. Files go to $FLINT_BENCH_DIR (default
# /tmp/flint-bench).
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
cargo build --release --locked -p flint -p flint-fixture-gen
flint="${FLINT_BIN:-$root/target/release/flint}"
budget="${1:-256MiB}"
workdir="${FLINT_BENCH_DIR:-${TMPDIR:-/tmp}/flint-bench}"
hours="$workdir/four-hours"
store="$workdir/memory-store"
mkdir -p "$workdir"
start=1699956000000000000  # 2023-11-14T10:00Z: ~3,200 samples a profile
if [ ! -d "$hours" ]; then
  "$root/target/release/flint-fixture-gen" series "$hours" --count 1440 --samples 3200 \
    --time-nanos "$start"
fi
rm -rf "$store"
port=17556
url="grpc://127.0.0.1:$port"

serve() {
  "$flint" serve --store "$store" --listen "127.0.0.1:$port" "$@" 2>"$workdir/serve.log" &
  server=$!
  for _ in $(seq 50); do
    grep -q listening "$workdir/serve.log" 2>/dev/null && return
    sleep 0.1
  done
  echo "the server did not start" >&2
  exit 1
}

serve
"$flint" push "$hours" --to "$url" 2>/dev/null
kill "$server"; wait "$server" 2>/dev/null || true

for config in "no budget" "--max-memory $budget"; do
  for n in 1 4 8; do
    if [ "$config" = "no budget" ]; then serve; else serve --max-memory "$budget"; fi
    pids=()
    for i in $(seq "$n"); do
      ( s=$(date +%s.%N)
        if "$flint" fold "$url" --from 2023-11-14T00:00:00Z --to 2023-11-16T00:00:00Z \
             > "$workdir/fold-$i.txt" 2> "$workdir/fold-$i.err"; then r=answered; else r=refused; fi
        echo "$(echo "$(date +%s.%N) - $s" | bc) $r" > "$workdir/fold-$i.time" ) &
      pids+=($!)
    done
    for p in "${pids[@]}"; do wait "$p"; done
    peak=$(awk '/VmHWM/ {print int($2 / 1024)}' "/proc/$server/status")
    kill "$server"; wait "$server" 2>/dev/null || true
    times=$(cat "$workdir"/fold-*.time | sort -n | awk '{printf "%.1f s %s, ", $1, $2}')
    echo "$config, $n concurrent: ${times%, }; server peak $peak MiB"
    rm -f "$workdir"/fold-*
  done
done
