//! Sampling for real: these tests open perf events and load the BPF program. Without the
//! privilege or kernel support they print `SKIP: <reason>` and return.
//!
//! They run one at a time (a lock), because on a small machine parallel CPU burners would
//! take CPU from each other. Expected sample counts come from each thread's own CPU time
//! (`/proc/thread-self/schedstat`), so a busy machine slows the burner but does not fail the
//! tests.
#![allow(clippy::unwrap_used, clippy::expect_used, reason = "tests")]

use std::collections::HashSet;
use std::hint::black_box;
use std::io::Write as _;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::thread;
use std::time::{Duration, Instant};

use capture_ebpf::{Backend, CaptureError, LossStats, RawCounts, Sampler, SamplerOptions, Target};

static SERIAL: Mutex<()> = Mutex::new(());

fn serial() -> MutexGuard<'static, ()> {
    SERIAL
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// Opens a sampler, or prints why the test is skipped.
fn open_or_skip(options: &SamplerOptions) -> Option<Sampler> {
    match Sampler::open(options) {
        Ok(sampler) => Some(sampler),
        Err(error) if skippable(&error) => {
            println!("SKIP: cannot sample here: {error}");
            None
        }
        Err(error) => panic!("cannot open {:?}: {error}", options.backend),
    }
}

fn skippable(error: &CaptureError) -> bool {
    match error {
        CaptureError::Permission { .. } | CaptureError::Unsupported(_) => true,
        CaptureError::Syscall { source, .. } => {
            // ENOSYS (no bpf/perf in this kernel), EOPNOTSUPP, ENOENT (no cpu-clock PMU).
            matches!(source.raw_os_error(), Some(38 | 95 | 2))
        }
        CaptureError::NoBackend { bpf, perf } => skippable(bpf) && skippable(perf),
        _ => false,
    }
}

fn options(backend: Backend, frequency_hz: u64, target: Target) -> SamplerOptions {
    SamplerOptions {
        frequency_hz,
        target,
        backend,
        ..SamplerOptions::default()
    }
}

fn current_tid() -> u32 {
    let link = std::fs::read_link("/proc/thread-self").unwrap();
    link.file_name().unwrap().to_str().unwrap().parse().unwrap()
}

/// Nanoseconds this thread has run on a CPU.
fn thread_cpu_nanos() -> u64 {
    let text = std::fs::read_to_string("/proc/thread-self/schedstat").unwrap();
    text.split_whitespace().next().unwrap().parse().unwrap()
}

/// The CPU burner: everything it runs is in this function (xorshift, no calls but the rare
/// flag check), so sampled user leaves fall inside it.
#[inline(never)]
fn burn_cpu(stop: &AtomicBool, seed: u64) -> u64 {
    let mut x = seed | 1;
    loop {
        // A while loop, not `for … in 0..n`: debug builds call `Range::next` out of line.
        let mut i = 0u32;
        while i < 1_000_000 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            i += 1;
        }
        if stop.load(Ordering::Relaxed) {
            return x;
        }
    }
}

/// A thread running `work` until stopped; reports its tid and CPU time.
struct Worker {
    stop: Arc<AtomicBool>,
    tid: u32,
    handle: thread::JoinHandle<u64>,
}

impl Worker {
    fn start(work: fn(&AtomicBool) -> u64) -> Worker {
        let stop = Arc::new(AtomicBool::new(false));
        let (tx, rx) = std::sync::mpsc::channel();
        let flag = Arc::clone(&stop);
        let handle = thread::spawn(move || {
            tx.send(current_tid()).unwrap();
            let start = thread_cpu_nanos();
            black_box(work(&flag));
            thread_cpu_nanos() - start
        });
        let tid = rx.recv().unwrap();
        Worker { stop, tid, handle }
    }

    /// Stops the thread; returns its CPU time in seconds.
    fn stop(self) -> f64 {
        self.stop.store(true, Ordering::Relaxed);
        self.handle.join().unwrap() as f64 / 1e9
    }
}

fn burner(stop: &AtomicBool) -> u64 {
    burn_cpu(stop, 0x9e37_79b9_7f4a_7c15)
}

fn syscaller(stop: &AtomicBool) -> u64 {
    let mut null = std::fs::OpenOptions::new()
        .write(true)
        .open("/dev/null")
        .unwrap();
    let mut calls = 0u64;
    while !stop.load(Ordering::Relaxed) {
        null.write_all(b"x").unwrap();
        calls += 1;
    }
    calls
}

/// `burn_cpu`'s address range: its address and its size from the ELF symbol table.
fn burner_range() -> std::ops::Range<u64> {
    use object::{Object as _, ObjectSymbol as _};
    let start = burn_cpu as *const () as usize as u64;
    let data = std::fs::read("/proc/self/exe").unwrap();
    let file = object::File::parse(&*data).unwrap();
    let size = file
        .symbols()
        .find(|symbol| symbol.name().is_ok_and(|name| name.contains("burn_cpu")))
        .map(|symbol| symbol.size())
        .filter(|&size| size > 0)
        .expect("burn_cpu in the symbol table");
    start..start + size
}

/// A thread that ran `cpu` seconds on a CPU sampled at 99 Hz must have at least half of its
/// expected samples (and 20): enough to show the sampler works, whatever else loads the machine
/// (a wall-time floor failed when CI ran beside other work and the thread got less than a CPU).
fn assert_enough_samples(total: u64, cpu: f64) {
    let floor = (0.5 * 99.0 * cpu).max(20.0);
    assert!(
        total as f64 >= floor,
        "{total} samples for {cpu:.2} CPU seconds at 99 Hz"
    );
}

fn run_burner(
    sampler: &mut Sampler,
    seconds: f64,
    drain_every: Option<Duration>,
) -> (u32, f64, Vec<RawCounts>) {
    sampler.drain().unwrap(); // start clean
    let worker = Worker::start(burner);
    let tid = worker.tid;
    let started = Instant::now();
    let mut drains = Vec::new();
    let run = Duration::from_secs_f64(seconds);
    while started.elapsed() < run {
        let step = drain_every
            .unwrap_or(run)
            .min(run.saturating_sub(started.elapsed()));
        thread::sleep(step);
        if drain_every.is_some() {
            drains.push(sampler.drain().unwrap());
        }
    }
    let cpu = worker.stop();
    drains.push(sampler.drain().unwrap());
    (tid, cpu, drains)
}

fn check_burner(backend: Backend) {
    let _serial = serial();
    let Some(mut sampler) = open_or_skip(&options(backend, 99, Target::All)) else {
        return;
    };
    assert_eq!(sampler.backend(), backend);
    let (tid, cpu, drains) = run_burner(&mut sampler, 2.0, None);
    let counts = &drains[0];
    let range = burner_range();
    let mine: Vec<_> = counts.stacks.iter().filter(|s| s.tid == tid).collect();
    let total: u64 = mine.iter().map(|s| s.count).sum();
    let in_burner: u64 = mine
        .iter()
        .filter(|s| s.user.first().is_some_and(|leaf| range.contains(leaf)))
        .map(|s| s.count)
        .sum();
    let expected = 99.0 * cpu;
    println!(
        "{backend:?}: burner tid {tid} ran {cpu:.2} s on CPU: {total} samples (expected {expected:.0}), \
         {in_burner} with the leaf in burn_cpu {range:x?}; stats {:?}",
        counts.stats
    );
    // cpu-clock fires every 1/99 s of the thread's CPU time: within 15 %.
    assert!(
        (total as f64 - expected).abs() <= 0.15 * expected,
        "{total} samples for {cpu:.2} CPU seconds at 99 Hz"
    );
    assert!(
        in_burner as f64 >= 0.95 * total as f64,
        "only {in_burner} of {total} leaves in burn_cpu"
    );
    assert!(mine.iter().all(|s| s.pid == std::process::id()));
    if backend == Backend::Bpf {
        // Every sample taken is either counted or reported as lost to a full map.
        assert_eq!(counts.total(), counts.stats.samples - counts.stats.map_full);
    } else {
        assert_eq!(counts.total(), counts.stats.samples);
    }
}

#[test]
fn program_passes_the_verifier() {
    let _serial = serial();
    for target in [Target::All, Target::Pids(vec![std::process::id()])] {
        let Some(mut sampler) = open_or_skip(&options(Backend::Bpf, 19, target)) else {
            return;
        };
        assert_eq!(sampler.backend(), Backend::Bpf);
        assert!(sampler.fallback_reason().is_none());
        sampler.drain().unwrap();
    }
}

#[test]
fn auto_picks_bpf_here() {
    let _serial = serial();
    let Some(sampler) = open_or_skip(&options(Backend::Auto, 19, Target::All)) else {
        return;
    };
    assert_eq!(
        sampler.backend(),
        Backend::Bpf,
        "fell back: {:?}",
        sampler.fallback_reason()
    );
}

#[test]
fn bpf_samples_the_burner() {
    check_burner(Backend::Bpf);
}

#[test]
fn perf_samples_the_burner() {
    check_burner(Backend::Perf);
}

#[test]
fn kernel_stacks_for_a_syscall_loop() {
    for backend in [Backend::Bpf, Backend::Perf] {
        let _serial = serial();
        let Some(mut sampler) = open_or_skip(&options(backend, 99, Target::All)) else {
            return;
        };
        sampler.drain().unwrap();
        let worker = Worker::start(syscaller);
        let tid = worker.tid;
        thread::sleep(Duration::from_millis(1500));
        let cpu = worker.stop();
        let counts = sampler.drain().unwrap();
        let mine: Vec<_> = counts.stacks.iter().filter(|s| s.tid == tid).collect();
        let total: u64 = mine.iter().map(|s| s.count).sum();
        let with_kernel: u64 = mine
            .iter()
            .filter(|s| !s.kernel.is_empty())
            .map(|s| s.count)
            .sum();
        println!(
            "{backend:?}: {with_kernel} of {total} samples of the syscall loop have kernel stacks \
             ({cpu:.2} CPU seconds)"
        );
        assert_enough_samples(total, cpu);
        assert!(
            with_kernel as f64 >= 0.3 * total as f64,
            "{with_kernel} of {total}"
        );
        for stack in &mine {
            assert!(
                stack.kernel.iter().all(|&ip| ip >= 0xffff_8000_0000_0000),
                "user address in a kernel stack: {:x?}",
                stack.kernel
            );
            assert!(
                stack.user.iter().all(|&ip| ip < 0x0000_8000_0000_0000),
                "kernel address in a user stack: {:x?} (kernel {:x?})",
                stack.user,
                stack.kernel
            );
        }
        // Kernel-mode samples of a user thread still carry its user stack.
        assert!(
            mine.iter()
                .any(|s| !s.kernel.is_empty() && !s.user.is_empty())
        );
    }
}

#[test]
fn draining_often_loses_nothing() {
    let _serial = serial();
    let Some(mut sampler) = open_or_skip(&options(Backend::Bpf, 99, Target::All)) else {
        return;
    };
    let rate = |tid: u32, cpu: f64, drains: &[RawCounts]| -> f64 {
        let samples: u64 = drains.iter().map(|d| d.total_for_tid(tid)).sum();
        samples as f64 / (99.0 * cpu)
    };
    let (tid, cpu, many) = run_burner(&mut sampler, 3.0, Some(Duration::from_millis(30)));
    for drain in &many {
        assert_eq!(drain.total(), drain.stats.samples - drain.stats.map_full);
    }
    let many_rate = rate(tid, cpu, &many);
    let (tid, cpu, one) = run_burner(&mut sampler, 3.0, None);
    let one_rate = rate(tid, cpu, &one);
    println!(
        "{} drains: {many_rate:.3} samples per expected sample; one drain: {one_rate:.3}",
        many.len()
    );
    assert!(many.len() >= 50, "{} drains", many.len());
    // The burner's count follows its CPU time to a few percent either way (see the figures
    // above); a drain that dropped its interval's samples would cost far more.
    assert!(
        (many_rate - one_rate).abs() <= 0.08,
        "many drains {many_rate:.3} vs one {one_rate:.3}"
    );
}

/// The exact check: the kernel counts every run of the program (`BPF_ENABLE_STATS`), and the
/// program counts every run as a sample in exactly one generation; the samples of 100 drains
/// must add up to the runs between the first and the last flip.
#[test]
fn drained_samples_add_up_to_program_runs() {
    let _serial = serial();
    let Some(mut sampler) = open_or_skip(&options(Backend::Bpf, 99, Target::All)) else {
        return;
    };
    if let Err(error) = sampler.enable_program_stats() {
        println!("SKIP: no BPF run-time statistics here: {error}");
        return;
    }
    let runs = |sampler: &Sampler| sampler.program_stats().unwrap().unwrap().run_count;
    let worker = Worker::start(burner);
    let before_first = runs(&sampler);
    sampler.drain().unwrap();
    let after_first = runs(&sampler);
    let mut samples = 0;
    let mut before_last = 0;
    let started = Instant::now();
    for _ in 0..100 {
        thread::sleep(Duration::from_millis(20));
        before_last = runs(&sampler);
        samples += sampler.drain().unwrap().stats.samples;
    }
    let after_last = runs(&sampler);
    let seconds = started.elapsed().as_secs_f64();
    worker.stop();
    println!(
        "100 drains in {seconds:.2} s: {samples} samples; program runs between the flips: {} to {}",
        before_last - after_first,
        after_last - before_first
    );
    // The burner keeps a CPU busy the whole time, so at 99 Hz there are about 99 samples a
    // second at least (more when anything else runs); half of that leaves room for a loaded
    // machine while still proving the drains carried real samples.
    let floor = 0.5 * 99.0 * seconds;
    assert!(
        samples as f64 >= floor,
        "{samples} samples in {seconds:.2} s"
    );
    assert!(
        (before_last - after_first..=after_last - before_first).contains(&samples),
        "{samples} samples drained, runs {before_first} {after_first} {before_last} {after_last}"
    );
}

#[test]
fn bpf_and_perf_agree() {
    let _serial = serial();
    let Some(mut bpf) = open_or_skip(&options(Backend::Bpf, 99, Target::All)) else {
        return;
    };
    let Some(mut perf) = open_or_skip(&options(Backend::Perf, 99, Target::All)) else {
        return;
    };
    bpf.drain().unwrap();
    perf.drain().unwrap();
    let worker = Worker::start(burner);
    let tid = worker.tid;
    thread::sleep(Duration::from_secs(2));
    let cpu = worker.stop();
    let from_bpf = bpf.drain().unwrap();
    let from_perf = perf.drain().unwrap();
    let share = |counts: &RawCounts| counts.total_for_tid(tid) as f64 / counts.total() as f64;
    println!(
        "burner share: BPF {:.3} ({} of {}), perf {:.3} ({} of {}, lost {})",
        share(&from_bpf),
        from_bpf.total_for_tid(tid),
        from_bpf.total(),
        share(&from_perf),
        from_perf.total_for_tid(tid),
        from_perf.total(),
        from_perf.stats.lost,
    );
    assert_enough_samples(from_bpf.total_for_tid(tid), cpu);
    assert!((share(&from_bpf) - share(&from_perf)).abs() <= 0.05);
    let (a, b) = (
        from_bpf.total_for_tid(tid) as f64,
        from_perf.total_for_tid(tid) as f64,
    );
    // Two independent timers: a few percent apart on a busy machine (4.9 % seen once).
    assert!((a - b).abs() <= 0.10 * a.max(b), "BPF {a} vs perf {b}");
}

#[test]
fn pid_filter_keeps_only_the_wanted_process() {
    for backend in [Backend::Bpf, Backend::Perf] {
        let _serial = serial();
        let mut child = std::process::Command::new("sh")
            .args(["-c", "while :; do :; done"])
            .spawn()
            .unwrap();
        let pid = child.id();
        let sampler = open_or_skip(&options(backend, 99, Target::Pids(vec![pid])));
        let Some(mut sampler) = sampler else {
            child.kill().unwrap();
            child.wait().unwrap();
            return;
        };
        let child_cpu = || {
            let text = std::fs::read_to_string(format!("/proc/{pid}/schedstat")).unwrap();
            text.split_whitespace()
                .next()
                .unwrap()
                .parse::<f64>()
                .unwrap()
                / 1e9
        };
        let cpu_before = child_cpu();
        sampler.drain().unwrap();
        // This process burns too, and must not show up.
        let worker = Worker::start(burner);
        thread::sleep(Duration::from_secs(1));
        worker.stop();
        let counts = sampler.drain().unwrap();
        let expected = 99.0 * (child_cpu() - cpu_before);
        child.kill().unwrap();
        child.wait().unwrap();
        let pids: std::collections::BTreeSet<u32> = counts.stacks.iter().map(|s| s.pid).collect();
        let total = counts.total() as f64;
        println!(
            "{backend:?}: filter {pid}: {total} samples (expected {expected:.0}) from pids {pids:?}"
        );
        assert_eq!(pids, [pid].into(), "other processes sampled");
        assert!(total >= 10.0, "{total} samples of the child");
        // The child's CPU time is read a little outside the drained interval: 20 %.
        assert!(
            (total - expected).abs() <= 0.2 * expected,
            "{total} vs {expected:.0}"
        );
    }
}

/// Run by `missing_privilege_is_a_clear_error` as user `nobody`; does nothing otherwise.
#[test]
fn helper_open_without_privilege() {
    if std::env::var_os("CAPTURE_EBPF_UNPRIVILEGED_CHILD").is_none() {
        return;
    }
    let error = Sampler::open(&options(Backend::Auto, 19, Target::All)).unwrap_err();
    println!("ERROR: {error}");
    assert!(error.is_permission(), "{error:?}");
}

#[test]
fn missing_privilege_is_a_clear_error() {
    use std::os::unix::process::CommandExt as _;
    let paranoid =
        std::fs::read_to_string("/proc/sys/kernel/perf_event_paranoid").unwrap_or_default();
    if paranoid.trim().parse::<i32>().is_ok_and(|level| level < 1) {
        println!("SKIP: perf_event_paranoid {paranoid} lets anyone sample every CPU");
        return;
    }
    let exe = std::env::current_exe().unwrap();
    let output = std::process::Command::new(exe)
        .args(["--exact", "helper_open_without_privilege", "--nocapture"])
        .env("CAPTURE_EBPF_UNPRIVILEGED_CHILD", "1")
        .uid(65534)
        .gid(65534)
        .output();
    let output = match output {
        Ok(output) => output,
        Err(error) => {
            println!("SKIP: cannot run the test binary as nobody: {error}");
            return;
        }
    };
    let stdout = String::from_utf8_lossy(&output.stdout);
    println!("{stdout}");
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let message = stdout
        .lines()
        .find(|line| line.starts_with("ERROR: "))
        .expect("the child printed its error");
    for needle in [
        "perf_event_open",
        "CAP_BPF",
        "CAP_PERFMON",
        "perf_event_paranoid",
        "root",
    ] {
        assert!(
            message.contains(needle),
            "{needle:?} missing from {message}"
        );
    }
}

#[test]
fn auto_falls_back_to_perf_when_bpf_fails() {
    let _serial = serial();
    // A stack map the kernel refuses to allocate makes the BPF backend fail; perf needs none.
    let options = SamplerOptions {
        stack_map_entries: u32::MAX,
        ..options(Backend::Auto, 19, Target::All)
    };
    let Some(mut sampler) = open_or_skip(&options) else {
        return;
    };
    let reason = sampler.fallback_reason().map(ToString::to_string);
    println!("fell back because: {reason:?}");
    assert_eq!(sampler.backend(), Backend::Perf);
    assert!(reason.is_some_and(|reason| reason.contains("bpf(BPF_MAP_CREATE)")));
    sampler.drain().unwrap();
    let strict = SamplerOptions {
        backend: Backend::Bpf,
        ..options
    };
    let error = Sampler::open(&strict).unwrap_err();
    assert!(
        error.to_string().contains("bpf(BPF_MAP_CREATE) failed"),
        "{error}"
    );
}

#[test]
fn pid_target_follows_threads_started_later() {
    for backend in [Backend::Bpf, Backend::Perf] {
        let _serial = serial();
        let target = Target::Pids(vec![std::process::id()]);
        let Some(mut sampler) = open_or_skip(&options(backend, 99, target)) else {
            return;
        };
        // The burner thread starts after the events were opened (perf: per-thread events,
        // inherited by new threads).
        let (tid, cpu, drains) = run_burner(&mut sampler, 1.5, None);
        let counts = &drains[0];
        let expected = 99.0 * cpu;
        let got = counts.total_for_tid(tid) as f64;
        println!("{backend:?}: new thread {tid}: {got} samples, expected {expected:.0}");
        assert!(
            (got - expected).abs() <= 0.15 * expected,
            "{got} vs {expected:.0}"
        );
        assert!(counts.stacks.iter().all(|s| s.pid == std::process::id()));
    }
}

#[test]
fn pid_target_that_does_not_exist() {
    let _serial = serial();
    // Beyond pid_max (at most 2^22): no such process.
    let target = Target::Pids(vec![u32::MAX - 1]);
    match Sampler::open(&options(Backend::Perf, 19, target.clone())) {
        Err(CaptureError::System { reason, .. }) => assert!(reason.contains("exists"), "{reason}"),
        other => panic!("expected a missing-process error, got {other:?}"),
    }
    // The BPF filter simply matches nothing.
    let Some(mut sampler) = open_or_skip(&options(Backend::Bpf, 99, target)) else {
        return;
    };
    thread::sleep(Duration::from_millis(200));
    assert_eq!(sampler.drain().unwrap().total(), 0);
}

#[test]
fn losses_are_counted_not_silent() {
    let _serial = serial();
    // Each loss on its own run: collisions make stacks share one error key, so with a
    // one-bucket stack map the counts map may never fill; and a counts map of one entry
    // is full as soon as a second thread is sampled.
    let collide = SamplerOptions {
        stack_map_entries: 1,
        ..options(Backend::Bpf, 99, Target::All)
    };
    let Some(stats) = losses_of(&collide) else {
        return;
    };
    assert!(stats.collisions > 0, "{stats:?}");
    let full = SamplerOptions {
        counts_map_entries: 1,
        ..options(Backend::Bpf, 99, Target::All)
    };
    let Some(stats) = losses_of(&full) else {
        return;
    };
    assert!(stats.map_full > 0, "{stats:?}");
}

/// Samples a burner and a syscall-heavy thread for a second with `options` and returns
/// what was lost, after checking that no more stacks were counted than the counts map
/// holds and that counted plus map-full samples are all the samples.
fn losses_of(options: &SamplerOptions) -> Option<LossStats> {
    let mut sampler = open_or_skip(options)?;
    sampler.drain().unwrap();
    let burner = Worker::start(burner);
    let syscalls = Worker::start(syscaller);
    thread::sleep(Duration::from_secs(1));
    burner.stop();
    syscalls.stop();
    let counts = sampler.drain().unwrap();
    let stats = counts.stats;
    println!("{} stacks counted: {stats:?}", counts.stacks.len());
    assert!(counts.stacks.len() <= options.counts_map_entries as usize);
    assert_eq!(counts.total() + stats.map_full, stats.samples);
    Some(stats)
}

/// Draining several times within an interval and adding the drains up (what the recorder
/// does every second, so that each stack map holds fewer stacks) counts every sample once:
/// the burner's samples match its CPU time, and every stack appears once in the sum.
#[test]
fn drains_added_up_count_every_sample_once() {
    for backend in [Backend::Bpf, Backend::Perf] {
        let _serial = serial();
        let Some(mut sampler) = open_or_skip(&options(backend, 99, Target::All)) else {
            return;
        };
        sampler.drain().unwrap();
        let range = burner_range();
        let pid = std::process::id();
        let worker = Worker::start(burner);
        let tid = worker.tid;
        let mut counts = RawCounts::default();
        let mut drains_with_burner = 0;
        for _ in 0..4 {
            thread::sleep(Duration::from_millis(300));
            let drained = sampler.drain().unwrap();
            if drained.total_for_tid(tid) > 0 {
                drains_with_burner += 1;
            }
            counts.absorb(drained);
        }
        let cpu = worker.stop();
        counts.absorb(sampler.drain().unwrap());
        println!(
            "{backend:?}: {} samples, {} of the burner in {drains_with_burner} drains, stats {:?}",
            counts.total(),
            counts.total_for_tid(tid),
            counts.stats
        );
        assert!(
            drains_with_burner >= 3,
            "the burner was in {drains_with_burner} of 4 drains"
        );
        let keys: HashSet<_> = counts
            .stacks
            .iter()
            .map(|s| (s.pid, s.tid, &s.user, &s.kernel))
            .collect();
        assert_eq!(keys.len(), counts.stacks.len(), "a stack is listed twice");
        assert!(
            counts
                .stacks
                .iter()
                .any(|s| s.pid == pid && s.user.first().is_some_and(|ip| range.contains(ip))),
            "no stack of the burner"
        );
        if backend == Backend::Bpf {
            assert_eq!(counts.total(), counts.stats.samples - counts.stats.map_full);
        } else {
            assert_eq!(counts.total(), counts.stats.samples);
        }
        let mine = counts.total_for_tid(tid);
        let expected = 99.0 * cpu;
        assert!(
            (mine as f64 - expected).abs() <= 0.15 * expected,
            "{mine} samples of the burner for {cpu:.2} CPU seconds at 99 Hz"
        );
    }
}
