//! `flint serve`: flint's store behind Parca's gRPC API, so that one machine's
//! profiles can be viewed (and written) from another.

use std::path::PathBuf;
use std::sync::Arc;

use capture::grpc::{ServerOptions, TlsIdentity, bind, serve};
use capture::store::{Store, StoreOptions};
use capture::time::parse_duration;
use capture::{ProfileSink, ProfileSource};
use clap::Args;

use super::symbols::SymbolArgs;
use super::{CliError, parse_size};
use crate::allocator;
use capture::memory::budget::mib;
use capture::memory::{BudgetOptions, MemoryBudget, limit};
use std::time::Duration;

/// Queries that may wait for memory at once; more are refused.
const MAX_WAITING_QUERIES: usize = 32;

/// How long a query waits for memory before it is refused.
const MAX_QUERY_WAIT: Duration = Duration::from_secs(60);

/// Arguments of `flint serve`.
#[derive(Debug, Args)]
pub struct ServeArgs {
    /// Directory of the store (created when missing).
    #[arg(long, value_name = "DIR")]
    store: PathBuf,
    /// Address to listen on; loopback unless told otherwise.
    #[arg(long, default_value = "127.0.0.1:7070", value_name = "ADDR:PORT")]
    listen: String,
    /// Require `authorization: Bearer TOKEN` on every request.
    #[arg(long, env = "FLINT_TOKEN", hide_env_values = true)]
    token: Option<String>,
    /// Serve HTTPS (TLS) with this PEM certificate chain (needs --tls-key).
    #[arg(long, value_name = "FILE", requires = "tls_key")]
    tls_cert: Option<PathBuf>,
    /// The PEM private key of --tls-cert.
    #[arg(long, value_name = "FILE", requires = "tls_cert")]
    tls_key: Option<PathBuf>,
    /// Drop profiles older than this (relative to the newest), e.g. 7d, 12h.
    #[arg(long, value_name = "DURATION")]
    retention: Option<String>,
    /// Drop the oldest profiles while the store is larger than this, e.g. 10GiB.
    #[arg(long, value_name = "SIZE", value_parser = parse_size)]
    max_size: Option<u64>,
    /// The most memory the server may hold, e.g. 512MiB: queries wait for memory or are
    /// refused (RESOURCE_EXHAUSTED), never the process killed. Default: the memory
    /// limit of the cgroup it runs in, if any.
    #[arg(long, value_name = "SIZE", value_parser = parse_size)]
    max_memory: Option<u64>,
    /// Names for profiles pushed with addresses only: queries are answered symbolized
    /// from these sources (debuginfod by build id, cached on disk).
    #[command(flatten)]
    symbols: SymbolArgs,
}

/// Runs `flint serve` until Ctrl-C (or SIGTERM), then finishes the requests in flight.
pub fn run(args: &ServeArgs) -> Result<(), CliError> {
    let retention_nanos = args
        .retention
        .as_deref()
        .map(parse_duration)
        .transpose()
        .map_err(|e| format!("--retention: {e}"))?;
    // Zero would empty the store it is asked to keep.
    if let (Some(0), Some(text)) = (retention_nanos, &args.retention) {
        return Err(format!(
            "--retention {text}: must be longer than zero (leave it out to keep every profile)"
        )
        .into());
    }
    if args.max_size == Some(0) {
        return Err("--max-size 0: must be more than zero (leave it out for no limit)".into());
    }
    let options = StoreOptions {
        retention_nanos,
        max_size_bytes: args.max_size,
        ..StoreOptions::default()
    };
    let tls = match (&args.tls_cert, &args.tls_key) {
        (Some(cert), Some(key)) => {
            let read = |p: &PathBuf| std::fs::read(p).map_err(|e| format!("{}: {e}", p.display()));
            Some(TlsIdentity {
                cert_pem: read(cert)?,
                key_pem: read(key)?,
            })
        }
        _ => None,
    };
    let scheme = if tls.is_some() { "https" } else { "grpc" };
    allocator::share_heaps();
    let store = Arc::new(Store::open(&args.store, options)?);
    for w in store.warnings() {
        eprintln!("warning: {w}");
    }
    let memory = budget(args.max_memory, &store)?;
    let token = args.token.clone().filter(|t| !t.is_empty());
    let symbols = Some(args.symbols.sources()).filter(|s| s.is_configured());
    let runtime = super::remote::runtime()?;
    runtime.block_on(async {
        let listener = bind(&args.listen).await?;
        let addr = listener
            .local_addr()
            .map_or_else(|_| args.listen.clone(), |a| a.to_string());
        let stats = store.stats();
        eprintln!(
            "flint serve: listening on {scheme}://{addr} (flint {}; store {}: {} profiles, {} bytes; {}{}{})",
            crate::version::VERSION,
            args.store.display(),
            stats.profiles,
            stats.size_bytes,
            memory.as_ref().map_or_else(
                || "no memory budget".to_string(),
                |m| format!("memory budget {}", mib(m.limit_bytes()))
            ),
            if token.is_some() {
                "; bearer token required"
            } else {
                ""
            },
            if symbols.is_some() {
                "; symbolizing"
            } else {
                ""
            }
        );
        let source: Arc<dyn ProfileSource> = store.clone();
        let sink: Arc<dyn ProfileSink> = store.clone();
        serve(
            listener,
            source,
            Some(sink),
            ServerOptions {
                bearer_token: token,
                tls,
                memory,
                symbols: symbols.map(Arc::new),
                version: Some(crate::version::VERSION.to_string()),
                agent_seen: Some(Arc::new(|agent: &str| {
                    eprintln!("flint serve: first profile from agent {agent}");
                })),
                ..ServerOptions::default()
            },
            shutdown_signal(),
        )
        .await
    })?;
    eprintln!("flint serve: stopped");
    Ok(())
}

/// The server's memory budget: `--max-memory`, else the cgroup's limit, else none.
/// What is resident now (the store's index as opened) is set aside; the index's growth
/// is counted as it grows.
fn budget(
    max_memory: Option<u64>,
    store: &Arc<Store>,
) -> Result<Option<Arc<MemoryBudget>>, CliError> {
    let (limit_bytes, source) = match (max_memory, limit::cgroup_limit()) {
        (Some(0), _) => {
            return Err(
                "--max-memory 0: must be more than zero (leave it out for the cgroup's limit)"
                    .into(),
            );
        }
        (Some(bytes), _) => (bytes, "--max-memory".to_string()),
        (None, Some(bytes)) => (bytes, "the cgroup's memory limit".to_string()),
        (None, None) => return Ok(None),
    };
    let opened = store.index_bytes();
    let index = store.clone();
    let options = BudgetOptions {
        limit_bytes,
        source,
        resident_bytes: limit::resident_bytes().unwrap_or(0),
        max_waiting: MAX_WAITING_QUERIES,
        max_wait: MAX_QUERY_WAIT,
    };
    let grown = Box::new(move || index.index_bytes().saturating_sub(opened));
    MemoryBudget::new(options, grown)
        .map(Some)
        .map_err(|r| format!("--max-memory: {r}").into())
}

/// Completes on Ctrl-C or SIGTERM.
async fn shutdown_signal() {
    let ctrl_c = tokio::signal::ctrl_c();
    #[cfg(unix)]
    {
        match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
            Ok(mut term) => {
                tokio::select! {
                    _ = ctrl_c => {}
                    _ = term.recv() => {}
                }
            }
            Err(_) => {
                let _ = ctrl_c.await;
            }
        }
    }
    #[cfg(not(unix))]
    {
        let _ = ctrl_c.await;
    }
}
