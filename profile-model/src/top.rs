//! The top table: flat (self) and cum (total) per frame, as `go tool pprof -top`.

use std::cmp::Reverse;

use crate::filter::SampleFilter;
use crate::frames::{FrameId, FrameTable};
use crate::merge::BASE_LABEL;
use crate::profile::Profile;

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
    /// How callers reach this frame, for pprof's `(inline)` marks.
    pub reached: Reached,
}

/// How callers reach a frame: through inlining, through real calls, or both.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Reached {
    /// Some caller inlined it.
    pub inlined: bool,
    /// Some caller called it.
    pub called: bool,
}

impl Reached {
    /// Both ways of reaching, of two sets of samples together.
    pub fn or(self, other: Reached) -> Reached {
        Reached {
            inlined: self.inlined || other.inlined,
            called: self.called || other.called,
        }
    }

    /// The mark pprof appends to the name.
    pub fn mark(self) -> InlineMark {
        match (self.inlined, self.called) {
            (true, false) => InlineMark::Inline,
            (true, true) => InlineMark::Partial,
            _ => InlineMark::None,
        }
    }
}

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
}

/// The top table of one sample type.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Top {
    /// Rows sorted as pprof sorts them: |flat| descending, then name, then |cum| descending.
    pub rows: Vec<TopRow>,
    /// The 100% of the percentages, as pprof computes it: the sum of |value| over all
    /// samples, filtered or not; for a difference (samples labelled
    /// [`crate::merge::BASE_LABEL`]), over the base samples only.
    pub total: i64,
    /// Sum of the column over the samples the filters keep.
    pub kept: i64,
    /// Sum of |value| over the samples of a `-diff_base` profile; 0 when there are none.
    pub base_total: i64,
}

/// Computes the top table of column `sample_type` over the samples that `filter` keeps.
pub fn top(
    profile: &Profile,
    frames: &FrameTable,
    filter: &SampleFilter,
    sample_type: usize,
) -> Top {
    let mut flat = vec![0i64; frames.len()];
    let mut cum = vec![0i64; frames.len()];
    // stamp[f] == i + 1 when frame f was already counted for sample i.
    let mut stamp = vec![0u32; frames.len()];
    let mut seen = vec![false; frames.len()];
    // Bit 0: reached by an inlined call; bit 1: reached by a real call.
    let mut reached = vec![0u8; frames.len()];
    let mut total = 0i64;
    let mut base_total = 0i64;
    let mut kept = 0i64;
    let is_base = base_label_sets(profile);
    let Some(values) = profile.samples.values.get(sample_type) else {
        return Top::default();
    };
    for (i, &value) in values.iter().enumerate() {
        total += value.abs();
        if is_base[profile.samples.label_set[i] as usize] {
            base_total += value.abs();
        }
        if !filter.keeps(profile, i) {
            continue;
        }
        kept += value;
        if value == 0 {
            // As pprof: a sample that weighs nothing adds no row.
            continue;
        }
        let mark = i as u32 + 1;
        let mut leaf = true;
        let stack = profile.samples.stack(i);
        // The outermost location with frames: its last frame has no caller.
        let outermost = stack
            .iter()
            .rposition(|l| !frames.of_location(*l).is_empty());
        for (depth, &loc) in stack.iter().enumerate() {
            let loc_frames = frames.of_location(loc);
            for (j, &f) in loc_frames.iter().enumerate() {
                let f = f as usize;
                if j + 1 < loc_frames.len() {
                    reached[f] |= 1;
                } else if Some(depth) != outermost {
                    reached[f] |= 2;
                }
                if leaf {
                    flat[f] += value;
                    leaf = false;
                }
                if stamp[f] != mark {
                    stamp[f] = mark;
                    cum[f] += value;
                    seen[f] = true;
                }
            }
        }
    }
    let mut rows: Vec<TopRow> = (0..frames.len())
        // As pprof: a frame whose values cancel out (in a difference) has no row.
        .filter(|&f| seen[f] && (flat[f] != 0 || cum[f] != 0))
        .map(|f| TopRow {
            frame: f as FrameId,
            flat: flat[f],
            cum: cum[f],
            reached: Reached {
                inlined: reached[f] & 1 != 0,
                called: reached[f] & 2 != 0,
            },
        })
        .collect();
    sort_pprof(&mut rows, frames);
    Top {
        rows,
        total: if base_total > 0 { base_total } else { total },
        base_total,
        kept,
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
fn pprof_key(flat: i64, name: &str, cum: i64) -> (Reverse<i64>, &str, Reverse<i64>) {
    (Reverse(flat.abs()), name, Reverse(cum.abs()))
}

/// A row of a [`TopSum`]: a frame known by its name.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NamedRow {
    /// The frame's display name.
    pub name: String,
    /// Summed flat value.
    pub flat: i64,
    /// Summed cum value.
    pub cum: i64,
    /// How callers reach the frame, in any of the profiles.
    pub reached: Reached,
}

/// The top table of many profiles, added one at a time: since every sample belongs to
/// one profile, summing their flat and cum per frame name gives exactly the top table
/// of their merge, without building the merged profile.
#[derive(Debug, Default)]
pub struct TopSum {
    index: rustc_hash::FxHashMap<String, usize>,
    rows: Vec<NamedRow>,
    total: i64,
    base_total: i64,
}

impl TopSum {
    /// An empty sum.
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds the top table of one profile; `sign` is -1 for the base of a difference
    /// (as pprof's `-diff_base`), else 1.
    pub fn add(&mut self, top: &Top, frames: &FrameTable, sign: i64) {
        for r in &top.rows {
            let name = &frames.get(r.frame).name;
            let i = match self.index.get(name) {
                Some(i) => *i,
                None => {
                    self.rows.push(NamedRow {
                        name: name.clone(),
                        flat: 0,
                        cum: 0,
                        reached: Reached::default(),
                    });
                    self.index.insert(name.clone(), self.rows.len() - 1);
                    self.rows.len() - 1
                }
            };
            let row = &mut self.rows[i];
            row.flat += sign * r.flat;
            row.cum += sign * r.cum;
            row.reached = row.reached.or(r.reached);
        }
        if sign < 0 {
            self.base_total += top.total;
        } else {
            self.total += top.total;
            self.base_total += top.base_total;
        }
    }

    /// The rows in pprof's order (frames whose values cancel out left out), and the
    /// 100% of the percentages: the base's total for a difference, else the total.
    pub fn finish(mut self) -> (Vec<NamedRow>, i64) {
        self.rows.retain(|r| r.flat != 0 || r.cum != 0);
        self.rows.sort_by(|a, b| {
            pprof_key(a.flat, &a.name, a.cum).cmp(&pprof_key(b.flat, &b.name, b.cum))
        });
        let total = if self.base_total > 0 {
            self.base_total
        } else {
            self.total
        };
        (self.rows, total)
    }
}
