//! The generated Parca API: messages, tonic clients and servers, in modules nested as
//! the proto packages are (generated code refers to `super::super::metastore::…`).

/// Parca's proto packages.
#[allow(missing_docs, clippy::all, clippy::unwrap_used, clippy::expect_used)]
pub mod parca {
    /// `parca.metastore`.
    pub mod metastore {
        /// `parca.metastore.v1alpha1`: locations, functions and mappings that reports embed.
        pub mod v1alpha1 {
            tonic::include_proto!("parca.metastore.v1alpha1");
        }
    }
    /// `parca.profilestore`.
    pub mod profilestore {
        /// `parca.profilestore.v1alpha1`: labels and the WriteRaw service.
        pub mod v1alpha1 {
            tonic::include_proto!("parca.profilestore.v1alpha1");
        }
    }
    /// `parca.query`.
    pub mod query {
        /// `parca.query.v1alpha1`: the QueryService.
        pub mod v1alpha1 {
            tonic::include_proto!("parca.query.v1alpha1");
        }
    }
}

pub use parca::metastore::v1alpha1 as metastore;
pub use parca::profilestore::v1alpha1 as profilestore;
pub use parca::query::v1alpha1 as query;
