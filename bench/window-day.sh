# Sourced by the scripts that time the window on a day of files (window-merge.sh,
# window-compare.sh): builds flint, makes the day unless DIR names one, starts Xvfb on
# display $1, and defines `until_idle PID [START]`, `open_window` and `close_window`.
#
#   source bench/window-day.sh DISPLAY HOME-NAME [DIR]

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
cargo build --release --locked -p flint -p flint-fixture-gen
flint="${FLINT_BIN:-$root/target/release/flint}"
workdir="${FLINT_BENCH_DIR:-${TMPDIR:-/tmp}/flint-bench}"
dir="${3:-$workdir/day}"
[[ -d "$dir" ]] || "$root/target/release/flint-fixture-gen" series "$dir" --count 8640

export DISPLAY=$1
Xvfb "$DISPLAY" -screen 0 1600x1000x24 -nolisten tcp > /dev/null 2>&1 &
xvfb_pid=$!
trap 'kill "$xvfb_pid" 2> /dev/null' EXIT
sleep 1
# A new settings folder for each run, so that no saved size moves what is clicked.
export HOME="$workdir/$2"

ticks() { awk '{print $14 + $15}' "/proc/$1/stat"; }
# Seconds from START (default: now) until the process has used no CPU for 1.5 s
# (ticks of 1/100 s).
until_idle() {
  local pid=$1 start=${2:-$(date +%s.%N)} last_busy prev cur idle=0
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

# Starts flint on the day with a fresh settings folder and waits until the folder is
# indexed: sets pid, indexed (seconds) and the window's X and Y.
open_window() {
  rm -rf "$HOME" && mkdir -p "$HOME"
  "$flint" "$dir" > /dev/null 2>&1 &
  pid=$!
  local window
  window=$(xdotool search --sync --pid "$pid" --name flint | head -n 1)
  indexed=$(until_idle "$pid")
  eval "$(xdotool getwindowgeometry --shell "$window")"
}

# The window's peak RSS in MiB.
peak_mib() { echo $(($(awk '/VmHWM/ {print $2}' "/proc/$pid/status") / 1024)); }

# Ends the window started by open_window.
close_window() {
  kill "$pid"
  wait "$pid" 2> /dev/null || true
}
