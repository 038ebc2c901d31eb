//! perf.data files (`perf record`) made pprof: the records read by `linux-perf-data`
//! (samply's parser; flint has none of its own), each sample's callchain a stack
//! weighted by its period (`events`), labelled with its pid, tid, command, thread name
//! and CPU and with its time slice (`slices`), its user frames named by [`crate::symbolize`] from the file's MMAP records
//! and build ids, its kernel frames from `/proc/kallsyms` when the file was recorded
//! on the running kernel (`kernel`).
//!
//! A file is known by its magic (`PERFILE2`), never by its name; [`crate::read`] turns
//! it into pprof bytes as it reads it, so that every command and the window read it as
//! any profile. What could not be read (a file cut short, records that do not parse,
//! samples the kernel lost, frames left unnamed) is said in the profile's comments,
//! which `flint top` prints; a header that does not hold together is an error. The
//! header is checked against the file's length before the parser reads it (`guard`).

mod builder;
mod events;
mod guard;
mod kernel;
mod records;
pub mod slices;
mod unwind;

use std::io::Cursor;

use linux_perf_data::linux_perf_event_reader::SampleFormat;
use linux_perf_data::{DsoKey, PerfFileReader, PerfFileRecord};
use profile_model::Profile;
use profile_model::profile::StrId;

use crate::symbolize::{SymbolSources, symbolize};
use builder::Builder;
use events::Columns;
use kernel::{KernelNames, hex};
use records::Walk;
use unwind::DwarfUnwinder;

/// Why a perf.data file could not be read: one line.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("perf.data: {0}")]
pub struct PerfDataError(String);

/// How a perf.data file is read.
#[derive(Debug, Clone, Default)]
pub struct PerfDataOptions {
    /// Where the user frames' names are looked for.
    pub symbols: SymbolSources,
    /// When the recording ended (the file's modification time), in nanoseconds since
    /// the Unix epoch: the profile's start is this less the samples' span, unless the
    /// file has perf's clock data (`perf record -k`).
    pub recorded_end_nanos: Option<i64>,
}

/// A perf.data file read: its profile and what was skipped or left unnamed.
#[derive(Debug)]
pub struct Converted {
    /// The profile, symbolized; the warnings are also its comments.
    pub profile: Profile,
    /// What was skipped and how much, one line each.
    pub warnings: Vec<String>,
}

/// Whether `bytes` are a perf.data file (either byte order, file or pipe mode).
pub fn is_perf_data(bytes: &[u8]) -> bool {
    bytes.starts_with(b"PERFILE2") || bytes.starts_with(b"2ELIFREP")
}

/// Reads the perf.data file in `bytes`; see the module documentation. A panic of the
/// parser on bytes no check foresaw is this file's error, not the program's end.
pub fn read(bytes: &[u8], options: &PerfDataOptions) -> Result<Converted, PerfDataError> {
    std::panic::catch_unwind(|| read_checked(bytes, options)).unwrap_or_else(|_| {
        Err(PerfDataError(
            "the parser failed on this file (malformed records)".into(),
        ))
    })
}

/// The pprof bytes of the perf.data file in `bytes` ([`read`]), its warnings among
/// the profile's comments.
pub fn to_pprof(bytes: &[u8], options: &PerfDataOptions) -> Result<Vec<u8>, PerfDataError> {
    read(bytes, options).map(|c| profile_model::codec::encode(&c.profile))
}

fn read_checked(bytes: &[u8], options: &PerfDataOptions) -> Result<Converted, PerfDataError> {
    let big_endian = bytes.starts_with(b"2ELIFREP");
    let header_size = bytes.get(8..16).and_then(|s| s.try_into().ok()).map(|raw| {
        if big_endian {
            u64::from_be_bytes(raw)
        } else {
            u64::from_le_bytes(raw)
        }
    });
    let parse_error = |e: linux_perf_data::Error| PerfDataError(e.to_string());
    let mut warnings = Vec::new();
    let patched;
    let reader = if header_size == Some(guard::PIPE_HEADER_SIZE) {
        PerfFileReader::parse_pipe(Cursor::new(bytes)).map_err(parse_error)?
    } else {
        let checked = guard::check(bytes, big_endian)?;
        warnings.extend(checked.warnings);
        let whole = match checked.header {
            Some(header) => {
                patched = [&header[..], bytes.get(header.len()..).unwrap_or_default()].concat();
                &patched[..]
            }
            None => bytes,
        };
        PerfFileReader::parse_file(Cursor::new(whole)).map_err(parse_error)?
    };
    let PerfFileReader {
        mut perf_file,
        mut record_iter,
    } = reader;
    let build_ids = perf_file.build_ids().unwrap_or_else(|e| {
        warnings.push(format!("its build ids were skipped ({e})"));
        Default::default()
    });
    let kernel = KernelNames::for_file(
        build_ids
            .get(&DsoKey::Kernel)
            .map(|i| hex(&i.build_id))
            .as_deref(),
    );
    let columns = Columns::new(perf_file.event_attributes());
    let types: Vec<(&str, &str)> = columns
        .types
        .iter()
        .map(|(t, u)| (t.as_str(), u.as_str()))
        .collect();
    let span = perf_file
        .sample_time_range()
        .ok()
        .flatten()
        .map(|r| r.last_sample_time.saturating_sub(r.first_sample_time));
    let mut walk = Walk::new(
        Builder::new(&types, columns.period),
        &columns,
        &build_ids,
        kernel.kallsyms.as_ref(),
        slices::slice_nanos(span),
    );
    let dwarf = perf_file.event_attributes().iter().any(|a| {
        a.attributes()
            .sample_format
            .contains(SampleFormat::REGS_USER | SampleFormat::STACK_USER)
    });
    if dwarf {
        match perf_file.arch().ok().flatten() {
            Some("x86_64") | None => walk.unwinder = Some(DwarfUnwinder::new()),
            Some(arch) => warnings.push(format!(
                "user stacks left at their first frame: DWARF unwinding is done on x86_64 only, not {arch}"
            )),
        }
    }
    let mut stopped = None;
    loop {
        match record_iter.next_record(&mut perf_file) {
            Ok(Some(PerfFileRecord::EventRecord { attr_index, record })) => match record.parse() {
                Ok(r) => walk.record(attr_index, r),
                Err(_) => walk.counts.unparsed += 1,
            },
            Ok(Some(PerfFileRecord::UserRecord(_))) => {}
            Ok(None) => break,
            Err(e) => {
                stopped = Some(e);
                break;
            }
        }
    }
    if let Some(unwinder) = &walk.unwinder {
        for u in &unwinder.unreadable {
            warnings.push(format!(
                "user stacks cut at a binary flint cannot unwind: {u}"
            ));
        }
    }
    let counts = walk.counts;
    if counts.samples == 0 && !warnings.is_empty() {
        return Err(PerfDataError(format!(
            "no sample could be read: {}",
            warnings.join("; ")
        )));
    }
    if let Some(e) = stopped {
        if counts.samples == 0 {
            return Err(PerfDataError(format!(
                "no sample could be read: its records are unreadable ({e})"
            )));
        }
        warnings.push(format!(
            "reading stopped at an unreadable record ({e}); the {} samples before it were kept, the rest of the file skipped",
            counts.samples
        ));
    }
    if counts.unparsed > 0 {
        warnings.push(format!(
            "{} records that did not parse were skipped",
            counts.unparsed
        ));
    }
    if counts.lost > 0 {
        warnings.push(format!(
            "the kernel lost {} samples while recording (LOST records)",
            counts.lost
        ));
    }
    warnings.extend(kernel.warning);
    let (first, last) = (
        counts.first_time.unwrap_or(0),
        counts.last_time.unwrap_or(0),
    );
    let duration = i64::try_from(last.saturating_sub(first)).unwrap_or(i64::MAX);
    let start = match perf_file.clock_data().ok().flatten() {
        Some(clock) => {
            i128::from(clock.wall_clock_ns) + i128::from(first) - i128::from(clock.clockid_time_ns)
        }
        None => options
            .recorded_end_nanos
            .map_or(0, |end| i128::from(end) - i128::from(duration)),
    };
    let mut profile = walk
        .builder
        .finish(i64::try_from(start).unwrap_or(0), duration);
    let sources = with_local_perf_maps(&options.symbols, &profile);
    let report = symbolize(&mut profile, &sources);
    warnings.extend(report.warnings.iter().map(|w| format!("symbols: {w}")));
    if report.named_total() < report.unnamed_before {
        warnings.push(format!("symbols: {}", report.summary()));
    }
    for w in &warnings {
        comment(&mut profile, &format!("perf.data: {w}"));
    }
    Ok(Converted { profile, warnings })
}

/// `sources` and, as `perf report` reads them, the perf maps of JIT code that the
/// recorded processes left on this machine (`/tmp/perf-PID.map`).
fn with_local_perf_maps(sources: &SymbolSources, profile: &Profile) -> SymbolSources {
    let mut pids: Vec<u32> = profile
        .label_sets
        .iter()
        .filter_map(|set| crate::symbolize::pid_label(profile, set))
        .collect();
    pids.sort_unstable();
    pids.dedup();
    let local: Vec<std::path::PathBuf> = pids
        .iter()
        .map(|pid| std::path::PathBuf::from(format!("/tmp/perf-{pid}.map")))
        .filter(|map| map.is_file() && !sources.perf_maps.contains(map))
        .collect();
    let mut sources = sources.clone();
    sources.perf_maps.extend(local);
    sources
}

/// Adds a comment to `profile`.
fn comment(profile: &mut Profile, text: &str) {
    profile.strings.push(text.to_string());
    profile.comments.push((profile.strings.len() - 1) as StrId);
}
