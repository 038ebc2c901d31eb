//! flint's gRPC layer end to end: a FileSource over real Go profiles, served on a
//! loopback port, must answer through RemoteSource exactly as it answers directly.

#![allow(
    clippy::expect_used,
    clippy::unwrap_used,
    reason = "a test fails loudly on a broken fixture"
)]

use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use capture::grpc::convert::{duration, nanos_of, timestamp};
use capture::grpc::proto::query::query_service_client::QueryServiceClient;
use capture::grpc::proto::query::{self as pq, query_request};
use capture::grpc::{RemoteOptions, RemoteSource, ServerOptions, bind, serve};
use capture::source::SourceFuture;
use capture::{
    FileSource, Labels, ProfileSink, ProfileSource, Progress, QueryTime, Selector, SourceError,
    TimeRange,
};
use profile_model::Profile;
use profile_model::codec::DecodeOptions;
use profile_model::merge::Merger;

const CPU: &str = "process_cpu:cpu:nanoseconds:cpu:nanoseconds:delta";

fn fixture(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../tests/fixtures/go")
        .join(name)
}

fn file_source() -> Arc<FileSource> {
    let paths: Vec<PathBuf> = [
        "cpu.pb.gz",
        "heap.pb.gz",
        "cpu-1.pb.gz",
        "cpu-2.pb.gz",
        "cpu-3.pb.gz",
    ]
    .iter()
    .map(|n| fixture(n))
    .collect();
    let (source, skipped) =
        FileSource::open(&paths, DecodeOptions::default(), &Progress::default()).expect("opens");
    assert!(skipped.is_empty(), "{skipped:?}");
    Arc::new(source)
}

/// What a test sink was given.
#[derive(Default)]
struct RecordingSink {
    written: Mutex<Vec<(Labels, Vec<u8>)>>,
}

impl ProfileSink for RecordingSink {
    fn write_raw(&self, labels: Labels, raw_profile: Vec<u8>) -> SourceFuture<'_, ()> {
        self.written.lock().unwrap().push((labels, raw_profile));
        Box::pin(async { Ok(()) })
    }
}

/// A server on 127.0.0.1:0 serving the fixtures, stopped when dropped.
struct Harness {
    runtime: tokio::runtime::Runtime,
    address: SocketAddr,
    direct: Arc<FileSource>,
    sink: Arc<RecordingSink>,
    stop: Option<tokio::sync::oneshot::Sender<()>>,
}

impl Harness {
    fn start(options: ServerOptions) -> Self {
        Self::start_with(options, true)
    }

    fn start_with(options: ServerOptions, with_sink: bool) -> Self {
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .enable_all()
            .build()
            .expect("runtime");
        let direct = file_source();
        let sink = Arc::new(RecordingSink::default());
        let listener = runtime.block_on(bind("127.0.0.1:0")).expect("binds");
        let address = listener.local_addr().expect("address");
        let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
        let source: Arc<dyn ProfileSource> = direct.clone();
        let served_sink: Option<Arc<dyn ProfileSink>> =
            if with_sink { Some(sink.clone()) } else { None };
        runtime.spawn(serve(listener, source, served_sink, options, async {
            let _ = stopped.await;
        }));
        Self {
            runtime,
            address,
            direct,
            sink,
            stop: Some(stop),
        }
    }

    fn url(&self) -> String {
        format!("grpc://{}", self.address)
    }

    fn remote(&self, options: RemoteOptions) -> RemoteSource {
        RemoteSource::new(&self.url(), options).expect("remote")
    }

    fn block_on<T>(&self, f: impl std::future::Future<Output = T>) -> T {
        self.runtime.block_on(f)
    }

    /// A raw generated client, for requests RemoteSource never sends.
    fn raw_client(&self) -> QueryServiceClient<tonic::transport::Channel> {
        let url = format!("http://{}", self.address);
        self.block_on(QueryServiceClient::connect(url))
            .expect("connects")
    }
}

impl Drop for Harness {
    fn drop(&mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
    }
}

fn selector(text: &str) -> Selector {
    Selector::parse(text).expect("selector")
}

/// Function names leaf first, and the sample's labels.
type StackKey = (Vec<String>, Vec<(String, String)>);

/// A profile as (function names leaf first, labels without pprof's base tag) → value of
/// the first sample type, zeros left out: equal for equal aggregates, however the
/// samples are split.
fn stacks(p: &Profile) -> BTreeMap<StackKey, i64> {
    let mut out = BTreeMap::new();
    for i in 0..p.samples.len() {
        let frames: Vec<String> = p
            .samples
            .stack(i)
            .iter()
            .flat_map(|&loc| {
                p.locations[loc as usize]
                    .lines
                    .iter()
                    .map(|l| p.str(p.functions[l.function as usize].name).to_string())
            })
            .collect();
        let mut labels: Vec<(String, String)> = p
            .sample_labels(i)
            .filter(|(k, _)| *k != profile_model::merge::BASE_LABEL)
            .map(|(k, v)| (k.to_string(), v))
            .collect();
        labels.sort();
        *out.entry((frames, labels)).or_insert(0) += p.samples.values[0][i];
    }
    out.retain(|_, v| *v != 0);
    out
}

/// The direct answer as Parca's pprof report has it: only the selected sample type.
fn restricted(p: Profile, selector: &Selector) -> Profile {
    let t = &selector.profile_type;
    let i = p
        .sample_types
        .iter()
        .position(|v| p.str(v.kind) == t.sample_type && p.str(v.unit) == t.sample_unit)
        .expect("sample type");
    p.only_sample_type(i).expect("type")
}

/// The direct answer for the profile at `t`, restricted to `s`'s type.
fn direct_at(h: &Harness, s: &Selector, t: i64) -> Profile {
    let p = h
        .block_on(
            h.direct
                .query(s.clone(), QueryTime::Single(t), Progress::default()),
        )
        .unwrap();
    restricted(p, s)
}

fn assert_same_profile(remote: &Profile, direct: &Profile) {
    assert_eq!(remote.sample_type_names(), direct.sample_type_names());
    assert_eq!(remote.total(0), direct.total(0));
    assert!(direct.total(0) != 0);
    assert_eq!(stacks(remote), stacks(direct));
}

#[test]
fn every_query_through_grpc_equals_the_direct_answer() {
    let h = Harness::start(ServerOptions::default());
    let remote = h.remote(RemoteOptions::default());
    let all = TimeRange::ALL;
    let types = h.block_on(remote.profile_types(all)).expect("types");
    assert_eq!(types, h.block_on(h.direct.profile_types(all)).unwrap());
    assert!(types.len() >= 5, "{types:?}");
    for t in &types {
        let s = Selector {
            profile_type: t.clone(),
            matchers: Vec::new(),
        };
        let labels = h.block_on(remote.labels(s.clone(), all)).expect("labels");
        assert_eq!(labels, h.block_on(h.direct.labels(s.clone(), all)).unwrap());
        assert!(labels.contains(&"path".to_string()), "{labels:?}");
        for name in &labels {
            assert_eq!(
                h.block_on(remote.values(name.clone(), s.clone(), all)),
                h.block_on(h.direct.values(name.clone(), s.clone(), all)),
                "{t} {name}"
            );
        }
        for step in [1_000_000_000, 600_000_000_000] {
            for sum_by in [None, Some(vec![]), Some(vec!["endpoint".to_string()])] {
                let got = h
                    .block_on(remote.query_range(s.clone(), all, step, sum_by.clone()))
                    .expect("series");
                // The server sums no level by labels, as Parca.
                let direct_sum_by = sum_by.clone().filter(|_| t.delta);
                let want = h
                    .block_on(h.direct.query_range(s.clone(), all, step, direct_sum_by))
                    .unwrap();
                assert_eq!(got, want, "{t} step {step} sum_by {sum_by:?}");
            }
        }
        let merged = h
            .block_on(remote.query(s.clone(), QueryTime::Merge(all), Progress::default()))
            .expect("merge");
        let direct = h
            .block_on(
                h.direct
                    .query(s.clone(), QueryTime::Merge(all), Progress::default()),
            )
            .unwrap();
        assert_same_profile(&merged, &restricted(direct, &s));
    }

    // Keeping label sets apart and summing everything give different answers here.
    let cpu = selector(CPU);
    let apart = h
        .block_on(remote.query_range(cpu.clone(), all, 1_000_000_000, None))
        .unwrap();
    let one = h
        .block_on(remote.query_range(cpu.clone(), all, 1_000_000_000, Some(vec![])))
        .unwrap();
    assert!(
        apart.len() > 1 && one.len() == 1,
        "{} {}",
        apart.len(),
        one.len()
    );

    // A single profile at each file's time, and a selection by label.
    let exact = h
        .block_on(remote.query_range(cpu.clone(), all, 1, Some(vec![])))
        .unwrap();
    let times: Vec<i64> = exact[0].points.iter().map(|p| p.time_nanos).collect();
    assert_eq!(times.len(), 4, "cpu, cpu-1..3");
    for t in times {
        let progress = Progress::default();
        let got = h
            .block_on(remote.query(cpu.clone(), QueryTime::Single(t), progress.clone()))
            .expect("single");
        assert_eq!(progress.get(), (1, 1));
        let want = h
            .block_on(
                h.direct
                    .query(cpu.clone(), QueryTime::Single(t), Progress::default()),
            )
            .unwrap();
        assert_same_profile(&got, &restricted(want, &cpu));
    }
    let endpoint = h
        .block_on(h.direct.values("endpoint".into(), cpu.clone(), all))
        .unwrap();
    let one_endpoint = selector(&format!("{CPU}{{endpoint={:?}}}", endpoint[0]));
    let got = h
        .block_on(remote.query(
            one_endpoint.clone(),
            QueryTime::Merge(all),
            Progress::default(),
        ))
        .unwrap();
    let want = h
        .block_on(h.direct.query(
            one_endpoint.clone(),
            QueryTime::Merge(all),
            Progress::default(),
        ))
        .unwrap();
    assert_same_profile(&got, &restricted(want, &one_endpoint));
    assert!(got.total(0) < merged_total(&h, &cpu));
}

fn merged_total(h: &Harness, s: &Selector) -> i64 {
    let p = h
        .block_on(h.direct.query(
            s.clone(),
            QueryTime::Merge(TimeRange::ALL),
            Progress::default(),
        ))
        .unwrap();
    restricted(p, s).total(0)
}

/// B − A computed with a Merger: the smaller side scaled up unless absolute.
fn expected_difference(a: &Profile, b: &Profile, absolute: bool) -> Profile {
    let (total_a, total_b) = (a.total(0), b.total(0));
    let scaled = |p: &Profile, factor: f64| {
        let mut p = p.clone();
        for v in &mut p.samples.values[0] {
            *v = (*v as f64 * factor).round() as i64;
        }
        p
    };
    let (a, b) = if absolute || total_a == total_b {
        (a.clone(), b.clone())
    } else if total_a < total_b {
        (scaled(a, total_b as f64 / total_a as f64), b.clone())
    } else {
        (a.clone(), scaled(b, total_a as f64 / total_b as f64))
    };
    let mut merger = Merger::new();
    merger.add("B", &b).unwrap();
    merger.add_base("A", &a).unwrap();
    merger.finish()
}

#[test]
fn diff_is_b_minus_a_as_parca_computes_it() {
    let h = Harness::start(ServerOptions::default());
    let remote = h.remote(RemoteOptions::default());
    let cpu = selector(CPU);
    let times = cpu_times(&h);
    let direct = |t: i64| direct_at(&h, &cpu, t);
    // The last two are cpu-1 and cpu-3 or similar: different totals either way.
    let (ta, tb) = (times[1], times[3]);
    let (a, b) = (direct(ta), direct(tb));
    assert_ne!(a.total(0), b.total(0));
    for absolute in [false, true] {
        for (x, y, tx, ty) in [(&a, &b, ta, tb), (&b, &a, tb, ta)] {
            let got = h
                .block_on(remote.query_diff(
                    (cpu.clone(), QueryTime::Single(tx)),
                    (cpu.clone(), QueryTime::Single(ty)),
                    absolute,
                    Progress::default(),
                ))
                .expect("diff");
            let want = expected_difference(x, y, absolute);
            assert_eq!(stacks(&got), stacks(&want), "absolute {absolute}");
            assert!(!stacks(&got).is_empty());
        }
    }
    // Relative and absolute differ when totals differ.
    let relative = h
        .block_on(remote.query_diff(
            (cpu.clone(), QueryTime::Single(ta)),
            (cpu.clone(), QueryTime::Merge(TimeRange::ALL)),
            false,
            Progress::default(),
        ))
        .unwrap();
    let absolute = h
        .block_on(remote.query_diff(
            (cpu.clone(), QueryTime::Single(ta)),
            (cpu.clone(), QueryTime::Merge(TimeRange::ALL)),
            true,
            Progress::default(),
        ))
        .unwrap();
    assert_ne!(relative.total(0), absolute.total(0));
    // Different units cannot be diffed.
    let heap = h
        .block_on(h.direct.profile_types(TimeRange::ALL))
        .unwrap()
        .into_iter()
        .find(|t| t.sample_type == "inuse_space")
        .expect("heap type");
    let heap = Selector {
        profile_type: heap,
        matchers: Vec::new(),
    };
    let error = h
        .block_on(remote.query_diff(
            (heap, QueryTime::Merge(TimeRange::ALL)),
            (cpu.clone(), QueryTime::Merge(TimeRange::ALL)),
            false,
            Progress::default(),
        ))
        .unwrap_err();
    assert!(
        matches!(error, SourceError::InvalidArgument(_)),
        "{error:?}"
    );
}

#[test]
fn bearer_token_is_required_when_set() {
    let h = Harness::start(ServerOptions {
        bearer_token: Some("s3cret".into()),
        ..ServerOptions::default()
    });
    let with = |token: Option<&str>| {
        h.remote(RemoteOptions {
            bearer_token: token.map(str::to_string),
            ..RemoteOptions::default()
        })
    };
    for token in [None, Some("wrong")] {
        let error = h
            .block_on(with(token).profile_types(TimeRange::ALL))
            .unwrap_err();
        match error {
            SourceError::Failed(m) => assert!(m.contains("unauthenticated"), "{m}"),
            other => panic!("{other:?}"),
        }
        let error = h
            .block_on(with(token).write_raw(Labels::new(), Vec::new()))
            .unwrap_err();
        assert!(matches!(error, SourceError::Failed(_)), "{error:?}");
    }
    assert!(
        !h.block_on(with(Some("s3cret")).profile_types(TimeRange::ALL))
            .unwrap()
            .is_empty()
    );
}

#[test]
fn client_and_server_tell_each_other_their_versions() {
    let agents = Arc::new(Mutex::new(Vec::<String>::new()));
    let seen = agents.clone();
    let h = Harness::start(ServerOptions {
        version: Some("9.8.7 (abc1234 2026-12-10)".into()),
        agent_seen: Some(Arc::new(move |agent: &str| {
            seen.lock().unwrap().push(agent.to_string());
        })),
        ..ServerOptions::default()
    });
    let pusher = |agent: Option<&str>| {
        h.remote(RemoteOptions {
            user_agent: agent.map(str::to_string),
            ..RemoteOptions::default()
        })
    };
    // The client sees the server's version once it has answered.
    let remote = pusher(Some("flint/1.2.3 (def5678 2026-12-01)"));
    assert_eq!(remote.server_version(), None);
    h.block_on(remote.profile_types(TimeRange::ALL)).unwrap();
    assert_eq!(remote.server_version(), Some("9.8.7 (abc1234 2026-12-10)"));
    // The server is told of each writing agent once, with tonic's name after flint's.
    let bytes = std::fs::read(fixture("cpu-1.pb.gz")).unwrap();
    let labels: Labels = [("__name__".to_string(), "process_cpu".to_string())].into();
    for _ in 0..2 {
        h.block_on(remote.write_raw(labels.clone(), bytes.clone()))
            .unwrap();
    }
    h.block_on(pusher(None).write_raw(labels, bytes)).unwrap();
    let agents = agents.lock().unwrap().clone();
    assert_eq!(agents.len(), 2, "{agents:?}");
    assert!(
        agents[0].starts_with("flint/1.2.3 (def5678 2026-12-01) tonic/"),
        "{agents:?}"
    );
    assert!(agents[1].starts_with("tonic/"), "{agents:?}");
    // A server that names no version sends no header.
    let quiet = Harness::start(ServerOptions::default());
    let remote = quiet.remote(RemoteOptions::default());
    quiet
        .block_on(remote.profile_types(TimeRange::ALL))
        .unwrap();
    assert_eq!(remote.server_version(), None);
    assert!(
        RemoteSource::new(
            &h.url(),
            RemoteOptions {
                user_agent: Some("bad\nagent".into()),
                ..RemoteOptions::default()
            }
        )
        .unwrap_err()
        .to_string()
        .contains("invalid user agent")
    );
}

#[test]
fn extra_headers_are_sent_and_bad_ones_refused() {
    // The token can also go as a raw header.
    let h = Harness::start(ServerOptions {
        bearer_token: Some("t".into()),
        ..ServerOptions::default()
    });
    let remote = h.remote(RemoteOptions {
        headers: vec![("Authorization".into(), "Bearer t".into())],
        ..RemoteOptions::default()
    });
    assert!(h.block_on(remote.profile_types(TimeRange::ALL)).is_ok());
    let bad = RemoteSource::new(
        &h.url(),
        RemoteOptions {
            headers: vec![("bad header".into(), "x".into())],
            ..RemoteOptions::default()
        },
    );
    assert!(bad.unwrap_err().to_string().contains("invalid header name"));
}

#[test]
fn no_data_and_invalid_arguments_map_to_source_errors() {
    let h = Harness::start(ServerOptions::default());
    let remote = h.remote(RemoteOptions::default());
    let nothing = selector(&format!("{CPU}{{endpoint=\"nope\"}}"));
    let all = TimeRange::ALL;
    assert_eq!(
        h.block_on(remote.query(nothing.clone(), QueryTime::Merge(all), Progress::default())),
        Err(SourceError::NoData)
    );
    assert_eq!(
        h.block_on(remote.query_range(nothing.clone(), all, 1_000, Some(vec![]))),
        Err(SourceError::NoData)
    );
    assert!(matches!(
        h.block_on(remote.query_range(nothing, all, 0, None)),
        Err(SourceError::InvalidArgument(_))
    ));

    // Requests RemoteSource never sends, straight to the server.
    let mut client = h.raw_client();
    let ts = |s: i64| {
        Some(prost_types::Timestamp {
            seconds: s,
            nanos: 0,
        })
    };
    let step = Some(prost_types::Duration {
        seconds: 1,
        nanos: 0,
    });
    let range = |query: &str, start, end, step| pq::QueryRangeRequest {
        query: query.to_string(),
        start,
        end,
        limit: 0,
        step,
        sum_by: Vec::new(),
    };
    let invalid = |status: tonic::Status, words: &str| {
        assert_eq!(status.code(), tonic::Code::InvalidArgument, "{status:?}");
        assert!(status.message().contains(words), "{status:?}");
        let mapped = capture::grpc::convert::source_error_of(&status, "s", 1);
        assert!(matches!(mapped, SourceError::InvalidArgument(m) if m.contains(words)));
    };
    let mut send = |r: pq::QueryRangeRequest| h.block_on(client.query_range(r)).unwrap_err();
    invalid(
        send(range("not a selector", ts(0), ts(1 << 40), step)),
        "invalid query",
    );
    invalid(
        send(range("", ts(0), ts(1 << 40), step)),
        "profile-type selection",
    );
    invalid(send(range(CPU, None, ts(1 << 40), step)), "start and end");
    invalid(
        send(range(CPU, ts(5), ts(1), step)),
        "end must not be before start",
    );
    invalid(send(range(CPU, ts(0), ts(1 << 40), None)), "step");

    let mut client = h.raw_client();
    let mut query = |mode: query_request::Mode, options, report: query_request::ReportType| {
        h.block_on(client.query(pq::QueryRequest {
            mode: mode as i32,
            options,
            report_type: report as i32,
            ..Default::default()
        }))
    };
    let merge = Some(query_request::Options::Merge(pq::MergeProfile {
        query: CPU.to_string(),
        start: ts(0),
        end: ts(1 << 40),
    }));
    use query_request::{Mode, ReportType};
    invalid(
        query(Mode::SingleUnspecified, merge.clone(), ReportType::Pprof).unwrap_err(),
        "MODE_SINGLE_UNSPECIFIED needs",
    );
    invalid(
        query(Mode::Diff, merge.clone(), ReportType::Pprof).unwrap_err(),
        "MODE_DIFF",
    );
    #[allow(deprecated, reason = "the deprecated type is refused")]
    let old = ReportType::FlamegraphUnspecified;
    let unsupported = query(Mode::Merge, merge.clone(), old).unwrap_err();
    assert_eq!(unsupported.code(), tonic::Code::Unimplemented);
    assert!(
        unsupported
            .message()
            .contains("REPORT_TYPE_FLAMEGRAPH_TABLE")
    );
    let ok = query(Mode::Merge, merge, ReportType::Pprof)
        .expect("merge")
        .into_inner();
    assert!(
        matches!(ok.report, Some(pq::query_response::Report::Pprof(ref b)) if b.starts_with(&[0x1f, 0x8b]))
    );
    assert_eq!(ok.total, merged_total(&h, &selector(CPU)));
}

#[test]
fn answers_over_the_size_cap_are_refused_naming_the_cap() {
    let h = Harness::start(ServerOptions::default());
    let small = h.remote(RemoteOptions {
        max_response_bytes: 4096,
        ..RemoteOptions::default()
    });
    let error = h
        .block_on(small.query(
            selector(CPU),
            QueryTime::Merge(TimeRange::ALL),
            Progress::default(),
        ))
        .unwrap_err();
    match error {
        SourceError::Failed(m) => assert!(m.contains("4096 bytes"), "{m}"),
        other => panic!("{other:?}"),
    }
    // The same query within the default cap works.
    assert!(
        h.block_on(h.remote(RemoteOptions::default()).query(
            selector(CPU),
            QueryTime::Merge(TimeRange::ALL),
            Progress::default()
        ))
        .is_ok()
    );
    // And a server whose own cap is smaller refuses to send it.
    let capped = Harness::start(ServerOptions {
        max_message_bytes: 4096,
        ..ServerOptions::default()
    });
    let error = capped
        .block_on(capped.remote(RemoteOptions::default()).query(
            selector(CPU),
            QueryTime::Merge(TimeRange::ALL),
            Progress::default(),
        ))
        .unwrap_err();
    assert!(matches!(error, SourceError::Failed(_)), "{error:?}");
}

#[test]
fn an_unreachable_server_is_unavailable_after_retries_and_fast() {
    let runtime = tokio::runtime::Runtime::new().unwrap();
    // A port that was just free: nothing listens there.
    let address = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap();
    let remote = RemoteSource::new(
        &format!("grpc://{address}"),
        RemoteOptions {
            retries: 2,
            retry_backoff: Duration::from_millis(40),
            ..RemoteOptions::default()
        },
    )
    .expect("constructing never connects");
    let started = Instant::now();
    let error = runtime
        .block_on(remote.profile_types(TimeRange::ALL))
        .unwrap_err();
    let elapsed = started.elapsed();
    assert!(matches!(error, SourceError::Unavailable(_)), "{error:?}");
    // 40 + 80 ms of backoff prove the two retries; well under the timeouts.
    assert!(elapsed >= Duration::from_millis(120), "{elapsed:?}");
    assert!(elapsed < Duration::from_secs(3), "{elapsed:?}");
}

#[test]
fn write_raw_reaches_the_sink_and_bad_labels_are_refused() {
    let h = Harness::start(ServerOptions::default());
    let remote = h.remote(RemoteOptions::default());
    let bytes = std::fs::read(fixture("cpu-1.pb.gz")).unwrap();
    let labels: Labels = [("__name__", "process_cpu"), ("job", "api")]
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    h.block_on(remote.write_raw(labels.clone(), bytes.clone()))
        .expect("written");
    assert_eq!(
        *h.sink.written.lock().unwrap(),
        vec![(labels.clone(), bytes.clone())]
    );

    let mut no_name = labels.clone();
    no_name.remove("__name__");
    assert_eq!(
        h.block_on(remote.write_raw(no_name, bytes.clone())),
        Err(SourceError::InvalidArgument(
            "missing __name__ label".into()
        ))
    );
    let mut bad = labels.clone();
    bad.insert("bad-name".into(), "x".into());
    assert!(matches!(
        h.block_on(remote.write_raw(bad, bytes.clone())),
        Err(SourceError::InvalidArgument(m)) if m.contains("bad-name")
    ));
    assert_eq!(
        h.sink.written.lock().unwrap().len(),
        1,
        "nothing more written"
    );

    // Duplicate names can only come from another client.
    use capture::grpc::proto::profilestore::{
        self as ps, profile_store_service_client::ProfileStoreServiceClient,
    };
    let mut client = h
        .block_on(ProfileStoreServiceClient::connect(format!(
            "http://{}",
            h.address
        )))
        .unwrap();
    let label = |n: &str, v: &str| ps::Label {
        name: n.into(),
        value: v.into(),
    };
    let status = h
        .block_on(client.write_raw(ps::WriteRawRequest {
            series: vec![ps::RawProfileSeries {
                labels: Some(ps::LabelSet {
                    labels: vec![label("__name__", "a"), label("job", "x"), label("job", "y")],
                }),
                samples: vec![ps::RawSample {
                    raw_profile: bytes,
                    executable_info: Vec::new(),
                }],
            }],
            ..Default::default()
        }))
        .unwrap_err();
    assert_eq!(status.code(), tonic::Code::InvalidArgument);
    assert!(status.message().contains("duplicate"), "{status:?}");
    assert_eq!(h.sink.written.lock().unwrap().len(), 1);

    // A server without a store says so.
    let read_only = Harness::start_with(ServerOptions::default(), false);
    let error = read_only
        .block_on(
            read_only
                .remote(RemoteOptions::default())
                .write_raw(labels, Vec::new()),
        )
        .unwrap_err();
    assert!(
        matches!(error, SourceError::Failed(ref m) if m.contains("store")),
        "{error:?}"
    );
}

#[test]
fn a_cancelled_query_stops() {
    let h = Harness::start(ServerOptions::default());
    let remote = h.remote(RemoteOptions::default());
    let progress = Progress::default();
    progress.cancel();
    assert_eq!(
        h.block_on(remote.query(selector(CPU), QueryTime::Merge(TimeRange::ALL), progress)),
        Err(SourceError::Cancelled)
    );
}

#[test]
fn construction_checks_the_url_and_files_without_connecting() {
    assert!(
        RemoteSource::new("ftp://h:1", RemoteOptions::default())
            .unwrap_err()
            .to_string()
            .contains("unknown scheme")
    );
    assert!(
        RemoteSource::new(
            "https://h",
            RemoteOptions {
                ca_file: Some("/nonexistent/ca.pem".into()),
                ..RemoteOptions::default()
            }
        )
        .unwrap_err()
        .to_string()
        .contains("CA file")
    );
    let options = RemoteOptions {
        bearer_token: Some("hunter2".into()),
        headers: vec![("x-org".into(), "secret-org".into())],
        ..RemoteOptions::default()
    };
    let shown = format!(
        "{options:?} {:?}",
        ServerOptions {
            bearer_token: Some("hunter2".into()),
            ..ServerOptions::default()
        }
    );
    assert!(
        !shown.contains("hunter2") && !shown.contains("secret-org"),
        "{shown}"
    );
    let tls = RemoteSource::new("https://parca.example.com", options).unwrap();
    assert!(!format!("{tls:?}").contains("hunter2"));
    assert_eq!(tls.url().to_string(), "https://parca.example.com:443");
}

#[test]
fn tls_to_a_cleartext_server_fails_cleanly() {
    let h = Harness::start(ServerOptions::default());
    let remote = RemoteSource::new(
        &format!("https://{}", h.address),
        RemoteOptions {
            retries: 0,
            ..RemoteOptions::default()
        },
    )
    .unwrap();
    let error = h
        .block_on(remote.profile_types(TimeRange::ALL))
        .unwrap_err();
    assert!(matches!(error, SourceError::Unavailable(_)), "{error:?}");
}

/// `flint serve`'s setup: a fresh Store in `dir` served as source and sink on
/// 127.0.0.1, its runtime, its address, and what stops the server.
fn serve_store(
    dir: &std::path::Path,
) -> (
    tokio::runtime::Runtime,
    SocketAddr,
    Arc<capture::Store>,
    tokio::sync::oneshot::Sender<()>,
) {
    let _ = std::fs::remove_dir_all(dir);
    let store = Arc::new(capture::Store::open(dir, capture::StoreOptions::default()).unwrap());
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let listener = runtime.block_on(bind("127.0.0.1:0")).unwrap();
    let address = listener.local_addr().unwrap();
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let source: Arc<dyn ProfileSource> = store.clone();
    let sink: Arc<dyn ProfileSink> = store.clone();
    runtime.spawn(serve(
        listener,
        source,
        Some(sink),
        ServerOptions::default(),
        async {
            let _ = stopped.await;
        },
    ));
    (runtime, address, store, stop)
}

/// `flint serve`'s setup: a Store, written through WriteRaw on the wire, answers every
/// query through gRPC exactly as it answers directly.
#[test]
fn a_store_written_through_write_raw_answers_through_grpc_as_directly() {
    let dir = std::env::temp_dir().join(format!("flint-grpc-store-{}", std::process::id()));
    let (runtime, address, store, stop) = serve_store(&dir);
    let url = format!("grpc://{address}");
    let remote = RemoteSource::new(&url, RemoteOptions::default()).unwrap();
    for (name, job) in [
        ("cpu-1.pb.gz", "a"),
        ("cpu-2.pb.gz", "b"),
        ("cpu-3.pb.gz", "a"),
        ("heap.pb.gz", "a"),
    ] {
        let bytes = std::fs::read(fixture(name)).unwrap();
        let p = profile_model::codec::decode(&bytes).unwrap();
        let labels = Labels::from([
            (
                "__name__".to_string(),
                capture::files::default_profile_name(&p),
            ),
            ("job".to_string(), job.to_string()),
        ]);
        runtime.block_on(remote.write_raw(labels, bytes)).unwrap();
    }
    // 2000 to 2100: what a Timestamp carries.
    let range = TimeRange {
        start_nanos: 946_684_800_000_000_000,
        end_nanos: 4_102_444_800_000_000_000,
    };
    let types = runtime.block_on(remote.profile_types(range)).unwrap();
    assert_eq!(types, runtime.block_on(store.profile_types(range)).unwrap());
    assert!(types.len() >= 6, "{types:?}");
    for t in &types {
        let s = Selector {
            profile_type: t.clone(),
            matchers: Vec::new(),
        };
        let labels = runtime.block_on(remote.labels(s.clone(), range)).unwrap();
        assert_eq!(
            labels,
            runtime.block_on(store.labels(s.clone(), range)).unwrap()
        );
        assert!(labels.contains(&"job".to_string()), "{labels:?}");
        for name in &labels {
            assert_eq!(
                runtime.block_on(remote.values(name.clone(), s.clone(), range)),
                runtime.block_on(store.values(name.clone(), s.clone(), range)),
            );
        }
        for sum_by in [None, Some(vec![]), Some(vec!["job".to_string()])] {
            assert_eq!(
                runtime
                    .block_on(remote.query_range(s.clone(), range, 1_000_000_000, sum_by.clone()))
                    .unwrap(),
                // The server sums no level by labels, as Parca.
                runtime
                    .block_on(store.query_range(
                        s.clone(),
                        range,
                        1_000_000_000,
                        sum_by.clone().filter(|_| t.delta)
                    ))
                    .unwrap(),
                "{t} {sum_by:?}"
            );
        }
        for matchers in ["", "{job=\"a\"}"] {
            let s = selector(&format!("{t}{matchers}"));
            let got = runtime
                .block_on(remote.query(s.clone(), QueryTime::Merge(range), Progress::default()))
                .unwrap();
            let want = runtime
                .block_on(store.query(s.clone(), QueryTime::Merge(range), Progress::default()))
                .unwrap();
            assert_same_profile(&got, &want);
        }
    }
    drop(stop);
    drop(store);
    let _ = std::fs::remove_dir_all(dir);
}

/// `https://`: a server with a certificate the client trusts through `ca_file` answers;
/// the same server is refused when its certificate is not trusted.
#[test]
fn tls_with_a_ca_file_connects_and_an_untrusted_certificate_is_refused() {
    let cert = rcgen::generate_simple_self_signed(vec!["localhost".to_string()]).unwrap();
    let cert_pem = cert.cert.pem();
    let key_pem = cert.signing_key.serialize_pem();
    let dir = std::env::temp_dir().join(format!("flint-grpc-tls-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let ca = dir.join("ca.pem");
    std::fs::write(&ca, &cert_pem).unwrap();
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let listener = runtime.block_on(bind("127.0.0.1:0")).unwrap();
    let port = listener.local_addr().unwrap().port();
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let options = ServerOptions {
        tls: Some(capture::grpc::TlsIdentity {
            cert_pem: cert_pem.into_bytes(),
            key_pem: key_pem.into_bytes(),
        }),
        ..ServerOptions::default()
    };
    let source: Arc<dyn ProfileSource> = file_source();
    runtime.spawn(serve(listener, source.clone(), None, options, async {
        let _ = stopped.await;
    }));
    let url = format!("https://localhost:{port}");
    let trusted = RemoteSource::new(
        &url,
        RemoteOptions {
            ca_file: Some(ca),
            ..RemoteOptions::default()
        },
    )
    .unwrap();
    let types = runtime
        .block_on(trusted.profile_types(TimeRange::ALL))
        .expect("TLS with the CA file");
    assert_eq!(
        types,
        runtime
            .block_on(source.profile_types(TimeRange::ALL))
            .unwrap()
    );
    let untrusted = RemoteSource::new(
        &url,
        RemoteOptions {
            retries: 0,
            ..RemoteOptions::default()
        },
    )
    .unwrap();
    let err = runtime
        .block_on(untrusted.profile_types(TimeRange::ALL))
        .expect_err("a self-signed certificate is not in the system's roots");
    assert!(matches!(err, SourceError::Unavailable(_)), "{err:?}");
    drop(stop);
    let _ = std::fs::remove_dir_all(dir);
}

/// A source whose merges hold the thread they run on until the test lets them go,
/// as a long merge of a local source does; everything else is a [`FileSource`]'s.
struct SlowMergeSource {
    files: Arc<FileSource>,
    entered: Mutex<std::sync::mpsc::Sender<()>>,
    go: Mutex<std::sync::mpsc::Receiver<()>>,
}

impl ProfileSource for SlowMergeSource {
    fn profile_types(&self, range: TimeRange) -> SourceFuture<'_, Vec<capture::ProfileType>> {
        self.files.profile_types(range)
    }

    fn labels(&self, selector: Selector, range: TimeRange) -> SourceFuture<'_, Vec<String>> {
        self.files.labels(selector, range)
    }

    fn values(
        &self,
        name: String,
        selector: Selector,
        range: TimeRange,
    ) -> SourceFuture<'_, Vec<String>> {
        self.files.values(name, selector, range)
    }

    fn query_range(
        &self,
        selector: Selector,
        range: TimeRange,
        step_nanos: i64,
        sum_by: Option<Vec<String>>,
    ) -> SourceFuture<'_, Vec<capture::Series>> {
        self.files.query_range(selector, range, step_nanos, sum_by)
    }

    fn query(
        &self,
        selector: Selector,
        time: QueryTime,
        progress: Progress,
    ) -> SourceFuture<'_, Profile> {
        Box::pin(async move {
            // Blocks the thread, not just the task.
            self.entered.lock().unwrap().send(()).unwrap();
            self.go.lock().unwrap().recv().unwrap();
            self.files.query(selector, time, progress).await
        })
    }
}

#[test]
fn a_long_merge_does_not_hold_up_other_requests() {
    // One worker thread: a merge run on it would leave nothing to answer with.
    let server = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
        .unwrap();
    let (entered_tx, entered) = std::sync::mpsc::channel();
    let (go, go_rx) = std::sync::mpsc::channel();
    let source: Arc<dyn ProfileSource> = Arc::new(SlowMergeSource {
        files: file_source(),
        entered: Mutex::new(entered_tx),
        go: Mutex::new(go_rx),
    });
    let listener = server.block_on(bind("127.0.0.1:0")).unwrap();
    let url = format!("grpc://{}", listener.local_addr().unwrap());
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    server.spawn(serve(
        listener,
        source,
        None,
        ServerOptions::default(),
        async {
            let _ = stopped.await;
        },
    ));

    let client = tokio::runtime::Runtime::new().unwrap();
    let remote = Arc::new(RemoteSource::new(&url, RemoteOptions::default()).unwrap());
    let merging = {
        let remote = remote.clone();
        client.spawn(async move {
            remote
                .query(
                    selector(CPU),
                    QueryTime::Merge(TimeRange::ALL),
                    Progress::default(),
                )
                .await
        })
    };
    entered
        .recv_timeout(Duration::from_secs(30))
        .expect("the merge reached the source");
    let types = client.block_on(async {
        tokio::time::timeout(
            Duration::from_secs(20),
            remote.profile_types(TimeRange::ALL),
        )
        .await
    });
    let types = types.expect("the server answered while the merge ran");
    assert!(types.unwrap().iter().any(|t| t.to_string() == CPU));
    go.send(()).unwrap();
    let merged = client
        .block_on(merging)
        .unwrap()
        .expect("the merge finishes");
    assert!(merged.total(0) > 0);
    let _ = stop.send(());
}

/// Parca's WriteRaw is all or nothing: a request holding a good profile and then a bad
/// one is refused, and the good one is not stored either (it had been).
#[test]
fn a_refused_write_raw_leaves_the_store_as_it_was() {
    use capture::grpc::proto::profilestore::{
        self as ps, profile_store_service_client::ProfileStoreServiceClient,
    };
    let dir = std::env::temp_dir().join(format!("flint-grpc-atomic-{}", std::process::id()));
    let (runtime, address, store, stop) = serve_store(&dir);
    let mut client = runtime
        .block_on(ProfileStoreServiceClient::connect(format!(
            "http://{address}"
        )))
        .unwrap();
    let good = std::fs::read(fixture("cpu-1.pb.gz")).unwrap();
    let request = |profiles: Vec<Vec<u8>>| ps::WriteRawRequest {
        series: vec![ps::RawProfileSeries {
            labels: Some(ps::LabelSet {
                labels: vec![ps::Label {
                    name: "__name__".into(),
                    value: "process_cpu".into(),
                }],
            }),
            samples: profiles
                .into_iter()
                .map(|raw_profile| ps::RawSample {
                    raw_profile,
                    executable_info: Vec::new(),
                })
                .collect(),
        }],
        ..Default::default()
    };
    let status = runtime
        .block_on(client.write_raw(request(vec![good.clone(), b"not a profile".to_vec()])))
        .unwrap_err();
    assert_eq!(status.code(), tonic::Code::InvalidArgument, "{status:?}");
    assert_eq!(store.stats().profiles, 0, "nothing of a refused request");
    runtime
        .block_on(client.write_raw(request(vec![good.clone(), good])))
        .expect("a good request is stored");
    assert_eq!(store.stats().profiles, 2);
    let _ = stop.send(());
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_request_over_the_size_limit_is_resource_exhausted() {
    use capture::grpc::proto::profilestore::profile_store_service_client::ProfileStoreServiceClient;
    use capture::grpc::proto::profilestore::{RawProfileSeries, RawSample, WriteRawRequest};
    let h = Harness::start(ServerOptions {
        max_message_bytes: 4096,
        ..ServerOptions::default()
    });
    let url = format!("http://{}", h.address);
    let mut client = h
        .block_on(ProfileStoreServiceClient::connect(url))
        .expect("connects");
    let request = |size: usize| WriteRawRequest {
        series: vec![RawProfileSeries {
            labels: None,
            samples: vec![RawSample {
                raw_profile: vec![0; size],
                executable_info: Vec::new(),
            }],
        }],
        ..Default::default()
    };
    // As gRPC servers answer a message over their limit, not OUT_OF_RANGE.
    let status = h.block_on(client.write_raw(request(8192))).unwrap_err();
    assert_eq!(status.code(), tonic::Code::ResourceExhausted, "{status:?}");
    // Under the limit the request is read (and these bytes refused as no profile).
    let status = h.block_on(client.write_raw(request(64))).unwrap_err();
    assert_eq!(status.code(), tonic::Code::InvalidArgument, "{status:?}");
}

#[test]
fn windows_include_both_ends_and_single_matches_to_the_millisecond_as_parca() {
    let h = Harness::start(ServerOptions::default());
    let cpu = selector(CPU);
    let all = TimeRange::ALL;
    let series = h
        .block_on(h.direct.query_range(cpu.clone(), all, 1, Some(vec![])))
        .unwrap();
    let mut times: Vec<i64> = series[0].points.iter().map(|p| p.time_nanos).collect();
    times.sort_unstable();
    assert_eq!(times.len(), 4, "cpu, cpu-1..3");
    let total_at = |t: i64| direct_at(&h, &cpu, t).total(0);
    let ts = |t: i64| Some(timestamp(t));
    let mut client = h.raw_client();
    let mut ask = |options| {
        h.block_on(client.query(pq::QueryRequest {
            mode: options_mode(&options) as i32,
            options: Some(options),
            report_type: query_request::ReportType::Pprof as i32,
            ..Default::default()
        }))
        .map(|r| r.into_inner().total)
    };
    let merge = |start, end| {
        query_request::Options::Merge(pq::MergeProfile {
            query: CPU.to_string(),
            start: ts(start),
            end: ts(end),
        })
    };
    // From the second profile's time to the last's: both ends in.
    let want: i64 = times[1..].iter().map(|t| total_at(*t)).sum();
    assert_eq!(ask(merge(times[1], times[3])).unwrap(), want);
    // start = end: the profile of that instant.
    assert_eq!(ask(merge(times[2], times[2])).unwrap(), total_at(times[2]));
    // SINGLE at any nanosecond of the profile's millisecond.
    let last_of_ms = times[2].div_euclid(1_000_000) * 1_000_000 + 999_999;
    let single = query_request::Options::Single(pq::SingleProfile {
        query: CPU.to_string(),
        time: ts(last_of_ms),
    });
    assert_eq!(ask(single).unwrap(), total_at(times[2]));
    // flint's own client keeps its half-open ranges: the end is left out.
    let remote = h.remote(RemoteOptions::default());
    let range = TimeRange {
        start_nanos: times[1],
        end_nanos: times[3],
    };
    let got = h
        .block_on(remote.query(cpu.clone(), QueryTime::Merge(range), Progress::default()))
        .unwrap();
    assert_eq!(got.total(0), total_at(times[1]) + total_at(times[2]));
}

/// The query mode of a request's options.
fn options_mode(options: &query_request::Options) -> query_request::Mode {
    match options {
        query_request::Options::Single(_) => query_request::Mode::SingleUnspecified,
        query_request::Options::Merge(_) => query_request::Mode::Merge,
        query_request::Options::Diff(_) => query_request::Mode::Diff,
    }
}

/// A type that is no delta (bytes in use) is named, ranged and counted as Parca does:
/// no `:delta` without a duration, in a file as in the store; one point per step at
/// the first profile's own time, counting the others; series never summed; the
/// "rate" on the wire is the value.
#[test]
fn levels_are_named_and_ranged_as_parca_does() {
    let dir = std::env::temp_dir().join(format!("flint-grpc-levels-{}", std::process::id()));
    let (runtime, address, _store, stop) = serve_store(&dir);
    let remote = RemoteSource::new(&format!("grpc://{address}"), RemoteOptions::default()).unwrap();
    let heap =
        profile_model::codec::decode(&std::fs::read(fixture("heap.pb.gz")).unwrap()).unwrap();
    assert_eq!(heap.duration_nanos, 0, "a Go heap profile has no duration");
    let t0 = 1_800_000_000_000_000_000_i64;
    let offsets = [0, 1_000_000_000, 2_000_000_000, 100_000_000_000];
    for (i, offset) in offsets.iter().enumerate() {
        let mut p = heap.clone();
        p.time_nanos = t0 + offset;
        let labels = Labels::from([
            ("__name__".to_string(), "memory".to_string()),
            ("job".to_string(), "api".to_string()),
            ("pod".to_string(), format!("api-{}", i % 2)),
        ]);
        let bytes = profile_model::codec::encode_gzip(&p);
        runtime.block_on(remote.write_raw(labels, bytes)).unwrap();
    }
    // The file and the store name the heap's types alike, none of them a delta.
    let in_file: Vec<String> = capture::files::profile_types_of(&heap)
        .iter()
        .map(ToString::to_string)
        .collect();
    let all = TimeRange::ALL;
    let mut served: Vec<String> = (runtime.block_on(remote.profile_types(all)).unwrap())
        .iter()
        .map(ToString::to_string)
        .collect();
    served.sort();
    let mut expected = in_file.clone();
    expected.sort();
    assert_eq!(served, expected);
    assert!(in_file.contains(&"memory:inuse_space:bytes:space:bytes".to_string()));

    let inuse = heap.find_sample_type("inuse_space").unwrap();
    let value = heap.total(inuse);
    let mut client = runtime
        .block_on(QueryServiceClient::connect(format!("http://{address}")))
        .unwrap();
    let response = runtime
        .block_on(client.query_range(pq::QueryRangeRequest {
            query: "memory:inuse_space:bytes:space:bytes".to_string(),
            start: Some(timestamp(t0 - 60_000_000_000)),
            end: Some(timestamp(t0 + 600_000_000_000)),
            step: Some(duration(60_000_000_000)),
            // Ignored for levels, as by Parca: every label set is its own series.
            sum_by: vec!["job".to_string()],
            ..Default::default()
        }))
        .unwrap()
        .into_inner();
    // (labels, [(time, value, value per second, count)]) per series.
    type Got = Vec<(Vec<(String, String)>, Vec<(i64, i64, f64, i32)>)>;
    let mut got: Got = response
        .series
        .iter()
        .map(|s| {
            let labels = (s.labelset.as_ref().unwrap().labels.iter())
                .map(|l| (l.name.clone(), l.value.clone()))
                .collect();
            let points = (s.samples.iter())
                .map(|p| {
                    let t = nanos_of(p.timestamp.as_ref().unwrap());
                    (t, p.value, p.value_per_second, p.count)
                })
                .collect();
            (labels, points)
        })
        .collect();
    got.sort_by(|a, b| a.0.cmp(&b.0));
    let labels = |pod: &str| {
        vec![
            ("job".to_string(), "api".to_string()),
            ("pod".to_string(), pod.to_string()),
        ]
    };
    let v = value as f64;
    // The step from t0 holds pod api-0's profiles at t0 and t0+2s (the first shown,
    // at its own time, counting both) and api-1's at t0+1s; api-1's at t0+100s is
    // alone in the next step.
    assert_eq!(
        got,
        vec![
            (labels("api-0"), vec![(t0, value, v, 2)]),
            (
                labels("api-1"),
                vec![
                    (t0 + offsets[1], value, v, 1),
                    (t0 + offsets[3], value, v, 1)
                ]
            ),
        ]
    );
    drop(stop);
    let _ = std::fs::remove_dir_all(dir);
}

/// QueryRange of a CPU profile's sample count gives CPU time, as Parca computes it:
/// the count times the period, in the period's type and unit; in Go's profiles, the
/// same values as the `cpu` type.
#[test]
fn sample_counts_are_ranged_as_cpu_time_as_parca_does() {
    let h = Harness::start(ServerOptions::default());
    let mut client = h.raw_client();
    let ask = |client: &mut QueryServiceClient<tonic::transport::Channel>, query: &str| {
        h.block_on(client.query_range(pq::QueryRangeRequest {
            query: query.to_string(),
            start: Some(timestamp(946_684_800_000_000_000)),
            end: Some(timestamp(4_102_444_800_000_000_000)),
            step: Some(duration(1_000_000_000)),
            ..Default::default()
        }))
        .unwrap()
        .into_inner()
        .series
    };
    let counts = ask(
        &mut client,
        "process_cpu:samples:count:cpu:nanoseconds:delta",
    );
    let cpu = ask(&mut client, CPU);
    assert_eq!(counts.len(), 1);
    let unit = counts[0].sample_type.as_ref().unwrap();
    assert_eq!(
        (unit.r#type.as_str(), unit.unit.as_str()),
        ("cpu", "nanoseconds")
    );
    let values = |series: &[pq::MetricsSeries]| -> Vec<(i64, i64)> {
        series[0]
            .samples
            .iter()
            .map(|p| (p.timestamp.as_ref().unwrap().seconds, p.value))
            .collect()
    };
    assert_eq!(values(&counts), values(&cpu));
    assert!(
        values(&cpu).iter().all(|(_, v)| *v > 1_000_000),
        "{:?}",
        values(&cpu)
    );
    // flint's own reading of it: CPU time, with a rate in cores.
    let direct = h
        .block_on(h.direct.query_range(
            selector("process_cpu:samples:count:cpu:nanoseconds:delta"),
            TimeRange::ALL,
            1_000_000_000,
            Some(vec![]),
        ))
        .unwrap();
    let rate = direct[0].points[0].value_per_second.unwrap();
    assert!(rate > 1e8 && rate < 4e9, "CPU ns per second: {rate}");
}

/// A PPROF merge of all CPU profiles with `shape` applied to the request: the answer
/// decoded and its `filtered`, or the refusal.
fn ask_merge(
    h: &Harness,
    shape: impl FnOnce(&mut pq::QueryRequest),
) -> Result<(Profile, i64), tonic::Status> {
    let mut request = pq::QueryRequest {
        mode: query_request::Mode::Merge as i32,
        options: Some(query_request::Options::Merge(pq::MergeProfile {
            query: CPU.to_string(),
            start: Some(timestamp(i64::MIN / 2)),
            end: Some(timestamp(i64::MAX / 2)),
        })),
        report_type: query_request::ReportType::Pprof as i32,
        ..Default::default()
    };
    shape(&mut request);
    let answer = h.block_on(h.raw_client().query(request))?.into_inner();
    let Some(pq::query_response::Report::Pprof(bytes)) = answer.report else {
        panic!("not a pprof report");
    };
    Ok((
        profile_model::codec::decode(&bytes).unwrap(),
        answer.filtered,
    ))
}

/// The direct merge of all CPU profiles, CPU time only.
fn direct_cpu_merge(h: &Harness) -> Profile {
    let cpu = selector(CPU);
    let all = QueryTime::Merge(TimeRange::ALL);
    restricted(
        h.block_on(h.direct.query(cpu.clone(), all, Progress::default()))
            .unwrap(),
        &cpu,
    )
}

/// Function names (leaf first) → summed value, of each sample's stack as `rewrite`
/// turns it (its location ids, leaf first; `None` leaves the sample out).
fn stacks_by(
    p: &Profile,
    rewrite: impl Fn(&[u32]) -> Option<Vec<u32>>,
) -> BTreeMap<Vec<String>, i64> {
    let mut out = BTreeMap::new();
    for i in 0..p.samples.len() {
        let Some(stack) = rewrite(p.samples.stack(i)) else {
            continue;
        };
        let names = stack
            .iter()
            .flat_map(|&l| &p.locations[l as usize].lines)
            .map(|l| p.str(p.functions[l.function as usize].name).to_string())
            .collect();
        *out.entry(names).or_insert(0) += p.samples.values[0][i];
    }
    out.retain(|_, v| *v != 0);
    out
}

/// The function names of a location's lines.
fn location_names(p: &Profile, location: u32) -> Vec<&str> {
    (p.locations[location as usize].lines.iter())
        .map(|l| p.str(p.functions[l.function as usize].name))
        .collect()
}

/// A `filter` of the request: a stack (or frame) filter on the function name.
fn function_filter(stack: bool, condition: pq::string_condition::Condition) -> pq::Filter {
    let criteria = pq::FilterCriteria {
        function_name: Some(pq::StringCondition {
            condition: Some(condition),
        }),
        ..Default::default()
    };
    pq::Filter {
        filter: Some(match stack {
            true => pq::filter::Filter::StackFilter(pq::StackFilter {
                filter: Some(pq::stack_filter::Filter::Criteria(criteria)),
            }),
            false => pq::filter::Filter::FrameFilter(pq::FrameFilter {
                filter: Some(pq::frame_filter::Filter::Criteria(criteria)),
            }),
        }),
    }
}

#[test]
fn a_stack_filter_keeps_the_stacks_with_a_match_and_reports_the_rest_as_filtered() {
    use pq::string_condition::Condition;
    let h = Harness::start(ServerOptions::default());
    let direct = direct_cpu_merge(&h);
    let has_sha = |s: &[u32]| {
        (s.iter()).any(|&l| {
            location_names(&direct, l)
                .iter()
                .any(|n| n.contains("sha256"))
        })
    };
    let want = stacks_by(&direct, |s| has_sha(s).then(|| s.to_vec()));
    let kept: i64 = want.values().sum();
    assert!(kept > 0 && kept < direct.total(0), "{kept}");
    let contains = function_filter(true, Condition::Contains("SHA256".into()));
    let (got, filtered) = ask_merge(&h, |r| r.filter = vec![contains]).unwrap();
    assert_eq!(stacks_by(&got, |s| Some(s.to_vec())), want);
    assert_eq!(filtered, direct.total(0) - kept);
    // Negated: no line of the stack may match.
    let want = stacks_by(&direct, |s| (!has_sha(s)).then(|| s.to_vec()));
    let not_contains = function_filter(true, Condition::NotContains("sha256".into()));
    let (got, filtered) = ask_merge(&h, |r| r.filter = vec![not_contains]).unwrap();
    assert_eq!(stacks_by(&got, |s| Some(s.to_vec())), want);
    assert_eq!(filtered, kept);
}

#[test]
fn a_frame_filter_keeps_the_matching_frames_and_filters_no_value() {
    use pq::string_condition::Condition;
    let h = Harness::start(ServerOptions::default());
    let direct = direct_cpu_merge(&h);
    // Go's frames are one line each here, so a frame is a location.
    let sha = |&l: &u32| location_names(&direct, l) == ["crypto/sha256.block"];
    let want = stacks_by(&direct, |s| {
        let kept: Vec<u32> = s.iter().copied().filter(sha).collect();
        (!kept.is_empty()).then_some(kept)
    });
    assert!(!want.is_empty());
    let equal = function_filter(false, Condition::Equal("crypto/SHA256.block".into()));
    let (got, filtered) = ask_merge(&h, |r| r.filter = vec![equal]).unwrap();
    assert_eq!(stacks_by(&got, |s| Some(s.to_vec())), want);
    assert_eq!(filtered, 0);
}

#[test]
fn sandwich_by_function_cuts_a_merge_at_the_function_as_parca() {
    let h = Harness::start(ServerOptions::default());
    let direct = direct_cpu_merge(&h);
    let function = "crypto/sha256.block";
    let first_is = |&l: &u32| location_names(&direct, l).first() == Some(&function);
    // Callees: from the leaf up to the first match.
    let want = stacks_by(&direct, |s| {
        s.iter().position(first_is).map(|i| s[..=i].to_vec())
    });
    assert!(!want.is_empty() && want.values().sum::<i64>() < direct.total(0));
    let sandwich = |r: &mut pq::QueryRequest| r.sandwich_by_function = Some(function.into());
    let (got, filtered) = ask_merge(&h, sandwich).unwrap();
    assert_eq!(stacks_by(&got, |s| Some(s.to_vec())), want);
    assert_eq!(filtered, 0);
    // Callers, inverted: from the root down to the last match.
    let want = stacks_by(&direct, |s| {
        let i = s.iter().rposition(first_is)?;
        Some(s[i..].iter().rev().copied().collect())
    });
    let (got, _) = ask_merge(&h, |r| {
        sandwich(r);
        r.invert_call_stack = Some(true);
    })
    .unwrap();
    assert_eq!(stacks_by(&got, |s| Some(s.to_vec())), want);
}

#[test]
fn invert_call_stack_answers_stacks_root_first() {
    let h = Harness::start(ServerOptions::default());
    let direct = direct_cpu_merge(&h);
    let want = stacks_by(&direct, |s| Some(s.iter().rev().copied().collect()));
    assert_ne!(want, stacks_by(&direct, |s| Some(s.to_vec())));
    let (got, filtered) = ask_merge(&h, |r| r.invert_call_stack = Some(true)).unwrap();
    assert_eq!(stacks_by(&got, |s| Some(s.to_vec())), want);
    assert_eq!(filtered, 0);
}

#[test]
fn group_by_is_checked_and_a_merge_keeps_the_labels_it_names() {
    let h = Harness::start(ServerOptions::default());
    let group_by = |fields: &[&str]| {
        let fields = fields.iter().map(|f| f.to_string()).collect();
        move |r: &mut pq::QueryRequest| r.group_by = Some(pq::GroupBy { fields })
    };
    let refused = ask_merge(&h, group_by(&["function_name", "labels"])).unwrap_err();
    assert_eq!(refused.code(), tonic::Code::InvalidArgument);
    assert_eq!(refused.message(), "invalid group by field: labels");
    let direct = direct_cpu_merge(&h);
    let only = |keys: &[&str]| -> BTreeMap<StackKey, i64> {
        let mut out = BTreeMap::new();
        for ((frames, labels), v) in stacks(&direct) {
            let labels = labels
                .into_iter()
                .filter(|(k, _)| keys.contains(&k.as_str()));
            *out.entry((frames, labels.collect())).or_insert(0) += v;
        }
        out
    };
    assert_ne!(only(&[]), stacks(&direct), "the profiles have labels");
    let (got, _) = ask_merge(&h, group_by(&["labels.endpoint", "timestamp"])).unwrap();
    assert_eq!(stacks(&got), only(&["endpoint"]));
    assert!(stacks(&got).keys().any(|(_, labels)| !labels.is_empty()));
    let (got, _) = ask_merge(&h, group_by(&["labels.nothing"])).unwrap();
    assert_eq!(stacks(&got), only(&[]));
}

/// The answer to a Query for `report` of `options`, trimmed at `threshold` percent.
fn ask_report(
    h: &Harness,
    report: query_request::ReportType,
    options: query_request::Options,
    threshold: Option<f32>,
) -> Result<pq::QueryResponse, tonic::Status> {
    let mut client = h.raw_client();
    h.block_on(client.query(pq::QueryRequest {
        mode: options_mode(&options) as i32,
        options: Some(options),
        report_type: report as i32,
        node_trim_threshold: threshold,
        ..Default::default()
    }))
    .map(tonic::Response::into_inner)
}

/// The time of each CPU profile the harness serves, from its source directly.
fn cpu_times(h: &Harness) -> Vec<i64> {
    let series = h
        .block_on(
            h.direct
                .query_range(selector(CPU), TimeRange::ALL, 1, Some(vec![])),
        )
        .unwrap();
    series[0].points.iter().map(|p| p.time_nanos).collect()
}

/// (total, time) of each CPU profile served, smallest total first.
fn cpu_profiles_by_total(h: &Harness) -> Vec<(i64, i64)> {
    let cpu = selector(CPU);
    let mut profiles: Vec<(i64, i64)> = (cpu_times(h).into_iter())
        .map(|t| (direct_at(h, &cpu, t).total(0), t))
        .collect();
    profiles.sort_unstable();
    profiles
}

/// The request options of a merge of every profile of `query`.
fn merge_all(query: &str) -> query_request::Options {
    query_request::Options::Merge(pq::MergeProfile {
        query: query.to_string(),
        start: Some(timestamp(0)),
        end: Some(timestamp(1 << 62)),
    })
}

/// The request options of the single CPU profile at `time`.
fn single_at(time: i64) -> query_request::Options {
    query_request::Options::Single(pq::SingleProfile {
        query: CPU.to_string(),
        time: Some(timestamp(time)),
    })
}

/// The single profile of cpu.pb.gz (the one whose total is `total`) as request options.
fn single_with_total(h: &Harness, total: i64) -> query_request::Options {
    let profiles = cpu_profiles_by_total(h);
    let time = profiles
        .iter()
        .find(|p| p.0 == total)
        .expect("a profile with that total");
    single_at(time.1)
}

/// The PPROF report of `options`, decoded.
fn pprof_report(h: &Harness, options: query_request::Options) -> Profile {
    let answer = ask_report(h, query_request::ReportType::Pprof, options, None).unwrap();
    let Some(pq::query_response::Report::Pprof(bytes)) = answer.report else {
        panic!("no pprof report");
    };
    profile_model::codec::decode(&bytes).unwrap()
}

/// `go tool pprof -top`'s (name without inline marks, flat, cum) in nanoseconds, and
/// its total.
fn go_top(golden: &str) -> (Vec<(String, i64, i64)>, i64) {
    let text = std::fs::read_to_string(fixture("golden").join(golden)).unwrap();
    let nanos = |s: &str| (s.trim_end_matches('s').parse::<f64>().unwrap() * 1e9).round() as i64;
    let total = text
        .lines()
        .find_map(|l| l.split("Total samples = ").nth(1))
        .and_then(|t| t.split_whitespace().next())
        .map(nanos)
        .unwrap();
    let rows = text
        .lines()
        .skip_while(|l| !l.trim_start().starts_with("flat"))
        .skip(1)
        .map(|l| {
            let words: Vec<&str> = l.split_whitespace().collect();
            let name = words[5..].join(" ");
            let name = name
                .trim_end_matches(" (inline)")
                .trim_end_matches(" (partial-inline)");
            (name.to_string(), nanos(words[0]), nanos(words[3]))
        })
        .collect();
    (rows, total)
}

/// The name of the function of `line` of `location` in `p`.
fn line_name(p: &Profile, location: u32, line: usize) -> String {
    let f = p.locations[location as usize].lines[line].function;
    p.str(p.functions[f as usize].name).to_string()
}

/// Parca's TOP cumulative, computed from the pprof report `p`: per function, the value
/// of every sample once per location whose first line is that function.
fn parca_top_cumulative(p: &Profile, column: usize) -> BTreeMap<String, i64> {
    let mut cum = BTreeMap::new();
    for i in 0..p.samples.len() {
        for &loc in p.samples.stack(i) {
            if !p.locations[loc as usize].lines.is_empty() {
                *cum.entry(line_name(p, loc, 0)).or_insert(0) += p.samples.values[column][i];
            }
        }
    }
    cum
}

/// (function name, flat, cum, diff) of every node of a TOP answer.
fn top_rows(answer: &pq::QueryResponse) -> Vec<(String, i64, i64, i64)> {
    let Some(pq::query_response::Report::Top(top)) = &answer.report else {
        panic!("no top report");
    };
    assert_eq!(top.reported as usize, top.list.len());
    (top.list.iter())
        .map(|n| {
            let f = n.meta.as_ref().and_then(|m| m.function.as_ref());
            let name = f.map_or(String::new(), |f| f.name.clone());
            (name, n.flat, n.cumulative, n.diff)
        })
        .collect()
}

/// TOP of cpu.pb.gz: flat per function as `go tool pprof -top` has it, cumulative as
/// Parca counts it (per location, first line only), sorted by flat.
#[test]
fn top_has_pprofs_flat_and_parcas_cumulative_per_function() {
    let h = Harness::start(ServerOptions::default());
    let (golden, total) = go_top("cpu.sample_index=1.top.txt");
    let single = single_with_total(&h, total);
    let answer = ask_report(&h, query_request::ReportType::Top, single.clone(), None).unwrap();
    assert_eq!(answer.total, total);
    let rows = top_rows(&answer);
    let flat: BTreeMap<&str, i64> = rows.iter().map(|r| (r.0.as_str(), r.1)).collect();
    assert_eq!(flat.len(), rows.len(), "one node per function");
    for (name, want, _) in &golden {
        assert_eq!(
            flat.get(name.as_str()).copied().unwrap_or(0),
            *want,
            "{name}"
        );
    }
    assert_eq!(rows.iter().map(|r| r.1).sum::<i64>(), total);
    assert!(rows.windows(2).all(|w| w[0].1 >= w[1].1), "sorted by flat");
    let cum = parca_top_cumulative(&pprof_report(&h, single), 0);
    for (name, _, got, _) in &rows {
        assert_eq!(Some(got), cum.get(name), "{name}");
    }
    // Recursion counts a location once per occurrence, where pprof counts once per sample.
    let fib = |rows: &[(String, i64, i64)]| rows.iter().find(|r| r.0 == "main.fib").map(|r| r.2);
    let go_fib = fib(&golden).unwrap();
    assert!(cum["main.fib"] > go_fib, "{} {go_fib}", cum["main.fib"]);
}

/// The names of sample `i`'s frames from the root down, each location's lines
/// outermost first.
fn names_from_root(p: &Profile, i: usize) -> Vec<String> {
    let mut names = Vec::new();
    for &loc in p.samples.stack(i).iter().rev() {
        for line in (0..p.locations[loc as usize].lines.len()).rev() {
            names.push(line_name(p, loc, line));
        }
    }
    names
}

/// CALLGRAPH of cpu.pb.gz against Parca's rules applied to its PPROF report: per
/// function, cumulative per occurrence, flat on the leaf location's lines, an edge from
/// each frame to the one below it; only nodes under 0.5% of the total are pruned.
#[test]
fn callgraph_nodes_and_edges_are_parcas_sums_of_the_pprof_report() {
    let h = Harness::start(ServerOptions::default());
    let single = single_with_total(&h, go_top("cpu.sample_index=1.top.txt").1);
    let p = pprof_report(&h, single.clone());
    let (mut cum, mut flat, mut edges) = (BTreeMap::new(), BTreeMap::new(), BTreeMap::new());
    for i in 0..p.samples.len() {
        let value = p.samples.values[0][i];
        let names = names_from_root(&p, i);
        let leaf_lines = p.locations[p.samples.stack(i)[0] as usize].lines.len();
        for (depth, name) in names.iter().enumerate() {
            *cum.entry(name.clone()).or_insert(0) += value;
            if depth + leaf_lines >= names.len() {
                *flat.entry(name.clone()).or_insert(0) += value;
            }
        }
        // Walked from the leaf up, outermost line first within a location.
        let mut walk: Vec<String> = Vec::new();
        for &loc in p.samples.stack(i) {
            for line in (0..p.locations[loc as usize].lines.len()).rev() {
                walk.push(line_name(&p, loc, line));
            }
        }
        for pair in walk.windows(2) {
            *edges.entry((pair[1].clone(), pair[0].clone())).or_insert(0) += value;
        }
    }
    let answer = ask_report(&h, query_request::ReportType::Callgraph, single, None).unwrap();
    let Some(pq::query_response::Report::Callgraph(graph)) = answer.report else {
        panic!("no callgraph");
    };
    assert_eq!(answer.total, p.total(0));
    let name_of: BTreeMap<&str, &str> = (graph.nodes.iter())
        .map(|n| {
            let f = n.meta.as_ref().and_then(|m| m.function.as_ref()).unwrap();
            (n.id.as_str(), f.name.as_str())
        })
        .collect();
    for n in &graph.nodes {
        let name = name_of[n.id.as_str()];
        assert_eq!(
            (n.cumulative, n.flat),
            (cum[name], flat.get(name).copied().unwrap_or(0)),
            "{name}"
        );
    }
    let cut_off = p.total(0) as f64 * 0.005;
    for (name, c) in &cum {
        if !name_of.values().any(|n| n == name) {
            assert!((*c as f64) < cut_off, "{name} pruned with {c}");
        }
    }
    assert!(name_of.len() < cum.len(), "some nodes are pruned");
    let mut collapsed = 0;
    for e in &graph.edges {
        let ends = (
            name_of[e.source.as_str()].to_string(),
            name_of[e.target.as_str()].to_string(),
        );
        if e.is_collapsed {
            collapsed += 1;
        } else {
            assert_eq!(Some(&e.cumulative), edges.get(&ends), "{ends:?}");
        }
    }
    assert!(collapsed > 0);
}

/// The tree of a FLAMEGRAPH_TABLE answer as function-name paths from the root, with
/// their cumulative and diff.
fn flame_paths(graph: &pq::Flamegraph) -> BTreeMap<Vec<String>, (i64, i64)> {
    fn walk(
        g: &pq::Flamegraph,
        nodes: &[pq::FlamegraphNode],
        path: &mut Vec<String>,
        out: &mut BTreeMap<Vec<String>, (i64, i64)>,
    ) {
        for n in nodes {
            let meta = n.meta.as_ref().unwrap();
            let location = &g.locations[meta.location_index as usize - 1];
            let line = &location.lines[meta.line_index as usize];
            let function = &g.function[line.function_index as usize - 1];
            path.push(g.string_table[function.name_string_index as usize].clone());
            assert!(
                out.insert(path.clone(), (n.cumulative, n.diff)).is_none(),
                "{path:?} twice"
            );
            walk(g, &n.children, path, out);
            path.pop();
        }
    }
    let mut out = BTreeMap::new();
    walk(
        graph,
        &graph.root.as_ref().unwrap().children,
        &mut Vec::new(),
        &mut out,
    );
    out
}

/// Every prefix of every sample's function names from the root, with the values of
/// `column` summed.
fn prefix_sums(p: &Profile, column: usize) -> BTreeMap<Vec<String>, i64> {
    let mut sums = BTreeMap::new();
    for i in 0..p.samples.len() {
        let names = names_from_root(p, i);
        for depth in 1..=names.len() {
            *sums.entry(names[..depth].to_vec()).or_insert(0) += p.samples.values[column][i];
        }
    }
    sums
}

/// Checks that a trimmed flame graph keeps exactly the paths of `want` that `keep`
/// (their value, their parent's) under a kept parent; returns the value left out.
fn check_trim(
    want: &BTreeMap<Vec<String>, i64>,
    kept: &dyn Fn(&[String]) -> bool,
    total: i64,
    keep: impl Fn(i64, i64) -> bool,
) -> i64 {
    let mut left_out = 0;
    for (path, &c) in want {
        let parent = &path[..path.len() - 1];
        let parent_kept = parent.is_empty() || kept(parent);
        let parent_total = if parent.is_empty() {
            total
        } else {
            want[parent]
        };
        let big = keep(c, parent_total);
        assert_eq!(kept(path), parent_kept && big, "{path:?}");
        if parent_kept && !big {
            left_out += c;
        }
    }
    left_out
}

fn flamegraph_of(answer: pq::QueryResponse) -> pq::Flamegraph {
    match answer.report {
        Some(pq::query_response::Report::Flamegraph(g)) => g,
        other => panic!("no flame graph: {other:?}"),
    }
}

/// FLAMEGRAPH_TABLE of cpu.pb.gz is the tree of function names of its PPROF report;
/// trimmed at 1%, it keeps exactly the nodes of at least 1% of their parent.
#[test]
#[allow(deprecated, reason = "Parca still fills the deprecated totals")]
fn flamegraph_table_is_the_function_tree_of_the_pprof_report_trimmed_as_parca() {
    let h = Harness::start(ServerOptions::default());
    let single = single_with_total(&h, go_top("cpu.sample_index=1.top.txt").1);
    let p = pprof_report(&h, single.clone());
    let want = prefix_sums(&p, 0);
    let table = query_request::ReportType::FlamegraphTable;
    let full = flamegraph_of(ask_report(&h, table, single.clone(), None).unwrap());
    let got = flame_paths(&full);
    assert_eq!(got.len(), want.len());
    for (path, (c, _)) in &got {
        assert_eq!(Some(c), want.get(path), "{path:?}");
    }
    let root = full.root.as_ref().unwrap();
    assert_eq!(
        (root.cumulative, full.total, full.unit.as_str()),
        (p.total(0), p.total(0), "nanoseconds")
    );
    let deepest = (0..p.samples.len())
        .map(|i| p.samples.stack(i).len())
        .max()
        .unwrap();
    assert_eq!(full.height as usize, deepest + 1);

    let trimmed = flamegraph_of(ask_report(&h, table, single, Some(1.0)).unwrap());
    let kept = flame_paths(&trimmed);
    let left_out = check_trim(
        &want,
        &|path| kept.contains_key(path),
        p.total(0),
        |c, parent| c as f32 >= parent as f32 * 0.01,
    );
    assert!(left_out > 0);
    assert_eq!(
        (trimmed.trimmed, trimmed.untrimmed_total),
        (left_out, p.total(0))
    );
}

/// A diff of two CPU profiles: TOP and FLAMEGRAPH_TABLE carry B's values and, in
/// `diff`, the differences the PPROF report of the same diff holds, summed as Parca
/// sums them; the bigger B is not scaled.
#[test]
fn reports_of_a_diff_carry_b_and_the_difference_as_parca() {
    let h = Harness::start(ServerOptions::default());
    let times = cpu_profiles_by_total(&h);
    let side = |t: i64| pq::ProfileDiffSelection {
        mode: pq::profile_diff_selection::Mode::SingleUnspecified as i32,
        options: Some(pq::profile_diff_selection::Options::Single(
            pq::SingleProfile {
                query: CPU.to_string(),
                time: Some(timestamp(t)),
            },
        )),
    };
    // A the smallest, B the biggest.
    let diff = query_request::Options::Diff(pq::DiffProfile {
        a: Some(side(times[0].1)),
        b: Some(side(times[3].1)),
        absolute: Some(false),
    });
    let b_single = single_at(times[3].1);
    let differences = pprof_report(&h, diff.clone());
    let b = pprof_report(&h, b_single.clone());
    let top = ask_report(&h, query_request::ReportType::Top, diff.clone(), None).unwrap();
    assert_eq!(top.total, times[3].0);
    let b_top = top_rows(&ask_report(&h, query_request::ReportType::Top, b_single, None).unwrap());
    let b_flat: BTreeMap<String, i64> = b_top.into_iter().map(|r| (r.0, r.1)).collect();
    let want_diff = parca_top_cumulative(&differences, 0);
    let rows = top_rows(&top);
    assert!(rows.iter().any(|r| r.3 < 0) && rows.iter().any(|r| r.3 > 0));
    for (name, flat, _, diff) in &rows {
        assert_eq!(*flat, b_flat.get(name).copied().unwrap_or(0), "{name}");
        assert_eq!(*diff, want_diff.get(name).copied().unwrap_or(0), "{name}");
    }

    let table = query_request::ReportType::FlamegraphTable;
    let graph = flamegraph_of(ask_report(&h, table, diff, None).unwrap());
    let (values, diffs) = (prefix_sums(&b, 0), prefix_sums(&differences, 0));
    for (path, (c, d)) in flame_paths(&graph) {
        assert_eq!(c, values.get(&path).copied().unwrap_or(0), "{path:?}");
        assert_eq!(d, diffs.get(&path).copied().unwrap_or(0), "{path:?}");
    }
    let root = graph.root.unwrap();
    assert_eq!(
        (root.cumulative, root.diff),
        (b.total(0), differences.total(0))
    );
}

/// PROFILE_METADATA of a merge: the mapping files of its stacks and the label names
/// of its series, sorted; none for a single profile, as Parca.
#[test]
fn profile_metadata_lists_mapping_files_and_label_names() {
    let h = Harness::start(ServerOptions::default());
    let merge = merge_all(CPU);
    let p = pprof_report(&h, merge.clone());
    let files: std::collections::BTreeSet<String> = (p.samples.stack_locations.iter())
        .map(|&l| {
            let m = p.locations[l as usize]
                .mapping
                .map(|m| &p.mappings[m as usize]);
            m.map_or(String::new(), |m| p.str(m.filename).to_string())
        })
        .collect();
    let labels = h
        .block_on(h.direct.labels(selector(CPU), TimeRange::ALL))
        .unwrap();
    let kind = query_request::ReportType::ProfileMetadata;
    let answer = ask_report(&h, kind, merge, None).unwrap();
    assert_eq!(answer.total, 0);
    let Some(pq::query_response::Report::ProfileMetadata(metadata)) = answer.report else {
        panic!("no metadata");
    };
    assert_eq!(
        metadata.mapping_files,
        files.into_iter().collect::<Vec<_>>()
    );
    assert!(
        metadata
            .mapping_files
            .iter()
            .any(|f| f.contains("flintdemo")),
        "{metadata:?}"
    );
    assert_eq!(metadata.labels, labels);
    assert!(
        metadata.labels.contains(&"endpoint".to_string()),
        "{metadata:?}"
    );
    let single = single_with_total(&h, go_top("cpu.sample_index=1.top.txt").1);
    let answer = ask_report(&h, kind, single, None).unwrap();
    assert_eq!(
        answer.report,
        Some(pq::query_response::Report::ProfileMetadata(
            pq::ProfileMetadata::default()
        ))
    );
}

/// Report types and report fields are checked before the query runs (here one with
/// no data, which would be NOT_FOUND), with Parca's codes.
#[test]
fn report_requests_are_checked_before_the_query() {
    let h = Harness::start(ServerOptions::default());
    let nothing = query_request::Options::Merge(pq::MergeProfile {
        query: format!("{CPU}{{endpoint=\"nope\"}}"),
        start: Some(timestamp(0)),
        end: Some(timestamp(1 << 62)),
    });
    let mut client = h.raw_client();
    let mut ask = |report_type: i32, threshold: Option<f32>, source_only: bool| {
        let status = h
            .block_on(client.query(pq::QueryRequest {
                mode: query_request::Mode::Merge as i32,
                options: Some(nothing.clone()),
                report_type,
                node_trim_threshold: threshold,
                source_reference: source_only.then(|| pq::SourceReference {
                    build_id: "abc".into(),
                    filename: "main.go".into(),
                    source_only,
                }),
                ..Default::default()
            }))
            .unwrap_err();
        (status.code(), status.message().to_string())
    };
    use query_request::ReportType as T;
    use tonic::Code;
    let (code, message) = ask(99, None, false);
    assert_eq!(
        (code, message.as_str()),
        (Code::InvalidArgument, "unknown report type 99")
    );
    assert_eq!(ask(T::Flamechart as i32, None, false).0, Code::NotFound);
    let (code, message) = ask(T::Source as i32, None, false);
    assert_eq!(code, Code::InvalidArgument);
    assert!(message.contains("source_reference"), "{message}");
    #[allow(deprecated, reason = "the deprecated type is refused")]
    let old = T::FlamegraphUnspecified as i32;
    let (code, message) = ask(old, None, false);
    assert_eq!(code, Code::Unimplemented);
    assert!(
        message.contains("REPORT_TYPE_FLAMEGRAPH_TABLE"),
        "{message}"
    );
    let (code, message) = ask(T::Top as i32, None, true);
    assert_eq!(code, Code::NotFound);
    assert!(
        message.contains("no sources for build id \"abc\""),
        "{message}"
    );
    for threshold in [-1.0, 100.5, f32::NAN] {
        let (code, message) = ask(T::FlamegraphTable as i32, Some(threshold), false);
        assert_eq!(code, Code::InvalidArgument, "{threshold}");
        assert!(message.contains("node_trim_threshold"), "{message}");
    }
    // Valid requests reach the query: no data.
    assert_eq!(ask(T::Top as i32, Some(0.5), false).0, Code::NotFound);
}

/// An Arrow record as Parca's web UI reads it (flechette with lz4js, run by node from
/// tests/fixtures/parca-ui, where the first call runs `npm ci`): its row count and
/// columns.
fn read_as_parcas_ui(record: &[u8]) -> (usize, serde_json::Map<String, serde_json::Value>) {
    static INSTALLED: std::sync::Once = std::sync::Once::new();
    let reader = fixture("../parca-ui");
    INSTALLED.call_once(|| {
        if !reader.join("node_modules/@uwdata/flechette").is_dir() {
            let npm = std::process::Command::new("npm")
                .args(["ci", "--silent", "--no-audit", "--no-fund", "--prefix"])
                .arg(&reader)
                .status()
                .expect("npm runs (.ci/run installs nodejs and npm)");
            assert!(npm.success(), "npm ci in {}", reader.display());
        }
    });
    static RECORDS: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    let n = RECORDS.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let dir = flint_fixture_gen::Scratch::new(&format!("arrow-{n}"));
    let file = dir.join("record.arrow");
    std::fs::write(&file, record).unwrap();
    let out = std::process::Command::new("node")
        .arg(reader.join("read-arrow.mjs"))
        .arg(&file)
        .output()
        .expect("node runs");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let json: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let rows = json["rows"].as_u64().unwrap() as usize;
    (rows, json["columns"].as_object().unwrap().clone())
}

/// Column `name` of a record read by [`read_as_parcas_ui`] as integers (null: `None`;
/// past 2^53 they come as strings).
fn ints(columns: &serde_json::Map<String, serde_json::Value>, name: &str) -> Vec<Option<i64>> {
    let column = (columns.get(name).and_then(|c| c.as_array()))
        .unwrap_or_else(|| panic!("no {name} in {:?}", columns.keys()));
    (column.iter())
        .map(|v| {
            v.as_i64()
                .or_else(|| v.as_str().and_then(|s| s.parse().ok()))
        })
        .collect()
}

/// Column `name` as strings (null: `None`).
fn texts(columns: &serde_json::Map<String, serde_json::Value>, name: &str) -> Vec<Option<String>> {
    let column = (columns.get(name).and_then(|c| c.as_array()))
        .unwrap_or_else(|| panic!("no {name} in {:?}", columns.keys()));
    column
        .iter()
        .map(|v| v.as_str().map(str::to_string))
        .collect()
}

/// FLAMEGRAPH_ARROW of cpu.pb.gz, read as Parca's UI reads it: the tree of function
/// names of its PPROF report, rows breadth first with consistent parents, children,
/// depths and value offsets; trimmed at 1%, the nodes over 1% of their parent.
#[test]
fn flamegraph_arrow_read_by_parcas_ui_is_the_function_tree_of_the_pprof_report() {
    let h = Harness::start(ServerOptions::default());
    let single = single_with_total(&h, go_top("cpu.sample_index=1.top.txt").1);
    let p = pprof_report(&h, single.clone());
    let want = prefix_sums(&p, 0);
    let kind = query_request::ReportType::FlamegraphArrow;
    let graph = |threshold| {
        let answer = ask_report(&h, kind, single.clone(), threshold).unwrap();
        let Some(pq::query_response::Report::FlamegraphArrow(g)) = answer.report else {
            panic!("no arrow flame graph");
        };
        assert_eq!(answer.total, p.total(0));
        assert_eq!(g.unit, "nanoseconds");
        let (rows, columns) = read_as_parcas_ui(&g.record);
        (g, rows, columns)
    };
    let paths = |rows: usize, c: &serde_json::Map<String, serde_json::Value>| {
        let (names, parents, cum) = (
            texts(c, "function_name"),
            ints(c, "parent"),
            ints(c, "cumulative"),
        );
        let (depth, offset, flat) = (ints(c, "depth"), ints(c, "value_offset"), ints(c, "flat"));
        let children = c["children"].as_array().unwrap();
        assert_eq!(
            (parents[0], depth[0], offset[0]),
            (Some(-1), Some(0), Some(0))
        );
        let mut path: Vec<Vec<String>> = vec![Vec::new()];
        let mut next_offset = vec![0; rows];
        let mut out = BTreeMap::new();
        for r in 1..rows {
            let parent = parents[r].unwrap() as usize;
            assert!(parent < r, "breadth first");
            let listed = children[parent].as_array().unwrap();
            assert!(listed.iter().any(|v| v.as_u64() == Some(r as u64)));
            assert_eq!(depth[r], Some(depth[parent].unwrap() + 1));
            assert_eq!(
                offset[r],
                Some(offset[parent].unwrap() + next_offset[parent])
            );
            next_offset[parent] += cum[r].unwrap();
            let mut mine = path[parent].clone();
            mine.push(names[r].clone().unwrap());
            assert!(
                out.insert(mine.clone(), cum[r].unwrap()).is_none(),
                "{mine:?} twice"
            );
            path.push(mine);
        }
        (
            out,
            cum[0].unwrap(),
            flat.iter().map(|f| f.unwrap()).sum::<i64>(),
        )
    };
    let (full, rows, columns) = graph(None);
    let (got, root, flat) = paths(rows, &columns);
    assert_eq!(got, want);
    assert_eq!((root, flat, full.trimmed), (p.total(0), p.total(0), 0));
    let deepest = (0..p.samples.len())
        .map(|i| names_from_root(&p, i).len())
        .max()
        .unwrap();
    assert_eq!(full.height as usize, deepest + 1);
    assert!(
        texts(&columns, "mapping_file")[1..]
            .iter()
            .all(Option::is_some)
    );

    let (trimmed, rows, columns) = graph(Some(1.0));
    let (kept, root, _) = paths(rows, &columns);
    let left_out = check_trim(
        &want,
        &|path| kept.contains_key(path),
        p.total(0),
        |c, parent| c > (parent as f32 * 0.01) as i64,
    );
    assert!(left_out > 0);
    assert_eq!(trimmed.trimmed, left_out);
    assert_eq!(
        root,
        kept.iter()
            .filter(|(k, _)| k.len() == 1)
            .map(|(_, c)| c)
            .sum::<i64>()
    );
}

/// TABLE_ARROW of cpu.pb.gz, read as Parca's UI reads it: per function, flat as TOP and
/// `go tool pprof -top` have it, cumulative per frame met, and the callers and callees
/// each frame has next to it in the PPROF report's stacks.
#[test]
fn table_arrow_read_by_parcas_ui_sums_each_function_of_the_pprof_report() {
    let h = Harness::start(ServerOptions::default());
    let (go, total) = go_top("cpu.sample_index=1.top.txt");
    let single = single_with_total(&h, total);
    let p = pprof_report(&h, single.clone());
    let answer = ask_report(&h, query_request::ReportType::TableArrow, single, None).unwrap();
    assert_eq!(answer.total, total);
    let Some(pq::query_response::Report::TableArrow(table)) = answer.report else {
        panic!("no arrow table");
    };
    let (rows, c) = read_as_parcas_ui(&table.record);
    let names = texts(&c, "function_name");
    let (flat, cum) = (ints(&c, "flat"), ints(&c, "cumulative"));
    let mut want_cum: BTreeMap<String, i64> = BTreeMap::new();
    let mut want_callers: BTreeMap<String, std::collections::BTreeSet<String>> = BTreeMap::new();
    for i in 0..p.samples.len() {
        let mut names = names_from_root(&p, i);
        names.reverse();
        for (n, name) in names.iter().enumerate() {
            *want_cum.entry(name.clone()).or_insert(0) += p.samples.values[0][i];
            if let Some(caller) = names.get(n + 1) {
                want_callers
                    .entry(name.clone())
                    .or_default()
                    .insert(caller.clone());
            }
        }
    }
    assert_eq!(rows, want_cum.len());
    let row_name = |v: &serde_json::Value| names[v.as_u64().unwrap() as usize].clone().unwrap();
    for r in 0..rows {
        let name = names[r].clone().unwrap();
        assert_eq!(cum[r], Some(want_cum[&name]), "{name}");
        let go_flat = go.iter().find(|g| g.0 == name).map_or(0, |g| g.1);
        assert!(
            (flat[r].unwrap() - go_flat).abs() <= 5_000_000,
            "{name}: {:?} vs {go_flat}",
            flat[r]
        );
        let callers: std::collections::BTreeSet<String> = (c["callers"][r].as_array())
            .map_or(Default::default(), |l| l.iter().map(row_name).collect());
        assert_eq!(
            callers,
            want_callers.get(&name).cloned().unwrap_or_default(),
            "{name}"
        );
    }
    assert_eq!(flat.iter().map(|f| f.unwrap()).sum::<i64>(), total);
}

/// SOURCE of the file of cpu.pb.gz's hottest function, read as Parca's UI reads it:
/// per line, the value of the samples through it and of those it ends, summed from the
/// PPROF report; no source text (flint serve keeps no uploaded sources).
#[test]
fn source_record_read_by_parcas_ui_sums_the_lines_of_the_pprof_report() {
    let h = Harness::start(ServerOptions::default());
    let single = single_with_total(&h, go_top("cpu.sample_index=1.top.txt").1);
    let p = pprof_report(&h, single.clone());
    let leaf = |i: usize| &p.locations[p.samples.stack(i)[0] as usize].lines[0];
    let hottest = (0..p.samples.len())
        .max_by_key(|&i| p.samples.values[0][i])
        .unwrap();
    let file = p
        .str(p.functions[leaf(hottest).function as usize].filename)
        .to_string();
    let base = file.rsplit('/').next().unwrap().to_string();
    let mut want: BTreeMap<i64, (i64, i64)> = BTreeMap::new();
    for i in 0..p.samples.len() {
        for (n, &loc) in p.samples.stack(i).iter().enumerate() {
            for (k, line) in p.locations[loc as usize].lines.iter().enumerate() {
                if p.str(p.functions[line.function as usize].filename) == file {
                    let e = want.entry(line.line).or_default();
                    e.0 += p.samples.values[0][i];
                    if n == 0 && k == 0 {
                        e.1 += p.samples.values[0][i];
                    }
                }
            }
        }
    }
    let mut client = h.raw_client();
    let answer = h
        .block_on(client.query(pq::QueryRequest {
            mode: options_mode(&single) as i32,
            options: Some(single),
            report_type: query_request::ReportType::Source as i32,
            source_reference: Some(pq::SourceReference {
                filename: base,
                ..Default::default()
            }),
            ..Default::default()
        }))
        .unwrap()
        .into_inner();
    assert_eq!(answer.total, p.total(0));
    let Some(pq::query_response::Report::Source(source)) = answer.report else {
        panic!("no source report");
    };
    assert_eq!(
        (source.source.as_str(), source.unit.as_str()),
        ("", "nanoseconds")
    );
    let (rows, c) = read_as_parcas_ui(&source.record);
    let (lines, cum, flat) = (
        ints(&c, "line_number"),
        ints(&c, "cumulative"),
        ints(&c, "flat"),
    );
    assert!(
        texts(&c, "filename")
            .iter()
            .all(|f| f.as_deref() == Some(file.as_str()))
    );
    let got: BTreeMap<i64, (i64, i64)> = (0..rows)
        .map(|r| (lines[r].unwrap(), (cum[r].unwrap(), flat[r].unwrap())))
        .collect();
    assert_eq!(got, want);
    assert!(want.values().any(|v| v.1 > 0));
}

/// FLAMECHART of the CPU profiles' merge, read as Parca's UI reads it: rows at the
/// profiles' times, each no earlier than its parent, whose values summed per path of
/// function names are the merged PPROF report's tree; of a single profile, refused.
#[test]
fn flamechart_read_by_parcas_ui_spreads_the_merged_tree_over_the_profiles_times() {
    let h = Harness::start(ServerOptions::default());
    let merge = merge_all(CPU);
    let p = pprof_report(&h, merge.clone());
    let kind = query_request::ReportType::Flamechart;
    let answer = ask_report(&h, kind, merge, None).unwrap();
    assert_eq!(answer.total, p.total(0));
    let Some(pq::query_response::Report::FlamegraphArrow(chart)) = answer.report else {
        panic!("no flame chart");
    };
    let (rows, c) = read_as_parcas_ui(&chart.record);
    let (names, parents) = (texts(&c, "function_name"), ints(&c, "parent"));
    let (cum, times) = (ints(&c, "cumulative"), ints(&c, "timestamp"));
    let profile_times = cpu_times(&h);
    let mut paths: Vec<Vec<String>> = vec![Vec::new()];
    let mut summed: BTreeMap<Vec<String>, i64> = BTreeMap::new();
    let mut at_times = std::collections::BTreeSet::new();
    for r in 1..rows {
        let parent = parents[r].unwrap() as usize;
        let time = times[r].unwrap();
        assert!(profile_times.contains(&time), "{time}");
        assert!(parent == 0 || time >= times[parent].unwrap());
        at_times.insert(time);
        let mut path = paths[parent].clone();
        path.push(names[r].clone().unwrap());
        *summed.entry(path.clone()).or_default() += cum[r].unwrap();
        paths.push(path);
    }
    assert_eq!(summed, prefix_sums(&p, 0));
    assert!(at_times.len() > 1, "{at_times:?}");
    assert!(rows > summed.len() + 1, "some frames start again later");

    let single = single_at(profile_times[0]);
    let refused = ask_report(&h, kind, single, None).unwrap_err();
    assert_eq!(refused.code(), tonic::Code::InvalidArgument);
    assert!(
        refused.message().contains("MODE_MERGE"),
        "{}",
        refused.message()
    );
}
