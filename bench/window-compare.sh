#!/usr/bin/env bash
# Compare in the real window: `flint DIR` under Xvfb, Compare switched on once the
# directory is indexed, A dragged over the first ~45% of the plot and B, right after,
# over the last ~45% (B waits while A merges), and the time from the drag of A until
# the process's CPU goes idle (both merges, then the comparison: the combined profile
# and the diff's, A's and B's call trees), with the process's peak RSS (VmHWM).
#
#   bench/window-compare.sh [RUNS] [DIR]
#
# FLINT_BIN names another build to measure. Needs Xvfb and xdotool. The places clicked
# are those of a fresh 1250×870 window (a new settings folder is used).
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
runs="${1:-1}"
cargo build --release --locked -p flint -p flint-fixture-gen
flint="${FLINT_BIN:-$root/target/release/flint}"
workdir="${FLINT_BENCH_DIR:-${TMPDIR:-/tmp}/flint-bench}"
dir="${2:-$workdir/day}"
[[ -d "$dir" ]] || "$root/target/release/flint-fixture-gen" series "$dir" --count 8640

export DISPLAY=:93
Xvfb "$DISPLAY" -screen 0 1600x1000x24 -nolisten tcp > /dev/null 2>&1 &
xvfb_pid=$!
trap 'kill "$xvfb_pid" 2> /dev/null' EXIT
sleep 1
export HOME="$workdir/home-compare"

ticks() { awk '{print $14 + $15}' "/proc/$1/stat"; }
# Seconds from `start` until the process has used no CPU for 1.5 s.
until_idle() {
  local pid=$1 start=$2 last_busy prev cur idle=0
  last_busy=$start
  prev=$(ticks "$pid")
  while ((idle < 6)); do
    sleep 0.25
    cur=$(ticks "$pid")
    if ((cur - prev > 5)); then last_busy=$(date +%s.%N); idle=0; else idle=$((idle + 1)); fi
    prev=$cur
  done
  echo "$last_busy - $start" | bc
}
# A drag across the plot from x0 to x1 (window coordinates).
drag() {
  xdotool mousemove $((X + $1)) $((Y + 230)) mousedown 1
  for x in $(seq "$1" 40 "$2"); do
    xdotool mousemove $((X + x)) $((Y + 232))
    sleep 0.02
  done
  xdotool mousemove $((X + $2)) $((Y + 232)) mouseup 1
}

for run in $(seq "$runs"); do
  rm -rf "$HOME" && mkdir -p "$HOME"
  "$flint" "$dir" > /dev/null 2>&1 &
  pid=$!
  window=$(xdotool search --sync --pid "$pid" --name flint | head -n 1)
  indexed=$(until_idle "$pid" "$(date +%s.%N)")
  eval "$(xdotool getwindowgeometry --shell "$window")"
  xdotool mousemove $((X + 659)) $((Y + 92)) click 1
  sleep 0.5
  start=$(date +%s.%N)
  drag 81 599
  sleep 0.5
  drag 605 1129
  compared=$(until_idle "$pid" "$start")
  hwm=$(awk '/VmHWM/ {print $2}' "/proc/$pid/status")
  kill "$pid"
  wait "$pid" 2> /dev/null || true
  echo "run $run: indexed in ${indexed} s; A and B dragged → idle in ${compared} s, peak RSS $((hwm / 1024)) MiB"
done
