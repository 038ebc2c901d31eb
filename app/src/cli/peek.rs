//! `flint peek`: the callers and callees of the functions a regex matches, as `go tool
//! pprof -peek` prints them.

use std::fmt::Write as _;

use clap::Args;
use regex::Regex;

use profile_model::View;
use profile_model::codec::DecodeOptions;
use profile_model::filter::regex_error;
use profile_model::frames::FrameTable;
use profile_model::peek::PeekEdge;
use profile_model::units::{PprofValues, pprof_percent};

use super::report::{self, Loaded};
use super::top::ServerQueryArgs;
use super::{CliError, ViewArgs, write_stdout};

/// Arguments of `flint peek`.
#[derive(Debug, Args)]
pub struct PeekArgs {
    /// Functions whose callers and callees to print: a regex matched against the
    /// name as `flint top` prints it.
    regex: String,
    #[command(flatten)]
    pub(super) view: ViewArgs,
    #[command(flatten)]
    server: ServerQueryArgs,
}

const SEPARATOR: &str = "----------------------------------------------------------+-------------";
const LEGEND: &str = "      flat  flat%   sum%        cum   cum%   calls calls% + context \t \t ";

/// Compiles a report's function regex, as pprof does (an empty one matches all).
pub(super) fn function_regex(pattern: &str) -> Result<Regex, CliError> {
    Regex::new(pattern)
        .map_err(|e| format!("invalid regex {pattern:?}: {}", regex_error(&e)).into())
}

/// Runs `flint peek`: the header of `flint top`, then each matching function (in the
/// top table's order) with its callers above it and its callees below.
pub fn run(args: &PeekArgs, decode: DecodeOptions) -> Result<(), CliError> {
    let regex = function_regex(&args.regex)?;
    let loaded = Loaded::read(&args.view, &args.server, decode)?;
    let (profile, sample_type) = (&loaded.profile, loaded.sample_type);
    let view = View::new(profile, &loaded.options);
    let top = view.top(profile, sample_type);
    let frames = &view.frames;
    let entries = view.peek(profile, &top, sample_type, |f| {
        regex.is_match(&frames.get(f).name)
    });
    if entries.is_empty() {
        return Err(format!("no matches found for regexp: {}", args.regex).into());
    }
    let header = loaded.header();
    let total = top.total;
    let rows = top.rows.iter().map(|r| (r.flat, r.cum));
    let value = report::value_format(&header.unit, total, rows);
    let shown = top.rows.iter().fold(0i64, |s, r| s.wrapping_add(r.flat));
    let mut out = String::new();
    let filters = args.view.describe_filters();
    report::write_header(&mut out, &header, &filters, (shown, total), &value);
    let _ = writeln!(out, "{SEPARATOR}\n{LEGEND}");
    let mut flat_sum = 0i64;
    for entry in &entries {
        let _ = writeln!(out, "{SEPARATOR}");
        let cum = entry.row.cum;
        write_edges(&mut out, &entry.callers, cum, frames, &value);
        flat_sum = flat_sum.wrapping_add(entry.row.flat);
        let _ = writeln!(
            out,
            "{:>10} {} {} {:>10} {}                | {}",
            value.format(entry.row.flat),
            pprof_percent(entry.row.flat, total),
            pprof_percent(flat_sum, total),
            value.format(cum),
            pprof_percent(cum, total),
            frames.get(entry.row.frame).name
        );
        write_edges(&mut out, &entry.callees, cum, frames, &value);
    }
    let _ = writeln!(out, "{SEPARATOR}");
    write_stdout(&out)
}

/// One line per edge: its weight, its share of the function's cum, the other frame.
fn write_edges(
    out: &mut String,
    edges: &[PeekEdge],
    cum: i64,
    frames: &FrameTable,
    value: &PprofValues,
) {
    for e in edges {
        let inline = if e.inline { " (inline)" } else { "" };
        let _ = writeln!(
            out,
            "{:>50} {} |   {}{inline}",
            value.format(e.weight),
            pprof_percent(e.weight, cum),
            frames.get(e.frame).name
        );
    }
}
