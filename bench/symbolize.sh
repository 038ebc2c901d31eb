#!/usr/bin/env bash
# Symbolizing a fleet-like profile with addresses only: 300,000 samples over 120,000
# addresses in flint's own release binary (Rust, with DWARF). flint symbolize cold from a
# local debuginfod (Debian's, over the binary's debug file), warm from its cache, and with
# the binary given; beside go tool pprof -symbolize=local with the binary in
# PPROF_BINARY_PATH, on the same addresses (its profile has no build id: pprof reads none
# from flint's binary and refuses it otherwise).
#
#   bench/symbolize.sh [SAMPLES] [LOCATIONS]     (PPROF_TIMEOUT=SECONDS, default 3600)
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
samples=${1:-300000}
locations=${2:-120000}
work=${BENCH_DIR:-/tmp/flint-symbolize-bench}
port=${DEBUGINFOD_PORT:-8019}

cargo build --release -p flint -p flint-fixture-gen >&2
rm -rf "$work"
mkdir -p "$work/served" "$work/bin"
cp target/release/flint "$work/bin/flint-bin"
objcopy --only-keep-debug "$work/bin/flint-bin" "$work/served/flint-bin.debug"
gen=target/release/flint-fixture-gen
"$gen" addresses "$work/fleet.pb.gz" "$work/bin/flint-bin" --samples "$samples" --locations "$locations"
"$gen" addresses "$work/fleet-noid.pb.gz" "$work/bin/flint-bin" --samples "$samples" \
  --locations "$locations" --build-ids false

debuginfod -F "$work/served" -p "$port" -d "$work/db.sqlite" > "$work/debuginfod.log" 2>&1 &
server=$!
trap 'kill $server 2>/dev/null || true' EXIT
id=$(readelf -n "$work/bin/flint-bin" | awk '/Build ID/ {print $3}')
for _ in $(seq 120); do
  code=$(curl -s -o /dev/null -w '%{http_code}' "http://127.0.0.1:$port/buildid/$id/debuginfo" || true)
  [[ $code == 200 ]] && break
  sleep 1
done
[[ $code == 200 ]] || { echo "debuginfod did not index the debug file" >&2; exit 1; }

measure() { # NAME COMMAND...: wall seconds and peak RSS
  local name=$1
  shift
  /usr/bin/time -o "$work/time" -f '%e %M' "$@" > /dev/null 2> "$work/err" || true
  read -r secs kb < <(tail -1 "$work/time")
  printf '%-34s %8.2f s %8d MiB\n' "$name" "$secs" $((kb / 1024))
}

flint=target/release/flint
export DEBUGINFOD_CACHE_PATH="$work/cache"
unset DEBUGINFOD_URLS
measure "flint, debuginfod cold" "$flint" symbolize --debuginfod "http://127.0.0.1:$port" \
  "$work/fleet.pb.gz" -o "$work/cold.pb.gz"
measure "flint, debuginfod warm (cache)" "$flint" symbolize --debuginfod "http://127.0.0.1:$port" \
  "$work/fleet.pb.gz" -o "$work/warm.pb.gz"
measure "flint, binary given" "$flint" symbolize "$work/bin/flint-bin" \
  "$work/fleet-noid.pb.gz" -o "$work/local.pb.gz"
measure "go tool pprof -symbolize=local" env PPROF_BINARY_PATH="$work/bin" \
  timeout "${PPROF_TIMEOUT:-3600}" go tool pprof -symbolize=local -proto \
  -output "$work/pprof.pb.gz" "$work/fleet-noid.pb.gz"
echo "flint's names (the pprof row is the timeout if it gave up):"
"$flint" symbolize --debuginfod "http://127.0.0.1:$port" "$work/fleet.pb.gz" -o /dev/null
