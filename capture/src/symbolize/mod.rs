//! Symbolization of profiles made elsewhere: the functions, lines and inlined frames of
//! locations that have none, from binaries and debug files on this machine ([`find`]),
//! reusing the recorder's ELF/DWARF reader ([`crate::symbols::elf`]), and from perf
//! maps given by hand ([`jit`]). Bad symbol files cost only their own frames' names,
//! with a warning; a profile is never refused because of symbols.
//!
//! A location's address is a runtime address: it is turned into a file offset through
//! its mapping's start and offset, then into the binary's virtual address through the
//! binary's program headers. Every frame but a stack's leaf is a return address, so
//! the call before it is looked up.

mod apply;
pub mod debuginfod;
mod find;
mod jit;
pub mod source_file;

use std::collections::BTreeMap;
use std::path::PathBuf;

use profile_model::Profile;

use crate::symbols::elf::DEBUG_ROOT;
use apply::{Writer, needs_names};
use debuginfod::DebuginfodOptions;
use find::{Finder, Found};
use jit::PerfMaps;
pub(crate) use jit::pid_label;

/// Where names are looked for.
#[derive(Debug, Clone)]
pub struct SymbolSources {
    /// Binaries given by hand, matched to mappings by build id, else by file name.
    pub binaries: Vec<PathBuf>,
    /// Directories of binaries (`--symbols DIR`, `PPROF_BINARY_PATH`): `DIR/NAME`,
    /// `DIR/BUILDID/NAME`, `DIR/.build-id/ab/cdef…`; also searched for debug files.
    pub symbol_dirs: Vec<PathBuf>,
    /// Directories of separate debug files by build id (`/usr/lib/debug`).
    pub debug_dirs: Vec<PathBuf>,
    /// Perf maps of JIT code (`perf-PID.map` is used for that process only).
    pub perf_maps: Vec<PathBuf>,
    /// debuginfod servers, asked for build ids nothing on this machine names.
    pub debuginfod: Option<DebuginfodOptions>,
}

impl Default for SymbolSources {
    fn default() -> Self {
        Self {
            binaries: Vec::new(),
            symbol_dirs: Vec::new(),
            debug_dirs: vec![PathBuf::from(DEBUG_ROOT)],
            perf_maps: Vec::new(),
            debuginfod: None,
        }
    }
}

impl SymbolSources {
    /// Adds the directories of `PPROF_BINARY_PATH` (`:`-separated), as pprof reads it.
    pub fn with_pprof_binary_path(mut self, value: Option<&std::ffi::OsStr>) -> Self {
        if let Some(value) = value {
            self.symbol_dirs
                .extend(std::env::split_paths(value).filter(|p| !p.as_os_str().is_empty()));
        }
        self
    }

    /// Whether the user named any source (binaries, directories, perf maps, debuginfod
    /// servers): commands symbolize automatically only then.
    pub fn is_configured(&self) -> bool {
        !(self.binaries.is_empty()
            && self.symbol_dirs.is_empty()
            && self.perf_maps.is_empty()
            && self.debuginfod.is_none())
    }
}

/// Where a location's names came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Source {
    /// A binary given by hand or found in a symbol directory.
    Binary,
    /// The mapping's own path on this machine.
    LocalPath,
    /// A separate debug file (by build id or `.gnu_debuglink`).
    DebugDir,
    /// A debuginfod server (or its cache).
    Debuginfod,
    /// A perf map of JIT code.
    PerfMap,
}

impl Source {
    /// How the summary names it.
    pub fn label(self) -> &'static str {
        match self {
            Self::Binary => "binary",
            Self::LocalPath => "local path",
            Self::DebugDir => "debug dir",
            Self::Debuginfod => "debuginfod",
            Self::PerfMap => "perf map",
        }
    }
}

/// What symbolizing a profile did.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Report {
    /// Locations that had no names.
    pub unnamed_before: usize,
    /// Locations named, by source.
    pub named: BTreeMap<Source, usize>,
    /// Binaries (file names) whose locations stayed unnamed, with how many.
    pub no_symbols: BTreeMap<String, usize>,
    /// Symbol files passed over and why.
    pub warnings: Vec<String>,
}

impl Report {
    /// Locations named from every source.
    pub fn named_total(&self) -> usize {
        self.named.values().sum()
    }

    /// One line: `named 40 of 42 locations (30 binary, 10 perf map); no symbols for
    /// libfoo.so (2)`.
    pub fn summary(&self) -> String {
        let by_source: Vec<String> = self
            .named
            .iter()
            .map(|(s, n)| format!("{n} {}", s.label()))
            .collect();
        let mut line = format!(
            "named {} of {} locations",
            self.named_total(),
            self.unnamed_before
        );
        if !by_source.is_empty() {
            line.push_str(&format!(" ({})", by_source.join(", ")));
        }
        if !self.no_symbols.is_empty() {
            let missing: Vec<String> = self
                .no_symbols
                .iter()
                .map(|(b, n)| format!("{b} ({n})"))
                .collect();
            line.push_str(&format!("; no symbols for {}", missing.join(", ")));
        }
        line
    }
}

/// Names the locations of `profile` that have none, from `sources`.
pub fn symbolize(profile: &mut Profile, sources: &SymbolSources) -> Report {
    let n = profile.locations.len();
    let wanted: Vec<bool> = (0..n).map(|i| needs_names(profile, i)).collect();
    let mut report = Report {
        unnamed_before: wanted.iter().filter(|&&w| w).count(),
        ..Report::default()
    };
    if report.unnamed_before == 0 {
        return report;
    }
    let returns = return_addresses(profile);
    let mut named = vec![false; n];
    let mut writer = Writer::new(profile);
    let mut finder = Finder::new(sources);
    // Locations by mapping.
    let mut by_mapping: BTreeMap<u32, Vec<usize>> = BTreeMap::new();
    for (i, _) in wanted.iter().enumerate().filter(|(_, w)| **w) {
        if let Some(m) = profile.locations.get(i).and_then(|l| l.mapping) {
            by_mapping.entry(m).or_default().push(i);
        }
    }
    // Mappings nothing on this machine names, by build id, for debuginfod.
    let mut elsewhere: BTreeMap<String, Vec<u32>> = BTreeMap::new();
    let mut state = Naming {
        writer: &mut writer,
        named: &mut named,
        report: &mut report,
        returns: &returns,
    };
    for (&m, locations) in &by_mapping {
        let Some(mapping) = profile.mappings.get(m as usize) else {
            continue;
        };
        let path = profile.str(mapping.filename).to_string();
        let build_id = profile.str(mapping.build_id).to_ascii_lowercase();
        match finder.find(&path, &build_id) {
            Some(found) => state.name(profile, m, locations, &found),
            None if !build_id.is_empty() => elsewhere.entry(build_id).or_default().push(m),
            None => {}
        }
    }
    if let Some(options) = &sources.debuginfod
        && !elsewhere.is_empty()
    {
        let ids: Vec<String> = elsewhere.keys().cloned().collect();
        let fetched = debuginfod::fetch_all(options, &ids, &mut finder.warnings);
        for (id, file) in &fetched {
            let Some(found) = finder.open(file, Source::Debuginfod, id) else {
                continue;
            };
            for &m in elsewhere.get(id).into_iter().flatten() {
                if let Some(locations) = by_mapping.get(&m) {
                    state.name(profile, m, locations, &found);
                }
            }
        }
    }
    let mut warnings = std::mem::take(&mut finder.warnings);
    let perf_maps = PerfMaps::read(&sources.perf_maps, &mut warnings);
    if !perf_maps.is_empty() {
        let left: Vec<bool> = (0..n).map(|i| wanted[i] && !named[i]).collect();
        let pids = jit::location_pids(profile, &left);
        for i in (0..n).filter(|&i| left[i]) {
            let Some(address) = profile.locations.get(i).map(|l| l.address) else {
                continue;
            };
            if let Some(name) = perf_maps.find(address, &pids[i]) {
                let frame = crate::symbols::elf::SymFrame {
                    function: name.to_string(),
                    file: String::new(),
                    line: 0,
                };
                writer.set_frames(profile, i as u32, &[frame]);
                named[i] = true;
                *report.named.entry(Source::PerfMap).or_default() += 1;
            }
        }
    }
    for i in (0..n).filter(|&i| wanted[i] && !named[i]) {
        let binary = profile
            .locations
            .get(i)
            .and_then(|l| l.mapping)
            .and_then(|m| profile.mappings.get(m as usize))
            .map(|m| profile.str(m.filename))
            .map(|p| p.rsplit('/').next().unwrap_or(p))
            .filter(|b| !b.is_empty())
            .unwrap_or("[unknown]")
            .to_string();
        *report.no_symbols.entry(binary).or_default() += 1;
    }
    report.warnings = warnings.into_iter().collect();
    report
}

/// Symbolization of one profile after another from the same sources (a server's
/// queries, a recorder's intervals), each warning told once.
#[derive(Debug)]
pub struct Repeated {
    sources: SymbolSources,
    told: std::sync::Mutex<std::collections::HashSet<String>>,
}

impl Repeated {
    /// Symbolization from `sources`.
    pub fn new(sources: SymbolSources) -> Self {
        Self {
            sources,
            told: Default::default(),
        }
    }

    /// Names what it can of `profile`; returns the warnings not returned before.
    pub fn name(&self, profile: &mut Profile) -> Vec<String> {
        let warnings = symbolize(profile, &self.sources).warnings;
        match self.told.lock() {
            Ok(mut told) => warnings
                .into_iter()
                .filter(|w| told.insert(w.clone()))
                .collect(),
            Err(_) => Vec::new(),
        }
    }
}

/// What naming locations writes to.
struct Naming<'a> {
    writer: &'a mut Writer,
    named: &'a mut [bool],
    report: &'a mut Report,
    returns: &'a [bool],
}

impl Naming<'_> {
    /// Names `locations` of mapping `m` from `found`.
    fn name(&mut self, profile: &mut Profile, m: u32, locations: &[usize], found: &Found) {
        let Some(mapping) = profile.mappings.get(m as usize).cloned() else {
            return;
        };
        for &i in locations {
            let Some(address) = profile.locations.get(i).map(|l| l.address) else {
                continue;
            };
            let frames = found
                .elf
                .address_of_runtime(mapping.memory_start, mapping.file_offset, address)
                .map(|vaddr| {
                    found
                        .elf
                        .frames_at(vaddr, self.returns.get(i) == Some(&true))
                })
                .unwrap_or_default();
            if !frames.is_empty() {
                self.writer.set_frames(profile, i as u32, &frames);
                self.named[i] = true;
                *self.report.named.entry(found.source).or_default() += 1;
            }
        }
    }
}

/// Whether each location is a return address: it is in some stack, never as its leaf.
fn return_addresses(profile: &Profile) -> Vec<bool> {
    let n = profile.locations.len();
    let (mut leaf, mut caller) = (vec![false; n], vec![false; n]);
    for i in 0..profile.samples.len() {
        for (depth, &loc) in profile.samples.stack(i).iter().enumerate() {
            if let Some(slot) = if depth == 0 {
                leaf.get_mut(loc as usize)
            } else {
                caller.get_mut(loc as usize)
            } {
                *slot = true;
            }
        }
    }
    (0..n).map(|i| caller[i] && !leaf[i]).collect()
}
