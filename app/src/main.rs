//! `flint`: a native viewer for CPU profiles. Without a subcommand it opens the window;
//! `top` and `fold` answer the same questions headless.

use std::process::ExitCode;

use clap::Parser as _;
use flint::cli;

#[global_allocator]
static ALLOCATOR: flint::allocator::Allocator = flint::allocator::Allocator {};

fn main() -> ExitCode {
    let args = match cli::Cli::try_parse() {
        Ok(args) => args,
        Err(e) => return cli::usage_error(&e),
    };
    match cli::run(args) {
        Ok(()) => ExitCode::SUCCESS,
        Err(message) => {
            eprintln!("error: {message}");
            ExitCode::FAILURE
        }
    }
}
