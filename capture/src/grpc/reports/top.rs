//! REPORT_TYPE_TOP as Parca's `pkg/query/top.go` (`GenerateTopTable`,
//! `aggregateTopByFunction`) builds it.
//!
//! - One node per location first: for every location of every sample, the location's
//!   cumulative and diff grow by the sample's value and diff, once per occurrence (a
//!   location twice on a stack counts twice); its flat grows only where it is the
//!   leaf. The node names the location's first line only (its innermost function,
//!   with that line); the functions it was inlined into get nothing.
//! - Then nodes are merged: by function name where the node has a function, else by
//!   (mapping, address). The first node of a group keeps its location and function;
//!   merging by name drops the line, and empties the mapping (an empty message) when
//!   two of the merged nodes come from different mappings.
//! - Sorted by flat, descending, then by address, ascending. Parca's sort is not
//!   stable and it visits a Go map, so ties come in any order there; here the first
//!   seen comes first among equal name and address.
//! - `reported` is the number of nodes, `unit` the sample type's unit, the deprecated
//!   `total` the sum of all values cut to 32 bits as Go's `int32()` cuts it; the
//!   response's total is that sum in full. In a diff the values are B's, and `diff`
//!   sums the differences as the cumulative does.

use std::collections::HashMap;

use profile_model::Profile;
use profile_model::profile::{FunctionId, LocationId, MappingId};

use super::symbols::{
    Values, function_message, function_name, function_of, id, location_message, mapping_message,
    mapping_of, unit,
};
use crate::grpc::proto::{metastore, query as pq};

/// The TOP report of `profile` and its cumulative total.
pub(super) fn top(profile: &Profile, values: Values<'_>) -> (pq::Top, i64) {
    let mut rows = merged(profile, per_location(profile, values));
    rows.sort_by(|a, b| {
        b.flat
            .cmp(&a.flat)
            .then(a.address.cmp(&b.address))
            .then(a.order.cmp(&b.order))
    });
    let total = values.total();
    let list: Vec<pq::TopNode> = rows.iter().map(|r| r.message(profile)).collect();
    let top = pq::Top {
        reported: list.len() as i32,
        list,
        // Go's int32(): the low 32 bits.
        total: total as i32,
        unit: unit(profile),
    };
    (top, total)
}

/// Which mapping a merged node names.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum MappingOf {
    None,
    One(MappingId),
    /// Merged from different mappings: an empty mapping message.
    Mixed,
}

/// One node of the table.
#[derive(Debug, Clone)]
struct Row {
    location: LocationId,
    address: u64,
    function: Option<FunctionId>,
    mapping: MappingOf,
    line: Option<i64>,
    flat: i64,
    cum: i64,
    diff: i64,
    /// When the location was first seen, for a stable order among ties.
    order: usize,
}

impl Row {
    fn new(profile: &Profile, location: LocationId, order: usize) -> Self {
        let loc = profile.locations.get(location as usize);
        let first = loc.and_then(|l| l.lines.first());
        let function = first.and_then(|l| function_of(profile, l.function));
        Self {
            location,
            address: loc.map_or(0, |l| l.address),
            function,
            mapping: mapping_of(profile, location).map_or(MappingOf::None, MappingOf::One),
            line: first.filter(|_| function.is_some()).map(|l| l.line),
            flat: 0,
            cum: 0,
            diff: 0,
            order,
        }
    }

    fn message(&self, profile: &Profile) -> pq::TopNode {
        let mapping = match self.mapping {
            MappingOf::None => None,
            MappingOf::One(m) => Some(mapping_message(profile, m)),
            MappingOf::Mixed => Some(metastore::Mapping::default()),
        };
        let line = self
            .function
            .zip(self.line)
            .map(|(f, line)| metastore::Line {
                function_id: id(f),
                line,
                ..Default::default()
            });
        pq::TopNode {
            meta: Some(pq::TopNodeMeta {
                location: Some(location_message(profile, self.location)),
                mapping,
                function: self.function.map(|f| function_message(profile, f)),
                line,
            }),
            cumulative: self.cum,
            flat: self.flat,
            diff: self.diff,
        }
    }
}

/// One row per location on any stack, in the order first seen.
fn per_location(profile: &Profile, values: Values<'_>) -> Vec<Row> {
    let mut slot = vec![usize::MAX; profile.locations.len()];
    let mut rows: Vec<Row> = Vec::new();
    for i in 0..profile.samples.len() {
        let (value, diff) = (values.value(i), values.diff(i));
        for (depth, &location) in profile.samples.stack(i).iter().enumerate() {
            let Some(index) = slot.get_mut(location as usize) else {
                continue;
            };
            if *index == usize::MAX {
                *index = rows.len();
                rows.push(Row::new(profile, location, rows.len()));
            }
            let row = &mut rows[*index];
            row.cum += value;
            row.diff += diff;
            if depth == 0 {
                row.flat += value;
            }
        }
    }
    rows
}

/// What rows are merged by.
#[derive(Debug, PartialEq, Eq, Hash)]
enum Key<'p> {
    Function(&'p str),
    Address(Option<MappingId>, u64),
}

/// The rows merged by function name, or by mapping and address where there is no
/// function; the first row of each group stands for it.
fn merged(profile: &Profile, rows: Vec<Row>) -> Vec<Row> {
    let mut groups: HashMap<Key<'_>, usize> = HashMap::new();
    let mut out: Vec<Row> = Vec::new();
    for row in rows {
        let key = match (row.function, row.mapping) {
            (Some(f), _) => Key::Function(function_name(profile, f)),
            (None, MappingOf::One(m)) => Key::Address(Some(m), row.address),
            (None, _) => Key::Address(None, row.address),
        };
        let Some(&index) = groups.get(&key) else {
            groups.insert(key, out.len());
            out.push(row);
            continue;
        };
        let group = &mut out[index];
        group.flat += row.flat;
        group.cum += row.cum;
        group.diff += row.diff;
        if group.function.is_some() {
            group.line = None;
            if group.mapping != MappingOf::None
                && row.mapping != MappingOf::None
                && group.mapping != row.mapping
            {
                group.mapping = MappingOf::Mixed;
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::grpc::reports::testing::profile;

    fn top_of(p: &Profile) -> pq::Top {
        top(p, Values::of(p, false)).0
    }

    fn meta(node: &pq::TopNode) -> &pq::TopNodeMeta {
        node.meta.as_ref().expect("meta")
    }

    /// (function name, address, flat, cum) of each node, in order.
    fn rows(top: &pq::Top) -> Vec<(String, u64, i64, i64)> {
        (top.list.iter())
            .map(|n| {
                let m = meta(n);
                let name = m.function.as_ref().map_or("", |f| f.name.as_str());
                let address = m.location.as_ref().map_or(0, |l| l.address);
                (name.to_string(), address, n.flat, n.cumulative)
            })
            .collect()
    }

    /// Parca's `TestGenerateTopTableAggregateFlat`: no functions, one node per address.
    #[test]
    fn locations_without_functions_are_counted_per_address_flat_first() {
        let no: &[&str] = &[];
        let p = profile(
            &[(4, no), (3, no), (2, no), (1, no)],
            &[(&[3, 2], 1), (&[3, 1], 1), (&[3, 0], 1)],
        );
        let top = top_of(&p);
        let want = [(1, 3, 3), (2, 0, 1), (3, 0, 1), (4, 0, 1)];
        let got: Vec<(u64, i64, i64)> = rows(&top).into_iter().map(|r| (r.1, r.2, r.3)).collect();
        assert_eq!(got, want);
        assert_eq!((top.reported, top.total, top.unit.as_str()), (4, 3, ""));
    }

    /// Merged by name, cumulative per occurrence, only a location's first line counts.
    #[test]
    fn functions_merge_by_name_and_count_each_location_on_the_stack() {
        let p = profile(
            &[
                (0x10, &["f"]),
                (0x20, &["f"]),
                (0x30, &["inl", "outer"]),
                (0x40, &["main"]),
            ],
            &[(&[0, 3], 5), (&[1, 0, 3], 2), (&[2, 3], 3)],
        );
        let (top, total) = top(&p, Values::of(&p, false));
        let want = [
            ("f", 0x10, 7, 9),
            ("inl", 0x30, 3, 3),
            ("main", 0x40, 0, 10),
        ];
        let want: Vec<_> = want
            .iter()
            .map(|(n, a, f, c)| (n.to_string(), *a, *f, *c))
            .collect();
        assert_eq!(rows(&top), want);
        assert_eq!(total, 10);
        // A merged node has no line; a single one keeps its own.
        assert_eq!(meta(&top.list[0]).line, None);
        assert_eq!(meta(&top.list[1]).line.as_ref().map(|l| l.line), Some(10));
        assert_eq!(
            meta(&top.list[0]).mapping.as_ref().map(|m| m.file.as_str()),
            Some("/bin/x")
        );
    }

    #[test]
    fn a_function_of_two_mappings_has_an_empty_mapping() {
        let mut p = profile(&[(0x10, &["f"]), (0x20, &["f"])], &[(&[0], 1), (&[1], 1)]);
        p.mappings.push(p.mappings[0].clone());
        p.locations[1].mapping = Some(1);
        let top = top_of(&p);
        assert_eq!(top.list.len(), 1);
        assert_eq!(
            meta(&top.list[0]).mapping,
            Some(metastore::Mapping::default())
        );
    }

    #[test]
    fn diffs_add_up_as_the_cumulative() {
        let mut p = profile(
            &[(0x10, &["f"]), (0x20, &["g"])],
            &[(&[0, 1], 4), (&[1], 0)],
        );
        p.samples.values.push(vec![3, -5]);
        let top = top(&p, Values::of(&p, true)).0;
        let diffs: Vec<(i64, i64)> = top.list.iter().map(|n| (n.flat, n.diff)).collect();
        assert_eq!(diffs, [(4, 3), (0, -2)]);
    }
}
