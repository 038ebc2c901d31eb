//! Call tree, top table, filters, search, merge and folded stacks on small profiles
//! whose answers are known by hand.

use profile_model::calltree::CallTree;
use profile_model::filter::compile_regex;
use profile_model::fold::{folded, write_folded};
use profile_model::merge::Merger;
use profile_model::{Filters, Profile, ProfileError, TagFilter, View, ViewOptions};
use regex::Regex;

use super::{profile, profile_typed};

/// `name flat cum` rows of the top table, sorted as pprof sorts them.
fn top_rows(p: &Profile, options: &ViewOptions) -> Vec<(String, i64, i64)> {
    let view = View::new(p, options);
    view.top(p, 0)
        .rows
        .iter()
        .map(|r| (view.frames.get(r.frame).name.clone(), r.flat, r.cum))
        .collect()
}

fn row(name: &str, flat: i64, cum: i64) -> (String, i64, i64) {
    (name.to_string(), flat, cum)
}

#[test]
fn recursion_counts_once_in_cum() {
    let p = profile(&[("main;fib;fib;fib", 10, None), ("main;work", 5, None)]);
    assert_eq!(
        top_rows(&p, &ViewOptions::default()),
        [row("fib", 10, 10), row("work", 5, 5), row("main", 0, 15)]
    );
}

#[test]
fn tree_totals_and_children_in_name_order() {
    let p = profile(&[
        ("main;b", 3, None),
        ("main;a;x", 2, None),
        ("main;a", 1, None),
    ]);
    let view = View::new(&p, &ViewOptions::default());
    let tree = view.call_tree(&p);
    let totals = tree.totals(0);
    assert_eq!(totals[CallTree::ROOT as usize], 6);
    let main = tree.children(CallTree::ROOT).next().expect("a child");
    let names: Vec<&str> = tree
        .children(main)
        .map(|c| view.frames.get(tree.frame(c)).name.as_str())
        .collect();
    assert_eq!(names, ["a", "b"]);
    let a = tree.children(main).next().expect("a child");
    assert_eq!((totals[a as usize], tree.self_values_of(a)[0]), (3, 1));
    assert_eq!(
        tree.path(tree.children(a).next().expect("a child")).len(),
        3
    );
}

#[test]
fn inverted_tree_starts_at_leaves() {
    let p = profile(&[
        ("main;a;x", 2, None),
        ("main;b;x", 3, None),
        ("main;b", 4, None),
    ]);
    let view = View::new(&p, &ViewOptions::default());
    let inverted = view.call_tree(&p).inverted(&view.frames);
    let totals = inverted.totals(0);
    let roots: Vec<(String, i64)> = inverted
        .children(CallTree::ROOT)
        .map(|c| {
            (
                view.frames.get(inverted.frame(c)).name.clone(),
                totals[c as usize],
            )
        })
        .collect();
    assert_eq!(roots, [("b".to_string(), 4), ("x".to_string(), 5)]);
}

#[test]
fn search_counts_each_sample_once() {
    let p = profile(&[
        ("main;c;c", 5, None),
        ("main;a;c", 3, None),
        ("main;d", 2, None),
    ]);
    let view = View::new(&p, &ViewOptions::default());
    let tree = view.call_tree(&p);
    let totals = tree.totals(0);
    let matched = |re: &str| {
        let m = CallTree::frame_matches(&view.frames, &Regex::new(re).expect("regex"));
        tree.matched_total(&totals, &m)
    };
    assert_eq!(matched("^c$"), 8);
    assert_eq!(matched("^(main|c)$"), 10);
    assert_eq!(matched("nothing"), 0);
}

#[test]
fn focus_ignore_hide_and_tags_follow_pprof() {
    let p = profile(&[
        ("main;api;hash", 5, Some("/api/hash")),
        ("main;api;sort", 3, Some("/api/sort")),
        ("main;gc", 2, None),
    ]);
    let with = |filters: Filters| {
        top_rows(
            &p,
            &ViewOptions {
                filters,
                ..ViewOptions::default()
            },
        )
    };
    let re = |s: &str| compile_regex("test", s).expect("regex");
    let focus = with(Filters {
        focus: re("api"),
        ..Filters::default()
    });
    assert_eq!(
        focus,
        [
            row("hash", 5, 5),
            row("sort", 3, 3),
            row("api", 0, 8),
            row("main", 0, 8)
        ]
    );
    let ignore = with(Filters {
        ignore: re("hash"),
        ..Filters::default()
    });
    assert_eq!(
        ignore,
        [
            row("sort", 3, 3),
            row("gc", 2, 2),
            row("api", 0, 3),
            row("main", 0, 5)
        ]
    );
    // Hiding the leaf makes its caller the leaf.
    let hide = with(Filters {
        hide: re("^(hash|sort)$"),
        ..Filters::default()
    });
    assert_eq!(
        hide,
        [row("api", 8, 8), row("gc", 2, 2), row("main", 0, 10)]
    );
    let tags = with(Filters {
        tags: vec![TagFilter::parse("endpoint=/api/sort").expect("tag")],
        ..Filters::default()
    });
    assert_eq!(
        tags,
        [row("sort", 3, 3), row("api", 0, 3), row("main", 0, 3)]
    );
    assert!(TagFilter::parse("novalue").is_err());
    assert!(
        compile_regex("--focus", "(")
            .expect_err("bad regex")
            .contains("--focus")
    );
}

#[test]
fn filtered_top_keeps_the_whole_total_as_pprof() {
    let p = profile(&[("main;a", 6, None), ("main;b", 4, None)]);
    let options = ViewOptions {
        filters: Filters {
            focus: compile_regex("t", "^a$").expect("regex"),
            ..Filters::default()
        },
        ..ViewOptions::default()
    };
    let top = View::new(&p, &options).top(&p, 0);
    assert_eq!((top.total, top.kept), (10, 6));
}

#[test]
fn merge_sums_and_refuses_other_sample_types() {
    let a = profile(&[("main;a", 1, None), ("main;b", 2, None)]);
    let b = profile(&[("main;a", 10, None), ("main;c", 20, None)]);
    let mut merger = Merger::new();
    merger.add("a.pb.gz", &a).expect("first");
    merger.add("b.pb.gz", &b).expect("same types");
    let merged = merger.finish();
    assert_eq!(merged.total(0), 33);
    assert_eq!(
        merged.samples.len(),
        3,
        "identical stacks are summed into one sample"
    );
    assert_eq!(
        top_rows(&merged, &ViewOptions::default()),
        [
            row("c", 20, 20),
            row("a", 11, 11),
            row("b", 2, 2),
            row("main", 0, 33)
        ]
    );
    let heap = profile_typed("alloc_space", &[("main", 1, None)]);
    let mut merger = Merger::new();
    merger.add("cpu.pb.gz", &a).expect("first");
    let err = merger
        .add("heap.pb.gz", &heap)
        .expect_err("different types");
    assert!(matches!(err, ProfileError::IncompatibleSampleTypes { .. }));
    let text = err.to_string();
    assert!(
        text.contains("cpu.pb.gz") && text.contains("heap.pb.gz"),
        "{text}"
    );
}

#[test]
fn folded_lines_are_root_first_with_self_values() {
    let p = profile(&[
        ("main;a;x", 2, None),
        ("main;a", 1, None),
        ("main;b", 4, None),
        ("main;a;x", 3, None),
    ]);
    let view = View::new(&p, &ViewOptions::default());
    let tree = view.call_tree(&p);
    assert_eq!(
        folded(&tree, &view.frames, 0),
        "main;a 1\nmain;a;x 5\nmain;b 4\n"
    );
    let mut written = Vec::new();
    write_folded(&tree, &view.frames, 0, &mut written).unwrap();
    assert_eq!(written, b"main;a 1\nmain;a;x 5\nmain;b 4\n");
}

/// A writer that takes `room` bytes, then fails.
struct Full {
    room: usize,
    taken: Vec<u8>,
}

impl std::io::Write for Full {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        if self.room == 0 {
            return Err(std::io::Error::other("disk full"));
        }
        let n = buf.len().min(self.room);
        self.room -= n;
        self.taken.extend_from_slice(&buf[..n]);
        Ok(n)
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

#[test]
fn folding_stops_at_the_first_failure_to_write_and_returns_it() {
    let p = profile(&[
        ("main;a", 1, None),
        ("main;b", 4, None),
        ("main;c", 2, None),
    ]);
    let view = View::new(&p, &ViewOptions::default());
    let tree = view.call_tree(&p);
    let mut out = Full {
        room: 10,
        taken: Vec::new(),
    };
    let e = write_folded(&tree, &view.frames, 0, &mut out).expect_err("the disk is full");
    assert_eq!(e.to_string(), "disk full");
    assert_eq!(
        out.taken, b"main;a 1\nm",
        "nothing written after the failure"
    );
}

#[test]
fn a_tree_of_one_sample_type_is_that_column_of_the_tree_of_all() {
    // A Go heap profile: four sample types, each with its own values.
    let p = super::fixture("heap.pb.gz");
    assert_eq!(p.sample_types.len(), 4);
    let view = View::new(&p, &ViewOptions::default());
    let all = view.call_tree(&p);
    for t in 0..p.sample_types.len() {
        let one = view.call_tree_of(&p, t, || ()).0;
        assert_eq!(one.sample_types(), 1);
        assert_eq!(one.len(), all.len());
        assert_eq!(one.max_depth(), all.max_depth());
        for n in 0..all.len() as u32 {
            assert_eq!(one.frame(n), all.frame(n));
            assert_eq!(one.parent(n), all.parent(n));
            assert_eq!(one.subtree_end(n), all.subtree_end(n));
            assert_eq!(one.self_values_of(n), &all.self_values_of(n)[t..=t]);
        }
        assert_eq!(one.totals(0), all.totals(t), "sample type {t}");
        let (beside, top) = view.call_tree_of(&p, t, || view.top(&p, t));
        assert_eq!(beside.totals(0), one.totals(0));
        assert_eq!(
            top.rows,
            view.top(&p, t).rows,
            "what ran beside is returned"
        );
    }
}

/// `p` with its samples repeated `times` times over.
fn repeated(p: &Profile, times: usize) -> Profile {
    let mut big = p.clone();
    let s = &mut big.samples;
    for _ in 1..times {
        for i in 0..p.samples.len() {
            s.stack_locations.extend_from_slice(p.samples.stack(i));
            s.stack_offsets.push(s.stack_locations.len() as u32);
            s.label_set.push(p.samples.label_set[i]);
            for (column, values) in s.values.iter_mut().zip(&p.samples.values) {
                column.push(values[i]);
            }
        }
    }
    big
}

#[test]
fn a_tree_of_a_profile_let_go_is_the_tree_of_the_profile_kept() {
    let p = super::fixture("heap.pb.gz");
    // Small profiles are sorted in one part, large ones (50,000 samples or more) in two.
    let times = 50_000 / p.samples.len() + 1;
    for (p, times) in [(p.clone(), 1), (repeated(&p, times), times)] {
        for options in [
            ViewOptions::default(),
            ViewOptions {
                filters: Filters {
                    ignore: compile_regex("--ignore", "runtime").unwrap(),
                    ..Filters::default()
                },
                ..ViewOptions::default()
            },
        ] {
            let view = View::new(&p, &options);
            let kept = view.call_tree(&p);
            let consumed = CallTree::build_consuming(p.clone(), &view.frames, &view.filter);
            assert_eq!(consumed.len(), kept.len(), "{times}");
            assert_eq!(consumed.max_depth(), kept.max_depth());
            for n in 0..kept.len() as u32 {
                assert_eq!(consumed.frame(n), kept.frame(n));
                assert_eq!(consumed.parent(n), kept.parent(n));
                assert_eq!(consumed.subtree_end(n), kept.subtree_end(n));
                assert_eq!(consumed.self_values_of(n), kept.self_values_of(n));
            }
        }
        assert!(p.samples.len() >= 50_000 || times == 1);
    }
}
