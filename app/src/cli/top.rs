//! `flint top`: the top table, in pprof's text layout, as TSV or as JSON.

use std::fmt::Write as _;

use clap::Args;
use profile_model::codec::DecodeOptions;
use profile_model::top::InlineMark;
use profile_model::units::{pprof_output_unit, pprof_percent, pprof_value};
use profile_model::{Profile, View};

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

/// Runs `flint top`.
pub fn run(args: &TopArgs, decode: DecodeOptions) -> Result<(), String> {
    let (profile, sample_type, options) = args.view.load(decode)?;
    let view = View::new(&profile, &options);
    let top = view.top(&profile, sample_type);
    let limit = args.limit.unwrap_or(usize::MAX);
    let rows: Vec<Row<'_>> = top
        .rows
        .iter()
        .take(limit)
        .map(|r| Row {
            flat: r.flat,
            cum: r.cum,
            name: &view.frames.get(r.frame).name,
            inline: r.inline,
        })
        .collect();
    let kind_unit = profile.sample_types[sample_type];
    let unit = profile.str(kind_unit.unit);
    let text = match args.format {
        Format::Text => text(
            &profile,
            sample_type,
            &args.view.describe_filters(),
            &rows,
            top.rows.len(),
            top.total,
        ),
        Format::Tsv => tsv(&rows, top.total),
        Format::Json => json(profile.str(kind_unit.kind), unit, &rows, top.total),
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
    profile: &Profile,
    sample_type: usize,
    filters: &[String],
    rows: &[Row<'_>],
    all_rows: usize,
    total: i64,
) -> String {
    let t = profile.sample_types[sample_type];
    let unit = profile.str(t.unit);
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
    let _ = writeln!(out, "Type: {}", profile.str(t.kind));
    if !filters.is_empty() {
        let _ = writeln!(out, "Active filters:");
        for f in filters {
            let _ = writeln!(out, "   {f}");
        }
    }
    if profile.duration_nanos > 0 {
        let d = profile.duration_nanos;
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
