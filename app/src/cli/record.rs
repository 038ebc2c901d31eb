//! `flint record`: samples the CPUs of this machine (all processes or some) and writes
//! one profile per interval to flint's store and/or a server, and all of them merged to
//! a file (spooled on disk while recording, see [`super::spool`]).

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use capture::recorder::{
    Backend, CaptureError, HostPaths, Kubelet, PROFILE_NAME, Recorder, RecorderOptions,
    SamplerOptions, Target,
};
use capture::selector::is_label_name;
use capture::store::{Store, StoreOptions};
use capture::symbolize::debuginfod::DebuginfodOptions;
use capture::symbolize::{Repeated, SymbolSources};
use capture::{Labels, ProfileSink as _, RemoteSource};
use clap::Args;
use profile_model::codec::{DecodeOptions, encode_gzip};

use super::CliError;
use super::remote::{ConnectArgs, positive_duration, runtime};
use super::spool::{Spool, parent_dir};

/// Arguments of `flint record`.
#[derive(Debug, Args)]
pub struct RecordArgs {
    /// Sample only these processes (and all their threads); repeatable.
    #[arg(long = "pid", value_name = "PID", num_args = 1.., conflicts_with = "all")]
    pids: Vec<u32>,
    /// Sample every process (the default when no --pid is given).
    #[arg(long)]
    all: bool,
    /// Samples per second per CPU (1 to 10000).
    #[arg(long, default_value_t = 19, value_name = "HZ")]
    frequency: u64,
    /// Entries of each BPF stack map (per generation): more entries, fewer samples
    /// lost to stack-map collisions (shown in the status line), more kernel memory
    /// (about 1 KiB each).
    #[arg(long, default_value_t = 8192, value_name = "N", value_parser = clap::value_parser!(u32).range(64..=1_048_576))]
    stack_map_entries: u32,
    /// Stop after this long, e.g. 30s, 5m; default: until Ctrl-C or SIGTERM.
    #[arg(long, value_name = "DURATION")]
    duration: Option<String>,
    /// Length of one profile, e.g. 10s.
    #[arg(long, default_value = "10s", value_name = "DURATION")]
    interval: String,
    /// Kernel mechanism: BPF with a perf fallback, or one of them.
    #[arg(long, value_enum, default_value = "auto")]
    backend: BackendArg,
    /// Write all intervals merged into this file (gzipped pprof) at the end; until
    /// then they are kept in `.FILE.spool-PID` next to it.
    #[arg(short = 'o', long = "output", value_name = "FILE.pb.gz")]
    output: Option<PathBuf>,
    /// Store each interval's profile in flint's store in this directory.
    #[arg(long, value_name = "DIR")]
    store: Option<PathBuf>,
    /// Send each interval's profile to this server (WriteRaw): `grpc://HOST:PORT` or
    /// `https://HOST`.
    #[arg(long, value_name = "URL")]
    push: Option<String>,
    /// Profile name (`__name__`) in the store and on the server.
    #[arg(long, default_value = PROFILE_NAME)]
    name: String,
    /// Label of every stored or pushed profile, `NAME=VALUE` (repeatable).
    #[arg(long = "label", value_name = "NAME=VALUE")]
    labels: Vec<String>,
    /// The `node` label of every sample; default: the host name (in a container, the
    /// pod's: give the node's, e.g. from the downward API's `spec.nodeName`).
    #[arg(long, value_name = "NAME")]
    node: Option<String>,
    /// Where the node's logs are: the kubelet's `pods/` and `containers/` folders in it
    /// name the namespace, pod and container of processes in Kubernetes pods.
    #[arg(long, value_name = "DIR", default_value = "/var/log")]
    node_logs: PathBuf,
    /// The node's kubelet, asked (`URL/pods`) for the names of pods whose logs are not
    /// under --node-logs, e.g. `https://$(NODE_IP):10250`.
    #[arg(long, value_name = "URL")]
    kubelet: Option<String>,
    /// A bearer token for the kubelet, e.g. the service account's
    /// `/var/run/secrets/kubernetes.io/serviceaccount/token`.
    #[arg(long, value_name = "FILE", requires = "kubelet")]
    kubelet_token_file: Option<PathBuf>,
    /// Accept the kubelet's certificate unchecked (kubelets serve self-signed ones).
    #[arg(long, requires = "kubelet")]
    kubelet_insecure_tls: bool,
    /// Leave binaries' code as addresses with build ids, for the reader to symbolize
    /// (`flint serve --debuginfod`, `flint symbolize`); kernel and JIT frames are named.
    #[arg(long)]
    no_symbolize: bool,
    /// debuginfod server asked for binaries stripped on this machine (repeatable; also
    /// `DEBUGINFOD_URLS`); cached in `DEBUGINFOD_CACHE_PATH` or ~/.cache/debuginfod_client.
    #[arg(
        long = "debuginfod",
        value_name = "URL",
        conflicts_with = "no_symbolize"
    )]
    debuginfod: Vec<String>,
    #[command(flatten)]
    connect: ConnectArgs,
}

#[derive(Debug, Clone, Copy, clap::ValueEnum)]
enum BackendArg {
    Auto,
    Bpf,
    Perf,
}

/// Where each interval goes.
struct Outputs {
    /// The output file and the spool of its intervals.
    file: Option<(PathBuf, Spool)>,
    /// How spooled intervals are read back.
    decode: DecodeOptions,
    store: Option<Store>,
    push: Option<(RemoteSource, tokio::runtime::Runtime)>,
    labels: Labels,
    /// Intervals that could not be written somewhere, with the first reason.
    failures: usize,
    first_failure: Option<String>,
}

/// Runs `flint record` until `--duration`, Ctrl-C or SIGTERM (the interval under way
/// is finished and written), or until every `--pid` has exited.
pub fn run(args: &RecordArgs, max_decompressed_bytes: u64) -> Result<(), CliError> {
    let options = recorder_options(args)?;
    let labels = series_labels(args)?;
    if args.output.is_none() && args.store.is_none() && args.push.is_none() {
        return Err(
            "nowhere to write the profiles: give -o FILE.pb.gz, --store DIR or --push URL".into(),
        );
    }
    if let Some(path) = &args.output {
        check_output_path(path)?;
    }
    let store = args
        .store
        .as_deref()
        .map(|dir| Store::open(dir, StoreOptions::default()))
        .transpose()
        .map_err(|e| format!("--store: {e}"))?;
    let push = match &args.push {
        Some(url) => Some((
            args.connect
                .connect(url, max_decompressed_bytes)
                .map_err(|e| format!("--push: {e}"))?,
            runtime()?,
        )),
        None => None,
    };
    let file = match &args.output {
        Some(path) => Some((path.clone(), Spool::create(path)?)),
        None => None,
    };
    let quit_note = file.as_ref().map(|(_, spool)| {
        format!(
            "the intervals recorded so far are kept in {} (flint top DIR merges them)",
            spool.dir().display()
        )
    });
    let mut outputs = Outputs {
        file,
        decode: DecodeOptions {
            max_decompressed_bytes,
            ..DecodeOptions::default()
        },
        store,
        push,
        labels,
        failures: 0,
        first_failure: None,
    };

    let started = Recorder::open(options)
        .map_err(|e| open_error(&e))
        .and_then(|recorder| {
            let signals = runtime()?;
            watch_signals(&signals, recorder.stop_flag(), quit_note)?;
            Ok((recorder, signals))
        });
    let (mut recorder, signals) = match started {
        Ok(started) => started,
        Err(e) => {
            outputs.discard();
            return Err(e.into());
        }
    };
    let backend = backend_name(recorder.backend());
    if let Some(reason) = recorder.fallback_reason() {
        eprintln!("warning: BPF unavailable, sampling with perf: {reason}");
    }
    eprintln!(
        "flint record: sampling {} at {} Hz with {backend}, one profile every {}{}; Ctrl-C stops",
        match &args.pids[..] {
            [] => "all processes".to_string(),
            pids => format!(
                "pid {}",
                pids.iter()
                    .map(u32::to_string)
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
        },
        args.frequency,
        args.interval,
        args.duration
            .as_deref()
            .map(|d| format!(" for {d}"))
            .unwrap_or_default(),
    );

    let mut intervals = 0usize;
    let mut samples = 0u64;
    let mut failed = None;
    let stripped = stripped_names(args);
    while !recorder.is_finished() {
        match recorder.next_interval() {
            Ok(mut interval) => {
                intervals += 1;
                samples += interval.report.samples;
                for w in stripped.iter().flat_map(|s| s.name(&mut interval.profile)) {
                    eprintln!("warning: symbols: {w}");
                }
                outputs.write(&interval.profile, intervals);
                eprintln!("{}", interval.status_line());
            }
            Err(e) => {
                failed = Some(format!("sampling stopped: {e}"));
                break;
            }
        }
    }
    drop(recorder);
    drop(signals);

    let written = outputs.finish()?;
    eprintln!(
        "flint record: {intervals} interval{}, {} samples{written}",
        if intervals == 1 { "" } else { "s" },
        profile_model::units::thousands(samples),
    );
    if let Some(e) = failed {
        return Err(e.into());
    }
    if outputs.failures > 0 {
        return Err(format!(
            "{} of {intervals} intervals could not be written: {}",
            outputs.failures,
            outputs.first_failure.unwrap_or_default()
        )
        .into());
    }
    Ok(())
}

/// What names the code of binaries stripped on this machine: debuginfod, when a
/// server is configured (and `--no-symbolize` is not given).
fn stripped_names(args: &RecordArgs) -> Option<Repeated> {
    let debuginfod =
        DebuginfodOptions::from_env(&args.debuginfod).filter(|_| !args.no_symbolize)?;
    Some(Repeated::new(SymbolSources {
        debuginfod: Some(debuginfod),
        ..SymbolSources::default()
    }))
}

impl Outputs {
    /// Sends one interval's profile everywhere it goes; failures are reported and
    /// counted, and recording goes on.
    fn write(&mut self, profile: &profile_model::Profile, n: usize) {
        let mut errors = Vec::new();
        if let Some((_, spool)) = &mut self.file
            && let Err(e) = spool.add(profile)
        {
            errors.push(format!("spooling: {e}"));
        }
        if self.store.is_some() || self.push.is_some() {
            let bytes = encode_gzip(profile);
            if let Some(store) = &self.store
                && let Err(e) = store.write(self.labels.clone(), &bytes)
            {
                errors.push(format!("store: {e}"));
            }
            if let Some((remote, rt)) = &self.push
                && let Err(e) = rt.block_on(remote.write_raw(self.labels.clone(), bytes))
            {
                errors.push(format!("push to {}: {e}", remote.url()));
            }
        }
        if !errors.is_empty() {
            let message = errors.join("; ");
            eprintln!("warning: interval {n}: {message}");
            self.failures += 1;
            self.first_failure.get_or_insert(message);
        }
    }

    /// Removes the spool of a recording that never started (it holds nothing).
    fn discard(&mut self) {
        if let Some((_, spool)) = self.file.take() {
            let _ = spool.remove();
        }
    }

    /// Writes the merged file (atomically: a temporary file renamed over the target)
    /// and removes the spool; when the file cannot be written, the spool is kept and
    /// the error says where. Returns what to add to the summary line.
    fn finish(&mut self) -> Result<String, String> {
        let mut written = String::new();
        if let Some((path, spool)) = self.file.take() {
            let result = spool
                .merged(self.decode)
                .and_then(|merged| write_atomically(&path, &encode_gzip(&merged)));
            if let Err(e) = result {
                return Err(format!(
                    "{e}; the {} recorded intervals are kept in {} (flint top DIR merges them)",
                    spool.intervals(),
                    spool.dir().display()
                ));
            }
            if let Err(e) = spool.remove() {
                eprintln!("warning: {e}");
            }
            written.push_str(&format!(" written to {}", path.display()));
        }
        if let Some(store) = &self.store {
            let held = store.stats().profiles;
            written.push_str(&format!(
                "{} stored in {} (which holds {held} profile{})",
                if written.is_empty() { "" } else { "," },
                store.dir().display(),
                if held == 1 { "" } else { "s" }
            ));
        }
        if let Some((remote, _)) = &self.push {
            written.push_str(&format!(
                "{} pushed to {}",
                if written.is_empty() { "" } else { "," },
                remote.url()
            ));
        }
        Ok(written)
    }
}

/// The sampler and session options the flags ask for.
fn recorder_options(args: &RecordArgs) -> Result<RecorderOptions, String> {
    if !(1..=10_000).contains(&args.frequency) {
        return Err(format!(
            "--frequency {}: must be between 1 and 10000 Hz",
            args.frequency
        ));
    }
    let interval = positive_duration("--interval", &args.interval)?;
    let duration = args
        .duration
        .as_deref()
        .map(|d| positive_duration("--duration", d))
        .transpose()?;
    let target = if args.pids.is_empty() {
        Target::All
    } else {
        Target::Pids(args.pids.clone())
    };
    let backend = match args.backend {
        BackendArg::Auto => Backend::Auto,
        BackendArg::Bpf => Backend::Bpf,
        BackendArg::Perf => Backend::Perf,
    };
    // The BPF maps and perf rings must hold one interval: scale them past 10 s at 19 Hz.
    let defaults = SamplerOptions::default();
    let ring_pages = ring_pages_for(args.frequency, interval, defaults.perf_ring_pages);
    Ok(RecorderOptions {
        sampler: SamplerOptions {
            frequency_hz: args.frequency,
            target,
            backend,
            perf_ring_pages: ring_pages,
            stack_map_entries: args.stack_map_entries,
            ..defaults
        },
        interval,
        duration,
        addresses_only: args.no_symbolize,
        node: args.node.clone().filter(|n| !n.trim().is_empty()),
        host: HostPaths {
            var_log: args.node_logs.clone(),
            kubelet: kubelet(args)?,
            ..HostPaths::default()
        },
    })
}

/// The kubelet `args` name, with its token read.
fn kubelet(args: &RecordArgs) -> Result<Option<Kubelet>, String> {
    let Some(url) = &args.kubelet else {
        return Ok(None);
    };
    if !(url.starts_with("http://") || url.starts_with("https://")) {
        return Err(format!("--kubelet {url}: give an http:// or https:// URL"));
    }
    let token = (args.kubelet_token_file.as_ref())
        .map(|f| {
            std::fs::read_to_string(f)
                .map_err(|e| format!("--kubelet-token-file {}: {e}", f.display()))
        })
        .transpose()?;
    Ok(Some(Kubelet {
        url: url.clone(),
        token,
        insecure_tls: args.kubelet_insecure_tls,
    }))
}

/// Perf ring pages for one CPU to hold an interval's samples (about 1 KiB each with a
/// deep callchain), a power of two between `min` and 4096.
fn ring_pages_for(frequency_hz: u64, interval: Duration, min: usize) -> usize {
    let samples = frequency_hz.saturating_mul(interval.as_secs().max(1));
    let pages = usize::try_from(samples / 4).unwrap_or(usize::MAX);
    pages.clamp(min, 4096).next_power_of_two()
}

/// `__name__` and the `--label`s: the labels of every stored or pushed profile.
fn series_labels(args: &RecordArgs) -> Result<Labels, String> {
    if !is_label_name(&args.name) {
        return Err(format!(
            "--name {:?} is not a valid profile name",
            args.name
        ));
    }
    let mut labels = super::remote::parse_labels(&args.labels)?;
    labels.insert("__name__".to_string(), args.name.clone());
    Ok(labels)
}

/// Fails early, rather than after an hour of recording, when the file cannot be made.
fn check_output_path(path: &Path) -> Result<(), String> {
    let dir = parent_dir(path);
    if !dir.is_dir() {
        return Err(format!(
            "-o {}: the directory {} does not exist",
            path.display(),
            dir.display()
        ));
    }
    if path.is_dir() {
        return Err(format!("-o {}: is a directory", path.display()));
    }
    Ok(())
}

/// Writes `bytes` to a temporary file next to `path`, then renames it over `path`.
fn write_atomically(path: &Path, bytes: &[u8]) -> Result<(), String> {
    use std::io::Write as _;
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| "profile".into());
    let tmp = parent_dir(path).join(format!(".{name}.{}.tmp", std::process::id()));
    let result = std::fs::File::create(&tmp)
        .and_then(|mut f| {
            f.write_all(bytes)?;
            f.sync_all()
        })
        .and_then(|()| std::fs::rename(&tmp, path));
    result.map_err(|e| {
        let _ = std::fs::remove_file(&tmp);
        format!("writing {}: {e}", path.display())
    })
}

/// One line for a sampler that would not open: what was refused and how to grant it.
fn open_error(e: &CaptureError) -> String {
    e.privilege_summary()
        .unwrap_or_else(|| format!("cannot start sampling: {e}"))
}

fn backend_name(backend: Backend) -> &'static str {
    match backend {
        Backend::Bpf => "bpf",
        Backend::Perf => "perf",
        Backend::Auto => "auto",
    }
}

/// Sets `stop` on the first SIGINT or SIGTERM; a second one exits at once, printing
/// `quit_note` (where the data recorded so far is).
fn watch_signals(
    rt: &tokio::runtime::Runtime,
    stop: Arc<AtomicBool>,
    quit_note: Option<String>,
) -> Result<(), String> {
    use tokio::signal::unix::{SignalKind, signal};
    let (mut interrupt, mut terminate) = rt
        .block_on(async {
            Ok::<_, std::io::Error>((
                signal(SignalKind::interrupt())?,
                signal(SignalKind::terminate())?,
            ))
        })
        .map_err(|e| format!("cannot watch for Ctrl-C: {e}"))?;
    rt.spawn(async move {
        tokio::select! {
            _ = interrupt.recv() => {}
            _ = terminate.recv() => {}
        }
        eprintln!("flint record: stopping after this interval (again to quit at once)");
        stop.store(true, Ordering::Relaxed);
        tokio::select! {
            _ = interrupt.recv() => {}
            _ = terminate.recv() => {}
        }
        if let Some(note) = quit_note {
            eprintln!("flint record: quitting; {note}");
        }
        std::process::exit(130);
    });
    Ok(())
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, reason = "a test fails loudly")]

    use super::*;

    #[test]
    fn rings_hold_an_interval() {
        assert_eq!(ring_pages_for(19, Duration::from_secs(10), 256), 256);
        assert_eq!(ring_pages_for(99, Duration::from_secs(60), 256), 2048);
        assert_eq!(ring_pages_for(10_000, Duration::from_secs(60), 256), 4096);
    }

    #[test]
    fn a_file_that_cannot_be_written_leaves_the_spool_and_says_where() {
        let dir = std::env::temp_dir().join(format!("flint-record-test-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let output = dir.join("out.pb.gz");
        let mut outputs = Outputs {
            file: Some((output.clone(), Spool::create(&output).unwrap())),
            decode: DecodeOptions::default(),
            store: None,
            push: None,
            labels: Labels::default(),
            failures: 0,
            first_failure: None,
        };
        for n in 1..=2 {
            outputs.write(&super::super::spool::tests::interval_profile(n), n as usize);
        }
        assert_eq!(outputs.failures, 0);
        let spooled = outputs.file.as_ref().unwrap().1.dir().to_path_buf();
        // A non-empty directory where the file goes: the rename over it fails.
        std::fs::create_dir_all(output.join("in-the-way")).unwrap();
        let e = outputs.finish().unwrap_err();
        assert!(
            e.contains("the 2 recorded intervals are kept in")
                && e.contains(&spooled.display().to_string()),
            "{e}"
        );
        assert_eq!(std::fs::read_dir(&spooled).unwrap().count(), 2);
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn durations_must_be_positive() {
        assert!(positive_duration("--interval", "0s").is_err());
        assert!(positive_duration("--interval", "ten").is_err());
        assert_eq!(
            positive_duration("--interval", "250ms"),
            Ok(Duration::from_millis(250))
        );
    }
}
