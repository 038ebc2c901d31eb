//! The top table of many profiles, summed one profile at a time: since every sample
//! belongs to one profile, summing their flat and cum per frame name gives exactly the
//! top table of their merge (or, with the base subtracted, of their difference),
//! without ever building the merged profile.
//!
//! A profile is added either as its [`Top`], or straight from its pprof bytes
//! ([`TopSum::add_pprof`], at the granularity and through the filters the sum was made
//! for), which reads the tables borrowed from the message and counts each sample as it
//! is read, without building a [`crate::Profile`]: what `flint top DIR` does for a day
//! of files.

mod wire;

use rustc_hash::FxHashMap;

use crate::error::ProfileError;
use crate::frames::{FrameId, FrameTable};
use crate::top::{Reached, Top, TopEdge, TopRow, pprof_key, totals};
use crate::view::{View, ViewOptions};
use crate::wire::tables::Tables;
use wire::WireState;

/// A row of a [`TopSum`]: a frame known by its key (what tells frames apart,
/// [`FrameTable::key`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NamedRow {
    /// The frame's key.
    pub key: String,
    /// The frame's display name.
    pub name: String,
    /// Summed flat value.
    pub flat: i64,
    /// Summed cum value.
    pub cum: i64,
    /// How callers reach the frame, over all the profiles: from its in-edges as their
    /// merge has them.
    pub reached: Reached,
}

/// What [`TopSum::add_pprof`] read about a profile besides its samples.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PprofSummary {
    /// `type/unit` of every sample type.
    pub sample_types: Vec<String>,
    /// The profile's start, 0 when it has none.
    pub time_nanos: i64,
    /// The profile's duration.
    pub duration_nanos: i64,
    /// The profile's comments.
    pub comments: Vec<String>,
}

/// The top table of many profiles, added one at a time.
#[derive(Debug, Default)]
pub struct TopSum {
    rows: Rows,
    total: i64,
    base_total: i64,
    wire: WireState,
    /// What profiles added from their bytes are seen through.
    options: ViewOptions,
}

/// The rows of a [`TopSum`], found by frame key, and the call edges between them.
#[derive(Debug, Default)]
struct Rows {
    index: FxHashMap<String, usize>,
    rows: Vec<NamedRow>,
    /// (caller row, callee row) → how the profiles had the edge (`inlined` and
    /// `called` as [`TopEdge`] says them): an edge inlined in one profile and called
    /// in another is no inline edge of the sum.
    edges: FxHashMap<(usize, usize), Reached>,
}

impl Rows {
    /// The row of the frame with `key`, created empty (named `name`) when there is
    /// none yet.
    fn row(&mut self, key: &str, name: &str) -> usize {
        if let Some(i) = self.index.get(key) {
            return *i;
        }
        self.rows.push(NamedRow {
            key: key.to_string(),
            name: name.to_string(),
            flat: 0,
            cum: 0,
            reached: Reached::default(),
        });
        self.index.insert(key.to_string(), self.rows.len() - 1);
        self.rows.len() - 1
    }

    /// Adds `sign` times the values to row `row`.
    fn add(&mut self, row: usize, flat: i64, cum: i64, sign: i64) {
        let row = &mut self.rows[row];
        row.flat = row.flat.wrapping_add(sign.wrapping_mul(flat));
        row.cum = row.cum.wrapping_add(sign.wrapping_mul(cum));
    }

    /// Notes the edge from row `caller` to row `callee` as a profile had it
    /// ([`crate::top::TopEdge`]).
    fn edge(&mut self, caller: usize, callee: usize, inlined: bool, called: bool) {
        let had = self.edges.entry((caller, callee)).or_default();
        *had = had.or(Reached { inlined, called });
    }

    /// Sets how each row is reached, from its in-edges.
    fn settle_edges(&mut self) {
        for (&(_, callee), had) in &self.edges {
            let row = &mut self.rows[callee];
            row.reached = row.reached.or(Reached::of_edge(had.inlined, had.called));
        }
    }
}

impl TopSum {
    /// An empty sum; profiles added from their bytes are seen at function
    /// granularity, without filters.
    pub fn new() -> Self {
        Self::default()
    }

    /// An empty sum whose profiles added from their bytes are seen through `options`
    /// (what [`TopSum::add`] of their [`crate::View`]s with `options` would add).
    pub fn for_view(options: &ViewOptions) -> Self {
        Self {
            wire: WireState::new(options),
            options: options.clone(),
            ..Self::default()
        }
    }

    /// Adds the 100% of one profile's percentages ([`Top::total`]) and its base total.
    fn add_totals(&mut self, total: i64, base_total: i64, sign: i64) {
        if sign < 0 {
            self.base_total = self.base_total.wrapping_add(total);
        } else {
            self.total = self.total.wrapping_add(total);
            self.base_total = self.base_total.wrapping_add(base_total);
        }
    }

    /// Adds the top table of one profile; `sign` is -1 for the base of a difference
    /// (as pprof's `-diff_base`), else 1. Frames are marked from the table's edges
    /// ([`crate::view::View::top_to_sum`]); a table without them adds its rows' marks
    /// as they are, which is exact only for a profile summed alone.
    pub fn add(&mut self, top: &Top, frames: &FrameTable, sign: i64) {
        let mut rows: Vec<Option<usize>> = vec![None; frames.len()];
        let mut row_of = |f: FrameId| {
            *rows[f as usize]
                .get_or_insert_with(|| self.rows.row(frames.key(f), &frames.get(f).name))
        };
        let added: Vec<(usize, &TopRow)> = top.rows.iter().map(|r| (row_of(r.frame), r)).collect();
        let edges: Vec<(usize, usize, &TopEdge)> = (top.edges.iter().flatten())
            .map(|e| (row_of(e.caller), row_of(e.callee), e))
            .collect();
        for (row, r) in added {
            self.rows.add(row, r.flat, r.cum, sign);
            if top.edges.is_none() {
                let row = &mut self.rows.rows[row];
                row.reached = row.reached.or(r.reached);
            }
        }
        for (caller, callee, e) in edges {
            self.rows.edge(caller, callee, e.inlined, e.called);
        }
        self.add_totals(top.total, top.base_total, sign);
    }

    /// Adds the top table of column `sample_type` of the uncompressed pprof message
    /// `body`, seen through the options of [`TopSum::for_view`]; exactly what
    /// [`TopSum::add`] adds for the decoded profile's [`Top`], and the same errors as
    /// decoding it. A profile without that column adds nothing (its summary says why).
    pub fn add_pprof(
        &mut self,
        body: &[u8],
        sample_type: usize,
        sign: i64,
    ) -> Result<PprofSummary, ProfileError> {
        let message = body;
        let w = &mut self.wire;
        let mut spare = Vec::new();
        let (tables, body) = Tables::parse_lossy(body, &mut w.raw, &mut spare)?;
        if tables.str(tables.drop_frames).is_empty() && !tables.has_equal_mappings() {
            let counted = w.add(&tables, body, sample_type, &mut self.rows, sign);
            let (mut total, mut base_total) = counted?;
            if w.saw_negative {
                (total, base_total) = totals(&crate::codec::from_body(message)?, sample_type);
            }
            self.add_totals(total, base_total, sign);
        } else {
            // Pruned stacks or moved locations are not what the wire holds: decoded,
            // as any view sees it.
            let profile = crate::codec::from_body(message)?;
            if sample_type < profile.sample_types.len() {
                let view = View::new(&profile, &self.options);
                self.add(&view.top_to_sum(&profile, sample_type), &view.frames, sign);
            }
        }
        Ok(PprofSummary {
            sample_types: tables
                .sample_types
                .iter()
                .map(|t| format!("{}/{}", tables.str(t.kind), tables.str(t.unit)))
                .collect(),
            time_nanos: tables.time_nanos,
            duration_nanos: tables.duration_nanos,
            comments: tables
                .comments
                .iter()
                .map(|c| tables.str(*c).to_string())
                .collect(),
        })
    }

    /// Adds every row and total of `other` (summed on another thread).
    pub fn absorb(&mut self, mut other: TopSum) {
        other.settle();
        let row_of: Vec<usize> = (other.rows.rows.iter())
            .map(|r| {
                let row = self.rows.row(&r.key, &r.name);
                self.rows.add(row, r.flat, r.cum, 1);
                // Marks of tables added without edges.
                let into = &mut self.rows.rows[row];
                into.reached = into.reached.or(r.reached);
                row
            })
            .collect();
        for ((caller, callee), had) in other.rows.edges {
            self.rows
                .edge(row_of[caller], row_of[callee], had.inlined, had.called);
        }
        self.total = self.total.wrapping_add(other.total);
        self.base_total = self.base_total.wrapping_add(other.base_total);
    }

    /// Adds what the profiles read from their bytes counted to the rows, as absorbing
    /// or finishing the sum does first: done by the thread that read them, it is not
    /// left to the one that absorbs every thread's sum.
    pub fn settle(&mut self) {
        self.wire.flush(&mut self.rows);
    }

    /// The rows in pprof's order (frames whose values cancel out left out), and the
    /// 100% of the percentages: the base's total for a difference, else the total.
    pub fn finish(mut self) -> (Vec<NamedRow>, i64) {
        self.settle();
        self.rows.settle_edges();
        let mut rows = self.rows.rows;
        rows.retain(|r| r.flat != 0 || r.cum != 0);
        rows.sort_by(|a, b| {
            pprof_key(a.flat, &a.name, a.cum, &a.key)
                .cmp(&pprof_key(b.flat, &b.name, b.cum, &b.key))
        });
        let total = if self.base_total > 0 {
            self.base_total
        } else {
            self.total
        };
        (rows, total)
    }
}
