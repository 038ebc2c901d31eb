//! `flint fold`: folded stacks for flamegraph.pl, inferno or speedscope.

use std::io::Write as _;

use clap::Args;
use profile_model::View;
use profile_model::codec::DecodeOptions;
use profile_model::fold::write_folded;

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
    output_result(
        write_folded(&tree, &view.frames, sample_type, &mut out).and_then(|()| out.flush()),
    )
}
