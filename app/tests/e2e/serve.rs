//! `flint serve`, `flint push` and `flint top grpc://…` against the real binary: what
//! goes in through WriteRaw comes out of the queries, with the token enforced, under
//! concurrent load, and across a `kill -9`.

use std::collections::BTreeSet;
use std::io::{BufRead as _, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::Arc;

use capture::{
    Labels, ProfileSink as _, ProfileSource as _, Progress, QueryTime, RemoteOptions, RemoteSource,
    Selector, TimeRange,
};

use super::{fixtures, flint, flint_ok};

const CPU: &str = "process_cpu:cpu:nanoseconds:cpu:nanoseconds:delta";
const FROM: &str = "2000-01-01T00:00:00Z";
/// 2000 to 2100: every fixture's time, in the range a protobuf Timestamp can carry.
const YEARS: TimeRange = TimeRange {
    start_nanos: 946_684_800_000_000_000,
    end_nanos: 4_102_444_800_000_000_000,
};

/// A running `flint serve` on a free loopback port; killed when dropped.
pub(super) struct Server {
    pub(super) child: Child,
    pub(super) url: String,
    /// What it printed before its address: warnings from opening the store.
    warnings: Vec<String>,
}

impl Server {
    fn start(store: &Path, token: Option<&str>) -> Self {
        let mut args = vec!["serve".to_string(), "--store".into()];
        args.push(store.display().to_string());
        if let Some(t) = token {
            args.extend(["--token".into(), t.into()]);
        }
        Self::spawn(Command::new(env!("CARGO_BIN_EXE_flint")).args(args))
    }

    /// Runs `cmd` (a `flint serve` without `--listen`, perhaps through a shell)
    /// listening on a free loopback port, and reads where it listens.
    pub(super) fn spawn(cmd: &mut Command) -> Self {
        cmd.args(["--listen", "127.0.0.1:0"])
            .env_remove("FLINT_TOKEN")
            .stderr(Stdio::piped())
            .stdout(Stdio::null());
        let mut child = cmd.spawn().expect("flint serve starts");
        let stderr = child.stderr.take().expect("piped stderr");
        let mut lines = BufReader::new(stderr).lines();
        // Recovery warnings (a torn write cut off after a crash) come before the address.
        let mut warnings = Vec::new();
        let url = loop {
            let line = lines
                .next()
                .unwrap_or_else(|| {
                    panic!("flint serve ended before saying where it listens; it said {warnings:?}")
                })
                .expect("utf-8");
            if let Some(url) = line.split_whitespace().find(|w| w.starts_with("grpc://")) {
                break url.to_string();
            }
            warnings.push(line);
        };
        // Keep draining stderr so the server never blocks on a full pipe.
        std::thread::spawn(move || for _ in lines {});
        Self {
            child,
            url,
            warnings,
        }
    }

    /// SIGKILL, as a crash.
    fn kill(mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

pub(super) fn temp_store(tag: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("flint-e2e-store-{tag}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    dir
}

fn fixture(name: &str) -> String {
    fixtures().join(name).display().to_string()
}

pub(super) fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(4)
        .enable_all()
        .build()
        .expect("runtime")
}

pub(super) fn client(url: &str) -> Arc<RemoteSource> {
    Arc::new(RemoteSource::new(url, RemoteOptions::default()).expect("client"))
}

#[test]
fn pushed_profiles_answer_queries_as_the_files_do() {
    let store = temp_store("push");
    let server = Server::start(&store, None);
    assert!(server.warnings.is_empty(), "{:?}", server.warnings);
    let files = ["cpu-1.pb.gz", "cpu-2.pb.gz", "cpu-3.pb.gz", "heap.pb.gz"].map(fixture);
    let mut push = vec!["push"];
    push.extend(files.iter().map(String::as_str));
    // A file named twice is sent once.
    push.push(&files[0]);
    push.extend(["--to", &server.url, "--label", "job=e2e"]);
    let out = flint(&push);
    let said = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{said}");
    assert!(said.starts_with("pushed 4 profiles"), "{said}");
    // The server's merge of the CPU profiles prints what the files print, row for row.
    let remote = flint_ok(&["top", &server.url, "--from", FROM, "-q", CPU]);
    let local_cpu = flint_ok(&["top", &files[0], &files[1], &files[2]]);
    // The header's duration differs: the server's merge spans the profiles' range,
    // where merging files sums their durations (as pprof does).
    let rows = |text: &str| -> String {
        text.lines()
            .skip_while(|l| !l.starts_with("Showing nodes"))
            .collect::<Vec<_>>()
            .join("\n")
    };
    assert!(remote.contains("Type: cpu"), "{remote}");
    assert_eq!(rows(&remote), rows(&local_cpu));
    // flint fold of the server's merge folds what the files fold.
    let sorted = |text: String| -> Vec<String> {
        let mut lines: Vec<String> = text.lines().map(str::to_string).collect();
        lines.sort();
        lines
    };
    let remote_folded = flint_ok(&["fold", &server.url, "--from", FROM, "-q", CPU]);
    let local_folded = flint_ok(&["fold", &files[0], &files[1], &files[2]]);
    assert_eq!(sorted(remote_folded), sorted(local_folded));
    // The heap profile is a `memory` type (no duration: not a delta), as Parca names it.
    let heap_q = "memory:inuse_space:bytes:space:bytes{job=\"e2e\"}";
    let remote = flint_ok(&["top", &server.url, "--from", FROM, "-q", heap_q]);
    let local = flint_ok(&["top", "-s", "inuse_space", &files[3]]);
    assert_eq!(remote, local);
    // Series: one line per profile time, summed over everything.
    let series = flint_ok(&[
        "series",
        &server.url,
        "--from",
        FROM,
        "-q",
        CPU,
        "--step",
        "1ns",
        "--format",
        "tsv",
    ]);
    assert_eq!(series.lines().count(), 1 + 3, "{series}");
    // No data and a bad query get one-line errors.
    let out = flint(&[
        "top",
        &server.url,
        "--from",
        FROM,
        "-q",
        &format!("{CPU}{{job=\"none\"}}"),
    ]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success() && err.contains("no data"), "{err}");
    let out = flint(&["top", &server.url, "-q", "cpu{"]);
    assert!(!out.status.success());
    drop(server);
    // The store directory itself answers the same, once the server has let it go.
    let dir = store.display().to_string();
    let from_store = flint_ok(&["top", &dir, "-q", CPU]);
    assert_eq!(rows(&from_store), rows(&local_cpu));
    let series = flint_ok(&[
        "series", &dir, "-q", CPU, "--step", "1ns", "--format", "tsv",
    ]);
    assert_eq!(series.lines().count(), 1 + 3, "{series}");
    let _ = std::fs::remove_dir_all(store);
}

#[test]
fn a_token_is_required_when_the_server_has_one() {
    let store = temp_store("token");
    let server = Server::start(&store, Some("s3cret"));
    let cpu = fixture("cpu-1.pb.gz");
    let out = flint(&["push", &cpu, "--to", &server.url]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "push without the token must fail");
    assert!(err.starts_with("error: ") && err.contains("token"), "{err}");
    assert_eq!(err.lines().count(), 1, "{err}");
    flint_ok(&["push", &cpu, "--to", &server.url, "--token", "s3cret"]);
    let out = Command::new(env!("CARGO_BIN_EXE_flint"))
        .args(["top", &server.url, "--from", FROM, "-n", "1"])
        .env("FLINT_TOKEN", "s3cret")
        .output()
        .expect("runs");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let out = flint(&["top", &server.url, "--from", FROM, "--token", "wrong"]);
    assert!(!out.status.success());
    drop(server);
    let _ = std::fs::remove_dir_all(store);
}

/// Labels of profile number `i` of writer `w`.
fn labels(w: usize, i: usize) -> Labels {
    Labels::from([
        ("__name__".to_string(), "process_cpu".to_string()),
        ("writer".to_string(), w.to_string()),
        ("seq".to_string(), i.to_string()),
    ])
}

/// Every (writer, seq) stored, read back through a series query summed by both.
async fn stored(remote: &RemoteSource) -> BTreeSet<(String, String)> {
    let selector = Selector::parse(CPU).expect("selector");
    let series = remote
        .query_range(
            selector,
            YEARS,
            1_000_000_000,
            Some(vec!["writer".into(), "seq".into()]),
        )
        .await
        .expect("series");
    series
        .iter()
        .map(|s| {
            let get = |k: &str| s.labels.get(k).cloned().unwrap_or_default();
            (get("writer"), get("seq"))
        })
        .collect()
}

#[test]
fn eight_writers_and_four_readers_lose_nothing() {
    const WRITERS: usize = 8;
    const PER_WRITER: usize = 1000;
    let store = temp_store("load");
    let server = Server::start(&store, None);
    let bytes = Arc::new(std::fs::read(fixtures().join("cpu-1.pb.gz")).expect("fixture"));
    let remote = client(&server.url);
    let rt = runtime();
    rt.block_on(async {
        let mut writers = Vec::new();
        for w in 0..WRITERS {
            let (remote, bytes) = (remote.clone(), bytes.clone());
            writers.push(tokio::spawn(async move {
                for i in 0..PER_WRITER {
                    remote
                        .write_raw(labels(w, i), bytes.as_ref().clone())
                        .await
                        .expect("acknowledged");
                }
            }));
        }
        let stop = Arc::new(std::sync::atomic::AtomicBool::new(false));
        let mut readers = Vec::new();
        for _ in 0..4 {
            let (remote, stop) = (remote.clone(), stop.clone());
            readers.push(tokio::spawn(async move {
                let selector = Selector::parse(CPU).expect("selector");
                let mut answered = 0;
                while !stop.load(std::sync::atomic::Ordering::Relaxed) {
                    // What a window polling the server asks: series, and label values.
                    let series = remote
                        .query_range(
                            selector.clone(),
                            YEARS,
                            1_000_000_000,
                            Some(vec!["writer".into()]),
                        )
                        .await;
                    let values = remote
                        .values("writer".into(), selector.clone(), YEARS)
                        .await;
                    for result in [series.map(|_| ()), values.map(|_| ())] {
                        match result {
                            Ok(()) | Err(capture::SourceError::NoData) => answered += 1,
                            Err(e) => panic!("a reader failed: {e}"),
                        }
                    }
                }
                answered
            }));
        }
        for w in writers {
            w.await.expect("writer");
        }
        stop.store(true, std::sync::atomic::Ordering::Relaxed);
        for r in readers {
            assert!(r.await.expect("reader") > 0, "every reader got answers");
        }
        let all = stored(&remote).await;
        assert_eq!(all.len(), WRITERS * PER_WRITER);
        // And their sum is exactly what was written.
        let one = profile_model::codec::decode(&bytes)
            .expect("fixture")
            .total(1);
        let merged = remote
            .query(
                Selector::parse(&format!("{CPU}{{writer=\"3\"}}")).expect("selector"),
                QueryTime::Merge(YEARS),
                Progress::default(),
            )
            .await
            .expect("merge");
        assert_eq!(merged.total(0), one * PER_WRITER as i64);
    });
    drop(server);
    let _ = std::fs::remove_dir_all(store);
}

#[test]
fn kill_9_during_ingest_keeps_every_acknowledged_profile() {
    let store = temp_store("kill");
    let server = Server::start(&store, None);
    let bytes = Arc::new(std::fs::read(fixtures().join("cpu-2.pb.gz")).expect("fixture"));
    let remote = client(&server.url);
    let rt = runtime();
    let acked = Arc::new(std::sync::Mutex::new(BTreeSet::new()));
    rt.block_on(async {
        let mut writers = Vec::new();
        for w in 0..4 {
            let (remote, bytes, acked) = (remote.clone(), bytes.clone(), acked.clone());
            writers.push(tokio::spawn(async move {
                for i in 0.. {
                    if remote
                        .write_raw(labels(w, i), bytes.as_ref().clone())
                        .await
                        .is_err()
                    {
                        break;
                    }
                    acked
                        .lock()
                        .expect("lock")
                        .insert((w.to_string(), i.to_string()));
                }
            }));
        }
        // Let ingest run, then crash the server in the middle of it.
        while acked.lock().expect("lock").len() < 300 {
            tokio::time::sleep(std::time::Duration::from_millis(20)).await;
        }
        server.kill();
        for w in writers {
            w.await.expect("writer");
        }
    });
    let acked = acked.lock().expect("lock").clone();
    let server = Server::start(&store, None);
    // A write torn by the crash may be cut off; it was never acknowledged.
    for w in &server.warnings {
        assert!(
            w.starts_with("warning: ") && w.contains("of an incomplete write at offset"),
            "unexpected warning on reopening: {w}"
        );
    }
    let remote = client(&server.url);
    let after = rt.block_on(stored(&remote));
    let lost: Vec<_> = acked.difference(&after).collect();
    assert!(
        lost.is_empty(),
        "{} acknowledged profiles lost: {lost:?}",
        lost.len()
    );
    assert!(after.len() >= acked.len());
    drop(server);
    let _ = std::fs::remove_dir_all(store);
}
