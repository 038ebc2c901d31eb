//! `flint top`: the top table, in pprof's text layout, as TSV or as JSON.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use clap::Args;
use std::ops::ControlFlow;

use profile_model::codec::{DecodeOptions, message_bytes};
use profile_model::top::InlineMark;
use profile_model::topsum::TopSum;
use profile_model::units::{self, pprof_output_unit, pprof_percent, pprof_value};
use profile_model::{Profile, ProfileError, View, ViewOptions};

use capture::{ProfileSource, Progress, QueryTime, TimeRange};

use super::remote::{ConnectArgs, Input, RangeArgs, runtime, selector_or_default};
use super::{ViewArgs, write_stdout};

/// Arguments of `flint top`.
#[derive(Debug, Args)]
pub struct TopArgs {
    #[command(flatten)]
    view: ViewArgs,
    /// Print at most N rows (all when absent).
    #[arg(long, short = 'n')]
    limit: Option<usize>,
    /// Output format.
    #[arg(long, value_enum, default_value = "text")]
    format: Format,
    #[command(flatten)]
    server: ServerQueryArgs,
}

/// What to ask a server for, when FILE is `grpc://HOST:PORT` or `https://HOST`.
#[derive(Debug, Args)]
pub(super) struct ServerQueryArgs {
    /// Parca selector of the profiles to merge, e.g.
    /// `process_cpu:cpu:nanoseconds:cpu:nanoseconds:delta{job="api"}` (of a server, a
    /// store, or files: their labels as `flint series` shows them); default: the CPU
    /// profile type.
    #[arg(long, short = 'q')]
    query: Option<String>,
    #[command(flatten)]
    range: RangeArgs,
    #[command(flatten)]
    connect: ConnectArgs,
}

impl ServerQueryArgs {
    /// The merged profile these arguments ask for, named by the input it came from,
    /// with the files skipped as unreadable: a server's or a store's merge, or the
    /// selection (--query, --from, --to) among `files`; `None` for files taken whole.
    /// `diff_base` (files, taken whole) cannot be subtracted from a server's or a
    /// store's profiles, nor from a selection.
    pub(super) fn selected(
        &self,
        files: &[PathBuf],
        diff_base: &[PathBuf],
        decode: DecodeOptions,
    ) -> Result<Option<(PathBuf, Profile, Vec<String>)>, String> {
        if self.takes_whole(files) {
            return Ok(None);
        }
        let input = Input::of(files)?;
        if !diff_base.is_empty() {
            return Err(match input {
                Input::Server => "--diff-base compares files; it cannot be used with a server",
                Input::Store => "--diff-base compares files; it cannot be used with a store",
                Input::Files => {
                    "--diff-base takes files whole; it cannot be used with --query, --from \
                     or --to"
                }
            }
            .into());
        }
        let opened = input.open(files, &self.connect, &self.range, decode)?;
        let merged = self.merged(opened.source.as_ref(), opened.range, opened.held)?;
        let name = files.first().map_or_else(PathBuf::new, PathBuf::clone);
        Ok(Some((name, merged, opened.skipped)))
    }

    /// Whether `files` are local files taken whole: no server, no store, and no
    /// selection among them asked for (--query, --from or --to, which files then answer
    /// as a store does).
    fn takes_whole(&self, files: &[PathBuf]) -> bool {
        matches!(Input::of(files), Ok(Input::Files)) && self.query.is_none() && !self.range.given()
    }

    /// What `source` merges for --query (default: its CPU profile type) over `range`;
    /// `held` is the span a store or files hold (named when the range holds nothing).
    fn merged(
        &self,
        source: &dyn ProfileSource,
        range: TimeRange,
        held: Option<TimeRange>,
    ) -> Result<Profile, String> {
        runtime()?.block_on(async {
            let selector = selector_or_default(source, self.query.as_deref(), range, held).await?;
            let progress = Progress::default();
            let merged = source
                .query(selector.clone(), QueryTime::Merge(range), progress.clone())
                .await
                .map_err(|e| format!("{selector}: {e}"));
            super::warn_skipped(&progress.skipped());
            merged
        })
    }
}

#[derive(Debug, Clone, Copy, clap::ValueEnum)]
enum Format {
    /// As `go tool pprof -top` prints it.
    Text,
    /// Tab-separated, raw integers in the sample type's unit.
    Tsv,
    /// JSON with the unit and the total.
    Json,
}

/// One row, ready to print.
struct Row<'a> {
    flat: i64,
    cum: i64,
    name: &'a str,
    inline: InlineMark,
}

/// What the header of the text output says about the inputs.
struct Inputs {
    /// `type/unit` of every sample type, from the first profile.
    sample_type_names: Vec<String>,
    /// Name of the first profile, for errors.
    first: String,
    /// The first profile's chosen type as `--query` takes it, for errors.
    profile_type: String,
    /// The chosen sample type's kind and unit.
    kind: String,
    unit: String,
    /// The first profile's main binary (its first mapping): file name and build id.
    binary: (String, String),
    /// Every profile's comments, each once, in the order read.
    comments: Vec<String>,
    /// As pprof merges headers: the earliest start of the profiles that have one, and
    /// the sum of their durations.
    time_nanos: i64,
    duration_nanos: i64,
}

impl Inputs {
    /// What the first profile read says: its sample types, the chosen one's kind and
    /// unit, and its main binary. Its time and comments are added by [`Inputs::add`],
    /// as every profile's.
    fn of_first(path: &Path, profile: &Profile, sample_type: usize) -> Self {
        let kind_unit = profile.sample_types[sample_type];
        let binary = profile.mappings.first().map_or_else(Default::default, |m| {
            let file = profile.str(m.filename);
            let base = file.rsplit('/').next().unwrap_or(file);
            (base.to_string(), profile.str(m.build_id).to_string())
        });
        Inputs {
            sample_type_names: profile.sample_type_names(),
            first: path.display().to_string(),
            profile_type: capture::files::profile_types_of(profile)
                .get(sample_type)
                .map_or_else(String::new, ToString::to_string),
            kind: profile.str(kind_unit.kind).to_string(),
            unit: profile.str(kind_unit.unit).to_string(),
            binary,
            comments: Vec::new(),
            time_nanos: 0,
            duration_nanos: 0,
        }
    }

    /// Adds a profile's header: its start (the earliest counts), its duration (they
    /// add up) and its comments.
    fn add(&mut self, header: &Header) {
        if header.time_nanos != 0 && (self.time_nanos == 0 || header.time_nanos < self.time_nanos) {
            self.time_nanos = header.time_nanos;
        }
        self.duration_nanos = self.duration_nanos.saturating_add(header.duration_nanos);
        for c in &header.comments {
            if !self.comments.contains(c) {
                self.comments.push(c.clone());
            }
        }
    }

    /// The error for a later profile whose sample types differ from the first's; for
    /// one found in a folder (not `named` on the command line), how to take one type
    /// of a folder's profiles.
    fn mismatch(&self, path: &Path, names: Vec<String>, named: bool) -> String {
        let error = ProfileError::IncompatibleSampleTypes {
            first: self.first.clone(),
            first_types: self.sample_type_names.join(", "),
            second: path.display().to_string(),
            second_types: names.join(", "),
        };
        if named || self.profile_type.is_empty() {
            return error.to_string();
        }
        format!(
            "{error} (to merge the profiles of one type in a folder: --query, e.g. -q '{}')",
            self.profile_type
        )
    }
}

/// What one or several profiles' headers add up to (see [`Inputs::add`]).
#[derive(Debug, Default)]
struct Header {
    time_nanos: i64,
    duration_nanos: i64,
    comments: Vec<String>,
}

impl Header {
    fn of(profile: &Profile) -> Self {
        Header {
            time_nanos: profile.time_nanos,
            duration_nanos: profile.duration_nanos,
            comments: profile
                .comments
                .iter()
                .map(|c| profile.str(*c).to_string())
                .collect(),
        }
    }
}

/// The summed top table, what the header says about the inputs (`None` when no
/// profile was read), and the files skipped in directories.
type Summed = (TopSum, Option<Inputs>, Vec<String>);

/// Runs `flint top`: every input's top table is summed, file by file, which is
/// exactly the top table of their merge (and of their difference with `--diff-base`).
pub fn run(args: &TopArgs, decode: DecodeOptions) -> Result<(), String> {
    let options = args.view.view_options()?;
    let files = args.view.files.as_slice();
    let (sum, inputs, skipped) = match args.server.selected(files, &args.view.diff_base, decode)? {
        Some((name, profile, unreadable)) => {
            let (sum, inputs) = sum_one(args, &options, &name, &profile)?;
            (sum, Some(inputs), unreadable)
        }
        None => sum_from_wire(args, &options, decode)?,
    };
    super::warn_skipped(&skipped);
    let Some(inputs) = inputs else {
        let names: Vec<String> = files.iter().map(|f| f.display().to_string()).collect();
        let what = if skipped.is_empty() {
            "no profiles found"
        } else {
            "no readable profiles"
        };
        return Err(format!("{what} in {}", names.join(", ")));
    };
    let (named, total) = sum.finish();
    let limit = args.limit.unwrap_or(usize::MAX);
    let rows: Vec<Row<'_>> = named
        .iter()
        .take(limit)
        .map(|r| Row {
            flat: r.flat,
            cum: r.cum,
            name: &r.name,
            inline: r.reached.mark(),
        })
        .collect();
    let text = match args.format {
        Format::Text => text(
            &inputs,
            &args.view.describe_filters(),
            &rows,
            named.len(),
            total,
        ),
        Format::Tsv => tsv(&rows, total),
        Format::Json => json(&inputs.kind, &inputs.unit, &rows, total),
    };
    write_stdout(&text)
}

/// The top table of one profile named `name`, seen through the view options: the
/// merged profile of a server, a store or a selection of files (--query, --from,
/// --to), or a lone file.
fn sum_one(
    args: &TopArgs,
    options: &ViewOptions,
    name: &Path,
    profile: &Profile,
) -> Result<(TopSum, Inputs), String> {
    let sample_type = args.view.sample_type_of(profile)?;
    let mut inputs = Inputs::of_first(name, profile, sample_type);
    inputs.add(&Header::of(profile));
    let mut sum = TopSum::new();
    let view = View::new(profile, options);
    sum.add(&view.top(profile, sample_type), &view.frames, 1);
    Ok((sum, inputs))
}

/// One thread's part of [`sum_from_wire`].
#[derive(Default)]
struct WireWorker {
    sum: TopSum,
    /// Reused buffers: the file as read, and its inflated message.
    file: Vec<u8>,
    body: Vec<u8>,
    /// Files that could not be read: (index, why).
    failed: Vec<(usize, String)>,
    /// The first file whose sample types differ from the first profile's.
    mismatch: Option<(usize, Vec<String>)>,
    /// The headers of the files read, by file index (kept in that order for the
    /// comments).
    headers: Vec<(usize, Header)>,
}

/// Sums the top tables of local files (and subtracts those of `--diff-base`) seen
/// through the view options, reading each file's samples straight from its bytes on
/// every core, without building profiles: the same table and the same errors as
/// decoding each file and summing the top tables of their views (the model's tests
/// compare both), a few times faster.
fn sum_from_wire(
    args: &TopArgs,
    options: &ViewOptions,
    decode: DecodeOptions,
) -> Result<Summed, String> {
    let sets = [
        capture::files::Inputs::list(&args.view.files)?,
        capture::files::Inputs::list(&args.view.diff_base)?,
    ];
    let all: Vec<(&Path, i64, bool)> = sets
        .iter()
        .zip([1, -1])
        .flat_map(|(set, sign)| {
            set.files
                .iter()
                .map(move |(f, dir)| (f.as_path(), sign, dir.is_none()))
        })
        .collect();
    // The sample type and the header come from the first file that reads, as when
    // profiles are decoded one by one (checked as decoding checks it, but without its
    // stacks, which the workers read). What the files tried for it held (or why they
    // could not be read) is kept for the workers: a pipe (`/dev/stdin`, `<(…)`) gives
    // its bytes only once. A lone file that reads is decoded whole instead, and its
    // top table made from its view: one read of it, where the workers would read it
    // again (a 300,000-sample file: 349 ms against 398 ms).
    let lone = all.len() == 1;
    let mut tried: Vec<Result<Vec<u8>, String>> = Vec::new();
    let mut first = None;
    for (path, _, _) in &all {
        let mut bytes = Vec::new();
        let read = capture::index::read_into(path, &mut bytes, decode);
        let profile = read.as_ref().ok().and_then(|()| {
            let decoded = if lone {
                profile_model::codec::decode_with(&bytes, decode)
            } else {
                profile_model::codec::decode_without_stacks(&bytes, decode)
            };
            decoded.ok()
        });
        if let (true, Some(profile)) = (lone, &profile) {
            let (sum, inputs) = sum_one(args, options, path, profile)?;
            // Folders that could not be read are still named.
            let mut skipped = sets[0].judge(Vec::new())?;
            skipped.extend(sets[1].judge(Vec::new())?);
            return Ok((sum, Some(inputs), skipped));
        }
        tried.push(read.map(|()| bytes));
        if let Some(profile) = profile {
            first = Some((*path, profile));
            break;
        }
    }
    let (inputs, sample_type) = match &first {
        Some((path, profile)) => {
            let t = args.view.sample_type_of(profile)?;
            (Some(Inputs::of_first(path, profile, t)), t)
        }
        None => (None, 0),
    };
    let reference = inputs.as_ref().map(|i| i.sample_type_names.clone());
    let worker = || WireWorker {
        sum: TopSum::for_view(options),
        ..WireWorker::default()
    };
    let workers = capture::index::fold_in_parallel(all.len(), worker, |w, i| {
        let (path, sign, named) = all[i];
        let bytes = match tried.get(i) {
            Some(tried) => tried.as_deref().map_err(String::clone),
            None => capture::index::read_into(path, &mut w.file, decode).map(|()| &w.file[..]),
        };
        let added = bytes.and_then(|bytes| {
            message_bytes(bytes, decode, &mut w.body)
                .and_then(|body| w.sum.add_pprof(body, sample_type, sign))
                .map_err(|e| format!("{}: {e}", path.display()))
        });
        match added {
            Ok(summary) => {
                if reference
                    .as_ref()
                    .is_some_and(|r| *r != summary.sample_types)
                {
                    w.mismatch.get_or_insert((i, summary.sample_types));
                    return ControlFlow::Break(());
                }
                w.headers.push((
                    i,
                    Header {
                        time_nanos: summary.time_nanos,
                        duration_nanos: summary.duration_nanos,
                        comments: summary.comments,
                    },
                ));
            }
            Err(e) => {
                w.failed.push((i, e));
                if named {
                    return ControlFlow::Break(());
                }
            }
        }
        ControlFlow::Continue(())
    });
    let mut sum = TopSum::new();
    let mut failed = Vec::new();
    let mut mismatch: Option<(usize, Vec<String>)> = None;
    let mut inputs = inputs;
    let mut headers = Vec::new();
    for w in workers {
        sum.absorb(w.sum);
        failed.extend(w.failed);
        if let Some((i, names)) = w.mismatch
            && mismatch.as_ref().is_none_or(|(j, _)| i < *j)
        {
            mismatch = Some((i, names));
        }
        headers.extend(w.headers);
    }
    headers.sort_by_key(|(i, _)| *i);
    if let Some(inputs) = &mut inputs {
        for (_, header) in &headers {
            inputs.add(header);
        }
    }
    failed.sort_by_key(|(i, _)| *i);
    // Stop where decoding in order would have stopped: at the first named file that
    // does not read, or the first profile of other sample types.
    let first_failed_named = failed.iter().find(|(i, _)| all[*i].2).map(|(i, _)| *i);
    if let (Some((i, names)), Some(inputs)) = (mismatch, &inputs)
        && first_failed_named.is_none_or(|f| i < f)
    {
        return Err(inputs.mismatch(all[i].0, names, all[i].2));
    }
    let n_files = sets[0].files.len();
    let (files_failed, base_failed): (Vec<_>, Vec<_>) =
        failed.into_iter().partition(|(i, _)| *i < n_files);
    let mut skipped = sets[0].judge(files_failed)?;
    skipped.extend(
        sets[1].judge(
            base_failed
                .into_iter()
                .map(|(i, e)| (i - n_files, e))
                .collect(),
        )?,
    );
    Ok((sum, inputs, skipped))
}

fn pct(value: i64, total: i64) -> f64 {
    if total == 0 {
        0.0
    } else {
        value as f64 * 100.0 / total as f64
    }
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

/// pprof's `-top` layout: a header, then `flat flat% sum% cum cum% name` rows.
fn text(
    inputs: &Inputs,
    filters: &[String],
    rows: &[Row<'_>],
    all_rows: usize,
    total: i64,
) -> String {
    let unit = inputs.unit.as_str();
    let min_value = rows
        .iter()
        .map(|r| {
            if r.flat != 0 {
                r.flat.abs()
            } else {
                r.cum.abs()
            }
        })
        .filter(|v| *v > 0)
        .min()
        .unwrap_or(0);
    let out_unit = pprof_output_unit(min_value, total, unit);
    let value = |v: i64| pprof_value(v, unit, &out_unit);
    let mut out = String::new();
    let (file, build_id) = &inputs.binary;
    if !file.is_empty() {
        let _ = writeln!(out, "File: {file}");
    }
    if !build_id.is_empty() {
        let _ = writeln!(out, "Build ID: {build_id}");
    }
    for c in inputs.comments.iter().filter(|c| !c.starts_with('#')) {
        let _ = writeln!(out, "{c}");
    }
    let _ = writeln!(out, "Type: {}", inputs.kind);
    if inputs.time_nanos != 0 {
        let _ = writeln!(out, "Time: {}", pprof_time(inputs.time_nanos));
    }
    let d = inputs.duration_nanos;
    if d != 0 {
        let duration = pprof_value(d, "nanoseconds", &pprof_output_unit(d, d, "nanoseconds"));
        // pprof adds the total's share of the duration when the total is a time.
        let ratio = match units::nanoseconds_per(unit) {
            Some(ns) if total != 0 => {
                format!("({})", pprof_percent((total as f64 * ns) as i64, d))
            }
            _ => String::new(),
        };
        let _ = writeln!(
            out,
            "Duration: {duration}, Total samples = {} {ratio}",
            value(total)
        );
    }
    if !filters.is_empty() {
        let _ = writeln!(out, "Active filters:");
        for f in filters {
            let _ = writeln!(out, "   {f}");
        }
    }
    let shown = rows.iter().fold(0i64, |sum, r| sum.wrapping_add(r.flat));
    let _ = writeln!(
        out,
        "Showing nodes accounting for {}, {} of {} total",
        value(shown),
        pprof_percent(shown, total).trim(),
        value(total)
    );
    if rows.len() < all_rows {
        let _ = writeln!(out, "Showing top {} nodes out of {all_rows}", rows.len());
    }
    let _ = writeln!(
        out,
        "{:>10} {:>5}% {:>5}% {:>10} {:>5}%",
        "flat", "flat", "sum", "cum", "cum"
    );
    let mut sum = 0i64;
    for r in rows {
        sum = sum.wrapping_add(r.flat);
        let _ = writeln!(
            out,
            "{:>10} {} {} {:>10} {}  {}{}",
            value(r.flat),
            pprof_percent(r.flat, total),
            pprof_percent(sum, total),
            value(r.cum),
            pprof_percent(r.cum, total),
            r.name,
            r.inline.suffix()
        );
    }
    out
}

fn tsv(rows: &[Row<'_>], total: i64) -> String {
    let mut out = String::from("flat\tflat_pct\tcum\tcum_pct\tname\n");
    for r in rows {
        let name = r.name.replace(['\t', '\n'], " ");
        let _ = writeln!(
            out,
            "{}\t{:.2}\t{}\t{:.2}\t{name}",
            r.flat,
            pct(r.flat, total),
            r.cum,
            pct(r.cum, total)
        );
    }
    out
}

fn json(sample_type: &str, unit: &str, rows: &[Row<'_>], total: i64) -> String {
    let rows: Vec<serde_json::Value> = rows
        .iter()
        .map(|r| {
            serde_json::json!({
                "flat": r.flat,
                "flat_pct": pct(r.flat, total),
                "cum": r.cum,
                "cum_pct": pct(r.cum, total),
                "name": r.name,
            })
        })
        .collect();
    let doc = serde_json::json!({
        "sample_type": sample_type,
        "unit": unit,
        "total": total,
        "rows": rows,
    });
    format!("{doc:#}\n")
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
