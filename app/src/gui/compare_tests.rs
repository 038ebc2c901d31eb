//! Compare mode tests: A = cpu-1, B = cpu-3 of a directory of three Go CPU profiles.

#![allow(clippy::unwrap_used, clippy::expect_used, reason = "tests")]

use std::path::PathBuf;

use capture::{QueryTime, TimeRange};
use egui::vec2;
use egui_kittest::Harness;
use egui_kittest::kittest::Queryable as _;
use profile_model::codec::{self, DecodeOptions};
use profile_model::diff::{Change, DiffMode};
use profile_model::layout::{FlameRect, RectKind};

use super::app::FlintApp;
use super::compare::{self, Side};
use super::flame;

const FILES: [&str; 3] = ["cpu-1.pb.gz", "cpu-2.pb.gz", "cpu-3.pb.gz"];

fn fixture(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../tests/fixtures/go")
        .join(name)
}

fn fixture_dir(tag: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("flint-compare-{tag}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    for f in FILES {
        std::fs::copy(fixture(f), dir.join(f)).unwrap();
    }
    dir
}

/// The time range holding only the profile of `name`.
fn range_of(name: &str) -> QueryTime {
    let p = codec::decode(&std::fs::read(fixture(name)).unwrap()).unwrap();
    QueryTime::Merge(TimeRange {
        start_nanos: p.time_nanos,
        end_nanos: p.time_nanos + 1,
    })
}

/// A window in time mode, Compare on, A = cpu-1 and B = cpu-3 selected and compared.
fn compared(tag: &str) -> (Harness<'static, FlintApp>, PathBuf) {
    let dir = fixture_dir(tag);
    let mut app = FlintApp::new(DecodeOptions::default());
    app.sync_jobs = true;
    let mut h = Harness::builder()
        .with_size(vec2(1500.0, 1000.0))
        .build_ui_state(|ui, app: &mut FlintApp| app.show(ui), app);
    let ctx = h.ctx.clone();
    h.state_mut().open_dir(&ctx, dir.clone());
    h.run_steps(4);
    h.state_mut().compare.enabled = true;
    h.run_steps(1);
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
    assert!(app.current.is_none());
    (h, dir)
}

/// The widest drawn rectangle of `name` in the diff graph.
fn diff_rect(h: &Harness<'_, FlintApp>, name: &str) -> (FlameRect, egui::Pos2) {
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
fn hover(h: &mut Harness<'_, FlintApp>, name: &str) -> String {
    let (_, pos) = diff_rect(h, name);
    h.hover_at(pos);
    h.run_steps(2);
    let text = h.state().compare_hover_text().expect("a frame is hovered");
    assert!(text.starts_with(&format!("hovered: {name} — ")), "{text}");
    // The same text is in the status bar.
    h.get_by_label(&text);
    text
}

#[test]
fn sha256_is_more_and_partition_is_less_in_b() {
    let (mut h, dir) = compared("classes");
    let more = hover(&mut h, "crypto/sha256.block");
    assert!(more.contains("— more in B (+"), "{more}");
    let less = hover(&mut h, "sort.partition");
    assert!(less.contains("— less in B (-"), "{less}");
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn legend_and_mode_note_are_shown() {
    let (mut h, dir) = compared("legend");
    let legend = compare::legend_text(DiffMode::Relative);
    assert!(legend.starts_with(
        "red = more in B, green = less in B, blue = within ±0.1% of the total; intensity grows \
         with the relative change"
    ));
    h.get_by_label(&legend);
    h.state_mut().compare.mode = DiffMode::Absolute;
    h.run_steps(2);
    h.get_by_label(&compare::legend_text(DiffMode::Absolute));
    assert!(compare::legend_text(DiffMode::Absolute).ends_with("(absolute)"));
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn diff_table_is_sorted_by_absolute_delta() {
    let (h, dir) = compared("table");
    let app = h.state();
    let res = app.compare.result.as_ref().unwrap();
    let rows: Vec<_> = app.compare.order.iter().map(|&i| res.rows[i]).collect();
    assert!(rows.len() > 5);
    assert!(
        rows.windows(2)
            .all(|w| w[0].delta.unsigned_abs() >= w[1].delta.unsigned_abs())
    );
    // The first rows are labelled by function name.
    for row in &rows[..3] {
        let name = &res.frames.frames[row.frame as usize].name;
        assert!(
            h.query_all_by_label(name).next().is_some(),
            "row {name} is shown"
        );
    }
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn widths_follow_b_by_default_and_a_when_toggled() {
    let (mut h, dir) = compared("widths");
    let total_b = {
        let res = h.state().compare.result.as_ref().unwrap();
        res.total_b()
    };
    let (canvas, _, rects) = h.state().compare.last.clone().unwrap();
    let root = rects.iter().find(|r| r.row == 0).unwrap();
    assert_eq!(root.value, total_b);
    h.state_mut().compare.widths_from_a = true;
    h.run_steps(2);
    let res = h.state().compare.result.clone().unwrap();
    let (_, _, rects) = h.state().compare.last.clone().unwrap();
    let root = rects.iter().find(|r| r.row == 0).unwrap();
    assert_eq!(root.value, res.total_a());
    assert!(canvas.width() > 0.0);
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn node_colors_are_red_green_blue_by_change() {
    for dark in [false, true] {
        let red = compare::diff_color(Change::More(0.8), dark);
        assert!(red.r() > red.g() && red.r() > red.b(), "{red:?}");
        let green = compare::diff_color(Change::Less(0.8), dark);
        assert!(green.g() > green.r() && green.g() > green.b(), "{green:?}");
        let blue = compare::diff_color(Change::Same, dark);
        assert!(blue.b() > blue.r() && blue.b() > blue.g(), "{blue:?}");
        // Intensity saturates: a stronger change is redder.
        let weak = compare::diff_color(Change::More(0.15), dark);
        let strong = compare::diff_color(Change::More(1.0), dark);
        assert!(
            i32::from(strong.r()) - i32::from(strong.g())
                > i32::from(weak.r()) - i32::from(weak.g())
        );
        assert_ne!(compare::diff_color(Change::New, dark), strong);
        assert_ne!(compare::diff_color(Change::Vanished, dark), green);
    }
    // Per node: a tree of root, a grown and a shrunk child.
    let a = [100, 10, 90];
    let b = [100, 60, 40];
    let values = flame::DiffValues {
        a: &a,
        b: &b,
        total_a: 100,
        total_b: 100,
        mode: DiffMode::Relative,
    };
    let colors = compare::node_colors(&values, 3, false);
    assert_eq!(colors[0], compare::diff_color(Change::Same, false));
    assert!(colors[1].r() > colors[1].g());
    assert!(colors[2].g() > colors[2].r());
}

#[test]
fn export_diff_writes_b_minus_a() {
    let a = codec::decode(&std::fs::read(fixture("cpu-1.pb.gz")).unwrap()).unwrap();
    let b = codec::decode(&std::fs::read(fixture("cpu-3.pb.gz")).unwrap()).unwrap();
    let path = std::env::temp_dir().join(format!("flint-diff-{}.pb.gz", std::process::id()));
    let msg = super::dialogs::export_diff_to(&a, &b, "cpu", DiffMode::Absolute, &path).unwrap();
    assert!(msg.starts_with("exported "));
    let diff = codec::decode(&std::fs::read(&path).unwrap()).unwrap();
    let (at, bt) = compare::side_types(&a, &b, "cpu");
    let t = diff.find_sample_type("cpu").unwrap();
    assert_eq!(diff.total(t), b.total(bt) - a.total(at));
    let _ = std::fs::remove_file(path);
}
