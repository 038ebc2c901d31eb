//! Other profilers' files opened in the window, told by their content: a V8
//! .cpuprofile and folded stacks show as profiles, a perf.data recording as a plot of
//! its time slices; a broken file is a visible error that keeps the view shown.

#![allow(clippy::unwrap_used, clippy::expect_used, reason = "tests")]

use std::path::PathBuf;

use egui_kittest::kittest::Queryable as _;

use crate::gui::tests::fixtures::window;

/// Path of a file under `tests/fixtures/`.
fn other(path: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../tests/fixtures")
        .join(path)
}

#[test]
fn a_cpuprofile_and_folded_stacks_open_and_a_broken_file_keeps_the_view() {
    let mut h = window();
    let ctx = h.ctx.clone();
    h.state_mut().open_path(&ctx, other("node/cpu.cpuprofile"));
    h.run_steps(4);
    let cur = h.state().view.current().cloned().expect("shown");
    assert_eq!(cur.name, "cpu.cpuprofile");
    assert_eq!(
        cur.profile.sample_type_names(),
        ["samples/count", "wall/microseconds"]
    );
    h.get_by_label("fib");

    h.state_mut().open_path(&ctx, other("inferno/perf.folded"));
    h.run_steps(4);
    let cur = h.state().view.current().cloned().expect("shown");
    assert_eq!(cur.name, "perf.folded");
    assert_eq!(cur.profile.total(0), 277_277_277);

    let dir = flint_fixture_gen::Scratch::new("gui-formats");
    let broken = dir.join("broken.folded");
    std::fs::write(&broken, "main;work 3\nmain;idle\n").unwrap();
    h.state_mut().open_path(&ctx, broken);
    h.run_steps(4);
    let error = h.state().shell.error.clone().expect("an error");
    assert!(
        error.contains("broken.folded: folded stacks, line 2: no count after the stack"),
        "{error}"
    );
    assert_eq!(
        h.state().view.current().unwrap().name,
        "perf.folded",
        "view kept"
    );
}

#[test]
fn a_perf_data_file_opens_as_a_plot_of_its_time_slices() {
    let dir = flint_fixture_gen::Scratch::new("gui-perf-data");
    let Ok((c, _)) = flint_fixture_gen::symbol_parts::build_frame_pointer_programs(&dir) else {
        println!("SKIP: cannot build the test program");
        return;
    };
    let data = dir.join("c.data");
    let recorded = std::process::Command::new("perf")
        .args(["record", "-q", "-g", "-F", "999", "-o"])
        .arg(&data)
        .arg("--")
        .arg(&c)
        .arg("1000000")
        .output();
    if !recorded.is_ok_and(|out| out.status.success()) {
        println!("SKIP: perf record is missing or not allowed here");
        return;
    }
    // The recording opens in time mode, a series of its time slices, and shows their
    // merge at once.
    let mut h = window();
    let ctx = h.ctx.clone();
    h.state_mut().open_path(&ctx, data);
    for _ in 0..20 {
        if h.state().view.current().is_some() {
            break;
        }
        h.run_steps(1);
    }
    assert!(h.query_by_label("Merge").is_some(), "time mode");
    let source = h.state().timeline.as_ref().and_then(|t| t.source.clone());
    assert!(source.is_some(), "indexed");
    let cur = h.state().view.current().cloned().expect("the first view");
    assert_eq!(
        cur.profile.sample_type_names(),
        ["samples/count", "cpu/nanoseconds"]
    );
    h.get_by_label("leaf_work");
}
