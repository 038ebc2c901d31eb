//! Bad input gets one `error: …` line on stderr and a non-zero exit, never a panic.

use std::io::Write as _;

use super::flint;

/// Asserts a single-line error containing `needle`.
fn assert_error(args: &[&str], needle: &str) {
    let out = flint(args);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "flint {args:?} should fail");
    assert!(
        out.stdout.is_empty(),
        "no output on failure: {:?}",
        String::from_utf8_lossy(&out.stdout)
    );
    assert_eq!(stderr.lines().count(), 1, "one line: {stderr:?}");
    assert!(stderr.starts_with("error: "), "{stderr:?}");
    assert!(
        stderr.contains(needle),
        "{stderr:?} should mention {needle:?}"
    );
    assert!(!stderr.contains("panicked"), "{stderr}");
}

/// A file of these tests, under cargo's own temporary folder (rewritten by each run,
/// never one folder per run).
fn temp_file(name: &str, bytes: &[u8]) -> String {
    let dir = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join("cli-errors");
    std::fs::create_dir_all(&dir).expect("temp dir");
    let path = dir.join(name);
    std::fs::write(&path, bytes).expect("write temp file");
    path.display().to_string()
}

fn gzip(bytes: &[u8]) -> Vec<u8> {
    let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    e.write_all(bytes).expect("gzip");
    e.finish().expect("gzip")
}

#[test]
fn broken_files() {
    let empty = temp_file("empty.pb.gz", b"");
    assert_error(&["top", &empty], "the file is empty");
    let random: Vec<u8> = (0u32..5000)
        .map(|i| (i.wrapping_mul(2_654_435_761) >> 7) as u8 | 0x07)
        .collect();
    let random = temp_file("random.bin", &random);
    assert_error(&["top", &random], "not a pprof profile");
    let cpu = std::fs::read(super::fixtures().join("cpu.pb.gz")).expect("fixture");
    let truncated = temp_file("truncated.pb.gz", &cpu[..cpu.len() / 3]);
    assert_error(&["top", &truncated], "truncated gzip");
    let text = temp_file("text.gz", &gzip(b"just some text\n"));
    assert_error(&["fold", &text], "not a pprof profile");
    assert_error(&["top", "does-not-exist.pb.gz"], "does-not-exist.pb.gz");
    assert_error(
        &["top", "ftp://example.com/cpu.pb.gz"],
        "ftp:// names no server flint reads (grpc://HOST:PORT or https://HOST)",
    );
}

#[test]
fn gzip_bomb_is_refused_before_it_is_allocated() {
    let bomb = temp_file("bomb.pb.gz", &gzip(&vec![0u8; 200 << 20]));
    assert_error(
        &["top", &bomb, "--max-decompressed", "16MiB"],
        "exceeds the limit of 16.0 MiB",
    );
}

#[test]
fn a_file_larger_than_the_cap_is_refused_before_it_is_read() {
    // 64 GiB that take no room on disk: read whole, they would not fit in memory.
    let huge = temp_file("huge.pb.gz", b"");
    std::fs::OpenOptions::new()
        .write(true)
        .open(&huge)
        .and_then(|f| f.set_len(64 << 30))
        .expect("sparse file");
    for command in ["top", "fold", "series"] {
        assert_error(
            &[command, &huge],
            "the file's size, 64.0 GiB, exceeds the limit of 2.00 GiB",
        );
    }
}

#[test]
fn bad_flags_and_values() {
    assert_error(&["top", "cpu.pb.gz", "--bogus"], "--bogus");
    assert_error(
        &["top", "cpu.pb.gz", "--sample-type", "wall"],
        "no sample type \"wall\"",
    );
    assert_error(
        &["top", "cpu.pb.gz", "--focus", "("],
        "invalid --focus regex",
    );
    assert_error(&["top", "cpu.pb.gz", "--tag", "endpoint"], "KEY=VALUE");
    assert_error(
        &["top", "cpu.pb.gz", "--tag", "endpoint=("],
        "invalid regex: unclosed group",
    );
    assert_error(
        &["series", "cpu.pb.gz", "--sum-by", "end point"],
        "--sum-by \"end point\" is not a label name",
    );
    assert_error(
        &["series", "cpu.pb.gz", "--sum-by", ""],
        "is not a label name",
    );
    let store = std::env::temp_dir().join(format!("flint-e2e-zero-{}", std::process::id()));
    let store = store.to_str().expect("utf-8 path");
    assert_error(
        &["serve", "--store", store, "--retention", "0s"],
        "--retention 0s: must be longer than zero",
    );
    assert_error(
        &["serve", "--store", store, "--max-size", "0"],
        "--max-size 0: must be more than zero",
    );
    assert!(!std::path::Path::new(store).exists(), "no store made");
    assert_error(
        &["series", "cpu.pb.gz", "--sum-by", "*", "--sum-by", "pid"],
        "it takes no other label",
    );
    assert_error(
        &[
            "series",
            "cpu.pb.gz",
            "--query",
            r#"process_cpu:cpu:nanoseconds:cpu:nanoseconds:delta{endpoint=~"("}"#,
        ],
        "invalid regex in endpoint=~\"(\": unclosed group",
    );
    assert_error(&["top", "cpu.pb.gz", "--format", "xml"], "xml");
    assert_error(&["top", "cpu.pb.gz", "--max-decompressed", "lots"], "lots");
    assert_error(
        &["top", "cpu.pb.gz", "heap.pb.gz"],
        "different sample types",
    );
    // A range or selection of files that holds nothing, or is backwards.
    for command in ["top", "series"] {
        assert_error(
            &[command, "cpu.pb.gz", "--from", "now-1h"],
            "no profiles in this range, from ",
        );
        // What the files hold is named, so that a range typed for the wrong day shows.
        assert_error(
            &[command, "cpu.pb.gz", "--to", "2020-01-01T00:00:00Z"],
            "up to 2020-01-01T00:00:00Z (the profiles span 2026-11-30T12:39:08",
        );
        assert_error(
            &[command, "cpu.pb.gz", "--from", "now", "--to", "now-1h"],
            "--from is not before --to",
        );
    }
    for command in ["top", "fold"] {
        assert_error(
            &[
                command,
                "--diff-base",
                "cpu-1.pb.gz",
                "cpu-3.pb.gz",
                "--from",
                "now-1h",
            ],
            "--diff-base takes files whole; it cannot be used with --query, --from or --to",
        );
    }
}

#[test]
fn no_display_names_the_headless_subcommands() {
    assert_error(&["cpu.pb.gz"], "flint top");
}

#[test]
fn a_directory_without_profiles() {
    let dir = std::env::temp_dir().join(format!("flint-e2e-empty-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let name = dir.to_str().expect("utf-8");
    assert_error(&["top", name], &format!("no profiles found in {name}"));
    std::fs::write(dir.join("notes.txt"), b"hello").expect("write");
    for command in ["top", "fold", "series"] {
        assert_error(&[command, name], "its one file is not a pprof profile");
    }
    std::fs::write(dir.join("more.txt"), b"hello").expect("write");
    assert_error(
        &["series", name],
        "neither of its 2 files is a pprof profile",
    );
    // Beside a folder with a profile, the folder without one is named, with a
    // file of its own.
    let good = std::env::temp_dir().join(format!("flint-e2e-good-{}", std::process::id()));
    std::fs::create_dir_all(&good).expect("temp dir");
    std::fs::copy(super::fixtures().join("cpu-1.pb.gz"), good.join("a.pb.gz")).expect("copy");
    std::fs::write(good.join("b.pb.gz"), b"broken").expect("write");
    let good_name = good.to_str().expect("utf-8");
    for command in ["top", "fold", "series"] {
        let out = flint(&[command, good_name, name]);
        assert!(!out.status.success(), "{command}");
        let stderr = String::from_utf8_lossy(&out.stderr);
        let error = stderr.lines().last().unwrap_or_default();
        assert!(
            error.starts_with(&format!("error: {name}: neither of its 2 files is")),
            "{command}: {error}"
        );
        assert!(error.contains("more.txt"), "{command}: {error}");
    }
    let _ = std::fs::remove_dir_all(&good);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_broken_file_named_beside_others_is_an_error_in_every_command() {
    let broken =
        std::env::temp_dir().join(format!("flint-e2e-broken-{}.pb.gz", std::process::id()));
    std::fs::write(&broken, b"broken").expect("write");
    let name = broken.to_str().expect("utf-8");
    for command in ["top", "fold", "series"] {
        assert_error(
            &[command, "cpu-1.pb.gz", name],
            &format!("{name}: not a pprof profile"),
        );
    }
    let _ = std::fs::remove_file(&broken);
}

#[test]
fn a_directory_mixing_sample_types_names_the_odd_file() {
    let dir = std::env::temp_dir().join(format!("flint-e2e-mixed-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let fixtures = super::fixtures();
    for (from, to) in [
        ("cpu-1.pb.gz", "a.pb.gz"),
        ("heap.pb.gz", "b.pb.gz"),
        ("cpu-2.pb.gz", "c.pb.gz"),
    ] {
        std::fs::copy(fixtures.join(from), dir.join(to)).expect("copy fixture");
    }
    let dir_arg = dir.to_str().expect("utf-8");
    assert_error(&["top", dir_arg], "b.pb.gz (alloc_objects/count");
    // How to take one type of them, as the window's selector and `--query` do.
    assert_error(
        &["top", dir_arg],
        "(to merge the profiles of one type in a folder: --query, e.g. \
         -q 'process_cpu:cpu:nanoseconds:cpu:nanoseconds:delta')",
    );
    let picked = super::flint_ok(&[
        "top",
        dir_arg,
        "-q",
        "process_cpu:cpu:nanoseconds:cpu:nanoseconds:delta",
    ]);
    assert!(picked.contains("main.fib"), "{picked}");
    // fold (and every merge of files) stops there too: never one answer for one order
    // of the files and another for the next.
    assert_error(&["fold", dir_arg], "b.pb.gz (alloc_objects/count");
    // The first file read sets the types, wherever the odd one is.
    assert_error(
        &[
            "top",
            dir_arg,
            "--diff-base",
            &fixtures.join("heap.pb.gz").display().to_string(),
        ],
        "different sample types",
    );
    let _ = std::fs::remove_dir_all(&dir);
}

/// `flint ARGS` as a user without the right to read a folder: as that user, or (when
/// the tests run as root, who reads everything) as `nobody` through `setpriv`, from a
/// copy of the binary in `dir` that user may run. `None` where neither is possible.
fn flint_unprivileged(dir: &std::path::Path, args: &[&str]) -> Option<std::process::Output> {
    use std::os::unix::fs::PermissionsExt as _;
    let uid = std::process::Command::new("id").arg("-u").output().ok()?;
    if String::from_utf8_lossy(&uid.stdout).trim() != "0" {
        return Some(flint(args));
    }
    let binary = dir.join("flint");
    if !binary.exists() {
        std::fs::copy(env!("CARGO_BIN_EXE_flint"), &binary).ok()?;
        std::fs::set_permissions(&binary, std::fs::Permissions::from_mode(0o755)).ok()?;
    }
    // A child of another test's thread, forked while the copy was open for writing,
    // may hold it open for a moment: the copy is then "busy" and is run again.
    for _ in 0..20 {
        let out = std::process::Command::new("setpriv")
            .args(["--reuid=65534", "--regid=65534", "--clear-groups", "--"])
            .arg(&binary)
            .args(args)
            .env_remove("DISPLAY")
            .env_remove("WAYLAND_DISPLAY")
            .output()
            .ok()?;
        if !String::from_utf8_lossy(&out.stderr).contains("Text file busy") {
            return Some(out);
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    None
}

#[test]
fn a_folder_that_cannot_be_read_is_skipped_with_a_warning_and_the_rest_load() {
    use std::os::unix::fs::PermissionsExt as _;
    let dir = std::env::temp_dir().join(format!("flint-e2e-locked-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let fixture = super::fixtures().join("cpu-1.pb.gz");
    for sub in ["profiles/ok", "profiles/locked"] {
        std::fs::create_dir_all(dir.join(sub)).expect("temp dir");
        std::fs::copy(&fixture, dir.join(sub).join("cpu.pb.gz")).expect("copy");
    }
    let mode = |path: &std::path::Path, mode| {
        std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode)).expect("chmod");
    };
    mode(&dir, 0o755);
    let profiles = dir.join("profiles");
    let locked = profiles.join("locked");
    mode(&locked, 0o000);
    let profiles = profiles.to_str().expect("utf-8 path");
    let expected = flint(&["top", fixture.to_str().expect("utf-8 path")]);
    for args in [
        &["top", profiles][..],
        &["fold", profiles],
        &["series", profiles],
    ] {
        let Some(out) = flint_unprivileged(&dir, args) else {
            println!("SKIP: cannot run flint as a user who may not read a folder");
            break;
        };
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(out.status.success(), "flint {args:?}: {stderr}");
        assert_eq!(
            stderr.trim(),
            format!(
                "warning: skipped {}: Permission denied (os error 13)",
                locked.display()
            ),
            "flint {args:?}"
        );
        assert!(!out.stdout.is_empty(), "flint {args:?}");
        if args[0] == "top" {
            assert_eq!(out.stdout, expected.stdout, "the readable folder's profile");
        }
    }
    // The folder named itself cannot be read: an error, nothing else.
    if let Some(out) = flint_unprivileged(&dir, &["top", locked.to_str().expect("utf-8 path")]) {
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(!out.status.success());
        assert_eq!(
            stderr.trim(),
            format!(
                "error: {}: Permission denied (os error 13)",
                locked.display()
            )
        );
    }
    mode(&locked, 0o755);
    let _ = std::fs::remove_dir_all(dir);
}

/// A listener on 127.0.0.1 that accepts every connection and never says anything (a
/// port-forward to a pod that is gone, a listener that is not gRPC); its port.
fn silent_listener() -> u16 {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    std::thread::spawn(move || {
        let mut held = Vec::new();
        for stream in listener.incoming().flatten() {
            held.push(stream);
        }
    });
    port
}

#[test]
fn a_listener_that_never_speaks_grpc_is_named_within_15_seconds() {
    // A peer that accepts the connection and says nothing (a port-forward to a pod that
    // is gone, a listener that is not gRPC): the client had waited until the peer
    // closed, then said "Unknown: transport error".
    let port = silent_listener();
    let started = std::time::Instant::now();
    let out = flint(&["top", &format!("grpc://127.0.0.1:{port}")]);
    let took = started.elapsed();
    assert!(!out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains(&format!(
            "127.0.0.1:{port} accepted the connection but sent no HTTP/2 answer"
        )),
        "{stderr}"
    );
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    assert!(took.as_secs() < 15, "took {took:?}");
}

#[test]
fn the_silence_a_server_gets_is_set_with_timeout() {
    let port = silent_listener();
    let url = format!("grpc://127.0.0.1:{port}");
    let out = flint(&["top", &url, "--timeout", "2s"]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("sent no HTTP/2 answer in 2 s"), "{stderr}");
    assert_error(
        &["top", &url, "--timeout", "0s"],
        "--timeout 0s: must be longer than zero",
    );
}
