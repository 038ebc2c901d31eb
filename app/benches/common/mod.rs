//! What the benchmarks share: the fleet profile.

use flint_fixture_gen::{FleetParams, UniverseParams, encode_gz, fleet_profile};

/// The fleet fixture as `flint-fixture-gen fleet` writes it with seed `seed` (1: its
/// default): 300,000 samples, 120,000 locations, 30,000 functions in 8 binaries.
pub fn fleet_bytes_seeded(seed: u64) -> Vec<u8> {
    let params = FleetParams {
        universe: UniverseParams {
            locations: 120_000,
            functions: 30_000,
            binaries: 8,
            min_depth: 20,
            max_depth: 80,
            seed,
        },
        samples: 300_000,
        time_nanos: 1_700_000_000_000_000_000,
        duration_nanos: 10_000_000_000,
    };
    let profile = fleet_profile(&params).expect("fleet parameters are valid");
    encode_gz(&profile).expect("encodes").1
}
