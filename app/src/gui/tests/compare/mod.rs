//! Compare mode tests: A = cpu-1, B = cpu-3 of a directory of three Go CPU profiles.
#![allow(clippy::unwrap_used, clippy::expect_used, reason = "tests")]

mod shown;
mod sides;

use std::path::PathBuf;
use std::sync::Arc;

use capture::selector::MatchOp;
use capture::{Matcher, QueryTime, TimeRange};
use egui::{Key, Pos2, vec2};
use egui_kittest::Harness;
use egui_kittest::kittest::Queryable as _;
use profile_model::codec::{self, DecodeOptions};
use profile_model::diff::{self, Change, Delta, DiffMode, DiffRow};
use profile_model::layout::{FlameRect, RectKind};
use profile_model::{CallTree, Granularity, units};

use crate::gui::app::FlintApp;
use crate::gui::compare::{self, DIFF_GRAPH, Side};
use crate::gui::time::timeline::TimeMsg;
use crate::gui::view::flame;
use crate::gui::view::loader::{self, Settings, Source};

use crate::gui::tests::fixtures::{FILES, click_at, fixture, fixture_dir};

/// The time range holding only the profile of `name`.
pub(super) fn range_of(name: &str) -> QueryTime {
    let p = codec::decode(&std::fs::read(fixture(name)).unwrap()).unwrap();
    QueryTime::Merge(TimeRange {
        start_nanos: p.time_nanos,
        end_nanos: p.time_nanos + 1,
    })
}

/// A window in time mode over a fresh fixture directory, with Compare switched on and
/// nothing selected yet; jobs and queries run synchronously.
pub(super) fn compare_window(tag: &str) -> (Harness<'static, FlintApp>, PathBuf) {
    compare_window_of(tag, |_| {})
}

/// [`compare_window`] over the fixture directory as `prepare` leaves it.
pub(super) fn compare_window_of(
    tag: &str,
    prepare: impl FnOnce(&std::path::Path),
) -> (Harness<'static, FlintApp>, PathBuf) {
    let dir = fixture_dir(tag);
    prepare(&dir);
    let mut app = FlintApp::new(DecodeOptions::default());
    app.view.sync_jobs = true;
    let mut h = Harness::builder()
        .with_size(vec2(1500.0, 1000.0))
        .build_ui_state(|ui, app: &mut FlintApp| app.show(ui), app);
    let ctx = h.ctx.clone();
    h.state_mut().open_dir(&ctx, dir.clone());
    // On before the series are in: compare mode shows no first view of its own.
    h.state_mut().compare.enabled = true;
    h.run_steps(5);
    (h, dir)
}

/// A window in time mode, Compare on, A = cpu-1 and B = cpu-3 selected and compared.
pub(super) fn compared(tag: &str) -> (Harness<'static, FlintApp>, PathBuf) {
    compared_of(tag, |_| {})
}

/// [`compared`] over the fixture directory as `prepare` leaves it.
pub(super) fn compared_of(
    tag: &str,
    prepare: impl FnOnce(&std::path::Path),
) -> (Harness<'static, FlintApp>, PathBuf) {
    let (mut h, dir) = compare_window_of(tag, prepare);
    let ctx = h.ctx.clone();
    assert_eq!(h.state().compare.target, Side::A);
    h.state_mut().select_time(&ctx, range_of("cpu-1.pb.gz"));
    h.run_steps(2);
    assert!(h.state().compare.a.is_some(), "A loaded");
    // After A, the next selection is B.
    assert_eq!(h.state().compare.target, Side::B);
    h.state_mut().select_time(&ctx, range_of("cpu-3.pb.gz"));
    h.run_steps(4);
    let app = h.state();
    assert!(app.compare.b.is_some(), "B loaded");
    assert!(
        app.compare.result.is_some(),
        "compared: {:?}",
        app.compare.error
    );
    // Compare mode does not replace the normal view.
    assert!(app.view.current().is_none());
    (h, dir)
}

/// The widest drawn rectangle of `name` in the diff graph.
pub(super) fn diff_rect(h: &Harness<'_, FlintApp>, name: &str) -> (FlameRect, egui::Pos2) {
    let app = h.state();
    let res = app.compare.result.as_ref().unwrap();
    let (canvas, params, rects) = app.compare.last.as_ref().expect("diff graph drawn");
    let fr = rects
        .iter()
        .filter(|r| match r.kind {
            RectKind::Node(n) => flame::node_name(&res.tree, &res.frames, n) == name,
            RectKind::Hidden { .. } => false,
        })
        .max_by(|a, b| (a.x1 - a.x0).total_cmp(&(b.x1 - b.x0)))
        .copied()
        .unwrap_or_else(|| panic!("{name} is drawn"));
    (fr, flame::screen_rect(&fr, *canvas, params).center())
}

/// Hovers `name` in the diff graph and returns the status bar text.
pub(super) fn hover(h: &mut Harness<'_, FlintApp>, name: &str) -> String {
    let (_, pos) = diff_rect(h, name);
    h.hover_at(pos);
    h.run_steps(2);
    let text = h.state().compare.hover_text().expect("a frame is hovered");
    assert!(text.starts_with(&format!("hovered: {name} — ")), "{text}");
    // The same text is in the status bar.
    h.get_by_label(&text);
    text
}

/// Runs the window until `done` holds (queries answered on the window's runtime).
pub(super) fn run_until(h: &mut Harness<'static, FlintApp>, done: impl Fn(&FlintApp) -> bool) {
    let started = std::time::Instant::now();
    while !done(h.state()) {
        assert!(
            started.elapsed() < std::time::Duration::from_secs(60),
            "not done: {:?} {:?}",
            h.state().shell.message,
            h.state().compare.error
        );
        std::thread::sleep(std::time::Duration::from_millis(20));
        h.run_steps(1);
    }
}

/// The time of a side's selection.
pub(super) fn picked_time(side: &Option<compare::Picked>) -> Option<QueryTime> {
    side.as_ref().map(|p| p.time)
}

/// The change of the widest node named `name` in the comparison.
fn change_of(h: &Harness<'_, FlintApp>, name: &str) -> Change {
    let app = h.state();
    let res = app.compare.result.as_ref().unwrap();
    let node = (0..res.tree.len() as u32)
        .filter(|&n| flame::node_name(&res.tree, &res.frames, n) == name)
        .max_by_key(|&n| res.totals_a[n as usize].max(res.totals_b[n as usize]))
        .unwrap_or_else(|| panic!("{name} is in the comparison"));
    res.values(app.compare.mode).change(node)
}
