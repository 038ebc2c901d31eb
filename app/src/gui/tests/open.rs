//! Opening from the window: a file opened from the time mode, a folder opened over a
//! file, and the window's own prompt for a path where no system file dialog can be
//! shown (no xdg-desktop-portal).

#![allow(clippy::unwrap_used, clippy::expect_used, reason = "tests")]

use std::time::{Duration, Instant};

use egui_kittest::Harness;
use egui_kittest::kittest::Queryable as _;
use profile_model::codec;

use crate::gui::app::FlintApp;
use crate::gui::shell::dialogs::{ExportKind, PathPrompt, Purpose};
use crate::gui::tests::fixtures::{FILES, fixture, fixture_dir, window};

/// A window showing `FILES[0]` on its own.
fn file_window() -> Harness<'static, FlintApp> {
    let mut h = window();
    let ctx = h.ctx.clone();
    h.state_mut().open_path(&ctx, fixture(FILES[0]));
    h.run_steps(4);
    assert_eq!(h.state().view.current().unwrap().name, FILES[0]);
    h
}

#[test]
fn a_file_opened_from_the_time_mode_replaces_the_plot() {
    let dir = fixture_dir("open-file");
    let mut h = window();
    let ctx = h.ctx.clone();
    h.state_mut().open_dir(&ctx, dir.clone());
    h.run_steps(4);
    assert!(h.query_by_label("Merge").is_some(), "time mode");
    h.state_mut().open_path(&ctx, fixture(FILES[1]));
    h.run_steps(4);
    let app = h.state();
    assert!(app.timeline.is_none(), "the plot is gone");
    assert_eq!(app.view.current().unwrap().name, FILES[1]);
    assert!(h.query_by_label("Merge").is_none());
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn a_folder_opened_over_a_file_shows_its_plot_and_not_the_files_view() {
    let dir = fixture_dir("open-dir");
    let mut h = file_window();
    let ctx = h.ctx.clone();
    h.state_mut().open_path(&ctx, dir.clone());
    h.run_steps(4);
    let app = h.state();
    assert!(app.timeline.as_ref().unwrap().source.is_some(), "indexed");
    let view = app.view.current().expect("the folder's first view");
    assert_ne!(view.name, FILES[0], "the file's view is dropped");
    let name = dir.file_name().unwrap().to_string_lossy();
    assert!(
        app.shell.title().starts_with(&format!("flint — {name}")),
        "the title names the folder: {}",
        app.shell.title()
    );
    h.get_by_label("flame graph");
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn the_prompt_opens_the_folder_typed_and_refuses_a_missing_path() {
    let dir = fixture_dir("prompt-open");
    let mut h = file_window();
    let prompt = PathPrompt::new("Open a profile", Purpose::Open, "");
    h.state_mut().shell.dialogs.prompt = Some(prompt);
    h.run_steps(2);
    let missing = dir.join("missing.pb.gz");
    h.state_mut().shell.dialogs.prompt.as_mut().unwrap().path = missing.display().to_string();
    h.run_steps(1);
    h.get_by_label("Open").click();
    h.run_steps(2);
    let refused = format!("no such file or directory: {}", missing.display());
    h.get_by_label(&refused);
    assert!(h.state().shell.dialogs.prompt.is_some(), "still asking");
    assert_eq!(
        h.state().view.current().unwrap().name,
        FILES[0],
        "view kept"
    );

    h.state_mut().shell.dialogs.prompt.as_mut().unwrap().path = dir.display().to_string();
    h.run_steps(1);
    h.get_by_label("Open").click();
    h.run_steps(4);
    let app = h.state();
    assert!(app.shell.dialogs.prompt.is_none(), "the prompt is closed");
    assert!(
        app.timeline.as_ref().unwrap().source.is_some(),
        "the folder is open"
    );
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn the_prompt_exports_the_view_where_typed_and_cancel_writes_nothing() {
    let dir = fixture_dir("prompt-save");
    let mut h = file_window();
    let path = dir.join("view.pb.gz");

    h.state_mut().shell.dialogs.prompt =
        crate::gui::shell::dialogs::export_prompt(&h.state().view, ExportKind::Pprof);
    h.run_steps(2);
    let offered = h
        .state()
        .shell
        .dialogs
        .prompt
        .as_ref()
        .unwrap()
        .path
        .clone();
    assert!(offered.ends_with("cpu-1.view.pb.gz"), "{offered}");
    h.state_mut().shell.dialogs.prompt.as_mut().unwrap().path = path.display().to_string();
    h.run_steps(1);
    h.get_by_label("Cancel").click();
    h.run_steps(2);
    assert!(h.state().shell.dialogs.prompt.is_none());
    assert!(!path.exists(), "cancel writes nothing");

    h.state_mut().shell.dialogs.prompt =
        crate::gui::shell::dialogs::export_prompt(&h.state().view, ExportKind::Pprof);
    h.state_mut().shell.dialogs.prompt.as_mut().unwrap().path = path.display().to_string();
    h.run_steps(1);
    h.get_by_label("Save").click();
    // The export is written on a thread of its own.
    let started = Instant::now();
    while h.state().shell.message.is_none() && started.elapsed() < Duration::from_secs(20) {
        std::thread::sleep(Duration::from_millis(20));
        h.run_steps(1);
    }
    let expected = format!("exported {}", path.display());
    assert_eq!(h.state().shell.message, Some((expected, false)));
    let written = codec::decode(&std::fs::read(&path).unwrap()).unwrap();
    let cur = h.state().view.current().cloned().unwrap();
    assert_eq!(written.total(cur.sample_type), cur.totals[0]);
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn several_files_open_merged_as_pprof_merges_them() {
    let mut h = window();
    let paths: Vec<_> = FILES[..2].iter().map(|f| fixture(f)).collect();
    h.state_mut()
        .open(crate::gui::view::loader::Source::Paths(paths));
    let waiting = Instant::now();
    while h.state().view.current().is_none() {
        assert!(waiting.elapsed() < Duration::from_secs(30), "never opened");
        h.run_steps(1);
    }
    let cur = h.state().view.current().cloned().unwrap();
    assert_eq!(cur.name, "cpu-1.pb.gz + 1 more");
    // The total shown is the two files' together, of the type pprof shows by default.
    let total_of = |name: &str| {
        let p = codec::decode(&std::fs::read(fixture(name)).unwrap()).unwrap();
        p.total(p.default_sample_index())
    };
    assert_eq!(cur.totals[0], total_of(FILES[0]) + total_of(FILES[1]));
    assert_eq!(cur.path, None);
}

#[test]
fn a_profiles_doc_url_is_a_link_in_the_status_bar() {
    // Written by another encoder (tests/fixtures/writers/make.py) with doc_url set.
    let writers =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/fixtures/writers");
    let mut h = window();
    let ctx = h.ctx.clone();
    h.state_mut().open_path(&ctx, writers.join("doc_url.pb.gz"));
    let waiting = Instant::now();
    while h.state().view.current().is_none() {
        assert!(waiting.elapsed() < Duration::from_secs(30), "never opened");
        h.run_steps(1);
    }
    h.run_steps(2);
    let url = &h.state().view.current().unwrap().profile.doc_url;
    assert_eq!(url, "https://example.com/profiling/cpu.html");
    h.get_by_label("about this profile");
    // A profile without one shows no link.
    h.state_mut().open_path(&ctx, fixture(FILES[0]));
    h.run_steps(6);
    assert!(h.query_by_label("about this profile").is_none());
}

#[test]
fn a_page_saved_as_a_profile_is_named_for_what_it_is_with_the_details_a_click_away() {
    let mut h = file_window();
    let html = b"<!DOCTYPE html>\n<html><body>Sign in to continue</body></html>\n";
    h.state_mut().open(crate::gui::view::loader::Source::Bytes {
        name: "cpu.pb.gz".to_string(),
        bytes: std::sync::Arc::from(&codec::gzip(html)[..]),
    });
    h.run_steps(4);
    h.get_by_label(
        "cpu.pb.gz: a gzip of an HTML page, not a profile (a login or error page saved in its place?)",
    );
    // The decoder's own words are under "details", shown when it is opened.
    let detail = "not a pprof profile nor folded stacks (line 1: no count after the stack";
    assert!(h.query_by_label_contains(detail).is_none());
    h.get_by_label("details").click();
    h.run_steps(2);
    h.get_by_label_contains(detail);
    assert_eq!(
        h.state().view.current().unwrap().name,
        FILES[0],
        "view kept"
    );
}
