//! flint's locations, functions and mappings as Parca's reports see them, and the
//! values each sample carries into them.
//!
//! Parca facts (`pkg/parcacol/arrow.go`, `ArrowToProfileConverter.Convert`):
//! - a mapping exists only when one of start, limit, offset, file or build id is set,
//!   and carries only those five (the `has_*` flags are not stored: false);
//! - a function exists only when one of name, system name, file name or start line
//!   is set;
//! - a location has an address, its mapping and its lines, innermost first; its
//!   `is_folded` is not stored (false);
//! - ids are opaque strings; here the 1-based pprof ids of flint's tables.
//! - every sample carries a value and a diff: the diff is 0 outside a diff query.

use profile_model::Profile;
use profile_model::profile::{FunctionId, LocationId, MappingId};

use crate::grpc::proto::metastore;

/// The value and diff columns of a report's profile.
#[derive(Debug, Clone, Copy)]
pub(super) struct Values<'a> {
    value: &'a [i64],
    diff: Option<&'a [i64]>,
}

impl<'a> Values<'a> {
    /// Column 0 as the values and, for a diff, column 1 as the differences.
    pub(super) fn of(profile: &'a Profile, diff: bool) -> Self {
        let column = |i: usize| profile.samples.values.get(i).map_or(&[][..], Vec::as_slice);
        Self {
            value: column(0),
            diff: diff.then(|| column(1)),
        }
    }

    /// The value of sample `i`.
    pub(super) fn value(&self, i: usize) -> i64 {
        self.value.get(i).copied().unwrap_or(0)
    }

    /// The difference of sample `i`, 0 outside a diff.
    pub(super) fn diff(&self, i: usize) -> i64 {
        self.diff.and_then(|d| d.get(i)).copied().unwrap_or(0)
    }

    /// The sum of the values, Parca's cumulative total.
    pub(super) fn total(&self) -> i64 {
        self.value.iter().fold(0, |sum, v| sum.wrapping_add(*v))
    }
}

/// The unit of a report's values: the first sample type's.
pub(super) fn unit(profile: &Profile) -> String {
    profile
        .sample_types
        .first()
        .map_or("", |t| profile.str(t.unit))
        .to_string()
}

/// A table index as Parca's opaque id.
pub(super) fn id(index: u32) -> String {
    (u64::from(index) + 1).to_string()
}

/// The mapping of `location` as Parca keeps it: none when absent or empty.
pub(super) fn mapping_of(profile: &Profile, location: LocationId) -> Option<MappingId> {
    let mapping = profile.locations.get(location as usize)?.mapping?;
    let m = profile.mappings.get(mapping as usize)?;
    let set = m.memory_start != 0
        || m.memory_limit != 0
        || m.file_offset != 0
        || m.filename != 0
        || m.build_id != 0;
    set.then_some(mapping)
}

/// `function` as Parca keeps it: none when all of its fields are empty.
pub(super) fn function_of(profile: &Profile, function: FunctionId) -> Option<FunctionId> {
    let f = profile.functions.get(function as usize)?;
    let set = !profile.str(f.name).is_empty()
        || !profile.str(f.system_name).is_empty()
        || !profile.str(f.filename).is_empty()
        || f.start_line != 0;
    set.then_some(function)
}

/// The name of `function`, as Parca groups functions.
pub(super) fn function_name(profile: &Profile, function: FunctionId) -> &str {
    profile
        .functions
        .get(function as usize)
        .map_or("", |f| profile.str(f.name))
}

/// A mapping with its id and values inline, as TOP and CALLGRAPH embed it.
pub(super) fn mapping_message(profile: &Profile, mapping: MappingId) -> metastore::Mapping {
    let m = profile
        .mappings
        .get(mapping as usize)
        .cloned()
        .unwrap_or_default();
    metastore::Mapping {
        id: id(mapping),
        start: m.memory_start,
        limit: m.memory_limit,
        offset: m.file_offset,
        file: profile.str(m.filename).to_string(),
        build_id: profile.str(m.build_id).to_string(),
        ..Default::default()
    }
}

/// A function with its id and strings inline, as TOP and CALLGRAPH embed it.
pub(super) fn function_message(profile: &Profile, function: FunctionId) -> metastore::Function {
    let f = profile
        .functions
        .get(function as usize)
        .copied()
        .unwrap_or_default();
    metastore::Function {
        id: id(function),
        start_line: f.start_line,
        name: profile.str(f.name).to_string(),
        system_name: profile.str(f.system_name).to_string(),
        filename: profile.str(f.filename).to_string(),
        ..Default::default()
    }
}

/// A location without its lines, as TOP and CALLGRAPH embed it.
pub(super) fn location_message(profile: &Profile, location: LocationId) -> metastore::Location {
    metastore::Location {
        id: id(location),
        address: profile
            .locations
            .get(location as usize)
            .map_or(0, |l| l.address),
        mapping_id: mapping_of(profile, location).map(id).unwrap_or_default(),
        ..Default::default()
    }
}
