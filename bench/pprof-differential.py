#!/usr/bin/env python3
"""Random differential check of `flint top` and `flint peek` against `go tool pprof`.

Builds --count random valid pprof profiles from --seed (with Google's protobuf package,
as tests/fixtures/writers/make.py does): 1-3 sample types (default_sample_type now
and then), mappings, functions named from a pool (Go, C++ mangled and plain, Rust,
C, nameless), locations of 0-3 lines, sparse ids, stacks of depth 0-12, values with
zeros and negatives, string and numeric labels, now and then drop_frames. Then for the
default sample type and each -sample_index, and for the default type at line and at
address granularity, compares line for line

    flint top FILE [-s I | --granularity line | --granularity address]
    go tool pprof -top -nodefraction=0 -edgefraction=0 -nodecount=100000 \
        [-sample_index=I | -lines | -addresses] FILE

and `flint peek . FILE [--granularity line]` with `go tool pprof -peek . [-lines] FILE`
(runs of edges whose weights differ only in sign compared as sets: pprof's order of them
changes from run to run; a profile where nothing matches must fail in both, with pprof's
message). Then --sums families of 2-4 profiles of one program (few functions; one
profile may inline what another calls), each summed as `flint top A B .. [-s I |
--granularity line]` against `go tool pprof -top .. A B ..` (pprof merges them). Prints
one line per mismatch (profile index, sample index, first differing line), then
`N profiles, S sums, M views checked, K mismatches`; exits 1 when K > 0.

    bench/pprof-differential.py                              # 1000 profiles, 200 sums, seed 1
    bench/pprof-differential.py --flint /tmp/flint --count 200 --seed 7
    bench/pprof-differential.py --only 42 --keep /tmp/diff   # one profile, kept to look at

Needs python3 with protobuf, and go (for `go tool pprof`). Profile I of seed S is the
same on every run, whatever --count.
"""

import argparse
import concurrent.futures
import gzip
import os
import random
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "tests", "fixtures", "writers"))
from make import Builder, profile_message  # noqa: E402

SAMPLE_TYPES = [
    ("samples", "count"), ("cpu", "nanoseconds"), ("wall", "microseconds"),
    ("alloc_objects", "count"), ("alloc_space", "bytes"), ("inuse_space", "bytes"),
    ("contentions", "count"), ("delay", "nanoseconds"), ("wall_ms", "milliseconds"),
]

# (name, system name); None for the system name: the same as the name.
FUNCTION_NAMES = [
    ("main.main", None), ("main.work", None), ("main.(*Server).handle", None),
    ("main.work.func1", None), ("runtime.mallocgc", None), ("runtime.goexit", None),
    ("net/http.(*conn).serve", None), ("github.com/acme/kit/log.(*Logger).Printf", None),
    ("crypto/sha256.block", None), ("sort.Slice", None), ("bytes.(*Buffer).Write", None),
    ("", "_ZN3foo3barEi"), ("", "_ZN3foo3BazIiE3quxEi"), ("", "_ZNSt6vectorIiSaIiEE9push_backERKi"),
    ("_ZN3foo4quuxEv", None), ("foo::Baz<int>::qux(int) const", None),
    ("std::vector<int, std::allocator<int> >::push_back(int const&)", None),
    ("foo::named", "_ZN3foo5namedEv"), ("Widget::draw()", None), ("(anonymous namespace)::helper", None),
    ("", "_ZN7mycrate6worker17h0123456789abcdefE"), ("", "_RNvCs1234_7mycrate6worker"),
    ("mycrate::worker::run", None), ("<mycrate::Foo as core::fmt::Debug>::fmt", None),
    ("core::ptr::drop_in_place<alloc::vec::Vec<u8>>", None), ("_ZN7mycrate4main17h00000000deadbeefE", None),
    ("malloc", None), ("memcpy", None), ("__libc_start_main", None), ("_start", None),
    ("", ""), ("", ""), ("", "sys_only"), ("fib", None), ("(program)", None), ("(garbage collector)", None),
    ("<module>", None), ("anonymous", None), ("Array.prototype.map", None),
]
FILES = ["app.c", "main.go", "src/lib.rs", "", "/home/u/src/server.cc", "workload.js"]
MAPPINGS = ["/usr/bin/app", "/lib/x86_64-linux-gnu/libc.so.6", "/usr/lib/libfoo.so.1", "[vdso]",
            "/usr/lib/debug/app.debug", ""]
UNIT_SCALE = {"count": 1_000, "nanoseconds": 10_000_000_000, "microseconds": 10_000_000,
              "milliseconds": 100_000, "bytes": 100_000_000}


def some_id(rng, used, dense):
    """A fresh id: the next one when `dense`; else small mostly, now and then a
    million or far more."""
    if dense:
        used.add(len(used) + 1)
        return len(used)
    while True:
        r = rng.random()
        if r < 0.7:
            i = len(used) + 1
        elif r < 0.9:
            i = rng.randrange(1_000_000, 2_000_000)
        else:
            i = rng.randrange(1, 2**64)
        if i not in used:
            used.add(i)
            return i


def random_family(rng):
    """What the profiles of one family share, so that pprof merges them: sample types,
    default and period, and 3-10 functions (name, system name, file)."""
    types = rng.sample(SAMPLE_TYPES, rng.randint(1, 2))
    default = rng.choice(types)[0] if rng.random() < 0.35 else None
    period_type = rng.choice(types) if rng.random() < 0.7 else None
    period = rng.choice([0, 1, 10_000_000, 524_288])
    named = [f for f in FUNCTION_NAMES if f[0] or f[1]]
    names = [(n, s, rng.choice(FILES)) for n, s in rng.sample(named, rng.randint(3, 10))]
    return types, default, period_type, period, names


def random_profile(Profile, rng, family=None):
    """One random valid profile of `rng`'s choosing, of `family` (random_family) when
    given: few functions, so that an edge inlined in one profile is a call in another."""
    if family is None:
        types = rng.sample(SAMPLE_TYPES, rng.randint(1, 3))
        default = rng.choice(types)[0] if rng.random() < 0.35 else None
        period_type = rng.choice(types) if rng.random() < 0.7 else None
        duration = rng.choice([0, 1, 1_000_000_000, 10_000_000_000, rng.randrange(1, 10**12)])
        period = rng.choice([0, 1, 10_000_000, 524_288])
        names = None
    else:
        types, default, period_type, period, names = family
        duration = rng.choice([0, 1_000_000_000, 10_000_000_000])
    b = Builder(Profile, types, period_type, period, duration=duration, default=default)
    dense = rng.random() < 0.5
    used_m, used_f, used_l = set(), set(), set()
    mappings = []
    for k in range(rng.randint(1, 3)):
        start = 0x400000 + k * 0x10000000
        filename = MAPPINGS[0] if k == 0 and rng.random() < 0.8 else rng.choice(MAPPINGS)
        mappings.append((b.mapping(filename, start=start, limit=start + 0x1000000, id=some_id(rng, used_m, dense)), start))
    functions = []
    if names is None:
        for name, system in rng.sample(FUNCTION_NAMES, rng.randint(2, 25)):
            functions.append(b.function(name, system, filename=rng.choice(FILES),
                                        id=some_id(rng, used_f, dense)))
    for name, system, filename in names or []:
        functions.append(b.function(name, system, filename=filename, id=some_id(rng, used_f, dense)))
    weights = [1, 6, 2, 1]
    if family is not None:
        # Profiles of a family differ in which functions they hold and how much is
        # inlined: one may inline what another calls.
        weights = rng.choice([weights, [0, 1, 0, 0], [0, 0, 3, 1], [0, 1, 1, 0]])
        functions = rng.sample(functions, rng.randint(2, len(functions)))
    locations = []
    for _ in range(rng.randint(1, 40 if family is None else 12)):
        nlines = rng.choices([0, 1, 2, 3], weights=weights)[0]
        lines = [(rng.choice(functions), rng.randint(1, 300)) for _ in range(nlines)]
        if rng.random() < 0.05:
            mapping, base = 0, 0x100
        else:
            mapping, base = rng.choice(mappings)
        address = base + rng.randrange(0, 0x1000000)
        locations.append(b.location(lines, mapping=mapping, address=address,
                                    id=some_id(rng, used_l, dense)))
    for _ in range(rng.randint(1, 60)):
        stack = [rng.choice(locations) for _ in range(rng.randint(0, 12))]
        values = []
        for _, unit in types:
            r = rng.random()
            v = 0 if r < 0.1 else rng.randint(1, UNIT_SCALE[unit])
            # Negative values only alone: a sum nets equal stacks of different files
            # only after taking absolute values (README's known differences).
            values.append(-v if r > 0.95 and family is None else v)
        labels = []
        if rng.random() < 0.3:
            for _ in range(rng.randint(1, 2)):
                if rng.random() < 0.5:
                    labels.append((rng.choice(["thread", "endpoint"]), rng.choice(["a", "b", "/api"])))
                else:
                    labels.append((rng.choice(["bytes", "n"]), rng.randint(0, 10**6),
                                   rng.choice(["bytes", "", "nanoseconds"])))
        b.sample(stack, values, labels)
    if family is None and rng.random() < 0.1:
        b.p.drop_frames = b.st(r"runtime\..*|malloc")
        if rng.random() < 0.5:
            b.p.keep_frames = b.st(r"runtime\.goexit")
    return b.done(), len(types)


def run(cmd, env):
    r = subprocess.run(cmd, capture_output=True, env=env)
    return r.returncode, r.stdout.decode("utf-8", "replace"), r.stderr.decode("utf-8", "replace")


def first_difference(flint, pprof):
    a, e = flint.splitlines(), pprof.splitlines()
    if a == e:
        return None
    i = next((i for i, (x, y) in enumerate(zip(a, e)) if x != y), min(len(a), len(e)))
    return f"line {i} ({len(a)} vs {len(e)} lines): flint {a[i] if i < len(a) else None!r} | pprof {e[i] if i < len(e) else None!r}"


def peek_ties_sorted(text):
    """`text` with each run of peek edge lines of the same |weight| sorted."""
    def weight(line):
        value, sep, _ = line.partition(" |   ")
        if not sep or len(value) - len(value.lstrip()) < 30:
            return None
        return value.split()[0].lstrip("-")
    lines, out, i = text.splitlines(), [], 0
    while i < len(lines):
        w, j = weight(lines[i]), i + 1
        while w is not None and j < len(lines) and weight(lines[j]) == w:
            j += 1
        out += sorted(lines[i:j])
        i = j
    return "\n".join(out)


def check(index, path, ntypes, flint, pprof, env):
    """(views checked, [mismatch lines]) of one profile."""
    flags = ["-top", "-nodefraction=0", "-edgefraction=0", "-nodecount=100000"]
    same = lambda text: text
    views = [("default", flags, ["top", path], same)]
    views += [(f"sample_index={i}", flags + [f"-sample_index={i}"], ["top", path, "-s", str(i)], same)
              for i in range(ntypes)]
    views += [("lines", flags + ["-lines"], ["top", path, "--granularity", "line"], same),
              ("addresses", flags + ["-addresses"], ["top", path, "--granularity", "address"], same),
              ("peek", ["-peek", "."], ["peek", ".", path], peek_ties_sorted),
              ("peek lines", ["-peek", ".", "-lines"], ["peek", ".", path, "--granularity", "line"],
               peek_ties_sorted)]
    out, checked = [], 0
    for which, pprof_flags, flint_args, normalize in views:
        code, expected, err = run(pprof + pprof_flags + [path], env)
        no_match = code != 0 and "no matches found for regexp" in err
        if code != 0 and not no_match:
            out.append(f"#{index} {which}: pprof refused it: {err.strip().splitlines()[-1:]}")
            continue
        fcode, actual, ferr = run([flint] + flint_args, env)
        checked += 1
        if no_match:
            if fcode == 0 or "no matches found for regexp" not in ferr:
                out.append(f"#{index} {which}: pprof found no match, flint: {ferr.strip()[:80]!r}")
            continue
        if fcode != 0:
            out.append(f"#{index} {which}: flint failed: {ferr.strip().splitlines()[:1]}")
            continue
        d = first_difference(normalize(actual), normalize(expected))
        if d:
            out.append(f"#{index} {which}: {d}")
    return checked, out


def check_sum(index, paths, ntypes, flint, pprof, env):
    """(views checked, [mismatch lines]) of the sum of one family's profiles: the
    default type and each -sample_index, and line granularity."""
    flags = ["-top", "-nodefraction=0", "-edgefraction=0", "-nodecount=100000"]
    views = [("sum", flags, [])]
    views += [(f"sum sample_index={i}", flags + [f"-sample_index={i}"], ["-s", str(i)]) for i in range(ntypes)]
    views += [("sum lines", flags + ["-lines"], ["--granularity", "line"])]
    out, checked = [], 0
    for which, pprof_flags, flint_flags in views:
        code, expected, err = run(pprof + pprof_flags + paths, env)
        if code != 0:
            out.append(f"#sum{index} {which}: pprof refused it: {err.strip().splitlines()[-1:]}")
            continue
        fcode, actual, ferr = run([flint, "top"] + paths + flint_flags, env)
        checked += 1
        if fcode != 0:
            out.append(f"#sum{index} {which}: flint failed: {ferr.strip().splitlines()[:1]}")
            continue
        d = first_difference(actual, expected)
        if d:
            out.append(f"#sum{index} {which}: {d}")
    return checked, out


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--count", type=int, default=1000)
    ap.add_argument("--sums", type=int, default=200,
                    help="families of 2-4 profiles whose sum (`flint top A B ..`) is checked")
    ap.add_argument("--only", type=int, help="check only this profile index (and no sums)")
    ap.add_argument("--flint", default=os.path.join(HERE, "..", "target", "release", "flint"))
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 2)
    ap.add_argument("--keep", help="write the profiles to this folder and keep them")
    args = ap.parse_args()
    flint = os.path.abspath(args.flint)
    if not os.access(flint, os.X_OK):
        sys.exit(f"no flint binary at {flint} (cargo build --release, or --flint PATH)")
    # The pprof binary itself: `go tool pprof` would start the go command each time.
    tool = subprocess.run(["go", "tool", "-n", "pprof"], capture_output=True, text=True).stdout.strip()
    pprof = [tool] if tool else ["go", "tool", "pprof"]
    env = dict(os.environ, TZ="UTC", PPROF_BINARY_PATH="/nonexistent", PPROF_TOOLS="/nonexistent")
    Profile = profile_message()
    tmp = None
    if args.keep:
        os.makedirs(args.keep, exist_ok=True)
        folder = args.keep
    else:
        tmp = tempfile.TemporaryDirectory(prefix="pprof-differential-")
        folder = tmp.name
    indices = [args.only] if args.only is not None else range(args.count)
    jobs = []
    for index in indices:
        profile, ntypes = random_profile(Profile, random.Random(f"{args.seed}/{index}"))
        path = os.path.join(folder, f"p{index:05d}.pb.gz")
        with open(path, "wb") as f:
            f.write(gzip.compress(profile.SerializeToString(), mtime=0))
        jobs.append((index, path, ntypes))
    sums = []
    for index in range(0 if args.only is not None else args.sums):
        rng = random.Random(f"{args.seed}/sum/{index}")
        family = random_family(rng)
        paths = []
        for k in range(rng.randint(2, 4)):
            profile, ntypes = random_profile(Profile, rng, family)
            paths.append(os.path.join(folder, f"s{index:05d}-{k}.pb.gz"))
            with open(paths[-1], "wb") as f:
                f.write(gzip.compress(profile.SerializeToString(), mtime=0))
        sums.append((index, paths, ntypes))
    types_checked, mismatches = 0, 0
    with concurrent.futures.ThreadPoolExecutor(max_workers=args.jobs) as pool:
        results = list(pool.map(lambda j: check(*j, flint, pprof, env), jobs))
        results += pool.map(lambda j: check_sum(*j, flint, pprof, env), sums)
        for checked, lines in results:
            types_checked += checked
            mismatches += len(lines)
            for line in lines:
                print(line, flush=True)
    print(f"{len(jobs)} profiles, {len(sums)} sums, {types_checked} views checked, {mismatches} mismatches")
    if tmp:
        tmp.cleanup()
    sys.exit(1 if mismatches else 0)


if __name__ == "__main__":
    main()
