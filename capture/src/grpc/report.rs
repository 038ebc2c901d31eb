//! The pprof report a Query answers: the profile restricted to the selected sample
//! type, or Parca's difference of two profiles.

use profile_model::Profile;
use profile_model::diff::{DiffMode, difference};

use crate::selector::ProfileType;
use crate::source::SourceError;

/// The index of `profile_type`'s sample type (by type and unit) in `profile`.
pub fn sample_type_index(profile: &Profile, profile_type: &ProfileType) -> Option<usize> {
    profile.sample_types.iter().position(|t| {
        profile.str(t.kind) == profile_type.sample_type
            && profile.str(t.unit) == profile_type.sample_unit
    })
}

/// `profile` with only `profile_type`'s sample type, as Parca's pprof report has.
pub fn only_type(profile: Profile, profile_type: &ProfileType) -> Result<Profile, SourceError> {
    sample_type_index(&profile, profile_type)
        .and_then(|i| profile.only_sample_type(i))
        .ok_or_else(|| {
            SourceError::Failed(format!(
                "the answer has no {}/{} sample type",
                profile_type.sample_type, profile_type.sample_unit
            ))
        })
}

/// B − A as Parca computes it, in the one sample type of each (as [`only_type`] leaves
/// them): unless `absolute`, the side with the smaller total is first scaled up to the
/// bigger total, so that shapes are compared. The values are the differences.
pub fn parca_difference(a: &Profile, b: &Profile, absolute: bool) -> Result<Profile, SourceError> {
    let (total_a, total_b) = (a.total(0), b.total(0));
    let failed = |e: profile_model::ProfileError| SourceError::InvalidArgument(e.to_string());
    if absolute || total_a == total_b || total_a == 0 || total_b == 0 {
        return difference(a, 0, b, 0, DiffMode::Absolute).map_err(failed);
    }
    let (mut a, mut b) = (a.clone(), b.clone());
    if total_a < total_b {
        scale(&mut a, total_b as f64 / total_a as f64);
    } else {
        scale(&mut b, total_a as f64 / total_b as f64);
    }
    let mut out = difference(&a, 0, &b, 0, DiffMode::Absolute).map_err(failed)?;
    // `difference` notes "absolute mode"; say what was done instead.
    out.comments.pop();
    out.strings.push(format!(
        "flint difference B - A (relative mode: totals {total_a} and {total_b}, the smaller scaled up)"
    ));
    out.comments.push((out.strings.len() - 1) as u32);
    Ok(out)
}

/// Multiplies every value of the first sample type by `factor`, rounding.
fn scale(profile: &mut Profile, factor: f64) {
    if let Some(column) = profile.samples.values.first_mut() {
        for v in column {
            *v = (*v as f64 * factor).round() as i64;
        }
    }
}
