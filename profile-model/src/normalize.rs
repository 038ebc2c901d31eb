//! What pprof does to a profile as it reads it (its `Merge` of the one profile, then
//! `RemoveUninteresting`), so that every view sees the profile pprof sees: mappings of
//! one binary made one, equal samples merged, `drop_frames` pruned ([`crate::prune`]).

use rustc_hash::FxHashMap;

use crate::profile::{Label, LabelSetId, LocationId, Mapping, MappingId, Profile, Samples, StrId};

/// Makes `profile` what pprof reads of it. Each step is skipped when it would change
/// nothing, as it does for most profiles.
pub fn as_pprof_reads(profile: &mut Profile) {
    merge_equal_mappings(profile);
    merge_equal_samples(&mut profile.samples, &profile.label_sets);
    crate::prune::prune(profile);
}

/// What makes two mappings one binary to pprof: the same build id (else file name),
/// file offset, and size rounded up to 4 KiB.
pub(crate) fn mapping_key<'s>(m: &Mapping, str: impl Fn(StrId) -> &'s str) -> (u64, u64, &'s str) {
    let size = m
        .memory_limit
        .wrapping_sub(m.memory_start)
        .wrapping_add(0xfff)
        & !0xfff;
    let who = match str(m.build_id) {
        "" => str(m.filename),
        build_id => build_id,
    };
    (size, m.file_offset, who)
}

/// Mappings of one binary ([`mapping_key`]) made the one pprof keeps: the first
/// mapping (the main binary), else the first met walking the samples that weigh
/// something (each stack leaf first); the locations of the others move to it, their
/// addresses rebased onto its start.
fn merge_equal_mappings(profile: &mut Profile) {
    let keys: Vec<_> = (profile.mappings.iter())
        .map(|m| mapping_key(m, |id| profile.str(id)))
        .collect();
    let mut seen = rustc_hash::FxHashSet::default();
    if keys.iter().all(|k| seen.insert(*k)) {
        return;
    }
    let mut canonical: Vec<Option<MappingId>> = vec![None; keys.len()];
    let mut first: FxHashMap<(u64, u64, &str), MappingId> = FxHashMap::default();
    first.insert(keys[0], 0);
    canonical[0] = Some(0);
    let samples = &profile.samples;
    for i in (0..samples.len()).filter(|&i| samples.values.iter().any(|c| c[i] != 0)) {
        for &loc in samples.stack(i) {
            if let Some(m) = profile.locations[loc as usize].mapping
                && canonical[m as usize].is_none()
            {
                canonical[m as usize] = Some(*first.entry(keys[m as usize]).or_insert(m));
            }
        }
    }
    let starts: Vec<u64> = profile.mappings.iter().map(|m| m.memory_start).collect();
    for loc in &mut profile.locations {
        let Some(m) = loc.mapping else { continue };
        if let Some(to) = canonical[m as usize].filter(|to| *to != m) {
            let delta = starts[to as usize].wrapping_sub(starts[m as usize]);
            loc.address = loc.address.wrapping_add(delta);
            loc.mapping = Some(to);
        }
    }
}

/// Merges samples of the same stack and label set into the first of them, their
/// values added. Only values of opposite signs make this visible (in the absolute
/// totals), so it is done only when a value is negative. As pprof's sample key, a
/// label set is its labels in key order: the same labels written in another order are
/// the same set (values of one key keep their order).
fn merge_equal_samples(samples: &mut Samples, label_sets: &[Vec<Label>]) {
    if samples.values.iter().flatten().all(|v| *v >= 0) {
        return;
    }
    let mut by_labels: FxHashMap<Vec<Label>, LabelSetId> = FxHashMap::default();
    let canonical: Vec<LabelSetId> = (label_sets.iter().enumerate())
        .map(|(id, set)| {
            let mut sorted = set.clone();
            // Stable: pprof keeps the order of one key's values.
            sorted.sort_by_key(|l| (l.str == 0, l.key));
            *by_labels.entry(sorted).or_insert(id as LabelSetId)
        })
        .collect();
    let canonical = |set: LabelSetId| canonical.get(set as usize).copied().unwrap_or(set);
    let mut first: FxHashMap<(&[LocationId], LabelSetId), usize> = FxHashMap::default();
    let mut merged = Samples {
        stack_offsets: vec![0],
        values: vec![Vec::new(); samples.values.len()],
        ..Samples::default()
    };
    for i in 0..samples.len() {
        let key = (samples.stack(i), canonical(samples.label_set[i]));
        let kept = *first.entry(key).or_insert_with(|| {
            merged.stack_locations.extend_from_slice(key.0);
            (merged.stack_offsets).push(merged.stack_locations.len() as u32);
            merged.label_set.push(key.1);
            merged.values.iter_mut().for_each(|c| c.push(0));
            merged.label_set.len() - 1
        });
        for (to, from) in merged.values.iter_mut().zip(&samples.values) {
            to[kept] = to[kept].wrapping_add(from[i]);
        }
    }
    drop(first);
    *samples = merged;
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::formats::builder::Builder;

    #[test]
    fn samples_whose_labels_differ_only_in_order_merge_as_pprof_merges_them() {
        let mut b = Builder::new(&[("contentions", "count")], 1, 0);
        let one = b.label_set(&[("thread", "a")]);
        let both = b.label_set(&[("endpoint", "b"), ("thread", "a")]);
        let mut p = b.finish();
        let swapped = p.label_sets[both as usize].iter().rev().copied().collect();
        p.label_sets.push(swapped);
        let swapped = (p.label_sets.len() - 1) as LabelSetId;
        let s = &mut p.samples;
        for (value, set) in [(-993, both), (507, swapped), (40, one)] {
            s.stack_offsets.push(0);
            s.values[0].push(value);
            s.label_set.push(set);
        }
        as_pprof_reads(&mut p);
        // pprof (go tool pprof -top of such a profile): |-993 + 507| + 40.
        assert_eq!(crate::top::totals(&p, 0), (526, 0));
        assert_eq!(p.samples.len(), 2);
    }
}
