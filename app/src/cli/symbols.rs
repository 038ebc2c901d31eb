//! Where the CLI finds names for profiles made elsewhere: binaries among the inputs
//! (pprof's `flint top ./prog profile.pb.gz`), `--symbols DIR`, `PPROF_BINARY_PATH`,
//! `--perf-map FILE` and `--debuginfod URL`, handed to [`capture::symbolize`].

use std::io::Read as _;
use std::path::{Path, PathBuf};

use clap::Args;
use profile_model::Profile;

use capture::symbolize::debuginfod::DebuginfodOptions;
use capture::symbolize::{Report, SymbolSources, symbolize};

/// Options naming where symbols are.
#[derive(Debug, Args)]
pub(super) struct SymbolArgs {
    /// Directory of binaries or debug files (`DIR/NAME`, `DIR/BUILDID/NAME`,
    /// `DIR/.build-id/ab/cdef….debug`); repeatable; `PPROF_BINARY_PATH` adds more.
    #[arg(long = "symbols", value_name = "DIR")]
    dirs: Vec<PathBuf>,
    /// Perf map of JIT code (`perf-PID.map` is used for that pid's samples); repeatable.
    #[arg(long = "perf-map", value_name = "FILE")]
    perf_maps: Vec<PathBuf>,
    /// debuginfod server to ask for build ids nothing here names (repeatable; also
    /// `DEBUGINFOD_URLS`); cached in `DEBUGINFOD_CACHE_PATH` or ~/.cache/debuginfod_client.
    #[arg(long = "debuginfod", value_name = "URL")]
    debuginfod: Vec<String>,
    /// Binaries taken out of the inputs.
    #[arg(skip)]
    binaries: Vec<PathBuf>,
}

impl SymbolArgs {
    /// Moves the ELF binaries among `inputs` into the binaries to name mappings with.
    pub(super) fn take_binaries(&mut self, inputs: &mut Vec<PathBuf>) {
        let (binaries, profiles) = std::mem::take(inputs).into_iter().partition(|p| is_elf(p));
        *inputs = profiles;
        self.binaries = binaries;
    }

    /// The sources these options name, with `PPROF_BINARY_PATH` and `/usr/lib/debug`.
    pub(super) fn sources(&self) -> SymbolSources {
        let mut sources = SymbolSources {
            binaries: self.binaries.clone(),
            symbol_dirs: self.dirs.clone(),
            perf_maps: self.perf_maps.clone(),
            debuginfod: DebuginfodOptions::from_env(&self.debuginfod),
            ..SymbolSources::default()
        };
        sources = sources.with_pprof_binary_path(std::env::var_os("PPROF_BINARY_PATH").as_deref());
        sources
    }

    /// Names what it can of `profile` and returns the report, its warnings printed.
    pub(super) fn symbolize(&self, profile: &mut Profile) -> Report {
        let report = symbolize(profile, &self.sources());
        for w in &report.warnings {
            eprintln!("warning: symbols: {w}");
        }
        report
    }

    /// [`Self::symbolize`] as reports do it: only where a source is configured, and
    /// saying on stderr what stayed unnamed.
    pub(super) fn symbolize_if_configured(&self, profile: &mut Profile) {
        if !self.sources().is_configured() {
            return;
        }
        let report = self.symbolize(profile);
        if report.named_total() < report.unnamed_before {
            eprintln!("warning: symbols: {}", report.summary());
        }
    }
}

/// Whether `path` is an ELF file (a binary or debug file, not a profile); a pipe such
/// as `/dev/stdin` is never looked into, its bytes being read only once.
fn is_elf(path: &Path) -> bool {
    let mut magic = [0u8; 4];
    std::fs::metadata(path).is_ok_and(|m| m.is_file())
        && std::fs::File::open(path)
            .and_then(|mut f| f.read_exact(&mut magic))
            .is_ok_and(|()| &magic == b"\x7fELF")
}
