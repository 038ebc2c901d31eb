//! The views' costs on the synthetic fleet profile (300,000 samples) in the real window
//! (`FlintApp` in an egui `Context`, 1920×1080): one frame while the wheel zooms the
//! flame graph and while a drag pans it (egui's pass and tessellation: the CPU part of
//! a frame, the top table and the rest of the window included), and the time from
//! asking to painted for the sandwich and the source view of the hottest function.
//!
//! `cargo bench -p flint --bench views`; figures go to BENCHMARKS.md. The function, its
//! file and the source folder used are printed, for `go tool pprof` to be run on the
//! same (`flint-fixture-gen fleet fleet.pb.gz`).

#![allow(clippy::expect_used, reason = "a benchmark of fixed, generated input")]

mod common;

use std::hint::black_box;
use std::sync::Arc;
use std::time::{Duration, Instant};

use capture::symbolize::source_file::SourceConfig;
use criterion::{Criterion, criterion_group, criterion_main};
use egui::{
    Event, Modifiers, MouseWheelSource, MouseWheelUnit, PointerButton, Pos2, RawInput, Rect,
    TouchPhase, pos2, vec2,
};
use flint::gui::app::FlintApp;
use flint::gui::view::loader::Source;
use profile_model::codec::DecodeOptions;
use profile_model::frames::FrameId;
use profile_model::source_listing::SourcePaths;

/// The window and its egui context, with the frames run so far.
struct Window {
    ctx: egui::Context,
    app: FlintApp,
    frames: u64,
}

impl Window {
    /// The window on the fleet profile as `flint-fixture-gen fleet` writes it.
    fn on_fleet() -> Self {
        let bytes = common::fleet_bytes_seeded(1);
        let mut app = FlintApp::new(DecodeOptions::default());
        app.view.sync_jobs = true;
        app.open(Source::Bytes {
            name: "fleet.pb.gz".into(),
            bytes: Arc::from(bytes),
        });
        let mut w = Self {
            ctx: egui::Context::default(),
            app,
            frames: 0,
        };
        for _ in 0..5 {
            w.frame(Vec::new());
        }
        assert!(w.app.view.current().is_some(), "fleet loaded");
        w
    }

    /// One frame with `events` at 60 Hz: egui's pass and tessellation.
    fn frame(&mut self, events: Vec<Event>) -> usize {
        self.frames += 1;
        let raw = RawInput {
            screen_rect: Some(Rect::from_min_size(Pos2::ZERO, vec2(1920.0, 1080.0))),
            time: Some(self.frames as f64 / 60.0),
            predicted_dt: 1.0 / 60.0,
            events,
            ..RawInput::default()
        };
        let app = &mut self.app;
        let out = self.ctx.run_ui(raw, |ui| app.show(ui));
        let primitives = self.ctx.tessellate(out.shapes, out.pixels_per_point);
        black_box(primitives.len())
    }

    /// The middle of the flame graph's canvas.
    fn graph_center(&self) -> Pos2 {
        let (canvas, params, _) = self.app.view.flame.last.clone().expect("drawn");
        let visible = canvas.intersect(params.visible);
        pos2(visible.center().x, visible.top() + 200.0)
    }

    /// The frame of the top table's first row (the largest self value).
    fn hottest(&self) -> FrameId {
        let cur = self.app.view.current().expect("loaded");
        cur.top
            .rows
            .iter()
            .max_by_key(|r| r.flat)
            .expect("rows")
            .frame
    }
}

/// A wheel notch at `pos` (positive: zoom in).
fn wheel(pos: Pos2, lines: f32) -> Vec<Event> {
    vec![
        Event::PointerMoved(pos),
        Event::MouseWheel {
            unit: MouseWheelUnit::Line,
            delta: vec2(0.0, lines),
            phase: TouchPhase::Move,
            source: MouseWheelSource::Wheel,
            modifiers: Modifiers::NONE,
        },
    ]
}

/// Writes a source file for `function`'s hottest file under a folder of its own, and
/// points the window there (`--source-path DIR --trim-path /`).
fn source_folder(w: &mut Window, frame: FrameId) -> std::path::PathBuf {
    let cur = w.app.view.current().expect("loaded");
    let f = cur.frames.get(frame);
    let dir = std::env::temp_dir().join(format!("flint-bench-sources-{}", std::process::id()));
    let file = dir.join(f.file.trim_start_matches('/'));
    std::fs::create_dir_all(file.parent().expect("a folder")).expect("a folder");
    let lines: String = (1..=(f.line.max(1) + 400))
        .map(|n| format!("    work(n, {n}) // line {n} of a made-up source file\n"))
        .collect();
    std::fs::write(&file, lines).expect("written");
    println!(
        "source view of {} ({}), read from {}",
        f.function,
        f.file,
        file.display()
    );
    w.app.view.source.config = Arc::new(SourceConfig {
        paths: SourcePaths {
            source_path: dir.display().to_string(),
            trim_path: "/".into(),
            search_path: dir.display().to_string(),
        },
        debuginfod: None,
    });
    dir
}

fn views(c: &mut Criterion) {
    let mut w = Window::on_fleet();
    let center = w.graph_center();
    let mut group = c.benchmark_group("views_1920x1080");
    group.sample_size(30);
    group.measurement_time(Duration::from_secs(20));
    // The wheel turned every frame, in and out by turns (smoothed by egui).
    group.bench_function("frame_wheel_zoom", |b| {
        b.iter_custom(|iters| {
            let mut spent = Duration::ZERO;
            for i in 0..iters {
                let lines = if (i / 20) % 2 == 0 { 1.0 } else { -1.0 };
                let started = Instant::now();
                w.frame(wheel(center, lines));
                spent += started.elapsed();
            }
            spent
        })
    });
    w.app.view.reset_zoom();
    // A drag held down, 40 px a frame, back and forth.
    group.bench_function("frame_drag_pan", |b| {
        b.iter_custom(|iters| {
            w.frame(vec![
                Event::PointerMoved(center),
                Event::PointerButton {
                    pos: center,
                    button: PointerButton::Primary,
                    pressed: true,
                    modifiers: Modifiers::NONE,
                },
            ]);
            let mut spent = Duration::ZERO;
            let mut at = center;
            for i in 0..iters {
                let dx = if (i / 10) % 2 == 0 { 40.0 } else { -40.0 };
                at += vec2(dx, 0.0);
                let started = Instant::now();
                w.frame(vec![Event::PointerMoved(at)]);
                spent += started.elapsed();
            }
            w.frame(vec![Event::PointerButton {
                pos: at,
                button: PointerButton::Primary,
                pressed: false,
                modifiers: Modifiers::NONE,
            }]);
            spent
        })
    });
    w.app.view.reset_zoom();
    let hot = w.hottest();
    let name = w.app.view.frame_name(hot).expect("named");
    println!("sandwich of {name}");
    group.sample_size(10);
    // Asked to painted: the sandwich made (on this thread) and its first frame drawn.
    group.bench_function("open_sandwich", |b| {
        b.iter_custom(|iters| {
            let mut spent = Duration::ZERO;
            for _ in 0..iters {
                w.app.view.close_sandwich();
                w.frame(Vec::new());
                let started = Instant::now();
                w.app.view.open_sandwich(hot);
                w.frame(Vec::new());
                spent += started.elapsed();
                assert!(w.app.view.sandwich.made.is_some(), "made");
            }
            spent
        })
    });
    w.app.view.close_sandwich();
    let dir = source_folder(&mut w, hot);
    // Asked to painted: its lines counted at line granularity with the view's
    // filters, the file found and read, the panel's first frame drawn.
    group.bench_function("open_source", |b| {
        b.iter_custom(|iters| {
            let mut spent = Duration::ZERO;
            for _ in 0..iters {
                w.app.view.close_source();
                w.frame(Vec::new());
                let started = Instant::now();
                w.app.view.open_source(hot);
                w.frame(Vec::new());
                spent += started.elapsed();
                let source = &w.app.view.source;
                assert!(
                    source.shown.is_some() && source.not_shown.is_none(),
                    "shown"
                );
            }
            spent
        })
    });
    group.finish();
    let _ = std::fs::remove_dir_all(dir);
}

criterion_group!(benches, views);
criterion_main!(benches);
