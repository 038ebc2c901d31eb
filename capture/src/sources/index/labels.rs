//! Series labels: how a profile's sample labels become them ([`SampleLabels`],
//! [`labels_over`]), a profile's value sums per label set ([`groups_of`]), and the one
//! shared copy of each label set and type list ([`Interner`]).

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

use profile_model::Profile;
use profile_model::merge::LabelValue;

use super::entry::Group;
use crate::selector::ProfileType;
use crate::source::Labels;

/// Which pprof sample labels become series labels.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SampleLabels {
    /// String and numeric labels (numbers in decimal): how flint reads files.
    All,
    /// String labels only, as Parca's `LabelNamesFromSamples` at ingest.
    StringsOnly,
}

/// One copy of each distinct label set and type list, shared by the entries of an
/// index.
#[derive(Debug, Default)]
pub struct Interner {
    labels: BTreeSet<Arc<Labels>>,
    types: BTreeSet<Arc<[ProfileType]>>,
}

impl Interner {
    /// The shared copy of `labels`.
    pub fn labels(&mut self, labels: Labels) -> Arc<Labels> {
        if let Some(l) = self.labels.get(&labels) {
            return l.clone();
        }
        let l = Arc::new(labels);
        self.labels.insert(l.clone());
        l
    }

    /// Groups of an entry from (labels, value sums), the labels shared.
    pub fn groups(&mut self, groups: Vec<(Labels, Vec<i64>)>) -> Vec<Group> {
        groups
            .into_iter()
            .map(|(labels, values)| Group {
                labels: self.labels(labels),
                values,
            })
            .collect()
    }

    /// The shared copy of `types`.
    pub fn types(&mut self, types: Vec<ProfileType>) -> Arc<[ProfileType]> {
        if let Some(t) = self.types.get(types.as_slice()) {
            return t.clone();
        }
        let t: Arc<[ProfileType]> = types.into();
        self.types.insert(t.clone());
        t
    }
}

/// The labels of label set `set` of `profile`, with `base` underneath.
pub fn set_labels(profile: &Profile, set: u32, base: &Labels, rule: SampleLabels) -> Labels {
    let set = profile.label_sets.get(set as usize).into_iter().flatten();
    labels_over(
        base,
        set.map(|l| {
            let value = match l.str {
                0 => LabelValue::Num(l.num),
                s => LabelValue::Str(profile.str(s)),
            };
            (profile.str(l.key), value)
        }),
        rule,
    )
}

/// Sample labels as series labels, with `base` underneath: numbers in decimal, or left
/// out when `rule` takes strings only.
pub fn labels_over<'a>(
    base: &Labels,
    sample_labels: impl Iterator<Item = (&'a str, LabelValue<'a>)>,
    rule: SampleLabels,
) -> Labels {
    let mut labels = base.clone();
    for (key, value) in sample_labels {
        let value = match value {
            LabelValue::Str(s) => s.to_string(),
            LabelValue::Num(_) if rule == SampleLabels::StringsOnly => continue,
            LabelValue::Num(n) => n.to_string(),
        };
        labels.insert(key.to_string(), value);
    }
    labels
}

/// The value sums of `profile` per series label set (`base` with the sample labels
/// over it), in label order: what [`Interner::groups`] makes an entry's groups of.
pub fn groups_of(profile: &Profile, base: &Labels, rule: SampleLabels) -> Vec<(Labels, Vec<i64>)> {
    // Summed by label set first: comparing series labels per sample cost more than
    // reading the samples.
    let n_types = profile.sample_types.len();
    let mut set_sums = vec![None::<Vec<i64>>; profile.label_sets.len()];
    for i in 0..profile.samples.len() {
        let Some(sums) = set_sums.get_mut(profile.samples.label_set[i] as usize) else {
            continue;
        };
        let sums = sums.get_or_insert_with(|| vec![0; n_types]);
        for (sum, column) in sums.iter_mut().zip(&profile.samples.values) {
            *sum = sum.wrapping_add(column[i]);
        }
    }
    let mut by_labels: BTreeMap<Labels, Vec<i64>> = BTreeMap::new();
    for (set, sums) in set_sums.into_iter().enumerate() {
        let Some(sums) = sums else { continue };
        let labels = set_labels(profile, set as u32, base, rule);
        match by_labels.get_mut(&labels) {
            Some(total) => total
                .iter_mut()
                .zip(sums)
                .for_each(|(t, s)| *t = t.wrapping_add(s)),
            None => {
                by_labels.insert(labels, sums);
            }
        }
    }
    by_labels.into_iter().collect()
}
