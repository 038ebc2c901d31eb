#!/usr/bin/env bash
# Benchmarks `flint top` against plain decompression on the synthetic fleet
# profile (see tools/fixture-gen), and reports peak memory.
#
#   bench/top.sh [--with-pprof] [--fixture PATH]
#
# Needs hyperfine and GNU time (/usr/bin/time); --with-pprof also needs `go`.
# The fixture is generated (deterministically) into a temp dir unless
# --fixture names an existing file or $FLINT_BENCH_DIR holds one.
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"

with_pprof=0
fixture=""
while (($#)); do
  case "$1" in
    --with-pprof) with_pprof=1 ;;
    --fixture) fixture="${2:?--fixture needs a path}"; shift ;;
    -h | --help) sed -n '2,9p' "$0"; exit 0 ;;
    *) echo "unknown argument: $1" >&2; exit 2 ;;
  esac
  shift
done

for tool in hyperfine /usr/bin/time gzip; do
  command -v "$tool" > /dev/null || { echo "missing $tool" >&2; exit 1; }
done

cargo build --release --locked -p flint -p flint-fixture-gen
flint="$root/target/release/flint"
gen="$root/target/release/flint-fixture-gen"

workdir="${FLINT_BENCH_DIR:-${TMPDIR:-/tmp}/flint-bench}"
mkdir -p "$workdir"
if [[ -z "$fixture" ]]; then
  fixture="$workdir/fleet.pb.gz"
  [[ -s "$fixture" ]] || "$gen" fleet "$fixture"
fi
[[ -s "$fixture" ]] || { echo "no fixture at $fixture" >&2; exit 1; }

compressed=$(wc -c < "$fixture")
uncompressed=$(gzip -dc "$fixture" | wc -c)
echo "fixture: $fixture ($compressed bytes gzipped, $uncompressed bytes uncompressed)"

results="$workdir/top-results.md"
json="$workdir/top-results.json"
hyperfine --warmup 1 --runs 5 --export-markdown "$results" --export-json "$json" \
  -n gzip "gzip -dc '$fixture' > /dev/null" \
  -n flint-top "'$flint' top '$fixture' > /dev/null"
cat "$results"

# Mean times in seconds from hyperfine's JSON, in command order.
mapfile -t means < <(grep -o '"mean": *[0-9.e+-]*' "$json" | sed 's/.*: *//')
((${#means[@]} == 2)) || { echo "could not read means from $json" >&2; exit 1; }

rss_kb=$(/usr/bin/time -f '%M' "$flint" top "$fixture" 2>&1 > /dev/null | tail -n 1)
[[ "$rss_kb" =~ ^[0-9]+$ ]] || { echo "could not measure peak RSS (got: $rss_kb)" >&2; exit 1; }

awk -v g="${means[0]}" -v f="${means[1]}" -v rss="$rss_kb" -v raw="$uncompressed" 'BEGIN {
  printf "gzip -dc:   %8.3f s\n", g
  printf "flint top:  %8.3f s  (%.2fx gzip)\n", f, f / g
  printf "peak RSS:   %8.1f MiB (%.2fx uncompressed size)\n", rss / 1024, rss * 1024 / raw
}'

if ((with_pprof)); then
  command -v go > /dev/null || { echo "--with-pprof needs go" >&2; exit 1; }
  small="$workdir/fleet-50k.pb.gz"
  [[ -s "$small" ]] || "$gen" fleet "$small" --samples 50000
  hyperfine --warmup 1 --runs 5 --export-markdown "$workdir/top-pprof-50k.md" \
    -n pprof-top "go tool pprof -top '$small' > /dev/null" \
    -n flint-top "'$flint' top '$small' > /dev/null"
  cat "$workdir/top-pprof-50k.md"
  pprof_kb=$(/usr/bin/time -f '%M' go tool pprof -top "$small" 2>&1 > /dev/null | tail -n 1)
  flint_kb=$(/usr/bin/time -f '%M' "$flint" top "$small" 2>&1 > /dev/null | tail -n 1)
  echo "50k samples peak RSS: pprof $((pprof_kb / 1024)) MiB, flint $((flint_kb / 1024)) MiB"
fi
