//! Rewrites of a profile's samples in place: their stacks (cut, shortened, reversed,
//! or the sample dropped) and the labels they keep.

use std::collections::HashMap;

use crate::profile::{Label, LabelSetId, LocationId, Profile, Samples};

impl Samples {
    /// Rewrites every sample's stack: `rewrite(i, stack, out)` pushes sample `i`'s new
    /// stack (leaf first) onto `out` and says whether the sample stays; a sample that
    /// does not stay leaves with its values and labels, whatever it pushed.
    pub fn restack(
        &mut self,
        mut rewrite: impl FnMut(usize, &[LocationId], &mut Vec<LocationId>) -> bool,
    ) {
        let old = std::mem::take(self);
        let mut kept = Samples {
            stack_offsets: vec![0],
            stack_locations: Vec::with_capacity(old.stack_locations.len()),
            values: vec![Vec::with_capacity(old.len()); old.values.len()],
            label_set: Vec::with_capacity(old.len()),
        };
        for i in 0..old.len() {
            let start = kept.stack_locations.len();
            if !rewrite(i, old.stack(i), &mut kept.stack_locations) {
                kept.stack_locations.truncate(start);
                continue;
            }
            kept.stack_offsets.push(kept.stack_locations.len() as u32);
            for (column, old_column) in kept.values.iter_mut().zip(&old.values) {
                column.push(old_column.get(i).copied().unwrap_or(0));
            }
            kept.label_set.push(old.label_set[i]);
        }
        *self = kept;
    }
}

impl Profile {
    /// Keeps, in every sample's label set, only the labels `keep` accepts; label sets
    /// that become equal are made one.
    pub fn keep_labels(&mut self, keep: impl Fn(&Label) -> bool) {
        let mut ids: HashMap<Vec<Label>, LabelSetId> = HashMap::from([(Vec::new(), 0)]);
        let mut sets: Vec<Vec<Label>> = vec![Vec::new()];
        let renumbered: Vec<LabelSetId> = self
            .label_sets
            .iter()
            .map(|set| {
                let kept: Vec<Label> = set.iter().copied().filter(|l| keep(l)).collect();
                *ids.entry(kept).or_insert_with_key(|kept| {
                    sets.push(kept.clone());
                    (sets.len() - 1) as LabelSetId
                })
            })
            .collect();
        for set in &mut self.samples.label_set {
            *set = renumbered.get(*set as usize).copied().unwrap_or(0);
        }
        self.label_sets = sets;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Three samples with stacks [0 1], [2], [1 2 0], values 1, 2, 3 and 10, 20, 30.
    fn samples() -> Samples {
        Samples {
            stack_offsets: vec![0, 2, 3, 6],
            stack_locations: vec![0, 1, 2, 1, 2, 0],
            values: vec![vec![1, 2, 3], vec![10, 20, 30]],
            label_set: vec![0, 1, 2],
        }
    }

    #[test]
    fn restack_rewrites_stacks_and_drops_samples_with_their_values() {
        let mut s = samples();
        s.restack(|i, stack, out| {
            out.extend(stack.iter().rev().filter(|&&l| l != 2));
            i != 1
        });
        assert_eq!(s.len(), 2);
        assert_eq!(s.stack(0), &[1, 0]);
        assert_eq!(s.stack(1), &[0, 1]);
        assert_eq!(s.values, vec![vec![1, 3], vec![10, 30]]);
        assert_eq!(s.label_set, vec![0, 2]);
    }

    #[test]
    fn keep_labels_drops_other_keys_and_merges_equal_sets() {
        let label = |key, str| Label {
            key,
            str,
            ..Label::default()
        };
        let mut p = Profile {
            label_sets: vec![
                vec![],
                vec![label(1, 3), label(2, 4)],
                vec![label(1, 3), label(2, 5)],
                vec![label(2, 4)],
            ],
            samples: Samples {
                label_set: vec![0, 1, 2, 3],
                ..Samples::default()
            },
            ..Profile::default()
        };
        p.keep_labels(|l| l.key == 1);
        assert_eq!(p.label_sets, vec![vec![], vec![label(1, 3)]]);
        assert_eq!(p.samples.label_set, vec![0, 1, 1, 0]);
    }
}
