//! `flint fold`: folded stacks for flamegraph.pl, inferno or speedscope, or the same
//! stacks as a speedscope JSON file (`--format speedscope`).

use std::io::Write as _;

use clap::Args;
use profile_model::View;
use profile_model::codec::DecodeOptions;
use profile_model::fold::write_folded;
use profile_model::formats::speedscope;

use super::CliError;
use super::top::ServerQueryArgs;
use super::{ViewArgs, output_result, warn_skipped};

/// Arguments of `flint fold`.
#[derive(Debug, Args)]
pub struct FoldArgs {
    #[command(flatten)]
    view: ViewArgs,
    #[command(flatten)]
    server: ServerQueryArgs,
    /// Output: folded stacks, or speedscope's JSON (one sampled profile).
    #[arg(long, value_enum, default_value = "folded")]
    format: FoldFormat,
}

/// `flint fold --format`.
#[derive(Debug, Clone, Copy, clap::ValueEnum)]
enum FoldFormat {
    Folded,
    Speedscope,
}

/// Runs `flint fold`: the folded stacks of what `flint top` would read.
pub fn run(args: &FoldArgs, decode: DecodeOptions) -> Result<(), CliError> {
    let view = &args.view;
    let (profile, sample_type, options) =
        match args.server.selected(&view.files, &view.diff_base, decode)? {
            Some((_, profile, skipped)) => {
                warn_skipped(&skipped);
                let sample_type = view.sample_type_of(&profile)?;
                (profile, sample_type, view.view_options()?)
            }
            None => view.load(decode)?,
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
