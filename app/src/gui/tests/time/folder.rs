//! Folders: indexing, skipped files, profile types and reloads, and the demo.

use super::*;

#[test]
fn a_corrupt_file_in_the_directory_is_skipped_with_a_visible_warning() {
    let dir = fixture_dir("corrupt");
    std::fs::write(dir.join("broken.pb.gz"), b"\x1f\x8b not really gzip").unwrap();
    let h = harness(dir.clone());
    let tl = h.state().timeline.as_ref().unwrap();
    assert_eq!(tl.profiles, Some(FILES.len()), "the others load");
    assert_eq!(tl.warnings.len(), 1, "{:?}", tl.warnings);
    assert!(
        tl.warnings[0].starts_with("skipped ") && tl.warnings[0].contains("broken.pb.gz"),
        "{:?}",
        tl.warnings
    );
    assert!(
        h.query_by_label_contains("broken.pb.gz").is_some(),
        "the warning is on screen"
    );
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn a_directory_without_profiles_says_so_where_the_flame_graph_goes() {
    let dir = std::env::temp_dir().join(format!("flint-gui-empty-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("notes.txt"), b"not a profile").unwrap();
    let mut h = window();
    let ctx = h.ctx.clone();
    h.state_mut().open_dir(&ctx, dir.clone());
    h.run_steps(4);
    let app = h.state();
    let error = app.shell.error.clone().expect("the error is shown");
    assert!(
        error.contains("its one file is not a pprof profile (") && error.contains("notes.txt"),
        "{error}"
    );
    let hint = app.timeline.as_ref().unwrap().hint();
    assert_eq!(hint, format!("nothing to show: {error}"));
    h.get_by_label(&hint);
    assert!(h.query_by_label(timeline::CLICK_HINT).is_none());
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn a_heap_profile_is_plotted_as_its_values_having_no_duration() {
    let dir = heap_dir("heap");
    let mut h = harness(dir.clone());
    let profile = codec::decode(&std::fs::read(fixture("heap.pb.gz")).unwrap()).unwrap();
    // Bytes in use: a snapshot. Objects allocated: counted from the program's start.
    // Neither is a delta, as Parca names them: the profile has no duration.
    for (sample_type, delta, unit) in [
        ("inuse_space", false, "bytes"),
        ("alloc_objects", false, "count"),
    ] {
        plot_type(&mut h, sample_type);
        let tl = h.state().timeline.as_ref().unwrap();
        assert_eq!(tl.types[tl.type_index].delta, delta);
        let index = profile.find_sample_type(sample_type).unwrap();
        let tl = h.state().timeline.as_ref().unwrap();
        assert_eq!(tl.y_unit(), unit);
        let points: Vec<f64> = tl
            .series
            .iter()
            .flat_map(|s| s.points.iter().map(|p| p[1]))
            .collect();
        assert_eq!(points, [profile.total(index) as f64], "{sample_type}");
    }
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn each_profile_type_is_shown_over_its_own_time_span() {
    // Thirty generated CPU profiles of 2023 and a Go heap profile taken years later.
    let dir = generated_dir("type-span", 30);
    std::fs::copy(fixture("heap.pb.gz"), dir.join("heap.pb.gz")).unwrap();
    let mut cpu = TimeRange {
        start_nanos: i64::MAX,
        end_nanos: i64::MIN,
    };
    for i in 0..30 {
        let p = codec::decode(&std::fs::read(dir.join(format!("{i:05}.pb.gz"))).unwrap()).unwrap();
        cpu.start_nanos = cpu.start_nanos.min(p.time_nanos);
        cpu.end_nanos = cpu.end_nanos.max(p.time_nanos + p.duration_nanos);
    }
    let heap = codec::decode(&std::fs::read(fixture("heap.pb.gz")).unwrap()).unwrap();
    assert!(heap.time_nanos > cpu.end_nanos + 365 * 86_400_000_000_000);
    let mut h = harness(dir.clone());
    let tl = h.state().timeline.as_ref().unwrap();
    assert_eq!(tl.types[tl.type_index].sample_type, "cpu");
    assert_eq!(tl.span, cpu, "the CPU profiles' own span");
    let (start, end) = tl.whole_bounds();
    assert!(
        end - start < 400.0,
        "the whole view fits five minutes: {start}..{end}"
    );
    let heap_type = tl
        .types
        .iter()
        .find(|t| t.sample_type == "inuse_space")
        .expect("the heap profile's types are listed")
        .to_string();
    // The heap type, chosen: its own span, one snapshot.
    let ctx = h.ctx.clone();
    h.state_mut().apply_selector_text(&ctx, &heap_type);
    h.run_steps(4);
    let tl = h.state().timeline.as_ref().unwrap();
    assert_eq!(tl.types[tl.type_index].to_string(), heap_type);
    assert_eq!(
        tl.span,
        TimeRange {
            start_nanos: heap.time_nanos,
            end_nanos: heap.time_nanos + 1,
        }
    );
    let points: usize = tl.series.iter().map(|s| s.points.len()).sum();
    assert_eq!(points, 1);
    // And back: the CPU profiles' span again.
    let cpu_type = tl
        .types
        .iter()
        .find(|t| t.sample_type == "cpu")
        .unwrap()
        .to_string();
    h.state_mut().apply_selector_text(&ctx, &cpu_type);
    h.run_steps(4);
    assert_eq!(h.state().timeline.as_ref().unwrap().span, cpu);
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn a_folder_with_an_hour_missing_is_plotted_in_two_lines() {
    use flint_fixture_gen::{
        Scratch, SeriesParams, Universe, UniverseParams, encode_gz, series_profile,
    };
    let dir = Scratch::new("gui-gap");
    let u = Universe::new(&UniverseParams {
        locations: 50,
        functions: 20,
        binaries: 2,
        min_depth: 2,
        max_depth: 5,
        seed: 3,
    })
    .unwrap();
    let sp = SeriesParams {
        samples: 4,
        start_nanos: 1_700_000_000_000_000_000,
        step_secs: 10,
        seed: 3,
    };
    // Twenty 10-second profiles, then twenty more an hour later.
    for i in (0..20).chain(380..400) {
        let (_, gz) = encode_gz(&series_profile(&u, &sp, i)).unwrap();
        std::fs::write(dir.join(format!("{i:05}.pb.gz")), gz).unwrap();
    }
    let mut h = harness(dir.to_path_buf());
    h.run_steps(2);
    let tl = h.state_mut().timeline.as_mut().unwrap();
    let (x0, x1, width) = tl.last_view.expect("drawn");
    let shown = tl.series.len();
    for line in tl.drawn_lines(shown, x0, x1, width) {
        let segments: Vec<_> = line.segments().collect();
        assert_eq!(segments.len(), 2, "one line each side of the hour");
        let gap_start = 1_700_000_000.0 + 20.0 * 10.0;
        assert!(segments[0].iter().all(|p| p.x < gap_start));
        assert!(segments[1].iter().all(|p| p.x >= 1_700_000_000.0 + 3800.0));
    }
}

#[test]
fn reloading_a_folder_adds_the_profiles_written_since_and_keeps_what_is_shown() {
    let dir = fixture_dir("reload");
    std::fs::remove_file(dir.join(FILES[2])).unwrap();
    let mut h = harness(dir.clone());
    let ctx = h.ctx.clone();
    assert_eq!(h.state().timeline.as_ref().unwrap().profiles, Some(2));
    h.state_mut()
        .set_matchers(&ctx, vec![endpoint("/api/hash")]);
    h.run_steps(4);
    h.state_mut().merge_visible(&ctx);
    h.run_steps(4);
    let shown = h.state().view.current().unwrap().totals[0];
    let selection = h.state().timeline.as_ref().unwrap().selection;
    assert!(selection.is_some());
    // A profile written since the folder was opened.
    std::fs::copy(fixture(FILES[2]), dir.join(FILES[2])).unwrap();
    h.key_press(egui::Key::F5);
    h.run_steps(6);
    let app = h.state();
    let tl = app.timeline.as_ref().unwrap();
    assert_eq!(tl.profiles, Some(3), "the new profile is indexed");
    assert_eq!(
        tl.matchers,
        vec![endpoint("/api/hash")],
        "the selector is kept"
    );
    assert_eq!(tl.selection, selection, "the selection is kept");
    assert_eq!(
        app.view.current().unwrap().totals[0],
        shown,
        "the view is kept"
    );
    let hash: i64 = FILES.iter().map(|f| endpoint_total(f, "/api/hash")).sum();
    assert_eq!(
        plotted_total(&h),
        hash,
        "the plot has the new profile, selector applied"
    );
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn many_skipped_files_are_counted_in_the_tooltip_and_listed_whole_on_a_click() {
    let dir = fixture_dir("many-broken");
    for i in 0..25 {
        std::fs::write(dir.join(format!("broken-{i:02}.pb.gz")), b"junk").unwrap();
    }
    let mut h = harness(dir.clone());
    let warnings = h.state().timeline.as_ref().unwrap().warnings.clone();
    assert_eq!(warnings.len(), 25);
    let tooltip = crate::gui::shell::status_bar::warnings_tooltip(&warnings);
    assert_eq!(tooltip.lines().count(), 21, "{tooltip}");
    assert!(
        tooltip.ends_with("… and 5 more: click to see them all"),
        "{tooltip}"
    );
    assert!(
        crate::gui::shell::status_bar::warnings_tooltip(&warnings[..1])
            .ends_with("click to see the list")
    );
    h.get_by_label_contains("(and 24 more)").click();
    h.run_steps(3);
    h.get_by_label("Warnings from opening (25)");
    h.get_by_label("Copy the list");
    assert!(h.state().shell.warnings_shown);
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn the_bundled_profile_leads_to_a_demo_hour_of_profiles_over_time() {
    // The folder of a process that no longer runs (killed) goes with the next demo.
    let stale = std::env::temp_dir().join(format!("flint-demo-{}", u32::MAX));
    std::fs::create_dir_all(&stale).unwrap();
    let mut h = window();
    h.state_mut().open(crate::gui::view::loader::Source::Bytes {
        name: crate::gui::DEMO_NAME.to_string(),
        bytes: std::sync::Arc::from(crate::gui::DEMO_BYTES),
    });
    h.run_steps(3);
    h.get_by_label(crate::gui::shell::status_bar::DEMO_LINK)
        .click();
    h.run_steps(4);
    let tl = h.state().timeline.as_ref().expect("time mode");
    assert_eq!(tl.origin.name(), "demo fleet, last hour");
    assert!(!stale.exists() || !cfg!(target_os = "linux"));
    // An hour ending now, a profile every 10 s, four services.
    let hour = 3_600_000_000_000;
    let now = capture::time::now_nanos();
    assert_eq!(tl.span.end_nanos - tl.span.start_nanos, hour);
    assert!((now - tl.span.end_nanos).abs() < 60_000_000_000, "ends now");
    let names: Vec<&str> = tl.series.iter().map(|s| s.name.as_str()).collect();
    for comm in ["api-server", "search-indexer", "ingest-worker", "envoy"] {
        assert!(
            names.contains(&format!("comm={comm}").as_str()),
            "{names:?}"
        );
    }
    let points: usize = tl.series.iter().map(|s| s.points.len()).sum();
    assert_eq!(points, 4 * crate::gui::time::demo::DEMO_PROFILES as usize);
    assert!(
        h.query_by_label(crate::gui::shell::status_bar::DEMO_LINK)
            .is_none()
    );
    let plotted: i64 = tl.series.iter().map(|s| s.total).sum();
    merge_everything(&mut h);
    let tl = h.state().timeline.as_ref().expect("time mode");
    assert_eq!(
        tl.selection_profiles,
        crate::gui::time::demo::DEMO_PROFILES as usize
    );
    let cur = h.state().view.current().expect("the merged hour");
    assert_eq!(
        cur.totals[0], plotted,
        "the merge holds what the plot shows"
    );
    // Compare before and after the demo's deploy: the function it slows is red.
    let deploy = span_start_plus(h.state(), crate::gui::time::demo::DEPLOY_AT);
    let end = h.state().timeline.as_ref().unwrap().span.end_nanos;
    let start = h.state().timeline.as_ref().unwrap().span.start_nanos;
    h.state_mut().compare.enabled = true;
    h.run_steps(1);
    let ctx = h.ctx.clone();
    for (from, to) in [(start, deploy - 1), (deploy, end)] {
        let range = TimeRange {
            start_nanos: from,
            end_nanos: to,
        };
        h.state_mut().select_time(&ctx, QueryTime::Merge(range));
        h.run_steps(4);
    }
    let app = h.state();
    let res = app.compare.result.as_ref().expect("compared");
    let slower = (0..res.tree.len() as u32)
        .filter(|&n| {
            crate::gui::view::flame::node_name(&res.tree, &res.frames, n)
                == crate::gui::time::demo::SLOWER
        })
        .max_by_key(|&n| res.totals_b[n as usize])
        .expect("the slowed function is in the comparison");
    let change = res.values(app.compare.mode).change(slower);
    assert!(
        matches!(change, profile_model::diff::Change::More(x) if x > 0.5),
        "{change:?}"
    );
    // Closing the window removes the demo's files.
    let crate::gui::time::timeline::Origin::Dir(dir) =
        h.state().timeline.as_ref().unwrap().origin.clone()
    else {
        panic!("the demo is a folder");
    };
    assert_eq!(std::fs::read_dir(&dir).unwrap().count(), 360);
    eframe::App::on_exit(h.state_mut(), None);
    assert!(!dir.exists());
    assert!(
        !dir.parent().unwrap().exists(),
        "the window's own folder goes too"
    );
}

#[test]
fn the_status_bar_tells_how_long_indexing_took_until_a_merge_is_shown() {
    let mut h = window();
    // A file opened first: the time it took is not the folder's.
    h.state_mut()
        .open(crate::gui::view::loader::Source::Path(fixture(FILES[0])));
    h.run_steps(4);
    h.get_by_label_contains("opened in ");
    let ctx = h.ctx.clone();
    h.state_mut().open_dir(&ctx, fixture_dir("indexed-in"));
    // Compare mode on shows no first view, whose merge would at once replace the
    // indexing time.
    h.state_mut().compare.enabled = true;
    h.run_steps(4);
    let text = h
        .get_by_label_contains("indexed ")
        .accesskit_node()
        .value()
        .unwrap_or_default();
    let took = text
        .strip_prefix(&format!("indexed {} profiles in ", FILES.len()))
        .unwrap_or_else(|| panic!("{text:?}"));
    assert!(
        took.split_once(' ')
            .is_some_and(|(n, unit)| n.parse::<f64>().is_ok_and(|n| n > 0.0)
                && ["µs", "ms", "s"].contains(&unit)),
        "{text:?}"
    );
    assert!(h.query_by_label_contains("opened in ").is_none());
    h.state_mut().compare.enabled = false;
    merge_everything(&mut h);
    h.get_by_label_contains("merged ");
    assert!(h.query_by_label_contains("indexed ").is_none());
}

/// A fresh directory `flint-gui-TAG-PID` holding copies of `files`, each a path under
/// `tests/fixtures/`.
fn dir_of(tag: &str, files: &[&str]) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("flint-gui-{tag}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let fixtures = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../tests/fixtures");
    for f in files {
        let name = f.rsplit('/').next().unwrap();
        std::fs::copy(fixtures.join(f), dir.join(name)).unwrap();
    }
    dir
}

#[test]
fn a_folder_opens_on_the_type_pprof_shows() {
    for (file, shown) in [
        // default_sample_type (field 14) names the second of four types.
        ("writers/default_sample_type.pb.gz", "alloc_space"),
        // Else the last: a Go heap profile's bytes in use, a Node wall profile's time.
        ("go/heap.pb.gz", "inuse_space"),
        ("writers/node-pprof-wall.pb.gz", "wall"),
        ("go/cpu-1.pb.gz", "cpu"),
    ] {
        let dir = dir_of("shown-type", &[file]);
        let h = harness(dir.clone());
        let tl = h.state().timeline.as_ref().unwrap();
        assert_eq!(tl.types[tl.type_index].sample_type, shown, "{file}");
        let _ = std::fs::remove_dir_all(dir);
    }
}

#[test]
fn a_profile_shorter_than_its_period_is_plotted_with_no_absurd_rate() {
    // Alone, 1 ns of 10 ms samples has no rate: its value is plotted as it is.
    let dir = dir_of("rates-alone", &["writers/rates.pb.gz"]);
    let profile = codec::decode(&std::fs::read(dir.join("rates.pb.gz")).unwrap()).unwrap();
    let h = harness(dir.clone());
    let tl = h.state().timeline.as_ref().unwrap();
    assert_eq!(tl.y_unit(), "nanoseconds");
    let points: Vec<f64> = tl
        .series
        .iter()
        .flat_map(|s| s.points.iter().map(|p| p[1]))
        .collect();
    assert_eq!(points, [profile.total(1) as f64]);
    let _ = std::fs::remove_dir_all(dir);
    // Beside a profile of 10 s (in one step of the plot), plotted in CPU cores: the
    // rate is that profile's, not billions of cores.
    let dir = dir_of("rates-beside", &["writers/rates.pb.gz", "go/cpu-1.pb.gz"]);
    let cpu = codec::decode(&std::fs::read(dir.join("cpu-1.pb.gz")).unwrap()).unwrap();
    let cores = cpu.total(1) as f64 / cpu.duration_nanos as f64;
    let h = harness(dir.clone());
    let tl = h.state().timeline.as_ref().unwrap();
    assert_eq!(tl.y_unit(), "CPU cores");
    let points: Vec<[f64; 2]> = tl.series.iter().flat_map(|s| s.points.clone()).collect();
    assert!(!points.is_empty());
    assert!(
        points.iter().all(|p| (p[1] - cores).abs() < 1e-9),
        "{cores}: {points:?}"
    );
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn a_folder_opens_on_the_merge_of_the_range_in_view_until_a_pick_replaces_it() {
    let dir = fixture_dir("first-view");
    let h = harness(dir.clone());
    let app = h.state();
    let tl = app.timeline.as_ref().unwrap();
    assert_eq!(
        tl.selection,
        Some(QueryTime::Merge(tl.span)),
        "merged at once"
    );
    assert_eq!(tl.selection_profiles, FILES.len());
    let cur = app.view.current().expect("a view without a click");
    let (total, _) = FILES
        .iter()
        .map(|f| default_total(f))
        .fold((0, String::new()), |(sum, _), (t, u)| (sum + t, u));
    assert_eq!(cur.totals[0], total, "every profile in view merged");
    assert!(h.query_by_label(timeline::CLICK_HINT).is_none());
    h.get_by_label("flame graph");
    // A pick replaces it, and no later series bring the first view back.
    let mut h = h;
    let span = h.state().timeline.as_ref().unwrap().span;
    let one = QueryTime::Single(span.start_nanos);
    let ctx = h.ctx.clone();
    h.state_mut().select_time(&ctx, one);
    h.run_steps(4);
    h.state_mut().load_series(&ctx);
    h.run_steps(4);
    let app = h.state();
    assert_eq!(app.timeline.as_ref().unwrap().selection, Some(one));
    assert_eq!(
        app.view.current().unwrap().totals[0],
        default_total(FILES[0]).0
    );
    let _ = std::fs::remove_dir_all(dir);
}
