//! A folder indexed with its samples kept answers merges as one that reads the files.

#![allow(
    clippy::expect_used,
    clippy::unwrap_used,
    reason = "a test fails loudly on a broken fixture"
)]

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use capture::{FileSource, ProfileSource, Progress, QueryTime, Selector, SourceError, TimeRange};
use flint_fixture_gen::{
    Scratch, SeriesParams, Universe, UniverseParams, encode_gz, series_profile,
};
use profile_model::{Granularity, Profile, View, ViewOptions};

const CPU: &str = "process_cpu:cpu:nanoseconds:cpu:nanoseconds:delta";
const START: i64 = 1_700_000_000_000_000_000;

fn block_on<T>(f: impl std::future::Future<Output = T>) -> T {
    tokio::runtime::Builder::new_current_thread()
        .build()
        .expect("runtime")
        .block_on(f)
}

/// 40 generated 10-second CPU profiles (labels `comm`, numeric `pid`, `container`),
/// a Go CPU profile and a heap profile, and a broken file, in scratch folder `name`.
fn folder(name: &str) -> Scratch {
    let dir = Scratch::new(name);
    let u = Universe::new(&UniverseParams {
        locations: 300,
        functions: 80,
        binaries: 4,
        min_depth: 3,
        max_depth: 10,
        seed: 9,
    })
    .unwrap();
    let sp = SeriesParams {
        samples: 60,
        start_nanos: START,
        step_secs: 10,
        seed: 9,
    };
    for i in 0..40 {
        let (_, gz) = encode_gz(&series_profile(&u, &sp, i)).unwrap();
        std::fs::write(dir.join(format!("{i:03}.pb.gz")), gz).unwrap();
    }
    let go = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../tests/fixtures/go");
    for name in ["cpu-1.pb.gz", "heap.pb.gz"] {
        std::fs::copy(go.join(name), dir.join(name)).unwrap();
    }
    std::fs::write(dir.join("broken.pb.gz"), b"\x1f\x8bnot gzip").unwrap();
    dir
}

fn open(dir: &Path, budget: Option<usize>) -> FileSource {
    let paths = [dir.to_path_buf()];
    let progress = Progress::default();
    let (fs, skipped) = match budget {
        Some(budget) => {
            FileSource::open_keeping_stacks(&paths, Default::default(), budget, &progress)
        }
        None => FileSource::open(&paths, Default::default(), &progress),
    }
    .expect("opens");
    assert_eq!(skipped.len(), 1, "{skipped:?}");
    fs
}

/// Sample types, start, duration, top rows per type, totals per label set.
type Summary = (
    Vec<String>,
    i64,
    i64,
    Vec<Vec<(String, i64, i64)>>,
    BTreeMap<String, Vec<i64>>,
);

/// What a merged profile says, whatever its order: header, top table at address
/// granularity of every type, and the totals per label set.
fn summary(p: &Profile) -> Summary {
    let view = View::new(
        p,
        &ViewOptions {
            granularity: Granularity::Address,
            ..ViewOptions::default()
        },
    );
    let tops = (0..p.sample_types.len())
        .map(|t| {
            let mut rows: Vec<(String, i64, i64)> = view
                .top(p, t)
                .rows
                .iter()
                .map(|r| (view.frames.get(r.frame).name.clone(), r.flat, r.cum))
                .collect();
            rows.sort();
            rows
        })
        .collect();
    let mut by_labels: BTreeMap<String, Vec<i64>> = BTreeMap::new();
    for i in 0..p.samples.len() {
        let mut labels: Vec<String> = p
            .sample_labels(i)
            .map(|(k, v)| format!("{k}={v}"))
            .collect();
        labels.sort();
        let sums = by_labels
            .entry(labels.join(","))
            .or_insert_with(|| vec![0; p.sample_types.len()]);
        for (s, c) in sums.iter_mut().zip(&p.samples.values) {
            *s += c[i];
        }
    }
    let types = p
        .sample_types
        .iter()
        .map(|t| format!("{}/{}", p.str(t.kind), p.str(t.unit)))
        .collect();
    (types, p.time_nanos, p.duration_nanos, tops, by_labels)
}

fn query(fs: &FileSource, selector: &str, time: QueryTime) -> Result<Profile, SourceError> {
    let selector = Selector::parse(selector).expect("selector");
    block_on(fs.query(selector, time, Progress::default()))
}

#[test]
fn kept_samples_merge_as_the_files_read_again_for_every_selection() {
    let dir = folder("capture-kept-each");
    let (kept, read) = (open(&dir, Some(64 << 20)), open(&dir, None));
    let range = |from: i64, to: i64| {
        QueryTime::Merge(TimeRange {
            start_nanos: START + from * 10_000_000_000,
            end_nanos: START + to * 10_000_000_000,
        })
    };
    let comms = block_on(kept.values("comm".into(), Selector::parse(CPU).unwrap(), TimeRange::ALL))
        .expect("comm values");
    assert!(comms.len() > 1, "{comms:?}");
    let (comm, other) = (&comms[0], &comms[1][..2]);
    let cases = [
        (CPU.to_string(), QueryTime::Merge(TimeRange::ALL)),
        (CPU.to_string(), range(5, 17)),
        (
            CPU.to_string(),
            QueryTime::Single(START + 30 * 10_000_000_000),
        ),
        (
            format!(r#"{CPU}{{comm="{comm}"}}"#),
            QueryTime::Merge(TimeRange::ALL),
        ),
        (
            format!(r#"{CPU}{{comm!~"{other}.*",pid=~"[0-4].*"}}"#),
            range(0, 25),
        ),
        (
            format!(r#"{CPU}{{path=~".*/00[0-9].pb.gz"}}"#),
            QueryTime::Merge(TimeRange::ALL),
        ),
        (
            "memory:inuse_space:bytes:space:bytes".to_string(),
            QueryTime::Merge(TimeRange::ALL),
        ),
    ];
    for (selector, time) in cases {
        let a =
            query(&kept, &selector, time).unwrap_or_else(|e| panic!("{selector} {time:?}: {e:?}"));
        let b = query(&read, &selector, time).expect("merge");
        assert!(
            a.samples.len() > 1,
            "{selector} {time:?}: {}",
            a.samples.len()
        );
        assert_eq!(summary(&a), summary(&b), "{selector} {time:?}");
    }
    let nobody = format!(r#"{CPU}{{comm="nobody"}}"#);
    let none = query(&kept, &nobody, QueryTime::Merge(TimeRange::ALL));
    assert!(matches!(none, Err(SourceError::NoData)), "{none:?}");
}

#[test]
fn kept_samples_outlive_their_files_and_a_merge_beyond_the_budget_reads_them() {
    let dir = folder("capture-kept-gone");
    let kept = open(&dir, Some(64 << 20));
    // Only the first profiles fit a small budget: a merge of all reads the files.
    let partly = open(&dir, Some(1));
    for name in ["000.pb.gz", "001.pb.gz", "020.pb.gz"] {
        std::fs::remove_file(dir.join(name)).unwrap();
    }
    let progress = Progress::default();
    let all = block_on(kept.query(
        Selector::parse(CPU).unwrap(),
        QueryTime::Merge(TimeRange::ALL),
        progress.clone(),
    ))
    .expect("merges");
    assert!(progress.skipped().is_empty(), "{:?}", progress.skipped());
    let progress = Progress::default();
    let read = block_on(partly.query(
        Selector::parse(CPU).unwrap(),
        QueryTime::Merge(TimeRange::ALL),
        progress.clone(),
    ))
    .expect("merges the rest");
    let said = progress.skipped();
    assert_eq!(said.len(), 3, "{said:?}");
    assert!(said.iter().any(|s| s.contains("020.pb.gz")), "{said:?}");
    assert!(all.total(1) > read.total(1));
}

#[test]
fn a_cancelled_merge_of_kept_samples_is_cancelled() {
    let dir = folder("capture-kept-cancel");
    let kept = open(&dir, Some(64 << 20));
    let progress = Progress::default();
    progress.cancel();
    let err = block_on(kept.query(
        Selector::parse(CPU).unwrap(),
        QueryTime::Merge(TimeRange::ALL),
        progress,
    ))
    .expect_err("cancelled");
    assert!(matches!(err, SourceError::Cancelled), "{err:?}");
}

#[test]
fn a_perf_data_files_slices_merge_kept_as_read_and_add_up_to_the_file() {
    let dir = Scratch::new("capture-kept-perf");
    let programs = flint_fixture_gen::symbol_parts::build_frame_pointer_programs(&dir);
    let recorded = programs.ok().and_then(|(c, _)| {
        let out = std::process::Command::new("perf")
            .args(["record", "-q", "-g", "-F", "999", "-o"])
            .arg(dir.join("c.data"))
            .arg("--")
            .arg(c)
            .arg("1000000")
            .output()
            .ok()?;
        out.status.success().then_some(())
    });
    if recorded.is_none() {
        println!("SKIP: cannot build the test program or run perf record here");
        return;
    }
    let paths = [dir.join("c.data")];
    let progress = Progress::default();
    let (kept, _) =
        FileSource::open_keeping_stacks(&paths, Default::default(), 64 << 20, &progress).unwrap();
    let (read, _) = FileSource::open(&paths, Default::default(), &progress).unwrap();
    assert!(kept.len() > 3, "{} slices", kept.len());
    let span = kept.span();
    let half = TimeRange {
        start_nanos: span.start_nanos,
        end_nanos: span.start_nanos + (span.end_nanos - span.start_nanos) / 2,
    };
    for time in [QueryTime::Merge(TimeRange::ALL), QueryTime::Merge(half)] {
        let a = query(&kept, CPU, time).unwrap();
        let b = query(&read, CPU, time).unwrap();
        assert_eq!(summary(&a).3, summary(&b).3, "{time:?}");
    }
    let whole = capture::read::read_profile(&paths[0], Default::default()).unwrap();
    let all = query(&kept, CPU, QueryTime::Merge(TimeRange::ALL)).unwrap();
    let total = |p: &Profile| p.samples.values.last().unwrap().iter().sum::<i64>();
    assert_eq!(total(&all), total(&whole));
    let first_half = query(&kept, CPU, QueryTime::Merge(half)).unwrap();
    assert!(total(&first_half) < total(&whole));
}
