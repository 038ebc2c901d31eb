//! The walk over a perf.data file's records, in time order: COMM, FORK and MMAP
//! records keep each process's name and mappings as they were at each sample; each
//! SAMPLE's callchain (or its lone instruction pointer) becomes a stack, kernel frames
//! named from kallsyms, user frames left to the symbolizer.

use std::collections::HashMap;

use linux_perf_data::linux_perf_event_reader::constants::{
    PERF_REG_X86_BP, PERF_REG_X86_IP, PERF_REG_X86_SP,
};
use linux_perf_data::linux_perf_event_reader::{
    CommOrExecRecord, CpuMode, EventRecord, Mmap2FileId, RawData, SampleRecord,
};
use linux_perf_data::{DsoInfo, DsoKey};

use super::builder::{Builder, MappedFile};
use super::events::Columns;
use super::kernel::hex;
use super::slices::TIME_LABEL;
use super::unwind::{DwarfUnwinder, UserState};
use crate::symbols::kallsyms::Kallsyms;

/// `PERF_CONTEXT_*` markers in a callchain: every value from `PERF_CONTEXT_MAX` up.
const CONTEXT_MAX: u64 = -4095i64 as u64;
const CONTEXT_KERNEL: u64 = -128i64 as u64;
const CONTEXT_USER: u64 = -512i64 as u64;
/// `PROT_EXEC` among an MMAP2 record's protection bits.
const PROT_EXEC: u32 = 4;
/// The path every kernel frame's mapping gets.
const KERNEL: &str = "[kernel.kallsyms]";

/// Where the frames of a callchain run, as its markers say.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Context {
    Kernel,
    User,
    /// The hypervisor or a guest: frames kept as addresses.
    Other,
}

impl Context {
    fn of(mode: CpuMode) -> Self {
        match mode {
            CpuMode::Kernel => Self::Kernel,
            CpuMode::User => Self::User,
            _ => Self::Other,
        }
    }
}

/// A process as the records so far describe it.
#[derive(Debug, Clone, Default)]
struct Process {
    comm: String,
    /// Its mappings, the latest last (searched from the end).
    maps: Vec<MappedFile>,
    /// Those of them that hold code, for the unwinder.
    code: Vec<MappedFile>,
}

/// What the walk counts beside the profile.
#[derive(Debug, Default)]
pub(super) struct Counts {
    /// Samples added.
    pub samples: u64,
    /// Samples the kernel reported lost (LOST records).
    pub lost: u64,
    /// Records that could not be parsed, skipped.
    pub unparsed: u64,
    /// Timestamps of the first and last sample.
    pub first_time: Option<u64>,
    /// See `first_time`.
    pub last_time: Option<u64>,
}

/// The state of the walk; see the module documentation.
pub(super) struct Walk<'a> {
    pub builder: Builder,
    pub counts: Counts,
    columns: &'a Columns,
    build_ids: &'a HashMap<DsoKey, DsoInfo>,
    kallsyms: Option<&'a Kallsyms>,
    processes: HashMap<i32, Process>,
    thread_names: HashMap<i32, String>,
    kernel: Option<MappedFile>,
    /// The width of the time slices samples are labelled with.
    slice_nanos: u64,
    /// Unwinds user stacks (`--call-graph dwarf`), where the file has them.
    pub unwinder: Option<DwarfUnwinder>,
    stack: Vec<u32>,
    frames: Vec<u64>,
}

impl<'a> Walk<'a> {
    /// A walk building into `builder`, with these value columns, the file's build
    /// ids, the kernel's names when they fit, and time slices `slice_nanos` wide.
    pub fn new(
        builder: Builder,
        columns: &'a Columns,
        build_ids: &'a HashMap<DsoKey, DsoInfo>,
        kallsyms: Option<&'a Kallsyms>,
        slice_nanos: u64,
    ) -> Self {
        Self {
            builder,
            counts: Counts::default(),
            columns,
            build_ids,
            kallsyms,
            processes: HashMap::new(),
            thread_names: HashMap::new(),
            kernel: None,
            slice_nanos: slice_nanos.max(1),
            unwinder: None,
            stack: Vec::new(),
            frames: Vec::new(),
        }
    }

    /// Takes in one event record of event `attr_index`.
    pub fn record(&mut self, attr_index: usize, record: EventRecord<'_>) {
        match record {
            EventRecord::Sample(s) => self.sample(attr_index, &s),
            EventRecord::Comm(c) => self.comm(&c),
            EventRecord::Fork(f) if f.pid != f.ppid => {
                // A new process: a copy of its parent's address space.
                let parent = self.processes.get(&f.ppid).cloned().unwrap_or_default();
                let child = self.processes.entry(f.pid).or_default();
                child.maps = parent.maps;
                child.code = parent.code;
                if let Some(u) = &mut self.unwinder {
                    u.forget(f.pid);
                }
                if child.comm.is_empty() {
                    child.comm = parent.comm;
                }
            }
            EventRecord::Mmap(m) => {
                let path = m.path.as_slice();
                let range = (m.address, m.length, m.page_offset);
                self.mmap(m.pid, m.cpu_mode, range, &path, (None, m.is_executable));
            }
            EventRecord::Mmap2(m) => {
                let path = m.path.as_slice();
                let id = match &m.file_id {
                    Mmap2FileId::BuildId(id) => Some(hex(id)),
                    Mmap2FileId::InodeAndVersion(_) => None,
                };
                let range = (m.address, m.length, m.page_offset);
                let executable = m.protection & PROT_EXEC != 0;
                self.mmap(m.pid, m.cpu_mode, range, &path, (id, executable));
            }
            EventRecord::Lost(l) => self.counts.lost = self.counts.lost.saturating_add(l.count),
            _ => {}
        }
    }

    fn comm(&mut self, c: &CommOrExecRecord<'_>) {
        let name = String::from_utf8_lossy(&c.name.as_slice()).into_owned();
        let process = self.processes.entry(c.pid).or_default();
        if c.is_execve {
            process.maps.clear();
            process.code.clear();
            if let Some(u) = &mut self.unwinder {
                u.forget(c.pid);
            }
        }
        if c.pid == c.tid || process.comm.is_empty() {
            process.comm.clone_from(&name);
        }
        self.thread_names.insert(c.tid, name);
    }

    fn mmap(
        &mut self,
        pid: i32,
        mode: CpuMode,
        (start, length, offset): (u64, u64, u64),
        path: &[u8],
        (mmap_build_id, executable): (Option<String>, bool),
    ) {
        let build_id = mmap_build_id
            .or_else(|| {
                let key = DsoKey::detect(path, mode)?;
                self.build_ids.get(&key).map(|info| hex(&info.build_id))
            })
            .unwrap_or_default();
        let file = MappedFile {
            start,
            limit: start.saturating_add(length),
            offset,
            path: String::from_utf8_lossy(path).into_owned(),
            build_id,
        };
        if matches!(mode, CpuMode::Kernel) {
            if file.path.starts_with(KERNEL) && self.kernel.is_none() {
                self.kernel = Some(MappedFile {
                    path: KERNEL.into(),
                    ..file
                });
            }
            return;
        }
        let process = self.processes.entry(pid).or_default();
        if executable {
            process.code.push(file.clone());
        }
        process.maps.push(file);
    }

    fn sample(&mut self, attr_index: usize, s: &SampleRecord<'_>) {
        let (pid, tid) = (s.pid.unwrap_or(-1), s.tid.unwrap_or(-1));
        let mut stack = std::mem::take(&mut self.stack);
        stack.clear();
        let user = self.unwinder.as_ref().and_then(|_| user_state(s));
        match &s.callchain {
            Some(chain) if !chain.is_empty() => {
                let mut context = Context::of(s.cpu_mode);
                for i in 0..chain.len() {
                    let Some(address) = chain.get(i) else { break };
                    if address >= CONTEXT_MAX {
                        context = match address {
                            CONTEXT_KERNEL => Context::Kernel,
                            CONTEXT_USER => Context::User,
                            _ => Context::Other,
                        };
                        continue;
                    }
                    // With the user stack to unwind, the user part is the unwinder's.
                    if user.is_some() && context == Context::User {
                        continue;
                    }
                    stack.push(self.location(pid, context, address));
                }
            }
            _ if user.is_none() => {
                if let Some(ip) = s.ip {
                    stack.push(self.location(pid, Context::of(s.cpu_mode), ip));
                }
            }
            _ => {}
        }
        if let (Some(state), Some(unwinder)) = (user, &mut self.unwinder) {
            let mut frames = std::mem::take(&mut self.frames);
            frames.clear();
            let code = self.processes.get(&pid).map_or(&[][..], |p| &p.code[..]);
            unwinder.unwind(pid, code, state, &mut frames);
            if frames.is_empty() {
                frames.push(state.ip);
            }
            for &address in &frames {
                stack.push(self.location(pid, Context::User, address));
            }
            self.frames = frames;
        }
        let process = self.processes.get(&pid);
        let comm = process.map_or("", |p| p.comm.as_str());
        let thread = self.thread_names.get(&tid).map_or(comm, String::as_str);
        let (pid_text, tid_text) = (pid.to_string(), tid.to_string());
        let cpu = s.cpu.map(|c| c.to_string());
        let mut labels = vec![
            ("pid", pid_text.as_str()),
            ("tid", tid_text.as_str()),
            ("comm", comm),
            ("thread_name", thread),
        ];
        if let Some(cpu) = &cpu {
            labels.push(("cpu", cpu));
        }
        let mut numbers = Vec::new();
        if let Some(t) = s.timestamp {
            let first = *self.counts.first_time.get_or_insert(t);
            self.counts.last_time = Some(t);
            let offset = t.saturating_sub(first) / self.slice_nanos * self.slice_nanos;
            numbers.push((
                TIME_LABEL,
                i64::try_from(offset).unwrap_or(i64::MAX),
                "nanoseconds",
            ));
        }
        let set = self.builder.label_set(&labels, &numbers);
        let values = self.columns.values(attr_index, s.period);
        self.builder.add(stack.clone(), set, &values);
        self.stack = stack;
        self.counts.samples += 1;
    }

    /// The location of `address`, a frame of process `pid` in `context`.
    fn location(&mut self, pid: i32, context: Context, address: u64) -> u32 {
        match context {
            Context::Kernel => {
                let file = self.kernel.get_or_insert_with(|| MappedFile {
                    start: 0,
                    limit: u64::MAX,
                    offset: 0,
                    path: KERNEL.into(),
                    build_id: self
                        .build_ids
                        .get(&DsoKey::Kernel)
                        .map(|i| hex(&i.build_id))
                        .unwrap_or_default(),
                });
                let mapping = self.builder.mapping(file);
                let kallsyms = self.kallsyms;
                self.builder.location(Some(mapping), address, || {
                    kallsyms.and_then(|k| k.find(address)).map(str::to_string)
                })
            }
            Context::User => {
                let file = self.processes.get(&pid).and_then(|p| {
                    p.maps
                        .iter()
                        .rev()
                        .find(|m| m.start <= address && address < m.limit)
                });
                let mapping = file.cloned().map(|f| self.builder.mapping(&f));
                self.builder.location(mapping, address, || None)
            }
            Context::Other => self.builder.location(None, address, || None),
        }
    }
}

/// The user registers and stack of a `--call-graph dwarf` sample (x86_64's `ip`,
/// `sp`, `bp`), when it has them.
fn user_state<'s>(s: &'s SampleRecord<'_>) -> Option<UserState<'s>> {
    let regs = s.user_regs.as_ref()?;
    let (stack, size) = s.user_stack.as_ref()?;
    let RawData::Single(bytes) = stack else {
        return None;
    };
    let size = usize::try_from(*size).ok()?.min(bytes.len());
    Some(UserState {
        ip: regs.get(PERF_REG_X86_IP)?,
        sp: regs.get(PERF_REG_X86_SP)?,
        bp: regs.get(PERF_REG_X86_BP).unwrap_or(0),
        stack: bytes.get(..size)?,
    })
}
