#!/usr/bin/env bash
# Merges a day of 10-second profiles (8,640 generated files) with `flint top DIR`,
# whole process, side by side with decompressing the same files (`gzip -dc`, the
# floor of any reader), and reports flint's peak RSS.
#
#   bench/day.sh [DIR]
#
# Needs hyperfine and GNU time. The series is generated into $FLINT_BENCH_DIR/day
# (default /tmp/flint-bench/day) unless DIR names one.
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
cargo build --release --locked -p flint -p flint-fixture-gen
flint="$root/target/release/flint"
workdir="${FLINT_BENCH_DIR:-${TMPDIR:-/tmp}/flint-bench}"
dir="${1:-$workdir/day}"
if [[ ! -d "$dir" ]]; then
  "$root/target/release/flint-fixture-gen" series "$dir" --count 8640
fi
files=$(find "$dir" -type f | wc -l)
echo "series: $dir ($files files, $(du -sh "$dir" | cut -f1))"
hyperfine --warmup 0 --runs 3 --export-markdown "$workdir/day-results.md" \
  -n gzip-dc "find '$dir' -type f -exec cat {} + | gzip -dc > /dev/null" \
  -n flint-top "'$flint' top '$dir' > /dev/null"
cat "$workdir/day-results.md"
rss_kb=$(/usr/bin/time -f '%M' "$flint" top "$dir" 2>&1 > /dev/null | tail -n 1)
echo "flint top peak RSS: $((rss_kb / 1024)) MiB"
