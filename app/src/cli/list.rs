//! `flint list`: the source of the functions a regex matches, with flat and cum per
//! line, as `go tool pprof -list` prints it.

use std::fmt::Write as _;
use std::path::PathBuf;

use clap::Args;

use profile_model::codec::DecodeOptions;
use profile_model::source_listing::{SourcePaths, find_source, source_listing};
use profile_model::units::{pprof_percent, pprof_value_scaled};
use profile_model::{Granularity, View};

use super::peek::function_regex;
use super::report::Loaded;
use super::top::ServerQueryArgs;
use super::{CliError, ViewArgs, write_stdout};

/// Arguments of `flint list`.
#[derive(Debug, Args)]
pub struct ListArgs {
    /// Functions to list: a regex matched against the function's name.
    regex: String,
    #[command(flatten)]
    pub(super) view: ViewArgs,
    /// Where to look for source files (`:`-separated folders, and their parents), as
    /// pprof's -source_path; default: the current folder.
    #[arg(long, value_name = "DIR")]
    source_path: Option<String>,
    /// Prefixes to cut from the profile's source paths before looking (`:`-separated),
    /// as pprof's -trim_path; default: cut up to the source folder's own name.
    #[arg(long, value_name = "PREFIX", default_value = "")]
    trim_path: String,
    #[command(flatten)]
    server: ServerQueryArgs,
}

/// Runs `flint list`: each matching function, by name, with its lines in each of its
/// source files (always at line granularity, as pprof's `-list`).
pub fn run(args: &ListArgs, decode: DecodeOptions) -> Result<(), CliError> {
    let regex = function_regex(&args.regex)?;
    let mut loaded = Loaded::read(&args.view, &args.server, decode)?;
    loaded.options.granularity = Granularity::FunctionLine;
    let (profile, sample_type) = (&loaded.profile, loaded.sample_type);
    let view = View::new(profile, &loaded.options);
    let top = view.top(profile, sample_type);
    let search_path = match &args.source_path {
        Some(dir) => dir.clone(),
        None => std::env::current_dir()
            .map_err(|e| format!("could not stat current dir: {e}"))?
            .display()
            .to_string(),
    };
    let paths = SourcePaths {
        source_path: args.source_path.clone().unwrap_or_default(),
        trim_path: args.trim_path.clone(),
        search_path,
    };
    let read = |path: &str| find_source(path, &paths, |p| std::fs::read(PathBuf::from(p)));
    let routines = source_listing(&view.frames, &top, |f| regex.is_match(f), &paths, read);
    if routines.is_empty() {
        return Err(format!("no matches found for regexp: {}", args.regex).into());
    }
    let header = loaded.header();
    let value = |v: i64| pprof_value_scaled(v, &header.unit);
    let dot = |v: i64| if v == 0 { ".".to_string() } else { value(v) };
    let total = top.total;
    let mut out = format!("Total: {}\n", value(total));
    for routine in &routines {
        let name = &routine.function;
        if routine.files.is_empty() {
            let _ = writeln!(out, "No source information for {name}");
        }
        for file in &routine.files {
            let _ = writeln!(
                out,
                "ROUTINE ======================== {name} in {}",
                file.path
            );
            let _ = writeln!(
                out,
                "{:>10} {:>10} (flat, cum) {} of Total",
                value(file.flat),
                value(file.cum),
                pprof_percent(file.cum, total)
            );
            match &file.lines {
                Err(e) => {
                    let _ = writeln!(out, " Error: {e}");
                }
                Ok(lines) => {
                    for l in lines {
                        let (flat, cum) = (dot(l.flat), dot(l.cum));
                        let _ = writeln!(out, "{flat:>10} {cum:>10} {:>6}:{}", l.number, l.text);
                    }
                }
            }
        }
    }
    write_stdout(&out)
}
