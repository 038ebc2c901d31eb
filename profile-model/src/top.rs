//! The top table: flat (self) and cum (total) per frame, as `go tool pprof -top`.

use std::cmp::Reverse;

use crate::filter::SampleFilter;
use crate::frames::{FrameId, FrameTable};
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
}

/// The top table of one sample type.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Top {
    /// Rows sorted as pprof sorts them: |flat| descending, then name, then |cum| descending.
    pub rows: Vec<TopRow>,
    /// Sum of the column over all kept samples: the 100% of the percentages.
    pub total: i64,
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
    let mut total = 0i64;
    let Some(values) = profile.samples.values.get(sample_type) else {
        return Top::default();
    };
    for (i, &value) in values.iter().enumerate() {
        if !filter.keeps(profile, i) {
            continue;
        }
        total += value;
        let mark = i as u32 + 1;
        let mut leaf = true;
        for &loc in profile.samples.stack(i) {
            for &f in frames.of_location(loc) {
                let f = f as usize;
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
        .filter(|&f| seen[f])
        .map(|f| TopRow {
            frame: f as FrameId,
            flat: flat[f],
            cum: cum[f],
        })
        .collect();
    sort_pprof(&mut rows, frames);
    Top { rows, total }
}

/// Sorts rows as `go tool pprof -top` does.
pub fn sort_pprof(rows: &mut [TopRow], frames: &FrameTable) {
    rows.sort_by(|a, b| {
        (
            Reverse(a.flat.abs()),
            &frames.get(a.frame).name,
            Reverse(a.cum.abs()),
        )
            .cmp(&(
                Reverse(b.flat.abs()),
                &frames.get(b.frame).name,
                Reverse(b.cum.abs()),
            ))
    });
}
