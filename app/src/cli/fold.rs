//! `flint fold`: folded stacks for flamegraph.pl, inferno or speedscope, or the same
//! stacks as a speedscope JSON file (`--format speedscope`).

use std::io::Write as _;

use clap::Args;
use profile_model::View;
use profile_model::codec::DecodeOptions;
use profile_model::fold::write_folded;
use profile_model::formats::speedscope;
use profile_model::group_by::group_by_labels;

use super::CliError;
use super::report::Loaded;
use super::top::ServerQueryArgs;
use super::{ViewArgs, output_result};

/// Arguments of `flint fold`.
#[derive(Debug, Args)]
pub struct FoldArgs {
    #[command(flatten)]
    pub(super) view: ViewArgs,
    #[command(flatten)]
    server: ServerQueryArgs,
    /// Output: folded stacks, or speedscope's JSON (one sampled profile).
    #[arg(long, value_enum, default_value = "folded")]
    format: FoldFormat,
    /// A sample label whose values become the root frames (`comm=api-server;main;…`);
    /// repeated, the first is outermost.
    #[arg(long = "group-by", value_name = "LABEL")]
    group_by: Vec<String>,
}

/// `flint fold --format`.
#[derive(Debug, Clone, Copy, clap::ValueEnum)]
enum FoldFormat {
    Folded,
    Speedscope,
}

/// Runs `flint fold`: the folded stacks of what `flint top` would read.
pub fn run(args: &FoldArgs, decode: DecodeOptions) -> Result<(), CliError> {
    let Loaded {
        profile,
        sample_type,
        options,
        ..
    } = Loaded::read(&args.view, &args.server, decode)?;
    let profile = if args.group_by.is_empty() {
        profile
    } else {
        group_by_labels(&profile, &args.group_by)
    };
    let view = View::new(&profile, &options);
    let tree = view.call_tree(&profile);
    let mut out = std::io::BufWriter::with_capacity(1 << 16, std::io::stdout().lock());
    let written = match args.format {
        FoldFormat::Folded => write_folded(&tree, &view.frames, sample_type, &mut out),
        FoldFormat::Speedscope => {
            let json = speedscope::encode(&profile, &tree, &view.frames, sample_type);
            out.write_all(&json)
        }
    };
    output_result(written.and_then(|()| out.flush()))
}
