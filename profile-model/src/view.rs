//! A view: one profile seen through filters at one granularity; the unit the window
//! and the CLI ask questions of (top table, call tree, folded stacks, export).

use crate::calltree::CallTree;
use crate::filter::{Filters, SampleFilter};
use crate::frames::{FrameId, FrameTable, Granularity};
use crate::peek::{PeekEntry, peek};
use crate::profile::Profile;
use crate::top::{Top, top};

/// How to look at a profile.
#[derive(Debug, Clone, Default)]
pub struct ViewOptions {
    /// How finely frames are told apart.
    pub granularity: Granularity,
    /// Which samples and frames are kept.
    pub filters: Filters,
}

/// A profile prepared for the questions of one [`ViewOptions`].
#[derive(Debug, Clone)]
pub struct View {
    /// The frames at the chosen granularity, hidden frames left out.
    pub frames: FrameTable,
    /// Which samples are kept.
    pub filter: SampleFilter,
}

impl View {
    /// Prepares the frames and the filters; cost is linear in functions and locations.
    pub fn new(profile: &Profile, options: &ViewOptions) -> Self {
        Self {
            frames: FrameTable::build(profile, options.granularity, options.filters.hide.as_ref()),
            filter: options.filters.prepare(profile),
        }
    }

    /// The top table of one sample type.
    pub fn top(&self, profile: &Profile, sample_type: usize) -> Top {
        top(profile, &self.frames, &self.filter, sample_type, false)
    }

    /// The top table of one sample type with every call edge counted, to be summed
    /// with other profiles' ([`crate::topsum::TopSum::add`]).
    pub fn top_to_sum(&self, profile: &Profile, sample_type: usize) -> Top {
        top(profile, &self.frames, &self.filter, sample_type, true)
    }

    /// The callers and callees of the rows of `top` (this view's top table of
    /// `sample_type`) whose frames `chosen` picks, as `go tool pprof -peek`.
    pub fn peek(
        &self,
        profile: &Profile,
        top: &Top,
        sample_type: usize,
        chosen: impl Fn(FrameId) -> bool,
    ) -> Vec<PeekEntry> {
        peek(
            profile,
            &self.frames,
            &self.filter,
            top,
            sample_type,
            chosen,
        )
    }

    /// The call tree of the kept samples.
    pub fn call_tree(&self, profile: &Profile) -> CallTree {
        CallTree::build(profile, &self.frames, &self.filter)
    }

    /// The call tree of the kept samples with the values of `sample_type` only (its
    /// column 0), and what `beside` returns, run while the tree's last step keeps one
    /// core busy ([`CallTree::build_one`]).
    pub fn call_tree_of<T: Send>(
        &self,
        profile: &Profile,
        sample_type: usize,
        beside: impl FnOnce() -> T + Send,
    ) -> (CallTree, T) {
        CallTree::build_one(profile, &self.frames, &self.filter, sample_type, beside)
    }
}
