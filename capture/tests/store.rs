//! flint's store: what is written is what queries answer, across reopening and crashes,
//! as the file source answers for the same profiles.

#![allow(
    clippy::expect_used,
    clippy::unwrap_used,
    reason = "a test fails loudly on a broken fixture"
)]

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

use capture::{
    FileSource, Labels, ProfileSink, ProfileSource, Progress, QueryTime, Selector, Series,
    SourceError, Store, StoreOptions, TimeRange,
};
use flint_fixture_gen::Scratch;
use profile_model::codec::{DecodeOptions, decode, encode_gzip};

const CPU: &str = "process_cpu:cpu:nanoseconds:cpu:nanoseconds:delta";
const SECOND: i64 = 1_000_000_000;

fn fixture(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../tests/fixtures/go")
        .join(name)
}

fn bytes(name: &str) -> Vec<u8> {
    std::fs::read(fixture(name)).expect("fixture")
}

/// A fresh, empty directory, removed at the end of the test.
fn temp_dir(what: &str) -> Scratch {
    static NEXT: AtomicUsize = AtomicUsize::new(0);
    let n = NEXT.fetch_add(1, Ordering::Relaxed);
    Scratch::new(&format!("store-{what}-{n}"))
}

fn block_on<T>(f: impl std::future::Future<Output = T>) -> T {
    tokio::runtime::Builder::new_current_thread()
        .build()
        .expect("runtime")
        .block_on(f)
}

fn cpu(matchers: &str) -> Selector {
    Selector::parse(&format!("{CPU}{matchers}")).expect("selector")
}

fn labels(pairs: &[(&str, &str)]) -> Labels {
    pairs
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect()
}

/// cpu-1.pb.gz placed at `time_nanos`.
fn cpu_at(time_nanos: i64) -> Vec<u8> {
    let mut p = decode(&bytes("cpu-1.pb.gz")).expect("decodes");
    p.time_nanos = time_nanos;
    encode_gzip(&p)
}

fn segments(dir: &Path) -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
        .expect("dir")
        .map(|e| e.expect("entry").path())
        .filter(|p| p.extension().is_some_and(|e| e == "seg"))
        .collect();
    files.sort();
    files
}

/// Everything the source answers about the CPU profiles, for comparing sources.
#[derive(Debug, PartialEq)]
struct Answers {
    types: Vec<String>,
    labels: Vec<String>,
    endpoints: Vec<String>,
    by_endpoint: Vec<Series>,
    total: Vec<Series>,
    merged_total: i64,
    hash_total: i64,
    single_total: i64,
}

fn answers(source: &dyn ProfileSource, single_at: i64, merged_type: usize) -> Answers {
    let merge = |s: Selector, t: QueryTime| {
        let p = block_on(source.query(s, t, Progress::default())).expect("query");
        p.total(merged_type)
    };
    Answers {
        types: block_on(source.profile_types(TimeRange::ALL))
            .expect("types")
            .iter()
            .map(ToString::to_string)
            .collect(),
        labels: block_on(source.labels(cpu(""), TimeRange::ALL)).expect("labels"),
        endpoints: block_on(source.values("endpoint".into(), cpu(""), TimeRange::ALL))
            .expect("values"),
        by_endpoint: block_on(source.query_range(
            cpu(""),
            TimeRange::ALL,
            SECOND,
            Some(vec!["endpoint".into()]),
        ))
        .expect("series"),
        total: block_on(source.query_range(cpu(""), TimeRange::ALL, 60 * SECOND, Some(vec![])))
            .expect("series"),
        merged_total: merge(cpu(""), QueryTime::Merge(TimeRange::ALL)),
        hash_total: merge(
            cpu(r#"{endpoint="/api/hash"}"#),
            QueryTime::Merge(TimeRange::ALL),
        ),
        single_total: merge(cpu(""), QueryTime::Single(single_at)),
    }
}

#[test]
fn answers_survive_reopening_and_match_the_file_source() {
    let dir = temp_dir("reopen");
    let names = ["cpu-1.pb.gz", "cpu-2.pb.gz", "cpu-3.pb.gz"];
    let single_at = decode(&bytes("cpu-2.pb.gz")).unwrap().time_nanos;
    let before = {
        let store = Store::open(&dir, StoreOptions::default()).expect("opens");
        for name in names {
            let l = labels(&[("__name__", "process_cpu"), ("job", "api")]);
            store.write(l, &bytes(name)).expect("written");
        }
        let heap = labels(&[("__name__", "memory"), ("job", "api")]);
        store.write(heap, &bytes("heap.pb.gz")).expect("written");
        assert_eq!(store.stats().profiles, 4);
        assert!(store.stats().size_bytes > 0);
        answers(&store, single_at, 0)
    };
    let store = Store::open(&dir, StoreOptions::default()).expect("reopens");
    assert!(store.warnings().is_empty(), "{:?}", store.warnings());
    assert_eq!(store.stats().profiles, 4);
    let after = answers(&store, single_at, 0);
    assert_eq!(before, after);
    assert!(after.hash_total > 0 && after.hash_total < after.merged_total);
    assert!(after.types.contains(&CPU.to_string()), "{:?}", after.types);
    assert_eq!(after.labels, ["endpoint", "job"]);

    // The answer of a query is one profile type, as Parca answers.
    let merged = block_on(store.query(
        cpu(""),
        QueryTime::Merge(TimeRange::ALL),
        Progress::default(),
    ))
    .expect("merge");
    assert_eq!(merged.sample_type_names(), ["cpu/nanoseconds"]);

    // The file source, over the same files, answers the same.
    let files_dir = temp_dir("reopen-files");
    for name in names {
        std::fs::copy(fixture(name), files_dir.join(name)).expect("copy");
    }
    let (files, _) = FileSource::open(
        &[files_dir.to_path_buf()],
        DecodeOptions::default(),
        &Progress::default(),
    )
    .expect("opens");
    let from_files = answers(&files, single_at, 1);
    assert_eq!(after.endpoints, from_files.endpoints);
    assert_eq!(after.by_endpoint, from_files.by_endpoint);
    assert_eq!(after.total, from_files.total);
    assert_eq!(after.merged_total, from_files.merged_total);
    assert_eq!(after.hash_total, from_files.hash_total);
    assert_eq!(after.single_total, from_files.single_total);
    // Labels differ only in the source's own labels (a file's path, a write's job).
    assert_eq!(from_files.labels, ["binary", "endpoint", "path"]);
}

/// Three records in one segment; returns the directory and the segment's bytes.
fn three_records(what: &str) -> (Scratch, Vec<u8>) {
    let dir = temp_dir(what);
    let store = Store::open(&dir, StoreOptions::default()).expect("opens");
    for i in 0..3 {
        let l = labels(&[("__name__", "process_cpu"), ("n", &i.to_string())]);
        store.write(l, &cpu_at((i + 1) * SECOND)).expect("written");
    }
    drop(store);
    let segs = segments(&dir);
    assert_eq!(segs.len(), 1);
    let data = std::fs::read(&segs[0]).expect("segment");
    (dir, data)
}

/// Opens `data` as the store's only segment; checks `expected` profiles are there and
/// that a write afterwards is kept across another reopening.
fn recovers(dir: &Path, data: &[u8], expected: usize) -> Vec<String> {
    for seg in segments(dir) {
        std::fs::remove_file(seg).expect("remove");
    }
    std::fs::write(dir.join("0000000000000001.seg"), data).expect("write");
    let store = Store::open(dir, StoreOptions::default()).expect("recovers");
    assert_eq!(store.stats().profiles, expected);
    let warnings = store.warnings();
    let l = labels(&[("__name__", "process_cpu"), ("n", "new")]);
    store
        .write(l, &cpu_at(10 * SECOND))
        .expect("writes after recovery");
    drop(store);
    let store = Store::open(dir, StoreOptions::default()).expect("reopens");
    assert_eq!(store.stats().profiles, expected + 1);
    let ns = block_on(store.values("n".into(), cpu(""), TimeRange::ALL)).expect("values");
    assert!(ns.contains(&"new".to_string()), "{ns:?}");
    warnings
}

#[test]
fn a_torn_last_record_is_cut_away_at_any_offset() {
    let (dir, data) = three_records("torn");
    let record = data.len() / 3;
    let last_start = data.len() - record;
    let mut cuts: Vec<usize> = (last_start..last_start + 40).collect();
    cuts.extend((last_start..data.len()).step_by(131));
    cuts.extend(data.len() - 20..data.len());
    for cut in cuts {
        let warnings = recovers(&dir, &data[..cut], 2);
        if cut > last_start {
            assert!(
                warnings.iter().any(|w| w.contains("truncated")),
                "{warnings:?}"
            );
        }
    }
}

#[test]
fn garbage_after_the_last_record_and_a_flipped_byte_inside_one() {
    let (dir, data) = three_records("garbage");
    let mut garbage = data.clone();
    garbage.extend_from_slice(b"FLR1\x10\x00\x00\x00not a record at all");
    recovers(&dir, &garbage, 3);

    let mut flipped = data.clone();
    flipped[data.len() / 2] ^= 0x40;
    let warnings = recovers(&dir, &flipped, 2);
    assert!(
        warnings.iter().any(|w| w.contains("damaged")),
        "{warnings:?}"
    );
}

#[test]
fn concurrent_writers_and_readers() {
    const WRITERS: usize = 8;
    const EACH: usize = 200;
    let dir = temp_dir("concurrent");
    let store = Store::open(&dir, StoreOptions::default()).expect("opens");
    let profiles: Vec<Vec<u8>> = (0..EACH)
        .map(|i| cpu_at((i as i64 + 1) * 10 * SECOND))
        .collect();
    let total = decode(&bytes("cpu-1.pb.gz")).unwrap().total(1);
    let writing = AtomicBool::new(true);
    let queries = AtomicUsize::new(0);
    std::thread::scope(|scope| {
        let writers: Vec<_> = (0..WRITERS)
            .map(|w| {
                let (store, profiles) = (&store, &profiles);
                scope.spawn(move || {
                    for p in profiles {
                        let l = labels(&[("__name__", "process_cpu"), ("writer", &w.to_string())]);
                        store.write(l, p).expect("written");
                    }
                })
            })
            .collect();
        for r in 0..4 {
            let (store, writing, queries) = (&store, &writing, &queries);
            scope.spawn(move || {
                while writing.load(Ordering::Relaxed) {
                    let answered = match r {
                        0 => block_on(store.query_range(cpu(""), TimeRange::ALL, SECOND, None))
                            .map(|s| s.len()),
                        1 => block_on(store.labels(cpu(""), TimeRange::ALL)).map(|l| l.len()),
                        2 => block_on(store.query(
                            cpu(r#"{writer="3"}"#),
                            QueryTime::Single(10 * SECOND),
                            Progress::default(),
                        ))
                        .map(|p| p.samples.len()),
                        _ => Ok(store.stats().profiles),
                    };
                    match answered {
                        Ok(_) | Err(SourceError::NoData) => {}
                        Err(e) => panic!("query failed while writing: {e}"),
                    }
                    queries.fetch_add(1, Ordering::Relaxed);
                }
            });
        }
        for w in writers {
            w.join().expect("writer");
        }
        writing.store(false, Ordering::Relaxed);
    });
    assert!(queries.load(Ordering::Relaxed) > 4);
    let check = |store: &Store| {
        assert_eq!(store.stats().profiles, WRITERS * EACH);
        let series = block_on(store.query_range(
            cpu(""),
            TimeRange::ALL,
            SECOND,
            Some(vec!["writer".into()]),
        ))
        .expect("series");
        assert_eq!(series.len(), WRITERS);
        for s in &series {
            assert_eq!(s.points.len(), EACH);
            assert!(s.points.iter().all(|p| p.value == total));
        }
    };
    check(&store);
    drop(store);
    check(&Store::open(&dir, StoreOptions::default()).expect("reopens"));
}

#[test]
fn bad_writes_are_invalid_arguments_and_store_nothing() {
    let dir = temp_dir("bad");
    let store = Store::open(&dir, StoreOptions::default()).expect("opens");
    let invalid = |l: Labels, raw: &[u8], says: &str| match store.write(l, raw) {
        Err(SourceError::InvalidArgument(m)) => assert!(m.contains(says), "{m}"),
        other => panic!("expected InvalidArgument, got {other:?}"),
    };
    invalid(
        labels(&[("job", "x")]),
        &bytes("cpu.pb.gz"),
        "missing __name__ label",
    );
    invalid(
        labels(&[("__name__", "process_cpu"), ("bad-name", "x")]),
        &bytes("cpu.pb.gz"),
        "bad-name",
    );
    invalid(
        labels(&[("__name__", "process_cpu")]),
        b"\x1f\x8bnot gzip at all",
        "decode",
    );
    invalid(
        labels(&[("__name__", "process_cpu")]),
        b"\x0a\xff\xff\xff\xff\x0fgarbage",
        "decode",
    );
    let batch = vec![
        (labels(&[("__name__", "process_cpu")]), bytes("cpu.pb.gz")),
        (labels(&[("job", "x")]), bytes("cpu.pb.gz")),
    ];
    assert!(matches!(
        store.write_batch(&batch),
        Err(SourceError::InvalidArgument(_))
    ));
    assert_eq!(store.stats().profiles, 0);
    assert_eq!(store.stats().size_bytes, 0);
    assert_eq!(
        block_on(store.query_range(cpu(""), TimeRange::ALL, SECOND, None)).err(),
        Some(SourceError::NoData)
    );
    // The async sink takes the same path.
    let r = block_on(store.write_raw(labels(&[("job", "x")]), bytes("cpu.pb.gz")));
    assert!(matches!(r, Err(SourceError::InvalidArgument(_))));
    block_on(store.write_raw(labels(&[("__name__", "process_cpu")]), bytes("cpu.pb.gz")))
        .expect("written");
    assert_eq!(store.stats().profiles, 1);
}

/// The times of the stored CPU profiles, in seconds.
fn stored_seconds(store: &Store) -> Vec<i64> {
    let series =
        block_on(store.query_range(cpu(""), TimeRange::ALL, SECOND, Some(vec![]))).expect("series");
    series[0]
        .points
        .iter()
        .map(|p| p.time_nanos / SECOND)
        .collect()
}

#[test]
fn retention_by_age_drops_the_oldest_profiles_only() {
    let dir = temp_dir("age");
    let options = StoreOptions {
        retention_nanos: Some(35 * SECOND),
        ..StoreOptions::default()
    };
    let store = Store::open(&dir, options.clone()).expect("opens");
    for i in 0..10 {
        let l = labels(&[("__name__", "process_cpu")]);
        store
            .write(l, &cpu_at((1000 + i * 10) * SECOND))
            .expect("written");
    }
    assert_eq!(stored_seconds(&store), [1060, 1070, 1080, 1090]);
    drop(store);
    let store = Store::open(&dir, options).expect("reopens");
    assert_eq!(stored_seconds(&store), [1060, 1070, 1080, 1090]);
    assert_eq!(store.stats().profiles, 4);
}

#[test]
fn retention_by_size_drops_the_oldest_segments_only() {
    let dir = temp_dir("size");
    let record_bytes = {
        let store = Store::open(&temp_dir("size-probe"), StoreOptions::default()).expect("opens");
        store
            .write(labels(&[("__name__", "process_cpu")]), &cpu_at(SECOND))
            .expect("written");
        store.stats().size_bytes
    };
    let options = StoreOptions {
        max_size_bytes: Some(record_bytes * 7 / 2),
        ..StoreOptions::default()
    };
    let store = Store::open(&dir, options.clone()).expect("opens");
    for i in 0..10 {
        let l = labels(&[("__name__", "process_cpu")]);
        store
            .write(l, &cpu_at((1000 + i * 10) * SECOND))
            .expect("written");
    }
    assert_eq!(stored_seconds(&store), [1070, 1080, 1090]);
    let stats = store.stats();
    assert!(stats.size_bytes <= record_bytes * 7 / 2, "{stats:?}");
    assert_eq!(stats.segments, 3);
    assert_eq!(segments(&dir).len(), 3);
    drop(store);
    let store = Store::open(&dir, options).expect("reopens");
    assert_eq!(stored_seconds(&store), [1070, 1080, 1090]);
}

#[test]
fn a_folder_of_other_files_is_not_made_a_store() {
    let dir = temp_dir("not-a-store");
    let profile = dir.join("cpu.pb.gz");
    std::fs::write(&profile, bytes("cpu-1.pb.gz")).expect("write");
    let err = Store::open(&dir, StoreOptions::default())
        .err()
        .expect("refused")
        .to_string();
    assert!(
        err.contains("is not a flint store and is not empty (it holds cpu.pb.gz)"),
        "{err}"
    );
    // Untouched: no LOCK, no segment, so it still opens as a folder of profiles.
    let names: Vec<_> = std::fs::read_dir(&dir)
        .expect("listed")
        .map(|e| e.expect("entry").file_name())
        .collect();
    assert_eq!(names, ["cpu.pb.gz"]);
    assert!(!Store::is_store_dir(&dir));
    // An empty folder, a new one and a store are opened.
    let empty = temp_dir("empty");
    drop(Store::open(&empty, StoreOptions::default()).expect("an empty folder"));
    let open = Store::open(&empty, StoreOptions::default()).expect("the store made there");
    let err = Store::open(&empty, StoreOptions::default())
        .err()
        .expect("one opener at a time")
        .to_string();
    assert!(err.contains("is open in another process"), "{err}");
    drop(open);
    let new = Scratch::adopt(dir.with_extension("new"));
    drop(Store::open(&new, StoreOptions::default()).expect("a new folder"));
}

#[test]
fn the_store_keeps_each_profiles_default_type_and_rate() {
    let dir = temp_dir("default-type");
    let writers = |name: &str| {
        std::fs::read(
            PathBuf::from(env!("CARGO_MANIFEST_DIR"))
                .join("../tests/fixtures/writers")
                .join(name),
        )
        .expect("fixture")
    };
    {
        let store = Store::open(&dir, StoreOptions::default()).expect("opens");
        let write = |name: &str, raw: Vec<u8>| {
            block_on(store.write_raw(labels(&[("__name__", name)]), raw)).expect("written")
        };
        write("memory", writers("default_sample_type.pb.gz"));
        write("memory", writers("default_sample_type.pb.gz"));
        write("process_cpu", writers("rates.pb.gz"));
    }
    // Reopened: read back from the records.
    let store = Store::open(&dir, StoreOptions::default()).expect("reopens");
    let default = block_on(store.default_type(TimeRange::ALL)).expect("default");
    assert_eq!(
        default.map(|t| t.to_string()),
        Some("memory:alloc_space:bytes:space:bytes".to_string())
    );
    let series = block_on(store.query_range(cpu(""), TimeRange::ALL, 10 * SECOND, Some(vec![])))
        .expect("series");
    let point = series[0].points[0];
    assert_eq!((point.duration_nanos, point.value_per_second), (1, None));
}

/// A query's estimate is the bytes of the records it reads: the three records' segment
/// for all of them, a third of it for one, nothing for a selection without profiles.
#[test]
fn a_query_is_estimated_by_the_records_it_reads() {
    let (dir, data) = three_records("estimate");
    let store = Store::open(&dir, StoreOptions::default()).expect("reopens");
    let all = QueryTime::Merge(TimeRange {
        start_nanos: 0,
        end_nanos: 10 * SECOND,
    });
    let whole = store.estimate_bytes(&cpu(""), all).expect("an estimate");
    let one = store
        .estimate_bytes(&cpu(r#"{n="1"}"#), all)
        .expect("an estimate");
    assert!(
        whole > 0 && whole <= data.len() as u64,
        "{whole} of {}",
        data.len()
    );
    assert_eq!(one * 3, whole);
    assert_eq!(store.estimate_bytes(&cpu(r#"{n="9"}"#), all), Some(0));
    let single = store.estimate_bytes(&cpu(""), QueryTime::Single(2 * SECOND));
    assert_eq!(single, Some(one));
}

/// Each profile apart, in time order, each stamped with its time; none selected is
/// no data.
#[test]
fn a_query_over_time_gives_each_profile_apart() {
    let (dir, _) = three_records("each");
    let store = Store::open(&dir, StoreOptions::default()).expect("reopens");
    let all = TimeRange::ALL;
    let each = block_on(store.query_each(cpu(""), all, Progress::default())).expect("profiles");
    let times: Vec<i64> = each.iter().map(|p| p.time_nanos).collect();
    assert_eq!(times, [SECOND, 2 * SECOND, 3 * SECOND]);
    let one = decode(&bytes("cpu-1.pb.gz")).expect("decodes").total(1);
    assert!(each.iter().all(|p| p.total(0) == one), "the cpu type alone");
    let none = block_on(store.query_each(cpu(r#"{n="9"}"#), all, Progress::default()));
    assert!(matches!(none, Err(SourceError::NoData)));
}
