#!/usr/bin/env python3
"""Times builds of flint against each other, run for run: each round runs every binary
once, in turn, so that the machine's drift (shared, noisy hosts) falls on all of them
alike. Prints each binary's median wall time and CPU time (user + system, children),
their ratios to the first binary's, and the median and interquartile range of the
per-round CPU ratios (a round's binaries share its drift, so these show the spread a
comparison has).

    bench/alternate.py ROUNDS BIN[,BIN...] ARGS...
    bench/alternate.py 30 /tmp/flint-old,target/release/flint top fleet.pb.gz

Output goes to /dev/null; a binary that fails stops the run.
"""

import resource
import statistics
import subprocess
import sys
import time


def main() -> int:
    if len(sys.argv) < 4:
        print(__doc__.strip(), file=sys.stderr)
        return 2
    rounds = int(sys.argv[1])
    binaries = sys.argv[2].split(",")
    args = sys.argv[3:]
    wall = {b: [] for b in binaries}
    cpu = {b: [] for b in binaries}
    for _ in range(rounds):
        for b in binaries:
            before = resource.getrusage(resource.RUSAGE_CHILDREN)
            start = time.perf_counter()
            subprocess.run([b, *args], stdout=subprocess.DEVNULL, check=True)
            wall[b].append(time.perf_counter() - start)
            after = resource.getrusage(resource.RUSAGE_CHILDREN)
            cpu[b].append(
                after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime
            )
    base_wall = statistics.median(wall[binaries[0]])
    base_cpu = statistics.median(cpu[binaries[0]])
    for b in binaries:
        w = statistics.median(wall[b])
        c = statistics.median(cpu[b])
        ratios = [x / y for x, y in zip(cpu[b], cpu[binaries[0]])]
        quartiles = statistics.quantiles(ratios, n=4) if len(ratios) > 1 else ratios * 3
        low, high = quartiles[0], quartiles[-1]
        print(
            f"{b}: wall median {w * 1000:.1f} ms (×{w / base_wall:.3f}), "
            f"cpu median {c * 1000:.1f} ms (×{c / base_cpu:.3f}), "
            f"per-round cpu ratio {statistics.median(ratios):.3f} "
            f"(IQR {low:.3f}–{high:.3f}), {rounds} rounds"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
