//! REPORT_TYPE_FLAMEGRAPH_ARROW as Parca's `pkg/query/flamegraph_arrow.go`
//! (`generateFlamegraphArrowRecord`, `trim`, `NewRecord`) builds it.
//!
//! - Row 0 is the root: its cumulative is what the trim kept under it, its diff the
//!   sum of all differences, its flat 0, its metadata null.
//! - With `group_by` labels (`labels.<name>`), a sample holding any of them first
//!   goes under a row of its label values (`labels_only` true, depth 1), which adds
//!   its value and difference; every row carries the label values of the sample that
//!   made it, in one dictionary column per label, named as asked.
//! - Each stack is walked from the root, each location's lines outermost first (all
//!   but the outermost `inlined`). A location without lines is told apart from its
//!   siblings by address; a line by its function's name, and also by the location's
//!   mapping file, address or the function's file name when `group_by` names
//!   `mapping_file`, `location_address` or `function_file_name`. A frame equal to a
//!   sibling adds to it (flat only where the frame is the sample's leaf); where the
//!   siblings' mapping file, build id, address, inlined flag, line, start line, system
//!   name or file name differ, that field becomes null.
//! - Trim: breadth first from the root, a child is kept when its cumulative exceeds
//!   its parent's times the threshold fraction (as float32, truncated), so at 0 every
//!   child with a positive cumulative. Rows come out in that order, children in the
//!   order they were first met; `parent`, `children`, `depth` and `value_offset`
//!   (the cumulative of the kept siblings before it, plus the parent's offset) refer
//!   to the kept rows. `trimmed` sums what was cut.
//! - `height` is the deepest stack in rows (with its label row) plus one; the total
//!   is the sum of all values.
//!
//! Deliberate differences: differences are summed into a location without lines too
//! (Parca adds them only on the first sample); a sample's first frame under a new
//! label row is compared with that row's children (Parca compares it with the rows
//! the previous sample ended at); `diff` takes a type that holds its negative values;
//! `timestamp` is 0 (flint's merges keep no sample times, so `group_by` timestamp
//! changes nothing).

use std::collections::{HashMap, VecDeque};
use std::sync::Arc;

use arrow_array::types::UInt32Type;
use arrow_array::{ArrayRef, BooleanArray, Int32Array, Int64Array, ListArray, UInt64Array};
use profile_model::Profile;
use profile_model::profile::{LocationId, StrId};
use tonic::Status;

use super::{StringColumn, ipc, smallest_signed, smallest_unsigned};
use crate::grpc::proto::query as pq;
use crate::grpc::reports::symbols::{Values, function_of, mapping_of, unit};

/// What a flame graph's `group_by` asks for.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct GroupBy {
    /// The label names (without `labels.`), sorted: one label row per distinct values.
    labels: Vec<String>,
    /// Frames of different mapping files are told apart.
    mapping_file: bool,
    /// Frames of different addresses are told apart.
    address: bool,
    /// Frames of functions in different files are told apart.
    file_name: bool,
}

impl GroupBy {
    /// The grouping `fields` name (the query options check the fields).
    pub fn of(fields: &[String]) -> Self {
        let mut labels: Vec<String> = (fields.iter())
            .filter_map(|f| f.strip_prefix("labels.").map(str::to_string))
            .collect();
        labels.sort();
        labels.dedup();
        let has = |name: &str| fields.iter().any(|f| f == name);
        Self {
            labels,
            mapping_file: has("mapping_file"),
            address: has("location_address"),
            file_name: has("function_file_name"),
        }
    }
}

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

/// One row before the trim.
#[derive(Debug, Clone, Default)]
struct Row {
    labels_only: Option<bool>,
    mapping_file: Option<StrId>,
    build_id: Option<StrId>,
    address: Option<u64>,
    line: Option<i64>,
    inlined: Option<bool>,
    start_line: Option<i64>,
    name: Option<StrId>,
    system_name: Option<StrId>,
    file_name: Option<StrId>,
    labels: Vec<Option<StrId>>,
    depth: u64,
    cumulative: i64,
    flat: i64,
    diff: i64,
    children: Vec<usize>,
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

/// The rows of a flame graph as a prefix tree.
struct Tree<'p> {
    profile: &'p Profile,
    group_by: &'p GroupBy,
    rows: Vec<Row>,
    lookup: HashMap<(usize, Key), usize>,
    label_rows: HashMap<Vec<Option<StrId>>, usize>,
    label_keys: Vec<Option<StrId>>,
    height: u64,
}

impl<'p> Tree<'p> {
    fn new(profile: &'p Profile, group_by: &'p GroupBy) -> Self {
        let label_keys = (group_by.labels.iter())
            .map(|name| {
                profile
                    .strings
                    .iter()
                    .position(|s| s == name)
                    .map(|i| i as StrId)
            })
            .collect();
        let root = Row {
            inlined: Some(false),
            labels: vec![None; group_by.labels.len()],
            ..Row::default()
        };
        Self {
            profile,
            group_by,
            rows: vec![root],
            lookup: HashMap::new(),
            label_rows: HashMap::new(),
            label_keys,
            height: 0,
        }
    }

    /// The values of the grouped labels in sample `i`'s label set.
    fn labels_of(&self, i: usize) -> Vec<Option<StrId>> {
        let set = (self.profile.samples.label_set.get(i))
            .and_then(|&s| self.profile.label_sets.get(s as usize))
            .map_or(&[][..], Vec::as_slice);
        (self.label_keys.iter())
            .map(|key| {
                let key = (*key)?;
                set.iter()
                    .find(|l| l.key == key && l.str != 0)
                    .map(|l| l.str)
            })
            .collect()
    }

    /// Adds sample `i` with `value` and `diff`.
    fn add(&mut self, i: usize, value: i64, diff: i64) {
        let labels = if self.group_by.labels.is_empty() {
            Vec::new()
        } else {
            self.labels_of(i)
        };
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
            self.rows[row].cumulative += value;
            self.rows[row].diff += diff;
            parent = row;
            depth = 1;
        }
        let stack = self.profile.samples.stack(i);
        for (n, &location) in stack.iter().enumerate().rev() {
            let leaf_location = n == 0;
            for frame in self.frames(location, leaf_location) {
                depth += 1;
                let (key, leaf, mut row) = frame;
                row.labels.clone_from(&labels);
                parent = self.place(parent, key, row, depth, (value, diff, leaf));
            }
        }
        self.height = self.height.max(depth);
    }

    /// The frames of `location`, outermost first: its key, whether it is the sample's
    /// leaf, and its row.
    fn frames(&self, location: LocationId, leaf_location: bool) -> Vec<(Key, bool, Row)> {
        let p = self.profile;
        let Some(loc) = p.locations.get(location as usize) else {
            return Vec::new();
        };
        let mapping = mapping_of(p, location).and_then(|m| p.mappings.get(m as usize));
        let base = Row {
            labels_only: Some(false),
            mapping_file: mapping.map(|m| m.filename),
            build_id: mapping.map(|m| m.build_id),
            address: Some(loc.address),
            inlined: Some(false),
            ..Row::default()
        };
        if loc.lines.is_empty() {
            return vec![(Key::Address(loc.address), leaf_location, base)];
        }
        let outermost = loc.lines.len() - 1;
        (loc.lines.iter().enumerate().rev())
            .map(|(k, line)| {
                let function =
                    function_of(p, line.function).and_then(|f| p.functions.get(f as usize));
                let row = Row {
                    line: Some(line.line),
                    inlined: Some(k != outermost),
                    start_line: function.map(|f| f.start_line),
                    name: function.map(|f| f.name),
                    system_name: function.map(|f| f.system_name),
                    file_name: function.map(|f| f.filename),
                    ..base.clone()
                };
                let key = Key::Line {
                    name: row.name,
                    mapping_file: if self.group_by.mapping_file {
                        row.mapping_file
                    } else {
                        None
                    },
                    address: self.group_by.address.then_some(loc.address),
                    file_name: if self.group_by.file_name {
                        row.file_name
                    } else {
                        None
                    },
                };
                (key, leaf_location && k == 0, row)
            })
            .collect()
    }

    /// Adds `frame` under `parent`, merged into an equal sibling when there is one, and
    /// returns its row.
    fn place(
        &mut self,
        parent: usize,
        key: Key,
        frame: Row,
        depth: u64,
        values: (i64, i64, bool),
    ) -> usize {
        let (value, diff, leaf) = values;
        let next = self.rows.len();
        let row = *self.lookup.entry((parent, key)).or_insert(next);
        if row == next {
            self.rows.push(Row { depth, ..frame });
            self.rows[parent].children.push(row);
        } else if matches!(key, Key::Line { .. }) {
            self.rows[row].intersect(&frame);
        }
        let r = &mut self.rows[row];
        r.cumulative += value;
        r.diff += diff;
        if leaf {
            r.flat += value;
        }
        row
    }
}

/// A kept row: where it was, its parent among the kept rows and its value offset.
#[derive(Debug, Clone, Copy)]
struct Kept {
    row: usize,
    parent: i32,
    offset: i64,
}

/// The rows the trim keeps, breadth first, their children among the kept rows, and
/// the value cut.
fn trim(rows: &[Row], fraction: f32) -> (Vec<Kept>, Vec<Vec<u32>>, i64) {
    let mut kept = Vec::new();
    let mut children: Vec<Vec<u32>> = Vec::new();
    let mut trimmed = 0;
    let mut queue = VecDeque::from([Kept {
        row: 0,
        parent: -1,
        offset: 0,
    }]);
    while let Some(k) = queue.pop_front() {
        let index = kept.len();
        if let Ok(parent) = usize::try_from(k.parent) {
            children[parent].push(index as u32);
        }
        kept.push(k);
        children.push(Vec::new());
        let threshold = (rows[k.row].cumulative as f32 * fraction) as i64;
        let mut offset = k.offset;
        for &child in &rows[k.row].children {
            let cumulative = rows[child].cumulative;
            if cumulative > threshold {
                queue.push_back(Kept {
                    row: child,
                    parent: index as i32,
                    offset,
                });
                offset += cumulative;
            } else {
                trimmed += cumulative;
            }
        }
    }
    (kept, children, trimmed)
}

/// The FLAMEGRAPH_ARROW report of `profile`, trimmed at `fraction` (0: not), grouped
/// by `group_by`; and the response's total.
pub(in crate::grpc::reports) fn flamegraph_arrow(
    profile: &Profile,
    values: Values<'_>,
    fraction: f32,
    group_by: &GroupBy,
) -> Result<(pq::FlamegraphArrow, i64), Status> {
    let mut tree = Tree::new(profile, group_by);
    for i in 0..profile.samples.len() {
        tree.add(i, values.value(i), values.diff(i));
    }
    let total = values.total();
    tree.rows[0].cumulative = total;
    tree.rows[0].diff = (0..profile.samples.len()).map(|i| values.diff(i)).sum();
    let rows = &tree.rows;
    let (kept, children, trimmed) = trim(rows, fraction);
    let root_kept: i64 = (children[0].iter())
        .map(|&c| rows[kept[c as usize].row].cumulative)
        .sum();
    let record = ipc(columns(
        profile, rows, &kept, &children, root_kept, group_by,
    )?)?;
    let height = i32::try_from(tree.height + 1).unwrap_or(i32::MAX);
    Ok((
        pq::FlamegraphArrow {
            record,
            unit: unit(profile),
            height,
            trimmed,
        },
        total,
    ))
}

/// The record's columns, in Parca's order, of the `kept` rows.
fn columns(
    profile: &Profile,
    rows: &[Row],
    kept: &[Kept],
    children: &[Vec<u32>],
    root_kept: i64,
    group_by: &GroupBy,
) -> Result<Vec<(String, ArrayRef)>, Status> {
    let row = |k: &Kept| &rows[k.row];
    let strings = |field: fn(&Row) -> Option<StrId>| {
        let mut column = StringColumn::default();
        kept.iter().for_each(|k| column.push(field(row(k))));
        column.binary(&profile.strings)
    };
    let unsigned = |field: fn(&Row) -> Option<i64>| {
        let values: Vec<Option<u64>> = kept
            .iter()
            .map(|k| field(row(k)).map(|v| v as u64))
            .collect();
        let largest = values.iter().flatten().copied().max().unwrap_or(0);
        smallest_unsigned(&values, largest)
    };
    let mut cumulative: Vec<Option<u64>> = kept
        .iter()
        .map(|k| Some(row(k).cumulative as u64))
        .collect();
    cumulative[0] = Some(root_kept as u64);
    let largest_cumulative = kept
        .iter()
        .map(|k| row(k).cumulative as u64)
        .max()
        .unwrap_or(0);
    let offsets: Vec<Option<u64>> = kept.iter().map(|k| Some(k.offset as u64)).collect();
    let children = ListArray::from_iter_primitive::<UInt32Type, _, _>(
        children
            .iter()
            .map(|c| (!c.is_empty()).then(|| c.iter().map(|&v| Some(v)).collect::<Vec<_>>())),
    );
    let mut columns: Vec<(&str, ArrayRef)> = vec![
        (
            "labels_only",
            Arc::new(BooleanArray::from_iter(
                kept.iter().map(|k| row(k).labels_only),
            )),
        ),
        (
            "location_address",
            Arc::new(UInt64Array::from_iter(kept.iter().map(|k| row(k).address))),
        ),
        ("mapping_file", strings(|r| r.mapping_file)?),
        ("mapping_build_id", strings(|r| r.build_id)?),
        ("location_line", unsigned(|r| r.line)),
        (
            "inlined",
            Arc::new(BooleanArray::from_iter(kept.iter().map(|k| row(k).inlined))),
        ),
        ("function_startline", unsigned(|r| r.start_line)),
        ("function_name", strings(|r| r.name)?),
        ("function_system_name", strings(|r| r.system_name)?),
        ("function_file_name", strings(|r| r.file_name)?),
        ("children", Arc::new(children)),
        (
            "parent",
            Arc::new(Int32Array::from_iter_values(kept.iter().map(|k| k.parent))),
        ),
        (
            "cumulative",
            smallest_unsigned(&cumulative, root_kept as u64),
        ),
        ("flat", unsigned(|r| Some(r.flat))),
        (
            "diff",
            smallest_signed(&kept.iter().map(|k| row(k).diff).collect::<Vec<_>>()),
        ),
        (
            "timestamp",
            Arc::new(Int64Array::from_iter_values(kept.iter().map(|_| 0))),
        ),
        ("depth", unsigned(|r| Some(r.depth as i64))),
        (
            "value_offset",
            smallest_unsigned(&offsets, largest_cumulative),
        ),
    ];
    let mut labels = Vec::new();
    for (n, name) in group_by.labels.iter().enumerate() {
        let mut column = StringColumn::default();
        kept.iter()
            .for_each(|k| column.push(row(k).labels.get(n).copied().flatten()));
        labels.push((format!("labels.{name}"), column.binary(&profile.strings)?));
    }
    Ok(columns
        .drain(..)
        .map(|(name, array)| (name.to_string(), array))
        .chain(labels)
        .collect())
}

#[cfg(test)]
mod tests {
    use profile_model::profile::Label;

    use super::{GroupBy, flamegraph_arrow};
    use crate::grpc::reports::arrow::read;
    use crate::grpc::reports::symbols::Values;
    use crate::grpc::reports::testing::profile;

    /// a → b → c (c inlined into b at one address) and a → d, and a location without
    /// lines under a: each a row, breadth first, with its metadata.
    #[test]
    fn rows_are_frames_breadth_first_with_inlined_lines_and_addresses() {
        let p = profile(
            &[
                (0x10, &["a"]),
                (0x20, &["c", "b"]),
                (0x30, &["d"]),
                (0x40, &[]),
            ],
            &[(&[1, 0], 5), (&[2, 0], 3), (&[3, 0], 2), (&[1, 0], 1)],
        );
        let (graph, total) =
            flamegraph_arrow(&p, Values::of(&p, false), 0.0, &GroupBy::default()).unwrap();
        assert_eq!((total, graph.height, graph.trimmed), (11, 4, 0));
        let b = read::batch(&graph.record);
        let names = read::strings(&b, "function_name");
        let name = |s: &str| Some(s.to_string());
        assert_eq!(
            names,
            [None, name("a"), name("b"), name("d"), None, name("c")]
        );
        assert_eq!(
            read::numbers(&b, "cumulative"),
            [11, 11, 6, 3, 2, 6].map(|v| Some(v.into()))
        );
        assert_eq!(
            read::numbers(&b, "flat"),
            [0, 0, 0, 3, 2, 6].map(|v| Some(v.into()))
        );
        assert_eq!(
            read::numbers(&b, "parent"),
            [-1, 0, 1, 1, 1, 2].map(|v| Some(v.into()))
        );
        assert_eq!(
            read::numbers(&b, "depth"),
            [0, 1, 2, 2, 2, 3].map(|v| Some(v.into()))
        );
        assert_eq!(
            read::numbers(&b, "value_offset"),
            [0, 0, 0, 6, 9, 0].map(|v| Some(v.into()))
        );
        assert_eq!(
            read::booleans(&b, "inlined")[1..],
            [false, false, false, false, true].map(Some)
        );
        assert_eq!(read::booleans(&b, "labels_only")[..2], [None, Some(false)]);
        assert_eq!(read::numbers(&b, "location_address")[4], Some(0x40));
        assert_eq!(
            read::numbers(&b, "location_line")[1..],
            [Some(10), Some(11), Some(10), None, Some(10)]
        );
        assert_eq!(read::strings(&b, "mapping_file")[1], name("/bin/x"));
        let children = read::lists(&b, "children");
        assert_eq!(
            children[..3],
            [Some(vec![1]), Some(vec![2, 3, 4]), Some(vec![5])]
        );
        assert_eq!(children[3], None);
    }

    /// Frames merged by name lose the fields in which they differ; a trim at 40% cuts
    /// the children under 40% of their parent and sums them in `trimmed`.
    #[test]
    fn merged_frames_null_their_differences_and_the_trim_cuts_small_children() {
        // Two locations of "a" at different addresses (lines 10 both).
        let p = profile(
            &[
                (0x10, &["a"]),
                (0x11, &["a"]),
                (0x20, &["b"]),
                (0x30, &["c"]),
            ],
            &[(&[2, 0], 7), (&[3, 1], 3)],
        );
        let (graph, _) =
            flamegraph_arrow(&p, Values::of(&p, false), 0.4, &GroupBy::default()).unwrap();
        let b = read::batch(&graph.record);
        assert_eq!(
            read::strings(&b, "function_name")[1..],
            [Some("a".to_string()), Some("b".to_string())]
        );
        assert_eq!(read::numbers(&b, "location_address")[1], None);
        assert_eq!(read::numbers(&b, "location_line")[1], Some(10));
        assert_eq!(graph.trimmed, 3);
        assert_eq!(read::numbers(&b, "cumulative")[..2], [Some(10), Some(10)]);

        // Told apart by address when grouped by it.
        let by_address = GroupBy::of(&["location_address".to_string()]);
        let (graph, _) = flamegraph_arrow(&p, Values::of(&p, false), 0.0, &by_address).unwrap();
        let b = read::batch(&graph.record);
        assert_eq!(
            read::numbers(&b, "location_address")[1..3],
            [Some(0x10), Some(0x11)]
        );
    }

    /// Grouped by a label: a label row per value under the root, the stacks under it;
    /// a sample without the label stays at the root; the label column names the values.
    #[test]
    fn a_label_group_by_puts_label_rows_first() {
        let mut p = profile(
            &[(0x10, &["a"]), (0x20, &["b"])],
            &[(&[1, 0], 4), (&[1, 0], 6), (&[0], 1)],
        );
        p.strings.extend(["comm".to_string(), "api".to_string()]);
        let (comm, api) = ((p.strings.len() - 2) as u32, (p.strings.len() - 1) as u32);
        p.label_sets.push(vec![Label {
            key: comm,
            str: api,
            ..Label::default()
        }]);
        p.samples.label_set = vec![1, 1, 0];
        let group_by = GroupBy::of(&["labels.comm".to_string()]);
        let (graph, total) = flamegraph_arrow(&p, Values::of(&p, false), 0.0, &group_by).unwrap();
        assert_eq!((total, graph.height), (11, 4));
        let b = read::batch(&graph.record);
        assert_eq!(
            read::booleans(&b, "labels_only")[..3],
            [None, Some(true), Some(false)]
        );
        let api = Some("api".to_string());
        assert_eq!(
            read::strings(&b, "labels.comm"),
            [None, api.clone(), None, api.clone(), api]
        );
        assert_eq!(
            read::numbers(&b, "cumulative"),
            [11, 10, 1, 10, 10].map(|v| Some(v.into()))
        );
        assert_eq!(
            read::numbers(&b, "depth"),
            [0, 1, 1, 2, 3].map(|v| Some(v.into()))
        );
    }

    /// In a diff, `diff` sums the differences (negative ones too) and the root holds
    /// their sum.
    #[test]
    fn a_diff_sums_the_differences_per_row() {
        let mut p = profile(
            &[(0x10, &["a"]), (0x20, &["b"])],
            &[(&[1, 0], 4), (&[0], 6)],
        );
        p.samples.values.push(vec![-300, 100]);
        let (graph, _) =
            flamegraph_arrow(&p, Values::of(&p, true), 0.0, &GroupBy::default()).unwrap();
        let b = read::batch(&graph.record);
        assert_eq!(
            read::numbers(&b, "diff"),
            [-200, -200, -300].map(|v| Some(v.into()))
        );
    }

    /// A profile without samples: the root alone.
    #[test]
    fn no_samples_is_the_root_alone() {
        let p = profile(&[], &[]);
        let (graph, total) =
            flamegraph_arrow(&p, Values::of(&p, false), 0.0, &GroupBy::default()).unwrap();
        let b = read::batch(&graph.record);
        assert_eq!((total, graph.height, b.num_rows()), (0, 1, 1));
    }
}
