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
# 1250×870 window (a new settings folder is used, so no saved size moves it), with the
# generated day's selector bar ("sum by auto: comm"; builds before 824660b showed
# "auto (comm, container)" and had Merge at x = 688: set MERGE_X=688 for them).
set -euo pipefail

runs="${1:-3}"
source "$(dirname "${BASH_SOURCE[0]}")/window-day.sh" :94 home-merge "${2:-}"

for run in $(seq "$runs"); do
  open_window
  line="run $run: indexed in ${indexed} s"
  for click in $(seq "${MERGES:-1}"); do
    xdotool mousemove $((X + ${MERGE_X:-622})) $((Y + 115)) click 1
    merged=$(until_idle "$pid")
    line+="; Merge $click clicked → idle in ${merged} s, peak RSS $(peak_mib) MiB"
  done
  close_window
  echo "$line"
done
start=$(date +%s.%N)
find "$dir" -type f -exec cat {} + | gzip -dc > /dev/null
echo "gzip -dc of the same files: $(echo "$(date +%s.%N) - $start" | bc) s"
