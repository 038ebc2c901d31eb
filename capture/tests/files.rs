//! The file source answers Parca's questions about real Go profiles.

#![allow(
    clippy::expect_used,
    clippy::unwrap_used,
    reason = "a test fails loudly on a broken fixture"
)]

use std::path::PathBuf;

use capture::{FileSource, ProfileSource, Progress, QueryTime, Selector, SourceError, TimeRange};
use flint_fixture_gen::Scratch;
use profile_model::Profile;
use profile_model::codec::{DecodeOptions, decode};

const CPU: &str = "process_cpu:cpu:nanoseconds:cpu:nanoseconds:delta";

fn fixture(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../tests/fixtures/go")
        .join(name)
}

fn decoded(name: &str) -> Profile {
    decode(&std::fs::read(fixture(name)).expect("fixture")).expect("decodes")
}

/// A directory with cpu-1, cpu-2 (in a sub-directory), cpu-3 and a broken file, open
/// as a source while the [`Scratch`] lives.
fn source() -> (FileSource, Vec<String>, Scratch) {
    static NEXT: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    let n = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let dir = std::env::temp_dir().join(format!("flint-capture-{}-{n}", std::process::id()));
    let sub = dir.join("sub");
    std::fs::create_dir_all(&sub).expect("temp dir");
    for (name, to) in [
        ("cpu-1.pb.gz", &dir),
        ("cpu-2.pb.gz", &sub),
        ("cpu-3.pb.gz", &dir),
    ] {
        std::fs::copy(fixture(name), to.join(name)).expect("copy");
    }
    std::fs::write(dir.join("broken.pb.gz"), b"\x1f\x8bnot gzip").expect("write");
    let (fs, skipped) = FileSource::open(
        std::slice::from_ref(&dir),
        DecodeOptions::default(),
        &Progress::default(),
    )
    .expect("opens");
    (fs, skipped, Scratch::adopt(dir))
}

fn block_on<T>(f: impl std::future::Future<Output = T>) -> T {
    tokio::runtime::Builder::new_current_thread()
        .build()
        .expect("runtime")
        .block_on(f)
}

/// A scratch folder `flint-NAME-PID` holding copies of the Go fixtures `names`, and
/// the source that indexes it (with the files it skipped).
fn folder_of(name: &str, names: &[&str]) -> (Scratch, FileSource, Vec<String>) {
    let dir = Scratch::new(name);
    for name in names {
        std::fs::copy(fixture(name), dir.join(name)).expect("copy");
    }
    let (fs, skipped) = FileSource::open(
        &[dir.to_path_buf()],
        DecodeOptions::default(),
        &Progress::default(),
    )
    .expect("opens");
    (dir, fs, skipped)
}

fn cpu(matchers: &str) -> Selector {
    Selector::parse(&format!("{CPU}{matchers}")).expect("selector")
}

#[test]
fn indexes_a_directory_and_skips_broken_files() {
    let (fs, skipped, _dir) = source();
    assert_eq!(fs.len(), 3);
    assert_eq!(skipped.len(), 1);
    assert!(skipped[0].contains("broken.pb.gz"), "{skipped:?}");
    let types: Vec<String> = block_on(fs.profile_types(TimeRange::ALL))
        .expect("types")
        .iter()
        .map(ToString::to_string)
        .collect();
    assert_eq!(
        types,
        [CPU, "process_cpu:samples:count:cpu:nanoseconds:delta"]
    );
    let labels = block_on(fs.labels(cpu(""), TimeRange::ALL)).expect("labels");
    assert!(
        labels.contains(&"endpoint".to_string()) && labels.contains(&"path".to_string()),
        "{labels:?}"
    );
    let values = block_on(fs.values("endpoint".into(), cpu(""), TimeRange::ALL)).expect("values");
    assert!(values.contains(&"/api/hash".to_string()) && values.contains(&"/api/sort".to_string()));
}

#[test]
fn a_file_larger_than_the_cap_is_refused_unread_and_skipped() {
    let dir = std::env::temp_dir().join(format!("flint-capture-huge-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("temp dir");
    let good = std::fs::read(fixture("cpu-1.pb.gz")).expect("fixture");
    std::fs::write(dir.join("cpu-1.pb.gz"), &good).expect("write");
    // 64 GiB that take no room on disk: read whole, it would not fit in memory.
    let huge = std::fs::File::create(dir.join("huge.pb.gz")).expect("create");
    huge.set_len(64 << 30).expect("sparse file");
    let (fs, skipped) = FileSource::open(
        std::slice::from_ref(&dir),
        DecodeOptions::default(),
        &Progress::default(),
    )
    .expect("opens");
    assert_eq!(fs.len(), 1);
    assert_eq!(
        skipped,
        [format!(
            "{}: the file's size, 64.0 GiB, exceeds the limit of 2.00 GiB (raise it with --max-decompressed)",
            dir.join("huge.pb.gz").display()
        )]
    );
    // At the cap exactly, the file is read.
    let at_cap = DecodeOptions {
        max_decompressed_bytes: good.len() as u64,
        ..DecodeOptions::default()
    };
    let mut buf = Vec::new();
    capture::read::read_into(&dir.join("cpu-1.pb.gz"), &mut buf, at_cap).expect("at the cap");
    assert_eq!(buf, good);
    let under = DecodeOptions {
        max_decompressed_bytes: good.len() as u64 - 1,
        ..DecodeOptions::default()
    };
    let refused = capture::read::read_into(&dir.join("cpu-1.pb.gz"), &mut buf, under);
    assert!(refused.is_err_and(|e| e.to_string().contains("exceeds the limit")));
    std::fs::remove_dir_all(&dir).expect("clean up");
}

#[test]
fn series_points_are_the_profiles_totals() {
    let (fs, _, _dir) = source();
    let totals: Vec<i64> = ["cpu-1.pb.gz", "cpu-2.pb.gz", "cpu-3.pb.gz"]
        .iter()
        .map(|n| decoded(n).total(1))
        .collect();
    let one = block_on(fs.query_range(cpu(""), TimeRange::ALL, 1, Some(vec![]))).expect("series");
    assert_eq!(one.len(), 1);
    let values: Vec<i64> = one[0].points.iter().map(|p| p.value).collect();
    assert_eq!(values, totals);
    let p = decoded("cpu-1.pb.gz");
    let expected_rate = p.total(1) as f64 / (p.duration_nanos as f64 / 1e9);
    assert!((one[0].points[0].value_per_second.expect("a rate") - expected_rate).abs() < 1e-6);
    // Summed by endpoint, each point's series add up to the same totals.
    let by_endpoint =
        block_on(fs.query_range(cpu(""), TimeRange::ALL, 1, Some(vec!["endpoint".into()])))
            .expect("series");
    assert!(by_endpoint.len() > 3);
    let mut sums = std::collections::BTreeMap::new();
    for s in &by_endpoint {
        for p in &s.points {
            *sums.entry(p.time_nanos).or_insert(0) += p.value;
        }
    }
    assert_eq!(sums.values().copied().collect::<Vec<_>>(), totals);
    // One step over everything: one point holding the sum.
    let coarse = block_on(fs.query_range(cpu(""), TimeRange::ALL, i64::MAX / 2, Some(vec![])))
        .expect("series");
    assert_eq!(coarse[0].points.len(), 1);
    assert_eq!(coarse[0].points[0].value, totals.iter().sum::<i64>());
    let bad = block_on(fs.query_range(cpu(""), TimeRange::ALL, 0, None));
    assert!(matches!(bad, Err(SourceError::InvalidArgument(_))));
}

#[test]
fn merge_and_single_queries() {
    let (fs, _, _dir) = source();
    let all: i64 = ["cpu-1.pb.gz", "cpu-2.pb.gz", "cpu-3.pb.gz"]
        .iter()
        .map(|n| decoded(n).total(1))
        .sum();
    let merged = block_on(fs.query(
        cpu(""),
        QueryTime::Merge(TimeRange::ALL),
        Progress::default(),
    ))
    .expect("merge");
    assert_eq!(merged.total(1), all);
    let second = decoded("cpu-2.pb.gz");
    let single = block_on(fs.query(
        cpu(""),
        QueryTime::Single(second.time_nanos),
        Progress::default(),
    ))
    .expect("single");
    assert_eq!(single.total(1), second.total(1));
    // A matcher keeps only the matching samples.
    let hash = block_on(fs.query(
        cpu(r#"{endpoint="/api/hash"}"#),
        QueryTime::Merge(TimeRange::ALL),
        Progress::default(),
    ))
    .expect("hash");
    let expected: i64 = ["cpu-1.pb.gz", "cpu-2.pb.gz", "cpu-3.pb.gz"]
        .iter()
        .map(|n| {
            let p = decoded(n);
            (0..p.samples.len())
                .filter(|&i| {
                    p.sample_labels(i)
                        .any(|(k, v)| k == "endpoint" && v == "/api/hash")
                })
                .map(|i| p.samples.values[1][i])
                .sum::<i64>()
        })
        .sum();
    assert!(expected > 0);
    assert_eq!(hash.total(1), expected);
}

#[test]
fn empty_selections_and_cancel() {
    let (fs, _, _dir) = source();
    let nothing = TimeRange {
        start_nanos: 0,
        end_nanos: 1,
    };
    let r = block_on(fs.query(cpu(""), QueryTime::Merge(nothing), Progress::default()));
    assert_eq!(r.err(), Some(SourceError::NoData));
    let r = block_on(fs.query(
        cpu(r#"{endpoint="/nope"}"#),
        QueryTime::Merge(TimeRange::ALL),
        Progress::default(),
    ));
    assert_eq!(r.err(), Some(SourceError::NoData));
    let heap = Selector::parse("memory:inuse_space:bytes:space:bytes").expect("selector");
    assert_eq!(
        block_on(fs.query_range(heap, TimeRange::ALL, 1, None)).err(),
        Some(SourceError::NoData)
    );
    let progress = Progress::default();
    progress.cancel();
    let r = block_on(fs.query(cpu(""), QueryTime::Merge(TimeRange::ALL), progress));
    assert_eq!(r.err(), Some(SourceError::Cancelled));
}

/// Regression: a matcher on a numeric label (`pid="7"`) selects the same samples in the
/// plot's series and in the merge (the merge used to see numeric labels as empty).
#[test]
fn numeric_labels_match_in_series_and_merge_alike() {
    use profile_model::codec::{encode_gzip, from_proto};
    use profile_model::proto;
    let label = |pid: i64| proto::Label {
        key: 3,
        num: pid,
        ..Default::default()
    };
    let sample = |value: i64, pid: i64| proto::Sample {
        location_id: vec![1],
        value: vec![value],
        label: vec![label(pid)],
    };
    let message = proto::Profile {
        sample_type: vec![proto::ValueType { r#type: 1, unit: 2 }],
        period_type: Some(proto::ValueType { r#type: 1, unit: 2 }),
        string_table: vec![
            "".into(),
            "cpu".into(),
            "nanoseconds".into(),
            "pid".into(),
            "main".into(),
        ],
        function: vec![proto::Function {
            id: 1,
            name: 4,
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
        sample: vec![sample(30, 7), sample(5, 8), sample(12, 7)],
        time_nanos: 1_000_000_000,
        duration_nanos: 10_000_000_000,
        ..Default::default()
    };
    let dir = std::env::temp_dir().join(format!("flint-capture-numeric-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let _scratch = Scratch::adopt(dir.clone());
    let bytes = encode_gzip(&from_proto(message).expect("valid profile"));
    std::fs::write(dir.join("pids.pb.gz"), bytes).expect("write");
    let (fs, _) =
        FileSource::open(&[dir], DecodeOptions::default(), &Progress::default()).expect("opens");
    let selector = Selector::parse(r#"process_cpu:cpu:nanoseconds:cpu:nanoseconds:delta{pid="7"}"#)
        .expect("selector");
    let series = block_on(fs.query_range(selector.clone(), TimeRange::ALL, 1, Some(vec![])))
        .expect("series");
    assert_eq!(series[0].points[0].value, 42);
    let merged = block_on(fs.query(
        selector,
        QueryTime::Merge(TimeRange::ALL),
        Progress::default(),
    ))
    .expect("merge");
    assert_eq!(merged.total(0), 42);
}

#[test]
fn directories_are_searched_through_links_and_without_hidden_entries() {
    let dir = std::env::temp_dir().join(format!("flint-files-under-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let (real, elsewhere) = (dir.join("real"), dir.join("elsewhere"));
    std::fs::create_dir_all(real.join("sub")).expect("dirs");
    std::fs::create_dir_all(elsewhere.join("linked-dir")).expect("dirs");
    for file in [
        real.join("b.pb.gz"),
        real.join("sub/a.pb.gz"),
        real.join(".hidden.pb.gz"),
        elsewhere.join("target.pb.gz"),
        elsewhere.join("linked-dir/c.pb.gz"),
    ] {
        std::fs::write(&file, b"x").expect("write");
    }
    std::os::unix::fs::symlink(elsewhere.join("target.pb.gz"), real.join("link.pb.gz"))
        .expect("file link");
    std::os::unix::fs::symlink(elsewhere.join("linked-dir"), real.join("linked"))
        .expect("dir link");
    std::os::unix::fs::symlink(dir.join("missing"), real.join("dangling")).expect("dangling link");
    let found = capture::read::files_under(&real).expect("listed").files;
    let names: Vec<String> = found
        .iter()
        .map(|p| p.strip_prefix(&real).expect("under").display().to_string())
        .collect();
    assert_eq!(
        names,
        ["b.pb.gz", "link.pb.gz", "linked/c.pb.gz", "sub/a.pb.gz"]
    );
    std::fs::remove_dir_all(&dir).expect("clean up");
}

#[test]
fn a_link_loop_or_a_second_path_to_a_file_lists_it_once() {
    let dir = std::env::temp_dir().join(format!("flint-files-loop-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(dir.join("day/sub")).expect("dirs");
    std::fs::write(dir.join("day/sub/a.pb.gz"), b"x").expect("write");
    std::fs::write(dir.join("day/b.pb.gz"), b"x").expect("write");
    // A link back up the tree, a second link to a folder, and one to a file.
    std::os::unix::fs::symlink(dir.join("day"), dir.join("day/sub/up")).expect("loop");
    std::os::unix::fs::symlink(dir.join("day/sub"), dir.join("day/again")).expect("dir link");
    std::os::unix::fs::symlink(dir.join("day/b.pb.gz"), dir.join("day/sub/b-link.pb.gz"))
        .expect("file link");
    let found = capture::read::files_under(&dir.join("day"))
        .expect("listed")
        .files;
    let names: Vec<String> = found
        .iter()
        .map(|p| {
            p.strip_prefix(dir.join("day"))
                .expect("under")
                .display()
                .to_string()
        })
        .collect();
    // Each file once, by its path without links.
    assert_eq!(names, ["b.pb.gz", "sub/a.pb.gz"]);
    std::fs::remove_dir_all(&dir).expect("clean up");
}

#[test]
fn series_labels_are_the_files_labels_with_the_sample_labels_over_them() {
    let (fs, _, _dir) = source();
    let series = block_on(fs.query_range(cpu(""), TimeRange::ALL, 1, None)).expect("series");
    let p = decoded("cpu-1.pb.gz");
    let endpoints = (0..p.label_sets.len() as u32)
        .filter(|&s| {
            p.label_sets[s as usize]
                .iter()
                .any(|l| p.str(l.key) == "endpoint")
        })
        .count();
    let of_cpu_1: Vec<_> = series
        .iter()
        .filter(|s| {
            s.labels
                .get("path")
                .is_some_and(|p| p.ends_with("/cpu-1.pb.gz"))
        })
        .collect();
    assert!(of_cpu_1.len() >= 2 && endpoints >= 2, "{series:?}");
    for s in &of_cpu_1 {
        assert!(s.labels.contains_key("binary"), "{:?}", s.labels);
        assert!(s.labels.contains_key("endpoint"), "{:?}", s.labels);
    }
    // A file's label selects its series only; a sample label selects across files.
    let one_file =
        block_on(fs.query_range(cpu("{path=~\".*/cpu-1.pb.gz\"}"), TimeRange::ALL, 1, None))
            .expect("series");
    assert_eq!(one_file.len(), of_cpu_1.len());
    let hash = block_on(fs.query_range(cpu("{endpoint=\"/api/hash\"}"), TimeRange::ALL, 1, None))
        .expect("series");
    let files: std::collections::BTreeSet<_> =
        hash.iter().filter_map(|s| s.labels.get("path")).collect();
    assert_eq!(files.len(), 3, "{files:?}");
    let values = block_on(fs.values(
        "path".into(),
        cpu("{endpoint=\"/api/hash\"}"),
        TimeRange::ALL,
    ))
    .expect("values");
    assert_eq!(values.len(), 3, "{values:?}");
}

#[test]
fn files_gone_or_broken_since_indexing_are_left_out_of_a_merge_and_named() {
    let (dir, fs, skipped) = folder_of(
        "capture-gone",
        &["cpu-1.pb.gz", "cpu-2.pb.gz", "cpu-3.pb.gz"],
    );
    assert!(skipped.is_empty());
    std::fs::remove_file(dir.join("cpu-2.pb.gz")).expect("remove");
    std::fs::write(dir.join("cpu-3.pb.gz"), b"\x1f\x8bnot gzip any more").expect("write");
    let progress = Progress::default();
    let merged = block_on(fs.query(cpu(""), QueryTime::Merge(TimeRange::ALL), progress.clone()))
        .expect("the rest merges");
    assert_eq!(merged.total(1), decoded("cpu-1.pb.gz").total(1));
    let said = progress.skipped();
    assert_eq!(said.len(), 2, "{said:?}");
    assert!(said.iter().any(|s| s.contains("cpu-2.pb.gz")), "{said:?}");
    assert!(
        said.iter()
            .any(|s| s.contains("cpu-3.pb.gz") && s.contains("gzip")),
        "{said:?}"
    );
    // Nothing left: the answer is the first reason.
    std::fs::remove_file(dir.join("cpu-1.pb.gz")).expect("remove");
    let err = block_on(fs.query(
        cpu(""),
        QueryTime::Merge(TimeRange::ALL),
        Progress::default(),
    ))
    .expect_err("nothing to merge");
    assert!(
        matches!(&err, SourceError::Failed(e) if e.contains("cpu-1.pb.gz")),
        "{err:?}"
    );
}

#[test]
fn each_profile_type_has_the_span_of_its_own_profiles() {
    let (_dir, fs, _) = folder_of("capture-spans", &["cpu-1.pb.gz", "heap.pb.gz"]);
    let (cpu_1, heap) = (decoded("cpu-1.pb.gz"), decoded("heap.pb.gz"));
    let cpu_span = TimeRange {
        start_nanos: cpu_1.time_nanos,
        end_nanos: cpu_1.time_nanos + cpu_1.duration_nanos,
    };
    // A snapshot without a duration lasts a nanosecond.
    let heap_span = TimeRange {
        start_nanos: heap.time_nanos,
        end_nanos: heap.time_nanos + 1,
    };
    assert_ne!(cpu_span, heap_span);
    assert_eq!(fs.span_of(&cpu("").profile_type), cpu_span);
    let inuse = Selector::parse("memory:inuse_space:bytes:space:bytes").expect("selector");
    assert_eq!(fs.span_of(&inuse.profile_type), heap_span);
    let both = TimeRange {
        start_nanos: cpu_span.start_nanos.min(heap_span.start_nanos),
        end_nanos: cpu_span.end_nanos.max(heap_span.end_nanos),
    };
    assert_eq!(fs.span(), both);
    // A type no profile has: the span of them all.
    let none = Selector::parse("goroutine:goroutine:count:goroutine:count").expect("selector");
    assert_eq!(fs.span_of(&none.profile_type), both);
}

fn writers_fixture(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../tests/fixtures/writers")
        .join(name)
}

/// The source of the files `paths`.
fn files(paths: &[PathBuf]) -> FileSource {
    FileSource::open(paths, DecodeOptions::default(), &Progress::default())
        .expect("opens")
        .0
}

#[test]
fn the_default_type_is_the_one_pprof_shows() {
    let shown = |paths: &[PathBuf]| {
        let fs = files(paths);
        let types = block_on(fs.profile_types(TimeRange::ALL)).expect("types");
        let default = block_on(fs.default_type(TimeRange::ALL)).expect("default");
        capture::shown_type(&types, default.as_ref())
            .map(|t| t.sample_type.clone())
            .expect("a type")
    };
    // default_sample_type (field 14) names the second of four.
    assert_eq!(
        shown(&[writers_fixture("default_sample_type.pb.gz")]),
        "alloc_space"
    );
    // Else the last type: a Go heap profile's bytes in use, a Node wall profile's time.
    assert_eq!(shown(&[fixture("heap.pb.gz")]), "inuse_space");
    assert_eq!(shown(&[writers_fixture("node-pprof-wall.pb.gz")]), "wall");
    assert_eq!(shown(&[fixture("cpu-1.pb.gz")]), "cpu");
    // The most common default among the profiles: two CPU profiles to one heap.
    let mixed = [
        fixture("cpu-1.pb.gz"),
        fixture("cpu-2.pb.gz"),
        fixture("heap.pb.gz"),
    ];
    assert_eq!(shown(&mixed), "cpu");
}

#[test]
fn a_profile_shorter_than_its_period_gives_no_rate() {
    let fs = files(&[writers_fixture("rates.pb.gz"), fixture("cpu-1.pb.gz")]);
    let series =
        block_on(fs.query_range(cpu(""), TimeRange::ALL, 1, Some(vec![]))).expect("series");
    let rates: Vec<(i64, Option<f64>)> = series[0]
        .points
        .iter()
        .map(|p| (p.duration_nanos, p.value_per_second))
        .collect();
    // cpu-1 (10 s) has its rate; rates.pb.gz, 1 ns of 10 ms samples, has none.
    assert_eq!(rates.len(), 2);
    assert!(
        rates.iter().any(|&(d, r)| d > 1 && r.is_some()),
        "{rates:?}"
    );
    assert!(rates.contains(&(1, None)), "{rates:?}");
    // Nor a snapshot pypprof says lasted 1 ns (a period of threads, not of time).
    let threads = files(&[writers_fixture("python-pypprof-threads.pb.gz")]);
    let types = block_on(threads.profile_types(TimeRange::ALL)).expect("types");
    let all = Selector {
        profile_type: types[0].clone(),
        matchers: Vec::new(),
    };
    let series =
        block_on(threads.query_range(all, TimeRange::ALL, 1, Some(vec![]))).expect("series");
    assert_eq!(series[0].points[0].value_per_second, None);
    // A snapshot's bytes in use have no rate either.
    let heap = files(&[fixture("heap.pb.gz")]);
    let inuse = Selector::parse("memory:inuse_space:bytes:space:bytes").expect("selector");
    let series =
        block_on(heap.query_range(inuse, TimeRange::ALL, 1, Some(vec![]))).expect("series");
    assert_eq!(series[0].points[0].value_per_second, None);
}
