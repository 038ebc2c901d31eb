//! The store's figures: sustained durable ingest with concurrent writers, a merge over
//! 360 profiles of one series, query_range over 8,640 profiles × 50 series (directly
//! and through the gRPC server on loopback), and opening (rebuilding the index of) that
//! store.

#![allow(
    clippy::expect_used,
    clippy::unwrap_used,
    reason = "a benchmark fails loudly on a broken fixture"
)]

use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};

use capture::grpc::{bind, serve};
use capture::{
    Labels, ProfileSource, Progress, QueryTime, RemoteOptions, RemoteSource, Selector,
    ServerOptions, Store, StoreOptions, TimeRange,
};
use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use flint_fixture_gen::{SERIES_UNIVERSE, SeriesParams, Universe, encode_gz_level, series_profile};
use profile_model::codec::{decode, encode_gzip, from_proto};
use profile_model::proto;

const SECOND: i64 = 1_000_000_000;

fn temp_dir(what: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("flint-store-bench-{what}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    dir
}

fn cpu_fixture() -> Vec<u8> {
    std::fs::read(PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../tests/fixtures/go/cpu.pb.gz"))
        .expect("fixture")
}

fn labels(pairs: &[(&str, &str)]) -> Labels {
    pairs
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect()
}

fn block_on<T>(f: impl std::future::Future<Output = T>) -> T {
    tokio::runtime::Builder::new_current_thread()
        .build()
        .expect("runtime")
        .block_on(f)
}

/// A one-sample CPU profile at `time_nanos`, 10 s long.
fn tiny_profile(time_nanos: i64, value: i64) -> Vec<u8> {
    let message = proto::Profile {
        sample_type: vec![proto::ValueType { r#type: 1, unit: 2 }],
        period_type: Some(proto::ValueType { r#type: 1, unit: 2 }),
        string_table: vec!["".into(), "cpu".into(), "nanoseconds".into(), "main".into()],
        function: vec![proto::Function {
            id: 1,
            name: 3,
            ..Default::default()
        }],
        location: vec![proto::Location {
            id: 1,
            line: vec![proto::Line {
                function_id: 1,
                ..Default::default()
            }],
            ..Default::default()
        }],
        sample: vec![proto::Sample {
            location_id: vec![1],
            value: vec![value],
            label: Vec::new(),
        }],
        time_nanos,
        duration_nanos: 10 * SECOND,
        period: 10_000_000,
        ..Default::default()
    };
    encode_gzip(&from_proto(message).expect("valid profile"))
}

/// `store` behind `flint serve`'s gRPC server on loopback, and a client of it; the
/// server stops when this is dropped.
struct Served {
    runtime: tokio::runtime::Runtime,
    remote: RemoteSource,
    stop: Option<tokio::sync::oneshot::Sender<()>>,
}

impl Served {
    fn start(store: Arc<Store>) -> Self {
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .enable_all()
            .build()
            .expect("runtime");
        let listener = runtime.block_on(bind("127.0.0.1:0")).expect("listens");
        let url = format!("grpc://{}", listener.local_addr().expect("address"));
        let source: Arc<dyn ProfileSource> = store;
        let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
        runtime.spawn(serve(
            listener,
            source,
            None,
            ServerOptions::default(),
            async {
                let _ = stopped.await;
            },
        ));
        let remote = RemoteSource::new(&url, RemoteOptions::default()).expect("client");
        Self {
            runtime,
            remote,
            stop: Some(stop),
        }
    }
}

impl Drop for Served {
    fn drop(&mut self) {
        drop(self.stop.take());
    }
}

fn ingest(c: &mut Criterion) {
    let raw = cpu_fixture();
    let samples = decode(&raw).expect("decodes").samples.len();
    let mut group = c.benchmark_group("store");
    group.throughput(Throughput::Elements(1));
    group.sample_size(10);
    group.measurement_time(Duration::from_secs(10));
    for writers in [4u64, 8, 32] {
        let dir = temp_dir(&format!("ingest-{writers}"));
        let store = Store::open(&dir, StoreOptions::default()).expect("opens");
        group.bench_function(
            format!("ingest cpu.pb.gz ({samples} samples), {writers} writers, durable"),
            |b| {
                b.iter_custom(|iters| {
                    let start = Instant::now();
                    std::thread::scope(|scope| {
                        for w in 0..writers {
                            let (store, raw) = (&store, &raw);
                            scope.spawn(move || {
                                let n = iters / writers + u64::from(w < iters % writers);
                                for _ in 0..n {
                                    let l = labels(&[
                                        ("__name__", "process_cpu"),
                                        ("writer", &w.to_string()),
                                    ]);
                                    store.write(l, raw).expect("written");
                                }
                            });
                        }
                    });
                    start.elapsed()
                });
            },
        );
        drop(store);
        let _ = std::fs::remove_dir_all(&dir);
    }
    group.finish();
}

fn merge(c: &mut Criterion) {
    let dir = temp_dir("merge");
    let store = Arc::new(Store::open(&dir, StoreOptions::default()).expect("opens"));
    let mut p = decode(&cpu_fixture()).expect("decodes");
    let start = p.time_nanos;
    let batch: Vec<(Labels, Vec<u8>)> = (0..360)
        .map(|i| {
            p.time_nanos = start + i * 10 * SECOND;
            (
                labels(&[("__name__", "process_cpu"), ("job", "api")]),
                encode_gzip(&p),
            )
        })
        .collect();
    store.write_batch(&batch).expect("written");
    // An hour of one series as flint-fixture-gen makes it (bench/serve.sh's hour):
    // 360 ten-second profiles of ~1,740 samples each.
    let universe = Universe::new(&SERIES_UNIVERSE).expect("universe");
    let params = SeriesParams {
        samples: 2_000,
        // 15:00 UTC: the generator's daily load is near its peak, as in bench/serve.sh.
        start_nanos: 1_700_060_400 * SECOND,
        step_secs: 10,
        seed: 1,
    };
    let mut hour_samples = 0;
    let hour: Vec<(Labels, Vec<u8>)> = (0..360)
        .map(|i| {
            let profile = series_profile(&universe, &params, i);
            hour_samples += profile.sample.len();
            let (_, gz) = encode_gz_level(&profile, flate2::Compression::fast()).expect("encodes");
            (labels(&[("__name__", "process_cpu"), ("job", "hour")]), gz)
        })
        .collect();
    store.write_batch(&hour).expect("written");
    eprintln!("the hour: 360 profiles, {hour_samples} samples");
    let selector =
        Selector::parse(r#"process_cpu:cpu:nanoseconds:cpu:nanoseconds:delta{job="api"}"#)
            .expect("selector");
    c.bench_function("store merge 360 × cpu.pb.gz", |b| {
        b.iter(|| {
            block_on(store.query(
                selector.clone(),
                QueryTime::Merge(TimeRange::ALL),
                Progress::default(),
            ))
            .expect("merged")
        });
    });
    // The hour merged by the server and fetched by a client (Query MODE_MERGE, pprof
    // report: merge, encode, gzip, transfer, client decode) over loopback.
    let served = Served::start(store.clone());
    let (runtime, remote) = (&served.runtime, &served.remote);
    let hour_selector =
        Selector::parse(r#"process_cpu:cpu:nanoseconds:cpu:nanoseconds:delta{job="hour"}"#)
            .expect("selector");
    let range = TimeRange {
        start_nanos: 1_699_900_000 * SECOND,
        end_nanos: 1_700_200_000 * SECOND,
    };
    let mut group = c.benchmark_group("store merge hour");
    group.sample_size(10);
    group.bench_function("merge 360 × ~1,850 samples, direct", |b| {
        b.iter(|| {
            block_on(store.query(
                hour_selector.clone(),
                QueryTime::Merge(range),
                Progress::default(),
            ))
            .expect("merged")
        });
    });
    group.bench_function("grpc Query MODE_MERGE 360 × ~1,850 samples", |b| {
        b.iter(|| {
            runtime
                .block_on(remote.query(
                    hour_selector.clone(),
                    QueryTime::Merge(range),
                    Progress::default(),
                ))
                .expect("merged")
        });
    });
    group.finish();
    drop(served);
    drop(store);
    let _ = std::fs::remove_dir_all(&dir);
}

fn query_range(c: &mut Criterion) {
    const SERIES: i64 = 50;
    const POINTS: i64 = 8_640;
    let dir = temp_dir("range");
    let built = Instant::now();
    {
        let store = Store::open(&dir, StoreOptions::default()).expect("opens");
        for t in (0..POINTS).step_by(96) {
            let batch: Vec<(Labels, Vec<u8>)> = (t..(t + 96).min(POINTS))
                .flat_map(|t| {
                    (0..SERIES).map(move |s| {
                        let l = labels(&[("__name__", "cpu"), ("instance", &format!("i{s:02}"))]);
                        (l, tiny_profile((1_000_000 + t * 10) * SECOND, t + s))
                    })
                })
                .collect();
            store.write_batch(&batch).expect("written");
        }
        let stats = store.stats();
        eprintln!(
            "built {} profiles, {} bytes in {} segments, in {:.1?}",
            stats.profiles,
            stats.size_bytes,
            stats.segments,
            built.elapsed()
        );
    }
    let mut group = c.benchmark_group("store range");
    group.sample_size(10);
    group.bench_function("open 432,000 profiles", |b| {
        b.iter(|| Store::open(&dir, StoreOptions::default()).expect("opens"));
    });
    let store = Store::open(&dir, StoreOptions::default()).expect("opens");
    let selector = Selector::parse("cpu:cpu:nanoseconds:cpu:nanoseconds:delta").expect("selector");
    group.bench_function("query_range 8,640 points × 50 series", |b| {
        b.iter(|| {
            let series =
                block_on(store.query_range(selector.clone(), TimeRange::ALL, 10 * SECOND, None))
                    .expect("series");
            assert_eq!(series.len(), SERIES as usize);
            series
        });
    });
    // The same question through `flint serve`'s gRPC server on loopback, as a client
    // (the window, `flint series`) asks it: every 10-second point, and the window's
    // step (one bucket per 10 px of a 1,500 px plot: 150 buckets of 576 s).
    let store = Arc::new(store);
    let served = Served::start(store.clone());
    let (runtime, remote) = (&served.runtime, &served.remote);
    let day = TimeRange {
        start_nanos: 1_000_000 * SECOND,
        end_nanos: (1_000_000 + POINTS * 10) * SECOND,
    };
    for (name, step) in [
        ("grpc query_range 8,640 points × 50 series", 10 * SECOND),
        (
            "grpc query_range 24 h × 50 series, 150 buckets",
            576 * SECOND,
        ),
    ] {
        group.bench_function(name, |b| {
            b.iter(|| {
                let series = runtime
                    .block_on(remote.query_range(
                        selector.clone(),
                        day,
                        step,
                        Some(vec!["instance".into()]),
                    ))
                    .expect("series");
                assert_eq!(series.len(), SERIES as usize);
                series
            });
        });
    }
    group.finish();
    drop(served);
    drop(store);
    let _ = std::fs::remove_dir_all(&dir);
}

criterion_group!(benches, ingest, merge, query_range);
criterion_main!(benches);
