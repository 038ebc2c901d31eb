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

runs="${1:-1}"
source "$(dirname "${BASH_SOURCE[0]}")/window-day.sh" :93 home-compare "${2:-}"

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
  open_window
  xdotool mousemove $((X + 659)) $((Y + 92)) click 1
  sleep 0.5
  start=$(date +%s.%N)
  drag 81 599
  sleep 0.5
  drag 605 1129
  compared=$(until_idle "$pid" "$start")
  echo "run $run: indexed in ${indexed} s; A and B dragged → idle in ${compared} s, peak RSS $(peak_mib) MiB"
  close_window
done
