//! The flame graph's costs on the synthetic fleet profile (300,000 samples, 120,000
//! locations, 30,000 functions): inflating and decoding, the top table, the call tree, and one frame
//! of the flame graph at 1920×1080 (layout + tessellation), and comparing two such
//! profiles.
//!
//! `cargo bench -p flint --bench flame`; figures go to BENCHMARKS.md.

#![allow(clippy::expect_used, reason = "a benchmark of fixed, generated input")]

use std::hint::black_box;

mod common;

use common::fleet_bytes_seeded;
use criterion::{Criterion, criterion_group, criterion_main};
use egui::{Color32, Rect, pos2};
use egui_plot::{Line, Plot, PlotPoints};
use flint::gui::time::lines::PlotSeries;
use flint::gui::time::lines::{DrawnLine, drawn_points};
use flint::gui::view::flame::{FlameInput, FlameParams, FlameStyle, build_mesh};
use profile_model::codec::{DecodeOptions, decode, message_bytes};
use profile_model::{CallTree, Profile, View, ViewOptions, diff};

/// The fleet fixture as `flint-fixture-gen fleet` writes it with its defaults.
fn fleet_bytes() -> Vec<u8> {
    fleet_bytes_seeded(1)
}

/// Everything from bytes to the first painted frame of the flame graph.
fn first_frame(bytes: &[u8]) -> usize {
    let profile = decode(bytes).expect("fixture decodes");
    let view = View::new(&profile, &ViewOptions::default());
    let tree = view.call_tree(&profile);
    let totals = tree.totals(profile.default_sample_index());
    let colors = vec![Color32::from_rgb(200, 120, 60); view.frames.len()];
    frame(&tree, &view, &totals, &colors).mesh.vertices.len()
}

fn frame(
    tree: &CallTree,
    view: &View,
    totals: &[i64],
    colors: &[Color32],
) -> flint::gui::view::flame::FlameMesh {
    let canvas = Rect::from_min_max(pos2(0.0, 0.0), pos2(1920.0, 80.0 * 18.0 + 18.0));
    let input = FlameInput {
        tree,
        frames: &view.frames,
        totals,
        colors,
        matches: None,
        selected: None,
        unit: "nanoseconds",
    };
    let params = FlameParams {
        zoom: CallTree::ROOT,
        flipped: false,
        visible: Rect::from_min_max(pos2(0.0, 0.0), pos2(1920.0, 1080.0)),
        window: (0.0, 1.0),
        style: FlameStyle::default(),
    };
    build_mesh(&input, &params, canvas)
}

fn benches(c: &mut Criterion) {
    let bytes = fleet_bytes();
    let profile: Profile = decode(&bytes).expect("fixture decodes");
    let sample_type = profile.default_sample_index();
    let view = View::new(&profile, &ViewOptions::default());
    let tree = view.call_tree(&profile);
    let totals = tree.totals(sample_type);
    let colors = vec![Color32::from_rgb(200, 120, 60); view.frames.len()];

    let mut group = c.benchmark_group("fleet");
    group.sample_size(10);
    group.bench_function("decode", |b| {
        b.iter(|| decode(black_box(&bytes)).expect("decodes"))
    });
    // Inflating alone: flint's reader (libdeflate, one call per member) against
    // flate2's streaming GzDecoder over zlib-rs, the engine flint used before.
    let mut out = Vec::new();
    group.bench_function("gunzip", |b| {
        b.iter(|| {
            message_bytes(black_box(&bytes), DecodeOptions::default(), &mut out)
                .expect("inflates")
                .len()
        })
    });
    group.bench_function("gunzip_flate2_zlib_rs", |b| {
        b.iter(|| {
            out.clear();
            let mut gz = flate2::read::GzDecoder::new(black_box(bytes.as_slice()));
            std::io::Read::read_to_end(&mut gz, &mut out).expect("inflates")
        })
    });
    group.bench_function("top", |b| {
        b.iter(|| view.top(&profile, sample_type).rows.len())
    });
    group.bench_function("call_tree", |b| b.iter(|| view.call_tree(&profile).len()));
    group.bench_function("open_to_first_frame", |b| {
        b.iter(|| first_frame(black_box(&bytes)))
    });
    group.finish();

    let other = decode(&fleet_bytes_seeded(2)).expect("fixture decodes");
    group_compare(c, &profile, &other);

    let mut group = c.benchmark_group("flame");
    group.bench_function("frame_1920x1080", |b| {
        b.iter(|| frame(&tree, &view, &totals, &colors).rects.len())
    });
    group.finish();
}

/// Compare: both profiles in one two-column profile, the diff table, then the call
/// tree (the combined profile let go once its stacks are read) and both totals — what
/// the window computes when A and B are chosen.
fn group_compare(c: &mut Criterion, a: &Profile, b: &Profile) {
    let mut group = c.benchmark_group("compare");
    group.sample_size(10);
    group.bench_function("diff_two_300k_profiles", |bench| {
        bench.iter(|| {
            let t = a.default_sample_index();
            let combined = diff::combine(a, t, b, t).expect("same units");
            let view = View::new(&combined, &ViewOptions::default());
            let rows = diff::diff_rows(&view, &combined, diff::DiffMode::default());
            let tree = CallTree::build_consuming(combined, &view.frames, &view.filter);
            let totals = (tree.totals(diff::A), tree.totals(diff::B));
            (totals.0.len(), rows.len())
        })
    });
    group.finish();
}

/// One frame of the time plot with `series` lines of `points` points each, as the
/// window draws it: lines reduced to the plot's pixel columns (computed when the series
/// or the view change, then reused), drawn by egui_plot and tessellated.
fn group_plot(c: &mut Criterion) {
    const SERIES: usize = 100;
    const POINTS: usize = 8_640;
    let width = 1600.0;
    let series: Vec<PlotSeries> = (0..SERIES)
        .map(|s| {
            PlotSeries::new(
                format!("comm=s{s}"),
                vec![("comm".into(), format!("s{s}"))],
                (SERIES - s) as i64,
                (0..POINTS)
                    .map(|i| {
                        let t = 1_700_000_000.0 + i as f64 * 10.0;
                        [
                            t,
                            1.0 + ((i + s * 37) as f64 / 300.0).sin() * 0.5 + s as f64 * 0.01,
                        ]
                    })
                    .collect(),
            )
        })
        .collect();
    let (x0, x1) = (series[0].points[0][0], series[0].points[POINTS - 1][0]);
    let ctx = egui::Context::default();
    let input = || egui::RawInput {
        screen_rect: Some(Rect::from_min_size(
            pos2(0.0, 0.0),
            egui::vec2(width, 300.0),
        )),
        ..egui::RawInput::default()
    };
    let draw = |lines: &[DrawnLine]| {
        let output = ctx.run_ui(input(), |ui| {
            Plot::new("bench").show(ui, |plot_ui| {
                for (s, line) in series.iter().zip(lines) {
                    for points in line.segments() {
                        plot_ui.line(Line::new(s.name.clone(), PlotPoints::Borrowed(points)));
                    }
                }
            });
        });
        ctx.tessellate(output.shapes, output.pixels_per_point).len()
    };
    let all = drawn_points(&series, x0, x1, width);
    let largest = drawn_points(&series[..20], x0, x1, width);
    let mut group = c.benchmark_group("plot");
    group.bench_function("frame_100_series_x_8640_points", |b| b.iter(|| draw(&all)));
    // The window's default: the 20 largest series drawn, the rest behind "show all".
    group.bench_function("frame_20_of_100_series_x_8640_points", |b| {
        b.iter(|| draw(&largest))
    });
    // The reduction alone, which a frame that changes the view adds to the drawing.
    group.bench_function("reduce_100_series_x_8640_points", |b| {
        b.iter(|| drawn_points(&series, x0, x1, width).len())
    });
    // A frame while zooming or panning: the lines are reduced again first.
    group.bench_function("frame_100_series_view_changed", |b| {
        b.iter(|| draw(&drawn_points(&series, x0, x1, width)))
    });
    group.finish();
}

criterion_group!(flame, benches, group_plot);
criterion_main!(flame);
