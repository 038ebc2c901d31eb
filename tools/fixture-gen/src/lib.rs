//! flint's test fixtures: the synthetic profile generator, which is part of the
//! product ([`profile_model::synthetic`], the window's demo) and re-exported here for
//! the `flint-fixture-gen` tool, the tests and the benchmarks; [`symbol_parts`], real
//! programs and addresses-only profiles for the symbolizer; and [`Scratch`], the
//! folder a test writes its files into, removed when the test ends.

mod scratch;
pub mod symbol_parts;

pub use profile_model::synthetic::*;
pub use scratch::Scratch;
