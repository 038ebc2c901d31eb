//! `flint series`: values over time of the profiles in files and directories, per
//! series, as the window's plot shows them.

use std::fmt::Write as _;
use std::path::PathBuf;

use capture::time::rfc3339;
use capture::{FileSource, Labels, ProfileSource as _, Progress, Selector, TimeRange};
use clap::Args;
use profile_model::codec::DecodeOptions;

use super::write_stdout;

/// Arguments of `flint series`.
#[derive(Debug, Args)]
pub struct SeriesArgs {
    /// Profile files or directories (searched recursively).
    #[arg(required = true, value_name = "PATH")]
    paths: Vec<PathBuf>,
    /// Parca selector, e.g. `process_cpu:cpu:nanoseconds:cpu:nanoseconds:delta{comm="api"}`;
    /// default: the CPU time profile type, else the first one found.
    #[arg(long, short = 'q')]
    query: Option<String>,
    /// Sum series by these labels (repeatable); default: comm, else container, else one
    /// series. `--sum-by '*'` keeps every label set apart.
    #[arg(long = "sum-by", value_name = "LABEL")]
    sum_by: Vec<String>,
    /// Output format.
    #[arg(long, value_enum, default_value = "text")]
    format: Format,
}

#[derive(Debug, Clone, Copy, clap::ValueEnum)]
enum Format {
    /// Aligned columns.
    Text,
    /// Tab-separated: time, labels, value, value_per_second.
    Tsv,
}

/// Runs `flint series`.
pub fn run(args: &SeriesArgs, decode: DecodeOptions) -> Result<(), String> {
    let (source, skipped) = FileSource::open(&args.paths, decode, &Progress::default())?;
    for s in &skipped {
        eprintln!("warning: skipped {s}");
    }
    let runtime = tokio::runtime::Builder::new_current_thread()
        .build()
        .map_err(|e| format!("cannot start the query runtime: {e}"))?;
    let text = runtime.block_on(async {
        let selector = match &args.query {
            Some(q) => Selector::parse(q)?,
            None => default_selector(&source).await?,
        };
        let sum_by = match args.sum_by.as_slice() {
            [all] if all == "*" => None,
            [] => {
                let names = source
                    .labels(selector.clone(), TimeRange::ALL)
                    .await
                    .map_err(|e| e.to_string())?;
                let default = ["comm", "container"]
                    .into_iter()
                    .find(|n| names.iter().any(|x| x == n));
                Some(default.map(|n| vec![n.to_string()]).unwrap_or_default())
            }
            names => Some(names.to_vec()),
        };
        // One point per profile: a step of one nanosecond never merges two.
        let series = source
            .query_range(selector.clone(), TimeRange::ALL, 1, sum_by)
            .await
            .map_err(|e| format!("{selector}: {e}"))?;
        let mut out = String::new();
        if matches!(args.format, Format::Tsv) {
            out.push_str("time\tlabels\tvalue\tvalue_per_second\n");
        }
        for s in &series {
            let labels = labels_text(&s.labels);
            for p in &s.points {
                let time = rfc3339(p.time_nanos);
                let _ = match args.format {
                    Format::Tsv => writeln!(
                        out,
                        "{time}\t{labels}\t{}\t{:.3}",
                        p.value, p.value_per_second
                    ),
                    Format::Text => writeln!(
                        out,
                        "{time}  {labels:<30} {:>16} {:>16.3}/s",
                        p.value, p.value_per_second
                    ),
                };
            }
        }
        Ok::<String, String>(out)
    })?;
    write_stdout(&text)
}

/// The CPU time profile type if there is one, else the first type found.
async fn default_selector(source: &FileSource) -> Result<Selector, String> {
    let types = source
        .profile_types(TimeRange::ALL)
        .await
        .map_err(|e| e.to_string())?;
    let chosen = types
        .iter()
        .find(|t| t.sample_type == "cpu")
        .or_else(|| types.first())
        .ok_or("the profiles have no sample types")?;
    Ok(Selector {
        profile_type: chosen.clone(),
        matchers: Vec::new(),
    })
}

/// `{comm="api", pid="7"}`, or `{}` for the sum of everything.
fn labels_text(labels: &Labels) -> String {
    let parts: Vec<String> = labels.iter().map(|(k, v)| format!("{k}={v:?}")).collect();
    format!("{{{}}}", parts.join(", "))
}
