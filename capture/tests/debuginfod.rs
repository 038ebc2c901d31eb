//! The debuginfod client against Debian's `debuginfod` server over the test programs'
//! debug files (cold, then warm from the cache with the server gone), and against
//! servers that are down, slow, answer 404 or garbage: each costs only names.

#![allow(
    clippy::expect_used,
    clippy::unwrap_used,
    reason = "a test fails loudly on a broken fixture"
)]

use std::io::{Read as _, Write as _};
use std::net::TcpListener;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use capture::symbolize::debuginfod::DebuginfodOptions;
use capture::symbolize::{Source, SymbolSources, symbolize};
use flint_fixture_gen::Scratch;
use flint_fixture_gen::symbol_parts::{
    Debuginfod, Program, addr2line_functions, addresses_only_profile, first_stack_names,
    function_symbol, programs_or_skip, without_hash,
};
use profile_model::Profile;

fn options(url: String, cache: &std::path::Path, timeout: Duration) -> SymbolSources {
    SymbolSources {
        debug_dirs: Vec::new(),
        debuginfod: Some(DebuginfodOptions {
            urls: vec![url],
            cache_dir: cache.to_path_buf(),
            timeout,
            failure_ttl: Duration::from_secs(600),
        }),
        ..SymbolSources::default()
    }
}

/// A profile of `program` at a mapping path that is on no machine: one stack of
/// leaf_work (or rust_leaf) and its caller, with what addr2line names there.
fn profile(program: &Program, leaf: &str, caller: &str) -> (Profile, Vec<Vec<String>>) {
    let (ls, lsize) = function_symbol(&program.full, leaf).unwrap();
    let (cs, csize) = function_symbol(&program.full, caller).unwrap();
    let (l, c) = (ls + lsize / 2, cs + csize / 2);
    let truth = [l, c - 1]
        .iter()
        .map(|&a| {
            let names = addr2line_functions(&program.full, a).unwrap();
            names.iter().map(|n| without_hash(n)).collect()
        })
        .collect();
    let p = addresses_only_profile(program, "/opt/app/prog", true, &[(vec![l, c], 5)]).unwrap();
    (p, truth)
}

fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

#[test]
fn debuginfod_names_a_stripped_program_cold_then_from_its_cache() {
    let dir = Scratch::new("debuginfod-real");
    let Some((c, rust)) = programs_or_skip(&dir.join("build")) else {
        return;
    };
    let served = dir.join("served");
    std::fs::create_dir_all(&served).unwrap();
    std::fs::copy(&c.debug, served.join("c.debug")).unwrap();
    std::fs::copy(&rust.debug, served.join("rust.debug")).unwrap();
    let server = match Debuginfod::start(&served, &dir, &[&c.build_id, &rust.build_id]) {
        Ok(server) => server,
        Err(e) => {
            println!("SKIP: {e}");
            return;
        }
    };
    let url = server.url.clone();
    let cache = dir.join("cache");
    for (program, leaf, caller) in [
        (&c, "leaf_work", "outer_loop"),
        (&rust, "rust_leaf", "rust_outer"),
    ] {
        let (mut p, truth) = profile(program, leaf, caller);
        let truth: Vec<Vec<String>> = truth
            .into_iter()
            .map(|l| {
                l.into_iter()
                    .map(|n| {
                        n.rsplit_once("::h")
                            .filter(|(_, h)| h.len() == 16)
                            .map_or(n.clone(), |(head, _)| head.to_string())
                    })
                    .collect()
            })
            .collect();
        let report = symbolize(
            &mut p,
            &options(url.clone(), &cache, Duration::from_secs(10)),
        );
        assert_eq!(first_stack_names(&p), truth, "{}", report.summary());
        assert_eq!(report.named.get(&Source::Debuginfod), Some(&2));
        assert!(cache.join(&program.build_id).join("debuginfo").is_file());
    }
    drop(server);
    // Warm: the server is gone, the cache answers.
    let (mut p, truth) = profile(&c, "leaf_work", "outer_loop");
    let report = symbolize(&mut p, &options(url, &cache, Duration::from_secs(10)));
    assert_eq!(first_stack_names(&p), truth, "{}", report.summary());
    assert!(report.warnings.is_empty(), "{:?}", report.warnings);
}

/// A server on 127.0.0.1 that answers every request with `answer` after `delay`,
/// counting the requests.
fn fake_server(answer: &'static [u8], delay: Duration) -> (String, Arc<AtomicUsize>) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    let count = Arc::new(AtomicUsize::new(0));
    let counted = count.clone();
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(mut stream) = stream else { continue };
            counted.fetch_add(1, Ordering::SeqCst);
            std::thread::spawn(move || {
                let mut buf = [0u8; 4096];
                let _ = stream.read(&mut buf);
                std::thread::sleep(delay);
                let _ = stream.write_all(answer);
            });
        }
    });
    (url, count)
}

#[test]
fn a_debuginfod_server_down_slow_404_or_garbage_costs_only_names() {
    let dir = Scratch::new("debuginfod-bad");
    let Some((c, _)) = programs_or_skip(&dir.join("build")) else {
        return;
    };
    let cache = dir.join("cache");
    let down = format!("http://127.0.0.1:{}", free_port());
    let (slow, _) = fake_server(
        b"HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n",
        Duration::from_secs(30),
    );
    let (garbage, _) = fake_server(
        b"HTTP/1.1 200 OK\r\nContent-Length: 7\r\n\r\ngarbage",
        Duration::ZERO,
    );
    let (missing, asked) = fake_server(
        b"HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\n\r\n",
        Duration::ZERO,
    );
    for (url, what) in [
        (down, "down"),
        (slow, "slow"),
        (garbage, "garbage"),
        (missing.clone(), "404"),
    ] {
        let (mut p, _) = profile(&c, "leaf_work", "outer_loop");
        let started = Instant::now();
        let report = symbolize(
            &mut p,
            &options(url, &cache.join(what), Duration::from_secs(1)),
        );
        assert!(
            started.elapsed() < Duration::from_secs(5),
            "{what}: took {:?}",
            started.elapsed()
        );
        assert_eq!(report.named_total(), 0, "{what}");
        assert_eq!(report.no_symbols.get("prog"), Some(&2), "{what}");
        assert!(p.locations.iter().all(|l| l.lines.is_empty()), "{what}");
        if what != "404" {
            assert!(
                report.warnings.iter().any(|w| w.contains("debuginfod")),
                "{what}: {:?}",
                report.warnings
            );
        }
    }
    // The 404 is remembered: asked once for each kind, not again.
    assert_eq!(asked.load(Ordering::SeqCst), 2);
    assert_eq!(
        std::fs::metadata(cache.join("404").join(&c.build_id).join("debuginfo"))
            .unwrap()
            .len(),
        0
    );
    let (mut p, _) = profile(&c, "leaf_work", "outer_loop");
    symbolize(
        &mut p,
        &options(missing, &cache.join("404"), Duration::from_secs(1)),
    );
    assert_eq!(
        asked.load(Ordering::SeqCst),
        2,
        "a recent miss is not asked again"
    );
}

#[test]
fn debuginfod_serves_a_programs_source_cached_as_elfutils_caches_it() {
    use capture::symbolize::debuginfod::{fetch_source, source_cache_file};
    use capture::symbolize::source_file::{SourceConfig, find_source_file};
    let dir = Scratch::new("debuginfod-source");
    let Some((c, _)) = programs_or_skip(&dir.join("build")) else {
        return;
    };
    let served = dir.join("served");
    std::fs::create_dir_all(&served).unwrap();
    std::fs::copy(&c.debug, served.join("c.debug")).unwrap();
    let server = match Debuginfod::start(&served, &dir, &[&c.build_id]) {
        Ok(server) => server,
        Err(e) => {
            println!("SKIP: {e}");
            return;
        }
    };
    // The path the program's DWARF names (build.sh compiles it where it is).
    let source = std::fs::canonicalize(
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/fixtures/symbols/prog.c"),
    )
    .unwrap();
    let source = source.to_str().unwrap().to_string();
    let cache = dir.join("cache");
    let url = server.url.clone();
    let SymbolSources {
        debuginfod: Some(options),
        ..
    } = options(url.clone(), &cache, Duration::from_secs(10))
    else {
        unreachable!("options name a server");
    };
    let file = fetch_source(&options, &c.build_id, &source).unwrap();
    let expected = source_cache_file(&cache, &c.build_id, &source);
    assert_eq!(file, expected);
    let name = expected.file_name().unwrap().to_str().unwrap().to_string();
    // As `debuginfod-find source` (elfutils 0.188) names it.
    assert_eq!(name, format!("source{}", source.replace('/', "##")));
    assert_eq!(
        source_cache_file(&cache, "ab", "/src/a#b.c"),
        cache.join("ab").join("source##src##a#_b.c")
    );
    assert_eq!(
        std::fs::read(&file).unwrap(),
        std::fs::read(&source).unwrap()
    );
    // A path the DWARF does not name: the URL asked, and its answer.
    let said = fetch_source(&options, &c.build_id, "/nowhere/x.c").unwrap_err();
    let asked = format!("{url}/buildid/{}/source/nowhere/x.c", c.build_id);
    assert!(said.iter().any(|s| s.starts_with(&asked)), "{said:?}");
    drop(server);
    // Warm: from the cache, the server gone.
    assert_eq!(fetch_source(&options, &c.build_id, &source), Ok(expected));
    // The window's finder: where it looked, then the URL it asked.
    let config = SourceConfig {
        debuginfod: Some(options),
        ..SourceConfig::default()
    };
    let moved = format!("/opt/elsewhere{source}");
    let tried = find_source_file(&config, &moved, &c.build_id).unwrap_err();
    assert!(
        tried[0].starts_with(&format!("{moved}: no such file")),
        "{tried:?}"
    );
    let asked = format!("{url}/buildid/{}/source{moved}", c.build_id);
    assert!(tried.iter().any(|t| t.starts_with(&asked)), "{tried:?}");
    let found = find_source_file(&config, &source, &c.build_id).unwrap();
    assert_eq!(found.at, source, "on this machine first");
}
