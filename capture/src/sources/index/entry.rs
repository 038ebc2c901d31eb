//! What the index keeps of one profile: its [`Entry`], and the value sums of each of
//! its label sets ([`Group`]).

use std::borrow::Cow;
use std::sync::Arc;

use profile_model::Profile;
use profile_model::units::nanoseconds_per;

use crate::selector::{ProfileType, Selector};
use crate::source::Labels;

/// The shortest profile with a rate when its period tells no time (bytes between heap
/// samples, a count): no sampler measures anything in less, and writers put 1 ns
/// where they have no duration (pypprof's heap and thread snapshots).
const MIN_RATED_NANOS: f64 = 1e6;

/// Whether a profile of `duration_nanos`, sampled every `period` of `period_unit`,
/// gives a per-second rate: the one rule of every rate a local source gives. A profile with
/// no duration has nothing to divide by, and one shorter than its sampling period
/// (1 ns of 10 ms CPU samples) measured no time that its samples could stand for:
/// dividing by it would show billions of cores. A period that is not a time sets a
/// floor of a millisecond ([`MIN_RATED_NANOS`]) instead.
pub fn gives_rate(duration_nanos: i64, period: i64, period_unit: &str) -> bool {
    let floor = nanoseconds_per(period_unit)
        .map(|ns| period as f64 * ns)
        .filter(|&p| p > 0.0)
        .unwrap_or(MIN_RATED_NANOS);
    duration_nanos > 0 && duration_nanos as f64 >= floor
}

/// [`gives_rate`] for `profile`.
pub fn profile_gives_rate(profile: &Profile) -> bool {
    gives_rate(
        profile.duration_nanos,
        profile.period,
        profile.str(profile.period_type.unit),
    )
}

/// The samples of one label set of one profile, summed per profile type.
#[derive(Debug, Clone, PartialEq)]
pub struct Group {
    /// The series labels, or only the sample labels when the entry's groups are over
    /// its base labels ([`Entry::groups_over_base`]); [`Entry::label`] reads them.
    pub labels: Arc<Labels>,
    /// One sum per profile type of the entry.
    pub values: Vec<i64>,
}

/// What the index keeps of one profile; `L` says where its bytes are.
#[derive(Debug, Clone, PartialEq)]
pub struct Entry<L> {
    /// Where the profile's bytes are.
    pub locator: L,
    /// Start of the profile.
    pub time_nanos: i64,
    /// Profiled time, 0 when unknown.
    pub duration_nanos: i64,
    /// The pprof period (one sample stands for this much of the period type); 0 when
    /// unknown.
    pub period: i64,
    /// One profile type per pprof sample type, in pprof order.
    pub types: Arc<[ProfileType]>,
    /// Index in `types` of the one pprof shows by default: the profile's
    /// `default_sample_type`, else its last ([`Profile::default_sample_index`]).
    pub default_type: usize,
    /// Whether the profile gives a per-second rate ([`gives_rate`]).
    pub rated: bool,
    /// Labels every sample of the profile has (a file's path, a write's labels).
    pub base_labels: Arc<Labels>,
    /// Value sums per distinct series label set.
    pub groups: Vec<Group>,
    /// Whether the groups hold only their sample labels, the series labels being the
    /// base labels with those over them: a file's, so that the groups of every file
    /// with the same sample labels share one copy (a file's base labels name its
    /// path). Else the groups hold the series labels whole (a store's).
    pub groups_over_base: bool,
}

impl<L> Entry<L> {
    /// The heap bytes the entry holds of its own (shared labels and types not counted).
    pub fn heap_bytes(&self) -> u64 {
        let groups = self.groups.capacity() * std::mem::size_of::<Group>();
        let values: usize = self.groups.iter().map(|g| g.values.capacity() * 8).sum();
        (std::mem::size_of::<Self>() + groups + values) as u64
    }

    /// Index of profile type `t` among the entry's types.
    pub fn type_index(&self, t: &ProfileType) -> Option<usize> {
        self.types.iter().position(|x| x == t)
    }

    /// Series label `name` of `group` (one of this entry's groups).
    pub fn label<'a>(&'a self, group: &'a Group, name: &str) -> Option<&'a String> {
        let own = group.labels.get(name);
        if self.groups_over_base {
            own.or_else(|| self.base_labels.get(name))
        } else {
            own
        }
    }

    /// Series label names of `group` (one of this entry's groups), perhaps repeated.
    pub(super) fn label_names<'a>(
        &'a self,
        group: &'a Group,
    ) -> impl Iterator<Item = &'a String> + 'a {
        let base = self.groups_over_base.then(|| self.base_labels.keys());
        group.labels.keys().chain(base.into_iter().flatten())
    }

    /// The series labels of `group` (one of this entry's groups).
    pub fn series_labels<'a>(&'a self, group: &'a Group) -> Cow<'a, Labels> {
        if !self.groups_over_base {
            return Cow::Borrowed(&group.labels);
        }
        let mut labels = self.base_labels.as_ref().clone();
        labels.extend(group.labels.iter().map(|(k, v)| (k.clone(), v.clone())));
        Cow::Owned(labels)
    }

    /// Whether the selector selects `group` (one of this entry's groups).
    pub(super) fn selects(&self, selector: &Selector, group: &Group) -> bool {
        selector.matches(|name| self.label(group, name).map(String::as_str))
    }

    /// Whether the selector selects any group of this entry.
    pub(super) fn any_selected(&self, selector: &Selector) -> bool {
        self.type_index(&selector.profile_type).is_some()
            && self.groups.iter().any(|g| self.selects(selector, g))
    }
}

#[cfg(test)]
mod tests {
    use super::gives_rate;

    #[test]
    fn a_rate_needs_a_duration_of_a_period_at_least() {
        // Go's CPU profiles: 10 ms samples.
        assert!(gives_rate(10_000_000, 10_000_000, "nanoseconds"));
        assert!(!gives_rate(9_999_999, 10_000_000, "nanoseconds"));
        assert!(!gives_rate(1, 10, "milliseconds"));
        assert!(!gives_rate(0, 0, "nanoseconds"));
        // A period of bytes or counts: a millisecond at least.
        assert!(gives_rate(10_000_000_000, 524_288, "bytes"));
        assert!(!gives_rate(1, 1, "count"));
        assert!(!gives_rate(1, 0, "nanoseconds"));
    }
}
