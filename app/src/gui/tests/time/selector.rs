//! The selector row: matchers, sum by, suggestions, and Shift+click on lines and legend.

use super::*;

#[test]
fn endpoint_matcher_reduces_the_plotted_total() {
    let dir = fixture_dir("matcher");
    let mut h = harness(dir.clone());
    let all: i64 = FILES.iter().map(|f| default_total(f).0).sum();
    assert_eq!(plotted_total(&h), all);
    let hash: i64 = FILES.iter().map(|f| endpoint_total(f, "/api/hash")).sum();
    assert!(hash > 0 && hash < all, "{hash} of {all}");
    let names = h.state().timeline.as_ref().unwrap().bar.label_names.clone();
    assert!(names.iter().any(|n| n == "endpoint"), "{names:?}");
    // Label values are asked for in the background, once.
    let ctx = h.ctx.clone();
    h.state_mut().request_values(&ctx, "endpoint");
    h.run_steps(2);
    let values = endpoint_values(&h);
    assert!(values.iter().any(|v| v == "/api/hash"), "{values:?}");

    h.state_mut()
        .add_matchers(&ctx, vec![endpoint("/api/hash")]);
    h.run_steps(4);
    assert_eq!(plotted_total(&h), hash);
    h.get_by_label(r#"endpoint="/api/hash""#);

    // A selection merges only the matching samples.
    merge_everything(&mut h);
    assert_eq!(h.state().view.current().unwrap().totals[0], hash);

    // The chip's × removes the matcher.
    h.get_by_label("×").click();
    h.run_steps(4);
    assert!(h.state().timeline.as_ref().unwrap().matchers.is_empty());
    assert_eq!(plotted_total(&h), all);
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn invalid_text_selector_shows_the_error_and_keeps_the_series() {
    let dir = fixture_dir("text");
    let mut h = harness(dir.clone());
    h.get_by_label("text").click();
    h.run_steps(2);
    let tl = h.state().timeline.as_ref().unwrap();
    assert!(tl.bar.text_mode);
    let typ = tl.selector().unwrap().profile_type.to_string();
    assert_eq!(tl.bar.text, typ);
    let before: Vec<(String, i64)> = tl
        .series
        .iter()
        .map(|s| (s.name.clone(), s.total))
        .collect();

    let bad = format!(r#"{typ}{{endpoint="/api/hash""#);
    let err = Selector::parse(&bad).unwrap_err().to_string();
    let ctx = h.ctx.clone();
    h.state_mut().apply_selector_text(&ctx, &bad);
    h.run_steps(4);
    h.get_by_label(&err);
    let tl = h.state().timeline.as_ref().unwrap();
    let after: Vec<(String, i64)> = tl
        .series
        .iter()
        .map(|s| (s.name.clone(), s.total))
        .collect();
    assert_eq!(after, before);
    assert!(tl.matchers.is_empty());

    let good = format!(r#"{typ}{{endpoint="/api/sort"}}"#);
    h.state_mut().apply_selector_text(&ctx, &good);
    h.run_steps(4);
    let sort: i64 = FILES.iter().map(|f| endpoint_total(f, "/api/sort")).sum();
    assert!(
        h.state()
            .timeline
            .as_ref()
            .unwrap()
            .bar
            .text_error
            .is_none()
    );
    assert_eq!(plotted_total(&h), sort);
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn sum_by_endpoint_yields_several_series() {
    let dir = fixture_dir("sumby");
    let mut h = harness(dir.clone());
    let all = plotted_total(&h);
    let ctx = h.ctx.clone();
    h.state_mut()
        .set_sum_by(&ctx, SumBy::Labels(vec!["endpoint".to_string()]));
    h.run_steps(4);
    let tl = h.state().timeline.as_ref().unwrap();
    assert!(tl.series.len() > 1, "{}", tl.series.len());
    let named = tl
        .series
        .iter()
        .filter(|s| s.name.starts_with("endpoint="))
        .count();
    assert!(named > 1, "{named}");
    assert_eq!(plotted_total(&h), all);
    h.state_mut().set_sum_by(&ctx, SumBy::Total);
    h.run_steps(4);
    assert_eq!(h.state().timeline.as_ref().unwrap().series.len(), 1);
    assert_eq!(plotted_total(&h), all);
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn sum_by_two_labels_ticked_in_the_drop_down_keeps_each_pair_apart() {
    let dir = fixture_dir("sumby2");
    let mut h = by_endpoint(&dir);
    let all = plotted_total(&h);
    let by_endpoint = h.state().timeline.as_ref().unwrap().series.len();
    // The drop-down stays open while a second label is ticked.
    h.get_by_label_contains("how the plotted series are summed")
        .click();
    h.run_steps(2);
    h.get_by_label("path").click();
    h.run_steps(4);
    assert!(
        h.query_by_label("endpoint").is_some(),
        "the drop-down is open"
    );
    let tl = h.state().timeline.as_ref().unwrap();
    assert_eq!(
        tl.sum_by,
        SumBy::Labels(vec!["endpoint".to_string(), "path".to_string()])
    );
    assert!(tl.series.len() > by_endpoint, "{}", tl.series.len());
    for s in &tl.series {
        let keys: Vec<&str> = s.labels.iter().map(|(k, _)| k.as_str()).collect();
        assert!(keys.contains(&"path"), "{keys:?}");
    }
    assert_eq!(plotted_total(&h), all);
    let combo = h.get_by_label_contains("how the plotted series are summed");
    assert_eq!(
        combo.accesskit_node().value().as_deref(),
        Some("endpoint, path")
    );
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn sum_by_labels_toggle_in_the_order_of_the_names() {
    let names: Vec<String> = ["comm", "endpoint", "path"].map(String::from).to_vec();
    let labels = |l: &[&str]| SumBy::Labels(l.iter().map(|s| s.to_string()).collect());
    let both = SumBy::Auto.toggled("path", &names).toggled("comm", &names);
    assert_eq!(both, labels(&["comm", "path"]));
    assert_eq!(both.text(&names), "comm, path");
    assert_eq!(
        both.resolve(&names),
        Some(vec!["comm".into(), "path".into()])
    );
    assert_eq!(both.toggled("comm", &names), labels(&["path"]));
    assert_eq!(labels(&["path"]).toggled("path", &names), SumBy::Total);
}

#[test]
fn auto_sum_by_names_the_label_it_sums_by() {
    let names = |l: &[&str]| l.iter().map(|s| s.to_string()).collect::<Vec<String>>();
    assert_eq!(
        SumBy::Auto.text(&names(&["comm", "container"])),
        "auto: comm"
    );
    assert_eq!(
        SumBy::Auto.text(&names(&["container", "pid"])),
        "auto: container"
    );
    assert_eq!(
        SumBy::Auto.text(&names(&["path", "pid"])),
        "auto: one series"
    );
}

#[test]
fn shift_click_adds_the_labels_of_the_line_not_yet_matched() {
    // The line itself is picked by Timeline::pick (regression_plot.rs pins it).
    let labels = vec![
        ("container".to_string(), "parca".to_string()),
        ("endpoint".to_string(), "/api/hash".to_string()),
    ];
    let existing = vec![endpoint("/api/hash")];
    let add = sel::series_matchers(&labels, &existing);
    assert_eq!(add.len(), 1);
    assert_eq!(add[0].to_string(), r#"container="parca""#);
}

#[test]
fn shift_click_on_a_line_adds_its_labels_as_matchers() {
    let dir = fixture_dir("shift");
    let mut h = by_endpoint(&dir);
    let (pos, _) = endpoint_point(&h);
    shift_click_at(&mut h, pos);
    let app = h.state();
    assert!(first_view_kept(&h), "a Shift+click does not select");
    let matchers = &app.timeline.as_ref().unwrap().matchers;
    assert_eq!(matchers.len(), 1, "{matchers:?}");
    assert_eq!(matchers[0].name, "endpoint");
    let value = matchers[0].value.clone();
    let expected: i64 = FILES.iter().map(|f| endpoint_total(f, &value)).sum();
    assert_eq!(plotted_total(&h), expected);
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn shift_click_on_a_legend_entry_adds_its_labels_and_keeps_the_line() {
    let dir = fixture_dir("legend");
    let mut h = by_endpoint(&dir);
    let tl = h.state().timeline.as_ref().unwrap();
    let series = tl
        .series
        .iter()
        .find(|s| s.labels.iter().any(|(k, _)| k == "endpoint"))
        .unwrap();
    let name = series.name.clone();
    let value = series.labels[0].1.clone();
    let entry = h.get_by_label(&name).rect().center();
    shift_click_at(&mut h, entry);
    let app = h.state();
    assert!(first_view_kept(&h), "a Shift+click does not select");
    let matchers = &app.timeline.as_ref().unwrap().matchers;
    assert_eq!(matchers, &vec![endpoint(&value)]);
    let expected: i64 = FILES.iter().map(|f| endpoint_total(f, &value)).sum();
    assert_eq!(plotted_total(&h), expected);
    // The entry is still checked: the Shift+click did not hide the line.
    let entry = h.get_by_label(&name);
    assert_eq!(
        entry.accesskit_node().toggled(),
        Some(egui::accesskit::Toggled::True),
        "the line stays visible"
    );
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn shift_click_on_a_legend_entry_summed_by_two_labels_adds_both() {
    let dir = fixture_dir("legend2");
    let mut h = harness(dir.clone());
    let ctx = h.ctx.clone();
    let both = SumBy::Labels(vec!["endpoint".to_string(), "path".to_string()]);
    h.state_mut().set_sum_by(&ctx, both);
    h.run_steps(4);
    let tl = h.state().timeline.as_ref().unwrap();
    let series = tl
        .series
        .iter()
        .find(|s| s.labels.len() == 2)
        .expect("a series with both labels");
    let (name, labels) = (series.name.clone(), series.labels.clone());
    let entry = h.get_by_label(&name).rect().center();
    shift_click_at(&mut h, entry);
    let matchers = &h.state().timeline.as_ref().unwrap().matchers;
    let expected: Vec<Matcher> = labels
        .iter()
        .map(|(k, v)| Matcher::new(k, MatchOp::Equal, v).unwrap())
        .collect();
    assert_eq!(matchers, &expected);
    // Only that series is left, alone.
    assert_eq!(h.state().timeline.as_ref().unwrap().series.len(), 1);
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn typing_a_value_lists_the_labels_values_that_contain_it() {
    let (mut h, dir) = adding_endpoint("suggest");
    type_value(&mut h, "/api/s");
    // The values with "/api/s" in them are listed under the field.
    let values = endpoint_values(&h);
    let expected = sel::suggestions(&values, "/api/s", 12);
    assert!(expected.contains(&"/api/sort"), "{values:?}");
    assert!(!expected.contains(&"/api/hash"), "{expected:?}");
    assert!(
        h.query_by_label("/api/hash").is_none(),
        "only the values typed"
    );
    h.get_by_label("/api/sort").click();
    h.run_steps(3);
    let bar = &h.state().timeline.as_ref().unwrap().bar;
    assert_eq!(bar.add_value, "/api/sort");
    assert!(!bar.suggesting, "the list closes once a value is picked");
    assert!(h.query_by_label("/api/sort").is_none());
    h.get_by_label("Add").click();
    h.run_steps(4);
    let tl = h.state().timeline.as_ref().unwrap();
    assert_eq!(tl.matchers, vec![endpoint("/api/sort")]);
    assert_eq!(
        tl.bar.add_value, "",
        "the field is ready for the next matcher"
    );
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn enter_adds_the_highlighted_suggestion_and_arrows_move_it() {
    let (mut h, dir) = adding_endpoint("suggest-keys");
    let values = endpoint_values(&h);
    let listed = sel::suggestions(&values, "/api/", 12);
    assert!(listed.len() >= 2, "{listed:?}");
    // A value typed in part: Enter takes the first suggestion, not the text typed
    // (which `=` would match with nothing).
    type_value(&mut h, "/api/");
    h.key_press(egui::Key::Enter);
    h.run_steps(4);
    assert_eq!(
        h.state().timeline.as_ref().unwrap().matchers,
        vec![endpoint(listed[0])]
    );
    // ↓ moves to the next one, ↑ back, and past the end it stays on the last.
    type_value(&mut h, "/api/");
    for key in [
        egui::Key::ArrowDown,
        egui::Key::ArrowDown,
        egui::Key::ArrowUp,
    ] {
        h.key_press(key);
        h.run_steps(1);
    }
    h.key_press(egui::Key::Enter);
    h.run_steps(4);
    assert_eq!(
        h.state().timeline.as_ref().unwrap().matchers,
        vec![endpoint(listed[0]), endpoint(listed[1])]
    );
    // The Add button adds the text as typed.
    type_value(&mut h, "/api/");
    h.get_by_label("Add").click();
    h.run_steps(4);
    assert_eq!(
        h.state().timeline.as_ref().unwrap().matchers,
        vec![endpoint(listed[0]), endpoint(listed[1]), endpoint("/api/")]
    );
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn the_value_entered_is_the_highlighted_suggestion_or_the_text() {
    let listed = ["envoy".to_string(), "envoy-admin".to_string()];
    assert_eq!(sel::entered_value("env", &listed, 0), "envoy");
    assert_eq!(sel::entered_value("env", &listed, 1), "envoy-admin");
    assert_eq!(sel::entered_value("env", &listed, 7), "envoy-admin");
    assert_eq!(sel::entered_value("x.*", &[], 0), "x.*");
}

#[test]
fn suggestions_ignore_case_and_stop_at_an_exact_value() {
    let values: Vec<String> = ["api-server", "API-gateway", "envoy"]
        .map(String::from)
        .to_vec();
    assert_eq!(
        sel::suggestions(&values, "api", 12),
        ["api-server", "API-gateway"]
    );
    assert_eq!(
        sel::suggestions(&values, "", 2),
        ["api-server", "API-gateway"]
    );
    assert!(sel::suggestions(&values, "envoy", 12).is_empty());
    assert!(sel::suggestions(&values, "zzz", 12).is_empty());
}
