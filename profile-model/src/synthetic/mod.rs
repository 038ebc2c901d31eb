//! Deterministic generator of synthetic pprof CPU profiles: the window's demo hour,
//! and flint's tests and benchmarks (through `flint-fixture-gen`).
//!
//! A [`Universe`] is a fixed set of binaries (mappings), functions and
//! locations, arranged as a call tree with Zipf-distributed branching so that
//! stacks share structure like a real fleet's. [`fleet_profile`] samples one
//! big profile from it; [`series_profile`] samples one of many small
//! consecutive profiles. Everything is driven by [`SplitMix64`], so the same
//! parameters always give byte-identical output.

mod names;

use std::collections::HashMap;
use std::io::Write;

use crate::proto::{Function, Label, Line, Location, Mapping, Profile, Sample, ValueType};

pub use names::Lang;

/// CPU sampling period in nanoseconds (100 Hz, like Go's profiler).
pub const PERIOD_NANOS: i64 = 10_000_000;

/// Error for invalid generator parameters or I/O failures.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct GenError(pub String);

impl From<std::io::Error> for GenError {
    fn from(e: std::io::Error) -> Self {
        GenError(e.to_string())
    }
}

/// The splitmix64 pseudo-random number generator: tiny, fast and fully
/// deterministic across platforms.
#[derive(Clone, Debug)]
pub struct SplitMix64(u64);

impl SplitMix64 {
    /// Creates a generator from a seed.
    pub fn new(seed: u64) -> Self {
        SplitMix64(seed)
    }

    /// Next 64 random bits.
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// Uniform integer in `0..n` (`0` when `n == 0`).
    pub fn below(&mut self, n: u64) -> u64 {
        if n == 0 {
            return 0;
        }
        ((u128::from(self.next_u64()) * u128::from(n)) >> 64) as u64
    }

    /// Uniform float in `[0, 1)`.
    pub fn f64(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 / (1u64 << 53) as f64
    }

    /// True with probability `p`.
    pub fn chance(&mut self, p: f64) -> bool {
        self.f64() < p
    }
}

/// Shape of the function/location universe.
#[derive(Clone, Debug)]
pub struct UniverseParams {
    /// Number of locations (must be at least `functions`).
    pub locations: usize,
    /// Number of functions (must be at least `binaries`).
    pub functions: usize,
    /// Number of mappings.
    pub binaries: usize,
    /// Minimum stack depth (reached unless no shared library exists).
    pub min_depth: usize,
    /// Maximum stack depth.
    pub max_depth: usize,
    /// Random seed.
    pub seed: u64,
}

/// The universe of `flint-fixture-gen series` by default: the day, the hour and the
/// window's demo hour are drawn from it.
pub const SERIES_UNIVERSE: UniverseParams = UniverseParams {
    locations: 8_000,
    functions: 2_500,
    binaries: 8,
    min_depth: 10,
    max_depth: 40,
    seed: 1,
};

struct Binary {
    path: String,
    exe: bool,
    build_id: String,
    start: u64,
    limit: u64,
    pids: Vec<i64>,
    comm: String,
}

struct Func {
    name: String,
    system_name: String,
    file: String,
    start_line: i64,
}

struct Loc {
    binary: u32,
    address: u64,
    /// `(function index, line)`, innermost (inlined callee) first.
    lines: Vec<(u32, i64)>,
}

/// A fixed set of binaries, functions and locations with a call tree over
/// the locations, from which stacks are sampled.
pub struct Universe {
    binaries: Vec<Binary>,
    funcs: Vec<Func>,
    locs: Vec<Loc>,
    parent: Vec<u32>,
    child_start: Vec<u32>,
    children: Vec<u32>,
    exe_roots: Vec<u32>,
    lib_entries: Vec<u32>,
    leaves: Vec<u32>,
    zipf: Vec<f64>,
    min_depth: usize,
    max_depth: usize,
}

const NO_PARENT: u32 = u32::MAX;
const ENDPOINTS: &[&str] = &[
    "/api/search",
    "/api/items",
    "/api/login",
    "/api/checkout",
    "/healthz",
    "/api/upload",
    "/internal/compact",
    "/api/feed",
];

/// Splits `total` into parts proportional to `weights`, each at least `min[i]`.
fn apportion(total: usize, weights: &[usize], min: &[usize]) -> Vec<usize> {
    let floor: usize = min.iter().sum();
    let spare = total.saturating_sub(floor);
    let wsum: usize = weights.iter().sum::<usize>().max(1);
    let mut out: Vec<usize> = weights
        .iter()
        .zip(min)
        .map(|(w, m)| m + spare * w / wsum)
        .collect();
    let given: usize = out.iter().sum();
    if let Some(first) = out.first_mut() {
        *first += total - given;
    }
    out
}

impl Universe {
    /// Builds the universe for `p`.
    pub fn new(p: &UniverseParams) -> Result<Self, GenError> {
        if p.binaries == 0 || p.functions < p.binaries || p.locations < p.functions {
            return Err(GenError(format!(
                "need 1 <= binaries ({}) <= functions ({}) <= locations ({})",
                p.binaries, p.functions, p.locations
            )));
        }
        if p.locations >= NO_PARENT as usize {
            return Err(GenError("too many locations".into()));
        }
        if p.min_depth == 0 || p.max_depth < p.min_depth || p.max_depth > 10_000 {
            return Err(GenError(format!(
                "need 1 <= min-depth ({}) <= max-depth ({}) <= 10000",
                p.min_depth, p.max_depth
            )));
        }
        let mut rng = SplitMix64::new(p.seed ^ 0x5EED_F1EE_7000_0001);
        let templates = names::BINARIES;

        // Binaries.
        let mut binaries = Vec::with_capacity(p.binaries);
        let mut langs = Vec::with_capacity(p.binaries);
        let mut knowns = Vec::with_capacity(p.binaries);
        for b in 0..p.binaries {
            let t = &templates[b % templates.len()];
            let round = b / templates.len();
            let path = if round == 0 {
                t.path.to_string()
            } else {
                format!("{}-{round}", t.path)
            };
            let comm = names::short_name(&path);
            let build_id = format!(
                "{:016x}{:016x}{:08x}",
                rng.next_u64(),
                rng.next_u64(),
                rng.below(1 << 32)
            );
            let start =
                if t.exe { 0x40_0000 } else { 0x7f00_0000_0000 } + (b as u64) * 0x1_0000_0000;
            let pids = (0..1 + rng.below(4))
                .map(|_| 1000 + rng.below(60_000) as i64)
                .collect();
            binaries.push(Binary {
                path,
                exe: t.exe,
                build_id,
                start,
                limit: start,
                pids,
                comm,
            });
            langs.push(t.lang);
            knowns.push(t.known);
        }
        let weights: Vec<usize> = binaries.iter().map(|b| if b.exe { 3 } else { 1 }).collect();
        let fcount = apportion(p.functions, &weights, &vec![1; p.binaries]);
        let lcount = apportion(p.locations, &fcount, &fcount);

        let mut funcs = Vec::with_capacity(p.functions);
        let mut locs: Vec<Loc> = Vec::with_capacity(p.locations);
        let mut parent = Vec::with_capacity(p.locations);
        let mut level: Vec<u16> = Vec::with_capacity(p.locations);
        let mut exe_roots = Vec::new();
        let mut lib_entries = Vec::new();
        let lib_cap = (p.max_depth / 4).clamp(1, 12);

        for b in 0..p.binaries {
            let svc = binaries[b].comm.clone();
            // Functions of this binary, unique names within it.
            let f0 = funcs.len();
            let mut seen: HashMap<String, ()> = HashMap::new();
            for k in 0..fcount[b] {
                let mut f = if let Some(known) = knowns[b].get(k) {
                    names::FuncName {
                        name: (*known).to_string(),
                        system_name: (*known).to_string(),
                        file: names::known_file(langs[b], known, &svc),
                    }
                } else {
                    names::generate(&mut rng, langs[b], &svc)
                };
                let (base_name, base_system) = (f.name.clone(), f.system_name.clone());
                let mut n = 1;
                while seen.contains_key(&f.name) {
                    let suffix = match langs[b] {
                        Lang::Go => format!(".func{n}"),
                        Lang::Rust => format!("::{{{{closure}}}}#{n}"),
                        Lang::Cpp | Lang::C => format!(".part.{n}"),
                    };
                    f.name = format!("{base_name}{suffix}");
                    f.system_name = format!("{base_system}{suffix}");
                    n += 1;
                }
                seen.insert(f.name.clone(), ());
                funcs.push(Func {
                    name: f.name,
                    system_name: f.system_name,
                    file: f.file,
                    start_line: 1 + rng.below(2000) as i64,
                });
            }
            let nf = fcount[b];
            // Location -> owning function: one each, the rest random (skewed).
            let l0 = locs.len();
            let mut owner: Vec<usize> = (0..nf).collect();
            for _ in nf..lcount[b] {
                let r = rng.f64();
                owner.push(((r * r) * nf as f64) as usize % nf);
            }
            let mut per_func = vec![0u64; nf];
            for &o in &owner {
                per_func[o] += 1;
            }
            // Function address ranges.
            let mut base = vec![0u64; nf];
            let mut size = vec![0u64; nf];
            let mut cursor = binaries[b].start + 0x1000;
            for f in 0..nf {
                base[f] = cursor;
                size[f] = (per_func[f] * 16)
                    .max(64 + rng.below(2048))
                    .next_multiple_of(16);
                cursor += size[f];
            }
            binaries[b].limit = cursor.next_multiple_of(0x1000);
            let mut used = vec![0u64; nf];
            for &o in &owner {
                let step = size[o] / (per_func[o] + 1);
                used[o] += 1;
                let address = base[o] + used[o] * step;
                let gf = (f0 + o) as u32;
                let mut lines = Vec::with_capacity(1);
                if rng.chance(0.1) && nf > 1 {
                    for _ in 0..1 + rng.below(2) {
                        let callee = f0 + rng.below(nf as u64) as usize;
                        lines.push((
                            callee as u32,
                            funcs[callee].start_line + 1 + rng.below(40) as i64,
                        ));
                    }
                }
                lines.push((gf, funcs[f0 + o].start_line + 1 + rng.below(300) as i64));
                locs.push(Loc {
                    binary: b as u32,
                    address,
                    lines,
                });
            }
            // Call tree over this binary's locations.
            let n = lcount[b];
            let (roots, cap) = if binaries[b].exe {
                (1, p.max_depth - 1)
            } else {
                ((n / 40).max(1), lib_cap - 1)
            };
            for i in 0..n {
                let g = (l0 + i) as u32;
                if i < roots {
                    parent.push(NO_PARENT);
                    level.push(0);
                    if binaries[b].exe {
                        exe_roots.push(g);
                    } else {
                        lib_entries.push(g);
                    }
                    continue;
                }
                let last = l0 + i - 1;
                let mut par = l0 + rng.below(roots as u64) as usize;
                let extend_chain = if binaries[b].exe { 0.8 } else { 0.5 };
                if rng.chance(extend_chain) && (level[last] as usize) < cap {
                    par = last;
                } else {
                    for _ in 0..8 {
                        let j = l0 + rng.below(i as u64) as usize;
                        if (level[j] as usize) < cap {
                            par = j;
                            break;
                        }
                    }
                }
                parent.push(par as u32);
                level.push(level[par] + 1);
            }
        }

        // Interleave the shared libraries' entry points (Fisher-Yates).
        for i in (1..lib_entries.len()).rev() {
            lib_entries.swap(i, rng.below(i as u64 + 1) as usize);
        }
        // Children in creation order (CSR).
        let nl = locs.len();
        let mut child_start = vec![0u32; nl + 1];
        for &par in &parent {
            if par != NO_PARENT {
                child_start[par as usize + 1] += 1;
            }
        }
        for i in 0..nl {
            child_start[i + 1] += child_start[i];
        }
        let mut fill = child_start.clone();
        let mut children = vec![0u32; child_start[nl] as usize];
        for (i, &par) in parent.iter().enumerate() {
            if par != NO_PARENT {
                children[fill[par as usize] as usize] = i as u32;
                fill[par as usize] += 1;
            }
        }
        let leaves = (0..nl as u32)
            .filter(|&i| child_start[i as usize] == child_start[i as usize + 1])
            .collect();
        let widest = (0..nl)
            .map(|i| (child_start[i + 1] - child_start[i]) as usize)
            .chain([exe_roots.len(), lib_entries.len()])
            .max()
            .unwrap_or(1);
        let mut zipf = Vec::with_capacity(widest + 1);
        let mut acc = 0.0;
        zipf.push(0.0);
        for r in 0..widest {
            acc += 1.0 / ((r + 1) as f64).powf(1.1);
            zipf.push(acc);
        }
        Ok(Universe {
            binaries,
            funcs,
            locs,
            parent,
            child_start,
            children,
            exe_roots,
            lib_entries,
            leaves,
            zipf,
            min_depth: p.min_depth,
            max_depth: p.max_depth,
        })
    }

    /// Number of locations.
    pub fn locations(&self) -> usize {
        self.locs.len()
    }

    /// Number of leaves of the call tree: a fleet profile with at least this
    /// many samples references every location and function.
    pub fn leaves(&self) -> usize {
        self.leaves.len()
    }

    /// Zipf-distributed index in `0..n` (0 most likely).
    fn zipf_pick(&self, rng: &mut SplitMix64, n: usize) -> usize {
        let u = rng.f64() * self.zipf[n];
        self.zipf[1..=n].partition_point(|&h| h <= u).min(n - 1)
    }

    fn kids(&self, node: u32) -> &[u32] {
        let i = node as usize;
        &self.children[self.child_start[i] as usize..self.child_start[i + 1] as usize]
    }

    /// Continues a root-first `stack` downwards until it is `target` deep,
    /// jumping into shared libraries at leaves and sometimes recursing.
    fn extend(&self, rng: &mut SplitMix64, stack: &mut Vec<u32>, target: usize) {
        while stack.len() < target {
            let Some(&node) = stack.last() else { return };
            let kids = self.kids(node);
            if kids.is_empty() {
                let in_lib = !self.binaries[self.locs[node as usize].binary as usize].exe;
                if self.lib_entries.is_empty() || (in_lib && stack.len() >= self.min_depth) {
                    return;
                }
                stack.push(self.lib_entries[self.zipf_pick(rng, self.lib_entries.len())]);
                continue;
            }
            if rng.chance(0.01) {
                // A recursive function: the same frame a few times.
                for _ in 0..1 + rng.below(3) {
                    if stack.len() + 1 < target {
                        stack.push(node);
                    }
                }
            }
            stack.push(kids[self.zipf_pick(rng, kids.len())]);
        }
    }

    fn target_depth(&self, rng: &mut SplitMix64) -> usize {
        // Triangular-ish: average of two uniforms, biased to the middle.
        let span = (self.max_depth - self.min_depth + 1) as u64;
        self.min_depth + ((rng.below(span) + rng.below(span)) / 2) as usize
    }

    /// A random root-first stack.
    fn random_stack(&self, rng: &mut SplitMix64, stack: &mut Vec<u32>) {
        stack.clear();
        let root = self
            .exe_roots
            .get(self.zipf_pick(rng, self.exe_roots.len().max(1)))
            .or(self.lib_entries.first());
        if let Some(&root) = root {
            stack.push(root);
            let target = self.target_depth(rng);
            self.extend(rng, stack, target);
        }
    }

    /// A root-first stack ending at `leaf`, so that every location is used.
    fn covering_stack(&self, rng: &mut SplitMix64, leaf: u32, stack: &mut Vec<u32>) {
        let mut path = vec![leaf];
        let mut n = leaf;
        while self.parent[n as usize] != NO_PARENT {
            n = self.parent[n as usize];
            path.push(n);
        }
        path.reverse();
        stack.clear();
        if self.binaries[self.locs[n as usize].binary as usize].exe {
            stack.extend_from_slice(&path);
            let target = self.target_depth(rng).max(path.len());
            self.extend(rng, stack, target);
        } else {
            let room = self.max_depth.saturating_sub(path.len()).max(1);
            if let Some(&root) = self
                .exe_roots
                .get(self.zipf_pick(rng, self.exe_roots.len().max(1)))
            {
                stack.push(root);
                let want = self
                    .target_depth(rng)
                    .saturating_sub(path.len())
                    .clamp(1, room);
                // Stop the prefix at a frame that has children or use it as is.
                self.extend(rng, stack, want);
                stack.truncate(room);
            }
            stack.extend_from_slice(&path);
        }
    }
}

/// Interns strings into a pprof string table (index 0 is "").
struct Strings {
    table: Vec<String>,
    index: HashMap<String, i64>,
}

impl Strings {
    fn new() -> Self {
        let mut s = Strings {
            table: Vec::new(),
            index: HashMap::new(),
        };
        s.get("");
        s
    }

    fn get(&mut self, s: &str) -> i64 {
        if let Some(&i) = self.index.get(s) {
            return i;
        }
        let i = self.table.len() as i64;
        self.table.push(s.to_string());
        self.index.insert(s.to_string(), i);
        i
    }
}

/// Builds a profile that contains only the universe entries it references
/// (ids are assigned in order of first use).
struct Builder<'u> {
    u: &'u Universe,
    strings: Strings,
    loc_ids: Vec<u64>,
    func_ids: Vec<u64>,
    map_ids: Vec<u64>,
    profile: Profile,
}

impl<'u> Builder<'u> {
    fn new(u: &'u Universe) -> Self {
        let mut strings = Strings::new();
        let vt = |s: &mut Strings, t: &str, unit: &str| ValueType {
            r#type: s.get(t),
            unit: s.get(unit),
        };
        let profile = Profile {
            sample_type: vec![
                vt(&mut strings, "samples", "count"),
                vt(&mut strings, "cpu", "nanoseconds"),
            ],
            period_type: Some(vt(&mut strings, "cpu", "nanoseconds")),
            period: PERIOD_NANOS,
            ..Default::default()
        };
        Builder {
            u,
            strings,
            loc_ids: vec![0; u.locs.len()],
            func_ids: vec![0; u.funcs.len()],
            map_ids: vec![0; u.binaries.len()],
            profile,
        }
    }

    fn mapping(&mut self, b: usize) -> u64 {
        if self.map_ids[b] == 0 {
            let bin = &self.u.binaries[b];
            let id = self.profile.mapping.len() as u64 + 1;
            self.profile.mapping.push(Mapping {
                id,
                memory_start: bin.start,
                memory_limit: bin.limit,
                file_offset: 0,
                filename: self.strings.get(&bin.path),
                build_id: self.strings.get(&bin.build_id),
                has_functions: true,
                has_filenames: true,
                has_line_numbers: true,
                has_inline_frames: true,
            });
            self.map_ids[b] = id;
        }
        self.map_ids[b]
    }

    fn function(&mut self, f: usize) -> u64 {
        if self.func_ids[f] == 0 {
            let func = &self.u.funcs[f];
            let id = self.profile.function.len() as u64 + 1;
            self.profile.function.push(Function {
                id,
                name: self.strings.get(&func.name),
                system_name: self.strings.get(&func.system_name),
                filename: self.strings.get(&func.file),
                start_line: func.start_line,
            });
            self.func_ids[f] = id;
        }
        self.func_ids[f]
    }

    fn location(&mut self, l: u32) -> u64 {
        let li = l as usize;
        if self.loc_ids[li] == 0 {
            let loc = &self.u.locs[li];
            let mapping_id = self.mapping(loc.binary as usize);
            let mut lines = Vec::with_capacity(loc.lines.len());
            for &(f, line) in &loc.lines {
                lines.push(Line {
                    function_id: self.function(f as usize),
                    line,
                    column: 0,
                });
            }
            let id = self.profile.location.len() as u64 + 1;
            self.profile.location.push(Location {
                id,
                mapping_id,
                address: loc.address,
                line: lines,
                is_folded: false,
            });
            self.loc_ids[li] = id;
        }
        self.loc_ids[li]
    }

    /// Adds a sample for a root-first `stack`.
    fn sample(&mut self, stack: &[u32], count: i64, labels: Vec<Label>) {
        let location_id = stack.iter().rev().map(|&l| self.location(l)).collect();
        self.profile.sample.push(Sample {
            location_id,
            value: vec![count, count * PERIOD_NANOS],
            label: labels,
        });
    }

    fn str_label(&mut self, key: &str, value: &str) -> Label {
        Label {
            key: self.strings.get(key),
            str: self.strings.get(value),
            ..Default::default()
        }
    }

    fn num_label(&mut self, key: &str, num: i64, unit: &str) -> Label {
        let num_unit = if unit.is_empty() {
            0
        } else {
            self.strings.get(unit)
        };
        Label {
            key: self.strings.get(key),
            num,
            num_unit,
            ..Default::default()
        }
    }

    fn finish(mut self) -> Profile {
        self.profile.string_table = self.strings.table;
        self.profile
    }
}

/// A sample count: mostly 1, with a geometric-like tail.
fn sample_count(rng: &mut SplitMix64, scale: f64) -> i64 {
    1 + (-(1.0 - rng.f64()).ln() * scale) as i64
}

/// Parameters of [`fleet_profile`].
#[derive(Clone, Debug)]
pub struct FleetParams {
    /// The function universe.
    pub universe: UniverseParams,
    /// Number of samples.
    pub samples: usize,
    /// Profile start time.
    pub time_nanos: i64,
    /// Profile duration.
    pub duration_nanos: i64,
}

/// One large profile that holds every location, function and mapping of the
/// universe (all referenced when `samples >= universe.leaves()`).
pub fn fleet_profile(p: &FleetParams) -> Result<Profile, GenError> {
    let u = Universe::new(&p.universe)?;
    let mut rng = SplitMix64::new(p.universe.seed ^ 0xF1EE_7000_0000_0002);
    let mut b = Builder::new(&u);
    for l in 0..u.locs.len() as u32 {
        b.location(l);
    }
    for f in 0..u.funcs.len() {
        b.function(f);
    }
    let mut stack = Vec::with_capacity(p.universe.max_depth);
    for i in 0..p.samples {
        if let Some(&leaf) = u.leaves.get(i) {
            u.covering_stack(&mut rng, leaf, &mut stack);
        } else {
            u.random_stack(&mut rng, &mut stack);
        }
        let Some(&root) = stack.first() else { continue };
        let bin = &u.binaries[u.locs[root as usize].binary as usize];
        let pid = bin.pids[rng.below(bin.pids.len() as u64) as usize];
        let branch = stack[stack.len().min(3) - 1] as usize;
        let endpoint = ENDPOINTS[branch.wrapping_mul(2_654_435_761) % ENDPOINTS.len()];
        let labels = vec![
            b.num_label("pid", pid, ""),
            b.str_label("endpoint", endpoint),
        ];
        let count = sample_count(&mut rng, 1.5);
        b.sample(&stack, count, labels);
    }
    let mut profile = b.finish();
    profile.time_nanos = p.time_nanos;
    profile.duration_nanos = p.duration_nanos;
    let comment = format!(
        "synthetic fleet profile from flint-fixture-gen, seed {}",
        p.universe.seed
    );
    profile.comment = vec![profile.string_table.len() as i64];
    profile.string_table.push(comment);
    Ok(profile)
}

/// Relative load at `t` seconds of the day: a daily sine plus an afternoon peak.
pub fn daily_load(t_secs: i64) -> f64 {
    let day = 86_400.0;
    let x = t_secs.rem_euclid(86_400) as f64 / day;
    let hours = x * 24.0;
    let sine = 0.6 - 0.35 * (2.0 * std::f64::consts::PI * x).cos();
    let peak = 0.5 * (-((hours - 14.5) / 0.75).powi(2)).exp();
    sine + peak
}

/// Parameters of [`series_profile`].
#[derive(Clone, Debug)]
pub struct SeriesParams {
    /// Samples per profile at load 1.0 (scaled by [`daily_load`]).
    pub samples: usize,
    /// Time of profile 0.
    pub start_nanos: i64,
    /// Seconds between consecutive profiles (also each one's duration).
    pub step_secs: i64,
    /// Seed for the samples (the universe has its own).
    pub seed: u64,
}

/// Profile number `index` of a series: only the referenced locations,
/// functions and mappings, labels `comm`, `pid` and `container`.
pub fn series_profile(u: &Universe, p: &SeriesParams, index: u64) -> Profile {
    let mut rng = SplitMix64::new(p.seed ^ index.wrapping_mul(0xA24B_AED4_963E_E407));
    let t_secs = p.start_nanos / 1_000_000_000 + index as i64 * p.step_secs;
    let load = daily_load(t_secs);
    let n = ((p.samples as f64 * load).round() as usize).max(1);
    let mut b = Builder::new(u);
    let mut stack = Vec::with_capacity(u.max_depth);
    for _ in 0..n {
        u.random_stack(&mut rng, &mut stack);
        let Some(&root) = stack.first() else { continue };
        let bi = u.locs[root as usize].binary as usize;
        let bin = &u.binaries[bi];
        let k = rng.below(bin.pids.len() as u64) as usize;
        let container = format!(
            "{}-{:04x}-{k}",
            bin.comm,
            (bi as u64 * 7919 + k as u64 * 104_729) & 0xffff
        );
        let labels = vec![
            b.str_label("comm", &bin.comm),
            b.num_label("pid", bin.pids[k], ""),
            b.str_label("container", &container),
        ];
        let count = sample_count(&mut rng, 0.7 * load);
        b.sample(&stack, count, labels);
    }
    let mut profile = b.finish();
    profile.time_nanos = p.start_nanos + index as i64 * p.step_secs * 1_000_000_000;
    profile.duration_nanos = p.step_secs * 1_000_000_000;
    profile
}

/// Encodes and gzips a profile at flate2's default level; returns
/// `(uncompressed, compressed)` bytes.
pub fn encode_gz(profile: &Profile) -> Result<(usize, Vec<u8>), GenError> {
    encode_gz_level(profile, flate2::Compression::default())
}

/// Like [`encode_gz`] with an explicit compression level.
pub fn encode_gz_level(
    profile: &Profile,
    level: flate2::Compression,
) -> Result<(usize, Vec<u8>), GenError> {
    let raw = prost::Message::encode_to_vec(profile);
    let mut gz = flate2::write::GzEncoder::new(Vec::with_capacity(raw.len() / 3), level);
    gz.write_all(&raw)?;
    Ok((raw.len(), gz.finish()?))
}

#[cfg(test)]
mod tests;
