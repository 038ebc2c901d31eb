//! Capture local machine, in the window: the plot grows an interval at a time and the
//! flame graph follows the latest one. Needs root (or CAP_BPF + CAP_PERFMON); prints a
//! SKIP line otherwise.

#![allow(clippy::unwrap_used, clippy::expect_used, reason = "tests")]

use std::time::{Duration, Instant};

use crate::gui::tests::fixtures::{fixture_dir, window};
use crate::gui::time::timeline::Origin;

/// Set in the environment of this test binary when it runs itself as nobody.
const UNPRIVILEGED_CHILD: &str = "FLINT_TEST_UNPRIVILEGED_CHILD";

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
    let mut h = window();
    let ctx = h.ctx.clone();
    h.state_mut().start_capture(&ctx);
    assert!(
        h.state().shell.error.is_none(),
        "{:?}",
        h.state().shell.error
    );
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
            h.state().shell.error
        );
        h.run_steps(1);
        std::thread::sleep(Duration::from_millis(100));
    }
    h.run_steps(4);
    let app = h.state();
    assert!(app.shell.error.is_none(), "{:?}", app.shell.error);
    let tl = app.timeline.as_ref().unwrap();
    assert!(
        tl.types
            .iter()
            .any(|t| t.to_string() == "flint_cpu:samples:count:cpu:nanoseconds:delta"),
        "{:?}",
        tl.types
    );
    assert!(!tl.series.is_empty(), "the plot has series");
    let cur = app.view.current().expect("the latest interval is shown");
    assert!(cur.totals[0] > 0);
    assert_eq!(
        tl.selection, tl.live_selection,
        "following the latest interval"
    );
    let status = app.live.as_ref().unwrap().status.lock().unwrap().clone();
    assert!(status.contains("Hz") && status.contains("CPU"), "{status}");
    let store = app.live.as_ref().unwrap().dir.clone();
    assert!(store.exists());
    // Closing the window stops the capture and removes its store.
    eframe::App::on_exit(h.state_mut(), None);
    assert!(h.state().live.is_none());
    assert!(!store.exists(), "{}", store.display());
    busy.join().unwrap();
}

#[test]
fn capture_without_privilege_says_what_is_missing_and_keeps_the_view() {
    use std::os::unix::process::CommandExt as _;
    if is_root() && std::env::var_os(UNPRIVILEGED_CHILD).is_none() {
        // Run this very test again as nobody, without capabilities.
        let exe = std::env::current_exe().unwrap();
        // The test's name as the harness knows it: its path without the crate's name.
        let module = module_path!().split_once("::").map_or("", |(_, m)| m);
        let name =
            format!("{module}::capture_without_privilege_says_what_is_missing_and_keeps_the_view");
        let output = std::process::Command::new(exe)
            .args(["--exact", &name, "--nocapture"])
            .env(UNPRIVILEGED_CHILD, "1")
            .uid(65534)
            .gid(65534)
            .output();
        let output = match output {
            Ok(output) => output,
            Err(e) => {
                println!("SKIP: cannot run the test binary as nobody: {e}");
                return;
            }
        };
        let stdout = String::from_utf8_lossy(&output.stdout);
        println!("{stdout}");
        assert!(
            output.status.success(),
            "as nobody: {stdout}{}",
            String::from_utf8_lossy(&output.stderr)
        );
        assert!(
            stdout.contains("1 passed"),
            "the child ran the test: {stdout}"
        );
        return;
    }
    let paranoid = std::fs::read_to_string("/proc/sys/kernel/perf_event_paranoid")
        .ok()
        .and_then(|p| p.trim().parse::<i32>().ok())
        .unwrap_or(2);
    if is_root() || paranoid < 1 {
        println!("SKIP: this user may sample every CPU (root, or perf_event_paranoid {paranoid})");
        return;
    }
    let mut h = window();
    let ctx = h.ctx.clone();
    let dir = fixture_dir("unprivileged");
    h.state_mut().open_dir(&ctx, dir.clone());
    h.run_steps(4);
    let before = h.state().timeline.as_ref().expect("time mode").profiles;
    assert!(before.is_some_and(|n| n > 0), "{before:?}");

    h.state_mut().start_capture(&ctx);
    let deadline = Instant::now() + Duration::from_secs(20);
    while h.state().shell.error.is_none() {
        assert!(Instant::now() < deadline, "no error in 20 s");
        h.run_steps(1);
        std::thread::sleep(Duration::from_millis(50));
    }
    h.run_steps(2);
    let app = h.state();
    let error = app.shell.error.clone().unwrap_or_default();
    for needle in ["cannot capture the local machine", "CAP_BPF", "CAP_PERFMON"] {
        assert!(error.contains(needle), "{needle:?} in {error:?}");
    }
    let tl = app.timeline.as_ref().expect("time mode is back");
    assert_eq!(
        tl.origin,
        Origin::Dir(dir.clone()),
        "the directory is shown again"
    );
    assert_eq!(tl.profiles, before);
    assert!(!tl.series.is_empty(), "its series are kept");
    assert!(app.live.is_none(), "the capture stopped");
    // The message is on screen, in the error banner.
    use egui_kittest::kittest::Queryable as _;
    assert!(
        h.query_by_label_contains("CAP_BPF").is_some(),
        "banner shows the error"
    );
    // The store the capture would have written is removed when the window closes.
    let store = crate::gui::shell::temp_dirs::own_dir(crate::gui::shell::temp_dirs::CAPTURE);
    eframe::App::on_exit(h.state_mut(), None);
    assert!(!store.exists(), "{}", store.display());
    let _ = std::fs::remove_dir_all(&dir);
}
