//! Window tests: the app driven headless by egui_kittest over a real Go CPU profile.

#![allow(clippy::unwrap_used, clippy::expect_used, reason = "tests")]

use std::sync::Arc;
use std::time::Duration;

use egui::{Event, Key, Modifiers, Pos2, Rect, vec2};
use egui_kittest::Harness;
use egui_kittest::kittest::{NodeT as _, Queryable as _};
use profile_model::codec::{self, DecodeOptions};
use profile_model::layout::{FlameRect, RectKind};
use profile_model::{CallTree, View, ViewOptions, units};

use crate::gui::app::FlintApp;
use crate::gui::shell::dialogs::{ExportKind, export_to};
use crate::gui::tests::fixtures::click_at;
use crate::gui::view::SET_ASIDE_NODES;
use crate::gui::view::filters::SearchState;
use crate::gui::view::flame::{self, FlameInput, FlameParams, FlameStyle};
use crate::gui::view::loader::Source;

const FIXTURE: &[u8] = include_bytes!("../../../../tests/fixtures/go/cpu.pb.gz");

fn fixture_source() -> Source {
    Source::Bytes {
        name: "cpu.pb.gz".to_string(),
        bytes: Arc::from(FIXTURE),
    }
}

/// A window with the fixture loaded; jobs run synchronously.
pub(super) fn harness() -> Harness<'static, FlintApp> {
    let mut app = FlintApp::new(DecodeOptions::default());
    app.view.sync_jobs = true;
    app.open(fixture_source());
    let mut h = Harness::builder()
        .with_size(vec2(1400.0, 900.0))
        .build_ui_state(|ui, app: &mut FlintApp| app.show(ui), app);
    h.run_steps(3);
    assert!(h.state().view.current().is_some(), "fixture loaded");
    h
}

/// The first (shallowest) laid-out rectangle of `name` at least `min_width` wide, and
/// its center on screen.
pub(super) fn find_rect(
    h: &Harness<'_, FlintApp>,
    name: &str,
    min_width: f32,
) -> (FlameRect, Pos2) {
    let app = h.state();
    let cur = app.view.current().unwrap();
    let (canvas, params, rects) = app.view.flame.last.as_ref().expect("flame drawn");
    let fr = rects
        .iter()
        .filter(|r| r.x1 - r.x0 >= min_width)
        .filter(|r| match r.kind {
            RectKind::Node(n) => flame::node_name(&cur.tree, &cur.frames, n) == name,
            RectKind::Hidden { .. } => false,
        })
        .min_by_key(|r| r.row)
        .copied()
        .unwrap_or_else(|| panic!("{name} is drawn"));
    let pos = flame::screen_rect(&fr, *canvas, params).center();
    (fr, pos)
}

pub(super) fn node_of(fr: &FlameRect) -> u32 {
    match fr.kind {
        RectKind::Node(n) => n,
        RectKind::Hidden { .. } => panic!("not a node"),
    }
}

#[test]
fn hover_names_function_and_value() {
    let mut h = harness();
    let (fr, pos) = find_rect(&h, "main.fib", 20.0);
    h.hover_at(pos);
    h.run_steps(3);
    let app = h.state();
    let cur = app.view.current().unwrap();
    assert_eq!(app.view.flame.hovered.map(|r| r.kind), Some(fr.kind));
    let expected = format!(
        "hovered: main.fib — {} ({})",
        units::readable(fr.value, cur.unit()),
        units::percent(fr.value, cur.totals[0])
    );
    h.get_by_label(&expected);
    // The tooltip describes the frame with its file and values.
    let lines = flame::describe(&cur.flame_input(), &fr);
    assert_eq!(lines[0], "main.fib");
    assert!(lines.iter().any(|l| l.ends_with("main.go")), "{lines:?}");
    assert!(lines.iter().any(|l| l.starts_with("total: ")), "{lines:?}");
}

#[test]
fn click_zooms_and_keys_navigate() {
    let mut h = harness();
    let (fr, pos) = find_rect(&h, "main.fib", 20.0);
    click_at(&mut h, pos);
    assert_eq!(h.state().view.flame.zoom, node_of(&fr));
    h.get_by_label_contains("zoom: main.fib (");
    // The zoomed frame now fills the width.
    let (zoomed, _) = find_rect(&h, "main.fib", 0.0);
    let (canvas, _, _) = h.state().view.flame.last.as_ref().unwrap();
    assert!((zoomed.x1 - zoomed.x0 - canvas.width()).abs() < 0.5);
    // Clicking an ancestor (above) zooms out to it.
    let (_, root_pos) = find_rect(&h, "all", 0.0);
    click_at(&mut h, root_pos);
    assert_eq!(h.state().view.flame.zoom, CallTree::ROOT);
    // Backspace goes back to main.fib, Escape resets.
    h.key_press(Key::Backspace);
    h.run_steps(2);
    assert_eq!(h.state().view.flame.zoom, node_of(&fr));
    h.key_press(Key::Escape);
    h.run_steps(2);
    assert_eq!(h.state().view.flame.zoom, CallTree::ROOT);
    assert!(h.query_by_label_contains("zoom: main.fib").is_none());
}

#[test]
fn a_deep_zoom_in_a_narrow_window_keeps_the_breadcrumb_clear_of_the_zoom_label() {
    let mut h = harness();
    h.set_size(vec2(800.0, 600.0));
    h.run_steps(3);
    // The deepest main.fib: a path of a dozen levels, wider than the panel.
    let deepest = {
        let app = h.state();
        let cur = app.view.current().unwrap();
        let (canvas, params, rects) = app.view.flame.last.as_ref().unwrap();
        let fr = rects
            .iter()
            .filter(|r| match r.kind {
                RectKind::Node(n) => flame::node_name(&cur.tree, &cur.frames, n) == "main.fib",
                RectKind::Hidden { .. } => false,
            })
            .filter(|r| r.x1 - r.x0 >= 4.0)
            .max_by_key(|r| r.row)
            .copied()
            .unwrap();
        assert!(cur.tree.path(node_of(&fr)).len() > 10);
        flame::screen_rect(&fr, *canvas, params).center()
    };
    click_at(&mut h, deepest);
    let label = h.get_by_label_contains("zoom: main.fib (").rect();
    let crumbs: Vec<Rect> = h
        .query_all_by(|n| {
            n.value().as_deref() == Some("main.fib") || n.label().as_deref() == Some("main.fib")
        })
        .map(|n| n.rect())
        .filter(|r| (r.center().y - label.center().y).abs() < 4.0)
        .collect();
    assert!(!crumbs.is_empty(), "the zoomed frame is in the breadcrumb");
    for crumb in &crumbs {
        assert!(
            crumb.right() <= label.left(),
            "{crumb:?} runs under {label:?}"
        );
    }
    // The path is cut at its start ("› …"), not drawn past the panel.
    h.get_by_label("› …");
}

#[test]
fn the_breadcrumb_keeps_the_last_levels_that_fit() {
    use crate::gui::view::panels::levels_that_fit;
    assert_eq!(levels_that_fit(&[], 100.0), 0);
    assert_eq!(levels_that_fit(&[30.0, 30.0, 30.0], 100.0), 3);
    assert_eq!(levels_that_fit(&[30.0, 30.0, 30.0], 60.0), 2);
    assert_eq!(levels_that_fit(&[30.0, 30.0, 30.0], 59.0), 1);
    // The frame zoomed into is shown even with no room (shortened).
    assert_eq!(levels_that_fit(&[30.0, 30.0, 300.0], 10.0), 1);
    // Levels are kept from the end: a wide one stops the count.
    assert_eq!(levels_that_fit(&[10.0, 200.0, 10.0], 100.0), 1);
}

#[test]
fn search_shows_matched_share() {
    let mut h = harness();
    h.key_press_modifiers(Modifiers::COMMAND, Key::F);
    h.run_steps(2);
    h.event(Event::Text("hash".to_string()));
    h.run_steps(3);
    assert_eq!(h.state().view.search.text, "hash");
    // Independently: every frame matching (?i)hash, each sample counted once.
    let profile = codec::decode(FIXTURE).unwrap();
    let view = View::new(&profile, &ViewOptions::default());
    let tree = view.call_tree(&profile);
    let totals = tree.totals(profile.default_sample_index());
    let re = SearchState::pattern("hash", false).unwrap().unwrap();
    let matches = CallTree::frame_matches(&view.frames, &re);
    let matched = tree.matched_total(&totals, &matches);
    assert!(matched > 0 && matched < totals[0]);
    let unit = profile.str(profile.sample_types[profile.default_sample_index()].unit);
    let expected = format!(
        "matched {} ({})",
        units::readable(matched, unit),
        units::percent(matched, totals[0])
    );
    h.get_by_label(&expected);
    // The top table only lists matching functions.
    let app = h.state();
    let cur = app.view.current().unwrap();
    assert!(h.query_by_label("main.fib").is_none());
    assert!(
        cur.top
            .rows
            .iter()
            .filter(|r| matches[r.frame as usize])
            .count()
            > 0
    );
    h.get_by_label_contains("main.hashLoop");
}

#[test]
fn invalid_regex_is_reported_inline() {
    let mut h = harness();
    h.state_mut().view.search.regex = true;
    h.state_mut().view.search.text = "main.(fib".to_string();
    h.run_steps(2);
    assert!(h.state().view.search.error.is_some());
    h.get_by_label_contains("invalid regex");
    assert!(h.state().view.search.matches.is_none());
}

#[test]
fn top_rows_are_marked_inline_as_pprof_marks_them() {
    // `go tool pprof -top` of this file: c (inline), d (inline), b (partial-inline),
    // a, main (tests/fixtures/writers/golden).
    let mut app = FlintApp::new(DecodeOptions::default());
    app.view.sync_jobs = true;
    app.open(Source::Bytes {
        name: "inlined.pb.gz".to_string(),
        bytes: Arc::from(&include_bytes!("../../../../tests/fixtures/writers/inlined.pb.gz")[..]),
    });
    let mut h = Harness::builder()
        .with_size(vec2(1400.0, 900.0))
        .build_ui_state(|ui, app: &mut FlintApp| app.show(ui), app);
    h.run_steps(3);
    for row in [
        "c (inline)",
        "d (inline)",
        "b (partial-inline)",
        "a",
        "main",
    ] {
        h.get_by_role_and_label(egui::Role::Row, row);
    }
    assert!(h.query_by_role_and_label(egui::Role::Row, "c").is_none());
}

#[test]
fn top_row_click_selects_and_highlights() {
    let mut h = harness();
    h.get_by_label("main.fib").click();
    h.run_steps(3);
    h.get_by_label("selected: main.fib");
    let app = h.state();
    let cur = app.view.current().unwrap();
    let fib = cur
        .frames
        .frames
        .iter()
        .position(|f| f.name == "main.fib")
        .unwrap() as u32;
    assert_eq!(app.view.flame.selected, Some(fib));
    // The click shows its callers and callees; back in the flame graph, it stays
    // selected.
    h.get_by_label("callers and callees of");
    h.key_press(Key::Escape);
    h.run_steps(3);
    let app = h.state();
    assert_eq!(app.view.flame.selected, Some(fib));
    assert!(
        app.view.flame.highlighted > 0,
        "main.fib outlined in the flame graph"
    );
}

#[test]
fn status_bar_shows_load_time() {
    let h = harness();
    let label = h.get_by_label_contains("opened in ");
    let text = label.accesskit_node().value().unwrap_or_default();
    let (number, unit) = text
        .strip_prefix("opened in ")
        .and_then(|t| t.split_once(' '))
        .unwrap_or_else(|| panic!("{text:?}"));
    assert!(number.parse::<f64>().is_ok_and(|n| n > 0.0), "{text:?}");
    assert!(["µs", "ms", "s"].contains(&unit), "{text:?}");
}

#[test]
fn failed_load_keeps_previous_profile() {
    // Also with the view set aside while the load runs (as a large one is), and then
    // rebuilt.
    for set_aside_nodes in [SET_ASIDE_NODES, 0] {
        failed_load_keeps_the_view(set_aside_nodes);
    }
}

fn failed_load_keeps_the_view(set_aside_nodes: usize) {
    let mut h = harness();
    h.state_mut().view.set_aside_nodes = set_aside_nodes;
    let (nodes, total) = {
        let cur = h.state().view.current().cloned().unwrap();
        (cur.tree.len(), cur.totals[0])
    };
    let (_, pos) = find_rect(&h, "main.fib", 50.0);
    click_at(&mut h, pos);
    let zoom = h.state().view.zoom_names();
    assert_eq!(zoom.last().map(String::as_str), Some("main.fib"));
    h.state_mut().open(Source::Bytes {
        name: "garbage.pb.gz".to_string(),
        bytes: Arc::from(&b"this is not a pprof profile at all"[..]),
    });
    h.run_steps(4);
    h.get_by_label_contains("garbage.pb.gz: ");
    let app = h.state();
    let cur = app.view.current().expect("the view is kept or rebuilt");
    assert_eq!(cur.name, "cpu.pb.gz");
    assert_eq!((cur.tree.len(), cur.totals[0]), (nodes, total));
    assert_eq!(app.view.zoom_names(), zoom, "zoom kept");
    h.get_by_label("cpu.pb.gz");
    assert!(
        app.view
            .flame
            .last
            .as_ref()
            .is_some_and(|l| !l.2.is_empty())
    );
}

#[test]
fn background_load_and_recompute() {
    let mut app = FlintApp::new(DecodeOptions::default());
    app.open(fixture_source());
    let mut h = Harness::builder()
        .with_size(vec2(1200.0, 800.0))
        .build_ui_state(|ui, app: &mut FlintApp| app.show(ui), app);
    let wait = |h: &mut Harness<'_, FlintApp>| {
        // Input is handled on the next frames; then poll until idle for two frames.
        h.run_steps(2);
        for _ in 0..1000 {
            h.step();
            if !h.state().is_loading() {
                h.step();
                if !h.state().is_loading() {
                    break;
                }
            }
            std::thread::sleep(Duration::from_millis(10));
        }
        assert!(!h.state().is_loading());
    };
    wait(&mut h);
    assert!(h.state().view.current().is_some());
    h.get_by_label_contains("opened in ");
    let top_down = h.state().view.current().unwrap().tree.len();
    // Invert: recomputed off the UI thread, leaves become roots.
    h.state_mut().view.invert = true;
    h.step();
    assert!(h.state().view.current().unwrap().tree.len() == top_down);
    wait(&mut h);
    let cur = h.state().view.current().cloned().unwrap();
    assert!(cur.settings.invert);
    h.get_by_label_contains("updated in ");
    assert!(h.query_by_label_contains("opened in ").is_none());
    let roots: Vec<&str> = cur
        .tree
        .children(CallTree::ROOT)
        .map(|n| flame::node_name(&cur.tree, &cur.frames, n))
        .collect();
    assert!(roots.contains(&"main.fib"), "{roots:?}");
    // A filter: focus on main.fib keeps only its samples.
    h.state_mut().view.invert = false;
    h.state_mut().view.filters.focus = "main.fib".to_string();
    h.get_by_label("Apply").click();
    wait(&mut h);
    let cur = h.state().view.current().cloned().unwrap();
    assert!(!cur.settings.invert);
    assert!(cur.top.rows.iter().all(|r| r.cum > 0));
    assert!(cur.totals[0] < codec::decode(FIXTURE).unwrap().total(cur.sample_type));
}

#[test]
fn large_view_set_aside_is_rebuilt_when_its_replacement_is_cancelled() {
    let mut app = FlintApp::new(DecodeOptions::default());
    app.view.set_aside_nodes = 0;
    app.open(fixture_source());
    let mut h = Harness::builder()
        .with_size(vec2(1200.0, 800.0))
        .build_ui_state(|ui, app: &mut FlintApp| app.show(ui), app);
    let wait = |h: &mut Harness<'_, FlintApp>| {
        for _ in 0..1000 {
            h.step();
            if !h.state().is_loading() && h.state().view.current().is_some() {
                break;
            }
            std::thread::sleep(Duration::from_millis(10));
        }
        h.step();
        assert!(!h.state().is_loading());
    };
    wait(&mut h);
    let nodes = h.state().view.current().unwrap().tree.len();
    // Invert: the job starts, the view is set aside and the panel shows progress.
    h.state_mut().view.invert = true;
    h.step();
    assert!(h.state().view.job().is_some(), "recompute started");
    assert!(
        h.state().view.current().is_none(),
        "view set aside while the job runs"
    );
    h.state_mut().cancel_job();
    wait(&mut h);
    let cur = h.state().view.current().cloned().expect("rebuilt");
    assert!(!cur.settings.invert, "the view as it was");
    assert!(!h.state().view.invert, "settings put back");
    assert_eq!(cur.tree.len(), nodes);
    h.get_by_label("cancelled");
    // Not cancelled, the job's view replaces the one set aside.
    h.state_mut().view.invert = true;
    wait(&mut h);
    assert!(h.state().view.current().unwrap().settings.invert);
}

#[test]
fn export_writes_pprof_folded_and_speedscope() {
    let h = harness();
    let cur = h.state().view.current().cloned().unwrap();
    let dir = std::env::temp_dir().join(format!("flint-gui-export-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let pb = dir.join("view.pb.gz");
    export_to(&cur, ExportKind::Pprof, &pb).unwrap();
    let back = codec::decode(&std::fs::read(&pb).unwrap()).unwrap();
    assert_eq!(back.total(cur.sample_type), cur.totals[0]);
    let folded = dir.join("view.folded");
    export_to(&cur, ExportKind::Folded, &folded).unwrap();
    let text = std::fs::read_to_string(&folded).unwrap();
    assert!(text.lines().any(|l| l.contains("main.fib")));
    let json = dir.join("view.speedscope.json");
    export_to(&cur, ExportKind::Speedscope, &json).unwrap();
    let back = codec::decode(&std::fs::read(&json).unwrap()).unwrap();
    assert_eq!(back.sample_type_names(), ["wall/nanoseconds"]);
    assert_eq!(back.total(0), cur.totals[0]);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn mesh_rows_culled_and_flipped() {
    let profile = codec::decode(FIXTURE).unwrap();
    let view = View::new(&profile, &ViewOptions::default());
    let tree = view.call_tree(&profile);
    let totals = tree.totals(profile.default_sample_index());
    let colors = vec![egui::Color32::GRAY; view.frames.len()];
    let input = FlameInput {
        tree: &tree,
        frames: &view.frames,
        totals: &totals,
        colors: &colors,
        matches: None,
        selected: None,
        unit: "nanoseconds",
    };
    let rect = Rect::from_min_size(Pos2::ZERO, vec2(1920.0, 2000.0));
    let style = FlameStyle::default();
    let params = FlameParams {
        zoom: CallTree::ROOT,
        flipped: false,
        visible: Rect::from_min_size(Pos2::ZERO, vec2(1920.0, 3.0 * style.row_height)),
        window: (0.0, 1.0),
        style,
    };
    let built = flame::build_mesh(&input, &params, rect);
    assert!(built.rects.iter().all(|r| r.row < 3));
    assert_eq!(built.mesh.vertices.len(), built.rects.len() * 4);
    assert!(built.texts.iter().any(|t| t.text == "all"));
    // Icicle: the root on top; flame: the root at the bottom.
    let root = built.rects[0];
    assert_eq!(flame::screen_rect(&root, rect, &params).top(), 0.0);
    let flipped = FlameParams {
        flipped: true,
        visible: rect,
        ..params
    };
    let r = flame::screen_rect(&root, rect, &flipped);
    assert!((r.bottom() - (rect.bottom() - style.gap)).abs() < 0.01);
    // Hit testing finds what layout placed.
    let all = flame::build_mesh(&input, &flipped, rect);
    let some = all
        .rects
        .iter()
        .find(|r| r.row == 2 && r.x1 - r.x0 > 5.0)
        .unwrap();
    let pos = flame::screen_rect(some, rect, &flipped).center();
    assert_eq!(
        flame::hit_test(&all.rects, &flipped, rect, pos),
        Some(*some)
    );
}

#[test]
fn elide_keeps_the_function() {
    assert_eq!(flame::elide("main.fib", 20).as_deref(), Some("main.fib"));
    assert_eq!(
        flame::elide("github.com/acme/svc/handler.Get", 12).as_deref(),
        Some("handler.Get")
    );
    assert_eq!(
        flame::elide("github.com/acme/svc/handler.(*Server).ServeHTTP", 20).as_deref(),
        Some("handler.…).ServeHTTP")
    );
    assert_eq!(
        flame::elide("runtime.mallocgc", 6).as_deref(),
        Some("ru…cgc")
    );
    assert_eq!(flame::elide("runtime.mallocgc", 2), None);
}

#[test]
fn elide_shows_a_cpp_or_rust_argument_list_as_an_ellipsis_first() {
    let name = "acme::auth::BufferImpl::serveToken(Envoy::Buffer::Instance&)";
    assert_eq!(
        flame::elide(name, 40).as_deref(),
        Some("acme::auth::BufferImpl::serveToken(…)")
    );
    assert_eq!(
        flame::elide(name, 24).as_deref(),
        Some("acme::…pl::serveToken(…)")
    );
    assert_eq!(
        flame::elide("foo::Baz<int>::qux(std::pair<int, int>(*)(int)) const", 30).as_deref(),
        Some("foo::Baz<int>::qux(…) const")
    );
    // Names whose parentheses are no argument list keep them.
    assert_eq!(
        flame::elide("github.com/acme/svc/handler.(*Server).ServeHTTP", 20).as_deref(),
        Some("handler.…).ServeHTTP")
    );
    assert_eq!(flame::elide("(anonymous)", 8).as_deref(), Some("(an…ous)"));
    assert_eq!(
        flame::elide("some::long::function()", 12).as_deref(),
        Some("some:…tion()")
    );
}

#[test]
fn a_narrow_window_keeps_the_views_totals_in_the_status_bar_and_drops_the_timings() {
    let mut h = harness();
    let totals = h
        .state()
        .view
        .current()
        .map(|c| format!("{} samples", units::thousands(c.kept_samples as u64)))
        .unwrap();
    let wide = h.get_by_label_contains(&totals).rect().width();
    let timing = |h: &Harness<'static, FlintApp>| {
        h.query_all_by(|n| {
            n.value()
                .is_some_and(|v| v.starts_with("flame ") && v.ends_with(" ms"))
        })
        .next()
        .is_some()
    };
    assert!(timing(&h), "timings when wide");
    h.set_size(vec2(800.0, 600.0));
    h.run_steps(3);
    assert!(!timing(&h), "no timings when narrow");
    // Whole, not shortened: the timings no longer take its room.
    let narrow = h.get_by_label_contains(&totals).rect().width();
    assert_eq!(narrow, wide);
    // Narrower still, it is shortened rather than drawn over the bar's right side.
    h.set_size(vec2(330.0, 600.0));
    h.run_steps(3);
    let rect = h.get_by_label_contains(&totals).rect();
    assert!(rect.width() < wide && rect.right() <= 330.0, "{rect:?}");
}

#[test]
fn top_table_columns_resize_by_their_headers_edges_and_keep_their_widths() {
    use crate::gui::view::top_table::RESIZE_PREFIX;
    let mut h = harness();
    let before = h.state().view.top_table.widths;
    let handle = h
        .get_by_label(&format!("{RESIZE_PREFIX}self"))
        .rect()
        .center();
    crate::gui::tests::fixtures::drag(&mut h, handle, vec2(-40.0, 0.0));
    let after = h.state().view.top_table.widths;
    assert!(
        (after[0] - before[0] - 40.0).abs() < 1.0,
        "{before:?} → {after:?}"
    );
    assert_eq!(after[1..], before[1..], "the others as they were");
    // Dragged far right: no narrower than a value needs; kept when another file opens.
    let handle = h
        .get_by_label(&format!("{RESIZE_PREFIX}total %"))
        .rect()
        .center();
    crate::gui::tests::fixtures::drag(&mut h, handle, vec2(400.0, 0.0));
    assert_eq!(h.state().view.top_table.widths[3], 36.0);
    h.state_mut().open(fixture_source());
    h.run_steps(3);
    assert_eq!(h.state().view.top_table.widths[0], after[0]);
    h.get_by_label("main.fib");
}
