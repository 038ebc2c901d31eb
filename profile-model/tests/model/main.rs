//! Tests of the model on real profiles written by Go's runtime/pprof, and on bad input.

#![allow(
    clippy::expect_used,
    clippy::unwrap_used,
    reason = "a test fails loudly on a broken fixture"
)]

mod bad_input;
mod codec;
mod layout;
mod tree;

use std::path::PathBuf;

use profile_model::{Profile, codec::decode};

/// Path of a file under `tests/fixtures/go/`.
pub fn fixture_path(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../tests/fixtures/go")
        .join(name)
}

/// Bytes of a fixture.
pub fn fixture_bytes(name: &str) -> Vec<u8> {
    std::fs::read(fixture_path(name)).unwrap_or_else(|e| panic!("fixture {name}: {e}"))
}

/// A decoded fixture.
pub fn fixture(name: &str) -> Profile {
    decode(&fixture_bytes(name)).unwrap_or_else(|e| panic!("fixture {name}: {e}"))
}
