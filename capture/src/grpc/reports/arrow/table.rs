//! REPORT_TYPE_TABLE_ARROW as Parca's `pkg/query/table.go` (`generateTableArrowRecord`)
//! builds it.
//!
//! - One row per function name, for the lines of a location whose function exists,
//!   and one per build id and address for a location without lines; a line whose
//!   function does not exist makes no row. Rows come in the order first met, walking
//!   each sample leaf first and each location's lines innermost first.
//! - Each time a row is met in a sample it adds the sample's value to `cumulative`
//!   (a function met twice in one stack counts twice, as in Parca) and its difference
//!   to `cumulative_diff`; where it is the sample's first frame, also to `flat` and
//!   `flat_diff`. The frame met just before it (its callee) lists it in `callers`, and
//!   it lists that frame in `callees`, by row index (sorted; null when none).
//! - A row keeps its first frame's mapping file and build id, address, line, start line
//!   (null unless positive) and function names. `cumulative_diff` is null when no
//!   difference was added to it.

use std::collections::{BTreeSet, HashMap};
use std::sync::Arc;

use arrow_array::types::{Int64Type, UInt16Type, UInt32Type};
use arrow_array::{ArrayRef, Int64Array, ListArray, UInt64Array};
use profile_model::Profile;
use profile_model::profile::StrId;
use tonic::Status;

use super::{StringColumn, ipc};
use crate::grpc::proto::query as pq;
use crate::grpc::reports::symbols::{Values, function_of, mapping_of, unit};

/// How a row is found again.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
enum Key {
    /// A location without lines: its build id string and address.
    Address(Option<StrId>, u64),
    /// A line's function name.
    Function(StrId),
}

/// One row of the table.
#[derive(Debug, Clone, Default)]
struct Row {
    mapping_file: Option<StrId>,
    build_id: Option<StrId>,
    address: u64,
    line: Option<i64>,
    start_line: Option<i64>,
    name: Option<StrId>,
    system_name: Option<StrId>,
    file_name: Option<StrId>,
    cumulative: i64,
    cumulative_diff: Option<i64>,
    flat: i64,
    flat_diff: i64,
    callers: BTreeSet<i64>,
    callees: BTreeSet<i64>,
}

/// The TABLE_ARROW report of `profile`, and the response's total.
pub(in crate::grpc::reports) fn table_arrow(
    profile: &Profile,
    values: Values<'_>,
) -> Result<(pq::TableArrow, i64), Status> {
    let mut rows: Vec<Row> = Vec::new();
    let mut found: HashMap<Key, usize> = HashMap::new();
    for i in 0..profile.samples.len() {
        let (value, diff) = (values.value(i), values.diff(i));
        let mut previous: Option<usize> = None;
        for (n, &location) in profile.samples.stack(i).iter().enumerate() {
            for (key, leaf, frame) in frames(profile, location, n == 0) {
                let next = rows.len();
                let row = *found.entry(key).or_insert(next);
                if row == next {
                    rows.push(frame);
                }
                let r = &mut rows[row];
                r.cumulative += value;
                if diff != 0 {
                    r.cumulative_diff = Some(r.cumulative_diff.unwrap_or(0) + diff);
                }
                if leaf {
                    r.flat += value;
                    r.flat_diff += diff;
                }
                if let Some(callee) = previous {
                    r.callees.insert(callee as i64);
                    rows[callee].callers.insert(row as i64);
                }
                previous = Some(row);
            }
        }
    }
    let record = ipc(columns(profile, &rows)?)?;
    Ok((
        pq::TableArrow {
            record,
            unit: unit(profile),
        },
        values.total(),
    ))
}

/// The rows `location` may add, innermost first: key, whether it is the sample's
/// leaf (`leaf_location` and the first line), and the row as first met.
fn frames(profile: &Profile, location: u32, leaf_location: bool) -> Vec<(Key, bool, Row)> {
    let Some(loc) = profile.locations.get(location as usize) else {
        return Vec::new();
    };
    let mapping = mapping_of(profile, location).and_then(|m| profile.mappings.get(m as usize));
    let base = Row {
        mapping_file: mapping.map(|m| m.filename),
        build_id: mapping.map(|m| m.build_id),
        address: loc.address,
        ..Row::default()
    };
    if loc.lines.is_empty() {
        let key = Key::Address(base.build_id, loc.address);
        return vec![(key, leaf_location, base)];
    }
    (loc.lines.iter().enumerate())
        .filter_map(|(k, line)| {
            let f = function_of(profile, line.function)?;
            let function = profile.functions.get(f as usize)?;
            let row = Row {
                line: Some(line.line),
                start_line: (function.start_line > 0).then_some(function.start_line),
                name: Some(function.name),
                system_name: Some(function.system_name),
                file_name: Some(function.filename),
                ..base.clone()
            };
            Some((Key::Function(function.name), leaf_location && k == 0, row))
        })
        .collect()
}

/// The record's columns, in Parca's order.
fn columns(profile: &Profile, rows: &[Row]) -> Result<Vec<(String, ArrayRef)>, Status> {
    let strings = |field: fn(&Row) -> Option<StrId>| {
        let mut column = StringColumn::default();
        rows.iter().for_each(|r| column.push(field(r)));
        column
    };
    let s = &profile.strings;
    let list = |field: fn(&Row) -> &BTreeSet<i64>| -> ArrayRef {
        Arc::new(ListArray::from_iter_primitive::<Int64Type, _, _>(
            rows.iter().map(|r| {
                let set = field(r);
                (!set.is_empty()).then(|| set.iter().map(|&v| Some(v)).collect::<Vec<_>>())
            }),
        ))
    };
    let numbers = |field: fn(&Row) -> Option<i64>| -> ArrayRef {
        Arc::new(Int64Array::from_iter(rows.iter().map(field)))
    };
    let columns: Vec<(&str, ArrayRef)> = vec![
        (
            "mapping_file",
            strings(|r| r.mapping_file).utf8::<UInt16Type>(s)?,
        ),
        (
            "mapping_build_id",
            strings(|r| r.build_id).utf8::<UInt16Type>(s)?,
        ),
        (
            "location_address",
            Arc::new(UInt64Array::from_iter_values(
                rows.iter().map(|r| r.address),
            )),
        ),
        ("location_line", numbers(|r| r.line)),
        ("function_startline", numbers(|r| r.start_line)),
        ("function_name", strings(|r| r.name).utf8::<UInt32Type>(s)?),
        (
            "function_system_name",
            strings(|r| r.system_name).utf8::<UInt16Type>(s)?,
        ),
        (
            "function_file_name",
            strings(|r| r.file_name).utf8::<UInt32Type>(s)?,
        ),
        ("cumulative", numbers(|r| Some(r.cumulative))),
        ("cumulative_diff", numbers(|r| r.cumulative_diff)),
        ("flat", numbers(|r| Some(r.flat))),
        ("flat_diff", numbers(|r| Some(r.flat_diff))),
        ("callers", list(|r| &r.callers)),
        ("callees", list(|r| &r.callees)),
    ];
    Ok(columns
        .into_iter()
        .map(|(name, array)| (name.to_string(), array))
        .collect())
}

#[cfg(test)]
mod tests {
    use super::table_arrow;
    use crate::grpc::reports::arrow::read;
    use crate::grpc::reports::symbols::Values;
    use crate::grpc::reports::testing::profile;

    /// main → f → f (recursion) → g, and main → g: a row per function in the order
    /// met leaf first, cumulative per frame met, callers and callees by row.
    #[test]
    fn a_row_per_function_with_its_callers_and_callees() {
        let p = profile(
            &[
                (0x10, &["main"]),
                (0x20, &["f"]),
                (0x30, &["g"]),
                (0x40, &[]),
            ],
            &[(&[2, 1, 1, 0], 5), (&[2, 0], 2), (&[3, 0], 1)],
        );
        let (table, total) = table_arrow(&p, Values::of(&p, false)).unwrap();
        assert_eq!((total, table.unit.as_str()), (8, ""));
        let b = read::batch(&table.record);
        let some = |s: &str| Some(s.to_string());
        assert_eq!(
            read::strings(&b, "function_name"),
            [some("g"), some("f"), some("main"), None]
        );
        assert_eq!(
            read::numbers(&b, "cumulative"),
            [7, 10, 8, 1].map(|v| Some(v.into()))
        );
        assert_eq!(
            read::numbers(&b, "flat"),
            [7, 0, 0, 1].map(|v| Some(v.into()))
        );
        assert_eq!(read::numbers(&b, "cumulative_diff"), [None; 4]);
        assert_eq!(read::numbers(&b, "location_address")[3], Some(0x40));
        assert_eq!(
            read::lists(&b, "callers"),
            [Some(vec![1, 2]), Some(vec![1, 2]), None, Some(vec![2])]
        );
        assert_eq!(
            read::lists(&b, "callees"),
            [None, Some(vec![0, 1]), Some(vec![0, 1, 3]), None]
        );
        assert_eq!(read::strings(&b, "mapping_file")[0], some("/bin/x"));
    }

    /// In a diff, `cumulative_diff` and `flat_diff` sum the differences.
    #[test]
    fn a_diff_sums_the_differences() {
        let mut p = profile(
            &[(0x10, &["main"]), (0x20, &["f"])],
            &[(&[1, 0], 5), (&[0], 2)],
        );
        p.samples.values.push(vec![-3, 1]);
        let (table, _) = table_arrow(&p, Values::of(&p, true)).unwrap();
        let b = read::batch(&table.record);
        assert_eq!(read::numbers(&b, "cumulative_diff"), [Some(-3), Some(-2)]);
        assert_eq!(read::numbers(&b, "flat_diff"), [Some(-3), Some(1)]);
    }
}
