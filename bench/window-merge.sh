#!/usr/bin/env bash
# The day (8,640 generated files) merged in the real window: `flint DIR` under Xvfb,
# the Merge button clicked once the directory is indexed, and the time from the click
# until the process's CPU goes idle (merge, then frames, call tree and top table of the
# merged profile), with the process's peak RSS (VmHWM). Side by side with decompressing
# the same files (`gzip -dc`), in the same run.
#
#   bench/window-merge.sh [RUNS] [DIR]
#
# MERGES=2 clicks Merge a second time once the first merged view is shown (the view
# shown is then replaced by a new merge of the same range) and reports the time and the
# peak RSS after each click.
# FLINT_BIN names another build to measure (e.g. the previous commit's). Needs Xvfb and
# xdotool. The Merge button is clicked at its place in a fresh
# 1250×870 window (a new settings folder is used, so no saved size moves it).
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
runs="${1:-3}"
cargo build --release --locked -p flint -p flint-fixture-gen
flint="${FLINT_BIN:-$root/target/release/flint}"
workdir="${FLINT_BENCH_DIR:-${TMPDIR:-/tmp}/flint-bench}"
dir="${2:-$workdir/day}"
[[ -d "$dir" ]] || "$root/target/release/flint-fixture-gen" series "$dir" --count 8640

export DISPLAY=:94
Xvfb "$DISPLAY" -screen 0 1600x1000x24 -nolisten tcp > /dev/null 2>&1 &
xvfb_pid=$!
trap 'kill "$xvfb_pid" 2> /dev/null' EXIT
sleep 1
export HOME="$workdir/home-merge"

ticks() { awk '{print $14 + $15}' "/proc/$1/stat"; }
# Seconds from now until the process has used no CPU for 1.5 s (ticks of 1/100 s).
until_idle() {
  local pid=$1 start last_busy prev cur idle=0
  start=$(date +%s.%N)
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

for run in $(seq "$runs"); do
  rm -rf "$HOME" && mkdir -p "$HOME"
  "$flint" "$dir" > /dev/null 2>&1 &
  pid=$!
  window=$(xdotool search --sync --pid "$pid" --name flint | head -n 1)
  indexed=$(until_idle "$pid")
  eval "$(xdotool getwindowgeometry --shell "$window")"
  line="run $run: indexed in ${indexed} s"
  for click in $(seq "${MERGES:-1}"); do
    xdotool mousemove $((X + 688)) $((Y + 115)) click 1
    merged=$(until_idle "$pid")
    hwm=$(awk '/VmHWM/ {print $2}' "/proc/$pid/status")
    line+="; Merge $click clicked → idle in ${merged} s, peak RSS $((hwm / 1024)) MiB"
  done
  kill "$pid"
  wait "$pid" 2> /dev/null || true
  echo "$line"
done
start=$(date +%s.%N)
find "$dir" -type f -exec cat {} + | gzip -dc > /dev/null
echo "gzip -dc of the same files: $(echo "$(date +%s.%N) - $start" | bc) s"
