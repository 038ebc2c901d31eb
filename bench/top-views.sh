#!/usr/bin/env bash
# `flint top DIR` of the 2,000-sample day at each granularity and through each kind of
# filter (pprof's -lines, -addresses, -focus, -hide, -tagfocus), whole process, side by
# side with decompressing the same files (`gzip -dc`, the floor of any reader) in the
# same run. FLINT_BASE names another build to run beside it (e.g. the previous
# commit's), alternating command by command.
#
#   bench/top-views.sh [DIR]
#
# Needs hyperfine. The series is generated into $FLINT_BENCH_DIR/day2000 (default
# /tmp/flint-bench/day2000) unless DIR names one.
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
cargo build --release --locked -p flint -p flint-fixture-gen
flint="$root/target/release/flint"
workdir="${FLINT_BENCH_DIR:-${TMPDIR:-/tmp}/flint-bench}"
dir="${1:-$workdir/day2000}"
if [[ ! -d "$dir" ]]; then
  "$root/target/release/flint-fixture-gen" series "$dir" --count 8640 --samples 3200
fi
views=(
  "--granularity line"
  "--granularity address"
  "--focus ssl_"
  "--hide ^acme::"
  "--tag 'comm=envoy|api-server'"
)
commands=(-n gzip-dc "find '$dir' -type f -exec cat {} + | gzip -dc > /dev/null")
for view in "${views[@]}"; do
  commands+=(-n "flint top $view" "'$flint' top $view '$dir' > /dev/null")
  if [[ -n "${FLINT_BASE:-}" ]]; then
    commands+=(-n "base top $view" "'$FLINT_BASE' top $view '$dir' > /dev/null")
  fi
done
hyperfine --warmup 0 --runs 3 --export-markdown "$workdir/top-views-results.md" "${commands[@]}"
cat "$workdir/top-views-results.md"
