//! Compare mode's sides: picking A and B, what is carried into A, and their selectors.

use super::*;
use crate::gui::tests::fixtures::drag;

#[test]
fn b_picked_while_a_merges_keeps_both() {
    let (mut h, dir) = compare_window("a-then-b");
    let ctx = h.ctx.clone();
    // Queries on the window's runtime, as for a user: A is still merging (or its
    // answer not yet taken) when B is picked.
    h.state_mut().view.sync_jobs = false;
    h.state_mut().select_time(&ctx, range_of("cpu-1.pb.gz"));
    // A is shown as being merged, and the next pick is B's.
    assert_eq!(h.state().compare.target, Side::B);
    let merging = h
        .state()
        .compare
        .side_caption(Side::A, h.state().timeline.as_ref());
    assert!(
        merging.starts_with("A: ")
            && (merging.contains("(merging") || merging.contains("(waiting)")),
        "{merging}"
    );
    h.state_mut().select_time(&ctx, range_of("cpu-3.pb.gz"));
    run_until(&mut h, |app| app.compare.result.is_some());
    let app = h.state();
    assert_eq!(picked_time(&app.compare.a), Some(range_of("cpu-1.pb.gz")));
    assert_eq!(picked_time(&app.compare.b), Some(range_of("cpu-3.pb.gz")));
    assert!(app.shell.message.is_none(), "{:?}", app.shell.message);
    assert!(!app.timeline.as_ref().unwrap().querying());
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn a_large_normal_view_is_set_aside_while_comparing_and_back_after() {
    let (mut h, dir) = compare_window("set-aside");
    let ctx = h.ctx.clone();
    // Every view counts as large.
    h.state_mut().view.set_aside_nodes = 0;
    h.state_mut().compare.enabled = false;
    h.run_steps(2);
    let span = h.state().timeline.as_ref().unwrap().span;
    let all = QueryTime::Merge(TimeRange {
        start_nanos: span.start_nanos - 1,
        end_nanos: span.end_nanos + 1,
    });
    h.state_mut().select_time(&ctx, all);
    h.run_steps(4);
    let total = |app: &FlintApp| app.view.current().map(|c| c.totals[0]);
    let shown = total(h.state()).expect("the merged view");
    h.state_mut().compare.enabled = true;
    h.state_mut().select_time(&ctx, range_of("cpu-1.pb.gz"));
    h.state_mut().select_time(&ctx, range_of("cpu-3.pb.gz"));
    h.run_steps(4);
    // Compared, with the hidden normal view not held beside the comparison.
    assert!(h.state().compare.result.is_some());
    assert!(
        h.state().view.current().is_none(),
        "set aside while comparing"
    );
    // A setting changed while comparing applies to both.
    h.state_mut().view.granularity = Granularity::FunctionLine;
    h.run_steps(4);
    assert!(h.state().compare.result.is_some());
    // Leaving compare mode brings the view back, with that setting (and lets the
    // comparison go) …
    h.state_mut().compare.enabled = false;
    h.run_steps(4);
    assert_eq!(total(h.state()), Some(shown));
    let app = h.state();
    assert_eq!(app.view.granularity, Granularity::FunctionLine);
    let cur = app.view.current().unwrap();
    assert_eq!(cur.settings.options.granularity, Granularity::FunctionLine);
    assert!(app.compare.result.is_none());
    // … and coming back makes the comparison again, from the sides kept.
    h.state_mut().compare.enabled = true;
    h.run_steps(4);
    let app = h.state();
    assert!(app.compare.result.is_some());
    assert!(app.view.current().is_none());
    assert_eq!(picked_time(&app.compare.a), Some(range_of("cpu-1.pb.gz")));
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn an_a_without_data_leaves_the_next_pick_to_a() {
    let (mut h, dir) = compare_window("a-empty");
    let ctx = h.ctx.clone();
    let nothing = QueryTime::Merge(TimeRange {
        start_nanos: 1,
        end_nanos: 2,
    });
    h.state_mut().select_time(&ctx, nothing);
    assert_eq!(h.state().compare.target, Side::B);
    h.run_steps(2);
    let app = h.state();
    assert!(app.compare.a.is_none());
    assert_eq!(app.compare.target, Side::A);
    let notice = app.timeline.as_ref().unwrap().notice.as_deref();
    assert!(
        notice.is_some_and(|n| n.starts_with("no data")),
        "{notice:?}"
    );
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn a_picked_again_replaces_the_a_being_merged() {
    let (mut h, dir) = compare_window("a-twice");
    let ctx = h.ctx.clone();
    h.state_mut().view.sync_jobs = false;
    h.state_mut().select_time(&ctx, range_of("cpu-1.pb.gz"));
    h.state_mut().compare.target = Side::A;
    h.state_mut().select_time(&ctx, range_of("cpu-2.pb.gz"));
    // One query under way, the second A's: the first was cancelled and is forgotten.
    let tl = h.state().timeline.as_ref().unwrap();
    assert_eq!(tl.queries.len(), 1);
    assert_eq!(tl.queries[0].time, range_of("cpu-2.pb.gz"));
    run_until(&mut h, |app| {
        !app.timeline.as_ref().unwrap().querying() && app.compare.a.is_some()
    });
    // Its answer, if it came, was dropped; nothing says "cancelled".
    let app = h.state();
    assert_eq!(picked_time(&app.compare.a), Some(range_of("cpu-2.pb.gz")));
    assert!(app.compare.b.is_none());
    assert!(app.shell.message.is_none(), "{:?}", app.shell.message);
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn the_normal_selection_line_is_hidden_in_compare_mode() {
    let (mut h, dir) = compare_window("selection-line");
    let ctx = h.ctx.clone();
    h.state_mut().compare.enabled = false;
    h.state_mut().select_time(&ctx, range_of("cpu-1.pb.gz"));
    h.run_steps(4);
    let line = h
        .state()
        .selection_text()
        .expect("a selection outside compare mode");
    assert!(line.starts_with("selection: "), "{line}");
    h.get_by_label(&line);
    h.state_mut().compare.enabled = true;
    h.run_steps(2);
    assert_eq!(h.state().selection_text(), None);
    assert!(h.query_by_label(&line).is_none(), "{line} still shown");
    h.state_mut().compare.enabled = false;
    h.run_steps(2);
    assert_eq!(h.state().selection_text(), Some(line));
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn the_selection_shown_becomes_a_when_compare_is_switched_on() {
    let (mut h, dir) = compare_window("carried");
    let ctx = h.ctx.clone();
    h.state_mut().compare.enabled = false;
    h.run_steps(1);
    h.state_mut().select_time(&ctx, range_of("cpu-1.pb.gz"));
    h.run_steps(4);
    let shown = Arc::clone(&h.state().view.current().expect("cpu-1 shown").profile);
    h.state_mut().compare.enabled = true;
    h.run_steps(2);
    let app = h.state();
    // A is the view's selection, its profile taken as it is: nothing merged again.
    let a = app.compare.a.as_ref().expect("A carried over");
    assert_eq!(a.time, range_of("cpu-1.pb.gz"));
    assert!(Arc::ptr_eq(&a.profile, &shown));
    assert!(!app.timeline.as_ref().unwrap().querying());
    assert!(app.compare.b.is_none());
    // The next pick is still A's, and the hint says that it replaces the A shown.
    assert_eq!(app.compare.target, Side::A);
    let caption = app.compare.side_caption(Side::A, app.timeline.as_ref());
    assert!(
        caption.starts_with("A: ") && caption.ends_with(", 1 profile"),
        "{caption}"
    );
    h.get_by_label(&crate::gui::compare::diff_view::pick_hint(Side::A, true));
    // "select B" compares it with another selection.
    h.state_mut().compare.target = Side::B;
    h.state_mut().select_time(&ctx, range_of("cpu-3.pb.gz"));
    h.run_steps(4);
    let app = h.state();
    assert!(app.compare.result.is_some(), "{:?}", app.compare.error);
    assert_eq!(picked_time(&app.compare.a), Some(range_of("cpu-1.pb.gz")));
    assert_eq!(picked_time(&app.compare.b), Some(range_of("cpu-3.pb.gz")));
    let _ = std::fs::remove_dir_all(dir);
}

/// Compare switched on while the view's selection is still being merged: its answer is
/// held back here, as a merge of a day would keep it for seconds.
fn switched_on_while_merging(tag: &str) -> (Harness<'static, FlintApp>, PathBuf, Vec<TimeMsg>) {
    let (mut h, dir) = compare_window(tag);
    let ctx = h.ctx.clone();
    h.state_mut().compare.enabled = false;
    h.run_steps(1);
    h.state_mut().select_time(&ctx, range_of("cpu-1.pb.gz"));
    let held: Vec<TimeMsg> = h.state().timeline.as_ref().unwrap().take_messages();
    assert!(!held.is_empty(), "the merge answered");
    h.state_mut().compare.enabled = true;
    h.run_steps(2);
    let app = h.state();
    assert!(app.timeline.as_ref().unwrap().querying());
    assert!(app.compare.a.is_none() && app.compare.is_carrying());
    (h, dir, held)
}

/// Hands the held answers back to the window and runs it.
fn answer(h: &mut Harness<'static, FlintApp>, held: Vec<TimeMsg>) {
    let tx = h.state().timeline.as_ref().unwrap().sender();
    for msg in held {
        tx.send(msg).unwrap();
    }
    h.run_steps(4);
}

#[test]
fn a_selection_still_merging_becomes_a_once_shown() {
    let (mut h, dir, held) = switched_on_while_merging("carried-later");
    // Until then, A is that merge, with its progress, and the hint says what comes.
    let sides = h.state().compare.sides_text(h.state().timeline.as_ref());
    assert!(
        sides.starts_with("A: ") && sides.contains("(merging "),
        "{sides}"
    );
    h.get_by_label(crate::gui::compare::diff_view::CARRY_HINT);
    answer(&mut h, held);
    let app = h.state();
    let shown = &app.view.current().expect("cpu-1's view made").profile;
    let a = app.compare.a.as_ref().expect("A carried over once shown");
    assert_eq!(a.time, range_of("cpu-1.pb.gz"));
    assert!(Arc::ptr_eq(&a.profile, shown));
    assert!(!app.compare.is_carrying());
    assert_eq!(app.compare.target, Side::A);
    h.get_by_label(&crate::gui::compare::diff_view::pick_hint(Side::A, true));
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn a_side_picked_first_is_not_replaced_by_the_selection_merging() {
    let (mut h, dir, held) = switched_on_while_merging("carry-cancelled");
    let ctx = h.ctx.clone();
    h.state_mut().compare.target = Side::B;
    h.state_mut().select_time(&ctx, range_of("cpu-3.pb.gz"));
    assert!(!h.state().compare.is_carrying());
    answer(&mut h, held);
    let app = h.state();
    assert!(app.compare.a.is_none(), "nothing carried after a pick");
    assert_eq!(picked_time(&app.compare.b), Some(range_of("cpu-3.pb.gz")));
    assert!(
        app.compare
            .sides_text(app.timeline.as_ref())
            .starts_with("A: not selected")
    );
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn the_hint_names_the_side_the_next_pick_sets() {
    assert_eq!(
        crate::gui::compare::diff_view::pick_hint(Side::A, false),
        "click a point or drag a range on the plot to select A (before)"
    );
    assert_eq!(
        crate::gui::compare::diff_view::pick_hint(Side::B, false),
        "click a point or drag a range on the plot to select B (after)"
    );
    assert_eq!(
        crate::gui::compare::diff_view::pick_hint(Side::A, true),
        "click a point or drag a range on the plot to select A (before) again, or choose \
         \"select B\" above to pick the other side"
    );
}

/// The sum of the `cpu` values of the samples of every fixture whose `endpoint` label is
/// `endpoint`, computed independently of the window.
fn endpoint_total(endpoint: &str) -> i64 {
    FILES
        .iter()
        .map(|f| {
            let p = codec::decode(&std::fs::read(fixture(f)).unwrap()).unwrap();
            let t = p.find_sample_type("cpu").unwrap();
            (0..p.samples.len())
                .filter(|&i| {
                    p.sample_labels(i)
                        .any(|(k, v)| k == "endpoint" && v == endpoint)
                })
                .map(|i| p.samples.values[t][i])
                .sum::<i64>()
        })
        .sum()
}

#[test]
fn each_side_has_its_own_selector() {
    let (mut h, dir) = compare_window("selectors");
    let ctx = h.ctx.clone();
    // Both sides start with the selector in force (no matchers).
    assert_eq!(h.state().compare.selectors, Some([Vec::new(), Vec::new()]));
    let span = h.state().timeline.as_ref().unwrap().span;
    let all = QueryTime::Merge(TimeRange {
        start_nanos: span.start_nanos - 1,
        end_nanos: span.end_nanos + 1,
    });
    let sort = Matcher::new("endpoint", MatchOp::Equal, "/api/sort").unwrap();
    let hash = Matcher::new("endpoint", MatchOp::Equal, "/api/hash").unwrap();
    // A: every profile, sort endpoint.
    h.state_mut().set_matchers(&ctx, vec![sort.clone()]);
    h.run_steps(2);
    h.state_mut().select_time(&ctx, all);
    h.run_steps(2);
    assert_eq!(h.state().compare.target, Side::B);
    // The selector row and the plot now show B's selector, still without matchers.
    assert!(h.state().timeline.as_ref().unwrap().matchers.is_empty());
    // B: every profile, hash endpoint.
    h.state_mut().set_matchers(&ctx, vec![hash.clone()]);
    h.run_steps(2);
    h.state_mut().select_time(&ctx, all);
    h.run_steps(4);
    let app = h.state();
    assert_eq!(app.compare.a.as_ref().unwrap().matchers, vec![sort.clone()]);
    assert_eq!(app.compare.b.as_ref().unwrap().matchers, vec![hash.clone()]);
    let res = app.compare.result.as_ref().expect("compared");
    let (sort_total, hash_total) = (endpoint_total("/api/sort"), endpoint_total("/api/hash"));
    assert!(sort_total > 0 && hash_total > 0);
    assert_eq!(res.total_a(), sort_total);
    assert_eq!(res.total_b(), hash_total);
    let sha = change_of(&h, "crypto/sha256.block");
    assert!(matches!(sha, Change::New | Change::More(_)), "{sha:?}");
    let partition = change_of(&h, "sort.partition");
    assert!(
        matches!(partition, Change::Vanished | Change::Less(_)),
        "{partition:?}"
    );
    // Captions name each side's selector.
    let caption = h
        .state()
        .compare
        .side_caption(Side::A, h.state().timeline.as_ref());
    assert!(
        caption.starts_with(r#"A {endpoint="/api/sort"}: "#) && caption.contains(" profiles, "),
        "{caption}"
    );
    h.get_by_label(&caption);
    let caption = h
        .state()
        .compare
        .side_caption(Side::B, h.state().timeline.as_ref());
    assert!(
        caption.starts_with(r#"B {endpoint="/api/hash"}: "#),
        "{caption}"
    );
    h.get_by_label(&caption);
    // Selecting A again shows A's selector in the selector row and the plot.
    h.state_mut().compare.target = Side::A;
    h.run_steps(2);
    let tl = h.state().timeline.as_ref().unwrap();
    assert_eq!(tl.matchers, vec![sort.clone()]);
    assert!(!tl.series.is_empty());
    // Leaving compare mode keeps the active side's selector.
    h.state_mut().compare.enabled = false;
    h.run_steps(2);
    assert_eq!(h.state().timeline.as_ref().unwrap().matchers, vec![sort]);
    assert!(h.state().compare.selectors.is_none());
    let _ = std::fs::remove_dir_all(dir);
}

/// The top of the diff flame graph on screen.
fn diff_top(h: &Harness<'_, FlintApp>) -> f32 {
    h.state().compare.last.as_ref().unwrap().0.top()
}

#[test]
fn collapsing_a_and_b_gives_their_height_to_the_diff_and_is_remembered() {
    let (mut h, dir) = compared("collapse");
    let before = diff_top(&h);
    assert!(h.query_by_label("flame graph A").is_some());
    h.get_by_label("collapse A and B").click();
    h.run_steps(3);
    let after = diff_top(&h);
    assert!(
        after < before - 150.0,
        "the diff's top {before} → {after} px"
    );
    assert!(h.query_by_label("flame graph A").is_none(), "A is a strip");
    assert!(h.query_by_label("flame graph B").is_none(), "B is a strip");
    // The choice is in egui's persisted memory (saved with the window's panel sizes).
    let saved = h
        .ctx
        .data_mut(|d| d.get_persisted::<bool>(egui::Id::unique("flint compare sides collapsed")));
    assert_eq!(saved, Some(true));
    h.get_by_label("collapse A and B").click();
    h.run_steps(3);
    assert!(h.query_by_label("flame graph A").is_some());
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn dragging_the_line_under_a_and_b_gives_the_diff_their_height_and_is_remembered() {
    let (mut h, dir) = compared("divider");
    let before = diff_top(&h);
    let line = h.get_by_label("height of A and B").rect().center();
    drag(&mut h, line, egui::vec2(0.0, -150.0));
    let after = diff_top(&h);
    assert!(
        after < before - 100.0,
        "the diff's top {before} → {after} px"
    );
    let share = h
        .ctx
        .data_mut(|d| d.get_persisted::<f32>(egui::Id::unique("flint compare sides share")));
    assert!(share.is_some_and(|s| s < 0.4), "{share:?}");
    let _ = std::fs::remove_dir_all(dir);
}
