//! The pprof report a Query answers: the profile restricted to the selected sample
//! type, or Parca's difference of two profiles (and, for the other reports, B's values
//! beside that difference).

use profile_model::Profile;
use profile_model::diff::{DiffMode, combine, difference};

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
    let Some((a, b)) = scaled_sides(a, b, absolute) else {
        return difference(a, 0, b, 0, DiffMode::Absolute).map_err(invalid);
    };
    let mut out = difference(&a, 0, &b, 0, DiffMode::Absolute).map_err(invalid)?;
    // `difference` notes "absolute mode"; say what was done instead.
    out.comments.pop();
    out.strings.push(format!(
        "flint difference B - A (relative mode: totals {total_a} and {total_b}, the smaller scaled up)"
    ));
    out.comments.push((out.strings.len() - 1) as u32);
    Ok(out)
}

/// What Parca's reports other than pprof read of a diff, per stack and labels: column
/// 0 is B's value as Parca keeps it (scaled up with B when B is the smaller side, as
/// Parca's `ComputeDiff` scales B's value column in place), column 1 the difference
/// B − A of [`parca_difference`], to the unit.
pub fn parca_value_and_difference(
    a: &Profile,
    b: &Profile,
    absolute: bool,
) -> Result<Profile, SourceError> {
    let scaled = scaled_sides(a, b, absolute);
    let (a, b) = scaled.as_ref().map_or((a, b), |(a, b)| (a, b));
    let mut out = combine(a, 0, b, 0).map_err(invalid)?;
    let mut columns = std::mem::take(&mut out.samples.values).into_iter();
    let (column_a, column_b) = (
        columns.next().unwrap_or_default(),
        columns.next().unwrap_or_default(),
    );
    let diff = column_b
        .iter()
        .zip(&column_a)
        .map(|(b, a)| b.saturating_sub(*a))
        .collect();
    out.samples.values = vec![column_b, diff];
    Ok(out)
}

fn invalid(e: profile_model::ProfileError) -> SourceError {
    SourceError::InvalidArgument(e.to_string())
}

/// Both sides with the smaller total scaled up to the bigger total, as Parca compares
/// them unless `absolute`; `None` when nothing is scaled (absolute, equal totals, or
/// an empty side).
fn scaled_sides(a: &Profile, b: &Profile, absolute: bool) -> Option<(Profile, Profile)> {
    let (total_a, total_b) = (a.total(0), b.total(0));
    if absolute || total_a == total_b || total_a == 0 || total_b == 0 {
        return None;
    }
    let (mut a, mut b) = (a.clone(), b.clone());
    if total_a < total_b {
        scale(&mut a, total_b as f64 / total_a as f64);
    } else {
        scale(&mut b, total_a as f64 / total_b as f64);
    }
    Some((a, b))
}

/// Multiplies every value of the first sample type by `factor`, rounding.
fn scale(profile: &mut Profile, factor: f64) {
    if let Some(column) = profile.samples.values.first_mut() {
        for v in column {
            *v = (*v as f64 * factor).round() as i64;
        }
    }
}
