//! Turning one interval's stack counts into a pprof profile: `samples/count` and
//! `cpu/nanoseconds` per stack, kernel frames under user frames, with the labels of
//! each sample's process and thread, and mappings and addresses kept so the profile
//! can be symbolized again later.

use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;

use profile_model::Profile;
use profile_model::profile::{Function, Label, Line, Location, Mapping, Samples, StrId, ValueType};

use super::process_info::ProcessInfo;
use crate::symbols::{MappingInfo, Symbolizer};

/// The profile name of flint's captures, as selectors see it:
/// `flint_cpu:samples:count:cpu:nanoseconds:delta`.
pub const PROFILE_NAME: &str = "flint_cpu";

/// One distinct stack of one thread and how many times it was sampled.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CapturedStack {
    /// Process id.
    pub pid: u32,
    /// Thread id.
    pub tid: u32,
    /// User-space addresses, leaf first.
    pub user: Vec<u64>,
    /// Kernel addresses, leaf first.
    pub kernel: Vec<u64>,
    /// Samples of this stack.
    pub count: u64,
}

/// When and how an interval was sampled.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Interval {
    /// Start, nanoseconds since the Unix epoch.
    pub start_nanos: i64,
    /// Length in nanoseconds.
    pub duration_nanos: i64,
    /// Samples per second per CPU.
    pub frequency_hz: u64,
}

/// What building the profile noticed.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct BuildReport {
    /// Samples in the profile.
    pub samples: u64,
    /// Samples whose user stack stops short of a thread's entry point, by the binary
    /// the stack stops in (most often: code built without frame pointers).
    pub incomplete: BTreeMap<String, u64>,
    /// Samples of processes that exited before their maps could be read, whose user
    /// frames stay `[unknown]+0x…` (short-lived commands).
    pub exited: u64,
}

impl BuildReport {
    /// `stack may be incomplete: no frame pointers in libc.so.6 (12% of samples)`, for
    /// the binary that cuts most stacks short, and the share of samples of processes
    /// that exited unsymbolized; `None` when there is neither.
    pub fn warning(&self) -> Option<String> {
        let share = |n: u64| 100.0 * n as f64 / self.samples.max(1) as f64;
        let mut parts = Vec::new();
        if let Some((binary, n)) = self.incomplete.iter().max_by_key(|(_, n)| **n) {
            parts.push(format!(
                "stack may be incomplete: no frame pointers in {binary} ({:.0}% of samples)",
                share(*n)
            ));
        }
        if self.exited > 0 {
            parts.push(format!(
                "{:.0}% of samples from processes that exited before they were symbolized",
                share(self.exited)
            ));
        }
        (!parts.is_empty()).then(|| parts.join("; "))
    }
}

/// What names the binary of an address in no mapping.
const UNKNOWN_BINARY: &str = "[unknown]";

/// Functions a complete user stack ends in (its outermost frame): C's process and thread
/// entries, and Go's (a goroutine's stack ends in `runtime.goexit`, a thread's own in
/// `runtime.mstart` or, for the first thread, `runtime.rt0_go`; the symbol table names
/// the assembly ones with `.abi0`).
const STACK_ROOTS: [&str; 15] = [
    "_start",
    "__libc_start_main",
    "__libc_start_call_main",
    "start_thread",
    "clone",
    "clone3",
    "__clone",
    "__clone3",
    "thread_start",
    "runtime.goexit",
    "runtime.goexit.abi0",
    "runtime.mstart",
    "runtime.mstart.abi0",
    "runtime.rt0_go",
    "runtime.rt0_go.abi0",
];

/// Interning of strings, mappings, functions and locations into a [`Profile`].
struct Builder {
    profile: Profile,
    strings: HashMap<String, StrId>,
    mappings: HashMap<*const MappingInfo, u32>,
    functions: HashMap<(StrId, StrId), u32>,
    locations: HashMap<(u32, u32, u64, bool), u32>,
    kernel_locations: HashMap<(u64, bool), u32>,
    kernel_mapping: Option<u32>,
    label_sets: HashMap<Vec<Label>, u32>,
}

impl Builder {
    fn new() -> Self {
        let mut b = Self {
            profile: Profile {
                strings: vec![String::new()],
                label_sets: vec![Vec::new()],
                samples: Samples::with_columns(2),
                ..Profile::default()
            },
            strings: HashMap::from([(String::new(), 0)]),
            mappings: HashMap::new(),
            functions: HashMap::new(),
            locations: HashMap::new(),
            kernel_locations: HashMap::new(),
            kernel_mapping: None,
            label_sets: HashMap::from([(Vec::new(), 0)]),
        };
        let samples = ValueType {
            kind: b.string("samples"),
            unit: b.string("count"),
        };
        let cpu = ValueType {
            kind: b.string("cpu"),
            unit: b.string("nanoseconds"),
        };
        b.profile.sample_types = vec![samples, cpu];
        b.profile.period_type = cpu;
        b
    }

    fn string(&mut self, s: &str) -> StrId {
        if let Some(&id) = self.strings.get(s) {
            return id;
        }
        let id = self.profile.strings.len() as StrId;
        self.profile.strings.push(s.to_string());
        self.strings.insert(s.to_string(), id);
        id
    }

    fn function(&mut self, name: &str, file: &str) -> u32 {
        let key = (self.string(name), self.string(file));
        if let Some(&id) = self.functions.get(&key) {
            return id;
        }
        let id = self.profile.functions.len() as u32;
        self.profile.functions.push(Function {
            name: key.0,
            system_name: key.0,
            filename: key.1,
            start_line: 0,
        });
        self.functions.insert(key, id);
        id
    }

    fn mapping(&mut self, info: &Arc<MappingInfo>) -> u32 {
        if let Some(&id) = self.mappings.get(&Arc::as_ptr(info)) {
            return id;
        }
        let id = self.profile.mappings.len() as u32;
        let filename = self.string(&info.path);
        let build_id = self.string(&info.build_id);
        self.profile.mappings.push(Mapping {
            memory_start: info.start,
            memory_limit: info.end,
            file_offset: info.offset,
            filename,
            build_id,
            flags: 0b0111,
        });
        self.mappings.insert(Arc::as_ptr(info), id);
        id
    }

    fn kernel_location(&mut self, sym: &mut Symbolizer, addr: u64, ret: bool) -> u32 {
        if let Some(&id) = self.kernel_locations.get(&(addr, ret)) {
            return id;
        }
        let mapping = match self.kernel_mapping {
            Some(m) => m,
            None => {
                let filename = self.string("[kernel.kallsyms]");
                self.profile.mappings.push(Mapping {
                    memory_start: 0,
                    memory_limit: u64::MAX,
                    file_offset: 0,
                    filename,
                    build_id: 0,
                    flags: 0b0001,
                });
                let m = self.profile.mappings.len() as u32 - 1;
                self.kernel_mapping = Some(m);
                m
            }
        };
        let name = sym
            .kernel(addr, ret)
            .unwrap_or_else(|| format!("[kernel]+0x{addr:x}"));
        let function = self.function(&name, "");
        let id = self.push_location(
            Some(mapping),
            addr,
            vec![Line {
                function,
                line: 0,
                column: 0,
            }],
        );
        self.kernel_locations.insert((addr, ret), id);
        id
    }

    /// The location of user address `addr` of `pid`, and the binary it lies in.
    fn user_location(
        &mut self,
        sym: &mut Symbolizer,
        pid: u32,
        addr: u64,
        ret: bool,
    ) -> (u32, String) {
        let loc = sym.user(pid, addr, ret);
        let binary = loc
            .mapping
            .as_ref()
            .map_or_else(|| UNKNOWN_BINARY.to_string(), |m| m.base_name().to_string());
        let mapping = loc.mapping.as_ref().map(|m| self.mapping(m));
        // Anonymous memory (and unknown addresses) hold different code in different
        // processes: keep the pid in the key; file-backed mappings are shared.
        let scope = match &loc.mapping {
            Some(m) if m.pid.is_none() => 0,
            _ => pid,
        };
        let key = (mapping.unwrap_or(u32::MAX), scope, addr, ret);
        if let Some(&id) = self.locations.get(&key) {
            return (id, binary);
        }
        let lines: Vec<Line> = if loc.frames.is_empty() {
            // Never dropped: named by binary and offset, to be symbolized later.
            let offset = loc
                .mapping
                .as_ref()
                .map_or(addr, |m| addr - m.start + m.offset);
            let function = self.function(&format!("{binary}+0x{offset:x}"), "");
            vec![Line {
                function,
                line: 0,
                column: 0,
            }]
        } else {
            loc.frames
                .iter()
                .map(|f| Line {
                    function: self.function(&f.function, &f.file),
                    line: i64::from(f.line),
                    column: 0,
                })
                .collect()
        };
        let id = self.push_location(mapping, addr, lines);
        self.locations.insert(key, id);
        (id, binary)
    }

    fn push_location(&mut self, mapping: Option<u32>, address: u64, lines: Vec<Line>) -> u32 {
        self.profile.locations.push(Location {
            mapping,
            address,
            lines,
            is_folded: false,
        });
        self.profile.locations.len() as u32 - 1
    }

    fn label_set(&mut self, labels: &[(&str, &str)]) -> u32 {
        let set: Vec<Label> = labels
            .iter()
            .filter(|(_, v)| !v.is_empty())
            .map(|(k, v)| Label {
                key: self.string(k),
                str: self.string(v),
                num: 0,
                num_unit: 0,
            })
            .collect();
        if let Some(&id) = self.label_sets.get(&set) {
            return id;
        }
        let id = self.profile.label_sets.len() as u32;
        self.profile.label_sets.push(set.clone());
        self.label_sets.insert(set, id);
        id
    }
}

/// Builds the pprof profile of one interval. Every stack becomes one sample (kernel
/// frames leaf first, then user frames), labelled with pid, tid, comm, thread name,
/// executable, container id (when in a container), Kubernetes namespace, pod and
/// container (when in a pod whose logs name them) and node.
pub fn build_profile(
    stacks: &[CapturedStack],
    interval: Interval,
    sym: &mut Symbolizer,
    procs: &mut ProcessInfo,
) -> (Profile, BuildReport) {
    let mut b = Builder::new();
    let period = 1_000_000_000 / interval.frequency_hz.max(1) as i64;
    b.profile.period = period;
    b.profile.time_nanos = interval.start_nanos;
    b.profile.duration_nanos = interval.duration_nanos;
    let mut report = BuildReport::default();
    let node = procs.node.clone();
    for s in stacks {
        let mut ids = Vec::with_capacity(s.kernel.len() + s.user.len());
        for (i, &addr) in s.kernel.iter().enumerate() {
            ids.push(b.kernel_location(sym, addr, i > 0));
        }
        // The outermost frame, and the binary of the outermost frame that lies in one.
        let mut outermost = None;
        let mut known = None;
        for (i, &addr) in s.user.iter().enumerate() {
            // The user leaf is a return address too when the kernel frames are above it.
            let ret = i > 0 || !s.kernel.is_empty();
            let (id, binary) = b.user_location(sym, s.pid, addr, ret);
            ids.push(id);
            outermost = Some(id);
            if binary != UNKNOWN_BINARY {
                known = Some(binary);
            }
        }
        if let Some(id) = outermost {
            let ends_at_root = b.profile.locations[id as usize].lines.iter().any(|l| {
                let name = b.profile.str(b.profile.functions[l.function as usize].name);
                STACK_ROOTS.contains(&name)
            });
            if !ends_at_root {
                // A walk that ends at an address in no mapping after frames in a binary
                // went astray from that binary's code (as Go's assembly, which uses the
                // frame pointer register for data); with no frame in any binary, the
                // process's maps were gone.
                match known {
                    Some(binary) => *report.incomplete.entry(binary).or_insert(0) += s.count,
                    None => report.exited += s.count,
                }
            }
        }
        let p = procs.process(s.pid).clone();
        let thread = procs.thread_name(s.pid, s.tid).to_string();
        let (pid, tid) = (s.pid.to_string(), s.tid.to_string());
        let set = b.label_set(&[
            ("pid", &pid),
            ("tid", &tid),
            ("comm", &p.comm),
            ("thread_name", &thread),
            ("executable", &p.executable),
            ("container_id", &p.container_id),
            ("namespace", &p.namespace),
            ("pod", &p.pod),
            ("container", &p.container),
            ("node", &node),
        ]);
        let count = i64::try_from(s.count).unwrap_or(i64::MAX);
        let samples = &mut b.profile.samples;
        samples.stack_locations.extend_from_slice(&ids);
        samples
            .stack_offsets
            .push(samples.stack_locations.len() as u32);
        samples.values[0].push(count);
        samples.values[1].push(count.saturating_mul(period));
        samples.label_set.push(set);
        report.samples += s.count;
    }
    (b.profile, report)
}
