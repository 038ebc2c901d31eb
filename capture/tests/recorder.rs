//! One interval's stack counts become a valid pprof with symbolized, labelled samples.

#![allow(
    clippy::expect_used,
    clippy::unwrap_used,
    reason = "a test fails loudly on a broken fixture"
)]

use capture::recorder::{CapturedStack, Interval, ProcessInfo, build_profile};
use capture::symbols::Symbolizer;
use capture::symbols::kallsyms::Kallsyms;
use profile_model::codec::{decode, encode};

#[inline(never)]
fn leaf_function_of_the_test(x: u64) -> u64 {
    std::hint::black_box(x.wrapping_add(1))
}

/// Names of the frames of sample `i`, leaf first (inlined frames innermost first).
fn stack_names(p: &profile_model::Profile, i: usize) -> Vec<String> {
    p.samples
        .stack(i)
        .iter()
        .flat_map(|&l| p.locations[l as usize].lines.iter())
        .map(|line| p.str(p.functions[line.function as usize].name).to_string())
        .collect()
}

#[test]
fn stacks_become_a_labelled_symbolized_profile() {
    assert_eq!(leaf_function_of_the_test(1), 2);
    let pid = std::process::id();
    let leaf = leaf_function_of_the_test as *const () as u64;
    let kernel = Kallsyms::read().unwrap();
    // A kernel address when this user may see them; the test checks user frames
    // either way.
    let kernel_addr = (!kernel.is_empty())
        .then(|| {
            std::fs::read_to_string("/proc/kallsyms")
                .unwrap()
                .lines()
                .find(|l| l.ends_with(" T ksys_write") || l.ends_with(" T do_syscall_64"))
                .and_then(|l| u64::from_str_radix(l.split(' ').next().unwrap(), 16).ok())
        })
        .flatten();
    let stacks = vec![
        CapturedStack {
            pid,
            tid: pid,
            user: vec![leaf],
            kernel: Vec::new(),
            count: 3,
        },
        CapturedStack {
            pid,
            tid: pid,
            // An address in no mapping: kept, named after its address.
            user: vec![0x10, leaf + 1],
            kernel: kernel_addr.map(|a| vec![a + 4]).unwrap_or_default(),
            count: 1,
        },
    ];
    let interval = Interval {
        start_nanos: 1_796_042_360_000_000_000,
        duration_nanos: 10_000_000_000,
        frequency_hz: 19,
    };
    let mut sym = Symbolizer::new();
    let mut procs = ProcessInfo::new();
    let (profile, report) = build_profile(&stacks, interval, &mut sym, &mut procs);
    // Valid: it survives encoding and decoding with every id checked.
    let p = decode(&encode(&profile)).unwrap();
    assert_eq!(p.sample_type_names(), ["samples/count", "cpu/nanoseconds"]);
    assert_eq!(p.period, 1_000_000_000 / 19);
    assert_eq!(
        (p.time_nanos, p.duration_nanos),
        (interval.start_nanos, interval.duration_nanos)
    );
    assert_eq!(p.total(0), 4);
    assert_eq!(p.total(1), 4 * (1_000_000_000 / 19));
    assert_eq!(report.samples, 4);
    let first = stack_names(&p, 0);
    // The leaf location is the test's function, with what an optimized build inlined
    // into it (`wrapping_add`) as its inner lines.
    let leaf_lines = &p.locations[p.samples.stack(0)[0] as usize].lines;
    let outer = leaf_lines
        .last()
        .map(|l| p.str(p.functions[l.function as usize].name));
    assert!(
        outer.is_some_and(|n| n.ends_with("leaf_function_of_the_test")),
        "{first:?}"
    );
    let second = stack_names(&p, 1);
    if kernel_addr.is_some() {
        assert!(
            second[0] == "ksys_write" || second[0] == "do_syscall_64",
            "kernel frame first: {second:?}"
        );
    }
    let unknown = second
        .iter()
        .find(|n| n.starts_with("[unknown]+0x"))
        .unwrap();
    assert_eq!(unknown, "[unknown]+0x10");
    // Labels of the process and thread, and the machine.
    let labels: Vec<(String, String)> = p
        .sample_labels(0)
        .map(|(k, v)| (k.to_string(), v))
        .collect();
    let get = |k: &str| {
        labels
            .iter()
            .find(|(key, _)| key == k)
            .map(|(_, v)| v.clone())
    };
    assert_eq!(get("pid"), Some(pid.to_string()));
    assert_eq!(get("tid"), Some(pid.to_string()));
    assert!(get("comm").is_some_and(|c| !c.is_empty()));
    assert!(get("executable").is_some_and(|e| e.starts_with('/')));
    assert!(get("node").is_some());
    // The mapping keeps the binary and its build id for later symbolization.
    let loc = &p.locations[p.samples.stack(0)[0] as usize];
    let mapping = &p.mappings[loc.mapping.unwrap() as usize];
    assert_eq!(loc.address, leaf);
    assert!(mapping.memory_start <= leaf && leaf < mapping.memory_limit);
    assert!(p.str(mapping.filename).starts_with('/'));
    // A one-frame user stack does not reach a thread's entry point.
    assert!(
        report
            .warning()
            .unwrap()
            .starts_with("stack may be incomplete: no frame pointers in ")
    );
}

#[test]
fn a_walk_that_went_astray_is_blamed_on_the_binary_it_left_and_a_gone_process_on_its_exit() {
    assert_eq!(leaf_function_of_the_test(1), 2);
    let pid = std::process::id();
    let leaf = leaf_function_of_the_test as *const () as u64;
    // Above Linux's largest pid (2^22): no such process, no maps.
    let gone = 5_000_000;
    let stacks = vec![
        CapturedStack {
            pid,
            tid: pid,
            // What a frame pointer used for data gives: a "return address" in no mapping.
            user: vec![leaf, 0xe9b5_dba5_b5c0_fbcf],
            kernel: Vec::new(),
            count: 2,
        },
        CapturedStack {
            pid: gone,
            tid: gone,
            user: vec![0x40_1000, 0x40_2000],
            kernel: Vec::new(),
            count: 5,
        },
    ];
    let interval = Interval {
        start_nanos: 1_796_042_360_000_000_000,
        duration_nanos: 10_000_000_000,
        frequency_hz: 19,
    };
    let (_, report) = build_profile(
        &stacks,
        interval,
        &mut Symbolizer::new(),
        &mut ProcessInfo::new(),
    );
    let exe = std::env::current_exe().unwrap();
    let exe = exe.file_name().unwrap().to_str().unwrap();
    assert_eq!(
        report.incomplete.into_iter().collect::<Vec<_>>(),
        [(exe.to_string(), 2)]
    );
    assert_eq!(report.exited, 5);
}
