//! Measures the sampler's own CPU use while the machine is busy.
//!
//! `cargo run --release -p capture-ebpf --example overhead -- [HZ] [SECONDS] [DRAIN_SECONDS] [bpf|perf]`
//!
//! Starts one busy-loop `sh` per CPU, samples all processes, drains every `DRAIN_SECONDS`, and
//! prints this process's CPU time (`/proc/thread-self/schedstat`, `/proc/self/stat`) and, for BPF, the
//! program's own run time as the kernel accounts it (`BPF_ENABLE_STATS`). Needs root.

use std::process::{Child, Command};
use std::time::{Duration, Instant};

use capture_ebpf::{Backend, Sampler, SamplerOptions, Target};

/// CPU seconds of this (single-threaded) process, to the nanosecond.
fn thread_cpu_seconds() -> f64 {
    std::fs::read_to_string("/proc/thread-self/schedstat")
        .ok()
        .and_then(|text| text.split_whitespace().next()?.parse::<f64>().ok())
        .unwrap_or(0.0)
        / 1e9
}

/// (user, system) CPU seconds of this process, in 10 ms ticks.
fn cpu_seconds() -> (f64, f64) {
    let text = std::fs::read_to_string("/proc/self/stat").unwrap_or_default();
    let after = text.rsplit_once(')').map_or("", |(_, rest)| rest);
    let fields: Vec<&str> = after.split_whitespace().collect();
    let tick = |i: usize| {
        fields
            .get(i)
            .and_then(|f| f.parse::<f64>().ok())
            .unwrap_or(0.0)
            / 100.0
    };
    // Fields 14 and 15 of stat; `after` starts at field 3.
    (tick(11), tick(12))
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let hz: u64 = args.first().map_or(Ok(99), |a| a.parse())?;
    let seconds: u64 = args.get(1).map_or(Ok(30), |a| a.parse())?;
    let drain: u64 = args.get(2).map_or(Ok(10), |a| a.parse())?;
    let backend = match args.get(3).map(String::as_str) {
        Some("perf") => Backend::Perf,
        _ => Backend::Bpf,
    };
    let cpus = std::thread::available_parallelism()?.get();
    let mut busy: Vec<Child> = (0..cpus)
        .map(|_| {
            Command::new("sh")
                .args(["-c", "while :; do :; done"])
                .spawn()
        })
        .collect::<Result<_, _>>()?;
    let options = SamplerOptions {
        frequency_hz: hz,
        target: Target::All,
        backend,
        ..SamplerOptions::default()
    };
    let mut sampler = Sampler::open(&options)?;
    if backend == Backend::Bpf {
        sampler.enable_program_stats()?;
    }
    let before = cpu_seconds();
    let before_exact = thread_cpu_seconds();
    let start = Instant::now();
    let mut samples = 0;
    let mut distinct = 0;
    let mut drains = 0;
    while start.elapsed() < Duration::from_secs(seconds) {
        std::thread::sleep(Duration::from_secs(drain));
        let counts = sampler.drain()?;
        samples += counts.total();
        distinct += counts.stacks.len();
        drains += 1;
        eprintln!(
            "drain: {} samples, {} stacks, {:?}",
            counts.total(),
            counts.stacks.len(),
            counts.stats
        );
    }
    let elapsed = start.elapsed().as_secs_f64();
    let after = cpu_seconds();
    let exact = thread_cpu_seconds() - before_exact;
    let (user, system) = (after.0 - before.0, after.1 - before.1);
    println!(
        "{backend:?} at {hz} Hz, {cpus} CPUs busy, {elapsed:.1} s, {drains} drains: {samples} samples, \
         {distinct} stacks; drainer CPU: {exact:.4} s = {:.4} % of one CPU (ticks: user {user:.2} s, system {system:.2} s)",
        100.0 * exact / elapsed
    );
    if let Some(stats) = sampler.program_stats()? {
        println!(
            "BPF program: {} runs, {:.3} s total, {:.1} us per run = {:.3} % of one CPU",
            stats.run_count,
            stats.run_time_nanos as f64 / 1e9,
            stats.run_time_nanos as f64 / 1e3 / stats.run_count.max(1) as f64,
            100.0 * stats.run_time_nanos as f64 / 1e9 / elapsed
        );
    }
    for child in &mut busy {
        child.kill()?;
        child.wait()?;
    }
    Ok(())
}
