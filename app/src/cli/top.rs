//! `flint top`: the top table, in pprof's text layout, as TSV or as JSON.

use std::fmt::Write as _;
use std::path::PathBuf;

use clap::Args;

use profile_model::Profile;
use profile_model::codec::DecodeOptions;
use profile_model::top::InlineMark;
use profile_model::units::push_pprof_percent;

use capture::read::top::{TopHeader, TopSummed, sum_top, top_of_profile};
use capture::{ProfileSource, Progress, QueryTime, TimeRange};

use super::CliError;
use super::remote::{ConnectArgs, Input, RangeArgs, runtime, selector_or_default};
use super::{ViewArgs, report, write_stdout};

/// Arguments of `flint top`.
#[derive(Debug, Args)]
pub struct TopArgs {
    #[command(flatten)]
    pub(super) view: ViewArgs,
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
    /// store, or files: their labels as `flint series` shows them); default: the type
    /// pprof shows (the profiles' default_sample_type, else their last type), else CPU
    /// time.
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
    ) -> Result<Option<(PathBuf, Profile, Vec<String>)>, CliError> {
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

    /// What `source` merges for --query (default: the type it shows) over `range`;
    /// `held` is the span a store or files hold (named when the range holds nothing).
    fn merged(
        &self,
        source: &dyn ProfileSource,
        range: TimeRange,
        held: Option<TimeRange>,
    ) -> Result<Profile, CliError> {
        runtime()?.block_on(async {
            let selector = selector_or_default(source, self.query.as_deref(), range, held).await?;
            let progress = Progress::default();
            let merged = source
                .query(selector.clone(), QueryTime::Merge(range), progress.clone())
                .await
                .map_err(|e| format!("{selector}: {e}"));
            super::warn_skipped(&progress.skipped());
            Ok(merged?)
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

/// Runs `flint top`: every input's top table is summed, file by file, which is
/// exactly the top table of their merge (and of their difference with `--diff-base`);
/// where symbols are to be named, the merge is read whole and symbolized first.
pub fn run(args: &TopArgs, decode: DecodeOptions) -> Result<(), CliError> {
    let options = args.view.view_options()?;
    let summed = if args.view.symbolizes() {
        let loaded = report::Loaded::read(&args.view, &args.server, decode)?;
        let (sum, _) = top_of_profile(&loaded.name, &loaded.profile, loaded.sample_type, &options);
        TopSummed {
            sum,
            header: Some(loaded.header()),
            skipped: Vec::new(),
        }
    } else {
        let summed = summed_as_they_came(args, &options, decode)?;
        let comments = summed.header.iter().flat_map(|h| &h.comments);
        report::warn_perf_data(comments.map(String::as_str));
        summed
    };
    print_top(args, summed)
}

/// The top table of the profiles as they came, summed from their bytes where they are
/// files taken whole.
fn summed_as_they_came(
    args: &TopArgs,
    options: &profile_model::ViewOptions,
    decode: DecodeOptions,
) -> Result<TopSummed, CliError> {
    let files = args.view.files.as_slice();
    Ok(
        match args.server.selected(files, &args.view.diff_base, decode)? {
            Some((name, profile, unreadable)) => {
                let sample_type = args.view.sample_type_of(&profile)?;
                let (sum, header) = top_of_profile(&name, &profile, sample_type, options);
                TopSummed {
                    sum,
                    header: Some(header),
                    skipped: unreadable,
                }
            }
            None => {
                let sample_type = args.view.sample_type.as_deref();
                sum_top(files, &args.view.diff_base, sample_type, options, decode)?
            }
        },
    )
}

/// Prints the summed top table in the format asked for.
fn print_top(args: &TopArgs, summed: TopSummed) -> Result<(), CliError> {
    let files = args.view.files.as_slice();
    let TopSummed {
        sum,
        header,
        skipped,
    } = summed;
    super::warn_skipped(&skipped);
    let Some(header) = header else {
        let names: Vec<String> = files.iter().map(|f| f.display().to_string()).collect();
        let what = if skipped.is_empty() {
            "no profiles found"
        } else {
            "no readable profiles"
        };
        return Err(format!("{what} in {}", names.join(", ")).into());
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
            &header,
            &args.view.describe_filters(),
            &rows,
            named.len(),
            total,
        ),
        Format::Tsv => tsv(&rows, total),
        Format::Json => json(&header.kind, &header.unit, &rows, total),
    };
    write_stdout(&text)
}

fn pct(value: i64, total: i64) -> f64 {
    if total == 0 {
        0.0
    } else {
        value as f64 * 100.0 / total as f64
    }
}

/// pprof's `-top` layout: a header, then `flat flat% sum% cum cum% name` rows.
fn text(
    header: &TopHeader,
    filters: &[String],
    rows: &[Row<'_>],
    all_rows: usize,
    total: i64,
) -> String {
    let value = report::value_format(&header.unit, total, rows.iter().map(|r| (r.flat, r.cum)));
    let mut out = String::new();
    let shown = rows.iter().fold(0i64, |sum, r| sum.wrapping_add(r.flat));
    report::write_header(&mut out, header, filters, (shown, total), &value);
    if rows.len() < all_rows {
        let _ = writeln!(out, "Showing top {} nodes out of {all_rows}", rows.len());
    }
    let _ = writeln!(
        out,
        "{:>10} {:>5}% {:>5}% {:>10} {:>5}%",
        "flat", "flat", "sum", "cum", "cum"
    );
    // Each row appended piece by piece, as `{:>10} {} {} {:>10} {}  {}{}` would write
    // it, with no string made per value: a large profile has tens of thousands of rows.
    let mut sum = 0i64;
    let mut field = String::new();
    let mut push_value = |out: &mut String, v: i64| {
        field.clear();
        value.push(&mut field, v);
        out.extend(std::iter::repeat_n(
            ' ',
            10usize.saturating_sub(field.chars().count()),
        ));
        out.push_str(&field);
    };
    for r in rows {
        sum = sum.wrapping_add(r.flat);
        push_value(&mut out, r.flat);
        out.push(' ');
        push_pprof_percent(&mut out, r.flat, total);
        out.push(' ');
        push_pprof_percent(&mut out, sum, total);
        out.push(' ');
        push_value(&mut out, r.cum);
        out.push(' ');
        push_pprof_percent(&mut out, r.cum, total);
        out.push_str("  ");
        out.push_str(r.name);
        out.push_str(r.inline.suffix());
        out.push('\n');
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
