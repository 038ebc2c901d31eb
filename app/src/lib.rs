//! flint's command line and window as a library, so that the binary stays a few lines
//! and benchmarks and tests can reach the widgets.

pub mod allocator;
pub mod cli;
pub mod gui;
pub mod load;
pub mod version;
