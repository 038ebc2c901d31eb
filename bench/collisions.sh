#!/usr/bin/env bash
# Samples lost to BPF stack-map collisions: records the machine at 99 Hz (and at 19 Hz)
# in 10-second intervals while a workload with many distinct stacks runs (a Python
# JSON/regex loop, a gzip loop, a `find /usr` loop), and prints flint's status line of
# every interval: samples, recorder CPU, symbolization time, collisions.
#
#   sudo bench/collisions.sh [FLINT_BINARY ...]
#
# With several binaries (say, two commits' builds) they record one after the other, twice
# in turn. Needs root, python3, gzip and find.
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
if [[ $# -eq 0 ]]; then
  cargo build --release --locked -p flint
  set -- "$root/target/release/flint"
fi
work="$(mktemp -d)"
trap 'kill $(jobs -p) 2>/dev/null; rm -rf "$work"' EXIT

python3 -c '
import json, re
while True:
    d = {str(i): [i] * 5 for i in range(2000)}
    s = json.dumps(d)
    json.loads(s)
    re.findall(r"\d+", s)' &
big="$1"
sh -c "while :; do gzip -c '$big' > /dev/null; done" &
sh -c 'while :; do find /usr -name "*.so" > /dev/null 2>&1; done' &
sleep 2

for round in 1 2; do
  for flint in "$@"; do
    for hz in 99 19; do
      echo "== $flint, $hz Hz, round $round"
      "$flint" record --all --frequency "$hz" --interval 10s --duration 30s \
        -o "$work/out.pb.gz" 2>&1 | grep ' Hz, ' | sed 's/, stack may be incomplete.*//'
    done
  done
done
