//! Whether a comparison's differences stand out from sampling noise: how many samples
//! each side holds, and the largest two-proportion z-score over the call tree's nodes.

use crate::Profile;

/// How many samples `profile` holds: the total of its `samples/count` type where it
/// has one, else its first type's total over the period (CPU time at a sampling
/// rate), else its number of sample rows.
pub fn sample_count(profile: &Profile) -> i64 {
    let named = |i: usize| {
        let t = &profile.sample_types[i];
        (profile.str(t.kind), profile.str(t.unit))
    };
    if let Some(i) = (0..profile.sample_types.len()).find(|&i| named(i) == ("samples", "count")) {
        return profile.total(i);
    }
    let same_unit = profile.sample_types.first().is_some_and(|t| {
        profile.str(t.unit) == profile.str(profile.period_type.unit)
            && !profile.str(t.unit).is_empty()
    });
    if same_unit && profile.period > 0 {
        return profile.total(0) / profile.period;
    }
    profile.samples.len() as i64
}

/// The largest |z| over the nodes of a comparison, each node's share of A's total
/// against its share of B's, for sides of `samples` samples: under 3, every
/// difference is within what sampling explains. The root (index 0) is left out.
pub fn largest_z(totals_a: &[i64], totals_b: &[i64], samples: [i64; 2]) -> f64 {
    let (ta, tb) = (
        totals_a.first().copied().unwrap_or(0),
        totals_b.first().copied().unwrap_or(0),
    );
    let (na, nb) = (samples[0] as f64, samples[1] as f64);
    if ta <= 0 || tb <= 0 || na <= 0.0 || nb <= 0.0 {
        return 0.0;
    }
    totals_a
        .iter()
        .zip(totals_b)
        .skip(1)
        .map(|(&a, &b)| {
            let (pa, pb) = (a as f64 / ta as f64, b as f64 / tb as f64);
            let pooled = (pa * na + pb * nb) / (na + nb);
            let variance = pooled * (1.0 - pooled) * (1.0 / na + 1.0 / nb);
            if variance > 0.0 {
                (pb - pa).abs() / variance.sqrt()
            } else {
                0.0
            }
        })
        .fold(0.0, f64::max)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_share_that_moves_far_past_its_noise_stands_out_and_a_small_move_does_not() {
        // 30% → 50% of 1,000 samples each: z ≈ 9.
        let z = largest_z(&[1000, 300, 700], &[1000, 500, 500], [1000, 1000]);
        assert!(z > 8.0 && z < 10.0, "{z}");
        // 30% → 33% of 100 samples each: z ≈ 0.45.
        let z = largest_z(&[100, 30, 70], &[100, 33, 67], [100, 100]);
        assert!(z < 1.0, "{z}");
        // The same shares from one sample are no evidence at all.
        assert!(largest_z(&[10, 3, 7], &[10, 10, 0], [1, 1]) < 3.0);
        assert_eq!(largest_z(&[0], &[5], [0, 5]), 0.0);
    }

    #[test]
    fn samples_are_counted_from_the_count_type_else_time_over_period() {
        let go = crate::codec::decode(include_bytes!("../../tests/fixtures/go/cpu-1.pb.gz"))
            .expect("fixture");
        let i = (0..go.sample_types.len())
            .find(|&i| go.str(go.sample_types[i].kind) == "samples")
            .expect("a samples type");
        assert_eq!(sample_count(&go), go.total(i));
        assert!(sample_count(&go) > 100);
    }
}
