#!/usr/bin/env bash
# Records the machine for a minute with `flint record` and `perf record -F 99 -g -a`
# side by side while a mixed workload runs (a Node JIT loop with --perf-basic-prof, a Go
# program, a Python loop, a gzip loop: JIT, frame-pointer and frame-pointer-less code),
# then prints both tops to compare.
#
#   sudo bench/live-vs-perf.sh [SECONDS]
#
# Needs root, perf, node, go, python3 and gzip.
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
secs="${1:-60}"
work="${TMPDIR:-/tmp}/flint-live-vs-perf"
mkdir -p "$work"
cd "$root"
cargo build --release --locked -p flint
flint="$root/target/release/flint"
(cd bench/live-workload && go build -o "$work/burn-go" burn.go)

run=$((secs + 20))
# Node writes a V8 log into its working directory: keep it out of the repository.
(cd "$work" && node --perf-basic-prof "$root/bench/live-workload/burn.js" "$run" > /dev/null) &
"$work/burn-go" "$run" &
timeout "$run" python3 -c '
import hashlib
while True:
    x = 0
    for i in range(200000): x += i * i
    hashlib.sha256(b"x" * 100000).digest()' &
head -c 20000000 /dev/urandom > "$work/noise"
timeout "$run" sh -c "while :; do gzip -6 -c '$work/noise' > /dev/null; done" &
sleep 3
perf record -F 99 -g -a -o "$work/perf.data" -- sleep "$secs" > /dev/null 2>&1 &
"$flint" record --all --frequency 99 --duration "${secs}s" -o "$work/flint.pb.gz"
wait
"$flint" top "$work/flint.pb.gz" > "$work/flint-top.txt"
perf report -i "$work/perf.data" --no-children --sort comm --stdio > "$work/perf-comm.txt" 2> /dev/null
perf report -i "$work/perf.data" --no-children --sort sym --stdio -g none > "$work/perf-sym.txt" 2> /dev/null
echo "== flint top"
sed -n 1,20p "$work/flint-top.txt"
echo "== perf report --sort comm"
grep -E '^ +[0-9]' "$work/perf-comm.txt" | sed -n 1,8p
echo "== perf report --sort sym"
grep -E '^ +[0-9]' "$work/perf-sym.txt" | sed -n 1,15p
