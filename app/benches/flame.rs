//! The flame graph's costs on the synthetic fleet profile (300,000 samples, 120,000
//! locations, 30,000 functions): decoding, the top table, the call tree, and one frame
//! of the flame graph at 1920×1080 (layout + tessellation).
//!
//! `cargo bench -p flint --bench flame`; figures go to BENCHMARKS.md.

#![allow(clippy::expect_used, reason = "a benchmark of fixed, generated input")]

use std::hint::black_box;

use criterion::{Criterion, criterion_group, criterion_main};
use egui::{Color32, Rect, pos2};
use flint::gui::flame::{FlameInput, FlameParams, FlameStyle, build_mesh};
use flint_fixture_gen::{FleetParams, UniverseParams, encode_gz, fleet_profile};
use profile_model::codec::decode;
use profile_model::{CallTree, Profile, View, ViewOptions};

/// The fleet fixture as `flint-fixture-gen fleet` writes it with its defaults.
fn fleet_bytes() -> Vec<u8> {
    let params = FleetParams {
        universe: UniverseParams {
            locations: 120_000,
            functions: 30_000,
            binaries: 8,
            min_depth: 20,
            max_depth: 80,
            seed: 1,
        },
        samples: 300_000,
        time_nanos: 1_700_000_000_000_000_000,
        duration_nanos: 10_000_000_000,
    };
    let profile = fleet_profile(&params).expect("fleet parameters are valid");
    encode_gz(&profile).expect("encodes").1
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
) -> flint::gui::flame::FlameMesh {
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
    group.bench_function("top", |b| {
        b.iter(|| view.top(&profile, sample_type).rows.len())
    });
    group.bench_function("call_tree", |b| b.iter(|| view.call_tree(&profile).len()));
    group.bench_function("open_to_first_frame", |b| {
        b.iter(|| first_frame(black_box(&bytes)))
    });
    group.finish();

    let mut group = c.benchmark_group("flame");
    group.bench_function("frame_1920x1080", |b| {
        b.iter(|| frame(&tree, &view, &totals, &colors).rects.len())
    });
    group.finish();
}

criterion_group!(flame, benches);
criterion_main!(flame);
