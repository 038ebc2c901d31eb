//! Callers and callees of chosen frames, as `go tool pprof -peek` shows them: for each
//! frame, the weight of every call edge into it and out of it, and whether that edge
//! is always inlined.

use rustc_hash::FxHashMap;

use crate::filter::SampleFilter;
use crate::frames::{FrameId, FrameTable};
use crate::profile::{LocationId, Profile};
use crate::top::{Top, TopRow};

/// One call edge seen from a chosen frame: the frame at its other end.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PeekEdge {
    /// The caller (for an edge in) or the callee (for an edge out).
    pub frame: FrameId,
    /// Value of the samples whose stacks hold this edge, counted once per sample.
    pub weight: i64,
    /// Every sample holding the edge has the callee inlined into the caller
    /// (pprof's `(inline)` on the edge).
    pub inline: bool,
}

/// A chosen frame with its row of the top table, its callers and its callees.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PeekEntry {
    /// The frame's flat and cum, as the top table has them.
    pub row: TopRow,
    /// Edges into the frame, heaviest first (pprof's order).
    pub callers: Vec<PeekEdge>,
    /// Edges out of the frame, heaviest first (pprof's order).
    pub callees: Vec<PeekEdge>,
}

/// An edge being summed: its weight, whether every visit was inlined, and the last
/// sample that added to it (an edge counts once per sample).
#[derive(Debug, Clone, Copy)]
struct Sum {
    weight: i64,
    inline: bool,
    sample: usize,
}

/// The callers and callees of the rows of `top` (the top table of `sample_type` over
/// `frames` and `filter`) whose frames `chosen` picks, in the top table's order.
/// Edges are pprof's: between neighbouring frames of a stack, the frames of an
/// inlined location included, never from a frame to itself, counted once per sample.
pub fn peek(
    profile: &Profile,
    frames: &FrameTable,
    filter: &SampleFilter,
    top: &Top,
    sample_type: usize,
    chosen: impl Fn(FrameId) -> bool,
) -> Vec<PeekEntry> {
    let rows: Vec<TopRow> = top
        .rows
        .iter()
        .copied()
        .filter(|r| chosen(r.frame))
        .collect();
    let mut wanted = vec![false; frames.len()];
    for r in &rows {
        if let Some(w) = wanted.get_mut(r.frame as usize) {
            *w = true;
        }
    }
    let edges = edge_sums(profile, frames, filter, sample_type, &wanted);
    let mut callers: FxHashMap<FrameId, Vec<PeekEdge>> = FxHashMap::default();
    let mut callees: FxHashMap<FrameId, Vec<PeekEdge>> = FxHashMap::default();
    for (&(caller, callee), sum) in &edges {
        let edge = |frame| PeekEdge {
            frame,
            weight: sum.weight,
            inline: sum.inline,
        };
        if wanted[callee as usize] {
            callers.entry(callee).or_default().push(edge(caller));
        }
        if wanted[caller as usize] {
            callees.entry(caller).or_default().push(edge(callee));
        }
    }
    rows.into_iter()
        .map(|row| {
            let mut entry = PeekEntry {
                row,
                callers: callers.remove(&row.frame).unwrap_or_default(),
                callees: callees.remove(&row.frame).unwrap_or_default(),
            };
            sort_edges(&mut entry.callers, frames);
            sort_edges(&mut entry.callees, frames);
            entry
        })
        .collect()
}

/// The weight and inlining of every edge with a `wanted` end, over the kept samples
/// of non-zero value, walked from the root as pprof walks them.
fn edge_sums(
    profile: &Profile,
    frames: &FrameTable,
    filter: &SampleFilter,
    sample_type: usize,
    wanted: &[bool],
) -> FxHashMap<(FrameId, FrameId), Sum> {
    let mut edges: FxHashMap<(FrameId, FrameId), Sum> = FxHashMap::default();
    let Some(values) = profile.samples.values.get(sample_type) else {
        return edges;
    };
    for (i, &value) in values.iter().enumerate() {
        if value == 0 || !filter.keeps(profile, i) {
            continue;
        }
        let mut caller: Option<FrameId> = None;
        for &loc in profile.samples.stack(i).iter().rev() {
            let located = frames.of_location(loc as LocationId);
            // Innermost first: the outermost frame is called, the others inlined.
            for (depth, &frame) in located.iter().enumerate().rev() {
                if let Some(parent) = caller.filter(|&p| p != frame)
                    && (wanted[parent as usize] || wanted[frame as usize])
                {
                    let inline = depth + 1 != located.len();
                    let sum = edges.entry((parent, frame)).or_insert(Sum {
                        weight: 0,
                        inline: true,
                        sample: usize::MAX,
                    });
                    if sum.sample != i {
                        sum.sample = i;
                        sum.weight = sum.weight.wrapping_add(value);
                        sum.inline &= inline;
                    }
                }
                caller = Some(frame);
            }
        }
    }
    edges
}

/// pprof's edge order: |weight| descending, then the frame's name.
fn sort_edges(edges: &mut [PeekEdge], frames: &FrameTable) {
    edges.sort_by(|a, b| {
        (b.weight.unsigned_abs().cmp(&a.weight.unsigned_abs()))
            .then_with(|| frames.get(a.frame).name.cmp(&frames.get(b.frame).name))
            .then_with(|| frames.key(a.frame).cmp(frames.key(b.frame)))
    });
}
