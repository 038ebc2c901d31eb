//! The record of REPORT_TYPE_SOURCE, as Parca's `pkg/query/sources.go`
//! (`generateSourceReportRecord`) builds it: per file and line, the value of the
//! samples through that line.
//!
//! - Only locations with a mapping count, and when the reference names a build id,
//!   only those whose mapping has it.
//! - A line counts when its function exists and the function's file name is the
//!   reference's file name or ends in it at a `/`.
//! - Each time a line is met it adds the sample's value to `cumulative`, and where it
//!   is the sample's first frame to `flat`. Rows are sorted by file name, then line.
//! - The total is the sum of all values.

use std::collections::BTreeMap;
use std::sync::Arc;

use arrow_array::types::Int32Type;
use arrow_array::{ArrayRef, Int64Array};
use profile_model::Profile;
use profile_model::profile::StrId;
use tonic::Status;

use super::{StringColumn, ipc};
use crate::grpc::proto::query as pq;
use crate::grpc::reports::symbols::{Values, function_of, mapping_of};

/// What one line of a file sums: the file's string, and the line's values.
#[derive(Debug, Clone, Copy)]
struct LineSum {
    file: StrId,
    cumulative: i64,
    flat: i64,
}

/// Whether `file` (from the profile) is the reference's `wanted` file.
fn matches(file: &str, wanted: &str) -> bool {
    file == wanted
        || (!wanted.is_empty()
            && file
                .strip_suffix(wanted)
                .is_some_and(|head| head.ends_with('/')))
}

/// The SOURCE record of `profile` for `reference`, and the response's total.
pub(in crate::grpc::reports) fn source_record(
    profile: &Profile,
    values: Values<'_>,
    reference: &pq::SourceReference,
) -> Result<(Vec<u8>, i64), Status> {
    let mut lines: BTreeMap<(&str, i64), LineSum> = BTreeMap::new();
    for i in 0..profile.samples.len() {
        let value = values.value(i);
        for (n, &location) in profile.samples.stack(i).iter().enumerate() {
            let Some(mapping) = mapping_of(profile, location) else {
                continue;
            };
            let build_id =
                (profile.mappings.get(mapping as usize)).map_or("", |m| profile.str(m.build_id));
            if !reference.build_id.is_empty() && build_id != reference.build_id {
                continue;
            }
            let Some(loc) = profile.locations.get(location as usize) else {
                continue;
            };
            for (k, line) in loc.lines.iter().enumerate() {
                let Some(function) = function_of(profile, line.function)
                    .and_then(|f| profile.functions.get(f as usize))
                else {
                    continue;
                };
                let file = profile.str(function.filename);
                if !matches(file, &reference.filename) {
                    continue;
                }
                let sum = lines.entry((file, line.line)).or_insert(LineSum {
                    file: function.filename,
                    cumulative: 0,
                    flat: 0,
                });
                sum.cumulative += value;
                if n == 0 && k == 0 {
                    sum.flat += value;
                }
            }
        }
    }
    let mut files = StringColumn::default();
    lines.values().for_each(|sum| files.push(Some(sum.file)));
    let column = |values: Vec<i64>| -> ArrayRef { Arc::new(Int64Array::from(values)) };
    let record = ipc(vec![
        (
            "filename".into(),
            files.utf8::<Int32Type>(&profile.strings)?,
        ),
        (
            "line_number".into(),
            column(lines.keys().map(|k| k.1).collect()),
        ),
        (
            "cumulative".into(),
            column(lines.values().map(|s| s.cumulative).collect()),
        ),
        (
            "flat".into(),
            column(lines.values().map(|s| s.flat).collect()),
        ),
    ])?;
    Ok((record, values.total()))
}

#[cfg(test)]
mod tests {
    use super::matches;

    #[test]
    fn a_file_matches_by_its_whole_name_or_a_path_suffix_as_parca_matches() {
        assert!(matches("/src/app/main.go", "/src/app/main.go"));
        assert!(matches("/src/app/main.go", "app/main.go"));
        assert!(matches("/src/app/main.go", "main.go"));
        assert!(!matches("/src/app/xmain.go", "main.go"));
        assert!(!matches("/src/app/main.go", ""));
        assert!(matches("", ""));
    }
}
