//! `flint symbolize`, and `flint top`/`fold` naming an addresses-only profile of a
//! real stripped program from a binary among the inputs or `--symbols DIR`.

use flint_fixture_gen::symbol_parts::{
    addr2line_functions, addresses_only_profile, function_symbol, programs_or_skip,
};

use super::{Scratch, flint, flint_ok};

#[test]
fn a_stripped_programs_profile_is_named_from_the_binary_given() {
    let dir = Scratch::new("cli-symbolize");
    let Some((c, _)) = programs_or_skip(&dir) else {
        return;
    };
    // 70 samples in leaf_work (called by outer_loop, by main), 30 in outer_loop.
    let at = |name: &str, frac: u64| {
        let (start, size) = function_symbol(&c.full, name).unwrap();
        start + size * frac / 8
    };
    let (leaf, outer, main) = (at("leaf_work", 4), at("outer_loop", 5), at("main", 4));
    let stacks = [(vec![leaf, outer, main], 70), (vec![outer + 1, main], 30)];
    let profile = addresses_only_profile(&c, "/opt/app/c", true, &stacks).unwrap();
    let input = dir.join("cpu.pb.gz");
    std::fs::write(&input, profile_model::codec::encode_gzip(&profile)).unwrap();
    // addr2line on the unstripped program: the leaf is in an inlined frame of leaf_work.
    let leaf_frames = addr2line_functions(&c.full, leaf).unwrap();
    assert_eq!(leaf_frames.last().map(String::as_str), Some("leaf_work"));

    let out = dir.join("named.pb.gz");
    let (full, input_s, out_s) = (
        c.full.to_str().unwrap(),
        input.to_str().unwrap(),
        out.to_str().unwrap(),
    );
    let summary = flint_ok(&["symbolize", full, input_s, "-o", out_s]);
    assert_eq!(summary.trim(), "named 4 of 4 locations (4 binary)");
    let top = flint_ok(&["top", out_s, "--format", "tsv"]);
    let row = |name: &str| {
        top.lines()
            .find(|l| l.ends_with(&format!("\t{name}")))
            .map(|l| l.split('\t').take(4).collect::<Vec<_>>().join(" "))
    };
    assert_eq!(
        row(&leaf_frames[0]).as_deref(),
        Some("70 70.00 70 70.00"),
        "{top}"
    );
    assert_eq!(
        row("leaf_work").as_deref(),
        Some("0 0.00 70 70.00"),
        "{top}"
    );
    assert_eq!(
        row("outer_loop").as_deref(),
        Some("30 30.00 100 100.00"),
        "{top}"
    );

    // flint top with the binary among the inputs, pprof's convention; off with --no-symbolize.
    let top = flint_ok(&["top", full, input_s, "--format", "tsv"]);
    assert!(
        top.contains("\tleaf_work\n") && top.contains("\touter_loop\n"),
        "{top}"
    );
    let raw = flint_ok(&["top", "--no-symbolize", full, input_s, "--format", "tsv"]);
    assert!(!raw.contains("leaf_work"), "{raw}");

    // fold with --symbols DIR (the binary under its own name there).
    let symbols = dir.join("symbols");
    std::fs::create_dir_all(&symbols).unwrap();
    std::fs::copy(&c.full, symbols.join("c")).unwrap();
    let folded = flint_ok(&["fold", "--symbols", symbols.to_str().unwrap(), input_s]);
    assert!(folded.contains("main;outer_loop;leaf_work"), "{folded}");

    // A corrupt binary among the inputs costs names, not the profile.
    let corrupt = dir.join("corrupt");
    std::fs::write(&corrupt, b"\x7fELF\x02\x01\x01junk").unwrap();
    let output = flint(&["top", corrupt.to_str().unwrap(), input_s]);
    assert!(output.status.success());
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains("warning: symbols:") && stderr.contains("corrupt"),
        "{stderr}"
    );
}

#[test]
fn serve_with_debuginfod_answers_names_for_a_profile_pushed_with_addresses_only() {
    use flint_fixture_gen::symbol_parts::Debuginfod;
    let dir = Scratch::new("serve-symbolize");
    let Some((c, _)) = programs_or_skip(&dir.join("build")) else {
        return;
    };
    let served = dir.join("served");
    std::fs::create_dir_all(&served).unwrap();
    std::fs::copy(&c.debug, served.join("c.debug")).unwrap();
    let debuginfod = match Debuginfod::start(&served, &dir, &[&c.build_id]) {
        Ok(server) => server,
        Err(e) => {
            println!("SKIP: {e}");
            return;
        }
    };
    let (start, size) = function_symbol(&c.full, "other_work").unwrap();
    let (outer, _) = function_symbol(&c.full, "outer_loop").unwrap();
    let stacks = [(vec![start + size / 2, outer + 8], 40)];
    let mut profile = addresses_only_profile(&c, "/opt/app/c", true, &stacks).unwrap();
    // A minute ago: in the last hour, which a query of a server shows by default.
    let now = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH);
    profile.time_nanos = now.unwrap().as_nanos() as i64 - 60_000_000_000;
    profile.duration_nanos = 10_000_000_000;
    let input = dir.join("agent.pb.gz");
    std::fs::write(&input, profile_model::codec::encode_gzip(&profile)).unwrap();

    let top_of = |symbolizing: bool| -> String {
        let store = dir.join(format!("store-{symbolizing}"));
        let mut cmd = std::process::Command::new(env!("CARGO_BIN_EXE_flint"));
        cmd.args(["serve", "--store", store.to_str().unwrap()])
            .env("DEBUGINFOD_CACHE_PATH", dir.join("cache"))
            .env_remove("DEBUGINFOD_URLS");
        if symbolizing {
            cmd.args(["--debuginfod", &debuginfod.url]);
        }
        let server = super::serve::Server::spawn(&mut cmd);
        flint_ok(&["push", input.to_str().unwrap(), "--to", &server.url]);
        flint_ok(&["top", &server.url, "--format", "tsv"])
    };
    let named = top_of(true);
    assert!(
        named.contains("40\t100.00\t40\t100.00\tother_work\n") && named.contains("\touter_loop\n"),
        "{named}"
    );
    let raw = top_of(false);
    assert!(
        raw.contains("\t[c]\n") && !raw.contains("other_work"),
        "{raw}"
    );
}
