//! `flint serve` within a memory budget, against the real binary: a gzip bomb is
//! refused before it inflates; and, as root where memory cgroups are writable, the
//! seed's storm (eight full-range merges of four hours of profiles, with pushes and a
//! gzip bomb during them, in a 256 MiB cgroup) leaves the server alive, each merge
//! answered correctly or refused as short of memory, every acknowledged push stored.

use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use capture::{Labels, ProfileSink as _, SourceError};
use flint_fixture_gen::{SERIES_UNIVERSE, Scratch, SeriesParams, Universe, series_profile};

use super::serve::{Server, client, runtime, temp_store};
use super::{fixtures, flint};

/// 2023-11-14T10:00:00Z: the series' first profile, at the synthetic day's busy hours
/// (about 3,200 samples a profile).
const START_NANOS: i64 = 1_699_956_000_000_000_000;
const FROM: &str = "2023-11-14T00:00:00Z";
const TO: &str = "2023-11-16T00:00:00Z";

/// A gzip stream that inflates to `mib` MiB of valid, empty pprof (empty string-table
/// entries), a few MB on the wire.
fn gzip_bomb(mib: usize) -> Vec<u8> {
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::best());
    let chunk = [0x32u8, 0x00].repeat(1 << 19);
    for _ in 0..mib {
        gz.write_all(&chunk).unwrap();
    }
    gz.finish().unwrap()
}

fn cpu_labels(extra: Option<(&str, String)>) -> Labels {
    let mut labels = Labels::from([("__name__".to_string(), "process_cpu".to_string())]);
    labels.extend(extra.map(|(k, v)| (k.to_string(), v)));
    labels
}

/// The peak resident size of process `pid`, in KiB.
fn peak_rss_kib(pid: u32) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap();
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .unwrap()
}

fn serve(store: &Path) -> Command {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_flint"));
    cmd.args(["serve", "--store"]).arg(store);
    cmd
}

#[test]
fn a_gzip_bomb_is_refused_before_it_inflates() {
    let store = temp_store("bomb");
    let server = Server::spawn(serve(&store).args(["--max-memory", "256MiB"]));
    let remote = client(&server.url);
    let rt = runtime();
    let refused = rt
        .block_on(remote.write_raw(cpu_labels(None), gzip_bomb(1024)))
        .unwrap_err();
    assert!(
        matches!(&refused, SourceError::ResourceExhausted(m) if m.contains("inflates to 1024 MiB") && m.contains("256 MiB")),
        "{refused:?}"
    );
    let good = std::fs::read(fixtures().join("cpu-1.pb.gz")).unwrap();
    rt.block_on(remote.write_raw(cpu_labels(None), good))
        .unwrap();
    let peak = peak_rss_kib(server.child.id());
    assert!(peak < 64 << 10, "the server peaked at {peak} KiB");
    let _ = std::fs::remove_dir_all(store);
}

/// A memory cgroup of its own for a test, removed when dropped.
struct Cgroup {
    dir: PathBuf,
}

impl Cgroup {
    /// A cgroup (v2, else v1) limited to `bytes`; why not where that cannot be made.
    fn new(name: &str, bytes: u64) -> Result<Self, String> {
        let v2 = std::fs::read_to_string("/sys/fs/cgroup/cgroup.subtree_control")
            .is_ok_and(|c| c.split_whitespace().any(|x| x == "memory"));
        let (dir, limit) = if v2 {
            (Path::new("/sys/fs/cgroup").join(name), "memory.max")
        } else if Path::new("/sys/fs/cgroup/memory/memory.limit_in_bytes").exists() {
            (
                Path::new("/sys/fs/cgroup/memory").join(name),
                "memory.limit_in_bytes",
            )
        } else {
            return Err("no memory cgroup controller here".into());
        };
        std::fs::create_dir_all(&dir)
            .map_err(|e| format!("cannot make {} (needs root): {e}", dir.display()))?;
        let group = Self { dir };
        std::fs::write(group.dir.join(limit), bytes.to_string())
            .map_err(|e| format!("cannot set {limit}: {e}"))?;
        Ok(group)
    }

    /// `cmd` run inside the group: a shell joins it, then becomes the command.
    fn run(&self, cmd: &Command) -> Command {
        let mut shell = Command::new("sh");
        shell
            .arg("-c")
            .arg(format!(
                "echo $$ > '{}' && exec \"$0\" \"$@\"",
                self.dir.join("cgroup.procs").display()
            ))
            .arg(cmd.get_program())
            .args(cmd.get_args());
        shell
    }
}

impl Drop for Cgroup {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir(&self.dir);
    }
}

/// Four hours of 10-second profiles of 3,200 samples, as `flint-fixture-gen series`
/// writes them.
fn four_hours(dir: &Path) {
    let universe = Universe::new(&SERIES_UNIVERSE).unwrap();
    let params = SeriesParams {
        samples: 3200,
        start_nanos: START_NANOS,
        step_secs: 10,
        seed: 1,
    };
    std::thread::scope(|s| {
        for t in 0..2u64 {
            let (universe, params) = (&universe, &params);
            s.spawn(move || {
                for i in (t..1440).step_by(2) {
                    let p = series_profile(universe, params, i);
                    let (_, gz) = flint_fixture_gen::encode_gz(&p).unwrap();
                    std::fs::write(dir.join(format!("{i:07}.pb.gz")), gz).unwrap();
                }
            });
        }
    });
}

#[test]
fn eight_full_range_merges_in_256_mib_leave_the_server_alive() {
    let cgroup = match Cgroup::new(&format!("flint-e2e-oom-{}", std::process::id()), 256 << 20) {
        Ok(c) => c,
        Err(why) => {
            println!("SKIP eight_full_range_merges_in_256_mib_leave_the_server_alive: {why}");
            return;
        }
    };
    let hours = Scratch::new("oom-hours");
    four_hours(&hours);
    let expected = flint(&["fold", &hours.display().to_string()]);
    assert!(expected.status.success());
    let store = temp_store("oom");
    let mut server = Server::spawn(&mut cgroup.run(&serve(&store)));
    let url = server.url.clone();
    let pushed = flint(&["push", &hours.display().to_string(), "--to", &server.url]);
    assert!(
        pushed.status.success(),
        "{}",
        String::from_utf8_lossy(&pushed.stderr)
    );

    let fold = || {
        Command::new(env!("CARGO_BIN_EXE_flint"))
            .args(["fold", &url, "--from", FROM, "--to", TO])
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap()
    };
    let merges: Vec<_> = (0..8).map(|_| fold()).collect();
    // Pushes during the storm: Go profiles under their own label, and a gzip bomb.
    let cpu = fixtures().join("cpu-1.pb.gz").display().to_string();
    let acknowledged: Vec<usize> = (0..6)
        .filter(|i| {
            let label = format!("storm={i}");
            flint(&["push", &cpu, "--to", &server.url, "--label", &label])
                .status
                .success()
        })
        .collect();
    let bomb = runtime().block_on(client(&server.url).write_raw(cpu_labels(None), gzip_bomb(1024)));
    assert!(
        matches!(bomb, Err(SourceError::ResourceExhausted(_))),
        "{bomb:?}"
    );
    let mut answered = 0;
    let mut refusals = std::collections::BTreeSet::new();
    for merge in merges {
        let out = merge.wait_with_output().unwrap();
        let said = String::from_utf8_lossy(&out.stderr);
        if out.status.success() {
            assert!(out.stdout == expected.stdout, "a merge answered wrong");
            answered += 1;
        } else {
            assert!(said.contains("short of memory"), "{said}");
            refusals.insert(
                said.split("short of memory: ")
                    .nth(1)
                    .unwrap_or("")
                    .trim()
                    .to_string(),
            );
        }
    }
    assert!(
        server.child.try_wait().unwrap().is_none(),
        "the server died"
    );
    assert!(answered >= 1, "no merge answered");
    let after = fold().wait_with_output().unwrap();
    assert!(
        after.status.success(),
        "{}",
        String::from_utf8_lossy(&after.stderr)
    );
    assert!(
        after.stdout == expected.stdout,
        "the merge after the storm answered wrong"
    );
    assert!(
        !acknowledged.is_empty(),
        "no push was acknowledged during the storm"
    );
    for i in acknowledged {
        let query = format!("process_cpu:cpu:nanoseconds:cpu:nanoseconds:delta{{storm=\"{i}\"}}");
        let out = flint(&[
            "top",
            &server.url,
            "--from",
            "2000-01-01T00:00:00Z",
            "-q",
            &query,
        ]);
        assert!(
            out.status.success(),
            "push {i}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    println!(
        "storm: {answered} of 8 merges answered, the rest refused ({refusals:?}); server peak {} MiB",
        peak_rss_kib(server.child.id()) >> 10
    );
    drop(server);
    let _ = std::fs::remove_dir_all(store);
}
