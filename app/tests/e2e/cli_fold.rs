//! `flint fold` gives the same stacks and values as `go tool pprof -traces`.

use std::collections::BTreeMap;

use super::{fixtures, flint_ok};

/// pprof marks inlined frames in `-traces`; folded stacks do not.
fn without_inline_mark(frame: &str) -> &str {
    let frame = frame.trim();
    frame.strip_suffix(" (inline)").unwrap_or(frame)
}

/// Parses pprof's `-traces` output into folded stacks (root first) with values in ns.
fn traces_as_folded(text: &str) -> BTreeMap<String, i64> {
    let mut stacks = BTreeMap::new();
    for block in text
        .split("-----------+-------------------------------------------------------")
        .skip(1)
    {
        let mut value = 0i64;
        let mut frames: Vec<&str> = Vec::new();
        for line in block.lines() {
            // "      10ms   crypto/sha256.block": a 10-wide value, then the leaf;
            // "             main.fib": a caller; "  endpoint:  /api/hash": a label.
            if let Some(caller) = line.strip_prefix("             ") {
                frames.push(without_inline_mark(caller));
            } else if line.len() > 13 && &line[10..13] == "   " && !line[..10].trim().is_empty() {
                let ms = line[..10].trim().strip_suffix("ms").expect("value in ms");
                value = ms.parse::<i64>().expect("milliseconds") * 1_000_000;
                frames.push(without_inline_mark(&line[13..]));
            }
        }
        if value != 0 {
            frames.reverse();
            *stacks.entry(frames.join(";")).or_insert(0) += value;
        }
    }
    stacks
}

#[test]
fn folded_stacks_equal_pprof_traces() {
    let traces =
        std::fs::read_to_string(fixtures().join("golden/cpu.traces.txt")).expect("golden traces");
    let expected = traces_as_folded(&traces);
    assert!(
        expected.len() > 50,
        "the traces file parses into many stacks"
    );
    let folded = flint_ok(&["fold", "cpu.pb.gz"]);
    let mut actual = BTreeMap::new();
    for line in folded.lines() {
        let (stack, value) = line.rsplit_once(' ').expect("`stack value` line");
        *actual.entry(stack.to_string()).or_insert(0) += value.parse::<i64>().expect("value");
    }
    let only_flint: Vec<_> = actual
        .iter()
        .filter(|(k, v)| expected.get(*k) != Some(v))
        .take(3)
        .collect();
    let only_pprof: Vec<_> = expected
        .iter()
        .filter(|(k, v)| actual.get(*k) != Some(v))
        .take(3)
        .collect();
    assert!(
        only_flint.is_empty() && only_pprof.is_empty(),
        "stacks differ:\n flint: {only_flint:#?}\n pprof: {only_pprof:#?}"
    );
    assert_eq!(actual.len(), expected.len());
}

#[test]
fn fold_filters_apply() {
    let folded = flint_ok(&[
        "fold",
        "cpu.pb.gz",
        "--focus",
        "main.fib",
        "--sample-type",
        "samples",
    ]);
    assert!(!folded.is_empty());
    let total: i64 = folded
        .lines()
        .map(|l| {
            l.rsplit_once(' ')
                .map_or(0, |(_, v)| v.parse::<i64>().unwrap_or(0))
        })
        .sum();
    assert_eq!(total, 91, "main.fib has 91 samples of 10ms");
    assert!(folded.lines().all(|l| l.contains("main.fib")));
}

#[test]
fn fold_selects_among_files_as_top_does() {
    let total = |text: &str| -> i64 {
        text.lines()
            .filter_map(|l| l.rsplit_once(' ').and_then(|(_, v)| v.parse::<i64>().ok()))
            .sum()
    };
    let selected = flint_ok(&[
        "fold",
        "cpu-1.pb.gz",
        "cpu-2.pb.gz",
        "cpu-3.pb.gz",
        "--from",
        "2026-11-30T12:39:13Z",
    ]);
    assert_eq!(total(&selected), 4_020_000_000);
    assert_eq!(
        total(&selected),
        total(&flint_ok(&["fold", "cpu-2.pb.gz", "cpu-3.pb.gz"]))
    );
    let out = super::flint(&[
        "fold",
        "--diff-base",
        "cpu-1.pb.gz",
        "cpu-3.pb.gz",
        "--from",
        "now-1h",
    ]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.starts_with("error: --diff-base takes files whole"),
        "{stderr}"
    );
}

#[test]
fn group_by_puts_the_label_above_the_same_stacks() {
    let plain = flint_ok(&["fold", "cpu.pb.gz"]);
    let grouped = flint_ok(&["fold", "cpu.pb.gz", "--group-by", "endpoint"]);
    let sum_by_stack = |text: &str, strip: bool| {
        let mut stacks = BTreeMap::new();
        for line in text.lines() {
            let (stack, value) = line.rsplit_once(' ').expect("`stack value` line");
            let stack = match stack.split_once(';') {
                Some((root, rest)) if strip && root.starts_with("endpoint=") => rest,
                _ => stack,
            };
            *stacks.entry(stack.to_string()).or_insert(0) += value.parse::<i64>().expect("value");
        }
        stacks
    };
    assert!(
        grouped
            .lines()
            .any(|l| l.starts_with("endpoint=/api/hash;")),
        "the label's value is the root frame: {}",
        &grouped[..grouped.len().min(300)]
    );
    assert_eq!(sum_by_stack(&grouped, true), sum_by_stack(&plain, false));
}
