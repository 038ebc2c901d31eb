//! perf.data files: `flint top` of a real `perf record` of the test programs against
//! `perf report` of the same file, function by function, and bad files refused in
//! one line or read with a warning.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::process::Command;

use flint_fixture_gen::symbol_parts::{build_frame_pointer_programs, build_programs};

use super::{Scratch, flint};

/// Per function: (self, total) in percent of all samples' periods.
type Shares = HashMap<String, (f64, f64)>;

/// Agreement asked of flint and `perf report` on the same file, in points.
const TOLERANCE: f64 = 0.5;

/// The C and Rust programs with frame pointers, or `None` after a `SKIP:` line where
/// a compiler or `perf record` is missing or not allowed.
fn programs_or_skip(dir: &Path) -> Option<(PathBuf, PathBuf)> {
    let probe = dir.join("probe.data");
    let perf = Command::new("perf")
        .args(["record", "-q", "-F", "999", "-o"])
        .arg(&probe)
        .args(["--", "true"])
        .output();
    match perf {
        Ok(out) if out.status.success() => {}
        Ok(out) => {
            println!(
                "SKIP: perf record is not allowed here (root or perf_event_paranoid): {}",
                String::from_utf8_lossy(&out.stderr).trim()
            );
            return None;
        }
        Err(e) => {
            println!("SKIP: no perf (linux-perf) to record with: {e}");
            return None;
        }
    }
    match build_frame_pointer_programs(dir) {
        Ok(p) => Some(p),
        Err(e) => {
            println!("SKIP: cannot build the test programs: {e}");
            None
        }
    }
}

/// Runs `perf record` with `options`, `-o` the file returned, of `command`.
fn record(dir: &Path, name: &str, options: &[&str], command: &[&str]) -> PathBuf {
    let data = dir.join(name);
    let out = Command::new("perf")
        .arg("record")
        .args(options)
        .arg("-o")
        .arg(&data)
        .arg("--")
        .args(command)
        .output()
        .expect("perf runs");
    assert!(
        out.status.success(),
        "perf record {options:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    data
}

/// `perf report`'s shares of `data` by symbol (of the processes named `comm` only,
/// when given, still in percent of the whole file: `--comm` with `--sort symbol`
/// drops the samples of a symbol another command had first): self from
/// `--no-children`, total from `--children`.
fn perf_report(data: &Path, comm: Option<&str>) -> Shares {
    let column = |children: bool| -> HashMap<String, f64> {
        let mode = if children {
            "--children"
        } else {
            "--no-children"
        };
        let out = Command::new("perf")
            .args(["report", "--stdio", mode, "-g", "none", "--sort"])
            .arg(if comm.is_some() {
                "comm,symbol"
            } else {
                "symbol"
            })
            .arg("-i")
            .arg(data)
            .output()
            .expect("perf report runs");
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8_lossy(&out.stdout)
            .lines()
            .filter(|l| !l.starts_with('#'))
            .filter_map(|l| {
                // "  77.47%  76.71%  [comm]  [.] leaf_work  …": the first percentage,
                // then the name after the [.] or [k] mark.
                let (head, rest) = l.split_once("] ")?;
                let heads: Vec<&str> = head.split_whitespace().collect();
                if comm.is_some_and(|c| heads.len() < 2 || heads[heads.len() - 2] != c) {
                    return None;
                }
                let share = heads.first()?.strip_suffix('%')?;
                let name = rest.split_whitespace().next()?;
                Some((name.to_string(), share.parse().ok()?))
            })
            .collect()
    };
    let (selfs, totals) = (column(false), column(true));
    totals
        .into_iter()
        .map(|(name, total)| {
            let own = selfs.get(&name).copied().unwrap_or(0.0);
            (name, (own, total))
        })
        .collect()
}

/// `flint top --format tsv`'s shares of `data` (of the processes named `comm` only,
/// when given, in percent of the whole file as it prints them), from its raw values,
/// and its stderr.
fn flint_top(data: &Path, comm: Option<&str>) -> (Shares, String) {
    let tag = comm.map(|c| format!("comm={c}"));
    let mut args = vec!["top", "--format", "tsv", data.to_str().expect("utf-8 path")];
    if let Some(tag) = &tag {
        args.extend(["--tag", tag]);
    }
    let out = flint(&args);
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(out.status.success(), "flint top: {stderr}");
    let stdout = String::from_utf8(out.stdout).expect("utf-8");
    let rows: Vec<Vec<&str>> = stdout
        .lines()
        .skip(1)
        .map(|l| l.split('\t').collect())
        .collect();
    let number = |row: &[&str], i: usize| row.get(i).and_then(|v| v.parse::<f64>().ok());
    let total: f64 = rows.iter().filter_map(|r| number(r, 0)).sum();
    assert!(total > 0.0, "{stdout}");
    // The file's share: from the raw values (flat, cum), or as printed (flat%, cum%).
    let (flat, cum, scale) = match comm {
        None => (0, 2, 100.0 / total),
        Some(_) => (1, 3, 1.0),
    };
    let shares = rows
        .iter()
        .filter_map(|r| {
            let share = (number(r, flat)? * scale, number(r, cum)? * scale);
            Some((r.get(4)?.to_string(), share))
        })
        .collect();
    (shares, stderr)
}

/// The test program's functions, and those inlined into them (`(callee, host)`),
/// whose self perf counts as the host's.
struct Program<'a> {
    functions: &'a [&'a str],
    inlined: &'a [(&'a str, &'a str)],
    /// Its command name, when other processes are in the recording.
    comm: Option<&'a str>,
}

/// Asserts that flint's and perf's total (and self, with `selfs`) of each of the
/// program's functions agree within [`TOLERANCE`].
fn assert_agree(data: &Path, program: &Program<'_>, selfs: bool) {
    let Program {
        functions,
        inlined,
        comm,
    } = *program;
    let perf = perf_report(data, comm);
    let (flint, stderr) = flint_top(data, comm);
    let table = format!("flint: {flint:?}\nperf: {perf:?}\nflint's stderr: {stderr}");
    for name in functions {
        let (perf_self, perf_total) = *perf.get(*name).unwrap_or_else(|| panic!("{name}: {table}"));
        let (mut flint_self, flint_total) = *flint
            .get(*name)
            .unwrap_or_else(|| panic!("{name}: {table}"));
        for (callee, host) in inlined {
            // perf's --children lists inlined frames, its self never.
            if host == name && perf.get(*callee).is_none_or(|s| s.0 == 0.0) {
                flint_self += flint.get(*callee).map_or(0.0, |s| s.0);
            }
        }
        println!(
            "{name}: self flint {flint_self:.2} perf {perf_self:.2}, total flint {flint_total:.2} perf {perf_total:.2}"
        );
        assert!(
            (flint_total - perf_total).abs() <= TOLERANCE,
            "{name} total: {table}"
        );
        if selfs {
            assert!(
                (flint_self - perf_self).abs() <= TOLERANCE,
                "{name} self: {table}"
            );
        }
    }
}

const C: Program<'static> = Program {
    functions: &["leaf_work", "other_work", "main"],
    inlined: &[("hash_step", "leaf_work")],
    comm: None,
};

/// A scratch folder `tag` holding `perf record OPTIONS` of the C program (the Rust
/// one with `rust`) run for `rounds`, and the recording; `None` after a `SKIP:` line.
fn recording(tag: &str, rust: bool, options: &[&str], rounds: &str) -> Option<(Scratch, PathBuf)> {
    let dir = Scratch::new(tag);
    let (c, r) = programs_or_skip(&dir)?;
    let program = if rust { r } else { c };
    let program = program.to_str().expect("utf-8 path");
    let data = record(&dir, "recorded.data", options, &[program, rounds]);
    Some((dir, data))
}

const FREQUENCY: [&str; 4] = ["-q", "-g", "-F", "999"];

#[test]
fn a_frame_pointer_recording_of_a_c_program_agrees_with_perf_report() {
    let Some((dir, data)) = recording("perf-data-c", false, &FREQUENCY, "300000") else {
        return;
    };
    assert_agree(&data, &C, true);
    // A fixed period (-c): samples carry no period of their own.
    let c = dir.join("c-fp");
    let fixed = ["-q", "-g", "-e", "cpu-clock", "-c", "500000"];
    let data = record(
        &dir,
        "fixed.data",
        &fixed,
        &[c.to_str().expect("utf-8"), "300000"],
    );
    assert_agree(&data, &C, true);
}

#[test]
fn a_recording_of_all_cpus_agrees_with_perf_report_on_the_programs_functions() {
    let dir = Scratch::new("perf-data-all");
    if programs_or_skip(&dir).is_none() {
        return;
    }
    // Under a name of its own: other tests run the same program meanwhile.
    let comm = format!("c-all-{}", std::process::id());
    let program = dir.join(&comm);
    std::fs::copy(dir.join("c-fp"), &program).expect("copied");
    let all = ["-q", "-a", "-g", "-F", "999"];
    let program = program.to_str().expect("utf-8 path");
    let data = record(&dir, "all.data", &all, &[program, "300000"]);
    let c = Program {
        comm: Some(&comm),
        ..C
    };
    assert_agree(&data, &c, true);
}

#[test]
fn a_frame_pointer_recording_of_a_rust_program_agrees_with_perf_report() {
    let Some((_dir, data)) = recording("perf-data-rust", true, &FREQUENCY, "300000") else {
        return;
    };
    // Everything in rust_leaf is inlined into it: totals only.
    let rust = Program {
        functions: &["prog::rust_leaf", "prog::rust_outer", "prog::main"],
        inlined: &[],
        comm: None,
    };
    assert_agree(&data, &rust, false);
}

#[test]
fn cut_or_garbled_perf_data_is_one_error_line_or_a_warning() {
    let Some((dir, data)) = recording("perf-data-bad", false, &FREQUENCY, "100000") else {
        return;
    };
    let data = std::fs::read(data).expect("recorded");
    let bad = dir.join("bad.data");
    let bad_s = bad.to_str().expect("utf-8 path");
    let mut cuts: Vec<usize> = vec![8, 60, 104, 300, 2000];
    cuts.extend((1..10).map(|i| data.len() * i / 10));
    cuts.push(data.len() - 1);
    let mut garbage = b"PERFILE2".to_vec();
    garbage.extend((0..4000u32).map(|i| (i.wrapping_mul(2_654_435_761) >> 13) as u8));
    let mut garbled_data = data.clone();
    for (i, b) in garbled_data.iter_mut().enumerate().skip(400).step_by(7) {
        *b = (i as u8).wrapping_mul(31);
    }
    // Huge lengths (a callchain's, a string's) written over the records.
    let huge = (0..24u64).map(|k| {
        let mut bytes = data.clone();
        let at = 300 + (k.wrapping_mul(2_654_435_761) as usize) % (data.len() / 2);
        let value = u64::MAX - k.wrapping_mul(40_503);
        bytes[at..at + 8].copy_from_slice(&value.to_le_bytes());
        (format!("a huge length at byte {at}"), bytes)
    });
    let overflowing = overflowing_callchain(&data);
    let files = cuts
        .iter()
        .map(|&n| (format!("cut at {n}"), data[..n].to_vec()))
        .chain([
            ("garbage after the magic".to_string(), garbage),
            ("garbled records".to_string(), garbled_data),
        ])
        .chain(huge)
        .chain([("a callchain length that overflows".to_string(), overflowing)]);
    for (what, bytes) in files {
        std::fs::write(&bad, &bytes).expect("written");
        let out = flint(&["top", "--format", "tsv", bad_s]);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(!stderr.contains("panicked"), "{what}: {stderr}");
        if out.status.success() {
            assert!(
                stderr.lines().all(|l| l.starts_with("warning: ")),
                "{what}: {stderr}"
            );
        } else {
            let lines: Vec<&str> = stderr.lines().collect();
            assert_eq!(lines.len(), 1, "{what}: {stderr}");
            assert!(lines[0].starts_with("error: "), "{what}: {stderr}");
        }
        println!("{what}: exit {:?}, {}", out.status.code(), stderr.trim());
    }
}

#[test]
fn a_recording_is_a_series_of_time_slices_that_add_up_to_its_total() {
    let Some((_dir, data)) = recording("perf-data-series", false, &FREQUENCY, "1500000") else {
        return;
    };
    let data = data.to_str().expect("utf-8 path");
    let total = super::top_total(&[data]);
    let (points, series) = super::series_points(data);
    // 100 ms slices of a recording of about 2 s.
    assert!(points.len() >= 5, "{series}");
    assert_eq!(points.iter().map(|p| p.1).sum::<i64>(), total, "{series}");
    let times: Vec<&String> = points.iter().map(|p| &p.0).collect();
    assert!(times.windows(2).all(|w| w[0] < w[1]), "{series}");
    // A range of slices: the samples of those slices, each file read once.
    let (from, to) = (&points[1].0, &points[points.len() - 2].0);
    let in_range: i64 = points[1..points.len() - 2].iter().map(|p| p.1).sum();
    let ranged_total = super::top_total(&["--from", from, "--to", to, data]);
    assert_eq!(ranged_total, in_range, "{from}..{to}");
    println!("{} slices summing to {total} ns", points.len());
}

#[test]
fn a_dwarf_recording_of_a_program_without_frame_pointers_agrees_with_perf_report() {
    let dir = Scratch::new("perf-data-dwarf");
    if programs_or_skip(&dir).is_none() {
        return;
    }
    // build.sh's program: -O1, so without frame pointers.
    let (c, _) = build_programs(&dir).expect("built");
    let c = c.full.to_str().expect("utf-8 path");
    let dwarf = ["-q", "--call-graph", "dwarf", "-F", "999"];
    let data = record(&dir, "dwarf.data", &dwarf, &[c, "300000"]);
    let c = Program {
        functions: &["leaf_work", "other_work", "outer_loop", "main"],
        ..C
    };
    assert_agree(&data, &c, true);
}

/// `data` (a `-g` recording: sample_type IP|TID|TIME|CALLCHAIN|PERIOD) with its first
/// sample's callchain length set to 2^61 + 1, whose size in bytes wraps around to 8.
fn overflowing_callchain(data: &[u8]) -> Vec<u8> {
    let u64_at = |at: usize| u64::from_le_bytes(data[at..at + 8].try_into().unwrap());
    let (start, size) = (u64_at(40) as usize, u64_at(48) as usize);
    let mut at = start;
    while at + 8 <= start + size {
        let kind = u32::from_le_bytes(data[at..at + 4].try_into().unwrap());
        let len = u16::from_le_bytes(data[at + 6..at + 8].try_into().unwrap()) as usize;
        if kind == 9 {
            // header, ip, pid/tid, time, period: then the callchain's length.
            let mut bytes = data.to_vec();
            bytes[at + 40..at + 48].copy_from_slice(&((1u64 << 61) + 1).to_le_bytes());
            return bytes;
        }
        at += len.max(8);
    }
    panic!("no sample record")
}

#[test]
fn a_recording_of_the_erlang_vm_names_its_jit_code_from_its_perf_map_as_perf_report() {
    let dir = Scratch::new("perf-data-erlang");
    if programs_or_skip(&dir).is_none() {
        return;
    }
    if !super::compile_burn_erl(&dir) {
        return;
    }
    let maps_before = perf_maps();
    let ebin = dir.to_str().expect("utf-8 path");
    let erl = ["erl", "+JPperf", "true", "-noshell", "-pa", ebin];
    let command: Vec<&str> = erl
        .into_iter()
        .chain(["-s", "burn", "start_for", "2000"])
        .collect();
    let data = record(&dir, "beam.data", &FREQUENCY, &command);
    let erlang = Program {
        functions: &["$burn:timed/1"],
        inlined: &[],
        comm: None,
    };
    assert_agree(&data, &erlang, true);
    for map in perf_maps().difference(&maps_before) {
        let _ = std::fs::remove_file(map);
        let dump = map
            .to_string_lossy()
            .replace("/perf-", "/jit-")
            .replace(".map", ".dump");
        let _ = std::fs::remove_file(dump);
    }
}

/// The perf maps in /tmp.
fn perf_maps() -> std::collections::HashSet<PathBuf> {
    std::fs::read_dir("/tmp")
        .into_iter()
        .flatten()
        .flatten()
        .map(|e| e.path())
        .filter(|p| {
            p.file_name()
                .and_then(|n| n.to_str())
                .is_some_and(|n| n.starts_with("perf-") && n.ends_with(".map"))
        })
        .collect()
}
