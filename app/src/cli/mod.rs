//! The command line: argument definitions and the dispatch of each subcommand.

mod error;
mod fold;
mod list;
mod peek;
mod push;
mod record;
mod remote;
mod report;
mod series;
mod serve;
mod spool;
mod symbolize;
mod symbols;
mod top;

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Args, Parser, Subcommand};

pub use error::CliError;
use profile_model::codec::DecodeOptions;
use profile_model::filter::compile_regex;
use profile_model::formats::FoldedUnit;
use profile_model::{Filters, Granularity, Profile, TagFilter, ViewOptions};

/// flint: a native viewer for CPU profiles (pprof).
#[derive(Debug, Parser)]
#[command(
    name = "flint",
    version = crate::version::VERSION,
    args_conflicts_with_subcommands = true
)]
pub struct Cli {
    /// What to open in the window: profiles (pprof, gzipped or raw; folded stacks; V8
    /// .cpuprofile; speedscope JSON; several are merged, as `go tool pprof` merges
    /// them), or one folder of profiles over time, or one server URL; the bundled demo
    /// when absent.
    files: Vec<PathBuf>,
    /// Largest decompressed profile accepted, e.g. 2GiB, 512MiB, 1000000.
    #[arg(long, global = true, value_parser = parse_size, default_value = "2GiB")]
    max_decompressed: u64,
    /// What the counts of folded-stacks files measure: samples, nanoseconds,
    /// microseconds, milliseconds, seconds or bytes.
    #[arg(long, global = true, default_value = "samples")]
    folded_unit: FoldedUnit,
    /// Where the window finds names for addresses (binaries among the files too).
    #[command(flatten)]
    symbols: symbols::SymbolArgs,
    /// Show addresses as they came in the window.
    #[arg(long)]
    no_symbolize: bool,
    /// Where the window's source view looks for source files (`:`-separated folders,
    /// and their parents), as `flint list --source-path`; default: the current folder.
    #[arg(long, value_name = "DIR")]
    source_path: Option<String>,
    /// Prefixes cut from the profile's source paths before looking, as `flint list
    /// --trim-path`.
    #[arg(long, value_name = "PREFIX", default_value = "")]
    trim_path: String,
    #[command(subcommand)]
    command: Option<Command>,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Print the top functions, as `go tool pprof -top` does (several files are merged).
    Top(top::TopArgs),
    /// Print the callers and callees of functions, as `go tool pprof -peek REGEX` does.
    Peek(peek::PeekArgs),
    /// Print functions' source with flat and cum per line, as `go tool pprof -list REGEX`.
    List(list::ListArgs),
    /// Print folded stacks, one `root;…;leaf VALUE` line per distinct stack.
    Fold(fold::FoldArgs),
    /// Print values over time per series: time, labels, value, value per second.
    Series(series::SeriesArgs),
    /// Serve a store of profiles with Parca's gRPC API (query and WriteRaw).
    Serve(serve::ServeArgs),
    /// Send pprof files to a Parca server or `flint serve` (WriteRaw).
    Push(push::PushArgs),
    /// Sample this machine's CPUs (eBPF or perf) into a file, a store or a server.
    Record(record::RecordArgs),
    /// Name the addresses of a profile made elsewhere and write it: `flint symbolize
    /// ./prog cpu.pb.gz -o named.pb.gz`.
    Symbolize(symbolize::SymbolizeArgs),
}

impl Command {
    /// The profile inputs and view options of a report subcommand.
    fn view_mut(&mut self) -> Option<&mut ViewArgs> {
        match self {
            Self::Top(a) => Some(&mut a.view),
            Self::Peek(a) => Some(&mut a.view),
            Self::List(a) => Some(&mut a.view),
            Self::Fold(a) => Some(&mut a.view),
            _ => None,
        }
    }
}

/// Options shared by the subcommands that read profiles.
#[derive(Debug, Args)]
pub struct ViewArgs {
    /// Profile files (pprof, folded stacks, .cpuprofile, speedscope) or directories
    /// (searched recursively); all are merged. Or one server, `grpc://HOST:PORT` or `https://HOST` (see --query).
    #[arg(required = true, value_name = "FILE")]
    files: Vec<PathBuf>,
    /// Subtract this profile (or directory) from FILEs, as `go tool pprof -diff_base`;
    /// repeat it for more bases, which are merged.
    #[arg(long = "diff-base", value_name = "BASE", action = clap::ArgAction::Append)]
    diff_base: Vec<PathBuf>,
    /// Sample type by name (`cpu`, `alloc_space`) or index; default: as pprof, the last.
    #[arg(long, short = 's')]
    sample_type: Option<String>,
    /// Keep only stacks through a frame matching this regex.
    #[arg(long)]
    focus: Option<String>,
    /// Drop stacks with a frame matching this regex.
    #[arg(long)]
    ignore: Option<String>,
    /// Remove frames matching this regex from stacks.
    #[arg(long)]
    hide: Option<String>,
    /// Keep only samples with this label (`KEY=VALUE`, value a regex); repeatable.
    #[arg(long = "tag", value_name = "KEY=VALUE")]
    tags: Vec<String>,
    /// How finely frames are told apart.
    #[arg(long, value_enum, default_value = "function")]
    granularity: GranularityArg,
    #[command(flatten)]
    symbols: symbols::SymbolArgs,
    /// Show addresses as they came, even where binaries, --symbols, PPROF_BINARY_PATH
    /// or --perf-map could name them.
    #[arg(long)]
    no_symbolize: bool,
}

#[derive(Debug, Clone, Copy, clap::ValueEnum)]
enum GranularityArg {
    Function,
    Line,
    Address,
}

impl ViewArgs {
    /// Takes the binaries out of the inputs (pprof's `flint top ./prog cpu.pb.gz`).
    fn take_binaries(&mut self) {
        self.symbols.take_binaries(&mut self.files);
    }

    /// Whether the profile read is to be symbolized: a source is configured and
    /// `--no-symbolize` is not given.
    fn symbolizes(&self) -> bool {
        !self.no_symbolize && self.symbols.sources().is_configured()
    }

    /// The filters as pprof lists them under "Active filters:".
    fn describe_filters(&self) -> Vec<String> {
        let regexes = [
            ("focus", &self.focus),
            ("ignore", &self.ignore),
            ("hide", &self.hide),
        ];
        regexes
            .iter()
            .filter_map(|(name, value)| value.as_ref().map(|v| format!("{name}={v}")))
            .chain(self.tags.iter().map(|t| format!("tagfocus={t}")))
            .collect()
    }

    /// The filters and granularity asked for.
    fn view_options(&self) -> Result<ViewOptions, CliError> {
        let filters = Filters {
            focus: compile_regex("--focus", self.focus.as_deref().unwrap_or(""))?,
            ignore: compile_regex("--ignore", self.ignore.as_deref().unwrap_or(""))?,
            hide: compile_regex("--hide", self.hide.as_deref().unwrap_or(""))?,
            tags: self
                .tags
                .iter()
                .map(|t| TagFilter::parse(t))
                .collect::<Result<_, _>>()?,
        };
        let granularity = match self.granularity {
            GranularityArg::Function => Granularity::Function,
            GranularityArg::Line => Granularity::FunctionLine,
            GranularityArg::Address => Granularity::Address,
        };
        Ok(ViewOptions {
            granularity,
            filters,
        })
    }

    /// The sample type asked for (by name or index), else pprof's default.
    fn sample_type_of(&self, profile: &Profile) -> Result<usize, CliError> {
        Ok(capture::read::top::sample_type_of(
            profile,
            self.sample_type.as_deref(),
        )?)
    }
}

/// Prints one `warning:` line per file skipped in a directory.
fn warn_skipped(skipped: &[String]) {
    for s in skipped {
        eprintln!("warning: skipped {s}");
    }
}

/// Parses a byte size such as `2GiB`, `512MiB`, `64KiB`, `1GB` or `1000`.
fn parse_size(text: &str) -> Result<u64, String> {
    let t = text.trim();
    let split = t.find(|c: char| !c.is_ascii_digit()).unwrap_or(t.len());
    let (digits, suffix) = t.split_at(split);
    let n: u64 = digits
        .parse()
        .map_err(|_| format!("{text:?} is not a size such as 2GiB or 1000000"))?;
    let factor: u64 = match suffix.trim().to_ascii_lowercase().as_str() {
        "" | "b" => 1,
        "k" | "kb" => 1000,
        "kib" => 1 << 10,
        "m" | "mb" => 1_000_000,
        "mib" => 1 << 20,
        "g" | "gb" => 1_000_000_000,
        "gib" => 1 << 30,
        _ => {
            return Err(format!(
                "{text:?}: unknown size suffix (use B, KiB, MiB, GiB)"
            ));
        }
    };
    n.checked_mul(factor)
        .ok_or_else(|| format!("{text:?} is too large"))
}

/// Prints a clap error as one `error: …` line (help and version print in full).
pub fn usage_error(e: &clap::Error) -> ExitCode {
    use clap::error::ErrorKind;
    if matches!(
        e.kind(),
        ErrorKind::DisplayHelp
            | ErrorKind::DisplayVersion
            | ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand
    ) {
        let _ = e.print();
        return ExitCode::SUCCESS;
    }
    let rendered = e.render().to_string();
    eprintln!(
        "error: {} (see {} --help)",
        usage_line(&rendered),
        usage_command(&rendered)
    );
    ExitCode::from(2)
}

/// The command a rendered clap error's usage line names (`flint top`), whose help
/// tells what went wrong; `flint` when there is none.
fn usage_command(rendered: &str) -> String {
    let words: Vec<&str> = rendered
        .lines()
        .find_map(|l| l.trim().strip_prefix("Usage:"))
        .map(|usage| {
            usage
                .split_whitespace()
                .take_while(|w| !w.starts_with(['[', '<', '-']))
                .collect()
        })
        .unwrap_or_default();
    if words.is_empty() {
        "flint".to_string()
    } else {
        words.join(" ")
    }
}

/// The first paragraph of a rendered clap error as one line: the message with what it
/// lists (e.g. the missing arguments, which clap puts on the lines below it).
fn usage_line(rendered: &str) -> String {
    let paragraph: Vec<&str> = rendered
        .lines()
        .take_while(|l| !l.trim().is_empty())
        .map(str::trim)
        .collect();
    let line = paragraph.join(" ");
    let line = line.strip_prefix("error: ").unwrap_or(&line);
    if line.is_empty() {
        "invalid arguments".to_string()
    } else {
        line.to_string()
    }
}

/// Runs the chosen subcommand, or the window.
pub fn run(mut cli: Cli) -> Result<(), CliError> {
    if let Some(view) = cli.command.as_mut().and_then(Command::view_mut) {
        view.take_binaries();
    }
    let decode = DecodeOptions {
        max_decompressed_bytes: cli.max_decompressed,
        folded_unit: cli.folded_unit,
    };
    match cli.command {
        Some(Command::Top(args)) => top::run(&args, decode),
        Some(Command::Peek(args)) => peek::run(&args, decode),
        Some(Command::List(args)) => list::run(&args, decode),
        Some(Command::Fold(args)) => fold::run(&args, decode),
        Some(Command::Symbolize(args)) => symbolize::run(args, decode),
        Some(Command::Series(args)) => series::run(&args, decode),
        Some(Command::Serve(args)) => serve::run(&args),
        Some(Command::Push(args)) => push::run(&args, decode),
        Some(Command::Record(args)) => record::run(&args, decode.max_decompressed_bytes),
        None => {
            if !has_display() {
                return Err(
                    "no display found (neither DISPLAY nor WAYLAND_DISPLAY is set); \
                     the headless subcommands work without one: flint top, peek, list, fold, series, serve, push, record, symbolize"
                        .into(),
                );
            }
            cli.symbols.take_binaries(&mut cli.files);
            let all_sources = cli.symbols.sources();
            let source_files = capture::symbolize::source_file::SourceConfig {
                paths: profile_model::source_listing::SourcePaths {
                    search_path: match &cli.source_path {
                        Some(dir) => dir.clone(),
                        None => std::env::current_dir()
                            .map(|d| d.display().to_string())
                            .unwrap_or_default(),
                    },
                    source_path: cli.source_path.unwrap_or_default(),
                    trim_path: cli.trim_path,
                },
                debuginfod: all_sources.debuginfod.clone(),
            };
            let sources = if cli.no_symbolize {
                capture::symbolize::SymbolSources::default()
            } else {
                all_sources
            };
            Ok(crate::gui::run(cli.files, decode, sources, source_files)?)
        }
    }
}

/// Whether a window can be opened at all (on Linux: an X11 or Wayland display).
fn has_display() -> bool {
    if !cfg!(target_os = "linux") {
        return true;
    }
    ["DISPLAY", "WAYLAND_DISPLAY"]
        .iter()
        .any(|v| std::env::var_os(v).is_some_and(|s| !s.is_empty()))
}

/// Writes to stdout, treating a closed pipe (`flint top … | head`) as success.
fn write_stdout(text: &str) -> Result<(), CliError> {
    use std::io::Write as _;
    let mut out = std::io::stdout().lock();
    output_result(out.write_all(text.as_bytes()).and_then(|()| out.flush()))
}

/// The outcome of writing to stdout: a reader that stopped reading (`| head`) is no
/// error, any other failure is.
fn output_result(written: std::io::Result<()>) -> Result<(), CliError> {
    match written {
        Err(e) if e.kind() != std::io::ErrorKind::BrokenPipe => {
            Err(format!("writing output: {e}").into())
        }
        _ => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use clap::Parser as _;

    use super::{Cli, parse_size, usage_command, usage_line};

    #[test]
    fn a_usage_error_names_what_is_missing_on_its_one_line() {
        let e = Cli::try_parse_from(["flint", "top", "--diff-base", "a.pb.gz"])
            .expect_err("no FILE after the base");
        let line = usage_line(&e.render().to_string());
        assert_eq!(
            line,
            "the following required arguments were not provided: <FILE>..."
        );
        let e = Cli::try_parse_from(["flint", "top", "--nope", "x"]).expect_err("unknown flag");
        let line = usage_line(&e.render().to_string());
        assert!(
            line.starts_with("unexpected argument '--nope' found"),
            "{line}"
        );
        assert!(!line.contains('\n'));
        assert_eq!(usage_command(&e.render().to_string()), "flint top");
        let e = Cli::try_parse_from(["flint", "series"]).expect_err("no PATH");
        assert_eq!(usage_command(&e.render().to_string()), "flint series");
        let e = Cli::try_parse_from(["flint", "--nope"]).expect_err("unknown flag");
        assert_eq!(usage_command(&e.render().to_string()), "flint");
        assert_eq!(usage_command("error: no usage here"), "flint");
    }

    #[test]
    fn sizes_parse_with_binary_and_decimal_suffixes() {
        assert_eq!(parse_size("2GiB"), Ok(2 << 30));
        assert_eq!(parse_size("512MiB"), Ok(512 << 20));
        assert_eq!(parse_size("1000"), Ok(1000));
        assert_eq!(parse_size("1 kb"), Ok(1000));
        assert!(parse_size("lots").is_err());
        assert!(parse_size("5XB").is_err());
        assert!(parse_size("99999999999999999999GiB").is_err());
    }
}
