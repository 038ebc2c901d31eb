//! What pprof's text reports share: the one merged profile a report reads (files, a
//! selection among them, a store or a server), the header above every report, and
//! its values in one unit.

use std::fmt::Write as _;
use std::path::PathBuf;

use profile_model::codec::DecodeOptions;
use profile_model::units::{self, PprofValues, pprof_output_unit, pprof_percent, pprof_value};
use profile_model::{Profile, ViewOptions};

use capture::read::top::{TopHeader, header_of};

use super::top::ServerQueryArgs;
use super::{CliError, ViewArgs, warn_skipped};

/// The one profile a report reads, with the sample type and view asked for.
pub(super) struct Loaded {
    /// The merged profile (a difference with `--diff-base`).
    pub profile: Profile,
    /// The chosen sample type.
    pub sample_type: usize,
    /// The filters and granularity asked for.
    pub options: ViewOptions,
    /// The first input's name, for the header.
    pub name: PathBuf,
    /// For files merged whole, the sum of their durations (pprof's merge's duration).
    summed_duration: Option<i64>,
}

impl Loaded {
    /// Reads what `view` and `server` ask for: a server's, a store's or a selection's
    /// merge, or the files merged whole (and `--diff-base` subtracted).
    pub fn read(
        view: &ViewArgs,
        server: &ServerQueryArgs,
        decode: DecodeOptions,
    ) -> Result<Self, CliError> {
        let options = view.view_options()?;
        let (name, profile, summed_duration) =
            match server.selected(&view.files, &view.diff_base, decode)? {
                Some((name, profile, skipped)) => {
                    warn_skipped(&skipped);
                    (name, profile, None)
                }
                None => {
                    let merged = if view.diff_base.is_empty() {
                        capture::read::read_merged(&view.files, decode)?
                    } else {
                        capture::read::read_diff(&view.diff_base, &view.files, decode)?
                    };
                    warn_skipped(&merged.skipped);
                    let name = view.files.first().cloned().unwrap_or_default();
                    (name, merged.profile, Some(merged.summed_duration_nanos))
                }
            };
        let mut profile = profile;
        warn_perf_data(profile.comments.iter().map(|&c| profile.str(c)));
        if view.symbolizes() {
            view.symbols.symbolize_if_configured(&mut profile);
        }
        Ok(Self {
            sample_type: view.sample_type_of(&profile)?,
            profile,
            options,
            name,
            summed_duration,
        })
    }

    /// What pprof's header says about the profile.
    pub fn header(&self) -> TopHeader {
        let mut header = header_of(&self.name, &self.profile, self.sample_type);
        if let Some(d) = self.summed_duration {
            header.duration_nanos = d;
        }
        header
    }
}

/// Prints on stderr what reading a perf.data file skipped or left unnamed (its
/// `perf.data: …` comments), as every report reads it.
pub(super) fn warn_perf_data<'a>(comments: impl Iterator<Item = &'a str>) {
    for c in comments.filter(|c| c.starts_with("perf.data: ")) {
        eprintln!("warning: {c}");
    }
}

/// Formats values as pprof's text reports do (its `-unit=minimum`): every value in
/// the unit of the smallest non-zero one (|flat|, else |cum|, of `rows`), or of 100×
/// that when the total needs a larger unit.
pub(super) fn value_format(
    unit: &str,
    total: i64,
    rows: impl Iterator<Item = (i64, i64)>,
) -> PprofValues {
    let min_value = rows
        .map(|(flat, cum)| if flat != 0 { flat.abs() } else { cum.abs() })
        .filter(|v| *v > 0)
        .min()
        .unwrap_or(0);
    PprofValues::new(unit, &pprof_output_unit(min_value, total, unit))
}

/// pprof's header: main binary, comments, type, time, duration and total, active
/// filters, and "Showing nodes accounting for" `shown` (a sum of flat).
pub(super) fn write_header(
    out: &mut String,
    header: &TopHeader,
    filters: &[String],
    (shown, total): (i64, i64),
    value: &PprofValues,
) {
    let (file, build_id) = &header.binary;
    if !file.is_empty() {
        let _ = writeln!(out, "File: {file}");
    }
    if !build_id.is_empty() {
        let _ = writeln!(out, "Build ID: {build_id}");
    }
    for c in header.comments.iter().filter(|c| !c.starts_with('#')) {
        let _ = writeln!(out, "{c}");
    }
    let _ = writeln!(out, "Type: {}", header.kind);
    if header.time_nanos != 0 {
        let _ = writeln!(out, "Time: {}", pprof_time(header.time_nanos));
    }
    let d = header.duration_nanos;
    if d != 0 {
        let duration = pprof_value(d, "nanoseconds", &pprof_output_unit(d, d, "nanoseconds"));
        // pprof adds the total's share of the duration when the total is a time.
        let ratio = match units::nanoseconds_per(&header.unit) {
            Some(ns) if total != 0 => {
                format!("({})", pprof_percent((total as f64 * ns) as i64, d))
            }
            _ => String::new(),
        };
        let _ = writeln!(
            out,
            "Duration: {duration}, Total samples = {} {ratio}",
            value.format(total)
        );
    }
    if !filters.is_empty() {
        let _ = writeln!(out, "Active filters:");
        for f in filters {
            let _ = writeln!(out, "   {f}");
        }
    }
    let _ = writeln!(
        out,
        "Showing nodes accounting for {}, {} of {} total",
        value.format(shown),
        pprof_percent(shown, total).trim(),
        value.format(total)
    );
}

/// A time as pprof's header prints it (Go's layout "Jan 2, 2006 at 3:04pm (MST)"), in
/// UTC.
fn pprof_time(nanos: i64) -> String {
    let secs = nanos.div_euclid(1_000_000_000);
    let (days, of_day) = (secs.div_euclid(86_400), secs.rem_euclid(86_400));
    let (year, month, day) = capture::time::civil_from_days(days);
    const MONTHS: [&str; 12] = [
        "Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec",
    ];
    let (hour, minute) = (of_day / 3_600, of_day % 3_600 / 60);
    let hour12 = if hour % 12 == 0 { 12 } else { hour % 12 };
    let half = if hour < 12 { "am" } else { "pm" };
    format!(
        "{} {day}, {year} at {hour12}:{minute:02}{half} (UTC)",
        MONTHS[(month - 1) as usize]
    )
}

#[cfg(test)]
mod tests {
    use super::pprof_time;

    #[test]
    fn times_are_printed_as_go_prints_them() {
        // 2024-02-29 00:05:59 UTC, a leap day just after midnight.
        assert_eq!(
            pprof_time(1_709_165_159_000_000_000),
            "Feb 29, 2024 at 12:05am (UTC)"
        );
        // 1969-12-31 12:00:00 UTC: noon, before the epoch.
        assert_eq!(
            pprof_time(-43_200_000_000_000),
            "Dec 31, 1969 at 12:00pm (UTC)"
        );
        assert_eq!(
            pprof_time(1_700_000_000_000_000_000),
            "Nov 14, 2023 at 10:13pm (UTC)"
        );
    }
}
