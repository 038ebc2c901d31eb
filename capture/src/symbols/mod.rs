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
            .name("flint-symbols".into())
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
    /// Whether [`Symbolizer::snapshot_new_processes`] has run (its first call sees
    /// every process as new).
    snapshotted: bool,
    /// The processes found by the last [`Symbolizer::snapshot_new_processes`].
    present: HashSet<u32>,
    /// Frames by (binary, file offset, return address).
    frames: HashMap<(String, u64, u64, bool), Arc<[SymFrame]>>,
    /// Mappings handed out in this interval, so equal ones are shared.
    mappings: HashMap<MappingInfo, Arc<MappingInfo>>,
    /// Perf maps by process (each with its size when read), and the interval in which
    /// the file was last looked at.
    perf_maps: HashMap<u32, (Option<PerfMap>, u64)>,
    kallsyms: Option<Kallsyms>,
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
    /// are first looked up). Meant to be called a few times a second while the
    /// interval runs; returns the pids that were new.
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
            self.present.insert(pid);
            if self.snapshots.contains_key(&pid) {
                continue;
            }
            if let Ok(maps) = ProcMaps::read(pid) {
                let maps = Arc::new(maps);
                // A snapshot that expired is taken again: only a process that was not
                // there at the last call has started since.
                if !first && !previous.contains(&pid) {
                    self.preload(pid, &maps);
                }
                self.snapshots.insert(pid, (maps, self.interval));
                new.push(pid);
            }
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
        self.receive_preloaded(None);
        if self.preloader.is_none() {
            self.preloader = Preloader::start();
        }
        let Some(preloader) = &mut self.preloader else {
            return;
        };
        for e in maps.entries.iter().filter(|e| e.executable && e.is_file()) {
            let key = (e.path.clone(), e.inode);
            if self.binaries.contains_key(&key) || preloader.pending.contains(&key) {
                continue;
            }
            preloader.request(key, binary_candidates(pid, e));
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
        let offset = e.file_offset(addr);
        let key = (e.path.clone(), e.inode, offset, return_address);
        let frames = match (self.frames.get(&key), binary) {
            (Some(f), _) => f.clone(),
            (None, Some(b)) => {
                let f: Arc<[SymFrame]> = Arc::from(b.frames(offset, return_address));
                self.frames.insert(key, f.clone());
                f
            }
            (None, None) => Arc::from(Vec::new()),
        };
        UserLocation {
            mapping: Some(mapping),
            frames,
        }
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
    use super::Symbolizer;

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
        let mut child = std::process::Command::new("sleep")
            .arg("0.3")
            .spawn()
            .unwrap();
        let pid = child.id();
        let mut s = Symbolizer::new();
        assert!(s.snapshot_new_processes().contains(&pid));
        child.wait().unwrap();
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

    #[test]
    fn binaries_of_new_processes_are_opened_before_their_addresses_are_looked_up() {
        let mut s = Symbolizer::new();
        s.snapshot_new_processes();
        let mut child = std::process::Command::new("sleep")
            .arg("5")
            .spawn()
            .unwrap();
        let pid = child.id();
        assert!(s.snapshot_new_processes().contains(&pid));
        let maps = s.process_maps(pid).unwrap();
        let sleep = maps
            .entries
            .iter()
            .find(|e| e.executable && e.base_name() == "sleep")
            .unwrap();
        let key = (sleep.path.clone(), sleep.inode);
        let waiting = std::time::Instant::now();
        while s.preloader.as_ref().unwrap().pending.contains(&key) {
            assert!(waiting.elapsed().as_secs() < 30, "never opened");
            std::thread::sleep(std::time::Duration::from_millis(10));
            s.receive_preloaded(None);
        }
        let _ = child.kill();
        let _ = child.wait();
        assert!(
            s.binaries.get(&key).is_some_and(|b| b.symbols.is_some()),
            "opened in the background, without a lookup"
        );
        assert_eq!(s.stats.lookups, 0);
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
        let maps = super::ProcMaps::read(std::process::id()).unwrap();
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
