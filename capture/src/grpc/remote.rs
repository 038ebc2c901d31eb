//! [`RemoteSource`]: a Parca server (or `flint serve`) as a [`ProfileSource`] and a
//! [`ProfileSink`], over Parca's gRPC API.

use std::future::Future;
use std::path::PathBuf;
use std::sync::OnceLock;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use profile_model::Profile;
use profile_model::codec::{DecodeOptions, decode_with};
use tonic::metadata::{AsciiMetadataKey, AsciiMetadataValue};
use tonic::transport::{Certificate, Channel, ClientTlsConfig, Endpoint};
use tonic::{Request, Response, Status};

use crate::grpc::convert::{
    duration, inclusive_end, label_set, labels_of, nanos_of, profile_type_of, source_error_of,
    timestamp,
};
use crate::grpc::proto::profilestore::profile_store_service_client::ProfileStoreServiceClient;
use crate::grpc::proto::profilestore::{RawProfileSeries, RawSample, WriteRawRequest};
use crate::grpc::proto::query::query_service_client::QueryServiceClient;
use crate::grpc::proto::query::{self as pq, profile_diff_selection, query_request};
use crate::grpc::server::{DEFAULT_MAX_MESSAGE_BYTES, VERSION_HEADER};
use crate::grpc::url::{ServerUrl, UrlError};
use crate::selector::{ProfileType, Selector};
use crate::source::{
    Labels, Point, ProfileSink, ProfileSource, Progress, QueryTime, Series, SourceError,
    SourceFuture, TimeRange,
};

/// A client that cannot be made: a bad URL, header, token or CA file, in one line.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct RemoteError(String);

impl From<String> for RemoteError {
    fn from(message: String) -> Self {
        Self(message)
    }
}

impl From<UrlError> for RemoteError {
    fn from(e: UrlError) -> Self {
        Self(e.to_string())
    }
}

/// The message, for callers that carry errors as text.
impl From<RemoteError> for String {
    fn from(e: RemoteError) -> Self {
        e.0
    }
}

/// How to talk to a remote server; [`Default`] suits a Parca server on a LAN. Its
/// `Debug` output leaves out the token and header values.
#[derive(Clone)]
pub struct RemoteOptions {
    /// Sent as `authorization: Bearer <token>` with every request.
    pub bearer_token: Option<String>,
    /// Extra gRPC metadata sent with every request, e.g. `("x-scope-orgid", "team")`.
    /// Names are lowercase ASCII; values printable ASCII.
    pub headers: Vec<(String, String)>,
    /// PEM file with the CA certificate(s) to trust for `https://` instead of the
    /// system's roots.
    pub ca_file: Option<PathBuf>,
    /// How long one attempt of one request may take.
    pub request_timeout: Duration,
    /// How long connecting may take, and how long a connection may stay silent: a
    /// peer that answers no HTTP/2 keep-alive ping in half of it, twice, is dropped.
    pub connect_timeout: Duration,
    /// Largest answer accepted, in bytes; larger ones fail with an error naming the cap.
    pub max_response_bytes: usize,
    /// Largest decompressed pprof accepted from a Query, in bytes.
    pub max_decompressed_bytes: u64,
    /// How many times a request that found the server unavailable is tried again.
    pub retries: u32,
    /// Wait before the first retry; doubled for each next one.
    pub retry_backoff: Duration,
    /// What the client calls itself in the `user-agent` header, before tonic's own
    /// (`flint/0.2.0 (abc1234 2026-12-10) tonic/0.14.9`); tonic's alone when `None`.
    pub user_agent: Option<String>,
}

impl std::fmt::Debug for RemoteOptions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let headers: Vec<&str> = self.headers.iter().map(|(name, _)| name.as_str()).collect();
        f.debug_struct("RemoteOptions")
            .field("bearer_token", &self.bearer_token.as_ref().map(|_| "<set>"))
            .field("headers", &headers)
            .field("ca_file", &self.ca_file)
            .field("request_timeout", &self.request_timeout)
            .field("connect_timeout", &self.connect_timeout)
            .field("max_response_bytes", &self.max_response_bytes)
            .field("max_decompressed_bytes", &self.max_decompressed_bytes)
            .field("retries", &self.retries)
            .field("retry_backoff", &self.retry_backoff)
            .field("user_agent", &self.user_agent)
            .finish()
    }
}

impl Default for RemoteOptions {
    fn default() -> Self {
        Self {
            bearer_token: None,
            headers: Vec::new(),
            ca_file: None,
            request_timeout: Duration::from_secs(120),
            connect_timeout: Duration::from_secs(10),
            max_response_bytes: 4 * DEFAULT_MAX_MESSAGE_BYTES,
            max_decompressed_bytes: 1 << 30,
            retries: 2,
            retry_backoff: Duration::from_millis(200),
            user_agent: None,
        }
    }
}

/// A remote Parca-compatible server. Construction checks the URL and options but never
/// connects; the connection is made on first use and re-made when lost. Every method
/// needs a tokio runtime.
pub struct RemoteSource {
    url: ServerUrl,
    options: RemoteOptions,
    endpoint: Endpoint,
    metadata: Vec<(AsciiMetadataKey, AsciiMetadataValue)>,
    channel: OnceLock<Channel>,
    /// The version a `flint serve` names in its answers' `flint-version` header.
    server_version: OnceLock<String>,
    /// Whether the server has answered a request: until it has, a connection it never
    /// speaks HTTP/2 on is not a server that went away, and is not tried again.
    answered: AtomicBool,
}

impl std::fmt::Debug for RemoteSource {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // Leaves out the token and headers, which may be secrets.
        f.debug_struct("RemoteSource")
            .field("url", &self.url.to_string())
            .finish_non_exhaustive()
    }
}

impl RemoteSource {
    /// A source for `url` (`grpc://HOST[:PORT]` or `https://HOST[:PORT]`, see
    /// [`ServerUrl::parse`]). Fails, with one line, on a bad URL, header, token or CA
    /// file; never blocks on the network.
    pub fn new(url: &str, options: RemoteOptions) -> Result<Self, RemoteError> {
        let url = ServerUrl::parse(url)?;
        let mut endpoint = Endpoint::from_shared(url.uri())
            .map_err(|e| format!("{url}: {e}"))?
            .connect_timeout(options.connect_timeout)
            // A peer that accepts the connection and never speaks HTTP/2 (a
            // port-forward to a pod that is gone, a listener that is not gRPC) does not
            // answer pings either: the connection is dropped after the connect timeout
            // instead of holding the request until its own timeout.
            .http2_keep_alive_interval(options.connect_timeout / 2)
            .keep_alive_timeout(options.connect_timeout / 2)
            .keep_alive_while_idle(true)
            .tcp_nodelay(true);
        if let Some(agent) = &options.user_agent {
            endpoint = endpoint
                .user_agent(agent.as_str())
                .map_err(|_| format!("invalid user agent {agent:?}: use printable ASCII"))?;
        }
        if url.tls {
            let mut tls = ClientTlsConfig::new().domain_name(url.host.clone());
            tls = match &options.ca_file {
                Some(path) => {
                    let pem = std::fs::read(path)
                        .map_err(|e| format!("cannot read CA file {}: {e}", path.display()))?;
                    tls.ca_certificate(Certificate::from_pem(pem))
                }
                None => tls.with_native_roots(),
            };
            endpoint = endpoint
                .tls_config(tls)
                .map_err(|e| format!("{url}: TLS setup failed: {e}"))?;
        }
        let mut metadata = Vec::new();
        if let Some(token) = &options.bearer_token {
            let value = format!("Bearer {}", token.trim())
                .parse::<AsciiMetadataValue>()
                .map_err(|_| "the bearer token must be printable ASCII".to_string())?;
            metadata.push((AsciiMetadataKey::from_static("authorization"), value));
        }
        for (name, value) in &options.headers {
            let key = AsciiMetadataKey::from_bytes(name.to_ascii_lowercase().as_bytes())
                .map_err(|_| format!("invalid header name {name:?}"))?;
            let value = value
                .parse::<AsciiMetadataValue>()
                .map_err(|_| format!("invalid value for header {name:?}: use printable ASCII"))?;
            metadata.push((key, value));
        }
        Ok(Self {
            url,
            options,
            endpoint,
            metadata,
            channel: OnceLock::new(),
            server_version: OnceLock::new(),
            answered: AtomicBool::new(false),
        })
    }

    /// The server's address, as shown to the user (`grpc://host:port`).
    pub fn url(&self) -> &ServerUrl {
        &self.url
    }

    /// The version of the `flint serve` that answered (its `flint-version` header),
    /// once a request has been answered; `None` before, and from other servers.
    pub fn server_version(&self) -> Option<&str> {
        self.server_version.get().map(String::as_str)
    }

    /// B − A of two selections, as Parca's MODE_DIFF computes it: the pprof's values
    /// are the differences; unless `absolute`, the smaller side is scaled up to the
    /// bigger total first.
    pub async fn query_diff(
        &self,
        a: (Selector, QueryTime),
        b: (Selector, QueryTime),
        absolute: bool,
        progress: Progress,
    ) -> Result<Profile, SourceError> {
        let side = |(selector, time): (Selector, QueryTime)| {
            let query = selector.to_string();
            match time {
                QueryTime::Single(t) => pq::ProfileDiffSelection {
                    mode: profile_diff_selection::Mode::SingleUnspecified as i32,
                    options: Some(profile_diff_selection::Options::Single(pq::SingleProfile {
                        time: Some(timestamp(t)),
                        query,
                    })),
                },
                QueryTime::Merge(range) => pq::ProfileDiffSelection {
                    mode: profile_diff_selection::Mode::Merge as i32,
                    options: Some(profile_diff_selection::Options::Merge(merge(query, range))),
                },
            }
        };
        let request = pq::QueryRequest {
            mode: query_request::Mode::Diff as i32,
            options: Some(query_request::Options::Diff(pq::DiffProfile {
                a: Some(side(a)),
                b: Some(side(b)),
                absolute: Some(absolute),
            })),
            report_type: query_request::ReportType::Pprof as i32,
            ..Default::default()
        };
        self.pprof(request, progress).await
    }

    fn channel(&self) -> Channel {
        self.channel
            .get_or_init(|| self.endpoint.connect_lazy())
            .clone()
    }

    fn query_client(&self) -> QueryServiceClient<Channel> {
        QueryServiceClient::new(self.channel())
            .max_decoding_message_size(self.options.max_response_bytes)
            .max_encoding_message_size(self.options.max_response_bytes)
    }

    fn request<T>(&self, message: T) -> Request<T> {
        let mut request = Request::new(message);
        for (key, value) in &self.metadata {
            request.metadata_mut().insert(key.clone(), value.clone());
        }
        request.set_timeout(self.options.request_timeout);
        request
    }

    /// Sends `message` with `send`, trying again with exponential backoff while the
    /// server is unavailable.
    async fn call<T: Clone, R, F, Fut>(&self, message: T, send: F) -> Result<R, SourceError>
    where
        F: Fn(Request<T>) -> Fut,
        Fut: Future<Output = Result<Response<R>, Status>>,
    {
        let mut attempt = 0;
        loop {
            let answer = tokio::time::timeout(
                self.options.request_timeout,
                send(self.request(message.clone())),
            )
            .await;
            let error = match answer {
                Ok(Ok(response)) => {
                    self.answered.store(true, Ordering::Relaxed);
                    if let Some(version) = response
                        .metadata()
                        .get(VERSION_HEADER)
                        .and_then(|v| v.to_str().ok())
                    {
                        let _ = self.server_version.set(version.to_string());
                    }
                    return Ok(response.into_inner());
                }
                Ok(Err(status))
                    if silent_peer(&status) && !self.answered.load(Ordering::Relaxed) =>
                {
                    return Err(SourceError::Unavailable(format!(
                        "{} accepted the connection but sent no HTTP/2 answer in {:.0} s: is it a \
                         gRPC server, or a port-forward to a pod that is gone?",
                        self.url.authority(),
                        self.options.connect_timeout.as_secs_f64()
                    )));
                }
                Ok(Err(status)) => source_error_of(
                    &status,
                    &self.url.to_string(),
                    self.options.max_response_bytes,
                ),
                Err(_) => {
                    return Err(SourceError::Unavailable(format!(
                        "{} did not answer within {:.1} s",
                        self.url,
                        self.options.request_timeout.as_secs_f64()
                    )));
                }
            };
            if !matches!(error, SourceError::Unavailable(_)) || attempt >= self.options.retries {
                return Err(error);
            }
            let backoff = self
                .options
                .retry_backoff
                .saturating_mul(1 << attempt.min(16));
            tokio::time::sleep(backoff.min(Duration::from_secs(10))).await;
            attempt += 1;
        }
    }

    /// Runs a Query for a pprof report and decodes it, stopping when `progress` is
    /// cancelled (dropping the request).
    async fn pprof(
        &self,
        request: pq::QueryRequest,
        progress: Progress,
    ) -> Result<Profile, SourceError> {
        progress.set_total(1);
        let work = async {
            let response = self
                .call(request, |r| {
                    let mut client = self.query_client();
                    async move { client.query(r).await }
                })
                .await?;
            let Some(pq::query_response::Report::Pprof(bytes)) = response.report else {
                return Err(SourceError::Failed(format!(
                    "{} answered without a pprof report",
                    self.url
                )));
            };
            let options = DecodeOptions {
                max_decompressed_bytes: self.options.max_decompressed_bytes,
                ..DecodeOptions::default()
            };
            let url = self.url.to_string();
            tokio::task::spawn_blocking(move || decode_with(&bytes, options))
                .await
                .map_err(|e| SourceError::Failed(format!("decoding stopped: {e}")))?
                .map_err(|e| {
                    SourceError::Failed(format!("the pprof from {url} is unreadable: {e}"))
                })
        };
        let profile = tokio::select! {
            result = work => result?,
            () = cancelled(&progress) => return Err(SourceError::Cancelled),
        };
        progress.step();
        Ok(profile)
    }
}

/// Completes once `progress` is cancelled.
async fn cancelled(progress: &Progress) {
    while !progress.is_cancelled() {
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
}

fn merge(query: String, range: TimeRange) -> pq::MergeProfile {
    pq::MergeProfile {
        query,
        start: Some(timestamp(range.start_nanos)),
        end: Some(inclusive_end(range)),
    }
}

impl ProfileSource for RemoteSource {
    fn profile_types(&self, range: TimeRange) -> SourceFuture<'_, Vec<ProfileType>> {
        Box::pin(async move {
            let request = pq::ProfileTypesRequest {
                start: Some(timestamp(range.start_nanos)),
                end: Some(timestamp(range.end_nanos)),
            };
            let response = self
                .call(request, |r| {
                    let mut client = self.query_client();
                    async move { client.profile_types(r).await }
                })
                .await?;
            let mut types: Vec<ProfileType> =
                response.types.into_iter().map(profile_type_of).collect();
            types.sort();
            types.dedup();
            Ok(types)
        })
    }

    fn labels(&self, selector: Selector, range: TimeRange) -> SourceFuture<'_, Vec<String>> {
        Box::pin(async move {
            let request = pq::LabelsRequest {
                r#match: vec![selector.to_string()],
                start: Some(timestamp(range.start_nanos)),
                end: Some(timestamp(range.end_nanos)),
                profile_type: Some(selector.profile_type.to_string()),
            };
            let response = self
                .call(request, |r| {
                    let mut client = self.query_client();
                    async move { client.labels(r).await }
                })
                .await?;
            let mut names = response.label_names;
            names.sort();
            names.dedup();
            Ok(names)
        })
    }

    fn values(
        &self,
        name: String,
        selector: Selector,
        range: TimeRange,
    ) -> SourceFuture<'_, Vec<String>> {
        Box::pin(async move {
            let request = pq::ValuesRequest {
                label_name: name,
                r#match: vec![selector.to_string()],
                start: Some(timestamp(range.start_nanos)),
                end: Some(timestamp(range.end_nanos)),
                profile_type: Some(selector.profile_type.to_string()),
            };
            let response = self
                .call(request, |r| {
                    let mut client = self.query_client();
                    async move { client.values(r).await }
                })
                .await?;
            let mut values = response.label_values;
            values.sort();
            values.dedup();
            Ok(values)
        })
    }

    /// Parca sums everything into one series when `sum_by` is empty, and has no way to
    /// say "keep every label set apart". So `sum_by: None` first asks for the label
    /// names of the selected series (one Labels request) and sums by all of them, which
    /// keeps every distinct label set apart; `Some(vec![])` sends an empty `sum_by`.
    /// A step that is not positive is refused here, as Parca would divide by it.
    fn query_range(
        &self,
        selector: Selector,
        range: TimeRange,
        step_nanos: i64,
        sum_by: Option<Vec<String>>,
    ) -> SourceFuture<'_, Vec<Series>> {
        Box::pin(async move {
            if step_nanos <= 0 {
                return Err(SourceError::InvalidArgument(
                    "the step must be positive".into(),
                ));
            }
            let sum_by = match sum_by {
                Some(names) => names,
                None => self.labels(selector.clone(), range).await?,
            };
            let request = pq::QueryRangeRequest {
                query: selector.to_string(),
                start: Some(timestamp(range.start_nanos)),
                end: Some(inclusive_end(range)),
                limit: 0,
                step: Some(duration(step_nanos)),
                sum_by,
            };
            let response = self
                .call(request, |r| {
                    let mut client = self.query_client();
                    async move { client.query_range(r).await }
                })
                .await?;
            let delta = selector.profile_type.delta;
            let mut series: Vec<Series> = response
                .series
                .into_iter()
                .map(|s| Series {
                    labels: labels_of(s.labelset),
                    points: s
                        .samples
                        .into_iter()
                        .map(|p| Point {
                            time_nanos: p.timestamp.as_ref().map_or(0, nanos_of),
                            value: p.value,
                            value_per_second: rate_of(delta, &p),
                            duration_nanos: p.duration,
                            count: u32::try_from(p.count).unwrap_or(0),
                        })
                        .collect(),
                })
                .collect();
            series.sort_by(|a, b| a.labels.cmp(&b.labels));
            Ok(series)
        })
    }

    fn query(
        &self,
        selector: Selector,
        time: QueryTime,
        progress: Progress,
    ) -> SourceFuture<'_, Profile> {
        Box::pin(async move {
            let query = selector.to_string();
            let (mode, options) = match time {
                QueryTime::Single(t) => (
                    query_request::Mode::SingleUnspecified,
                    query_request::Options::Single(pq::SingleProfile {
                        time: Some(timestamp(t)),
                        query,
                    }),
                ),
                QueryTime::Merge(range) => (
                    query_request::Mode::Merge,
                    query_request::Options::Merge(merge(query, range)),
                ),
            };
            let request = pq::QueryRequest {
                mode: mode as i32,
                options: Some(options),
                report_type: query_request::ReportType::Pprof as i32,
                ..Default::default()
            };
            self.pprof(request, progress).await
        })
    }
}

impl ProfileSink for RemoteSource {
    /// Sends the profile with WriteRaw (`normalized: false`: the server normalizes
    /// addresses from the pprof's mappings, as for a scraped Go profile).
    fn write_raw(&self, labels: Labels, raw_profile: Vec<u8>) -> SourceFuture<'_, ()> {
        Box::pin(async move {
            let request = WriteRawRequest {
                series: vec![RawProfileSeries {
                    labels: Some(label_set(&labels)),
                    samples: vec![RawSample {
                        raw_profile,
                        executable_info: Vec::new(),
                    }],
                }],
                normalized: false,
                ..Default::default()
            };
            self.call(request, |r| {
                let mut client = ProfileStoreServiceClient::new(self.channel())
                    .max_decoding_message_size(self.options.max_response_bytes)
                    .max_encoding_message_size(self.options.max_response_bytes);
                async move { client.write_raw(r).await }
            })
            .await?;
            Ok(())
        })
    }
}

/// The rate of a server's sample of a type that is `delta` or not: none for a
/// snapshot, a sample without a duration, or a sample whose rate is 0 for a value
/// that is not (Parca's sample has no "none": flint's server sends 0 for it).
fn rate_of(delta: bool, p: &pq::MetricsSample) -> Option<f64> {
    let none = !delta || p.duration <= 0 || (p.value_per_second == 0.0 && p.value != 0);
    (!none && p.value_per_second.is_finite()).then_some(p.value_per_second)
}

/// Whether `status` is the end of a connection whose peer never answered the HTTP/2
/// keep-alive pings (nor anything else): the peer accepted the connection but is not
/// speaking HTTP/2.
fn silent_peer(status: &Status) -> bool {
    let mut error: Option<&dyn std::error::Error> = Some(status);
    while let Some(e) = error {
        if e.to_string() == "keep-alive timed out" {
            return true;
        }
        error = e.source();
    }
    false
}
