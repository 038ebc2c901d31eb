//! `flint fold`: folded stacks for flamegraph.pl, inferno or speedscope.

use clap::Args;
use profile_model::View;
use profile_model::codec::DecodeOptions;
use profile_model::fold::folded;

use super::{ViewArgs, write_stdout};

/// Arguments of `flint fold`.
#[derive(Debug, Args)]
pub struct FoldArgs {
    #[command(flatten)]
    view: ViewArgs,
}

/// Runs `flint fold`.
pub fn run(args: &FoldArgs, decode: DecodeOptions) -> Result<(), String> {
    let (profile, sample_type, options) = args.view.load(decode)?;
    let view = View::new(&profile, &options);
    let tree = view.call_tree(&profile);
    write_stdout(&folded(&tree, &view.frames, sample_type))
}
