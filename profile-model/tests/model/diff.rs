//! Comparing two profiles: the combined two-column profile, the coloring rule, the
//! table of differences and the exported difference.

use std::collections::BTreeMap;

use profile_model::calltree::CallTree;
use profile_model::diff::{
    self, Change, DiffMode, classify, combine, delta, diff_rows, difference,
};
use profile_model::{Profile, ProfileError, View, ViewOptions};

use super::{fixture, profile, profile_typed};

/// `root;…;node` → total of column `t`, for every node of the tree with a non-zero total.
fn path_totals(p: &Profile, t: usize) -> BTreeMap<String, i64> {
    let view = View::new(p, &ViewOptions::default());
    let tree = view.call_tree(p);
    let totals = tree.totals(t);
    (1..tree.len() as u32)
        .filter(|n| totals[*n as usize] != 0)
        .map(|n| {
            let names: Vec<&str> = tree
                .path(n)
                .iter()
                .map(|m| view.frames.get(tree.frame(*m)).name.as_str())
                .collect();
            (names.join(";"), totals[n as usize])
        })
        .collect()
}

/// Function name → (flat, cum) of the top table of column `t`.
fn top_by_name(p: &Profile, t: usize) -> BTreeMap<String, (i64, i64)> {
    let view = View::new(p, &ViewOptions::default());
    view.top(p, t)
        .rows
        .iter()
        .map(|r| (view.frames.get(r.frame).name.clone(), (r.flat, r.cum)))
        .collect()
}

fn small_a() -> Profile {
    profile(&[
        ("main;a;x", 6, None),
        ("main;b", 3, Some("/home")),
        ("main", 1, None),
    ])
}

fn small_b() -> Profile {
    profile(&[
        ("main;a;x", 2, None),
        ("main;b", 5, Some("/home")),
        ("main;c;y", 4, Some("/api")),
    ])
}

#[test]
fn combine_keeps_both_sides_per_node() {
    let (a, b) = (small_a(), small_b());
    let combined = combine(&a, 0, &b, 0).expect("same units");
    assert_eq!(combined.sample_type_names(), ["a/count", "b/count"]);
    assert_eq!((combined.total(diff::A), combined.total(diff::B)), (10, 11));
    let (tree_a, tree_b) = (
        path_totals(&combined, diff::A),
        path_totals(&combined, diff::B),
    );
    assert_eq!(tree_a, path_totals(&a, 0));
    assert_eq!(tree_b, path_totals(&b, 0));

    // A stack only in B is in the tree with a = 0.
    let view = View::new(&combined, &ViewOptions::default());
    let tree = view.call_tree(&combined);
    let (ta, tb) = (tree.totals(diff::A), tree.totals(diff::B));
    let main = tree.children(CallTree::ROOT).next().expect("main");
    let c = tree
        .children(main)
        .find(|n| view.frames.get(tree.frame(*n)).name == "c")
        .expect("c is in the combined tree");
    assert_eq!((ta[c as usize], tb[c as usize]), (0, 4));
    assert_eq!((ta[main as usize], tb[main as usize]), (10, 11));

    // The top table of each column is the top table of each input.
    assert_eq!(top_by_name(&combined, diff::A), top_by_name(&a, 0));
    assert_eq!(top_by_name(&combined, diff::B), top_by_name(&b, 0));
}

#[test]
fn combine_picks_the_chosen_types_and_keeps_bs_period() {
    let a = fixture("cpu-1.pb.gz");
    let b = fixture("cpu-3.pb.gz");
    let (ca, cb) = (
        a.find_sample_type("cpu").expect("cpu"),
        b.find_sample_type("cpu").expect("cpu"),
    );
    let combined = combine(&a, ca, &b, cb).expect("same units");
    assert_eq!(combined.total(diff::A), a.total(ca));
    assert_eq!(combined.total(diff::B), b.total(cb));
    assert_eq!(combined.period, b.period);
    assert_eq!(combined.time_nanos, b.time_nanos);
    assert_eq!(combined.duration_nanos, b.duration_nanos);
    assert_eq!(
        combined.str(combined.period_type.kind),
        b.str(b.period_type.kind)
    );
    assert_eq!(combined.default_sample_index(), diff::B);
    assert!(combined.sample_type_names()[0].ends_with("/nanoseconds"));
}

#[test]
fn combine_refuses_different_units_naming_both() {
    let a = small_a();
    let b = fixture("cpu-1.pb.gz");
    let cpu = b.find_sample_type("cpu").expect("cpu");
    let err = combine(&a, 0, &b, cpu).expect_err("count vs nanoseconds");
    assert!(matches!(err, ProfileError::IncompatibleSampleTypes { .. }));
    let message = err.to_string();
    assert!(message.contains("samples/count"), "{message}");
    assert!(message.contains("cpu/nanoseconds"), "{message}");

    let err = combine(&a, 3, &a, 0).expect_err("no sample type 3");
    assert!(err.to_string().contains("sample type 3"), "{err}");
}

#[test]
fn classify_same_within_a_tenth_of_a_percent() {
    use DiffMode::{Absolute, Relative};
    // 0.1% of 100_000 is 100.
    assert_eq!(
        classify(5_000, 5_100, 100_000, 100_000, Relative),
        Change::Same
    );
    assert_eq!(
        classify(5_000, 4_900, 100_000, 100_000, Relative),
        Change::Same
    );
    assert_eq!(
        classify(5_000, 5_100, 100_000, 100_000, Absolute),
        Change::Same
    );
    assert!(matches!(
        classify(5_000, 5_101, 100_000, 100_000, Relative),
        Change::More(_)
    ));
    assert!(matches!(
        classify(5_000, 4_899, 100_000, 100_000, Absolute),
        Change::Less(_)
    ));
    assert_eq!(classify(0, 0, 10, 10, Relative), Change::Same);
}

#[test]
fn classify_direction_new_and_vanished() {
    for mode in [DiffMode::Relative, DiffMode::Absolute] {
        assert!(matches!(classify(10, 30, 100, 100, mode), Change::More(_)));
        assert!(matches!(classify(30, 10, 100, 100, mode), Change::Less(_)));
        assert_eq!(classify(0, 10, 100, 100, mode), Change::New);
        assert_eq!(classify(10, 0, 100, 100, mode), Change::Vanished);
    }
}

#[test]
fn classify_relative_compares_shapes_absolute_compares_amounts() {
    // B is twice as long as A, with the same shape.
    let (a, b, total_a, total_b) = (250, 500, 1_000, 2_000);
    assert_eq!(
        classify(a, b, total_a, total_b, DiffMode::Relative),
        Change::Same
    );
    assert!(matches!(
        classify(a, b, total_a, total_b, DiffMode::Absolute),
        Change::More(_)
    ));
    // The same on real profiles: a profile combined with itself doubled.
    let p = small_a();
    let doubled = profile(&[
        ("main;a;x", 12, None),
        ("main;b", 6, Some("/home")),
        ("main", 2, None),
    ]);
    let combined = combine(&p, 0, &doubled, 0).expect("same units");
    let view = View::new(&combined, &ViewOptions::default());
    let (total_a, total_b) = (combined.total(diff::A), combined.total(diff::B));
    for row in diff_rows(&view, &combined, DiffMode::Relative) {
        assert_eq!(
            classify(row.a, row.b, total_a, total_b, DiffMode::Relative),
            Change::Same
        );
        // The table agrees: no change once A is scaled to B's total.
        let relative = row.delta(total_a, total_b, DiffMode::Relative);
        assert_eq!((relative.value, relative.percent), (0, 0.0), "{row:?}");
        let absolute = row.delta(total_a, total_b, DiffMode::Absolute);
        assert_eq!(absolute.value, row.a, "B is A doubled: {row:?}");
        assert!((absolute.percent - row.a as f64 * 100.0 / total_a as f64).abs() < 1e-9);
        assert!(matches!(
            classify(row.a, row.b, total_a, total_b, DiffMode::Absolute),
            Change::More(_)
        ));
    }
}

#[test]
fn classify_intensity_grows_with_the_change() {
    let intensity = |b| match classify(100, b, 1_000, 1_000, DiffMode::Relative) {
        Change::More(i) | Change::Less(i) => i,
        other => panic!("{other:?}"),
    };
    let more: Vec<f32> = [102, 110, 150, 200, 1_000]
        .into_iter()
        .map(intensity)
        .collect();
    assert!(more.windows(2).all(|w| w[0] < w[1]), "{more:?}");
    let less: Vec<f32> = [98, 90, 50, 10].into_iter().map(intensity).collect();
    assert!(less.windows(2).all(|w| w[0] < w[1]), "{less:?}");
    assert!(more.iter().chain(&less).all(|i| *i >= 0.15 && *i <= 1.0));
}

#[test]
fn diff_rows_sorted_by_change_with_flat_and_cum() {
    let (a, b) = (small_a(), small_b());
    let combined = combine(&a, 0, &b, 0).expect("same units");
    let view = View::new(&combined, &ViewOptions::default());
    let (total_a, total_b) = (10, 11);
    let rows: Vec<(String, i64, i64, i64, i64, i64)> =
        diff_rows(&view, &combined, DiffMode::Absolute)
            .iter()
            .map(|r| {
                (
                    view.frames.get(r.frame).name.clone(),
                    r.a,
                    r.b,
                    r.delta(total_a, total_b, DiffMode::Absolute).value,
                    r.a_flat,
                    r.b_flat,
                )
            })
            .collect();
    let row = |n: &str, a, b, d, af, bf| (n.to_string(), a, b, d, af, bf);
    assert_eq!(
        rows,
        [
            row("a", 6, 2, -4, 0, 0),
            row("c", 0, 4, 4, 0, 0),
            row("x", 6, 2, -4, 6, 2),
            row("y", 0, 4, 4, 0, 4),
            row("b", 3, 5, 2, 3, 5),
            row("main", 10, 11, 1, 1, 0),
        ]
    );
    let first = diff_rows(&view, &combined, DiffMode::Absolute)[0];
    let absolute = first.delta(total_a, total_b, DiffMode::Absolute);
    assert!((absolute.percent - -40.0).abs() < 1e-9, "{absolute:?}");
    assert!(first.delta(0, total_b, DiffMode::Absolute).percent.abs() < 1e-9);

    // Relative: A scaled to B's total (a: 6 × 11/10 = 6.6, rounded to 7), and the
    // percent is the change of the share, 2/11 − 6/10.
    let relative = first.delta(total_a, total_b, DiffMode::Relative);
    assert_eq!(relative.value, 2 - 7);
    assert!(
        (relative.percent - (200.0 / 11.0 - 60.0)).abs() < 1e-9,
        "{relative:?}"
    );
    // Sorted by the change with A scaled: a and x (7 → 2) before c and y (0 → 4), b
    // (3.3, rounded to 3, → 5) and main (11 → 11).
    let names: Vec<String> = diff_rows(&view, &combined, DiffMode::Relative)
        .iter()
        .map(|r| view.frames.get(r.frame).name.clone())
        .collect();
    assert_eq!(names, ["a", "x", "c", "y", "b", "main"]);
    // With no A, a frame's share in B is all of its change.
    assert_eq!(delta(0, 4, 0, 11, DiffMode::Relative).value, 4);
    assert!((delta(0, 4, 0, 11, DiffMode::Relative).percent - 400.0 / 11.0).abs() < 1e-9);
}

#[test]
fn real_profiles_more_sha256_less_sort() {
    let a = fixture("cpu-1.pb.gz");
    let b = fixture("cpu-3.pb.gz");
    let (ca, cb) = (
        a.find_sample_type("cpu").expect("cpu"),
        b.find_sample_type("cpu").expect("cpu"),
    );
    let combined = combine(&a, ca, &b, cb).expect("same units");
    let view = View::new(&combined, &ViewOptions::default());
    let rows = diff_rows(&view, &combined, DiffMode::Relative);
    let (total_a, total_b) = (combined.total(diff::A), combined.total(diff::B));
    let find = |name: &str| {
        rows.iter()
            .find(|r| view.frames.get(r.frame).name == name)
            .copied()
            .unwrap_or_else(|| panic!("{name} is in the diff"))
    };
    let sha = find("crypto/sha256.block");
    let sort = find("sort.partition");
    assert!(
        matches!(
            classify(sha.a, sha.b, total_a, total_b, DiffMode::Relative),
            Change::More(_)
        ),
        "{sha:?}"
    );
    assert!(
        matches!(
            classify(sort.a, sort.b, total_a, total_b, DiffMode::Relative),
            Change::Less(_)
        ),
        "{sort:?}"
    );
    // The table's change agrees with the colors in relative mode.
    let relative = |r: &diff::DiffRow| r.delta(total_a, total_b, DiffMode::Relative);
    assert!(relative(&sha).value > 0 && relative(&sha).percent > 0.1);
    assert!(relative(&sort).value < 0 && relative(&sort).percent < -0.1);

    // Independently, from each file's own top table.
    let (top_a, top_b) = (top_by_name(&a, ca), top_by_name(&b, cb));
    let cum = |t: &BTreeMap<String, (i64, i64)>, n: &str| t.get(n).map_or(0, |v| v.1);
    let flat = |t: &BTreeMap<String, (i64, i64)>, n: &str| t.get(n).map_or(0, |v| v.0);
    assert_eq!(sha.a, cum(&top_a, "crypto/sha256.block"));
    assert_eq!(sha.b, cum(&top_b, "crypto/sha256.block"));
    assert_eq!(
        sha.delta(total_a, total_b, DiffMode::Absolute).value,
        cum(&top_b, "crypto/sha256.block") - cum(&top_a, "crypto/sha256.block")
    );
    // Every row agrees with the two top tables, and rows are sorted by |delta|.
    for r in &rows {
        let name = &view.frames.get(r.frame).name;
        assert_eq!((r.a, r.a_flat), (cum(&top_a, name), flat(&top_a, name)));
        assert_eq!((r.b, r.b_flat), (cum(&top_b, name), flat(&top_b, name)));
    }
    assert!(
        rows.windows(2)
            .all(|w| relative(&w[0]).value.abs() >= relative(&w[1]).value.abs())
    );
    let names: std::collections::BTreeSet<&String> = top_a.keys().chain(top_b.keys()).collect();
    assert_eq!(rows.len(), names.len());
}

#[test]
fn absolute_difference_is_b_minus_a_per_function() {
    let a = fixture("cpu-1.pb.gz");
    let b = fixture("cpu-3.pb.gz");
    let (ca, cb) = (
        a.find_sample_type("cpu").expect("cpu"),
        b.find_sample_type("cpu").expect("cpu"),
    );
    let d = difference(&a, ca, &b, cb, DiffMode::Absolute).expect("same units");
    assert_eq!(d.sample_type_names(), ["cpu/nanoseconds"]);
    assert_eq!(d.total(0), b.total(cb) - a.total(ca));
    assert!(d.samples.values[0].iter().all(|v| *v != 0));

    let (top_a, top_b, top_d) = (top_by_name(&a, ca), top_by_name(&b, cb), top_by_name(&d, 0));
    let flat = |t: &BTreeMap<String, (i64, i64)>, n: &str| t.get(n).map_or(0, |v| v.0);
    let names: std::collections::BTreeSet<&String> = top_a
        .keys()
        .chain(top_b.keys())
        .chain(top_d.keys())
        .collect();
    assert!(names.len() > 10);
    for name in names {
        assert_eq!(
            flat(&top_d, name),
            flat(&top_b, name) - flat(&top_a, name),
            "{name}"
        );
    }

    // The exported difference survives an encode/decode round trip.
    let decoded = profile_model::codec::decode(&profile_model::codec::encode(&d)).expect("valid");
    assert_eq!(decoded.total(0), d.total(0));
}

#[test]
fn relative_difference_scales_a_to_bs_total() {
    let a = small_a(); // total 10
    let doubled = profile(&[
        ("main;a;x", 12, None),
        ("main;b", 6, Some("/home")),
        ("main", 2, None),
    ]); // total 20, same shape
    let d = difference(&a, 0, &doubled, 0, DiffMode::Relative).expect("same units");
    assert_eq!(d.samples.len(), 0, "same shape: nothing left");
    let d = difference(&a, 0, &doubled, 0, DiffMode::Absolute).expect("same units");
    assert_eq!(d.total(0), 10);

    let b = small_b(); // total 11: A scaled by 1.1
    let d = difference(&a, 0, &b, 0, DiffMode::Relative).expect("same units");
    let top = top_by_name(&d, 0);
    // x: 2 − round(6 × 1.1) = −5; b: 5 − round(3 × 1.1) = 2; y: 4; main (self): −1.
    assert_eq!(top.get("x").map(|v| v.0), Some(-5));
    assert_eq!(top.get("b").map(|v| v.0), Some(2));
    assert_eq!(top.get("y").map(|v| v.0), Some(4));
    assert_eq!(top.get("main").map(|v| v.0), Some(-1));

    let result = difference(
        &profile_typed("alloc", &[("m", 1, None)]),
        0,
        &a,
        0,
        DiffMode::Relative,
    );
    assert!(result.is_ok(), "same unit (count), different names combine");
}
