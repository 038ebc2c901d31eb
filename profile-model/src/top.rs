//! The top table: flat (self) and cum (total) per frame, as `go tool pprof -top`.

use std::cmp::Reverse;

use crate::filter::SampleFilter;
use crate::frames::{FrameId, FrameTable};
use crate::merge::BASE_LABEL;
use crate::profile::{LocationId, Profile};

use rustc_hash::FxHashMap;

/// One row of the top table.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TopRow {
    /// The frame.
    pub frame: FrameId,
    /// Value of samples whose leaf is this frame (pprof's flat).
    pub flat: i64,
    /// Value of samples with this frame anywhere on the stack, counted once per sample
    /// even under recursion (pprof's cum).
    pub cum: i64,
}

/// One edge of pprof's call graph: `caller` calls `callee`, or inlines it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TopEdge {
    /// The calling frame.
    pub caller: FrameId,
    /// The frame called (or inlined).
    pub callee: FrameId,
    /// Value of the samples through the edge, counted once per sample.
    pub weight: i64,
    /// Whether every sample through it inlines the callee there (as pprof decides: by
    /// the occurrence nearest the root when a sample passes the edge more than once).
    pub inline: bool,
}

/// pprof's default `-edgefraction`: the share of the total under which an edge is
/// left out of the call graph, and so out of the `(inline)` marks.
pub const EDGE_FRACTION: f64 = 0.001;

/// Whether a frame is reached through inlining, as pprof marks names in `-top`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum InlineMark {
    /// Called normally (or the outermost frame).
    #[default]
    None,
    /// Always inlined into its callers: `(inline)`.
    Inline,
    /// Inlined into some callers, called by others: `(partial-inline)`.
    Partial,
}

impl InlineMark {
    /// The suffix pprof appends to the name, with its leading space, or `""`.
    pub fn suffix(self) -> &'static str {
        match self {
            Self::None => "",
            Self::Inline => " (inline)",
            Self::Partial => " (partial-inline)",
        }
    }

    /// The mark of a frame whose kept in-edges (see [`edge_cutoff`]) include inlined
    /// ones (`inlined`) and calls (`called`), as pprof's text report decides it.
    pub fn of(inlined: bool, called: bool) -> Self {
        match (inlined, called) {
            (true, false) => Self::Inline,
            (true, true) => Self::Partial,
            _ => Self::None,
        }
    }
}

/// The weight under which pprof leaves an edge out of its graph: `fraction` of
/// `leaf_total` (the sum of the values of the samples with a frame: the graph's flat
/// sum), as pprof rounds it.
pub fn edge_cutoff(leaf_total: i64, fraction: f64) -> u64 {
    ((leaf_total as f64 * fraction) as i64).unsigned_abs()
}

/// The top table of one sample type.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Top {
    /// Rows sorted as pprof sorts them: |flat| descending, then name, then |cum| descending.
    pub rows: Vec<TopRow>,
    /// The edges of the call graph between the rows' frames (for the `(inline)` marks).
    pub edges: Vec<TopEdge>,
    /// The 100% of the percentages, as pprof computes it: the sum of |value| over all
    /// samples, filtered or not; for a difference (samples labelled
    /// [`crate::merge::BASE_LABEL`]), over the base samples only.
    pub total: i64,
    /// Sum of the column over the samples the filters keep.
    pub kept: i64,
    /// Sum of the column over the samples kept that have a frame (pprof's flat sum,
    /// the base of [`edge_cutoff`]).
    pub leaf_total: i64,
    /// Sum of |value| over the samples of a `-diff_base` profile; 0 when there are none.
    pub base_total: i64,
}

/// Flat, cum and the call graph's edges per frame, counted sample by sample: the one
/// loop behind every top table (of one profile, and of many files read from the wire).
#[derive(Debug, Default)]
pub(crate) struct Counts {
    /// Per frame id, everything one visit of the frame reads and writes.
    cells: Vec<Cell>,
    /// The frames counted since the last [`Counts::clear`], in the order first seen.
    pub touched: Vec<FrameId>,
    mark: u32,
    /// The edges counted since the last clear, found by (caller, callee).
    edges: Vec<EdgeCell>,
    edge_index: FxHashMap<(FrameId, FrameId), u32>,
    /// [`Top::leaf_total`] of the samples counted since the last clear.
    pub leaf_total: i64,
}

/// The counts of one frame, together so that counting it touches one cache line.
#[derive(Debug, Clone, Copy)]
struct Cell {
    flat: i64,
    cum: i64,
    /// `stamp == mark` when the frame was already counted for the current sample; 0
    /// when it was never counted since the last clear.
    stamp: u32,
    /// The caller it was last counted under, and that edge: most frames have one
    /// caller most of the time, so most edges are found without a look-up.
    last_caller: FrameId,
    last_edge: u32,
}

impl Default for Cell {
    fn default() -> Self {
        Self {
            flat: 0,
            cum: 0,
            stamp: 0,
            last_caller: FrameId::MAX,
            last_edge: u32::MAX,
        }
    }
}

/// An edge while samples are counted.
#[derive(Debug, Clone, Copy)]
struct EdgeCell {
    caller: FrameId,
    callee: FrameId,
    weight: i64,
    /// Every sample folded in so far inlined the callee here.
    inline: bool,
    /// The sample `stamp` (0: none pending) and how it passed the edge: samples are
    /// walked from the leaf, so the last occurrence seen is the one pprof counts, and
    /// a sample's way is folded into `inline` once the next sample through the edge
    /// (or the end) shows it final.
    stamp: u32,
    current: bool,
}

impl EdgeCell {
    /// `inline` with the pending sample's way folded in.
    fn folded(&self) -> bool {
        self.inline && (self.stamp == 0 || self.current)
    }
}

impl Counts {
    /// Makes room for frame ids below `frames`.
    pub fn grow(&mut self, frames: usize) {
        if self.cells.len() < frames {
            self.cells.resize(frames, Cell::default());
        }
    }

    /// Counts one sample of weight `value` (not 0) with `stack` (leaf first), whose
    /// locations have the frames `frames_of(location)` (innermost first).
    #[inline]
    pub fn add<'f>(
        &mut self,
        value: i64,
        stack: &[LocationId],
        frames_of: impl Fn(LocationId) -> &'f [FrameId],
    ) {
        self.mark = match self.mark.checked_add(1) {
            Some(m) => m,
            None => {
                self.cells
                    .iter_mut()
                    .for_each(|c| c.stamp = u32::from(c.stamp != 0));
                for e in &mut self.edges {
                    e.inline = e.folded();
                    e.stamp = 0;
                }
                2
            }
        };
        let Counts {
            cells,
            touched,
            mark,
            edges,
            edge_index,
            ..
        } = self;
        let mark = *mark;
        let mut leaf = true;
        // Frame `f`, reached from `caller` (inlined there, or called), or the root.
        let mut count = |f: FrameId, caller: Option<FrameId>, inline: bool| {
            let c = &mut cells[f as usize];
            if leaf {
                c.flat = c.flat.wrapping_add(value);
                leaf = false;
            }
            if c.stamp != mark {
                if c.stamp == 0 {
                    touched.push(f);
                }
                c.stamp = mark;
                c.cum = c.cum.wrapping_add(value);
            }
            // As pprof: no edge from a frame to itself.
            let Some(caller) = caller.filter(|&p| p != f) else {
                return;
            };
            let id = if c.last_caller == caller {
                c.last_edge
            } else {
                let next = edges.len() as u32;
                let id = *edge_index.entry((caller, f)).or_insert(next);
                if id == next {
                    edges.push(EdgeCell {
                        caller,
                        callee: f,
                        weight: 0,
                        inline: true,
                        stamp: 0,
                        current: false,
                    });
                }
                c.last_caller = caller;
                c.last_edge = id;
                id
            };
            let e = &mut edges[id as usize];
            if e.stamp != mark {
                e.inline = e.folded();
                e.stamp = mark;
                e.weight = e.weight.wrapping_add(value);
            }
            e.current = inline;
        };
        // The outermost frame of the previous location with frames, counted once the
        // next location with frames shows how it is reached: called by that location's
        // innermost frame, or by nothing (the outermost frame of the stack).
        let mut callee: Option<FrameId> = None;
        for &loc in stack {
            let frames = frames_of(loc);
            let Some((&last, inlined)) = frames.split_last() else {
                continue;
            };
            if let Some(f) = callee {
                count(f, Some(frames[0]), false);
            }
            for (j, &f) in inlined.iter().enumerate() {
                count(f, Some(frames[j + 1]), true);
            }
            callee = Some(last);
        }
        if let Some(f) = callee {
            count(f, None, false);
            self.leaf_total = self.leaf_total.wrapping_add(value);
        }
    }

    /// The row of frame `f`.
    pub fn row(&self, f: FrameId) -> TopRow {
        let c = self.cells[f as usize];
        TopRow {
            frame: f,
            flat: c.flat,
            cum: c.cum,
        }
    }

    /// The edges counted, in the order first met.
    pub fn edges(&self) -> impl Iterator<Item = TopEdge> + '_ {
        self.edges.iter().map(|e| TopEdge {
            caller: e.caller,
            callee: e.callee,
            weight: e.weight,
            inline: e.folded(),
        })
    }

    /// Forgets every count, in time proportional to the frames and edges touched.
    pub fn clear(&mut self) {
        for &f in &self.touched {
            self.cells[f as usize] = Cell::default();
        }
        self.touched.clear();
        self.edges.clear();
        self.edge_index.clear();
        self.leaf_total = 0;
    }
}

/// Computes the top table of column `sample_type` over the samples that `filter` keeps.
pub fn top(
    profile: &Profile,
    frames: &FrameTable,
    filter: &SampleFilter,
    sample_type: usize,
) -> Top {
    let mut counts = Counts::default();
    counts.grow(frames.len());
    let mut total = 0i64;
    let mut base_total = 0i64;
    let mut kept = 0i64;
    let is_base = base_label_sets(profile);
    let Some(values) = profile.samples.values.get(sample_type) else {
        return Top::default();
    };
    for (i, &value) in values.iter().enumerate() {
        total = total.wrapping_add(value.wrapping_abs());
        if is_base[profile.samples.label_set[i] as usize] {
            base_total = base_total.wrapping_add(value.wrapping_abs());
        }
        if !filter.keeps(profile, i) {
            continue;
        }
        kept = kept.wrapping_add(value);
        if value == 0 {
            // As pprof: a sample that weighs nothing adds no row.
            continue;
        }
        counts.add(value, profile.samples.stack(i), |l| frames.of_location(l));
    }
    counts.touched.sort_unstable();
    let edges = counts.edges().collect();
    let mut rows: Vec<TopRow> = counts
        .touched
        .iter()
        .map(|&f| counts.row(f))
        // As pprof: a frame whose values cancel out (in a difference) has no row.
        .filter(|r| r.flat != 0 || r.cum != 0)
        .collect();
    sort_pprof(&mut rows, frames);
    Top {
        rows,
        edges,
        total: if base_total > 0 { base_total } else { total },
        base_total,
        kept,
        leaf_total: counts.leaf_total,
    }
}

/// Which label sets mark the samples of a `-diff_base` profile.
fn base_label_sets(profile: &Profile) -> Vec<bool> {
    profile
        .label_sets
        .iter()
        .map(|set| {
            set.iter()
                .any(|l| profile.str(l.key) == BASE_LABEL && profile.str(l.str) == "true")
        })
        .collect()
}

/// Sorts rows as `go tool pprof -top` does.
pub fn sort_pprof(rows: &mut [TopRow], frames: &FrameTable) {
    rows.sort_by(|a, b| {
        pprof_key(a.flat, &frames.get(a.frame).name, a.cum).cmp(&pprof_key(
            b.flat,
            &frames.get(b.frame).name,
            b.cum,
        ))
    });
}

/// pprof's row order: |flat| descending, then name, then |cum| descending.
pub(crate) fn pprof_key(flat: i64, name: &str, cum: i64) -> (Reverse<u64>, &str, Reverse<u64>) {
    (
        Reverse(flat.unsigned_abs()),
        name,
        Reverse(cum.unsigned_abs()),
    )
}
