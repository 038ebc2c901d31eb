//! `flint serve`: any [`ProfileSource`] as Parca's QueryService and, when given a
//! [`ProfileSink`], Parca's ProfileStoreService.WriteRaw, on one cleartext HTTP/2 (h2c)
//! port, answering as Parca does (reference: Parca's `columnquery.go` and
//! `normalizer.go`).

use std::future::Future;
use std::sync::Arc;

use tokio::net::TcpListener;
use tokio_stream::wrappers::TcpListenerStream;
use tonic::{Request, Response, Status};

use crate::grpc::convert::{
    duration_nanos, label_set, labels_of_written, nanos_of, profile_type_message, range_of,
    required_range, status_of, timestamp,
};
use crate::grpc::proto::profilestore::profile_store_service_server::{
    ProfileStoreService, ProfileStoreServiceServer,
};
use crate::grpc::proto::profilestore::{WriteRawRequest, WriteRawResponse};
use crate::grpc::proto::query::query_request::{Mode, Options, ReportType};
use crate::grpc::proto::query::query_service_server::{QueryService, QueryServiceServer};
use crate::grpc::proto::query::{self as pq, profile_diff_selection};
use crate::grpc::query_options::QueryOptions;
use crate::grpc::report::only_type;
use crate::grpc::reports::{Requested, diff_profile, flamechart, report};
use crate::memory::{self, Lease, MemoryBudget, Refused};
use crate::selector::{ProfileType, Selector};
use crate::source::{
    Labels, ProfileSink, ProfileSource, Progress, QueryTime, SourceError, TimeRange,
};
use crate::symbolize::{Repeated, SymbolSources};
use profile_model::codec::{self, DEFAULT_MAX_DECOMPRESSED_BYTES};

/// Parca's cap on one gRPC message, each way: 32 MiB.
pub const DEFAULT_MAX_MESSAGE_BYTES: usize = 32 << 20;

/// The response header in which a server names its version (`flint serve`'s
/// `0.2.0 (abc1234 2026-12-10)`), on every answer.
pub const VERSION_HEADER: &str = "flint-version";

/// Told the `user-agent` of each client whose WriteRaw is the first with that agent.
pub type AgentSeen = Arc<dyn Fn(&str) + Send + Sync>;

/// How the server runs. Its `Debug` output leaves out the token.
#[derive(Clone)]
pub struct ServerOptions {
    /// When set, every request must carry `authorization: Bearer <token>`; others get
    /// Unauthenticated.
    pub bearer_token: Option<String>,
    /// Largest request accepted and largest answer sent, in bytes.
    pub max_message_bytes: usize,
    /// Serve TLS (HTTPS) with this certificate chain and private key, both PEM;
    /// cleartext HTTP/2 when `None`.
    pub tls: Option<TlsIdentity>,
    /// The memory queries and pushes may hold; no limit when `None`.
    pub memory: Option<Arc<MemoryBudget>>,
    /// Where names are found for profiles pushed with addresses only (binaries,
    /// debuginfod); queries answer them symbolized. None: answered as stored.
    pub symbols: Option<Arc<SymbolSources>>,
    /// Sent in the [`VERSION_HEADER`] of every answer; no header when `None`.
    pub version: Option<String>,
    /// Called once per distinct `user-agent` that writes (agents name their version
    /// there), for at most [`MAX_AGENTS_TOLD`] of them.
    pub agent_seen: Option<AgentSeen>,
}

/// How many distinct writing agents [`ServerOptions::agent_seen`] is told of.
pub const MAX_AGENTS_TOLD: usize = 64;

/// A server's TLS certificate chain and private key, PEM-encoded.
#[derive(Clone)]
pub struct TlsIdentity {
    /// The certificate chain, leaf first.
    pub cert_pem: Vec<u8>,
    /// The private key.
    pub key_pem: Vec<u8>,
}

impl std::fmt::Debug for ServerOptions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ServerOptions")
            .field("bearer_token", &self.bearer_token.as_ref().map(|_| "<set>"))
            .field("max_message_bytes", &self.max_message_bytes)
            .field("tls", &self.tls.is_some())
            .field("memory", &self.memory)
            .field("symbols", &self.symbols)
            .field("version", &self.version)
            .field("agent_seen", &self.agent_seen.is_some())
            .finish()
    }
}

impl Default for ServerOptions {
    fn default() -> Self {
        Self {
            bearer_token: None,
            max_message_bytes: DEFAULT_MAX_MESSAGE_BYTES,
            tls: None,
            memory: None,
            symbols: None,
            version: None,
            agent_seen: None,
        }
    }
}

/// Why a server could not listen or stopped serving.
#[derive(Debug, thiserror::Error)]
pub enum ServeError {
    /// The address could not be bound.
    #[error("cannot listen on {address}: {source}")]
    Bind {
        /// The address asked for.
        address: String,
        /// What the system said.
        source: std::io::Error,
    },
    /// The TLS certificate or key was refused.
    #[error("TLS certificate or key not usable: {0}")]
    Tls(tonic::transport::Error),
    /// The server stopped on an error.
    #[error("gRPC server failed: {0}")]
    Failed(tonic::transport::Error),
}

/// Binds a TCP listener for [`serve`], e.g. `"0.0.0.0:7070"` or `"127.0.0.1:0"`; its
/// `local_addr()` tells the port that was chosen.
pub async fn bind(address: &str) -> Result<TcpListener, ServeError> {
    TcpListener::bind(address)
        .await
        .map_err(|source| ServeError::Bind {
            address: address.to_string(),
            source,
        })
}

/// Serves `source` (and `sink`, for WriteRaw; without one WriteRaw is Unimplemented)
/// on `listener` over h2c until `shutdown` completes, then finishes the requests in
/// flight and returns.
pub async fn serve(
    listener: TcpListener,
    source: Arc<dyn ProfileSource>,
    sink: Option<Arc<dyn ProfileSink>>,
    options: ServerOptions,
    shutdown: impl Future<Output = ()> + Send,
) -> Result<(), ServeError> {
    let auth = Auth::new(options.bearer_token.as_deref());
    let query = QueryServiceServer::new(QueryServer {
        source,
        auth: auth.clone(),
        memory: options.memory.clone(),
        symbols: options
            .symbols
            .as_deref()
            .map(|s| Arc::new(Repeated::new(s.clone()))),
    })
    .max_decoding_message_size(options.max_message_bytes)
    .max_encoding_message_size(options.max_message_bytes);
    let store = ProfileStoreServiceServer::new(StoreServer {
        sink,
        auth,
        memory: options.memory.clone(),
        agents: Agents {
            told: options.agent_seen.clone(),
            ..Agents::default()
        },
    })
    .max_decoding_message_size(options.max_message_bytes)
    .max_encoding_message_size(options.max_message_bytes);
    let mut builder = tonic::transport::Server::builder();
    if let Some(id) = &options.tls {
        let identity = tonic::transport::Identity::from_pem(&id.cert_pem, &id.key_pem);
        builder = builder
            .tls_config(tonic::transport::ServerTlsConfig::new().identity(identity))
            .map_err(ServeError::Tls)?;
    }
    let version = options
        .version
        .as_deref()
        .and_then(|v| tonic::codegen::http::HeaderValue::from_str(v).ok());
    builder
        .layer(tower::util::MapResponseLayer::new(
            move |response: tonic::codegen::http::Response<tonic::body::Body>| {
                with_version(too_large_is_exhausted(response), version.as_ref())
            },
        ))
        .add_service(query)
        .add_service(store)
        .serve_with_incoming_shutdown(TcpListenerStream::new(listener), shutdown)
        .await
        .map_err(ServeError::Failed)
}

/// A request over the size limit answered RESOURCE_EXHAUSTED, as gRPC servers answer
/// it, where tonic's decoder says OUT_OF_RANGE ("decoded message length too large").
fn too_large_is_exhausted<B>(
    mut response: tonic::codegen::http::Response<B>,
) -> tonic::codegen::http::Response<B> {
    let headers = response.headers_mut();
    let too_large = headers.get("grpc-status").is_some_and(|s| s == "11")
        && headers.get("grpc-message").is_some_and(|m| {
            m.as_bytes()
                .starts_with(b"Error,%20decoded%20message%20length%20too%20large")
        });
    if too_large {
        let code = (tonic::Code::ResourceExhausted as i32).to_string();
        if let Ok(value) = tonic::codegen::http::HeaderValue::from_str(&code) {
            headers.insert("grpc-status", value);
        }
    }
    response
}

/// `response` with the server's version in its [`VERSION_HEADER`], when it has one.
fn with_version<B>(
    mut response: tonic::codegen::http::Response<B>,
    version: Option<&tonic::codegen::http::HeaderValue>,
) -> tonic::codegen::http::Response<B> {
    if let Some(version) = version {
        response
            .headers_mut()
            .insert(VERSION_HEADER, version.clone());
    }
    response
}

/// The bearer token check.
#[derive(Clone)]
struct Auth {
    /// The exact `authorization` header value expected.
    expected: Option<Arc<str>>,
}

impl Auth {
    fn new(token: Option<&str>) -> Self {
        Self {
            expected: token.map(|t| Arc::from(format!("Bearer {t}"))),
        }
    }

    fn check<T>(&self, request: &Request<T>) -> Result<(), Status> {
        let Some(expected) = &self.expected else {
            return Ok(());
        };
        let given = request
            .metadata()
            .get("authorization")
            .map(|v| v.as_bytes())
            .unwrap_or_default();
        if equal_in_constant_time(given, expected.as_bytes()) {
            Ok(())
        } else if given.is_empty() {
            Err(Status::unauthenticated(
                "this server needs a bearer token (authorization: Bearer <token>)",
            ))
        } else {
            Err(Status::unauthenticated("wrong bearer token"))
        }
    }
}

/// Compares without stopping at the first difference, so timing tells nothing.
fn equal_in_constant_time(a: &[u8], b: &[u8]) -> bool {
    a.len() == b.len() && a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

fn invalid(message: impl Into<String>) -> Status {
    Status::invalid_argument(message.into())
}

fn parse_selector(text: &str) -> Result<Selector, Status> {
    if text.trim().is_empty() {
        return Err(invalid("query must contain a profile-type selection"));
    }
    Selector::parse(text).map_err(|e| invalid(format!("invalid query {text:?}: {e}")))
}

/// The selectors of Labels/Values: each `match` (a bare `{…}` takes `profile_type`), or
/// `profile_type` alone, or (neither) every profile type with data in the range.
async fn selectors(
    source: &dyn ProfileSource,
    matches: &[String],
    profile_type: Option<&str>,
    range: TimeRange,
) -> Result<Vec<Selector>, Status> {
    let profile_type = profile_type
        .filter(|t| !t.is_empty())
        .map(|t| ProfileType::parse(t).map_err(|e| invalid(format!("invalid profile_type: {e}"))))
        .transpose()?;
    if !matches.is_empty() {
        return matches
            .iter()
            .map(|m| match (&profile_type, m.trim_start().starts_with('{')) {
                (Some(t), true) => parse_selector(&format!("{t}{}", m.trim())),
                _ => parse_selector(m),
            })
            .collect();
    }
    let types = match profile_type {
        Some(t) => vec![t],
        None => source.profile_types(range).await.map_err(status_of)?,
    };
    Ok(types
        .into_iter()
        .map(|profile_type| Selector {
            profile_type,
            matchers: Vec::new(),
        })
        .collect())
}

/// Serves a [`ProfileSource`] as Parca's QueryService.
struct QueryServer {
    source: Arc<dyn ProfileSource>,
    auth: Auth,
    memory: Option<Arc<MemoryBudget>>,
    symbols: Option<Arc<Repeated>>,
}

/// The memory one request may hold, when the server has a budget.
type Within = Option<Arc<Lease>>;

impl QueryServer {
    /// Admits a query within the memory budget, if any: it may wait in the queue.
    /// `first` and `alone` as [`MemoryBudget::admit_query`] takes them.
    async fn admit(&self, first: u64, alone: bool) -> Result<Within, Status> {
        match &self.memory {
            Some(budget) => Ok(Some(Arc::new(
                budget.admit_query(first, alone).await.map_err(exhausted)?,
            ))),
            None => Ok(None),
        }
    }

    /// The memory a query's selections are estimated to hold
    /// ([`ProfileSource::estimate_bytes`]), 0 where the source cannot tell.
    fn estimate(&self, mode: Mode, request: &pq::QueryRequest) -> u64 {
        let sides = selections(mode, &request.options).unwrap_or_default();
        (sides.into_iter())
            .filter_map(|(query, time)| {
                let selector = parse_selector(query).ok()?;
                self.source.estimate_bytes(&selector, time)
            })
            .sum()
    }

    /// One side of a query: the selector and which profile(s).
    async fn profile(
        &self,
        query: &str,
        time: QueryTime,
        lease: &Within,
    ) -> Result<(profile_model::Profile, Selector), Status> {
        let selector = parse_selector(query)?;
        let (source, asked) = (self.source.clone(), selector.clone());
        let handle = tokio::runtime::Handle::current();
        let (progress, symbols) = (progress_within(lease), self.symbols.clone());
        let profile = within(lease, move || {
            let profile = handle.block_on(source.query(asked.clone(), time, progress))?;
            served(profile, &asked, symbols.as_deref())
        })
        .await?
        .map_err(status_of)?;
        Ok((profile, selector))
    }

    /// The label names of a PROFILE_METADATA request's merge selection (B's in a diff),
    /// or `None` where Parca gives no metadata (a single profile).
    async fn metadata_labels(
        &self,
        request: &pq::QueryRequest,
    ) -> Result<Option<Vec<String>>, Status> {
        let merge = match &request.options {
            Some(Options::Merge(m)) => m,
            Some(Options::Diff(d)) => match d.b.as_ref().and_then(|b| b.options.as_ref()) {
                Some(profile_diff_selection::Options::Merge(m)) => m,
                _ => return Ok(None),
            },
            _ => return Ok(None),
        };
        let selector = parse_selector(&merge.query)?;
        let range = required_range("merge profile", merge.start.as_ref(), merge.end.as_ref())?;
        let labels = self.source.labels(selector, range).await;
        labels.map(Some).map_err(status_of)
    }
}

/// RESOURCE_EXHAUSTED, for memory the budget refused.
fn exhausted(refused: Refused) -> Status {
    Status::resource_exhausted(refused.0)
}

/// [`off_runtime`], charging the work's memory to `lease` and checking it after.
async fn within<T: Send + 'static>(
    lease: &Within,
    work: impl FnOnce() -> T + Send + 'static,
) -> Result<T, Status> {
    let account = lease.as_ref().map(|l| l.account());
    let done = off_runtime(move || {
        let _charge = memory::charge_to_any(account);
        work()
    })
    .await?;
    if let Some(lease) = lease {
        lease.checkpoint().map_err(exhausted)?;
    }
    Ok(done)
}

/// Runs CPU-heavy work (a local source's merge, a diff, encoding the answer) on tokio's
/// blocking threads, so that the runtime's workers keep answering other requests.
async fn off_runtime<T: Send + 'static>(
    work: impl FnOnce() -> T + Send + 'static,
) -> Result<T, Status> {
    tokio::task::spawn_blocking(work)
        .await
        .map_err(|e| Status::internal(format!("the query failed: {e}")))
}

/// The response with `requested`'s report of `profile` (see [`report`]), made within
/// `lease`; `filtered` is the value the query's stack filters removed.
async fn respond(
    requested: Requested,
    profile: profile_model::Profile,
    diff: bool,
    labels: Option<Vec<String>>,
    filtered: i64,
    lease: &Within,
) -> Result<Response<pq::QueryResponse>, Status> {
    let (report, total) =
        within(lease, move || report(&requested, profile, diff, labels)).await??;
    Ok(Response::new(pq::QueryResponse {
        report: Some(report),
        total,
        filtered,
    }))
}

fn single_time(single: &pq::SingleProfile) -> Result<QueryTime, Status> {
    let time = single
        .time
        .as_ref()
        .ok_or_else(|| invalid("single profile: time is required"))?;
    Ok(QueryTime::Single(nanos_of(time)))
}

fn merge_time(merge: &pq::MergeProfile) -> Result<QueryTime, Status> {
    required_range("merge profile", merge.start.as_ref(), merge.end.as_ref()).map(QueryTime::Merge)
}

/// The query and time of one side of a diff.
fn diff_side<'a>(
    side: &'a Option<pq::ProfileDiffSelection>,
    name: &str,
) -> Result<(&'a str, QueryTime), Status> {
    let side = side
        .as_ref()
        .ok_or_else(|| invalid(format!("diff: selection {name} is required")))?;
    use profile_diff_selection::{Mode as SideMode, Options as SideOptions};
    match (SideMode::try_from(side.mode), &side.options) {
        (Ok(SideMode::SingleUnspecified), Some(SideOptions::Single(s))) => {
            Ok((&s.query, single_time(s)?))
        }
        (Ok(SideMode::Merge), Some(SideOptions::Merge(m))) => Ok((&m.query, merge_time(m)?)),
        (Ok(mode), _) => Err(invalid(format!(
            "diff: selection {name} has mode {} but not its options",
            mode.as_str_name()
        ))),
        (Err(_), _) => Err(invalid(format!(
            "diff: selection {name} has unknown mode {}",
            side.mode
        ))),
    }
}

impl QueryServer {
    /// The report of a checked query, its memory within `lease`.
    async fn answer(
        &self,
        request: &pq::QueryRequest,
        mode: Mode,
        requested: &Requested,
        options: &QueryOptions,
        lease: &Within,
    ) -> Result<Response<pq::QueryResponse>, Status> {
        if requested.kind == ReportType::Flamechart {
            return self.chart(request, mode, requested, options, lease).await;
        }
        // A diff's `filtered` is B's, as Parca's: B's value its stack filters remove.
        let mut filtered_b = None;
        let profile = match selections(mode, &request.options)?[..] {
            [(query, time)] => self.profile(query, time, lease).await?.0,
            [(query_a, time_a), (query_b, time_b)] => {
                let (a, _) = self.profile(query_a, time_a, lease).await?;
                let (b, _) = self.profile(query_b, time_b, lease).await?;
                let absolute = match &request.options {
                    Some(Options::Diff(d)) => d.absolute.unwrap_or(false),
                    _ => false,
                };
                let (of_b, kind) = (options.clone(), requested.kind);
                let (difference, removed) = within(lease, move || {
                    (diff_profile(kind, &a, &b, absolute), of_b.removed_value(&b))
                })
                .await?;
                filtered_b = Some(removed);
                difference.map_err(status_of)?
            }
            _ => return Err(mismatched(mode)),
        };
        let diff = mode == Mode::Diff;
        let requested = requested.clone();
        if requested.kind == ReportType::ProfileMetadata {
            // As Parca: the metadata of the selection, before any filter.
            let labels = self.metadata_labels(request).await?;
            return respond(requested, profile, diff, labels, 0, lease).await;
        }
        let options = options.clone();
        let shaped = within(lease, move || options.apply(profile)).await?;
        let filtered = filtered_b.unwrap_or(shaped.filtered);
        respond(requested, shaped.profile, diff, None, filtered, lease).await
    }
}

impl QueryServer {
    /// A FLAMECHART: the selected profiles of a merge's range each apart, in time
    /// order, each shaped by the query's options.
    async fn chart(
        &self,
        request: &pq::QueryRequest,
        mode: Mode,
        requested: &Requested,
        options: &QueryOptions,
        lease: &Within,
    ) -> Result<Response<pq::QueryResponse>, Status> {
        let Some(Options::Merge(m)) = request.options.as_ref().filter(|_| mode == Mode::Merge)
        else {
            return Err(invalid(
                "REPORT_TYPE_FLAMECHART is made of a merge (MODE_MERGE): the profiles of its \
                 range, each at its time",
            ));
        };
        let range = required_range("merge profile", m.start.as_ref(), m.end.as_ref())?;
        let selector = parse_selector(&m.query)?;
        let (source, handle) = (self.source.clone(), tokio::runtime::Handle::current());
        let (progress, symbols) = (progress_within(lease), self.symbols.clone());
        let (options, requested) = (options.clone(), requested.clone());
        let (shaped, filtered) = within(lease, move || {
            let each = handle.block_on(source.query_each(selector.clone(), range, progress))?;
            let mut shaped = Vec::with_capacity(each.len());
            let mut filtered = 0;
            for profile in each {
                let one = options.apply(served(profile, &selector, symbols.as_deref())?);
                filtered += one.filtered;
                shaped.push(one.profile);
            }
            Ok::<_, SourceError>((shaped, filtered))
        })
        .await?
        .map_err(status_of)?;
        let (report, total) = within(lease, move || flamechart(&requested, &shaped)).await??;
        Ok(Response::new(pq::QueryResponse {
            report: Some(report),
            total,
            filtered,
        }))
    }
}

/// A query's progress, its memory charged to `lease` if any.
fn progress_within(lease: &Within) -> Progress {
    match lease {
        Some(lease) => Progress::default().within(lease.clone()),
        None => Progress::default(),
    }
}

/// `profile` as the server answers it: `selector`'s type alone, its addresses named
/// where `symbols` can (each warning printed).
fn served(
    profile: profile_model::Profile,
    selector: &Selector,
    symbols: Option<&Repeated>,
) -> Result<profile_model::Profile, SourceError> {
    let mut profile = only_type(profile, &selector.profile_type)?;
    for w in symbols.iter().flat_map(|s| s.name(&mut profile)) {
        eprintln!("flint serve: warning: symbols: {w}");
    }
    Ok(profile)
}

/// What a query selects: one (query, time) for a single profile or a merge, A's and
/// B's for a diff.
fn selections(mode: Mode, options: &Option<Options>) -> Result<Vec<(&str, QueryTime)>, Status> {
    Ok(match (mode, options) {
        (Mode::SingleUnspecified, Some(Options::Single(s))) => vec![(&s.query, single_time(s)?)],
        (Mode::Merge, Some(Options::Merge(m))) => vec![(&m.query, merge_time(m)?)],
        (Mode::Diff, Some(Options::Diff(d))) => vec![diff_side(&d.a, "a")?, diff_side(&d.b, "b")?],
        (mode, _) => return Err(mismatched(mode)),
    })
}

/// Whether a query's options are those of its mode.
fn options_match(mode: Mode, options: &Option<Options>) -> bool {
    matches!(
        (mode, options),
        (Mode::SingleUnspecified, Some(Options::Single(_)))
            | (Mode::Merge, Some(Options::Merge(_)))
            | (Mode::Diff, Some(Options::Diff(_)))
    )
}

/// The refusal of a query whose options are not those of its mode.
fn mismatched(mode: Mode) -> Status {
    invalid(format!(
        "query mode {} needs its matching options ({})",
        mode.as_str_name(),
        match mode {
            Mode::SingleUnspecified => "single",
            Mode::Merge => "merge",
            Mode::Diff => "diff",
        }
    ))
}

#[tonic::async_trait]
impl QueryService for QueryServer {
    async fn query_range(
        &self,
        request: Request<pq::QueryRangeRequest>,
    ) -> Result<Response<pq::QueryRangeResponse>, Status> {
        self.auth.check(&request)?;
        let request = request.into_inner();
        let range = required_range("query range", request.start.as_ref(), request.end.as_ref())?;
        let selector = parse_selector(&request.query)?;
        let step_nanos = request.step.as_ref().map_or(0, duration_nanos);
        if step_nanos <= 0 {
            return Err(invalid("query range: step must be positive"));
        }
        let profile_type = selector.profile_type.clone();
        let source = self.source.clone();
        let handle = tokio::runtime::Handle::current();
        // As Parca: a level's series (a type that is no delta) are never summed.
        let sum_by = Some(request.sum_by).filter(|_| profile_type.delta);
        let series = off_runtime(move || {
            handle.block_on(source.query_range(selector, range, step_nanos, sum_by))
        })
        .await?
        .map_err(status_of)?;
        let value_type = |kind: &str, unit: &str| pq::ValueType {
            r#type: kind.to_string(),
            unit: unit.to_string(),
        };
        let (range_kind, range_unit) = profile_type.range_unit();
        let series = series
            .into_iter()
            .map(|s| pq::MetricsSeries {
                labelset: Some(label_set(&s.labels)),
                samples: s
                    .points
                    .iter()
                    .map(|p| pq::MetricsSample {
                        timestamp: Some(timestamp(p.time_nanos)),
                        value: p.value,
                        // Parca's sample has no "none": 0 for no rate, which
                        // `RemoteSource` reads back as none; a level's "rate" is its
                        // value, as Parca gives it.
                        value_per_second: match profile_type.delta {
                            true => p.value_per_second.unwrap_or(0.0),
                            false => p.value as f64,
                        },
                        duration: p.duration_nanos,
                        count: i32::try_from(p.count).unwrap_or(i32::MAX),
                    })
                    .collect(),
                period_type: Some(value_type(
                    &profile_type.period_type,
                    &profile_type.period_unit,
                )),
                // A CPU sample's count comes as CPU time (see `ranged_by_period`).
                sample_type: Some(value_type(range_kind, range_unit)),
            })
            .collect();
        Ok(Response::new(pq::QueryRangeResponse { series }))
    }

    async fn query(
        &self,
        request: Request<pq::QueryRequest>,
    ) -> Result<Response<pq::QueryResponse>, Status> {
        self.auth.check(&request)?;
        let request = request.into_inner();
        let requested = Requested::of(&request)?;
        let mode = Mode::try_from(request.mode)
            .map_err(|_| invalid(format!("unknown query mode {}", request.mode)))?;
        if !options_match(mode, &request.options) {
            return Err(mismatched(mode));
        }
        let options = QueryOptions::of_request(&request)?;
        // Admitted against what its profiles are estimated to hold; a query refused
        // memory that others held is tried again alone, so that queries queue up
        // rather than fail.
        let lease = self.admit(self.estimate(mode, &request), false).await?;
        let answered = self
            .answer(&request, mode, &requested, &options, &lease)
            .await;
        let wanted = lease.as_ref().and_then(|l| l.wanted());
        match (answered, wanted) {
            (Err(status), Some(wanted)) if status.code() == tonic::Code::ResourceExhausted => {
                drop(lease);
                let lease = self.admit(wanted, true).await?;
                self.answer(&request, mode, &requested, &options, &lease)
                    .await
            }
            (answered, _) => answered,
        }
    }

    async fn series(
        &self,
        request: Request<pq::SeriesRequest>,
    ) -> Result<Response<pq::SeriesResponse>, Status> {
        self.auth.check(&request)?;
        Err(Status::unimplemented(
            "Series is not implemented (as in Parca)",
        ))
    }

    async fn profile_types(
        &self,
        request: Request<pq::ProfileTypesRequest>,
    ) -> Result<Response<pq::ProfileTypesResponse>, Status> {
        self.auth.check(&request)?;
        let request = request.into_inner();
        let range = range_of(request.start.as_ref(), request.end.as_ref());
        let types = self.source.profile_types(range).await.map_err(status_of)?;
        Ok(Response::new(pq::ProfileTypesResponse {
            types: types.iter().map(profile_type_message).collect(),
        }))
    }

    async fn labels(
        &self,
        request: Request<pq::LabelsRequest>,
    ) -> Result<Response<pq::LabelsResponse>, Status> {
        self.auth.check(&request)?;
        let request = request.into_inner();
        let range = range_of(request.start.as_ref(), request.end.as_ref());
        let selectors = selectors(
            self.source.as_ref(),
            &request.r#match,
            request.profile_type.as_deref(),
            range,
        )
        .await?;
        let names = union(selectors, |s| self.source.labels(s, range)).await?;
        Ok(Response::new(pq::LabelsResponse {
            label_names: names,
            warnings: Vec::new(),
        }))
    }

    async fn values(
        &self,
        request: Request<pq::ValuesRequest>,
    ) -> Result<Response<pq::ValuesResponse>, Status> {
        self.auth.check(&request)?;
        let request = request.into_inner();
        if request.label_name.is_empty() {
            return Err(invalid("values: label_name is required"));
        }
        let range = range_of(request.start.as_ref(), request.end.as_ref());
        let selectors = selectors(
            self.source.as_ref(),
            &request.r#match,
            request.profile_type.as_deref(),
            range,
        )
        .await?;
        let name = &request.label_name;
        let values = union(selectors, |s| self.source.values(name.clone(), s, range)).await?;
        Ok(Response::new(pq::ValuesResponse {
            label_values: values,
            warnings: Vec::new(),
        }))
    }
}

/// The sorted, distinct union of `answer(selector)` over every selector (label names
/// or values asked of each profile type a request covers).
async fn union<F, Fut>(selectors: Vec<Selector>, answer: F) -> Result<Vec<String>, Status>
where
    F: Fn(Selector) -> Fut,
    Fut: Future<Output = Result<Vec<String>, SourceError>>,
{
    let mut all = std::collections::BTreeSet::new();
    for selector in selectors {
        all.extend(answer(selector).await.map_err(status_of)?);
    }
    Ok(all.into_iter().collect())
}

/// Serves a [`ProfileSink`] as Parca's ProfileStoreService.WriteRaw.
struct StoreServer {
    sink: Option<Arc<dyn ProfileSink>>,
    auth: Auth,
    memory: Option<Arc<MemoryBudget>>,
    agents: Agents,
}

/// The distinct `user-agent`s that wrote, each told once to [`ServerOptions::agent_seen`].
#[derive(Default)]
struct Agents {
    seen: std::sync::Mutex<std::collections::BTreeSet<String>>,
    told: Option<AgentSeen>,
}

impl Agents {
    /// Tells of `request`'s agent when it is new (and fewer than [`MAX_AGENTS_TOLD`]
    /// were told before).
    fn saw<T>(&self, request: &Request<T>) {
        let Some(told) = &self.told else {
            return;
        };
        let agent = request
            .metadata()
            .get("user-agent")
            .and_then(|v| v.to_str().ok())
            .unwrap_or("(no user-agent)");
        let new = {
            let mut seen = self
                .seen
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner);
            seen.len() < MAX_AGENTS_TOLD && seen.insert(agent.to_string())
        };
        if new {
            told(agent);
        }
    }
}

/// A push's lease within the budget, and the most any of its profiles may inflate to:
/// the request's bytes and twice its largest profile inflated (bytes, then tables) are
/// granted at once or refused; a profile whose gzip trailer tells a size beyond the
/// budget is refused before it is inflated, and one whose trailer lies is stopped as it
/// inflates past what is free.
fn push_within(
    budget: &Arc<MemoryBudget>,
    profiles: &[(Labels, Vec<u8>)],
) -> Result<(Lease, u64), Status> {
    let raw: u64 = profiles.iter().map(|(_, p)| p.len() as u64).sum();
    let largest = profiles
        .iter()
        .map(|(_, p)| codec::inflated_size_hint(p))
        .max()
        .unwrap_or(0);
    if largest.saturating_mul(2) > budget.for_all() {
        return Err(Status::resource_exhausted(format!(
            "a profile of this request inflates to {} (its gzip trailer says), more than the server's memory budget of {} allows",
            memory::budget::mib(largest),
            memory::budget::mib(budget.limit_bytes())
        )));
    }
    let lease = budget
        .admit_push(raw + 2 * largest + (1 << 20))
        .map_err(exhausted)?;
    Ok((lease, budget.inflate_cap(largest)))
}

#[tonic::async_trait]
impl ProfileStoreService for StoreServer {
    async fn write_raw(
        &self,
        request: Request<WriteRawRequest>,
    ) -> Result<Response<WriteRawResponse>, Status> {
        self.auth.check(&request)?;
        self.agents.saw(&request);
        let Some(sink) = &self.sink else {
            return Err(Status::unimplemented(
                "this server does not accept profiles (it was started without a store)",
            ));
        };
        // Check every series before writing any, so a bad request writes nothing.
        let series: Vec<(Labels, Vec<Vec<u8>>)> = request
            .into_inner()
            .series
            .into_iter()
            .map(|s| {
                let labels = labels_of_written(s.labels).map_err(|e| invalid(e.to_string()))?;
                Ok((
                    labels,
                    s.samples.into_iter().map(|x| x.raw_profile).collect(),
                ))
            })
            .collect::<Result<_, Status>>()?;
        // All or nothing, as Parca's WriteRaw: a refused profile leaves the store as it
        // was, with the good ones before it.
        let profiles: Vec<(Labels, Vec<u8>)> = series
            .into_iter()
            .flat_map(|(labels, profiles)| profiles.into_iter().map(move |p| (labels.clone(), p)))
            .collect();
        let (_lease, max_inflated) = match &self.memory {
            Some(budget) => {
                let (lease, cap) = push_within(budget, &profiles)?;
                (Some(lease), cap)
            }
            None => (None, DEFAULT_MAX_DECOMPRESSED_BYTES),
        };
        sink.write_raw_all(profiles, max_inflated)
            .await
            .map_err(status_of)?;
        Ok(Response::new(WriteRawResponse {}))
    }
}
