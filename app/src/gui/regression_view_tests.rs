//! Regression tests of what the window shows: the flame graph, the top table, the
//! search and the status bar describe the profile on screen.

#![allow(clippy::unwrap_used, clippy::expect_used, reason = "tests")]

use std::path::PathBuf;

use capture::QueryTime;
use egui_kittest::Harness;
use egui_kittest::kittest::Queryable as _;

use super::app::FlintApp;
use super::test_fixtures::{fixture, fixture_dir, window};

/// A window in time mode over `dir`; jobs and queries run synchronously.
fn time_window(dir: PathBuf) -> Harness<'static, FlintApp> {
    let mut h = window();
    let ctx = h.ctx.clone();
    h.state_mut().open_dir(&ctx, dir);
    h.run_steps(4);
    let tl = h.state().timeline.as_ref().expect("time mode");
    assert!(!tl.series.is_empty(), "series loaded");
    h
}

/// Selects every profile of the plotted type, as a drag over all of it does.
fn merge_span(h: &mut Harness<'static, FlintApp>) {
    let span = h.state().timeline.as_ref().expect("time mode").span;
    let ctx = h.ctx.clone();
    h.state_mut().select_time(&ctx, QueryTime::Merge(span));
    h.run_steps(4);
}

/// The name of the sample type the view shown is in, if there is a view.
fn shown_type(app: &FlintApp) -> Option<String> {
    let cur = app.current.as_ref()?;
    let t = cur.profile.sample_types.get(cur.sample_type)?;
    Some(cur.profile.str(t.kind).to_string())
}

/// The sample type plotted.
fn plotted_type(app: &FlintApp) -> String {
    let tl = app.timeline.as_ref().expect("time mode");
    tl.types[tl.type_index].sample_type.clone()
}

#[test]
fn a_plot_type_switch_leaves_no_view_of_the_type_left() {
    // Three Go CPU profiles and a heap profile.
    let dir = fixture_dir("rv-type-switch");
    std::fs::copy(fixture("heap.pb.gz"), dir.join("heap.pb.gz")).unwrap();
    let mut h = time_window(dir.clone());
    assert_eq!(plotted_type(h.state()), "cpu");
    merge_span(&mut h);
    assert_eq!(shown_type(h.state()).as_deref(), Some("cpu"));
    // In-use bytes chosen in the plot's type menu.
    h.get_by_label_contains("profile type plotted and selected")
        .click();
    h.run_steps(2);
    h.get_by_label_contains("In-use bytes").click();
    h.run_steps(4);
    let app = h.state();
    assert_eq!(plotted_type(app), "inuse_space");
    let shown = shown_type(app);
    assert!(
        shown.is_none() || shown.as_deref() == Some("inuse_space"),
        "the view shows {shown:?} while the plot shows in-use bytes"
    );
    assert_eq!(app.selection_text(), None);
    assert!(
        h.query_by_label_contains("merged 3 profiles").is_none(),
        "the status bar still tells of the CPU merge"
    );
    // The heap snapshot selected, then CPU time typed as the selector: the same.
    merge_span(&mut h);
    assert_eq!(shown_type(h.state()).as_deref(), Some("inuse_space"));
    let cpu = {
        let tl = h.state().timeline.as_ref().unwrap();
        let t = tl.types.iter().find(|t| t.sample_type == "cpu").unwrap();
        t.to_string()
    };
    let ctx = h.ctx.clone();
    h.state_mut().apply_selector_text(&ctx, &cpu);
    h.run_steps(4);
    let app = h.state();
    assert_eq!(plotted_type(app), "cpu");
    let shown = shown_type(app);
    assert!(
        shown.is_none() || shown.as_deref() == Some("cpu"),
        "the view shows {shown:?} while the plot shows CPU time"
    );
    let _ = std::fs::remove_dir_all(dir);
}
