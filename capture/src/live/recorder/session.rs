//! A recording session: the kernel sampler, the symbolizer and the process labels
//! together, yielding one symbolized, labelled profile per interval.
//!
//! ```no_run
//! use std::time::Duration;
//! use capture::recorder::{Recorder, RecorderOptions};
//! # fn main() -> Result<(), capture_ebpf::CaptureError> {
//! let mut recorder = Recorder::open(RecorderOptions {
//!     interval: Duration::from_secs(10),
//!     ..RecorderOptions::default()
//! })?;
//! while !recorder.is_finished() {
//!     let interval = recorder.next_interval()?;
//!     eprintln!("{}", interval.status_line());
//! }
//! # Ok(())
//! # }
//! ```

use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use capture_ebpf::{Backend, CaptureError, LossStats, RawCounts, Sampler, SamplerOptions, Target};
use profile_model::Profile;

use super::pods::HostPaths;
use super::process_info::ProcessInfo;
use super::to_profile::{BuildReport, CapturedStack, Interval, build_profile};
use crate::symbols::Symbolizer;
use crate::threads;

/// How often a sleeping [`Recorder`] looks at its stop flag and its targets.
const POLL: Duration = Duration::from_millis(100);

/// How often a [`Recorder`] empties the sampler within an interval. A BPF stack map holds
/// the stacks of one drain, and of two distinct stacks that land in one bucket the second
/// is lost (a collision): ten drains of a tenth of the stacks each lose about a tenth as
/// many. The stacks drained also get their binaries opened and their frames looked up
/// before the interval ends.
const DRAIN_EVERY: Duration = Duration::from_secs(1);

/// How to record.
#[derive(Debug, Clone)]
pub struct RecorderOptions {
    /// What the kernel samples, and how often.
    pub sampler: SamplerOptions,
    /// Length of one interval (one profile).
    pub interval: Duration,
    /// End of the whole recording, counted from [`Recorder::open`]; `None` runs until
    /// stopped (or, with [`Target::Pids`], until every target has exited).
    pub duration: Option<Duration>,
    /// Leave the code of binaries as addresses (`prog+0x1a2b`, with mappings and build
    /// ids) for the reader to symbolize; kernel and JIT frames are still named, as
    /// nothing elsewhere could name them.
    pub addresses_only: bool,
    /// The `node` label of every sample; the host name when `None`. In a container
    /// the host name is the pod's, so an agent on a cluster is told its node's name.
    pub node: Option<String>,
    /// Where the node's `/proc` and `/var/log` are: the logs name the namespace, pod and
    /// container of processes in Kubernetes pods.
    pub host: HostPaths,
}

impl Default for RecorderOptions {
    fn default() -> Self {
        Self {
            sampler: SamplerOptions::continuous(),
            interval: Duration::from_secs(10),
            duration: None,
            addresses_only: false,
            node: None,
            host: HostPaths::default(),
        }
    }
}

/// One interval's profile and what it cost.
#[derive(Debug, Clone)]
pub struct IntervalProfile {
    /// The symbolized, labelled profile (`samples/count`, `cpu/nanoseconds`).
    pub profile: Profile,
    /// What building the profile noticed (samples, incomplete stacks).
    pub report: BuildReport,
    /// Samples taken and lost in the kernel.
    pub losses: LossStats,
    /// The backend that sampled.
    pub backend: Backend,
    /// Samples per second per CPU.
    pub frequency_hz: u64,
    /// Wall time the interval covers.
    pub duration_nanos: u64,
    /// CPU time the recorder's process used during the interval (all its threads).
    pub recorder_cpu_nanos: u64,
    /// Wall time spent turning the counts into the profile (symbolization, labels).
    pub symbolize_nanos: u64,
}

impl IntervalProfile {
    /// The recorder's CPU use over the interval, in percent of one core.
    pub fn recorder_cpu_percent(&self) -> f64 {
        100.0 * self.recorder_cpu_nanos as f64 / self.duration_nanos.max(1) as f64
    }

    /// One line for humans: `19 Hz, bpf, 1,234 samples, flint 0.2% CPU, symbolized in 12 ms,
    /// 3 lost to stack-map collisions, stack may be incomplete: …`.
    pub fn status_line(&self) -> String {
        let backend = match self.backend {
            Backend::Bpf => "bpf",
            Backend::Perf => "perf",
            Backend::Auto => "auto",
        };
        let mut parts = vec![
            format!("{} Hz", self.frequency_hz),
            backend.to_string(),
            format!(
                "{} samples",
                profile_model::units::thousands(self.report.samples)
            ),
            format!("flint {:.1}% CPU", self.recorder_cpu_percent()),
            format!(
                "symbolized in {} ms",
                profile_model::units::thousands(self.symbolize_nanos / 1_000_000)
            ),
        ];
        parts.extend(loss_phrases(&self.losses));
        parts.extend(self.report.warning());
        parts.join(", ")
    }
}

/// What was lost, one phrase per kind of loss that happened.
pub fn loss_phrases(losses: &LossStats) -> Vec<String> {
    let kinds = [
        (losses.collisions, "lost to stack-map collisions"),
        (losses.user_stack_errors, "without user stack"),
        (losses.kernel_stack_errors, "without kernel stack"),
        (losses.map_full, "lost to a full counts map"),
        (losses.truncated, "truncated at the maximum stack depth"),
        (losses.lost, "dropped by a full perf ring"),
    ];
    kinds
        .iter()
        .filter(|(n, _)| *n > 0)
        .map(|(n, what)| format!("{} {what}", profile_model::units::thousands(*n)))
        .collect()
}

/// A running recording: samples from [`Recorder::open`] until it is dropped.
#[derive(Debug)]
pub struct Recorder {
    sampler: Sampler,
    symbolizer: Symbolizer,
    processes: ProcessInfo,
    options: RecorderOptions,
    stop: Arc<AtomicBool>,
    deadline: Option<Instant>,
    finished: bool,
    interval_start: Instant,
    interval_start_nanos: i64,
    cpu_at_start_nanos: u64,
}

impl Recorder {
    /// Starts sampling. Fails as [`Sampler::open`] does (missing privilege, no backend),
    /// or when a target process does not exist.
    pub fn open(options: RecorderOptions) -> Result<Recorder, CaptureError> {
        if options.interval.is_zero() {
            return Err(CaptureError::InvalidOptions(
                "the interval must be longer than zero".into(),
            ));
        }
        if let Target::Pids(pids) = &options.sampler.target
            && let Some(missing) = pids.iter().find(|&&pid| !process_alive(pid))
        {
            return Err(CaptureError::InvalidOptions(format!(
                "no process with pid {missing}"
            )));
        }
        let sampler = Sampler::open(&options.sampler)?;
        let mut symbolizer = Symbolizer::new();
        symbolizer.addresses_only = options.addresses_only;
        if options.sampler.target == Target::All {
            symbolizer.preload_process(std::process::id());
        }
        let now = Instant::now();
        let mut processes = ProcessInfo::with_paths(options.host.clone());
        if let Some(node) = &options.node {
            processes.node.clone_from(node);
        }
        Ok(Recorder {
            sampler,
            symbolizer,
            processes,
            deadline: options.duration.map(|d| now + d),
            options,
            stop: Arc::new(AtomicBool::new(false)),
            finished: false,
            interval_start: now,
            interval_start_nanos: crate::time::now_nanos(),
            cpu_at_start_nanos: recorder_cpu_nanos(),
        })
    }

    /// The flag that stops the recording: once set, the interval under way ends within
    /// about 100 ms and is still returned, and [`Recorder::is_finished`] turns true.
    pub fn stop_flag(&self) -> Arc<AtomicBool> {
        self.stop.clone()
    }

    /// Makes `flag` the one that stops the recording (for a caller that created its
    /// flag before the recorder, e.g. on another thread).
    pub fn use_stop_flag(&mut self, flag: Arc<AtomicBool>) {
        self.stop = flag;
    }

    /// The backend in use ([`Backend::Bpf`] or [`Backend::Perf`]).
    pub fn backend(&self) -> Backend {
        self.sampler.backend()
    }

    /// Why BPF was not used, when [`Backend::Auto`] fell back to perf.
    pub fn fallback_reason(&self) -> Option<&CaptureError> {
        self.sampler.fallback_reason()
    }

    /// Whether the recording is over: stopped, past its duration, or every target
    /// process has exited.
    pub fn is_finished(&self) -> bool {
        self.finished
    }

    /// Adds what was sampled since the last drain to `counts`. Every process in it, new
    /// or not (a daemon that woke up), gets its binaries opened and its frames looked up
    /// now rather than at the interval's end, and its maps and labels noted while it runs.
    fn drain_into(&mut self, counts: &mut RawCounts) -> Result<(), CaptureError> {
        let drained = self.sampler.drain()?;
        for pid in self.symbolizer.preload_sampled(&drained.stacks) {
            self.processes.snapshot(pid);
        }
        counts.absorb(drained);
        Ok(())
    }

    /// Waits until the interval ends (or the recording is stopped), then returns its
    /// profile. Sampling goes on while the profile is built, so intervals follow each
    /// other without gaps.
    pub fn next_interval(&mut self) -> Result<IntervalProfile, CaptureError> {
        let mut end = self.interval_start + self.options.interval;
        if let Some(deadline) = self.deadline
            && deadline <= end
        {
            end = deadline;
        }
        let mut next_drain = Instant::now() + DRAIN_EVERY;
        let mut counts = RawCounts::default();
        loop {
            if self.stop.load(Ordering::Relaxed) || self.targets_gone() {
                self.finished = true;
                break;
            }
            let now = Instant::now();
            if now >= end {
                break;
            }
            // Processes that start now may be gone by the drain: note their maps and
            // labels while they run.
            for pid in self.symbolizer.snapshot_new_processes() {
                self.processes.snapshot(pid);
            }
            if now >= next_drain {
                next_drain = now + DRAIN_EVERY;
                self.drain_into(&mut counts)?;
            }
            std::thread::sleep((end - now).min(POLL));
        }
        if self.deadline.is_some_and(|d| Instant::now() >= d) {
            self.finished = true;
        }

        counts.absorb(self.sampler.drain()?);
        let drained_at = Instant::now();
        let start_nanos = self.interval_start_nanos;
        let duration_nanos = nanos_of(drained_at - self.interval_start);
        self.interval_start = drained_at;
        self.interval_start_nanos = start_nanos.saturating_add_unsigned(duration_nanos);

        let building = Instant::now();
        self.symbolizer.begin_interval(process_alive);
        self.processes.begin_interval();
        let stacks: Vec<CapturedStack> = counts
            .stacks
            .into_iter()
            .map(|s| CapturedStack {
                pid: s.pid,
                tid: s.tid,
                user: s.user,
                kernel: s.kernel,
                count: s.count,
            })
            .collect();
        let interval = Interval {
            start_nanos,
            duration_nanos: i64::try_from(duration_nanos).unwrap_or(i64::MAX),
            frequency_hz: self.options.sampler.frequency_hz,
        };
        let (profile, report) =
            build_profile(&stacks, interval, &mut self.symbolizer, &mut self.processes);
        let symbolize_nanos = nanos_of(building.elapsed());

        // The CPU of this interval includes building its profile.
        let cpu_now = recorder_cpu_nanos();
        let recorder_cpu_nanos = cpu_now.saturating_sub(self.cpu_at_start_nanos);
        self.cpu_at_start_nanos = cpu_now;

        Ok(IntervalProfile {
            profile,
            report,
            losses: counts.stats,
            backend: self.sampler.backend(),
            frequency_hz: self.options.sampler.frequency_hz,
            duration_nanos,
            recorder_cpu_nanos,
            symbolize_nanos,
        })
    }

    /// Whether every target process has exited (never with [`Target::All`]).
    fn targets_gone(&self) -> bool {
        match &self.options.sampler.target {
            Target::All => false,
            Target::Pids(pids) => !pids.iter().any(|&pid| process_alive(pid)),
        }
    }
}

fn nanos_of(d: Duration) -> u64 {
    u64::try_from(d.as_nanos()).unwrap_or(u64::MAX)
}

/// Whether process `pid` exists.
pub fn process_alive(pid: u32) -> bool {
    Path::new(&format!("/proc/{pid}")).exists()
}

/// CPU time used so far by this process: the sum of its threads' run time from
/// `/proc/self/task/*/schedstat` (nanoseconds), else user + system time from
/// `/proc/self/stat` (clock ticks, assumed 100 per second).
pub fn process_cpu_nanos() -> u64 {
    schedstat_nanos(|_| true).unwrap_or_else(stat_nanos)
}

/// CPU time used so far by the recorder: the calling thread (the one that runs the
/// session) and the threads the recorder starts, so that in the window drawing is not
/// counted as the recorder's.
pub fn recorder_cpu_nanos() -> u64 {
    threads_cpu_nanos(&threads::RECORDER)
}

/// CPU time used so far by the calling thread and the threads whose names begin with
/// one of `names`; the whole process's ([`process_cpu_nanos`]) when threads cannot be
/// told apart.
fn threads_cpu_nanos(names: &[&str]) -> u64 {
    let Ok(me) = std::fs::read_link("/proc/thread-self") else {
        return process_cpu_nanos();
    };
    let me = me.file_name().map(std::ffi::OsStr::to_owned);
    schedstat_nanos(|task| {
        task.file_name().map(std::ffi::OsStr::to_owned) == me
            || std::fs::read_to_string(task.join("comm"))
                .is_ok_and(|comm| names.iter().any(|t| threads::comm_is(&comm, t)))
    })
    .unwrap_or_else(process_cpu_nanos)
}

/// The summed run time of this process's threads whose `/proc/self/task/TID`
/// directory `keep` accepts; `None` without schedstat.
fn schedstat_nanos(keep: impl Fn(&Path) -> bool) -> Option<u64> {
    let mut total = 0u64;
    let mut any = false;
    for entry in std::fs::read_dir("/proc/self/task").ok()?.flatten() {
        let task = entry.path();
        let Ok(text) = std::fs::read_to_string(task.join("schedstat")) else {
            continue;
        };
        let Some(Ok(nanos)) = text.split_whitespace().next().map(str::parse::<u64>) else {
            continue;
        };
        any = true;
        if keep(&task) {
            total = total.saturating_add(nanos);
        }
    }
    any.then_some(total)
}

fn stat_nanos() -> u64 {
    let Ok(text) = std::fs::read_to_string("/proc/self/stat") else {
        return 0;
    };
    // Fields after the command (which may hold spaces), from field 3 on: utime is 14, stime 15.
    let Some((_, rest)) = text.rsplit_once(')') else {
        return 0;
    };
    let fields: Vec<&str> = rest.split_whitespace().collect();
    let ticks = |i: usize| fields.get(i).and_then(|f| f.parse::<u64>().ok());
    match (ticks(11), ticks(12)) {
        (Some(user), Some(system)) => (user + system) * 10_000_000,
        _ => 0,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_status_line_names_rate_backend_samples_cpu_and_losses() {
        let interval = IntervalProfile {
            profile: Profile::default(),
            report: BuildReport {
                samples: 1234,
                ..BuildReport::default()
            },
            losses: LossStats {
                collisions: 3,
                ..LossStats::default()
            },
            backend: Backend::Bpf,
            frequency_hz: 19,
            duration_nanos: 10_000_000_000,
            recorder_cpu_nanos: 20_000_000,
            symbolize_nanos: 12_500_000,
        };
        assert_eq!(
            interval.status_line(),
            "19 Hz, bpf, 1,234 samples, flint 0.2% CPU, symbolized in 12 ms, \
             3 lost to stack-map collisions"
        );
    }

    /// Spins until `cpu` has counted 30 ms more; a counter that never moves times out.
    fn spin_until_counted(cpu: fn() -> u64) {
        let before = cpu();
        let start = Instant::now();
        let mut x = 0u64;
        while cpu().saturating_sub(before) < 30_000_000 {
            assert!(start.elapsed() < Duration::from_secs(10), "CPU time stuck");
            for _ in 0..100_000 {
                x = std::hint::black_box(x.wrapping_mul(31).wrapping_add(7));
            }
        }
    }

    /// The CPU of this thread and of threads named `flint-test-cpu`.
    fn test_threads_cpu() -> u64 {
        threads_cpu_nanos(&["flint-test-cpu"])
    }

    /// The CPU of this thread alone.
    fn own_cpu() -> u64 {
        threads_cpu_nanos(&[])
    }

    /// What [`test_threads_cpu`] counts of a thread named `name` that spins 30 ms of
    /// its own CPU (measured while it is still alive: an ended thread leaves no trace).
    fn counted_of_a_thread(name: &str) -> u64 {
        let (done, wait) = std::sync::mpsc::channel::<()>();
        let (spun, finished) = std::sync::mpsc::channel();
        let before = test_threads_cpu();
        let thread = std::thread::Builder::new()
            .name(name.into())
            .spawn(move || {
                spin_until_counted(own_cpu);
                spun.send(()).unwrap();
                let _ = wait.recv();
            })
            .unwrap();
        finished.recv().unwrap();
        let counted = test_threads_cpu().saturating_sub(before);
        drop(done);
        thread.join().unwrap();
        counted
    }

    #[test]
    fn the_recorder_cpu_time_counts_its_threads_and_not_others() {
        // The calling thread is counted.
        spin_until_counted(test_threads_cpu);
        // Another thread's work (as the window's drawing) is not.
        let other = counted_of_a_thread("drawing");
        assert!(other < 20_000_000, "counted {other} ns of another thread");
        // A thread with a recorder's name is.
        let named = counted_of_a_thread("flint-test-cpu");
        assert!(
            named >= 30_000_000,
            "counted {named} ns of the named thread"
        );
    }

    #[test]
    fn the_process_cpu_time_grows_with_work() {
        spin_until_counted(process_cpu_nanos);
    }
}
