//! `flint record` through the real binary, sampling helper programs that the tests
//! compile with rustc: a 75/25 split between two functions comes out as 75/25, JIT code
//! is named from its perf map, kernel frames are named from kallsyms, intervals reach
//! the store and a server, Ctrl-C still writes the file, and without privilege the error
//! says how to grant it; a stripped program recorded with addresses only is named through
//! a local debuginfod as `perf report` names the unstripped one.
//!
//! Sampling needs root (or CAP_BPF/CAP_PERFMON); without it these tests print `SKIP:`.

use std::io::{BufRead as _, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::sync::{Mutex, MutexGuard, OnceLock};
use std::time::{Duration, Instant};

use capture::{Progress, QueryTime, Selector, TimeRange};
use profile_model::Profile;

use super::{flint, flint_ok};

const FLINT_CPU: &str = "flint_cpu:samples:count:cpu:nanoseconds:delta";
const ALL_TIME: TimeRange = TimeRange {
    start_nanos: 0,
    end_nanos: i64::MAX,
};

/// The helper: `busy SECS` spends 3/4 of its time in `spin_hot` and 1/4 in `spin_cold`;
/// `jit SECS` runs a machine-code loop from an anonymous mapping named by a perf map;
/// `syscalls SECS` writes a 64 KiB block over and over into an unlinked file. Each
/// prints `ready` first.
const HELPER: &str = r#"
use std::hint::black_box;
use std::io::Write;
use std::time::{Duration, Instant};

#[inline(never)]
fn spin_hot(d: Duration) -> u64 {
    let start = Instant::now();
    let mut x = 1u64;
    while start.elapsed() < d {
        for i in 0..20_000u64 {
            x = black_box(x.wrapping_mul(6364136223846793005).wrapping_add(i));
        }
    }
    x
}

#[inline(never)]
fn spin_cold(d: Duration) -> u64 {
    let start = Instant::now();
    let mut x = 7u64;
    while start.elapsed() < d {
        for i in 0..20_000u64 {
            x = black_box((x ^ i).wrapping_mul(2862933555777941757).rotate_left(5));
        }
    }
    x
}

extern "C" {
    fn mmap(addr: *mut u8, len: usize, prot: i32, flags: i32, fd: i32, off: i64) -> *mut u8;
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let secs: u64 = args[2].parse().unwrap();
    let end = Instant::now() + Duration::from_secs(secs);
    match args[1].as_str() {
        "busy" => {
            ready();
            while Instant::now() < end {
                black_box(spin_hot(Duration::from_millis(30)));
                black_box(spin_cold(Duration::from_millis(10)));
            }
        }
        "jit" => {
            // mov ecx, 1000000; loop: dec ecx; jnz loop; ret
            let code: [u8; 10] = [0xB9, 0x40, 0x42, 0x0F, 0x00, 0xFF, 0xC9, 0x75, 0xFC, 0xC3];
            let page = unsafe { mmap(std::ptr::null_mut(), 4096, 7, 0x22, -1, 0) };
            assert!(page as isize != -1, "mmap failed");
            unsafe { std::ptr::copy_nonoverlapping(code.as_ptr(), page, code.len()) };
            let f: extern "C" fn() = unsafe { std::mem::transmute(page) };
            let map = format!("/tmp/perf-{}.map", std::process::id());
            std::fs::write(&map, format!("{:#x} 0x20 jit_busy_loop\n", page as usize)).unwrap();
            ready();
            while Instant::now() < end {
                for _ in 0..100 {
                    f();
                }
            }
            let _ = std::fs::remove_file(&map);
        }
        "syscalls" => {
            use std::os::unix::fs::FileExt;
            // A file unlinked at once (nothing is left behind when the helper is
            // killed), written over in 64 KiB blocks: the time goes to copying in
            // vfs_write, not to syscall entry and exit as with single bytes.
            let path = std::env::temp_dir().join(format!("flint-busy-{}", std::process::id()));
            let file = std::fs::File::create(&path).unwrap();
            std::fs::remove_file(&path).unwrap();
            let block = vec![b'x'; 64 << 10];
            ready();
            while Instant::now() < end {
                file.write_all_at(&block, 0).unwrap();
            }
        }
        other => panic!("unknown mode {other}"),
    }
}

fn ready() {
    let mut out = std::io::stdout();
    out.write_all(b"ready\n").unwrap();
    out.flush().unwrap();
}
"#;

/// The record tests burn CPU and are timed: one at a time.
fn serial() -> MutexGuard<'static, ()> {
    static LOCK: Mutex<()> = Mutex::new(());
    LOCK.lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

fn scratch(tag: &str) -> super::Scratch {
    super::Scratch::new(&format!("e2e-record-{tag}"))
}

/// Why sampling cannot work here, if it cannot.
fn skip_reason() -> Option<String> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let uid = status
        .lines()
        .find_map(|l| l.strip_prefix("Uid:"))
        .and_then(|l| l.split_whitespace().nth(1))?;
    (uid != "0").then(|| format!("not root (euid {uid}); sampling needs CAP_BPF/CAP_PERFMON"))
}

macro_rules! require_sampling {
    () => {
        if let Some(reason) = skip_reason() {
            eprintln!("SKIP: {reason}");
            return;
        }
    };
}

/// The helper binary, compiled once with frame pointers and debug info.
fn helper() -> &'static Path {
    static HELPER_BIN: OnceLock<PathBuf> = OnceLock::new();
    HELPER_BIN.get_or_init(|| {
        // Under cargo's own temporary folder (kept for the whole run, and made again by
        // the next): one binary, replaced each run, never one per run.
        let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("record-helper");
        std::fs::create_dir_all(&dir).expect("helper dir");
        let pid = std::process::id();
        let src = dir.join(format!("busy-{pid}.rs"));
        std::fs::write(&src, HELPER).expect("helper source");
        let built = dir.join(format!("busy-{pid}"));
        let rustc = std::env::var("RUSTC").unwrap_or_else(|_| "rustc".into());
        let out = Command::new(rustc)
            .args([
                "-O",
                "-C",
                "force-frame-pointers=yes",
                "-g",
                "--edition",
                "2021",
            ])
            .arg(&src)
            .arg("-o")
            .arg(&built)
            .output()
            .expect("rustc runs");
        let _ = std::fs::remove_file(&src);
        assert!(
            out.status.success(),
            "rustc failed: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        // Its name is its command (`comm`), which the tests look for.
        let bin = dir.join("busy");
        std::fs::rename(&built, &bin).expect("helper in place");
        bin
    })
}

/// A running helper; killed when dropped.
struct Helper {
    child: Child,
}

impl Helper {
    fn start(mode: &str, secs: u64) -> Self {
        let mut child = Command::new(helper())
            .args([mode, &secs.to_string()])
            .stdout(Stdio::piped())
            .spawn()
            .expect("helper starts");
        let stdout = child.stdout.take().expect("piped stdout");
        let mut line = String::new();
        BufReader::new(stdout)
            .read_line(&mut line)
            .expect("helper output");
        assert_eq!(line.trim(), "ready", "helper {mode} did not start");
        Self { child }
    }

    fn pid(&self) -> String {
        self.child.id().to_string()
    }

    /// The CPU time the helper has used so far, in seconds: what a sampler at a
    /// frequency can see of it, whatever else the machine is running.
    fn cpu_secs(&self) -> f64 {
        let pid = self.child.id();
        // Nanoseconds on a CPU, where the kernel keeps scheduler statistics.
        if let Ok(text) = std::fs::read_to_string(format!("/proc/{pid}/schedstat"))
            && let Some(ns) = text
                .split_whitespace()
                .next()
                .and_then(|n| n.parse::<f64>().ok())
        {
            return ns / 1e9;
        }
        // Else user and system time in clock ticks (100 a second on Linux).
        let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).expect("helper's stat");
        let after_comm = stat.rsplit_once(')').expect("stat has a comm").1;
        let fields: Vec<&str> = after_comm.split_whitespace().collect();
        let ticks: f64 = fields[11..13]
            .iter()
            .map(|f| f.parse::<f64>().expect("utime and stime"))
            .sum();
        ticks / 100.0
    }
}

/// Asserts that `total` samples at 99 Hz account for at least half of `cpu_secs`
/// seconds of the helper's CPU (and at least 20): a busy helper on a loaded machine
/// gets less than a CPU, and fewer samples, without the sampler losing any.
fn assert_samples_cover(total: i64, cpu_secs: f64, context: &str) {
    let expected = cpu_secs * 99.0;
    eprintln!("{total} samples for {cpu_secs:.2} s of the helper's CPU ({expected:.0} at 99 Hz)");
    assert!(
        total >= 20 && total as f64 >= 0.5 * expected,
        "only {total} samples for {cpu_secs:.2} s of the helper's CPU (about {expected:.0} \
         expected at 99 Hz): {context}"
    );
}

impl Drop for Helper {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn record(args: &[&str]) -> Output {
    let mut all = vec!["record"];
    all.extend_from_slice(args);
    flint(&all)
}

/// Runs `flint record`, failing the test on a non-zero exit; returns stderr.
fn record_ok(args: &[&str]) -> String {
    let out = record(args);
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(
        out.status.success(),
        "flint record {args:?} failed: {stderr}"
    );
    stderr
}

/// Records process `pid` at 99 Hz for `duration` into `out`; returns stderr.
fn record_pid_to_file(pid: &str, duration: &str, out: &Path) -> String {
    record_ok(&[
        "--pid",
        pid,
        "--frequency",
        "99",
        "--duration",
        duration,
        "-o",
        out.to_str().expect("utf-8 path"),
    ])
}

fn read_profile(path: &Path) -> Profile {
    let bytes = std::fs::read(path).expect("profile written");
    profile_model::codec::decode(&bytes).expect("a valid pprof")
}

/// Function names of sample `i`'s stack, leaf first (inlined frames included).
fn stack_names(p: &Profile, i: usize) -> Vec<&str> {
    p.samples
        .stack(i)
        .iter()
        .flat_map(|&loc| p.locations[loc as usize].lines.iter())
        .map(|line| p.str(p.functions[line.function as usize].name))
        .collect()
}

fn label<'a>(p: &'a Profile, i: usize, key: &str) -> Option<&'a str> {
    p.label_sets[p.samples.label_set[i] as usize]
        .iter()
        .find(|l| p.str(l.key) == key)
        .map(|l| p.str(l.str))
}

/// Samples of process `pid` in total, and those with a frame whose name contains each
/// of `names`.
fn shares(p: &Profile, pid: &str, names: &[&str]) -> (i64, Vec<i64>) {
    let mut total = 0;
    let mut hits = vec![0; names.len()];
    for i in 0..p.samples.len() {
        if label(p, i, "pid") != Some(pid) {
            continue;
        }
        let count = p.samples.values[0][i];
        total += count;
        let stack = stack_names(p, i);
        for (n, name) in names.iter().enumerate() {
            if stack.iter().any(|f| f.contains(name)) {
                hits[n] += count;
            }
        }
    }
    (total, hits)
}

#[test]
fn a_75_25_split_between_two_functions_is_recorded_as_75_25() {
    require_sampling!();
    let _serial = serial();
    let dir = scratch("split");
    let out = dir.join("out.pb.gz");
    let helper = Helper::start("busy", 8);
    let pid = helper.pid();
    let before = helper.cpu_secs();
    let stderr = record_pid_to_file(&pid, "4s", &out);
    let used = helper.cpu_secs() - before;
    drop(helper);
    assert!(stderr.contains("99 Hz"), "no status line in {stderr}");
    let profile = read_profile(&out);
    let (total, hits) = shares(&profile, &pid, &["spin_hot", "spin_cold"]);
    // 4 s at 99 Hz on one busy thread: about 400 samples when it has a CPU to itself.
    assert_samples_cover(total, used, &stderr);
    let hot = 100.0 * hits[0] as f64 / total as f64;
    let cold = 100.0 * hits[1] as f64 / total as f64;
    eprintln!("split: {total} samples, spin_hot {hot:.1}%, spin_cold {cold:.1}%");
    assert!((hot - 75.0).abs() <= 8.0, "spin_hot {hot:.1}% of {total}");
    assert!(
        (cold - 25.0).abs() <= 8.0,
        "spin_cold {cold:.1}% of {total}"
    );
    // Every sample of the helper is labelled with its command and node.
    assert!((0..profile.samples.len()).all(|i| label(&profile, i, "pid") == Some(pid.as_str())));
    assert_eq!(label(&profile, 0, "comm"), Some("busy"));
}

#[test]
fn jit_code_is_named_from_the_perf_map() {
    require_sampling!();
    if !cfg!(target_arch = "x86_64") {
        eprintln!("SKIP: the JIT helper's machine code is x86_64");
        return;
    }
    let _serial = serial();
    let dir = scratch("jit");
    let out = dir.join("jit.pb.gz");
    let helper = Helper::start("jit", 6);
    let pid = helper.pid();
    let before = helper.cpu_secs();
    let stderr = record_pid_to_file(&pid, "3s", &out);
    let used = helper.cpu_secs() - before;
    drop(helper);
    let _ = std::fs::remove_file(format!("/tmp/perf-{pid}.map"));
    let profile = read_profile(&out);
    let (total, hits) = shares(&profile, &pid, &["jit_busy_loop"]);
    let share = 100.0 * hits[0] as f64 / total.max(1) as f64;
    eprintln!("jit: {total} samples, jit_busy_loop {share:.1}%");
    assert_samples_cover(total, used, &stderr);
    assert!(
        share >= 80.0,
        "jit_busy_loop in {share:.1}% of {total} samples"
    );
}

#[test]
fn kernel_frames_are_named_from_kallsyms() {
    require_sampling!();
    let _serial = serial();
    let dir = scratch("kernel");
    let out = dir.join("kernel.pb.gz");
    let helper = Helper::start("syscalls", 6);
    let pid = helper.pid();
    record_pid_to_file(&pid, "3s", &out);
    drop(helper);
    let profile = read_profile(&out);
    let mut kernel_frames = 0;
    let mut unnamed = 0;
    let mut write_frames = 0;
    for loc in &profile.locations {
        let Some(mapping) = loc.mapping else { continue };
        if profile.str(profile.mappings[mapping as usize].filename) != "[kernel.kallsyms]" {
            continue;
        }
        for line in &loc.lines {
            let name = profile.str(profile.functions[line.function as usize].name);
            kernel_frames += 1;
            if name.starts_with("[kernel]") {
                unnamed += 1;
            }
            if name.contains("write") {
                write_frames += 1;
            }
        }
    }
    eprintln!("kernel: {kernel_frames} kernel frames, {unnamed} unnamed, {write_frames} *write*");
    assert!(kernel_frames > 0, "no kernel frames at all");
    assert!(write_frames > 0, "no kernel frame names a write function");
    assert!(
        unnamed * 10 <= kernel_frames,
        "{unnamed} of {kernel_frames} kernel frames unnamed"
    );
    // A loop writing 64 KiB blocks spends most of its time copying inside vfs_write
    // (91-92% of the samples here); the rest is syscall entry and exit, and user space.
    let (total, hits) = shares(&profile, &pid, &["vfs_write"]);
    eprintln!("vfs_write in {} of {total} samples", hits[0]);
    assert!(
        hits[0] * 2 >= total,
        "vfs_write in {} of {total} samples of a write loop",
        hits[0]
    );
}

#[test]
fn without_privilege_one_error_line_says_how_to_grant_it() {
    let _serial = serial();
    if skip_reason().is_some() {
        eprintln!("SKIP: not root, cannot switch to an unprivileged user");
        return;
    }
    let paranoid = std::fs::read_to_string("/proc/sys/kernel/perf_event_paranoid")
        .ok()
        .and_then(|t| t.trim().parse::<i32>().ok())
        .unwrap_or(2);
    if paranoid <= 0 {
        eprintln!("SKIP: perf_event_paranoid is {paranoid}: unprivileged users may sample");
        return;
    }
    let Ok(setpriv) = which("setpriv") else {
        eprintln!("SKIP: no setpriv to drop privileges");
        return;
    };
    let out = Command::new(setpriv)
        .args([
            "--reuid",
            "65534",
            "--regid",
            "65534",
            "--clear-groups",
            "--inh-caps=-all",
        ])
        .arg(env!("CARGO_BIN_EXE_flint"))
        .args([
            "record",
            "--all",
            "--duration",
            "1s",
            "-o",
            "/tmp/flint-never-written.pb.gz",
        ])
        .output()
        .expect("setpriv runs");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        !out.status.success(),
        "flint record succeeded as nobody: {stderr}"
    );
    let lines: Vec<&str> = stderr.lines().collect();
    assert_eq!(lines.len(), 1, "not one line: {stderr}");
    assert!(lines[0].starts_with("error: "), "{stderr}");
    assert!(
        lines[0].contains("CAP_BPF") && lines[0].contains("perf_event_paranoid"),
        "{stderr}"
    );
}

fn which(name: &str) -> Result<PathBuf, ()> {
    std::env::var_os("PATH")
        .into_iter()
        .flat_map(|p| std::env::split_paths(&p).collect::<Vec<_>>())
        .map(|d| d.join(name))
        .find(|p| p.is_file())
        .ok_or(())
}

/// A running `flint serve` on a free loopback port; killed when dropped.
struct Server {
    child: Child,
    url: String,
}

impl Server {
    fn start(store: &Path) -> Self {
        let mut child = Command::new(env!("CARGO_BIN_EXE_flint"))
            .args(["serve", "--store"])
            .arg(store)
            .args(["--listen", "127.0.0.1:0"])
            .env_remove("FLINT_TOKEN")
            .stderr(Stdio::piped())
            .stdout(Stdio::null())
            .spawn()
            .expect("flint serve starts");
        let stderr = child.stderr.take().expect("piped stderr");
        let mut lines = BufReader::new(stderr).lines();
        let first = lines.next().expect("a first line").expect("utf-8");
        let url = first
            .split_whitespace()
            .find(|w| w.starts_with("grpc://"))
            .unwrap_or_else(|| panic!("no address in {first:?}"))
            .to_string();
        std::thread::spawn(move || for _ in lines {});
        Self { child, url }
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("runtime")
}

/// The type list and the merged profile of `source`, as a viewer would ask.
fn types_and_merge(
    rt: &tokio::runtime::Runtime,
    source: &dyn capture::ProfileSource,
    query: &str,
) -> (Vec<String>, Profile, usize) {
    rt.block_on(async {
        let types = source
            .profile_types(ALL_TIME)
            .await
            .expect("profile types")
            .iter()
            .map(ToString::to_string)
            .collect();
        let selector = Selector::parse(query).expect("selector");
        let series = source
            .query_range(selector.clone(), ALL_TIME, 1_000_000_000, None)
            .await
            .expect("series");
        let points = series.iter().map(|s| s.points.len()).sum();
        let merged = source
            .query(selector, QueryTime::Merge(ALL_TIME), Progress::default())
            .await
            .expect("merge");
        (types, merged, points)
    })
}

#[test]
fn every_interval_reaches_the_store_and_the_server() {
    require_sampling!();
    let _serial = serial();
    let dir = scratch("outputs");
    let local = dir.join("local");
    let served = dir.join("served");
    let server = Server::start(&served);
    let helper = Helper::start("busy", 8);
    let pid = helper.pid();
    let before = helper.cpu_secs();
    let stderr = record_ok(&[
        "--pid",
        &pid,
        "--frequency",
        "99",
        "--interval",
        "1s",
        "--duration",
        "3s",
        "--store",
        local.to_str().expect("utf-8 path"),
        "--push",
        &server.url,
        "--label",
        "job=e2e",
        "-o",
        dir.join("merged.pb.gz").to_str().expect("utf-8 path"),
    ]);
    let used = helper.cpu_secs() - before;
    drop(helper);
    let status_lines = stderr.lines().filter(|l| l.starts_with("99 Hz")).count();
    assert_eq!(status_lines, 3, "one status line per interval: {stderr}");
    let query = format!("{FLINT_CPU}{{job=\"e2e\"}}");
    let rt = runtime();

    let store = capture::Store::open(&local, capture::StoreOptions::default()).expect("store");
    assert_eq!(store.stats().profiles, 3, "{stderr}");
    let (types, merged, points) = types_and_merge(&rt, &store, &query);
    assert!(types.iter().any(|t| t == FLINT_CPU), "{types:?}");
    assert_eq!(points, 3);
    let (total, hits) = shares(&merged, &pid, &["spin_hot"]);
    assert_samples_cover(total, used, &stderr);
    assert!(hits[0] > total / 2, "{} of {total}", hits[0]);

    let remote =
        capture::RemoteSource::new(&server.url, capture::RemoteOptions::default()).expect("client");
    let (types, merged, points) = types_and_merge(&rt, &remote, &query);
    assert!(types.iter().any(|t| t == FLINT_CPU), "{types:?}");
    assert_eq!(points, 3);
    let (total_remote, _) = shares(&merged, &pid, &["spin_hot"]);
    assert_eq!(total_remote, total, "the server holds what the store holds");

    // The file is the merge of the intervals, spooled on disk while recording; the
    // spool is gone once the file is written.
    let (total_file, _) = shares(&read_profile(&dir.join("merged.pb.gz")), &pid, &[]);
    assert_eq!(total_file, total, "the file holds what the store holds");
    assert_no_spool(&dir);
}

/// Fails when a `flint record -o` spool is left in `dir`.
fn assert_no_spool(dir: &Path) {
    let left: Vec<String> = std::fs::read_dir(dir)
        .expect("the scratch directory")
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.contains(".spool-"))
        .collect();
    assert!(left.is_empty(), "spool left behind: {left:?}");
}

#[test]
fn ctrl_c_ends_the_interval_and_still_writes_the_file() {
    require_sampling!();
    let _serial = serial();
    let dir = scratch("sigint");
    let out = dir.join("sigint.pb.gz");
    let helper = Helper::start("busy", 10);
    let pid = helper.pid();
    let before = helper.cpu_secs();
    let child = Command::new(env!("CARGO_BIN_EXE_flint"))
        .args([
            "record",
            "--pid",
            &pid,
            "--frequency",
            "99",
            "--interval",
            "60s",
            "-o",
        ])
        .arg(&out)
        .stderr(Stdio::piped())
        .spawn()
        .expect("flint record starts");
    std::thread::sleep(Duration::from_secs(2));
    let sent = Instant::now();
    let kill = Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status()
        .expect("kill runs");
    assert!(kill.success());
    let output = child.wait_with_output().expect("flint record exits");
    let took = sent.elapsed();
    let used = helper.cpu_secs() - before;
    drop(helper);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        output.status.success(),
        "exit {:?}: {stderr}",
        output.status
    );
    assert!(took < Duration::from_secs(3), "took {took:?} to stop");
    let profile = read_profile(&out);
    let (total, _) = shares(&profile, &pid, &[]);
    assert_samples_cover(total, used, &stderr);
    assert_no_spool(&dir);
}

#[test]
fn bad_flags_are_one_line_errors() {
    let cases: [(&[&str], &str); 5] = [
        (&["--all", "--duration", "1s"], "nowhere to write"),
        (&["--frequency", "0", "-o", "/tmp/x.pb.gz"], "--frequency"),
        (&["--interval", "0s", "-o", "/tmp/x.pb.gz"], "--interval"),
        (&["--label", "nolabel", "-o", "/tmp/x.pb.gz"], "--label"),
        (&["-o", "/nonexistent-dir/x.pb.gz"], "does not exist"),
    ];
    for (args, expected) in cases {
        let out = record(args);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(!out.status.success(), "{args:?} succeeded");
        assert_eq!(stderr.lines().count(), 1, "{args:?}: {stderr}");
        assert!(
            stderr.starts_with("error: ") && stderr.contains(expected),
            "{args:?}: {stderr}"
        );
    }
    let out = record(&["--pid", "1", "--all", "-o", "/tmp/x.pb.gz"]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        !out.status.success() && stderr.lines().count() == 1,
        "{stderr}"
    );
}

/// The share of `symbol` in `perf report` of `perf.data` (self, by symbol), binaries read under `symfs`.
fn perf_report_share(data: &Path, symfs: &Path, symbol: &str) -> Option<f64> {
    let out = Command::new("perf")
        .args([
            "report",
            "--stdio",
            "--no-children",
            "--sort",
            "symbol",
            "-q",
            "-i",
        ])
        .arg(data)
        .arg("--symfs")
        .arg(symfs)
        .output()
        .ok()?;
    String::from_utf8_lossy(&out.stdout).lines().find_map(|l| {
        let f: Vec<&str> = l.split_whitespace().collect();
        (f.get(2) == Some(&symbol))
            .then(|| f.first()?.strip_suffix('%')?.parse().ok())
            .flatten()
    })
}

#[test]
fn a_stripped_program_recorded_is_named_through_debuginfod_as_perf_report_names_it() {
    use flint_fixture_gen::symbol_parts::programs_or_skip;
    require_sampling!();
    let _serial = serial();
    let dir = scratch("symbolize");
    let Some((c, _)) = programs_or_skip(&dir.join("build")) else {
        return;
    };
    let Some(server) = debuginfod_of(&dir, &c) else {
        return;
    };
    // The stripped program alone: its debug file is only at debuginfod.
    let run = dir.join("run");
    std::fs::create_dir_all(&run).unwrap();
    let stripped = run.join("burn");
    std::fs::copy(&c.stripped, &stripped).unwrap();
    let mut child = Command::new(&stripped)
        .arg("100000000")
        .stdout(Stdio::null())
        .spawn()
        .unwrap();
    // perf records the same run, so that both tools see the same samples' worth of work.
    let data = dir.join("perf.data");
    let perf = Command::new("perf")
        .args([
            "record",
            "-q",
            "-F",
            "499",
            "-p",
            &child.id().to_string(),
            "-o",
        ])
        .arg(&data)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn();
    let recorded = dir.join("recorded.pb.gz");
    let pid = child.id().to_string();
    let out = flint_with_cache(
        &dir,
        &[
            "record",
            "--pid",
            &pid,
            "--duration",
            "3s",
            "--frequency",
            "499",
        ],
        &[
            "--debuginfod",
            &server.url,
            "-o",
            recorded.to_str().unwrap(),
        ],
    );
    let perf_recorded = perf.is_ok_and(|mut perf| {
        let interrupted = Command::new("kill")
            .args(["-INT", &perf.id().to_string()])
            .status()
            .is_ok_and(|s| s.success());
        // perf writes its file, then ends by the signal it was sent.
        let ended = perf.wait().is_ok_and(|s| {
            use std::os::unix::process::ExitStatusExt;
            s.success() || s.signal() == Some(2)
        });
        interrupted && ended
    });
    let _ = child.kill();
    let _ = child.wait();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert!(!stderr.contains("warning"), "{stderr}");
    let top = flint_ok(&["top", "--format", "tsv", recorded.to_str().unwrap()]);
    let cum_pct = |name: &str| -> f64 {
        top.lines()
            .find(|l| l.ends_with(&format!("\t{name}")))
            .and_then(|l| l.split('\t').nth(3)?.parse().ok())
            .unwrap_or(0.0)
    };
    let shares = ["leaf_work", "other_work"].map(cum_pct);
    assert!(shares[0] > 50.0 && shares[1] > 10.0, "{top}");

    // perf report names the stripped program from the unstripped one (same build id).
    let symfs = dir.join("symfs");
    let beside = symfs.join(stripped.strip_prefix("/").unwrap());
    std::fs::create_dir_all(beside.parent().unwrap()).unwrap();
    std::fs::copy(&c.full, &beside).unwrap();
    if !perf_recorded {
        eprintln!("SKIP: perf record did not run; names checked, shares not compared");
        return;
    }
    for (name, flint_share) in ["leaf_work", "other_work"].iter().zip(shares) {
        let perf_share = perf_report_share(&data, &symfs, name).unwrap_or(0.0);
        eprintln!("{name}: flint {flint_share:.1}%, perf report {perf_share:.1}%");
        assert!(
            (flint_share - perf_share).abs() < 5.0,
            "{name}: flint {flint_share:.1}% recorded, perf report {perf_share:.1}%"
        );
    }
}

#[test]
fn no_symbolize_records_addresses_that_debuginfod_names_afterwards() {
    use flint_fixture_gen::symbol_parts::programs_or_skip;
    require_sampling!();
    let _serial = serial();
    let dir = scratch("no-symbolize");
    let Some((c, _)) = programs_or_skip(&dir.join("build")) else {
        return;
    };
    let Some(server) = debuginfod_of(&dir, &c) else {
        return;
    };
    // The unstripped program, gone from this machine once recorded.
    let program = dir.join("burn-full");
    std::fs::copy(&c.full, &program).unwrap();
    let mut child = Command::new(&program)
        .arg("100000000")
        .stdout(Stdio::null())
        .spawn()
        .unwrap();
    let recorded = dir.join("addresses.pb.gz");
    let pid = child.id().to_string();
    let out = flint(&[
        "record",
        "--pid",
        &pid,
        "--duration",
        "1s",
        "--frequency",
        "499",
        "--no-symbolize",
        "-o",
        recorded.to_str().unwrap(),
    ]);
    let _ = child.kill();
    let _ = child.wait();
    std::fs::remove_file(&program).unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let raw = flint_ok(&["top", "--format", "tsv", recorded.to_str().unwrap()]);
    assert!(
        raw.contains("\tburn-full+0x") && !raw.contains("leaf_work"),
        "{raw}"
    );
    let named = dir.join("named.pb.gz");
    let out = flint_with_cache(
        &dir,
        &["symbolize", "--debuginfod", &server.url],
        &["-o", named.to_str().unwrap(), recorded.to_str().unwrap()],
    );
    let summary = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        summary.contains(" debuginfod") && !summary.contains("burn-full ("),
        "{summary}"
    );
    let top = flint_ok(&["top", "--format", "tsv", named.to_str().unwrap()]);
    assert!(top.contains("\tleaf_work\n"), "{top}");
}

/// Debian's debuginfod serving the C test program's debug file, or `None` after a
/// SKIP line.
fn debuginfod_of(
    dir: &Path,
    c: &flint_fixture_gen::symbol_parts::Program,
) -> Option<flint_fixture_gen::symbol_parts::Debuginfod> {
    let served = dir.join("served");
    std::fs::create_dir_all(&served).unwrap();
    std::fs::copy(&c.debug, served.join("c.debug")).unwrap();
    match flint_fixture_gen::symbol_parts::Debuginfod::start(&served, dir, &[&c.build_id]) {
        Ok(server) => Some(server),
        Err(e) => {
            eprintln!("SKIP: {e}");
            None
        }
    }
}

/// Runs flint with `args` then `more`, its debuginfod cache in `dir` and no
/// `DEBUGINFOD_URLS` of the environment.
fn flint_with_cache(dir: &Path, args: &[&str], more: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_flint"))
        .args(args)
        .args(more)
        .env("DEBUGINFOD_CACHE_PATH", dir.join("cache"))
        .env_remove("DEBUGINFOD_URLS")
        .output()
        .unwrap()
}

#[test]
fn an_erlang_vms_perf_map_names_its_jit_frames_afterwards() {
    require_sampling!();
    let _serial = serial();
    let dir = scratch("erlang");
    if !super::compile_burn_erl(&dir) {
        return;
    }
    // The VM writes /tmp/perf-PID.map (+JPperf true: the map and frame pointers).
    let mut vm = Command::new("erl")
        .args(["+JPperf", "true", "-noshell", "-pa"])
        .arg(&*dir)
        .args(["-s", "burn", "start"])
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let mut line = String::new();
    BufReader::new(vm.stdout.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    let pid = line.trim().to_string();
    // The map moved away, as if the profile were read on another machine.
    let map = dir.join(format!("perf-{pid}.map"));
    let moved = std::fs::copy(format!("/tmp/perf-{pid}.map"), &map)
        .and_then(|_| std::fs::remove_file(format!("/tmp/perf-{pid}.map")));
    let recorded = dir.join("beam.pb.gz");
    let out = flint(&[
        "record",
        "--pid",
        &pid,
        "--duration",
        "2s",
        "--frequency",
        "499",
        "-o",
        recorded.to_str().unwrap(),
    ]);
    let _ = vm.kill();
    let _ = vm.wait();
    let _ = std::fs::remove_file(format!("/tmp/jit-{pid}.dump"));
    moved.unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let raw = flint_ok(&["top", "--format", "tsv", recorded.to_str().unwrap()]);
    assert!(!raw.contains("burn:loop/1"), "{raw}");

    let named = dir.join("named.pb.gz");
    let (map, named_s) = (map.to_str().unwrap(), named.to_str().unwrap());
    let summary = flint_ok(&[
        "symbolize",
        "--perf-map",
        map,
        recorded.to_str().unwrap(),
        "-o",
        named_s,
    ]);
    assert!(summary.contains(" perf map"), "{summary}");
    let top = flint_ok(&["top", "--format", "tsv", named_s]);
    let cum_pct = top
        .lines()
        .find(|l| l.ends_with("\t$burn:loop/1"))
        .and_then(|l| l.split('\t').nth(3)?.parse::<f64>().ok());
    assert!(cum_pct.is_some_and(|p| p > 20.0), "{top}");
}

/// A cgroup named as the kubelet names a container's (cgroupfs layout), made in a
/// writable cgroup hierarchy of this machine and removed when dropped.
struct PodCgroup {
    /// The cgroup folders made, innermost last.
    made: Vec<PathBuf>,
}

impl PodCgroup {
    /// `/kubepods/besteffort/pod<uid>/<id>` in the first hierarchy that takes it.
    fn make(uid: &str, id: &str) -> Option<Self> {
        let relative = [
            "kubepods".to_string(),
            "besteffort".into(),
            format!("pod{uid}"),
            id.into(),
        ];
        [
            "/sys/fs/cgroup/pids",
            "/sys/fs/cgroup/unified",
            "/sys/fs/cgroup",
        ]
        .iter()
        .find_map(|hierarchy| {
            let mut cgroup = Self { made: Vec::new() };
            let mut dir = PathBuf::from(hierarchy);
            if !dir.join("cgroup.procs").exists() {
                return None;
            }
            for part in &relative {
                dir.push(part);
                if !dir.exists() {
                    std::fs::create_dir(&dir).ok()?;
                    cgroup.made.push(dir.clone());
                }
            }
            Some(cgroup)
        })
    }

    /// Moves process `pid` into the container's cgroup.
    fn enter(&self, pid: &str) -> bool {
        self.made
            .last()
            .is_some_and(|dir| std::fs::write(dir.join("cgroup.procs"), pid).is_ok())
    }
}

impl Drop for PodCgroup {
    fn drop(&mut self) {
        for dir in self.made.iter().rev() {
            let _ = std::fs::remove_dir(dir);
        }
    }
}

#[test]
fn samples_of_a_pod_are_labelled_with_its_namespace_pod_and_container() {
    require_sampling!();
    let _serial = serial();
    const UID: &str = "0e2e0e2e-1111-4222-8333-444455556666";
    const ID: &str = "e2e0e2e0e2e0e2e0e2e0e2e0e2e0e2e0e2e0e2e0e2e0e2e0e2e0e2e0e2e0e2e0";
    let dir = scratch("pod");
    // The kubelet's logs, faked: /var/log/containers names the container by its id.
    let logs = dir.join("var-log");
    std::fs::create_dir_all(logs.join("containers")).unwrap();
    std::fs::write(
        logs.join(format!("containers/busy-5f7c_e2e_spinner-{ID}.log")),
        "",
    )
    .unwrap();
    let helper = Helper::start("busy", 6);
    let pid = helper.pid();
    let cgroup = PodCgroup::make(UID, ID);
    if !cgroup.as_ref().is_some_and(|c| c.enter(&pid)) {
        eprintln!("SKIP: no writable cgroup hierarchy to put a process in a pod's cgroup");
        return;
    }
    let out = dir.join("out.pb.gz");
    let logs_arg = logs.display().to_string();
    let out_arg = out.display().to_string();
    record_ok(&[
        "--pid",
        &pid,
        "--frequency",
        "99",
        "--duration",
        "2s",
        "--node",
        "node-e2e",
        "--node-logs",
        &logs_arg,
        "-o",
        &out_arg,
    ]);
    drop(helper);
    drop(cgroup);
    let profile = read_profile(&out);
    assert!(!profile.samples.is_empty(), "no samples");
    for i in 0..profile.samples.len() {
        let got = ["namespace", "pod", "container", "container_id", "node"]
            .map(|k| label(&profile, i, k));
        assert_eq!(
            got,
            [
                Some("e2e"),
                Some("busy-5f7c"),
                Some("spinner"),
                Some(ID),
                Some("node-e2e")
            ],
            "sample {i}"
        );
    }
}
