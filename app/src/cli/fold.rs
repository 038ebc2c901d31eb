//! `flint fold`: folded stacks for flamegraph.pl, inferno or speedscope.

use std::io::Write as _;

use clap::Args;
use profile_model::View;
use profile_model::codec::DecodeOptions;
use profile_model::fold::write_folded;

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
}

/// Runs `flint fold`: the folded stacks of what `flint top` would read.
pub fn run(args: &FoldArgs, decode: DecodeOptions) -> Result<(), CliError> {
    let Loaded {
        profile,
        sample_type,
        options,
        ..
    } = Loaded::read(&args.view, &args.server, decode)?;
    let view = View::new(&profile, &options);
    let tree = view.call_tree(&profile);
    let mut out = std::io::BufWriter::with_capacity(1 << 16, std::io::stdout().lock());
    output_result(
        write_folded(&tree, &view.frames, sample_type, &mut out).and_then(|()| out.flush()),
    )
}
