//! The rows of Parca's Arrow flame graph and flame chart before the trim: a prefix tree
//! of frames over one or more profiles, its strings its own (see [`super::flamegraph`]
//! for the rules).
//!
//! In a flame chart (Parca's `aggregateByTimestamp`) the profiles come in time order and
//! a frame joins an equal row only when that row is the last its parent took in (any
//! row, under the root) and the sample's time falls within the row's time plus its
//! cumulative value, as a duration, and a tenth of the sampling period
//! (`matchRowsByTimestamp`); else it starts a new row, which later frames join. Samples
//! of one profile share its time: Parca refuses two samples of one time under a row
//! (INTERNAL, "multiple samples for the same timestamp"), flint joins them.

use std::collections::HashMap;

use profile_model::Profile;
use profile_model::profile::{LocationId, StrId};

use super::flamegraph::GroupBy;
use crate::grpc::reports::symbols::{Values, function_of, mapping_of};

/// How a row is told apart from its siblings.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
enum Key {
    /// A location without lines, by address.
    Address(u64),
    /// A line, by function name and what `group_by` adds.
    Line {
        name: Option<StrId>,
        mapping_file: Option<StrId>,
        address: Option<u64>,
        file_name: Option<StrId>,
    },
}

/// One row before the trim; strings are the tree's own.
#[derive(Debug, Clone, Default)]
pub(super) struct Row {
    pub(super) labels_only: Option<bool>,
    pub(super) mapping_file: Option<StrId>,
    pub(super) build_id: Option<StrId>,
    pub(super) address: Option<u64>,
    pub(super) line: Option<i64>,
    pub(super) inlined: Option<bool>,
    pub(super) start_line: Option<i64>,
    pub(super) name: Option<StrId>,
    pub(super) system_name: Option<StrId>,
    pub(super) file_name: Option<StrId>,
    pub(super) labels: Vec<Option<StrId>>,
    pub(super) timestamp: i64,
    pub(super) depth: u64,
    pub(super) cumulative: i64,
    pub(super) flat: i64,
    pub(super) diff: i64,
    pub(super) children: Vec<usize>,
}

impl Row {
    /// Nulls every field where `other` (a frame equal to this row) differs.
    fn intersect(&mut self, other: &Row) {
        fn keep<T: PartialEq + Copy>(mine: &mut Option<T>, theirs: Option<T>) {
            if *mine != theirs {
                *mine = None;
            }
        }
        keep(&mut self.mapping_file, other.mapping_file);
        keep(&mut self.build_id, other.build_id);
        keep(&mut self.address, other.address);
        keep(&mut self.inlined, other.inlined);
        keep(&mut self.line, other.line);
        keep(&mut self.start_line, other.start_line);
        keep(&mut self.system_name, other.system_name);
        keep(&mut self.file_name, other.file_name);
    }
}

/// What one sample brings: its value, difference, time and the profile's period.
#[derive(Debug, Clone, Copy)]
struct Sample {
    value: i64,
    diff: i64,
    time: i64,
    period: i64,
    leaf: bool,
}

/// The rows of a flame graph (or chart) as a prefix tree.
pub(super) struct Tree<'g> {
    group_by: &'g GroupBy,
    chart: bool,
    /// Row 0 is the root.
    pub(super) rows: Vec<Row>,
    lookup: HashMap<(usize, Key), usize>,
    label_rows: HashMap<Vec<Option<StrId>>, usize>,
    /// The row each row last took in (a chart's rule).
    last_child: HashMap<usize, usize>,
    /// The tree's strings; row fields index them.
    pub(super) strings: Vec<String>,
    string_ids: HashMap<String, StrId>,
    /// The deepest sample, in rows.
    pub(super) height: u64,
}

impl<'g> Tree<'g> {
    /// An empty tree: a flame graph, or with `chart` a flame chart.
    pub(super) fn new(group_by: &'g GroupBy, chart: bool) -> Self {
        let root = Row {
            inlined: Some(false),
            labels: vec![None; group_by.labels.len()],
            ..Row::default()
        };
        Self {
            group_by,
            chart,
            rows: vec![root],
            lookup: HashMap::new(),
            label_rows: HashMap::new(),
            last_child: HashMap::new(),
            strings: Vec::new(),
            string_ids: HashMap::new(),
            height: 0,
        }
    }

    /// Adds every sample of `profile`, with `values`, at `time`.
    pub(super) fn add_profile(&mut self, profile: &Profile, values: Values<'_>, time: i64) {
        let own: Vec<StrId> = (profile.strings.iter())
            .map(|s| {
                let next = self.strings.len() as StrId;
                *self.string_ids.entry(s.clone()).or_insert_with(|| {
                    self.strings.push(s.clone());
                    next
                })
            })
            .collect();
        let label_keys: Vec<Option<StrId>> = (self.group_by.labels.iter())
            .map(|name| (profile.strings.iter().position(|s| s == name)).map(|i| i as StrId))
            .collect();
        let of = Strings { own: &own };
        for i in 0..profile.samples.len() {
            let sample = Sample {
                value: values.value(i),
                diff: values.diff(i),
                time,
                period: profile.period,
                leaf: false,
            };
            let labels = labels_of(profile, i, &label_keys)
                .into_iter()
                .map(|l| l.map(|s| of.id(s)))
                .collect();
            self.add(profile, &of, i, labels, sample);
        }
    }

    /// Adds sample `i` of `profile`, whose grouped label values are `labels`.
    fn add(
        &mut self,
        profile: &Profile,
        of: &Strings<'_>,
        i: usize,
        labels: Vec<Option<StrId>>,
        sample: Sample,
    ) {
        let mut parent = 0;
        let mut depth = 0;
        if labels.iter().any(Option::is_some) {
            let next = self.rows.len();
            let row = *self.label_rows.entry(labels.clone()).or_insert(next);
            if row == next {
                self.rows.push(Row {
                    labels_only: Some(true),
                    labels: labels.clone(),
                    depth: 1,
                    ..Row::default()
                });
                self.rows[0].children.push(row);
            }
            self.rows[row].cumulative += sample.value;
            self.rows[row].diff += sample.diff;
            parent = row;
            depth = 1;
        }
        let stack = profile.samples.stack(i);
        for (n, &location) in stack.iter().enumerate().rev() {
            for (key, leaf, mut row) in self.frames(profile, of, location, n == 0) {
                depth += 1;
                row.labels.clone_from(&labels);
                row.depth = depth;
                parent = self.place(parent, key, row, Sample { leaf, ..sample });
            }
        }
        self.height = self.height.max(depth);
    }

    /// The frames of `location`, outermost first: its key, whether it is the sample's
    /// leaf, and its row.
    fn frames(
        &self,
        p: &Profile,
        of: &Strings<'_>,
        location: LocationId,
        leaf_location: bool,
    ) -> Vec<(Key, bool, Row)> {
        let Some(loc) = p.locations.get(location as usize) else {
            return Vec::new();
        };
        let mapping = mapping_of(p, location).and_then(|m| p.mappings.get(m as usize));
        let base = Row {
            labels_only: Some(false),
            mapping_file: mapping.map(|m| of.id(m.filename)),
            build_id: mapping.map(|m| of.id(m.build_id)),
            address: Some(loc.address),
            inlined: Some(false),
            ..Row::default()
        };
        if loc.lines.is_empty() {
            return vec![(Key::Address(loc.address), leaf_location, base)];
        }
        let outermost = loc.lines.len() - 1;
        let by = self.group_by;
        (loc.lines.iter().enumerate().rev())
            .map(|(k, line)| {
                let function =
                    function_of(p, line.function).and_then(|f| p.functions.get(f as usize));
                let row = Row {
                    line: Some(line.line),
                    inlined: Some(k != outermost),
                    start_line: function.map(|f| f.start_line),
                    name: function.map(|f| of.id(f.name)),
                    system_name: function.map(|f| of.id(f.system_name)),
                    file_name: function.map(|f| of.id(f.filename)),
                    ..base.clone()
                };
                let key = Key::Line {
                    name: row.name,
                    mapping_file: row.mapping_file.filter(|_| by.mapping_file),
                    address: by.address.then_some(loc.address),
                    file_name: row.file_name.filter(|_| by.file_name),
                };
                (key, leaf_location && k == 0, row)
            })
            .collect()
    }

    /// Adds `frame` under `parent`, joining an equal row when the rules let it, and
    /// returns its row.
    fn place(&mut self, parent: usize, key: Key, frame: Row, sample: Sample) -> usize {
        let joined = (self.lookup.get(&(parent, key)).copied())
            .filter(|&row| !self.chart || self.continues(parent, row, sample));
        let row = match joined {
            Some(row) => {
                if matches!(key, Key::Line { .. }) {
                    self.rows[row].intersect(&frame);
                }
                row
            }
            None => {
                let row = self.rows.len();
                self.rows.push(Row {
                    timestamp: sample.time,
                    ..frame
                });
                self.rows[parent].children.push(row);
                self.lookup.insert((parent, key), row);
                row
            }
        };
        if self.chart {
            self.last_child.insert(parent, row);
        }
        let r = &mut self.rows[row];
        r.cumulative += sample.value;
        r.diff += sample.diff;
        if sample.leaf {
            r.flat += sample.value;
        }
        row
    }

    /// Whether, in a flame chart, `sample` continues `row` (see the module
    /// documentation).
    fn continues(&self, parent: usize, row: usize, sample: Sample) -> bool {
        let last = parent == 0 || self.last_child.get(&parent) == Some(&row);
        let r = &self.rows[row];
        let gap = sample.time - r.timestamp.saturating_add(r.cumulative);
        last && sample.time >= r.timestamp && gap - sample.period / 10 <= 0
    }
}

/// A profile's string ids as the tree's.
struct Strings<'a> {
    own: &'a [StrId],
}

impl Strings<'_> {
    /// The tree's id of the profile's string `id` (the empty string's when out of range).
    fn id(&self, id: StrId) -> StrId {
        self.own
            .get(id as usize)
            .or(self.own.first())
            .copied()
            .unwrap_or(0)
    }
}

/// The values of the labels `keys` (the profile's string ids of their names) in sample
/// `i`'s label set, as the profile's string ids.
fn labels_of(profile: &Profile, i: usize, keys: &[Option<StrId>]) -> Vec<Option<StrId>> {
    let set = (profile.samples.label_set.get(i))
        .and_then(|&s| profile.label_sets.get(s as usize))
        .map_or(&[][..], Vec::as_slice);
    (keys.iter())
        .map(|key| {
            let key = (*key)?;
            set.iter()
                .find(|l| l.key == key && l.str != 0)
                .map(|l| l.str)
        })
        .collect()
}
