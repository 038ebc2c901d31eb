//! Symbolization of captured addresses: native code through `/proc/PID/maps` and the
//! binaries' ELF symbols and DWARF ([`elf`]), the kernel through `/proc/kallsyms`
//! ([`kallsyms`]), and code compiled at run time through the process's perf map
//! ([`perfmap`]). Results are cached per binary (so a binary used by many processes is
//! read once) and per perf map; process maps are read again every interval, so an
//! `exec` or a new `dlopen` is seen.

pub mod elf;
pub mod kallsyms;
pub mod perfmap;
pub mod procmaps;

use std::collections::{HashMap, HashSet, VecDeque};
use std::path::PathBuf;
use std::sync::{Arc, Condvar, Mutex, PoisonError, mpsc};
use std::time::{Duration, Instant};

use capture_ebpf::StackCount;
use elf::{ElfSymbols, SymFrame};
use kallsyms::Kallsyms;
use perfmap::PerfMap;
use procmaps::{MapEntry, ProcMaps};

/// The binary an address lies in, as pprof's mapping describes it.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct MappingInfo {
    /// Path of the file (a pseudo name such as `[anon]` or `[vdso]` when not a file).
    pub path: String,
    /// GNU build id in hexadecimal, empty when unknown.
    pub build_id: String,
    /// First address of the mapping.
    pub start: u64,
    /// One past its last address.
    pub end: u64,
    /// File offset of `start`.
    pub offset: u64,
    /// The process, for mappings that only make sense in it (anonymous memory).
    pub pid: Option<u32>,
}

impl MappingInfo {
    /// `libc.so.6`: the file name without its directory.
    pub fn base_name(&self) -> &str {
        self.path.rsplit('/').next().unwrap_or(&self.path)
    }
}

/// What is known of one user-space address.
#[derive(Debug, Clone)]
pub struct UserLocation {
    /// The mapping it lies in, when the process's maps could be read.
    pub mapping: Option<Arc<MappingInfo>>,
    /// Its frames, innermost first; empty when nothing names it.
    pub frames: Arc<[SymFrame]>,
}

/// Counts of what could not be named, for the status line.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct SymbolStats {
    /// Addresses looked up.
    pub lookups: u64,
    /// Addresses that stayed `binary+0xOFFSET`.
    pub unsymbolized: u64,
    /// Binaries that could not be opened.
    pub unreadable_binaries: u64,
}

/// A binary by (path, inode).
type BinaryKey = (String, u64);

/// A binary's symbols (`None` when unreadable) and when they were last asked for.
struct CachedBinary {
    symbols: Option<Arc<ElfSymbols>>,
    used: Instant,
}

/// Binaries waiting to be opened by the background thread.
#[derive(Default)]
struct PreloadQueue {
    todo: VecDeque<(BinaryKey, Vec<PathBuf>)>,
    /// Set when the symbolizer is dropped: the thread ends.
    closed: bool,
}

/// The queue and the condition the thread waits on.
type SharedQueue = Arc<(Mutex<PreloadQueue>, Condvar)>;

/// Opens binaries on a background thread, so that those of processes started while an
/// interval runs are ready when the interval ends.
struct Preloader {
    queue: SharedQueue,
    results: mpsc::Receiver<(BinaryKey, Option<ElfSymbols>)>,
    /// Queued or being opened, not yet received.
    pending: HashSet<BinaryKey>,
}

impl Preloader {
    /// Starts the thread; `None` when it cannot be started (binaries are then opened
    /// when first needed).
    fn start() -> Option<Self> {
        let queue = SharedQueue::default();
        let (done, results) = mpsc::channel();
        let shared = queue.clone();
        std::thread::Builder::new()
            .name(crate::threads::SYMBOLS.into())
            .spawn(move || {
                while let Some((key, candidates)) = next_request(&shared) {
                    if done.send((key, open_binary(&candidates))).is_err() {
                        break;
                    }
                }
            })
            .ok()?;
        Some(Self {
            queue,
            results,
            pending: HashSet::new(),
        })
    }

    /// Queues the opening of binary `key`.
    fn request(&mut self, key: BinaryKey, candidates: Vec<PathBuf>) {
        let (lock, ready) = &*self.queue;
        lock.lock()
            .unwrap_or_else(PoisonError::into_inner)
            .todo
            .push_back((key.clone(), candidates));
        ready.notify_one();
        self.pending.insert(key);
    }

    /// Takes binary `key` back from the queue when the thread has not started on it
    /// (the caller opens it at once); false when it is being opened or done.
    fn take_back(&mut self, key: &BinaryKey) -> bool {
        let mut queue = self.queue.0.lock().unwrap_or_else(PoisonError::into_inner);
        let Some(i) = queue.todo.iter().position(|(k, _)| k == key) else {
            return false;
        };
        queue.todo.remove(i);
        self.pending.remove(key);
        true
    }
}

impl Drop for Preloader {
    fn drop(&mut self) {
        let (lock, ready) = &*self.queue;
        lock.lock().unwrap_or_else(PoisonError::into_inner).closed = true;
        ready.notify_one();
    }
}

/// The next binary to open, waiting for one; `None` once the queue is closed.
fn next_request(queue: &SharedQueue) -> Option<(BinaryKey, Vec<PathBuf>)> {
    let (lock, ready) = &**queue;
    let mut q = lock.lock().unwrap_or_else(PoisonError::into_inner);
    loop {
        if q.closed {
            return None;
        }
        if let Some(request) = q.todo.pop_front() {
            return Some(request);
        }
        q = ready.wait(q).unwrap_or_else(PoisonError::into_inner);
    }
}

/// The first of `candidates` that opens as an ELF binary.
fn open_binary(candidates: &[PathBuf]) -> Option<ElfSymbols> {
    candidates.iter().find_map(|c| ElfSymbols::open(c).ok())
}

/// Where the file behind mapping `e` of process `pid` is opened: through the
/// process's root (its mount namespace), else through `map_files` (which works even
/// for a deleted file), else by its path.
fn binary_candidates(pid: u32, e: &MapEntry) -> Vec<PathBuf> {
    let path = e.path.strip_suffix(" (deleted)").unwrap_or(&e.path);
    vec![
        PathBuf::from(format!("/proc/{pid}/root{path}")),
        PathBuf::from(format!("/proc/{pid}/map_files/{:x}-{:x}", e.start, e.end)),
        PathBuf::from(path),
    ]
}

/// Names addresses of running processes and of the kernel, with caches that survive
/// from one interval to the next.
#[derive(Default)]
pub struct Symbolizer {
    /// Maps of each process, read at most once per interval.
    maps: HashMap<u32, Option<Arc<ProcMaps>>>,
    /// Maps read while processes ran (see [`Symbolizer::snapshot`]), for those that exit
    /// before their samples are symbolized; with the interval they were read in.
    snapshots: HashMap<u32, (Arc<ProcMaps>, u64)>,
    /// Intervals begun so far.
    interval: u64,
    /// Binaries by (path, inode), dropped after [`BINARY_IDLE`] unused.
    binaries: HashMap<BinaryKey, CachedBinary>,
    /// The thread that opens binaries of new processes ahead of need (started when
    /// first asked to).
    preloader: Option<Preloader>,
    /// Stacks sampled in this interval whose frames wait for a binary being opened
    /// (see [`Symbolizer::preload_sampled`]), with their process's maps.
    warm_later: Vec<(Arc<ProcMaps>, Vec<u64>)>,
    /// Whether [`Symbolizer::snapshot_new_processes`] has run (its first call sees
    /// every process as new).
    snapshotted: bool,
    /// The processes found by the last [`Symbolizer::snapshot_new_processes`], but for
    /// those caught in the middle of `exec` (the next call sees them as new).
    present: HashSet<u32>,
    /// Frames by (binary, file offset, return address).
    frames: HashMap<(String, u64, u64, bool), Arc<[SymFrame]>>,
    /// Mappings handed out in this interval, so equal ones are shared.
    mappings: HashMap<MappingInfo, Arc<MappingInfo>>,
    /// Perf maps by process (each with its size when read), and the interval in which
    /// the file was last looked at.
    perf_maps: HashMap<u32, (Option<PerfMap>, u64)>,
    kallsyms: Option<Kallsyms>,
    /// Binaries' code is left as addresses (their build ids still read), for the
    /// profile's reader to symbolize.
    pub addresses_only: bool,
    /// What could not be named so far.
    pub stats: SymbolStats,
}

impl std::fmt::Debug for Symbolizer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Symbolizer")
            .field("processes", &self.maps.len())
            .field("binaries", &self.binaries.len())
            .field("cached_frames", &self.frames.len())
            .field("stats", &self.stats)
            .finish_non_exhaustive()
    }
}

/// Frames cached before the cache is emptied, so memory stays bounded.
const MAX_CACHED_FRAMES: usize = 1 << 20;

/// A binary no address was looked up in for this long is closed (with its frames).
const BINARY_IDLE: Duration = Duration::from_secs(600);

impl Symbolizer {
    /// A symbolizer with empty caches.
    pub fn new() -> Self {
        Self::default()
    }

    /// Starts a new interval: process maps and perf maps are looked at again (a
    /// process may have exec'd, loaded a library or compiled code); binaries stay
    /// cached until unused for [`BINARY_IDLE`]. Processes not in `alive` are forgotten.
    pub fn begin_interval(&mut self, alive: impl Fn(u32) -> bool) {
        self.begin_interval_at(Instant::now(), alive);
    }

    /// [`Self::begin_interval`] at time `now`.
    fn begin_interval_at(&mut self, now: Instant, alive: impl Fn(u32) -> bool) {
        self.maps.clear();
        self.mappings.clear();
        self.warm_later.clear();
        // Snapshots serve the interval they were taken in and the next one.
        let current = self.interval;
        self.snapshots.retain(|_, (_, taken)| *taken + 1 >= current);
        self.interval += 1;
        self.perf_maps.retain(|&pid, _| alive(pid));
        self.receive_preloaded(None);
        let before = self.binaries.len();
        self.binaries
            .retain(|_, b| now.saturating_duration_since(b.used) < BINARY_IDLE);
        if self.binaries.len() < before {
            let binaries = &self.binaries;
            self.frames
                .retain(|(path, inode, _, _), _| binaries.contains_key(&(path.clone(), *inode)));
        }
        if self.frames.len() > MAX_CACHED_FRAMES {
            self.frames.clear();
        }
    }

    /// Binaries open (readable or not), for tests of the cache's bounds.
    pub fn cached_binaries(&self) -> usize {
        self.binaries.len()
    }

    /// The mappings of process `pid`: read now, or as snapshotted while it ran.
    pub fn process_maps(&mut self, pid: u32) -> Option<Arc<ProcMaps>> {
        let snapshots = &self.snapshots;
        self.maps
            .entry(pid)
            .or_insert_with(|| {
                ProcMaps::read(pid)
                    .ok()
                    .filter(|m| !m.entries.is_empty())
                    .map(Arc::new)
                    .or_else(|| snapshots.get(&pid).map(|(m, _)| m.clone()))
            })
            .clone()
    }

    /// Reads the maps of processes started since the last call, so that a
    /// short-lived process (a command that runs for less than an interval) can still be
    /// symbolized after it exits, and opens the binaries they map on a background
    /// thread, so that the interval's end finds them ready. The first call sees every
    /// process as new and opens none (their binaries are opened when their addresses
    /// are first looked up). A process caught in the middle of its `exec`, its program
    /// not mapped yet, is left to the next call, which sees it as new. Meant to be
    /// called a few times a second while the interval runs; returns the pids whose
    /// maps were kept.
    pub fn snapshot_new_processes(&mut self) -> Vec<u32> {
        let Ok(dir) = std::fs::read_dir("/proc") else {
            return Vec::new();
        };
        let first = !std::mem::replace(&mut self.snapshotted, true);
        let previous = std::mem::take(&mut self.present);
        let mut new = Vec::new();
        for entry in dir.flatten() {
            let Some(pid) = entry
                .file_name()
                .to_str()
                .and_then(|n| n.parse::<u32>().ok())
            else {
                continue;
            };
            // Only a process that was not there at the last call has started since (a
            // snapshot that expired is taken again, but its binaries are not opened).
            // Pids are reused: one absent from the last call is a new process even if
            // an earlier process with that pid left a snapshot.
            let started = !first && !previous.contains(&pid);
            if self.snapshots.contains_key(&pid) && !started {
                self.present.insert(pid);
                continue;
            }
            let Ok(maps) = ProcMaps::read(pid) else {
                self.present.insert(pid);
                continue;
            };
            if exec_unfinished(&maps) {
                continue;
            }
            self.present.insert(pid);
            let maps = Arc::new(maps);
            if started {
                self.preload(pid, &maps);
            }
            self.snapshots.insert(pid, (maps, self.interval));
            new.push(pid);
        }
        new
    }

    /// Opens the binaries of process `pid` on the background thread: the recorder's
    /// own, when it samples every process (its symbolization work is in the next
    /// interval's samples).
    pub fn preload_process(&mut self, pid: u32) {
        if let Ok(maps) = ProcMaps::read(pid) {
            self.preload(pid, &maps);
        }
    }

    /// Asks the background thread to open the executable files `maps` has that are
    /// not open yet.
    fn preload(&mut self, pid: u32, maps: &ProcMaps) {
        let entries = maps.entries.iter().filter(|e| e.executable && e.is_file());
        let todo = self.not_open(pid, entries);
        self.request(todo);
    }

    /// Opens on the background thread the binaries that the user stacks sampled so far
    /// in this interval lie in and that are neither open nor queued, so that the
    /// interval's end finds them ready even for a process that was running before the
    /// interval began (which [`Symbolizer::snapshot_new_processes`] does not preload),
    /// and looks up the frames of their addresses in the binaries already open (those
    /// still being opened, at the next call), so that the end finds them cached.
    /// A process's maps are read when it is first seen in the interval, and again when
    /// an address lies in none of its mappings (a library loaded since), and kept as its
    /// snapshot, so it is symbolized after it exits. Meant to be called every second or
    /// so with the stacks drained since the last call (of which only the process and
    /// the user stack matter); returns the pids whose maps were read for the first time
    /// in this interval (the caller may note their labels).
    pub fn preload_sampled(&mut self, stacks: &[StackCount]) -> Vec<u32> {
        let mut by_pid: HashMap<u32, Vec<&[u64]>> = HashMap::new();
        for s in stacks.iter().filter(|s| !s.user.is_empty()) {
            by_pid.entry(s.pid).or_default().push(&s.user);
        }
        let mut first_seen = Vec::new();
        let mut todo = Vec::new();
        let mut to_warm = std::mem::take(&mut self.warm_later);
        for (pid, stacks) in by_pid {
            let addresses: Vec<u64> = stacks.iter().flat_map(|s| s.iter().copied()).collect();
            let current = self
                .snapshots
                .get(&pid)
                .filter(|(m, taken)| {
                    *taken == self.interval && addresses.iter().all(|&a| m.find(a).is_some())
                })
                .map(|(m, _)| m.clone());
            let maps = match current {
                Some(maps) => maps,
                None => {
                    let Ok(maps) = ProcMaps::read(pid) else {
                        continue;
                    };
                    let maps = Arc::new(maps);
                    let previous = self.snapshots.insert(pid, (maps.clone(), self.interval));
                    if previous.is_none_or(|(_, taken)| taken != self.interval) {
                        first_seen.push(pid);
                    }
                    maps
                }
            };
            let entries = binaries_of(&maps, &addresses);
            todo.extend(self.not_open(pid, entries));
            to_warm.extend(stacks.iter().map(|s| (maps.clone(), s.to_vec())));
        }
        self.request(todo);
        self.receive_preloaded(None);
        for (maps, stack) in to_warm {
            if !self.warm_frames(&maps, &stack) {
                self.warm_later.push((maps, stack));
            }
        }
        first_seen.sort_unstable();
        first_seen
    }

    /// Looks up and caches the frames of `stack` (leaf first) in the binaries open;
    /// false when one it needs is still being opened (tried again later). The leaf is
    /// looked up as a leaf: in a sample taken in the kernel it is a return address and
    /// looked up again at the end, cheaply (its unit's DWARF is parsed by then).
    fn warm_frames(&mut self, maps: &ProcMaps, stack: &[u64]) -> bool {
        let mut complete = true;
        for (i, &addr) in stack.iter().enumerate() {
            let Some(e) = maps.find(addr).filter(|e| e.is_file()) else {
                continue;
            };
            let binary = (e.path.clone(), e.inode);
            let symbols = match self.binaries.get(&binary) {
                Some(b) => b.symbols.clone(),
                None => {
                    complete &= !self
                        .preloader
                        .as_ref()
                        .is_some_and(|p| p.pending.contains(&binary));
                    continue;
                }
            };
            if let Some(symbols) = symbols {
                self.cached_frames(e, &symbols, addr, i > 0);
            }
        }
        complete
    }

    /// The binaries behind `entries` (mappings of process `pid`) that are neither open
    /// nor queued, each once, with where to open them.
    fn not_open<'a>(
        &mut self,
        pid: u32,
        entries: impl Iterator<Item = &'a MapEntry>,
    ) -> Vec<(BinaryKey, Vec<PathBuf>)> {
        self.receive_preloaded(None);
        let pending = self.preloader.as_ref().map(|p| &p.pending);
        let mut todo: Vec<(BinaryKey, Vec<PathBuf>)> = Vec::new();
        for e in entries {
            let key = (e.path.clone(), e.inode);
            if self.binaries.contains_key(&key)
                || pending.is_some_and(|p| p.contains(&key))
                || todo.iter().any(|(k, _)| *k == key)
            {
                continue;
            }
            todo.push((key, binary_candidates(pid, e)));
        }
        todo
    }

    /// Queues `todo` for the background thread (started when first needed).
    fn request(&mut self, todo: Vec<(BinaryKey, Vec<PathBuf>)>) {
        if todo.is_empty() {
            return;
        }
        if self.preloader.is_none() {
            self.preloader = Preloader::start();
        }
        let Some(preloader) = &mut self.preloader else {
            return;
        };
        for (key, candidates) in todo {
            if !preloader.pending.contains(&key) {
                preloader.request(key, candidates);
            }
        }
    }

    /// Takes in the binaries the background thread has opened; when it is opening
    /// `wanted`, waits for it, and when `wanted` is still queued, takes it back (the
    /// caller opens it).
    fn receive_preloaded(&mut self, wanted: Option<&BinaryKey>) {
        let Some(preloader) = &mut self.preloader else {
            return;
        };
        let mut wait =
            wanted.is_some_and(|k| preloader.pending.contains(k) && !preloader.take_back(k));
        loop {
            let received = if wait {
                preloader.results.recv().ok()
            } else {
                preloader.results.try_recv().ok()
            };
            let Some((key, symbols)) = received else {
                break;
            };
            wait = wait && Some(&key) != wanted;
            preloader.pending.remove(&key);
            if symbols.is_none() {
                self.stats.unreadable_binaries += 1;
            }
            self.binaries.insert(
                key,
                CachedBinary {
                    symbols: symbols.map(Arc::new),
                    used: Instant::now(),
                },
            );
        }
    }

    /// Names user-space address `addr` of process `pid`. `return_address` is true for
    /// every frame but the leaf (the address after a call).
    pub fn user(&mut self, pid: u32, addr: u64, return_address: bool) -> UserLocation {
        self.stats.lookups += 1;
        let maps = self.process_maps(pid);
        let entry = maps.as_ref().and_then(|m| m.find(addr)).cloned();
        let mut location = match &entry {
            Some(e) if e.is_file() => self.file_location(pid, e, addr, return_address),
            Some(e) => UserLocation {
                mapping: Some(self.mapping(e, String::new(), Some(pid))),
                frames: Arc::from(Vec::new()),
            },
            None => UserLocation {
                mapping: None,
                frames: Arc::from(Vec::new()),
            },
        };
        if location.frames.is_empty() && entry.as_ref().is_none_or(|e| !e.is_file()) {
            // Code compiled at run time lives in anonymous memory: ask the perf map.
            if let Some(name) = self.perf_map(pid).and_then(|m| m.find(addr)) {
                location.frames = Arc::from(vec![SymFrame {
                    function: name.to_string(),
                    file: String::new(),
                    line: 0,
                }]);
            }
        }
        if location.frames.is_empty() {
            self.stats.unsymbolized += 1;
        }
        location
    }

    /// Names kernel address `addr`; `None` when the kernel's symbols are hidden.
    pub fn kernel(&mut self, addr: u64, return_address: bool) -> Option<String> {
        self.stats.lookups += 1;
        let k = self
            .kallsyms
            .get_or_insert_with(|| Kallsyms::read().unwrap_or_default());
        let probe = if return_address {
            addr.saturating_sub(1)
        } else {
            addr
        };
        let name = k.find(probe).map(str::to_string);
        if name.is_none() {
            self.stats.unsymbolized += 1;
        }
        name
    }

    fn file_location(
        &mut self,
        pid: u32,
        e: &MapEntry,
        addr: u64,
        return_address: bool,
    ) -> UserLocation {
        let binary = self.binary(pid, e);
        let build_id = binary
            .as_ref()
            .map(|b| b.build_id.clone())
            .unwrap_or_default();
        let mapping = self.mapping(e, build_id, None);
        let frames = match binary {
            Some(b) if !self.addresses_only => self.cached_frames(e, &b, addr, return_address),
            _ => Arc::from(Vec::new()),
        };
        UserLocation {
            mapping: Some(mapping),
            frames,
        }
    }

    /// The frames of `addr` in mapping `e` of binary `b`, from the cache or looked up.
    fn cached_frames(
        &mut self,
        e: &MapEntry,
        b: &ElfSymbols,
        addr: u64,
        return_address: bool,
    ) -> Arc<[SymFrame]> {
        let offset = e.file_offset(addr);
        let key = (e.path.clone(), e.inode, offset, return_address);
        if let Some(f) = self.frames.get(&key) {
            return f.clone();
        }
        let f: Arc<[SymFrame]> = Arc::from(b.frames(offset, return_address));
        self.frames.insert(key, f.clone());
        f
    }

    /// The symbols of the file behind mapping `e` of process `pid` (see
    /// [`binary_candidates`]), opened now or by the background thread.
    fn binary(&mut self, pid: u32, e: &MapEntry) -> Option<Arc<ElfSymbols>> {
        let key = (e.path.clone(), e.inode);
        if !self.binaries.contains_key(&key) {
            self.receive_preloaded(Some(&key));
        }
        let now = Instant::now();
        if let Some(b) = self.binaries.get_mut(&key) {
            b.used = now;
            return b.symbols.clone();
        }
        let opened = open_binary(&binary_candidates(pid, e)).map(Arc::new);
        if opened.is_none() {
            self.stats.unreadable_binaries += 1;
        }
        self.binaries.insert(
            key,
            CachedBinary {
                symbols: opened.clone(),
                used: now,
            },
        );
        opened
    }

    fn mapping(&mut self, e: &MapEntry, build_id: String, pid: Option<u32>) -> Arc<MappingInfo> {
        let path = if e.path.is_empty() {
            "[anon]".to_string()
        } else {
            e.path.clone()
        };
        let info = MappingInfo {
            path,
            build_id,
            start: e.start,
            end: e.end,
            offset: e.offset,
            pid,
        };
        self.mappings
            .entry(info.clone())
            .or_insert_with(|| Arc::new(info))
            .clone()
    }

    /// The perf map of process `pid`, looked at once per interval and read again
    /// when the file has grown.
    fn perf_map(&mut self, pid: u32) -> Option<&PerfMap> {
        let interval = self.interval;
        if self
            .perf_maps
            .get(&pid)
            .is_none_or(|(_, seen)| *seen != interval)
        {
            let path = perf_map_path(pid);
            let size = std::fs::metadata(&path).map(|m| m.len()).ok();
            let map = match (self.perf_maps.remove(&pid), size) {
                (_, None) => None,
                (Some((Some(m), _)), Some(size)) if m.size_bytes == size => Some(m),
                _ => std::fs::read(&path)
                    .ok()
                    .map(|bytes| PerfMap::parse(&String::from_utf8_lossy(&bytes))),
            };
            self.perf_maps.insert(pid, (map, interval));
        }
        self.perf_maps.get(&pid).and_then(|(m, _)| m.as_ref())
    }
}

/// Whether `maps` are those of a process in the middle of `exec`: the new address space
/// exists (its stack, `[vsyscall]`) but no program code is mapped yet (the kernel maps the
/// program's segments a moment later; `Command::spawn` and `vfork` return before). A
/// kernel thread, which has no maps at all, is not.
fn exec_unfinished(maps: &ProcMaps) -> bool {
    !maps.entries.is_empty() && !maps.entries.iter().any(|e| e.executable && e.is_file())
}

/// The file-backed executable mappings of `maps` that `addresses` lie in, each once, in
/// the order first met (addresses in anonymous memory, pseudo mappings or no mapping
/// need no binary).
fn binaries_of<'m>(maps: &'m ProcMaps, addresses: &[u64]) -> impl Iterator<Item = &'m MapEntry> {
    let mut seen: Vec<&MapEntry> = Vec::new();
    for &a in addresses {
        if let Some(e) = maps.find(a)
            && e.executable
            && e.is_file()
            && !seen.iter().any(|s| std::ptr::eq(*s, e))
        {
            seen.push(e);
        }
    }
    seen.into_iter()
}

/// `/proc/PID/root/tmp/perf-NSPID.map`: the perf map as the process wrote it, in its
/// own mount namespace and named with its own pid (they differ inside containers).
pub fn perf_map_path(pid: u32) -> PathBuf {
    let ns_pid = std::fs::read_to_string(format!("/proc/{pid}/status"))
        .ok()
        .and_then(|s| {
            s.lines()
                .find_map(|l| l.strip_prefix("NSpid:"))
                .and_then(|v| v.split_whitespace().last().map(str::to_string))
        })
        .unwrap_or_else(|| pid.to_string());
    PathBuf::from(format!("/proc/{pid}/root/tmp/perf-{ns_pid}.map"))
}

#[cfg(test)]
mod tests {
    use std::process::{Child, Command};
    use std::time::{Duration, Instant};

    use super::{BinaryKey, MapEntry, ProcMaps, Symbolizer};

    /// Starts `sleep SECONDS`. `spawn` returns once `exec` has replaced the child's
    /// address space, often before `sleep` is mapped into it.
    fn start_sleep(seconds: &str) -> Child {
        Command::new("sleep").arg(seconds).spawn().unwrap()
    }

    /// Starts `sleep SECONDS` from a copy of its own (named `sleep`, its own path and
    /// inode), so that the `sleep`s other tests start meanwhile are other binaries.
    fn start_own_sleep(tag: &str, seconds: &str) -> Child {
        let dir = std::env::temp_dir().join(format!("flint-sleep-{tag}-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let copy = dir.join("sleep");
        let system = ["/usr/bin/sleep", "/bin/sleep"]
            .into_iter()
            .find(|p| std::path::Path::new(p).exists())
            .unwrap();
        std::fs::copy(system, &copy).unwrap();
        // A child another test's thread forked while the copy was open for writing may
        // hold it open for a moment.
        let waiting = Instant::now();
        loop {
            match Command::new(&copy).arg(seconds).spawn() {
                Err(e) if e.kind() == std::io::ErrorKind::ExecutableFileBusy => {
                    assert!(waiting.elapsed() < Duration::from_secs(10), "{e}");
                    std::thread::sleep(Duration::from_millis(10));
                }
                spawned => return spawned.unwrap(),
            }
        }
    }

    /// A symbolizer that has scanned `/proc` once, and a `sleep` started after the scan.
    fn scanned_then_started() -> (Symbolizer, Child) {
        let mut s = Symbolizer::new();
        s.snapshot_new_processes();
        (s, start_sleep("30"))
    }

    /// The mapping of `sleep`'s code in `maps`.
    fn sleep_code(maps: &ProcMaps) -> Option<&MapEntry> {
        maps.entries
            .iter()
            .find(|e| e.executable && e.base_name() == "sleep")
    }

    /// Waits until `child` (a `sleep`) has its code mapped, and returns that mapping.
    fn exec_done(child: &Child) -> MapEntry {
        let waiting = Instant::now();
        loop {
            let maps = ProcMaps::read(child.id()).unwrap();
            if let Some(code) = sleep_code(&maps) {
                return code.clone();
            }
            assert!(
                waiting.elapsed() < Duration::from_secs(30),
                "exec never done"
            );
            std::thread::sleep(Duration::from_millis(1));
        }
    }

    /// Waits until the background thread has opened binary `key`, taking in what it
    /// opened as a lookup or a peek would (never opening anything itself), and checks
    /// that it could be read.
    fn wait_until_preloaded(s: &mut Symbolizer, key: &BinaryKey) {
        let waiting = Instant::now();
        while s
            .preloader
            .as_ref()
            .expect("nothing queued")
            .pending
            .contains(key)
        {
            assert!(waiting.elapsed() < Duration::from_secs(30), "never opened");
            std::thread::sleep(Duration::from_millis(10));
            s.receive_preloaded(None);
        }
        assert!(
            s.binaries.get(key).is_some_and(|b| b.symbols.is_some()),
            "opened in the background, without a lookup"
        );
    }

    fn kill(mut child: Child) {
        let _ = child.kill();
        let _ = child.wait();
    }

    #[inline(never)]
    fn symbolized_by_the_symbolizer(x: u64) -> u64 {
        std::hint::black_box(x ^ 0x5a5a)
    }

    #[test]
    fn names_code_of_this_process_and_caches_it() {
        let mut s = Symbolizer::new();
        let pid = std::process::id();
        let addr = symbolized_by_the_symbolizer as *const () as u64;
        assert_eq!(symbolized_by_the_symbolizer(0), 0x5a5a);
        let loc = s.user(pid, addr, false);
        let mapping = loc.mapping.unwrap();
        assert!(mapping.start <= addr && addr < mapping.end);
        assert!(
            loc.frames
                .iter()
                .any(|f| f.function.ends_with("symbolized_by_the_symbolizer")),
            "{:?}",
            loc.frames
        );
        let again = s.user(pid, addr, false);
        assert!(std::sync::Arc::ptr_eq(&loc.frames, &again.frames), "cached");
        assert_eq!(s.stats.unsymbolized, 0);
        // An address in no mapping stays unnamed and is counted.
        let none = s.user(pid, 8, false);
        assert!(none.mapping.is_none() && none.frames.is_empty());
        assert_eq!(s.stats.unsymbolized, 1);
    }

    #[test]
    fn a_process_that_exited_is_symbolized_from_its_snapshot() {
        let child = start_sleep("30");
        let pid = child.id();
        exec_done(&child);
        let mut s = Symbolizer::new();
        assert!(s.snapshot_new_processes().contains(&pid));
        kill(child);
        s.begin_interval(|_| false);
        let maps = s.process_maps(pid).expect("the snapshot");
        assert!(
            maps.entries.iter().any(|e| e.base_name() == "sleep"),
            "{:?}",
            maps.main_binary()
        );
        // Two intervals later the snapshot is gone.
        s.begin_interval(|_| false);
        s.begin_interval(|_| false);
        assert!(s.process_maps(pid).is_none());
    }

    /// Also the regression test of a scan that caught the child in the middle of its
    /// `exec` (right after `spawn`, often; with the machine busy, the program mapped only
    /// after the scan): its snapshot had no code and nothing was opened.
    #[test]
    fn binaries_of_new_processes_are_opened_before_their_addresses_are_looked_up() {
        let (mut s, child) = scanned_then_started();
        let pid = child.id();
        // Scanned as the recorder does, many times a second: a scan that finds the
        // child's exec unfinished leaves it to the next.
        let waiting = Instant::now();
        while !s.snapshot_new_processes().contains(&pid) {
            assert!(waiting.elapsed() < Duration::from_secs(30), "never seen");
            std::thread::sleep(Duration::from_millis(10));
        }
        let snapshot = s.snapshots[&pid].0.clone();
        let sleep = sleep_code(&snapshot).expect("a snapshot with the program's code");
        let key = (sleep.path.clone(), sleep.inode);
        wait_until_preloaded(&mut s, &key);
        kill(child);
        assert_eq!(s.stats.lookups, 0);
    }

    /// Pids are reused (32,768 of them by default): a process that takes the pid of one
    /// that left a snapshot and was gone at the last scan is new all the same.
    #[test]
    fn a_new_process_with_the_pid_of_an_earlier_one_is_new() {
        let (mut s, child) = scanned_then_started();
        let pid = child.id();
        let sleep = exec_done(&child);
        // An earlier process with this pid, snapshotted by the first scan, that had
        // exited by the second.
        s.snapshots
            .insert(pid, (std::sync::Arc::new(ProcMaps::default()), 0));
        s.present.remove(&pid);
        assert!(s.snapshot_new_processes().contains(&pid));
        assert!(
            sleep_code(&s.snapshots[&pid].0).is_some(),
            "still the old snapshot"
        );
        wait_until_preloaded(&mut s, &(sleep.path.clone(), sleep.inode));
        kill(child);
    }

    #[test]
    fn a_process_in_the_middle_of_exec_is_left_to_the_next_scan() {
        // The maps of a child right after `spawn` returned (x86-64).
        let execing = ProcMaps::parse(
            "7ffcb2432000-7ffcb2453000 rw-p 00000000 00:00 0 [stack]\n\
             ffffffffff600000-ffffffffff601000 --xp 00000000 00:00 0 [vsyscall]\n",
        );
        assert!(super::exec_unfinished(&execing));
        // Its program's first segment mapped, not yet its code.
        let header = ProcMaps::parse(
            "5555d0a00000-5555d0a02000 r--p 00000000 08:01 11 /usr/bin/sleep\n\
             7ffcb2432000-7ffcb2453000 rw-p 00000000 00:00 0 [stack]\n",
        );
        assert!(super::exec_unfinished(&header));
        let started = ProcMaps::parse(
            "5555d0a00000-5555d0a02000 r--p 00000000 08:01 11 /usr/bin/sleep\n\
             5555d0a02000-5555d0a06000 r-xp 00002000 08:01 11 /usr/bin/sleep\n\
             7ffcb2432000-7ffcb2453000 rw-p 00000000 00:00 0 [stack]\n",
        );
        assert!(!super::exec_unfinished(&started));
        // A kernel thread has no maps: snapshotted once, not read again at every scan.
        assert!(!super::exec_unfinished(&ProcMaps::default()));
    }

    #[test]
    fn processes_whose_snapshot_is_taken_again_are_not_preloaded() {
        let mut s = Symbolizer::new();
        assert!(s.snapshot_new_processes().contains(&std::process::id()));
        for _ in 0..3 {
            s.begin_interval(|_| true);
        }
        // The snapshots expired: taken again, but these processes did not just start.
        assert!(s.snapshot_new_processes().contains(&std::process::id()));
        // Processes that did start meanwhile (other tests' children) may be queued;
        // this test binary is not.
        let maps = ProcMaps::read(std::process::id()).unwrap();
        let exe = maps.main_binary().unwrap();
        let key = (exe.path.clone(), exe.inode);
        assert!(
            s.preloader
                .as_ref()
                .is_none_or(|p| !p.pending.contains(&key)),
            "queued"
        );
        assert!(!s.binaries.contains_key(&key), "opened");
    }

    #[test]
    fn the_binaries_of_sampled_addresses_are_the_file_backed_code_they_lie_in() {
        let maps = ProcMaps::parse(
            "00400000-00500000 r-xp 00000000 08:01 11 /usr/bin/daemon\n\
             00500000-00600000 r--p 00100000 08:01 11 /usr/bin/daemon\n\
             7f0000000000-7f0000100000 r-xp 00000000 08:01 22 /usr/lib/libc.so.6\n\
             7f0000200000-7f0000300000 r-xp 00000000 08:01 33 /usr/lib/libunused.so\n\
             7f0000400000-7f0000500000 rwxp 00000000 00:00 0 \n\
             7ffff7fc0000-7ffff7fc2000 r-xp 00000000 00:00 0 [vdso]\n",
        );
        let addresses = [
            0x7f00_0000_1000, // libc
            0x40_1000,        // the executable
            0x7f00_0000_2000, // libc again: one entry
            0x50_0010,        // the executable's data: not code
            0x7f00_0040_0010, // JIT code in anonymous memory: no binary
            0x7fff_f7fc_0100, // the vDSO: no file
            0x10,             // in no mapping
        ];
        let paths: Vec<&str> = super::binaries_of(&maps, &addresses)
            .map(|e| e.path.as_str())
            .collect();
        assert_eq!(paths, ["/usr/lib/libc.so.6", "/usr/bin/daemon"]);
    }

    /// A process that ran before the interval (its start was not seen) and is first
    /// sampled in it: the binaries of its sampled addresses are opened in the background,
    /// before the interval's end looks them up (before, they were opened at the end).
    #[test]
    fn binaries_of_processes_sampled_so_far_are_opened_before_their_addresses_are_looked_up() {
        // Its own binary: another test's `sleep`, new to the second scan below, would
        // queue the system's `sleep` for opening.
        let child = start_own_sleep("sampled", "30");
        let pid = child.id();
        let sleep = exec_done(&child);
        let mut s = Symbolizer::new();
        // The first scan sees every process as new and opens none; the child is old news
        // for the second.
        assert!(s.snapshot_new_processes().contains(&pid));
        s.begin_interval(|_| true);
        assert!(!s.snapshot_new_processes().contains(&pid));
        let key = (sleep.path.clone(), sleep.inode);
        assert!(
            s.preloader
                .as_ref()
                .is_none_or(|p| !p.pending.contains(&key))
        );
        let stack = super::StackCount {
            pid,
            tid: pid,
            user: vec![sleep.start + 0x10],
            kernel: Vec::new(),
            count: 1,
        };
        // Its maps are read (and kept for after it exits): its labels may be noted too.
        assert_eq!(s.preload_sampled(std::slice::from_ref(&stack)), vec![pid]);
        assert!(
            s.preloader.as_ref().unwrap().pending.contains(&key) || s.binaries.contains_key(&key),
            "not queued"
        );
        // Seen again in the same interval: not first seen, its maps not read again.
        assert_eq!(
            s.preload_sampled(std::slice::from_ref(&stack)),
            Vec::<u32>::new()
        );
        wait_until_preloaded(&mut s, &key);
        // The stack's frames are looked up once the binary is open (by the call that
        // finds it open, at the latest the next one), so the interval's end finds them
        // cached; no address was looked up through `user`.
        let frame = (
            key.0.clone(),
            key.1,
            sleep.file_offset(stack.user[0]),
            false,
        );
        assert_eq!(s.preload_sampled(&[]), Vec::<u32>::new());
        assert!(s.frames.contains_key(&frame), "frames not looked up ahead");
        assert_eq!(s.stats.lookups, 0);
        kill(child);
        // The process exited; its maps as read while it ran still name its addresses.
        s.begin_interval(|_| false);
        assert!(
            s.process_maps(pid)
                .is_some_and(|m| m.find(stack.user[0]).is_some())
        );
        if let Some(dir) = std::path::Path::new(&sleep.path).parent() {
            let _ = std::fs::remove_dir_all(dir);
        }
    }

    #[test]
    fn a_lookup_opens_at_once_a_binary_still_queued() {
        let mut s = Symbolizer::new();
        let pid = std::process::id();
        let maps = s.process_maps(pid).unwrap();
        let addr = symbolized_by_the_symbolizer as *const () as u64;
        let entry = maps.find(addr).unwrap();
        let key = (entry.path.clone(), entry.inode);
        // A queue the thread never takes from: only taking back can open the binary.
        let (_done, results) = super::mpsc::channel();
        let mut preloader = super::Preloader {
            queue: super::SharedQueue::default(),
            results,
            pending: Default::default(),
        };
        preloader.request(key.clone(), Vec::new());
        s.preloader = Some(preloader);
        assert!(!s.user(pid, addr, false).frames.is_empty());
        assert!(s.preloader.as_ref().unwrap().pending.is_empty());
    }

    #[test]
    fn binaries_unused_for_a_while_are_closed_with_their_frames() {
        let mut s = Symbolizer::new();
        let pid = std::process::id();
        let addr = symbolized_by_the_symbolizer as *const () as u64;
        assert!(!s.user(pid, addr, false).frames.is_empty());
        let (binaries, frames) = (s.cached_binaries(), s.frames.len());
        assert!(binaries > 0 && frames > 0);
        let now = std::time::Instant::now();
        s.begin_interval_at(now + super::BINARY_IDLE / 2, |_| true);
        assert_eq!((s.cached_binaries(), s.frames.len()), (binaries, frames));
        s.begin_interval_at(now + super::BINARY_IDLE * 2, |_| true);
        assert_eq!((s.cached_binaries(), s.frames.len()), (0, 0));
        // Looked up again, it is opened again.
        assert!(!s.user(pid, addr, false).frames.is_empty());
    }

    #[test]
    fn names_jit_code_from_the_perf_map() {
        let pid = std::process::id();
        let path = super::perf_map_path(pid);
        let local = std::path::PathBuf::from(format!("/tmp/perf-{pid}.map"));
        assert!(path.ends_with(local.strip_prefix("/").unwrap()));
        std::fs::write(&local, "0x10000 0x100 jitted_function\n").unwrap();
        let mut s = Symbolizer::new();
        let loc = s.user(pid, 0x10010, false);
        assert_eq!(loc.frames[0].function, "jitted_function");
        // The map grows: the new entry is seen from the next interval on (the file is
        // looked at once per interval).
        std::fs::write(
            &local,
            "0x10000 0x100 jitted_function\n0x20000 0x100 compiled_later\n",
        )
        .unwrap();
        assert!(s.user(pid, 0x20010, false).frames.is_empty());
        s.begin_interval(|_| true);
        assert_eq!(
            s.user(pid, 0x20010, false).frames[0].function,
            "compiled_later"
        );
        let _ = std::fs::remove_file(local);
    }
}
