//! REPORT_TYPE_FLAMEGRAPH_ARROW and REPORT_TYPE_FLAMECHART as Parca's
//! `pkg/query/flamegraph_arrow.go` (`generateFlamegraphArrowRecord`, `trim`,
//! `NewRecord`) builds them.
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
//! the previous sample ended at); `diff` takes a type that holds its negative values.
//! A flame graph's `timestamp` is 0 (flint's merges keep no sample times, so `group_by`
//! timestamp changes nothing); a flame chart's is each row's first time ([`super::tree`]).

use std::collections::VecDeque;
use std::sync::Arc;

use arrow_array::types::UInt32Type;
use arrow_array::{ArrayRef, BooleanArray, Int32Array, Int64Array, ListArray, UInt64Array};
use profile_model::Profile;
use profile_model::profile::StrId;
use tonic::Status;

use super::tree::{Row, Tree};
use super::{StringColumn, ipc, smallest_signed, smallest_unsigned};
use crate::grpc::proto::query as pq;
use crate::grpc::reports::symbols::{Values, unit};

/// What a flame graph's `group_by` asks for.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct GroupBy {
    /// The label names (without `labels.`), sorted: one label row per distinct values.
    pub(super) labels: Vec<String>,
    /// Frames of different mapping files are told apart.
    pub(super) mapping_file: bool,
    /// Frames of different addresses are told apart.
    pub(super) address: bool,
    /// Frames of functions in different files are told apart.
    pub(super) file_name: bool,
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
    let mut tree = Tree::new(group_by, false);
    tree.add_profile(profile, values, 0);
    let diff = (0..profile.samples.len()).map(|i| values.diff(i)).sum();
    finish(
        tree,
        (values.total(), diff),
        unit(profile),
        fraction,
        group_by,
    )
}

/// The FLAMECHART report of `profiles` (each one time, in time order), trimmed and
/// grouped as [`flamegraph_arrow`]; and the response's total.
pub(in crate::grpc::reports) fn flamechart(
    profiles: &[Profile],
    fraction: f32,
    group_by: &GroupBy,
) -> Result<(pq::FlamegraphArrow, i64), Status> {
    let mut tree = Tree::new(group_by, true);
    let mut total = 0;
    for p in profiles {
        let values = Values::of(p, false);
        tree.add_profile(p, values, p.time_nanos);
        total += values.total();
    }
    let unit = profiles.first().map(unit).unwrap_or_default();
    finish(tree, (total, 0), unit, fraction, group_by)
}

/// The report of `tree`, whose samples sum to `totals` (values, differences).
fn finish(
    mut tree: Tree<'_>,
    totals: (i64, i64),
    unit: String,
    fraction: f32,
    group_by: &GroupBy,
) -> Result<(pq::FlamegraphArrow, i64), Status> {
    (tree.rows[0].cumulative, tree.rows[0].diff) = totals;
    let rows = &tree.rows;
    let (kept, children, trimmed) = trim(rows, fraction);
    let root_kept: i64 = (children[0].iter())
        .map(|&c| rows[kept[c as usize].row].cumulative)
        .sum();
    let strings = &tree.strings;
    let record = ipc(columns(
        strings, rows, &kept, &children, root_kept, group_by,
    )?)?;
    let height = i32::try_from(tree.height + 1).unwrap_or(i32::MAX);
    Ok((
        pq::FlamegraphArrow {
            record,
            unit,
            height,
            trimmed,
        },
        totals.0,
    ))
}

/// The record's columns, in Parca's order, of the `kept` rows.
fn columns(
    strings: &[String],
    rows: &[Row],
    kept: &[Kept],
    children: &[Vec<u32>],
    root_kept: i64,
    group_by: &GroupBy,
) -> Result<Vec<(String, ArrayRef)>, Status> {
    let row = |k: &Kept| &rows[k.row];
    let dictionary = |field: fn(&Row) -> Option<StrId>| {
        let mut column = StringColumn::default();
        kept.iter().for_each(|k| column.push(field(row(k))));
        column.binary(strings)
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
        ("mapping_file", dictionary(|r| r.mapping_file)?),
        ("mapping_build_id", dictionary(|r| r.build_id)?),
        ("location_line", unsigned(|r| r.line)),
        (
            "inlined",
            Arc::new(BooleanArray::from_iter(kept.iter().map(|k| row(k).inlined))),
        ),
        ("function_startline", unsigned(|r| r.start_line)),
        ("function_name", dictionary(|r| r.name)?),
        ("function_system_name", dictionary(|r| r.system_name)?),
        ("function_file_name", dictionary(|r| r.file_name)?),
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
            Arc::new(Int64Array::from_iter_values(
                kept.iter().map(|k| row(k).timestamp),
            )),
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
        labels.push((format!("labels.{name}"), column.binary(strings)?));
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

    use super::{GroupBy, flamechart, flamegraph_arrow};
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

    /// A flame chart over four profiles of 10 ms samples: a frame joins the row its
    /// parent last took in while its time falls within the row's time plus cumulative
    /// (plus a millisecond); a later, apart sample starts a new row.
    #[test]
    fn a_flame_chart_joins_rows_that_continue_in_time() {
        const S: i64 = 1_000_000_000;
        let at = |time: i64, stacks: &[(&[u32], i64)]| {
            let mut p = profile(&[(0x10, &["a"]), (0x20, &["b"]), (0x30, &["c"])], stacks);
            (p.time_nanos, p.period) = (time, 10_000_000);
            p
        };
        let profiles = [
            at(0, &[(&[1, 0], 10 * S)]),
            at(10 * S, &[(&[1, 0], 5 * S), (&[2, 0], 5 * S)]),
            at(20 * S, &[(&[1, 0], 2 * S)]),
            at(60 * S, &[(&[1, 0], S)]),
        ];
        let (chart, total) = flamechart(&profiles, 0.0, &GroupBy::default()).unwrap();
        assert_eq!((total, chart.height), (23 * S, 3));
        let b = read::batch(&chart.record);
        let name = |s: &str| Some(s.to_string());
        // root; a@0 (10 s, 10 s and 2 s: each starts where the row ends); a@60, apart;
        // under a@0: b@0 (10 s, 5 s), c@10, b@20 (a took in c since: a new row); b@60.
        assert_eq!(
            read::strings(&b, "function_name"),
            [
                None,
                name("a"),
                name("a"),
                name("b"),
                name("c"),
                name("b"),
                name("b")
            ]
        );
        let seconds = |v: &[i64]| {
            v.iter()
                .map(|v| Some(i128::from(v * S)))
                .collect::<Vec<_>>()
        };
        assert_eq!(
            read::numbers(&b, "timestamp"),
            seconds(&[0, 0, 60, 0, 10, 20, 60])
        );
        assert_eq!(
            read::numbers(&b, "cumulative"),
            seconds(&[23, 22, 1, 15, 5, 2, 1])
        );
        assert_eq!(
            read::numbers(&b, "parent"),
            [-1, 0, 0, 1, 1, 1, 2].map(|v| Some(v.into()))
        );
    }
}
