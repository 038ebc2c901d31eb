//! Comparing two profiles, as Parca's compare view: profile A (the "before") against
//! profile B (the "after").
//!
//! [`combine`] puts both into one profile with two value columns, A's in column
//! [`A`] and B's in column [`B`], so that the whole existing machinery (views, filters,
//! call tree, flame graph, top table) works on the pair unchanged: a call tree node's
//! `totals(A)` is its value in A and `totals(B)` its value in B. [`classify`] decides
//! how a node or row is colored, [`diff_rows`] is the table of differences per frame,
//! and [`difference`] exports B − A as an ordinary pprof profile.

use std::cmp::Reverse;

use crate::error::ProfileError;
use crate::frames::FrameId;
use crate::merge::{AsColumn, Merger};
use crate::profile::{Profile, Samples, StrId, ValueType};
use crate::view::View;

/// The value column of profile A in a [`combine`]d profile.
pub const A: usize = 0;
/// The value column of profile B in a [`combine`]d profile.
pub const B: usize = 1;
/// The sample type name of column [`A`] of a combined profile (its unit is the original one).
pub const KIND_A: &str = "a";
/// The sample type name of column [`B`] of a combined profile (its unit is the original one).
pub const KIND_B: &str = "b";

/// Below this change (0.1% of the total), a frame counts as unchanged.
const SAME_THRESHOLD: f64 = 0.001;
/// The lowest intensity of a change, so that every change is visible.
const MIN_INTENSITY: f32 = 0.15;

/// How two profiles are compared.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum DiffMode {
    /// Each side as a fraction of its own total: profiles of different lengths compare
    /// by shape.
    #[default]
    Relative,
    /// Raw values: a profile twice as long is twice as much.
    Absolute,
}

/// How a frame changed from A to B: see [`classify`] for the rule.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Change {
    /// Unchanged, within 0.1% of the total.
    Same,
    /// More in B than in A, with an intensity in (0, 1].
    More(f32),
    /// Less in B than in A, with an intensity in (0, 1].
    Less(f32),
    /// Only in B.
    New,
    /// Only in A.
    Vanished,
}

/// How the value `a` in profile A (of total `total_a`) changed to `b` in profile B
/// (of total `total_b`).
///
/// The rule, as the legend states it:
/// - in relative mode each side is its fraction of its own profile (`a' = a / total_a`,
///   `b' = b / total_b`); in absolute mode the raw values (`a' = a`, `b' = b`);
/// - **new** when only B has it (`a = 0 < b`), **vanished** when only A has it
///   (`b = 0 < a`);
/// - **same** when `|b' − a'|` is at most 0.1% of the total (relative: 0.001;
///   absolute: 0.001 × max(total_a, total_b));
/// - otherwise **more** (`b' > a'`) or **less** (`b' < a'`), with an intensity of
///   `0.15 + 0.85 × |b' − a'| / max(|a'|, |b'|)`: at least 0.15, 1 when one side is 0,
///   and growing with the relative change.
pub fn classify(a: i64, b: i64, total_a: i64, total_b: i64, mode: DiffMode) -> Change {
    if is_new(a, b) {
        return Change::New;
    }
    if is_vanished(a, b) {
        return Change::Vanished;
    }
    let share = |v: i64, total: i64| {
        if total == 0 {
            0.0
        } else {
            v as f64 / total as f64
        }
    };
    let (a_norm, b_norm, threshold) = match mode {
        DiffMode::Relative => (share(a, total_a), share(b, total_b), SAME_THRESHOLD),
        DiffMode::Absolute => (
            a as f64,
            b as f64,
            SAME_THRESHOLD * total_a.abs().max(total_b.abs()) as f64,
        ),
    };
    let change = b_norm - a_norm;
    // The tolerance keeps a change of exactly 0.1% "same" despite rounding.
    if change.abs() <= threshold * (1.0 + 1e-9) {
        return Change::Same;
    }
    let largest = a_norm.abs().max(b_norm.abs());
    let relative = if largest > 0.0 {
        (change.abs() / largest).min(1.0)
    } else {
        1.0
    };
    let intensity = MIN_INTENSITY + (1.0 - MIN_INTENSITY) * relative as f32;
    if change > 0.0 {
        Change::More(intensity)
    } else {
        Change::Less(intensity)
    }
}

/// Whether a frame with `a` in A and `b` in B is only in B ([`Change::New`]).
pub fn is_new(a: i64, b: i64) -> bool {
    a == 0 && b > 0
}

/// Whether a frame with `a` in A and `b` in B is only in A ([`Change::Vanished`]).
pub fn is_vanished(a: i64, b: i64) -> bool {
    b == 0 && a > 0
}

/// One row of the table of differences: a frame's values in A and in B.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DiffRow {
    /// The frame.
    pub frame: FrameId,
    /// Its cum (total) value in A, as pprof's cum.
    pub a: i64,
    /// Its cum (total) value in B.
    pub b: i64,
    /// Its flat (self) value in A.
    pub a_flat: i64,
    /// Its flat (self) value in B.
    pub b_flat: i64,
}

/// A frame's change from A to B, as the table of differences and the tooltips show it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Delta {
    /// B − A in the profiles' unit; in [`DiffMode::Relative`] A is first scaled to B's
    /// total (as Parca's relative diff and [`difference`] do).
    pub value: i64,
    /// `value` in percent of the total it is measured against: A's in
    /// [`DiffMode::Absolute`] (as pprof's `-diff_base` percentages), B's in
    /// [`DiffMode::Relative`], where it is the change of the frame's share of its
    /// profile (`b / total_b − a / total_a`, in points: within ±0.1 is [`Change::Same`]).
    /// A total of 0 counts as a share of 0.
    pub percent: f64,
}

/// The factor A's values are multiplied by before B − A is taken: `total_b / total_a`
/// in relative mode (when it is not 1), none in absolute mode.
fn scale_of_a(total_a: i64, total_b: i64, mode: DiffMode) -> Option<f64> {
    match mode {
        DiffMode::Relative if total_a != 0 && total_a != total_b => {
            Some(total_b as f64 / total_a as f64)
        }
        _ => None,
    }
}

/// The change of a frame with value `a` in A (of total `total_a`) and `b` in B (of
/// total `total_b`), compared in `mode`: see [`Delta`].
pub fn delta(a: i64, b: i64, total_a: i64, total_b: i64, mode: DiffMode) -> Delta {
    let scaled = scale_of_a(total_a, total_b, mode).map_or(a, |s| (a as f64 * s).round() as i64);
    let share = |v: i64, total: i64| {
        if total == 0 {
            0.0
        } else {
            v as f64 * 100.0 / total as f64
        }
    };
    let percent = match mode {
        // From the shares themselves, not from the rounded scaled value.
        DiffMode::Relative if total_a != 0 => share(b, total_b) - share(a, total_a),
        DiffMode::Relative => share(b, total_b),
        DiffMode::Absolute => share(b.saturating_sub(a), total_a),
    };
    Delta {
        value: b.saturating_sub(scaled),
        percent,
    }
}

impl DiffRow {
    /// This row's change in `mode`, the totals being A's and B's.
    pub fn delta(&self, total_a: i64, total_b: i64, mode: DiffMode) -> Delta {
        delta(self.a, self.b, total_a, total_b, mode)
    }
}

/// The difference of every frame of a [`combine`]d profile that has a value in A or in B,
/// over the samples `view` keeps, sorted by |delta| in `mode` descending (ties by name,
/// then by larger cum in B).
pub fn diff_rows(view: &View, combined: &Profile, mode: DiffMode) -> Vec<DiffRow> {
    let top_a = view.top(combined, A);
    let top_b = view.top(combined, B);
    let mut rows: Vec<DiffRow> = (0..view.frames.len() as FrameId)
        .map(|frame| DiffRow {
            frame,
            a: 0,
            b: 0,
            a_flat: 0,
            b_flat: 0,
        })
        .collect();
    let mut seen = vec![false; rows.len()];
    for r in &top_a.rows {
        if let Some(row) = rows.get_mut(r.frame as usize) {
            row.a = r.cum;
            row.a_flat = r.flat;
            seen[r.frame as usize] = true;
        }
    }
    for r in &top_b.rows {
        if let Some(row) = rows.get_mut(r.frame as usize) {
            row.b = r.cum;
            row.b_flat = r.flat;
            seen[r.frame as usize] = true;
        }
    }
    let mut rows: Vec<DiffRow> = rows
        .into_iter()
        .zip(seen)
        .filter(|(_, seen)| *seen)
        .map(|(row, _)| row)
        .collect();
    let (total_a, total_b) = (top_a.kept, top_b.kept);
    let size = |r: &DiffRow| Reverse(r.delta(total_a, total_b, mode).value.unsigned_abs());
    rows.sort_by(|x, y| {
        (size(x), &view.frames.get(x.frame).name, Reverse(x.b)).cmp(&(
            size(y),
            &view.frames.get(y.frame).name,
            Reverse(y.b),
        ))
    });
    rows
}

/// The string `s` in `p`'s string table, added when missing.
fn intern(p: &mut Profile, s: &str) -> StrId {
    if let Some(i) = p.strings.iter().position(|x| x == s) {
        return i as StrId;
    }
    if p.strings.is_empty() {
        p.strings.push(String::new());
        if s.is_empty() {
            return 0;
        }
    }
    p.strings.push(s.to_string());
    (p.strings.len() - 1) as StrId
}

/// Checks that `sample_type` is a sample type of `p` (named `name` in errors).
fn check_type(name: &str, p: &Profile, sample_type: usize) -> Result<ValueType, ProfileError> {
    p.sample_types.get(sample_type).copied().ok_or_else(|| {
        ProfileError::Invalid(format!(
            "profile {name} has no sample type {sample_type} (it has {}: {})",
            p.sample_types.len(),
            p.sample_type_names().join(", ")
        ))
    })
}

/// One profile holding both A's sample type `a_type` (column [`A`], named [`KIND_A`])
/// and B's sample type `b_type` (column [`B`], named [`KIND_B`]), both in their common
/// unit: every sample of A has the values `[v, 0]`, every sample of B `[0, v]`, and
/// samples of both with the same stack and labels are one sample `[v_a, v_b]`. Strings,
/// functions, locations and label sets are re-interned as [`Merger`] does. The period,
/// period type, start time and duration are B's; B's sample type is the default.
///
/// Fails when a sample type does not exist, or when the two have different units
/// ([`ProfileError::IncompatibleSampleTypes`], naming both).
pub fn combine(
    a: &Profile,
    a_type: usize,
    b: &Profile,
    b_type: usize,
) -> Result<Profile, ProfileError> {
    let type_a = check_type("A", a, a_type)?;
    let type_b = check_type("B", b, b_type)?;
    if a.str(type_a.unit) != b.str(type_b.unit) {
        return Err(ProfileError::IncompatibleSampleTypes {
            first: "A".to_string(),
            first_types: a.sample_type_names().swap_remove(a_type),
            second: "B".to_string(),
            second_types: b.sample_type_names().swap_remove(b_type),
        });
    }
    let unit = b.str(type_b.unit);
    let types = [(KIND_A, unit), (KIND_B, unit)];
    let side = |column, slot| AsColumn {
        types: &types,
        default_type: KIND_B,
        column,
        slot,
    };
    let mut merger = Merger::new();
    merger.add_as_column("A", a, &side(a_type, A))?;
    merger.add_as_column("B", b, &side(b_type, B))?;
    let mut out = merger.finish();
    out.period_type = ValueType {
        kind: intern(&mut out, b.str(b.period_type.kind)),
        unit: intern(&mut out, b.str(b.period_type.unit)),
    };
    out.period = b.period;
    out.time_nanos = b.time_nanos;
    out.duration_nanos = b.duration_nanos;
    Ok(out)
}

/// B − A as an ordinary profile with one sample type (B's, e.g. `cpu/nanoseconds`), as
/// Parca's diff: in [`DiffMode::Relative`] A's values are first scaled by
/// `total_b / total_a` (each sample rounded to an integer), in [`DiffMode::Absolute`]
/// they are taken as they are. Samples with the same stack and labels are summed, and
/// samples whose difference is 0 are dropped. Fails as [`combine`].
pub fn difference(
    a: &Profile,
    a_type: usize,
    b: &Profile,
    b_type: usize,
    mode: DiffMode,
) -> Result<Profile, ProfileError> {
    let mut out = combine(a, a_type, b, b_type)?;
    let (total_a, total_b) = (out.total(A), out.total(B));
    let scale = scale_of_a(total_a, total_b, mode);
    let mut columns = std::mem::take(&mut out.samples.values).into_iter();
    let (column_a, column_b) = (
        columns.next().unwrap_or_default(),
        columns.next().unwrap_or_default(),
    );
    let old = std::mem::take(&mut out.samples);
    let mut samples = Samples {
        stack_offsets: vec![0],
        stack_locations: Vec::new(),
        values: vec![Vec::new()],
        label_set: Vec::new(),
    };
    for i in 0..old.len() {
        let va = column_a.get(i).copied().unwrap_or(0);
        let vb = column_b.get(i).copied().unwrap_or(0);
        let scaled = scale.map_or(va, |scale| (va as f64 * scale).round() as i64);
        let value = vb.saturating_sub(scaled);
        if value == 0 {
            continue;
        }
        samples.stack_locations.extend_from_slice(old.stack(i));
        samples
            .stack_offsets
            .push(samples.stack_locations.len() as u32);
        samples.values[0].push(value);
        samples.label_set.push(old.label_set[i]);
    }
    out.samples = samples;
    let kind = intern(
        &mut out,
        b.sample_types.get(b_type).map_or("", |t| b.str(t.kind)),
    );
    let unit = out.sample_types.first().map_or(0, |t| t.unit);
    out.sample_types = vec![ValueType { kind, unit }];
    out.default_sample_type = kind;
    let comment = match mode {
        DiffMode::Relative => {
            format!("flint difference B - A, A scaled by {total_b}/{total_a} (relative mode)")
        }
        DiffMode::Absolute => "flint difference B - A (absolute mode)".to_string(),
    };
    let comment = intern(&mut out, &comment);
    out.comments.push(comment);
    Ok(out)
}
