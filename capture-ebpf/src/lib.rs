//! The kernel side of flint's live CPU capture.
//!
//! A [`Sampler`] samples the stacks of running threads at a fixed frequency (a software
//! `cpu-clock` perf event per online CPU) and hands back, on every [`Sampler::drain`], the
//! stacks seen since the previous drain with how often each was seen ([`RawCounts`]). Two
//! backends produce the same output:
//!
//! - [`Backend::Bpf`]: a small BPF `perf_event` program, hand-assembled with the encoder in
//!   `insn` (see `program` for its listing), counts `(pid, tid, user stack, kernel stack)` in
//!   the kernel; userspace reads only the distinct stacks and their counts. Two generations of
//!   maps let a drain read one generation while the program fills the other, so no sample
//!   is lost during a drain.
//! - [`Backend::Perf`]: `perf_event_open` with `PERF_SAMPLE_TID | PERF_SAMPLE_CALLCHAIN` and an
//!   mmap ring per CPU, for kernels where BPF is not available; counts are made in userspace.
//!
//! [`Backend::Auto`] tries BPF first and falls back to perf if loading or attaching the program
//! fails. Addresses are raw: symbolization is the caller's job (in `capture`).
//!
//! Everything here builds on every platform; off Linux, [`Sampler::open`] returns
//! [`CaptureError::Unsupported`].
//!
//! ```no_run
//! use capture_ebpf::{Sampler, SamplerOptions};
//! # fn main() -> Result<(), capture_ebpf::CaptureError> {
//! let mut sampler = Sampler::open(&SamplerOptions::interactive())?;
//! std::thread::sleep(std::time::Duration::from_secs(1));
//! let counts = sampler.drain()?;
//! for stack in &counts.stacks {
//!     println!("{} {} {:x?} {}", stack.pid, stack.tid, stack.user.first(), stack.count);
//! }
//! println!("lost: {:?}", counts.stats);
//! # Ok(())
//! # }
//! ```

mod counts;
mod error;
pub mod insn;
pub mod program;

#[cfg(target_os = "linux")]
mod bpf;
#[cfg(target_os = "linux")]
mod cpus;
#[cfg(target_os = "linux")]
mod perf;
#[cfg(target_os = "linux")]
mod sys;

pub use counts::{LossStats, ProgramStats, RawCounts, StackCount};
pub use error::{CaptureError, PRIVILEGE_HINT};

use std::time::Instant;

/// Default sampling frequency for continuous recording.
pub const CONTINUOUS_FREQUENCY_HZ: u64 = 19;
/// Default sampling frequency for interactive capture.
pub const INTERACTIVE_FREQUENCY_HZ: u64 = 99;

/// Which kernel mechanism collects the samples.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Backend {
    /// BPF if the program loads and attaches, otherwise perf.
    #[default]
    Auto,
    /// The BPF `perf_event` program with in-kernel counting.
    Bpf,
    /// `perf_event_open` with callchains read from mmap rings.
    Perf,
}

/// Which processes to sample.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub enum Target {
    /// Every process on the machine (idle excluded).
    #[default]
    All,
    /// Only these processes (thread-group ids, as `getpid()` returns them), all their threads.
    ///
    /// The BPF backend filters in the kernel (a hash map of wanted tgids looked up by the
    /// program before it takes any stack); the perf backend samples every CPU and filters in
    /// userspace.
    Pids(Vec<u32>),
}

/// How to open a [`Sampler`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SamplerOptions {
    /// Samples per second per CPU (1 to 10 000).
    pub frequency_hz: u64,
    /// Which processes to sample.
    pub target: Target,
    /// Which backend to use.
    pub backend: Backend,
    /// Entries of each BPF stack map (rounded up to a power of two by the kernel); more entries,
    /// fewer collisions, more kernel memory (`perf_event_max_stack × 8` bytes each).
    pub stack_map_entries: u32,
    /// Entries of each BPF counts map: distinct `(pid, tid, stacks)` keys per drain interval.
    pub counts_map_entries: u32,
    /// Pages of each perf ring buffer (a power of two), per CPU; the ring must hold the samples
    /// of one drain interval.
    pub perf_ring_pages: usize,
}

impl Default for SamplerOptions {
    fn default() -> Self {
        SamplerOptions {
            frequency_hz: CONTINUOUS_FREQUENCY_HZ,
            target: Target::All,
            backend: Backend::Auto,
            stack_map_entries: 8192,
            counts_map_entries: 16384,
            perf_ring_pages: 256,
        }
    }
}

impl SamplerOptions {
    /// Continuous recording: 19 Hz, all processes, automatic backend.
    pub fn continuous() -> Self {
        SamplerOptions::default()
    }

    /// Interactive capture: 99 Hz, all processes, automatic backend.
    pub fn interactive() -> Self {
        SamplerOptions {
            frequency_hz: INTERACTIVE_FREQUENCY_HZ,
            ..SamplerOptions::default()
        }
    }

    fn validate(&self) -> Result<(), CaptureError> {
        if !(1..=10_000).contains(&self.frequency_hz) {
            return Err(CaptureError::InvalidOptions(format!(
                "frequency_hz must be between 1 and 10000, not {}",
                self.frequency_hz
            )));
        }
        if let Target::Pids(pids) = &self.target
            && pids.is_empty()
        {
            return Err(CaptureError::InvalidOptions(
                "Target::Pids needs at least one pid".into(),
            ));
        }
        if !self.perf_ring_pages.is_power_of_two() {
            return Err(CaptureError::InvalidOptions(format!(
                "perf_ring_pages must be a power of two, not {}",
                self.perf_ring_pages
            )));
        }
        if self.stack_map_entries == 0 || self.counts_map_entries == 0 {
            return Err(CaptureError::InvalidOptions(
                "map sizes must not be zero".into(),
            ));
        }
        Ok(())
    }
}

#[cfg(target_os = "linux")]
enum Inner {
    Bpf(bpf::BpfSampler),
    Perf(perf::PerfSampler),
}

/// A running sampler: perf events are enabled from [`Sampler::open`] until it is dropped.
pub struct Sampler {
    #[cfg(target_os = "linux")]
    inner: Inner,
    /// Why BPF was not used when [`Backend::Auto`] fell back to perf.
    fallback_reason: Option<CaptureError>,
    last_drain: Instant,
}

impl std::fmt::Debug for Sampler {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Sampler")
            .field("backend", &self.backend())
            .finish_non_exhaustive()
    }
}

impl Sampler {
    /// Starts sampling. With [`Backend::Auto`], a failure of the BPF backend (program load,
    /// attach, or maps) falls back to perf; [`Sampler::fallback_reason`] then says why. When
    /// nothing can be opened the error names the call, the errno and, for missing privilege,
    /// how to grant it.
    pub fn open(options: &SamplerOptions) -> Result<Sampler, CaptureError> {
        options.validate()?;
        Self::open_validated(options)
    }

    #[cfg(target_os = "linux")]
    fn open_validated(options: &SamplerOptions) -> Result<Sampler, CaptureError> {
        let (inner, fallback_reason) = match options.backend {
            Backend::Bpf => (Inner::Bpf(bpf::BpfSampler::open(options)?), None),
            Backend::Perf => (Inner::Perf(perf::PerfSampler::open(options)?), None),
            Backend::Auto => match bpf::BpfSampler::open(options) {
                Ok(sampler) => (Inner::Bpf(sampler), None),
                Err(bpf_error) => match perf::PerfSampler::open(options) {
                    Ok(sampler) => (Inner::Perf(sampler), Some(bpf_error)),
                    Err(perf_error) => {
                        return Err(CaptureError::NoBackend {
                            bpf: Box::new(bpf_error),
                            perf: Box::new(perf_error),
                        });
                    }
                },
            },
        };
        Ok(Sampler {
            inner,
            fallback_reason,
            last_drain: Instant::now(),
        })
    }

    #[cfg(not(target_os = "linux"))]
    fn open_validated(_options: &SamplerOptions) -> Result<Sampler, CaptureError> {
        Err(CaptureError::Unsupported(
            "live capture needs Linux (perf_event_open and bpf)".into(),
        ))
    }

    /// The backend in use: [`Backend::Bpf`] or [`Backend::Perf`], never `Auto`.
    pub fn backend(&self) -> Backend {
        #[cfg(target_os = "linux")]
        match self.inner {
            Inner::Bpf(_) => Backend::Bpf,
            Inner::Perf(_) => Backend::Perf,
        }
        #[cfg(not(target_os = "linux"))]
        Backend::Auto
    }

    /// Why [`Backend::Auto`] did not use BPF, if it fell back to perf.
    pub fn fallback_reason(&self) -> Option<&CaptureError> {
        self.fallback_reason.as_ref()
    }

    /// Turns on the kernel's run-time accounting of BPF programs (`BPF_ENABLE_STATS`) for as
    /// long as the sampler lives, so [`Sampler::program_stats`] reports the program's CPU time.
    /// It costs two clock reads per program run. Fails with the perf backend.
    pub fn enable_program_stats(&mut self) -> Result<(), CaptureError> {
        #[cfg(target_os = "linux")]
        if let Inner::Bpf(sampler) = &mut self.inner {
            return sampler.enable_program_stats();
        }
        Err(CaptureError::Unsupported(
            "program statistics exist only for the BPF backend".into(),
        ))
    }

    /// The BPF program's cumulative run time and count (`None` with the perf backend).
    pub fn program_stats(&self) -> Result<Option<ProgramStats>, CaptureError> {
        #[cfg(target_os = "linux")]
        if let Inner::Bpf(sampler) = &self.inner {
            return sampler.program_stats().map(Some);
        }
        Ok(None)
    }

    /// Everything sampled since the previous drain (or since [`Sampler::open`]), with what was
    /// lost. Samples that arrive while the drain runs are kept for the next one.
    pub fn drain(&mut self) -> Result<RawCounts, CaptureError> {
        let now = Instant::now();
        let interval_nanos =
            u64::try_from(now.duration_since(self.last_drain).as_nanos()).unwrap_or(u64::MAX);
        self.last_drain = now;
        #[cfg(target_os = "linux")]
        let (stacks, stats) = match &mut self.inner {
            Inner::Bpf(sampler) => sampler.drain()?,
            Inner::Perf(sampler) => sampler.drain()?,
        };
        #[cfg(not(target_os = "linux"))]
        let (stacks, stats) = (Vec::new(), LossStats::default());
        Ok(RawCounts {
            stacks,
            stats,
            interval_nanos,
        })
    }
}

/// The kernel's maximum stack depth (`/proc/sys/kernel/perf_event_max_stack`, 127 by default):
/// a stack of exactly this many frames was probably truncated.
pub fn max_stack_depth() -> usize {
    std::fs::read_to_string("/proc/sys/kernel/perf_event_max_stack")
        .ok()
        .and_then(|text| text.trim().parse().ok())
        .unwrap_or(127)
}
