//! Generates Parca's query and profile store API (messages, tonic clients and
//! servers) from `proto/parca/**` with protox and tonic-prost-build, so building needs
//! no `protoc`. Timestamp and Duration come from protox's built-in well-known types
//! and map to `prost_types`.

fn main() -> Result<(), Box<dyn std::error::Error>> {
    println!("cargo:rerun-if-changed=proto");
    let fds = protox::compile(
        [
            "parca/metastore/v1alpha1/metastore.proto",
            "parca/profilestore/v1alpha1/profilestore.proto",
            "parca/query/v1alpha1/query.proto",
        ],
        ["proto"],
    )?;
    tonic_prost_build::configure()
        .build_client(true)
        .build_server(true)
        .compile_fds(fds)?;
    Ok(())
}
