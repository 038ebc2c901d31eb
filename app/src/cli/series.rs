//! `flint series`: values over time of the profiles in files and directories, or on a
//! server, per series, as the window's plot shows them.

use std::fmt::Write as _;
use std::path::PathBuf;

use capture::Labels;
use capture::time::{parse_duration, rfc3339};
use clap::Args;
use profile_model::codec::DecodeOptions;
use profile_model::units;

use super::CliError;
use super::remote::{ConnectArgs, Input, OpenedInput, RangeArgs, runtime, selector_or_default};
use super::write_stdout;

/// Arguments of `flint series`.
#[derive(Debug, Args)]
pub struct SeriesArgs {
    /// Profile files or directories (searched recursively), or one server:
    /// `grpc://HOST:PORT` or `https://HOST`.
    #[arg(required = true, value_name = "PATH|URL")]
    paths: Vec<PathBuf>,
    /// Parca selector, e.g. `process_cpu:cpu:nanoseconds:cpu:nanoseconds:delta{comm="api"}`;
    /// default: the type pprof shows (the profiles' default_sample_type, else their
    /// last type), else for a server the CPU time type, else the first one found.
    #[arg(long, short = 'q')]
    query: Option<String>,
    /// Sum series by these labels (repeatable); default: comm, else container, else one
    /// series. `--sum-by '*'` keeps every label set apart.
    #[arg(long = "sum-by", value_name = "LABEL")]
    sum_by: Vec<String>,
    /// Width of a point from a server or a store (files give one point per profile),
    /// e.g. 10s, 1m.
    #[arg(long, default_value = "10s", value_name = "DURATION")]
    step: String,
    #[command(flatten)]
    range: RangeArgs,
    #[command(flatten)]
    connect: ConnectArgs,
    /// Output format.
    #[arg(long, value_enum, default_value = "text")]
    format: Format,
}

#[derive(Debug, Clone, Copy, clap::ValueEnum)]
enum Format {
    /// Aligned columns.
    Text,
    /// Tab-separated: time, labels, value, value_per_second (`-` when none).
    Tsv,
}

/// Runs `flint series`.
pub fn run(args: &SeriesArgs, decode: DecodeOptions) -> Result<(), CliError> {
    if let [_, _, ..] = args.sum_by.as_slice()
        && args.sum_by.iter().any(|l| l == "*")
    {
        return Err("--sum-by '*' keeps every label set apart: it takes no other label".into());
    }
    if let Some(bad) = args
        .sum_by
        .iter()
        .find(|l| *l != "*" && !capture::selector::is_label_name(l))
    {
        return Err(format!(
            "--sum-by {bad:?} is not a label name (letters, digits and _, not first a digit)"
        )
        .into());
    }
    let runtime = runtime()?;
    let input = Input::of(&args.paths)?;
    // Files give one point per profile: a step of one nanosecond never merges two.
    let step = match input {
        Input::Files => 1,
        Input::Server | Input::Store => parse_duration(&args.step)
            .map_err(|e| format!("--step: {e}"))?
            .max(1),
    };
    let OpenedInput {
        source,
        range,
        held,
        skipped,
    } = input.open(&args.paths, &args.connect, &args.range, decode)?;
    super::warn_skipped(&skipped);
    let source = source.as_ref();
    let text = runtime.block_on(async {
        let selector = selector_or_default(source, args.query.as_deref(), range, held).await?;
        let sum_by = match args.sum_by.as_slice() {
            [all] if all == "*" => None,
            [] => {
                let names = source
                    .labels(selector.clone(), range)
                    .await
                    .map_err(|e| format!("{selector}: {e}"))?;
                let default = ["comm", "container"]
                    .into_iter()
                    .find(|n| names.iter().any(|x| x == n));
                Some(default.map(|n| vec![n.to_string()]).unwrap_or_default())
            }
            names => Some(names.to_vec()),
        };
        let series = source
            .query_range(selector.clone(), range, step, sum_by)
            .await
            .map_err(|e| format!("{selector}: {e}"))?;
        let unit = selector.profile_type.range_unit().1;
        let mut out = String::new();
        if matches!(args.format, Format::Tsv) {
            out.push_str("time\tlabels\tvalue\tvalue_per_second\n");
        }
        for s in &series {
            let labels = labels_text(&s.labels);
            for p in &s.points {
                let time = rfc3339(p.time_nanos);
                // Per second of profiled time, when the source gives a rate (`-`
                // for a snapshot, or a profile shorter than its sampling period).
                let rate = p.value_per_second;
                let _ = match args.format {
                    Format::Tsv => writeln!(
                        out,
                        "{time}\t{labels}\t{}\t{}",
                        p.value,
                        rate.map_or("-".to_string(), |r| format!("{r:.3}"))
                    ),
                    Format::Text => writeln!(
                        out,
                        "{time}  {labels:<30} {:>10} {:>16}",
                        units::readable(p.value, unit),
                        rate.map_or("-".to_string(), |r| units::readable_per_second(r, unit))
                    ),
                };
            }
        }
        Ok::<String, CliError>(out)
    })?;
    write_stdout(&text)
}

/// `{comm="api", pid="7"}`, or `{}` for the sum of everything.
fn labels_text(labels: &Labels) -> String {
    let parts: Vec<String> = labels.iter().map(|(k, v)| format!("{k}={v:?}")).collect();
    format!("{{{}}}", parts.join(", "))
}
