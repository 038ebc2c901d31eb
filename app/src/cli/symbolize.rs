//! `flint symbolize IN -o OUT`: a profile written back with every location it could
//! name symbolized, and a one-line summary of what was named from where.

use std::path::PathBuf;

use clap::Args;
use profile_model::codec::{DecodeOptions, encode_gzip};

use super::CliError;
use super::symbols::SymbolArgs;

/// Arguments of `flint symbolize`.
#[derive(Debug, Args)]
pub struct SymbolizeArgs {
    /// The profile (several are merged), and any binaries to name it with.
    #[arg(required = true, value_name = "IN")]
    inputs: Vec<PathBuf>,
    /// Where to write the symbolized profile (gzipped pprof).
    #[arg(long, short = 'o', value_name = "OUT")]
    output: PathBuf,
    #[command(flatten)]
    symbols: SymbolArgs,
}

/// Runs `flint symbolize`.
pub fn run(mut args: SymbolizeArgs, decode: DecodeOptions) -> Result<(), CliError> {
    args.symbols.take_binaries(&mut args.inputs);
    if args.inputs.is_empty() {
        return Err("no profile among the inputs (only binaries)".into());
    }
    let merged = capture::read::read_merged(&args.inputs, decode)?;
    super::warn_skipped(&merged.skipped);
    let mut profile = merged.profile;
    let report = args.symbols.symbolize(&mut profile);
    std::fs::write(&args.output, encode_gzip(&profile))
        .map_err(|e| format!("{}: {e}", args.output.display()))?;
    println!("{}", report.summary());
    Ok(())
}
