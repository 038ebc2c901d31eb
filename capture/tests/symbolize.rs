//! The offline symbolizer on real programs (gcc and rustc, split with objcopy and
//! stripped): an addresses-only profile named through each source, the names checked
//! against `addr2line` on the unstripped program, and bad symbol files costing only
//! their own frames.

#![allow(
    clippy::expect_used,
    clippy::unwrap_used,
    reason = "a test fails loudly on a broken fixture"
)]

use std::path::{Path, PathBuf};

use capture::symbolize::{Source, SymbolSources, symbolize};
use flint_fixture_gen::Scratch;
use flint_fixture_gen::symbol_parts::{
    Program, addr2line_functions, addresses_only_profile, first_stack_names, function_symbol,
    programs_or_skip, without_hash,
};

/// A stack of `program` (leaf, then callers) in virtual addresses, with what
/// `addr2line` names at each (at the call before a return address).
fn stack(program: &Program, leaf: &str, callers: &[&str]) -> (Vec<u64>, Vec<Vec<String>>) {
    let (start, size) = function_symbol(&program.full, leaf).unwrap();
    // The leaf where the most frames are inlined.
    let leaf_addr = (start..start + size)
        .max_by_key(|&a| addr2line_functions(&program.full, a).unwrap().len())
        .unwrap();
    let mut addrs = vec![leaf_addr];
    let mut truth = vec![addr2line_functions(&program.full, leaf_addr).unwrap()];
    for c in callers {
        let (start, size) = function_symbol(&program.full, c).unwrap();
        let ret = start + size / 2;
        addrs.push(ret);
        truth.push(addr2line_functions(&program.full, ret - 1).unwrap());
    }
    (addrs, truth)
}

/// `addr2line`'s names as the symbolizer shows them.
fn without_hashes(names: Vec<Vec<String>>) -> Vec<Vec<String>> {
    names
        .iter()
        .map(|l| l.iter().map(|n| without_hash(n)).collect())
        .collect()
}

fn sources() -> SymbolSources {
    SymbolSources {
        debug_dirs: Vec::new(),
        ..SymbolSources::default()
    }
}

/// Copies `from` to `ROOT/.build-id/ab/cdef….debug`.
fn put_in_build_id_dir(root: &Path, build_id: &str, from: &Path) {
    let path: PathBuf = root
        .join(".build-id")
        .join(&build_id[..2])
        .join(format!("{}.debug", &build_id[2..]));
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::copy(from, path).unwrap();
}

#[test]
fn an_addresses_only_profile_is_named_through_each_source_as_addr2line_names_it() {
    let dir = Scratch::new("symbolize-sources");
    let Some((c, rust)) = programs_or_skip(&dir) else {
        return;
    };
    let debug_root = dir.join("debug-root");
    put_in_build_id_dir(&debug_root, &c.build_id, &c.debug);
    put_in_build_id_dir(&debug_root, &rust.build_id, &rust.debug);
    for (program, leaf, callers) in [
        (&c, "leaf_work", &["outer_loop", "main"][..]),
        (&rust, "rust_leaf", &["rust_outer"][..]),
    ] {
        let (addrs, truth) = stack(program, leaf, callers);
        let truth = without_hashes(truth);
        assert!(
            !truth[0].is_empty() && !truth[0][0].contains("??"),
            "{truth:?}"
        );
        if leaf == "leaf_work" {
            assert_eq!(truth[0].len(), 2, "hash_step is inlined: {truth:?}");
        }
        let full = program.full.to_str().unwrap();
        let stripped = program.stripped.to_str().unwrap();
        let cases: [(&str, &str, bool, SymbolSources, Source); 5] = [
            // A binary given by hand, matched by build id (its name is another).
            (
                "/opt/app/prog",
                "given by build id",
                true,
                SymbolSources {
                    binaries: vec![program.full.clone()],
                    ..sources()
                },
                Source::Binary,
            ),
            // By file name, the profile having no build id.
            (
                "/opt/app/c.full",
                "given by name",
                false,
                SymbolSources {
                    binaries: vec![program.full.clone()],
                    ..sources()
                },
                Source::Binary,
            ),
            // The mapping's own path, whose build id matches.
            (full, "local path", true, sources(), Source::LocalPath),
            // Only the debug file, by build id under a debug directory.
            (
                "/opt/app/prog",
                "debug dir",
                true,
                SymbolSources {
                    debug_dirs: vec![debug_root.clone()],
                    ..sources()
                },
                Source::DebugDir,
            ),
            // The stripped binary on this machine, its debug file by .gnu_debuglink.
            (stripped, "debuglink", true, sources(), Source::DebugDir),
        ];
        for (mapping_path, case, with_id, sources, source) in cases {
            let mapping_path = if case == "given by name" {
                format!(
                    "/opt/app/{}",
                    program.full.file_name().unwrap().to_str().unwrap()
                )
            } else {
                mapping_path.to_string()
            };
            let mut p =
                addresses_only_profile(program, &mapping_path, with_id, &[(addrs.clone(), 10)])
                    .unwrap();
            let report = symbolize(&mut p, &sources);
            assert_eq!(
                first_stack_names(&p),
                truth,
                "{leaf} {case}: {}",
                report.summary()
            );
            assert_eq!(report.unnamed_before, addrs.len());
            assert_eq!(
                report.named.get(&source),
                Some(&addrs.len()),
                "{case}: {}",
                report.summary()
            );
            assert!(report.no_symbols.is_empty());
            // The profile still encodes and decodes, names kept.
            let again = profile_model::codec::decode(&profile_model::codec::encode(&p)).unwrap();
            assert_eq!(first_stack_names(&again), truth);
        }
    }
}

#[test]
fn bad_symbol_files_cost_only_their_frames_with_a_warning_and_perf_maps_name_jit_code() {
    let dir = Scratch::new("symbolize-bad");
    let Some((c, rust)) = programs_or_skip(&dir) else {
        return;
    };
    let (addrs, truth) = stack(&c, "leaf_work", &["outer_loop"]);
    // A corrupt ELF beside the right binary: a warning, and the names still come.
    let corrupt = dir.join("corrupt");
    std::fs::write(&corrupt, b"\x7fELF\x02\x01\x01garbage").unwrap();
    let mut p = addresses_only_profile(&c, "/opt/app/c", true, &[(addrs.clone(), 1)]).unwrap();
    let report = symbolize(
        &mut p,
        &SymbolSources {
            binaries: vec![corrupt.clone(), c.full.clone()],
            ..sources()
        },
    );
    assert_eq!(first_stack_names(&p), truth);
    assert!(
        report.warnings.iter().any(|w| w.contains("corrupt")),
        "{:?}",
        report.warnings
    );
    // The Rust program's debug file where the C program's should be: not used.
    let debug_root = dir.join("wrong-root");
    put_in_build_id_dir(&debug_root, &c.build_id, &rust.debug);
    let mut p = addresses_only_profile(&c, "/opt/app/c", true, &[(addrs.clone(), 1)]).unwrap();
    let report = symbolize(
        &mut p,
        &SymbolSources {
            debug_dirs: vec![debug_root],
            ..sources()
        },
    );
    assert_eq!(report.named_total(), 0);
    assert_eq!(report.no_symbols.get("c"), Some(&addrs.len()));
    assert!(
        report.warnings.iter().any(|w| w.contains(&rust.build_id)),
        "{:?}",
        report.warnings
    );
    assert!(p.locations.iter().all(|l| l.lines.is_empty()));
    // JIT code: no binary anywhere, a perf map names it; perf-PID.map only for that pid.
    p.strings.extend(["pid".to_string(), "77".to_string()]);
    let key = (p.strings.len() - 2) as u32;
    p.label_sets.push(vec![profile_model::profile::Label {
        key,
        str: key + 1,
        ..Default::default()
    }]);
    p.samples.label_set = vec![1; p.samples.len()];
    let other = dir.join("perf-78.map");
    std::fs::write(
        &other,
        format!("{:#x} 10 other_process\n", p.locations[0].address),
    )
    .unwrap();
    let report = symbolize(
        &mut p,
        &SymbolSources {
            perf_maps: vec![other.clone()],
            ..sources()
        },
    );
    assert_eq!(
        report.named_total(),
        0,
        "another pid's perf map is not used"
    );
    let map = dir.join("perf-77.map");
    std::fs::write(
        &map,
        format!(
            "{:#x} 10 $erlang:apply/2\n{:#x} 10 LazyCompile:*sort /app/sort.js:12\n",
            p.locations[0].address, p.locations[1].address
        ),
    )
    .unwrap();
    let report = symbolize(
        &mut p,
        &SymbolSources {
            perf_maps: vec![other, map],
            ..sources()
        },
    );
    assert_eq!(
        report.named.get(&Source::PerfMap),
        Some(&2),
        "{}",
        report.summary()
    );
    assert_eq!(
        first_stack_names(&p),
        [
            vec!["$erlang:apply/2"],
            vec!["LazyCompile:*sort /app/sort.js:12"]
        ]
    );
}
