//! `flint top`: the top table, in pprof's text layout, as TSV or as JSON.

use std::fmt::Write as _;
use std::path::Path;

use clap::Args;
use profile_model::codec::DecodeOptions;
use profile_model::top::{InlineMark, TopSum};
use profile_model::units::{pprof_output_unit, pprof_percent, pprof_value};
use profile_model::{Profile, ProfileError, View};

use capture::{ProfileSource, Progress, QueryTime, Store, StoreOptions, TimeRange};

use super::remote::{ConnectArgs, RangeArgs, is_url, runtime, selector_or_default};
use super::{ViewArgs, write_stdout};
use crate::load::for_each_profile;

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
pub struct ServerQueryArgs {
    /// Parca selector of the profiles to merge (servers only), e.g.
    /// `process_cpu:cpu:nanoseconds:cpu:nanoseconds:delta{job="api"}`; default: the
    /// server's CPU profile type.
    #[arg(long, short = 'q')]
    query: Option<String>,
    #[command(flatten)]
    range: RangeArgs,
    #[command(flatten)]
    connect: ConnectArgs,
}

impl ServerQueryArgs {
    /// The profiles of the range merged by the server at `url`.
    fn fetch(&self, url: &Path, decode: DecodeOptions) -> Result<Profile, String> {
        let range = self.range.range()?;
        let source = self
            .connect
            .connect(&url.to_string_lossy(), decode.max_decompressed_bytes)?;
        self.merged(&source, range)
    }

    /// The profiles of flint's store in `dir` over the range (all of it by default),
    /// merged.
    fn fetch_store(&self, dir: &Path) -> Result<Profile, String> {
        let store = Store::open(dir, StoreOptions::default())?;
        self.merged(&store, self.range.range_or(TimeRange::ALL)?)
    }

    /// What `source` merges for --query (default: its CPU profile type) over `range`.
    fn merged(&self, source: &dyn ProfileSource, range: TimeRange) -> Result<Profile, String> {
        runtime()?.block_on(async {
            let selector = selector_or_default(source, self.query.as_deref(), range).await?;
            source
                .query(
                    selector.clone(),
                    QueryTime::Merge(range),
                    Progress::default(),
                )
                .await
                .map_err(|e| format!("{selector}: {e}"))
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
    /// The chosen sample type's kind and unit.
    kind: String,
    unit: String,
    /// Earliest start and latest end of the inputs that have times.
    start_nanos: i64,
    end_nanos: i64,
}

/// Runs `flint top`: every input's top table is summed, file by file, which is
/// exactly the top table of their merge (and of their difference with `--diff-base`).
pub fn run(args: &TopArgs, decode: DecodeOptions) -> Result<(), String> {
    let options = args.view.view_options()?;
    let mut sum = TopSum::new();
    let mut inputs: Option<(Inputs, usize)> = None;
    let mut add = |path: &Path, profile: Profile, sign: i64| -> Result<(), String> {
        let sample_type = match &mut inputs {
            None => {
                let t = args.view.sample_type_of(&profile)?;
                let kind_unit = profile.sample_types[t];
                inputs = Some((
                    Inputs {
                        sample_type_names: profile.sample_type_names(),
                        first: path.display().to_string(),
                        kind: profile.str(kind_unit.kind).to_string(),
                        unit: profile.str(kind_unit.unit).to_string(),
                        start_nanos: profile.time_nanos,
                        end_nanos: profile.time_nanos + profile.duration_nanos,
                    },
                    t,
                ));
                t
            }
            Some((seen, t)) => {
                let names = profile.sample_type_names();
                if names != seen.sample_type_names {
                    return Err(ProfileError::IncompatibleSampleTypes {
                        first: seen.first.clone(),
                        first_types: seen.sample_type_names.join(", "),
                        second: path.display().to_string(),
                        second_types: names.join(", "),
                    }
                    .to_string());
                }
                if profile.time_nanos != 0 {
                    seen.start_nanos = seen.start_nanos.min(profile.time_nanos);
                    seen.end_nanos = seen
                        .end_nanos
                        .max(profile.time_nanos + profile.duration_nanos);
                }
                *t
            }
        };
        let view = View::new(&profile, &options);
        sum.add(&view.top(&profile, sample_type), &view.frames, sign);
        Ok(())
    };
    let mut skipped = Vec::new();
    match args.view.files.as_slice() {
        [url] if is_url(url) => {
            if !args.view.diff_base.is_empty() {
                return Err("--diff-base compares files; it cannot be used with a server".into());
            }
            add(url, args.server.fetch(url, decode)?, 1)?;
        }
        [dir] if Store::is_store_dir(dir) => {
            if !args.view.diff_base.is_empty() {
                return Err("--diff-base compares files; it cannot be used with a store".into());
            }
            add(dir, args.server.fetch_store(dir)?, 1)?;
        }
        files => {
            if let Some(url) = files.iter().find(|f| is_url(f)) {
                return Err(format!(
                    "{}: a server is queried alone, not together with files",
                    url.display()
                ));
            }
            skipped = for_each_profile(files, decode, |path, p| add(path, p, 1))?;
        }
    }
    if !args.view.diff_base.is_empty() {
        skipped.extend(for_each_profile(
            &args.view.diff_base,
            decode,
            |path, p| add(path, p, -1),
        )?);
    }
    super::warn_skipped(&skipped);
    let Some((inputs, _)) = inputs else {
        return Err("no profiles found".into());
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

fn pct(value: i64, total: i64) -> f64 {
    if total == 0 {
        0.0
    } else {
        value as f64 * 100.0 / total as f64
    }
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
    let _ = writeln!(out, "Type: {}", inputs.kind);
    if !filters.is_empty() {
        let _ = writeln!(out, "Active filters:");
        for f in filters {
            let _ = writeln!(out, "   {f}");
        }
    }
    let d = inputs.end_nanos - inputs.start_nanos;
    if d > 0 {
        let duration = pprof_value(d, "nanoseconds", &pprof_output_unit(d, d, "nanoseconds"));
        let _ = writeln!(
            out,
            "Duration: {duration}, Total samples = {}",
            value(total)
        );
    }
    let shown: i64 = rows.iter().map(|r| r.flat).sum();
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
        sum += r.flat;
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
