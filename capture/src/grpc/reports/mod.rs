//! The reports a Query answers, made as Parca's `pkg/query/columnquery.go`
//! (`Query`, `RenderReport`) makes them.
//!
//! - An unknown report type is INVALID_ARGUMENT (Parca's request validation); a
//!   `source_reference` with `source_only` is answered before anything else
//!   ([`source`]); the deprecated FLAMEGRAPH_UNSPECIFIED (an old nested flame graph
//!   Parca still makes) is UNIMPLEMENTED here, with the report type to ask for instead.
//! - FLAMEGRAPH_ARROW, FLAMECHART, TABLE_ARROW and SOURCE are Apache Arrow records
//!   ([`arrow`]). A FLAMECHART is made of a merge's profiles each apart, in time order
//!   ([`flamechart`]); of a single profile or a diff it is INVALID_ARGUMENT.
//! - `node_trim_threshold` is a percentage; Parca takes any float, flint refuses one
//!   that is not in 0..=100 as INVALID_ARGUMENT.
//! - A diff is made of both sides, each queried in full: Parca scales the smaller side
//!   up to the bigger total (unless `absolute`) and subtracts; PPROF holds the
//!   differences, the other reports B's values beside them ([`diff_profile`]),
//!   CALLGRAPH B's values only.
//! - Totals: PPROF's is the sum of its values (flint's; Parca sends 0), TOP's,
//!   CALLGRAPH's, FLAMEGRAPH_TABLE's and the Arrow reports' the sum of (B's) values,
//!   PROFILE_METADATA's 0.
//!
//! Ids Parca derives from content are flint's table indexes here (see [`symbols`]).

#![allow(
    deprecated,
    reason = "Parca still fills the deprecated totals and answers the old type"
)]

mod arrow;
mod callgraph;
mod flamegraph_table;
mod metadata;
mod source;
mod symbols;
mod top;

use profile_model::Profile;
use tonic::Status;

use crate::grpc::proto::query::query_request::ReportType;
use crate::grpc::proto::query::{self as pq, query_response::Report};
use crate::grpc::report::{parca_difference, parca_value_and_difference};
use crate::source::SourceError;

/// A query's report, checked before the query runs.
#[derive(Debug, Clone, PartialEq)]
pub struct Requested {
    /// The report type.
    pub kind: ReportType,
    /// The flame graph's trim fraction (the threshold percentage / 100), 0 for none.
    trim: f32,
    /// The Arrow flame graph's grouping.
    group_by: arrow::flamegraph::GroupBy,
    /// The file (and build id) a SOURCE report is of.
    source: Option<pq::SourceReference>,
}

impl Requested {
    /// The report `request` asks for, or why it cannot be made (see the module
    /// documentation).
    pub fn of(request: &pq::QueryRequest) -> Result<Self, Status> {
        let kind = ReportType::try_from(request.report_type).map_err(|_| {
            Status::invalid_argument(format!("unknown report type {}", request.report_type))
        })?;
        source::check_reference(request.source_reference.as_ref())?;
        if let Some(instead) = unimplemented(kind) {
            return Err(instead);
        }
        let threshold = request.node_trim_threshold.unwrap_or(0.0);
        if !(0.0..=100.0).contains(&threshold) {
            return Err(Status::invalid_argument(format!(
                "node_trim_threshold must be a percentage from 0 to 100, not {threshold}"
            )));
        }
        if kind == ReportType::Source && request.source_reference.is_none() {
            return Err(Status::invalid_argument(
                "REPORT_TYPE_SOURCE needs a source_reference naming the file",
            ));
        }
        let group_by = request.group_by.as_ref().map_or(&[][..], |g| &g.fields);
        Ok(Self {
            kind,
            trim: threshold / 100.0,
            group_by: arrow::flamegraph::GroupBy::of(group_by),
            source: request.source_reference.clone(),
        })
    }
}

/// Why a report type is not made, or `None` when it is.
fn unimplemented(kind: ReportType) -> Option<Status> {
    match kind {
        ReportType::FlamegraphUnspecified => Some(Status::unimplemented(
            "REPORT_TYPE_FLAMEGRAPH_UNSPECIFIED (the deprecated nested flame graph) is not \
             supported by this server; ask for REPORT_TYPE_FLAMEGRAPH_TABLE",
        )),
        ReportType::Pprof
        | ReportType::Top
        | ReportType::Callgraph
        | ReportType::FlamegraphTable
        | ReportType::FlamegraphArrow
        | ReportType::Flamechart
        | ReportType::TableArrow
        | ReportType::Source
        | ReportType::ProfileMetadata => None,
    }
}

/// The profile a diff's report is made of, from the two sides each restricted to one
/// sample type: for PPROF the differences B − A ([`parca_difference`]), for
/// PROFILE_METADATA B (Parca's metadata is B's), for the others B's values in column 0
/// and the differences in column 1 ([`parca_value_and_difference`]).
pub fn diff_profile(
    kind: ReportType,
    a: &Profile,
    b: &Profile,
    absolute: bool,
) -> Result<Profile, SourceError> {
    match kind {
        ReportType::Pprof => parca_difference(a, b, absolute),
        ReportType::ProfileMetadata => Ok(b.clone()),
        _ => parca_value_and_difference(a, b, absolute),
    }
}

/// The report and the response's total, of `profile` (one sample type, or what
/// [`diff_profile`] made when `diff`); `labels` are the label names of the selected
/// series for PROFILE_METADATA, `None` where Parca gives no metadata (single mode).
pub fn report(
    requested: &Requested,
    profile: Profile,
    diff: bool,
    labels: Option<Vec<String>>,
) -> Result<(Report, i64), Status> {
    let values = symbols::Values::of(&profile, diff);
    Ok(match requested.kind {
        ReportType::Pprof => {
            let total = profile.total(0);
            (
                Report::Pprof(profile_model::codec::encode_gzip(&profile)),
                total,
            )
        }
        ReportType::Top => {
            let (top, total) = top::top(&profile, values);
            (Report::Top(top), total)
        }
        ReportType::Callgraph => {
            let graph = callgraph::callgraph(&profile, values);
            let total = graph.cumulative;
            (Report::Callgraph(graph), total)
        }
        ReportType::FlamegraphTable => {
            let graph = flamegraph_table::flamegraph_table(&profile, values, requested.trim);
            let total = graph.total;
            (Report::Flamegraph(graph), total)
        }
        ReportType::FlamegraphArrow => {
            let (graph, total) = arrow::flamegraph::flamegraph_arrow(
                &profile,
                values,
                requested.trim,
                &requested.group_by,
            )?;
            (Report::FlamegraphArrow(graph), total)
        }
        ReportType::TableArrow => {
            let (table, total) = arrow::table::table_arrow(&profile, values)?;
            (Report::TableArrow(table), total)
        }
        ReportType::Source => {
            let reference = requested.source.clone().unwrap_or_default();
            let (record, total) = arrow::source::source_record(&profile, values, &reference)?;
            let source = pq::Source {
                record,
                source: String::new(),
                unit: symbols::unit(&profile),
            };
            (Report::Source(source), total)
        }
        ReportType::ProfileMetadata => (
            Report::ProfileMetadata(metadata::metadata(&profile, labels)),
            0,
        ),
        other => return Err(unimplemented(other).unwrap_or_else(|| Status::internal("no report"))),
    })
}

/// The FLAMECHART report of `profiles` (a merge's, each of one time and one sample
/// type, in time order), and the response's total.
pub fn flamechart(requested: &Requested, profiles: &[Profile]) -> Result<(Report, i64), Status> {
    let (chart, total) =
        arrow::flamegraph::flamechart(profiles, requested.trim, &requested.group_by)?;
    Ok((Report::FlamegraphArrow(chart), total))
}

/// Small profiles for the reports' unit tests.
#[cfg(test)]
pub(crate) mod testing {
    use profile_model::Profile;
    use profile_model::profile::{Function, Line, Location, Mapping, Samples};

    /// A profile with one mapping (`/bin/x`), the locations `locations` (address, the
    /// function names of its lines, innermost first, at lines 10, 11, …) and the samples `stacks`
    /// (location indexes leaf first, value); one function per distinct name.
    pub(crate) fn profile(locations: &[(u64, &[&str])], stacks: &[(&[u32], i64)]) -> Profile {
        let mut p = Profile {
            strings: vec![String::new(), "/bin/x".into()],
            mappings: vec![Mapping {
                memory_limit: 1 << 20,
                filename: 1,
                ..Mapping::default()
            }],
            label_sets: vec![Vec::new()],
            ..Profile::default()
        };
        for (address, names) in locations {
            let lines = names
                .iter()
                .enumerate()
                .map(|(i, name)| Line {
                    function: function(&mut p, name),
                    line: 10 + i as i64,
                    column: 0,
                })
                .collect();
            p.locations.push(Location {
                mapping: Some(0),
                address: *address,
                lines,
                is_folded: false,
            });
        }
        let mut samples = Samples {
            stack_offsets: vec![0],
            values: vec![Vec::new()],
            ..Samples::default()
        };
        for (stack, value) in stacks {
            samples.stack_locations.extend_from_slice(stack);
            samples
                .stack_offsets
                .push(samples.stack_locations.len() as u32);
            samples.values[0].push(*value);
            samples.label_set.push(0);
        }
        p.samples = samples;
        p
    }

    fn function(p: &mut Profile, name: &str) -> u32 {
        let id = match p.strings.iter().position(|s| s == name) {
            Some(i) => i as u32,
            None => {
                p.strings.push(name.to_string());
                (p.strings.len() - 1) as u32
            }
        };
        if let Some(f) = p.functions.iter().position(|f| f.name == id) {
            return f as u32;
        }
        p.functions.push(Function {
            name: id,
            system_name: id,
            ..Function::default()
        });
        (p.functions.len() - 1) as u32
    }
}
