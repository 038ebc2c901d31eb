//! Capture local machine, in the window: the plot grows an interval at a time and the
//! flame graph follows the latest one. Needs root (or CAP_BPF + CAP_PERFMON); prints a
//! SKIP line otherwise.

#![allow(clippy::unwrap_used, clippy::expect_used, reason = "tests")]

use std::time::{Duration, Instant};

use egui::vec2;
use egui_kittest::Harness;
use profile_model::codec::DecodeOptions;

use super::app::FlintApp;
use super::timeline::Origin;

fn is_root() -> bool {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find_map(|l| l.strip_prefix("Uid:"))
                .map(|v| v.split_whitespace().nth(1) == Some("0"))
        })
        .unwrap_or(false)
}

#[test]
fn a_live_capture_grows_the_plot_and_follows_the_latest_interval() {
    if !is_root() {
        println!("SKIP: capturing the machine needs root (or CAP_BPF + CAP_PERFMON)");
        return;
    }
    let mut app = FlintApp::new(DecodeOptions::default());
    app.sync_jobs = true;
    let mut h = Harness::builder()
        .with_size(vec2(1400.0, 900.0))
        .build_ui_state(|ui, app: &mut FlintApp| app.show(ui), app);
    let ctx = h.ctx.clone();
    h.state_mut().start_capture(&ctx);
    assert!(h.state().error.is_none(), "{:?}", h.state().error);
    assert_eq!(h.state().timeline.as_ref().unwrap().origin, Origin::Capture);
    // Keep the machine busy so that the interval has samples.
    let busy = std::thread::spawn(|| {
        let end = Instant::now() + Duration::from_secs(14);
        let mut x = 0u64;
        while Instant::now() < end {
            x = std::hint::black_box(x.wrapping_mul(6364136223846793005).wrapping_add(1));
        }
    });
    let deadline = Instant::now() + Duration::from_secs(40);
    while h.state().timeline.as_ref().unwrap().profiles.unwrap_or(0) < 2 {
        assert!(
            Instant::now() < deadline,
            "no interval in 40 s: {:?}",
            h.state().error
        );
        h.run_steps(1);
        std::thread::sleep(Duration::from_millis(100));
    }
    h.run_steps(4);
    let app = h.state();
    assert!(app.error.is_none(), "{:?}", app.error);
    let tl = app.timeline.as_ref().unwrap();
    assert!(
        tl.types
            .iter()
            .any(|t| t.to_string() == "flint_cpu:samples:count:cpu:nanoseconds:delta"),
        "{:?}",
        tl.types
    );
    assert!(!tl.series.is_empty(), "the plot has series");
    let cur = app.current.as_ref().expect("the latest interval is shown");
    assert!(cur.totals[0] > 0);
    assert_eq!(
        tl.selection, tl.live_selection,
        "following the latest interval"
    );
    let status = app.live.as_ref().unwrap().status.lock().unwrap().clone();
    assert!(status.contains("Hz") && status.contains("CPU"), "{status}");
    h.state_mut().stop_capture();
    busy.join().unwrap();
}
