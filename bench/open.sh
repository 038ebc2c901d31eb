#!/usr/bin/env bash
# Open → first flame graph painted, in the real window, for the fleet fixture (300,000
# samples): the time from launching `flint FILE` to the first painted flame graph, as
# the binary itself reports it with FLINT_EXIT_AFTER_FIRST_FRAME set. Runs under Xvfb
# (software rendering) unless $DISPLAY is set.
#
#   bench/open.sh [RUNS]
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
runs="${1:-5}"
cargo build --release --locked -p flint -p flint-fixture-gen
flint="$root/target/release/flint"
workdir="${FLINT_BENCH_DIR:-${TMPDIR:-/tmp}/flint-bench}"
mkdir -p "$workdir"
fixture="$workdir/fleet.pb.gz"
[[ -s "$fixture" ]] || "$root/target/release/flint-fixture-gen" fleet "$fixture"

xvfb_pid=""
if [[ -z "${DISPLAY:-}" ]]; then
  export DISPLAY=:93
  Xvfb "$DISPLAY" -screen 0 1920x1080x24 -nolisten tcp > /dev/null 2>&1 &
  xvfb_pid=$!
  trap '[[ -n "$xvfb_pid" ]] && kill "$xvfb_pid"' EXIT
  sleep 1
fi
# A fresh settings folder: saved panel sizes must not change what is drawn.
export HOME="$workdir/home"
mkdir -p "$HOME"
for _ in $(seq "$runs"); do
  FLINT_EXIT_AFTER_FIRST_FRAME=1 "$flint" "$fixture" 2>&1 | grep "first flame graph"
done
