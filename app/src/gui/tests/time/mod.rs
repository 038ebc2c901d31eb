//! Time mode tests: a directory of three Go CPU profiles.
#![allow(clippy::unwrap_used, clippy::expect_used, reason = "tests")]

mod folder;
mod plot;
mod selection;
mod selector;

use std::path::PathBuf;

use capture::selector::MatchOp;
use capture::{Matcher, QueryTime, Selector, TimeRange};
use egui_kittest::Harness;
use egui_kittest::kittest::{NodeT as _, Queryable as _};
use profile_model::codec;
use profile_model::units;

use crate::gui::app::FlintApp;
use crate::gui::shell::dialogs::ExportKind;
use crate::gui::time::selector::{self as sel, SumBy};
use crate::gui::time::timeline::{self, NO_DATA};
use crate::gui::time::{axis, lines, pick};
use crate::gui::view::SET_ASIDE_NODES;

use crate::gui::tests::fixtures::{FILES, click_at, fixture, fixture_dir, shift_click_at, window};

/// A window in time mode over `dir`; jobs and queries run synchronously.
pub(super) fn harness(dir: PathBuf) -> Harness<'static, FlintApp> {
    let mut h = window();
    let ctx = h.ctx.clone();
    h.state_mut().open_dir(&ctx, dir);
    h.run_steps(4);
    let tl = h.state().timeline.as_ref().expect("time mode");
    assert!(tl.source.is_some(), "indexed");
    assert!(!tl.series.is_empty(), "series loaded");
    h
}

/// Merges every profile of the window's span, as a drag over all of it does; the span.
pub(super) fn merge_everything(h: &mut Harness<'static, FlintApp>) -> TimeRange {
    let span = h.state().timeline.as_ref().expect("time mode").span;
    let ctx = h.ctx.clone();
    h.state_mut().select_time(&ctx, QueryTime::Merge(span));
    h.run_steps(4);
    span
}

/// Plots the type whose sample type is `sample_type`, as choosing it in the type menu does.
pub(super) fn plot_type(h: &mut Harness<'static, FlintApp>, sample_type: &str) {
    let tl = h.state_mut().timeline.as_mut().expect("time mode");
    tl.type_index = tl
        .types
        .iter()
        .position(|t| t.sample_type == sample_type)
        .expect("the type is listed");
    let ctx = h.ctx.clone();
    h.state_mut().load_series(&ctx);
    h.run_steps(4);
}

pub(super) fn default_total(name: &str) -> (i64, String) {
    let bytes = std::fs::read(fixture(name)).unwrap();
    let p = codec::decode(&bytes).unwrap();
    let t = p.default_sample_index();
    (p.total(t), p.str(p.sample_types[t].unit).to_string())
}

/// Sum of the default sample type over the samples labelled `endpoint=<value>`.
pub(super) fn endpoint_total(name: &str, value: &str) -> i64 {
    let bytes = std::fs::read(fixture(name)).unwrap();
    let p = codec::decode(&bytes).unwrap();
    let t = p.default_sample_index();
    (0..p.samples.len())
        .filter(|&i| {
            p.sample_labels(i)
                .any(|(k, v)| k == "endpoint" && v == value)
        })
        .map(|i| p.samples.values[t][i])
        .sum()
}

pub(super) fn plotted_total(h: &Harness<'static, FlintApp>) -> i64 {
    h.state()
        .timeline
        .as_ref()
        .unwrap()
        .series
        .iter()
        .map(|s| s.total)
        .sum()
}

/// The window on `dir` in time mode, its series summed by `endpoint`.
pub(super) fn by_endpoint(dir: &std::path::Path) -> Harness<'static, FlintApp> {
    let mut h = harness(dir.to_path_buf());
    let ctx = h.ctx.clone();
    h.state_mut()
        .set_sum_by(&ctx, SumBy::Labels(vec!["endpoint".to_string()]));
    h.run_steps(4);
    h
}

/// Where on the screen the middle point of the first series with an `endpoint` label
/// is drawn, and that label's value.
pub(crate) fn endpoint_point(h: &Harness<'_, FlintApp>) -> (egui::Pos2, String) {
    let tl = h.state().timeline.as_ref().expect("time mode");
    let series = tl
        .series
        .iter()
        .find(|s| s.labels.iter().any(|(k, _)| k == "endpoint"))
        .expect("a series by endpoint");
    let p = series.points[series.points.len() / 2];
    let pos = tl
        .last_transform
        .expect("the plot was drawn")
        .position_from_point(&egui_plot::PlotPoint::new(p[0], p[1]));
    (pos, series.labels[0].1.clone())
}

/// The values of the label `endpoint` the time mode knows of.
pub(super) fn endpoint_values(h: &Harness<'_, FlintApp>) -> Vec<String> {
    let tl = h.state().timeline.as_ref().expect("time mode");
    tl.label_values("endpoint").expect("endpoint values loaded")
}

pub(super) fn endpoint(value: &str) -> Matcher {
    Matcher::new("endpoint", MatchOp::Equal, value).unwrap()
}

/// A window over a fresh fixture directory (`tag`) with `endpoint` chosen as the label
/// of the matcher to add.
pub(super) fn adding_endpoint(tag: &str) -> (Harness<'static, FlintApp>, PathBuf) {
    let dir = fixture_dir(tag);
    let mut h = harness(dir.clone());
    h.state_mut().timeline.as_mut().unwrap().bar.add_name = "endpoint".to_string();
    h.run_steps(4);
    (h, dir)
}

/// Types `text` into the matcher's value field.
pub(super) fn type_value(h: &mut Harness<'static, FlintApp>, text: &str) {
    let field = h.get_by(|n| n.placeholder() == Some("value"));
    field.focus();
    field.type_text(text);
    h.run_steps(3);
}

/// The sum of the default column of the samples of the fixtures in `range` that have
/// `endpoint` = `value` (every sample when `value` is `None`).
pub(super) fn total_in(range: TimeRange, value: Option<&str>) -> i64 {
    FILES
        .iter()
        .filter(|f| {
            let bytes = std::fs::read(fixture(f)).unwrap();
            let t = codec::decode(&bytes).unwrap().time_nanos;
            range.start_nanos <= t && t < range.end_nanos
        })
        .map(|f| match value {
            Some(v) => endpoint_total(f, v),
            None => default_total(f).0,
        })
        .sum()
}

/// Turns the wheel by `lines` over `pos` with `modifiers` held, and lets the window settle.
pub(super) fn wheel(
    h: &mut Harness<'_, FlintApp>,
    pos: egui::Pos2,
    lines: f32,
    modifiers: egui::Modifiers,
) {
    h.hover_at(pos);
    h.event(egui::Event::MouseWheel {
        unit: egui::MouseWheelUnit::Line,
        delta: egui::vec2(0.0, lines),
        phase: egui::TouchPhase::Move,
        source: egui::MouseWheelSource::Wheel,
        modifiers,
    });
    h.run_steps(30);
}

/// A fresh folder holding the Go heap profile (several sample types) alone.
pub(super) fn heap_dir(tag: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("flint-gui-{tag}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::copy(fixture("heap.pb.gz"), dir.join("heap.pb.gz")).unwrap();
    dir
}

/// A directory of `count` generated 10-second profiles of a few samples each.
pub(super) fn generated_dir(tag: &str, count: u64) -> PathBuf {
    use flint_fixture_gen::{SeriesParams, Universe, UniverseParams, encode_gz, series_profile};
    let dir = std::env::temp_dir().join(format!("flint-gui-{tag}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let u = Universe::new(&UniverseParams {
        locations: 200,
        functions: 60,
        binaries: 4,
        min_depth: 3,
        max_depth: 8,
        seed: 5,
    })
    .unwrap();
    let sp = SeriesParams {
        samples: 8,
        start_nanos: 1_700_000_000_000_000_000,
        step_secs: 10,
        seed: 5,
    };
    for i in 0..count {
        let (_, gz) = encode_gz(&series_profile(&u, &sp, i)).unwrap();
        std::fs::write(dir.join(format!("{i:05}.pb.gz")), gz).unwrap();
    }
    dir
}

/// The time of profile `index` of the window's directory (a profile every 10 s from
/// the start of its span).
pub(super) fn span_start_plus(app: &FlintApp, index: u64) -> i64 {
    let span = app.timeline.as_ref().expect("time mode").span;
    span.start_nanos + index as i64 * 10_000_000_000
}

/// Whether what is selected is still the first view, the merge of the whole span
/// (nothing picked since opening).
pub(super) fn first_view_kept(h: &Harness<'_, FlintApp>) -> bool {
    let tl = h.state().timeline.as_ref().expect("time mode");
    tl.selection == Some(QueryTime::Merge(tl.span))
}
