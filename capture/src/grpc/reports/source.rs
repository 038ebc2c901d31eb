//! REPORT_TYPE_SOURCE, and the source reference any report may carry, as Parca's
//! `pkg/query/columnquery.go` (`Query`), `sources.go` and `sources_reader.go` treat
//! them.
//!
//! - Parca looks at `source_reference` first, whatever the report type: with
//!   `source_only` it answers an empty `Source` when sources were uploaded for the
//!   build id (or a debuginfod server has them), else NOT_FOUND ("no sources for this
//!   build id have been uploaded").
//! - Otherwise it reads the file from the build id's uploaded source archive (a tar,
//!   gzip or zstd; leading `/` or `./` ignored), or leaves the source empty when it is
//!   not there, and the SOURCE report is an Apache Arrow IPC record (LZ4) of
//!   filename, line number, cumulative and flat per line of the files whose names end
//!   in the reference's file name at a `/`, with the source text beside it.
//!
//! flint serve keeps no uploaded sources, and does not read files of the machine it
//! runs on for a remote client: `source_only` is always NOT_FOUND, and the SOURCE
//! report ([`super::arrow::source`]) comes with an empty source text, as Parca's does
//! when the file was not uploaded.

use tonic::Status;

use crate::grpc::proto::query as pq;

/// Parca's answer to a source reference with `source_only`, before any report is made:
/// flint has no uploaded sources.
pub(super) fn check_reference(reference: Option<&pq::SourceReference>) -> Result<(), Status> {
    match reference {
        Some(r) if r.source_only => Err(Status::not_found(format!(
            "no sources for build id {:?} have been uploaded: flint serve keeps no sources",
            r.build_id
        ))),
        _ => Ok(()),
    }
}
