//! REPORT_TYPE_PROFILE_METADATA as Parca's `pkg/query/columnquery.go` (`Query`,
//! `getMappingFilesAndLabels`) and `pkg/parcacol/querier.go`
//! (`GetProfileMetadataMappings`, `GetProfileMetadataLabels`) answer it.
//!
//! - Only in merge mode, and in diff mode for selection B's merge: the sorted,
//!   distinct mapping files of every location on the selected stacks (`""` for a
//!   location without one), and the sorted names of the labels that have a value on
//!   them. In single mode Parca answers no metadata: an empty message here, as for a
//!   diff whose B is a single profile (where Parca fails on the missing merge).
//! - It is answered before any filter, and its totals are 0.

use std::collections::BTreeSet;

use profile_model::Profile;

use crate::grpc::proto::query as pq;

/// The metadata of `profile`, whose series have the label names `labels`; `None`
/// where Parca answers none (single mode).
pub(super) fn metadata(profile: &Profile, labels: Option<Vec<String>>) -> pq::ProfileMetadata {
    let Some(labels) = labels else {
        return pq::ProfileMetadata::default();
    };
    let files: BTreeSet<&str> = profile
        .samples
        .stack_locations
        .iter()
        .map(|&l| {
            let mapping = profile.locations.get(l as usize).and_then(|l| l.mapping);
            let mapping = mapping.and_then(|m| profile.mappings.get(m as usize));
            mapping.map_or("", |m| profile.str(m.filename))
        })
        .collect();
    pq::ProfileMetadata {
        mapping_files: files.into_iter().map(str::to_string).collect(),
        labels,
    }
}
