#!/usr/bin/env bash
# `flint serve` as a user meets it, whole process, release build:
#  1. ingest: 8 concurrent `flint push` processes each send the same hour of 10-second
#     profiles (360 files of ~1,800 samples, made by flint-fixture-gen) with their own
#     `writer` label: 2,880 durable WriteRaw calls; profiles/s = 2,880 / wall time. Then
#     the same with small profiles: 8 × 250 copies of a real Go CPU profile (~350
#     samples). The pushing clients run on the same 2 cores as the server.
#  2. merge: `flint top grpc://… -q '…{writer="0"}'` merges one series' hour (360
#     profiles) on the server and prints the top table, side by side with `flint top`
#     of the same 360 files on local disk.
#
#   bench/serve.sh
#
# FLINT_BIN names another build to measure. Needs hyperfine. Files go to
# $FLINT_BENCH_DIR (default /tmp/flint-bench).
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
cargo build --release --locked -p flint -p flint-fixture-gen
flint="${FLINT_BIN:-$root/target/release/flint}"
workdir="${FLINT_BENCH_DIR:-${TMPDIR:-/tmp}/flint-bench}"
hour="$workdir/hour"
store="$workdir/serve-store"
mkdir -p "$workdir"
rm -rf "$hour" "$store"
now=$(date +%s)
"$root/target/release/flint-fixture-gen" series "$hour" --count 360 \
  --time-nanos $(( (now - 3600) * 1000000000 ))
port=17555
"$flint" serve --store "$store" --listen "127.0.0.1:$port" 2>"$workdir/serve.log" &
server=$!
trap 'kill $server 2>/dev/null || true' EXIT
sleep 1
url="grpc://127.0.0.1:$port"

start=$(date +%s.%N)
pushes=()
for w in 0 1 2 3 4 5 6 7; do
  "$flint" push "$hour" --to "$url" --label "writer=$w" 2>/dev/null &
  pushes+=($!)
done
for p in "${pushes[@]}"; do wait "$p"; done
end=$(date +%s.%N)
echo "ingest: 2880 profiles in $(echo "$end - $start" | bc) s = $(echo "2880 / ($end - $start)" | bc) profiles/s (durable)"

small="$workdir/small"
rm -rf "$small"; mkdir -p "$small"
for i in $(seq -w 1 250); do cp tests/fixtures/go/cpu-1.pb.gz "$small/$i.pb.gz"; done
start=$(date +%s.%N)
pushes=()
for w in 0 1 2 3 4 5 6 7; do
  "$flint" push "$small" --to "$url" --label "small=$w" 2>/dev/null &
  pushes+=($!)
done
for p in "${pushes[@]}"; do wait "$p"; done
end=$(date +%s.%N)
echo "ingest (small): 2000 profiles in $(echo "$end - $start" | bc) s = $(echo "2000 / ($end - $start)" | bc) profiles/s (durable)"

q='process_cpu:cpu:nanoseconds:cpu:nanoseconds:delta{writer="0"}'
hyperfine --warmup 1 --runs 5 --export-markdown "$workdir/serve-results.md" \
  -n "flint top grpc (server merge of 360)" "'$flint' top $url -q '$q' --from now-2h > /dev/null" \
  -n "flint top local files (360)" "'$flint' top '$hour' > /dev/null"
cat "$workdir/serve-results.md"
