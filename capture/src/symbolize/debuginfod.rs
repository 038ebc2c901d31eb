//! A debuginfod client: `/buildid/ID/debuginfo`, else `/buildid/ID/executable`, from
//! each server in turn, for different build ids at once, each request under a timeout;
//! and `/buildid/ID/source/PATH`, a source file ([`fetch_source`]).
//! Files are cached as elfutils' client caches them (`CACHE/ID/debuginfo`,
//! `CACHE/ID/source##usr##src##a.c`); a build id a server does not know, or answers with
//! something not its ELF, is remembered as an empty file for
//! [`DebuginfodOptions::failure_ttl`], so it is not asked again soon.

use std::collections::{BTreeSet, HashMap};
use std::io::{Read as _, Write as _};
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::{Duration, SystemTime};

use crate::symbols::elf;

/// What the server is asked for, in order.
const KINDS: [&str; 2] = ["debuginfo", "executable"];
/// Build ids asked at once.
const CONCURRENCY: usize = 8;

/// Where and how debuginfod servers are asked.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DebuginfodOptions {
    /// Server URLs, e.g. `https://debuginfod.debian.net`.
    pub urls: Vec<String>,
    /// The cache directory (`$DEBUGINFOD_CACHE_PATH`, else `~/.cache/debuginfod_client`).
    pub cache_dir: PathBuf,
    /// Longest a request may take, answer included (`$DEBUGINFOD_TIMEOUT` seconds, else 30).
    pub timeout: Duration,
    /// How long a build id a server did not have is not asked again (10 minutes, as elfutils).
    pub failure_ttl: Duration,
}

impl DebuginfodOptions {
    /// The servers of `$DEBUGINFOD_URLS` (space-separated) and `extra`, with the cache
    /// and timeout the environment says; `None` when there is no server.
    pub fn from_env(extra: &[String]) -> Option<Self> {
        let env = |name: &str| std::env::var(name).ok().filter(|v| !v.is_empty());
        let urls: Vec<String> = env("DEBUGINFOD_URLS")
            .unwrap_or_default()
            .split_whitespace()
            .map(str::to_string)
            .chain(extra.iter().cloned())
            .map(|u| u.trim_end_matches('/').to_string())
            .collect();
        if urls.is_empty() {
            return None;
        }
        let cache_dir = env("DEBUGINFOD_CACHE_PATH")
            .map(PathBuf::from)
            .unwrap_or_else(|| {
                let cache = env("XDG_CACHE_HOME")
                    .map(PathBuf::from)
                    .or_else(|| env("HOME").map(|h| Path::new(&h).join(".cache")))
                    .unwrap_or_else(std::env::temp_dir);
                cache.join("debuginfod_client")
            });
        let timeout = env("DEBUGINFOD_TIMEOUT")
            .and_then(|t| t.parse::<u64>().ok())
            .map_or(Duration::from_secs(30), Duration::from_secs);
        Some(Self {
            urls,
            cache_dir,
            timeout,
            failure_ttl: Duration::from_secs(600),
        })
    }
}

/// The symbol file of each of `build_ids` that a server (or the cache) has; what went
/// wrong goes into `warnings`.
pub(super) fn fetch_all(
    options: &DebuginfodOptions,
    build_ids: &[String],
    warnings: &mut BTreeSet<String>,
) -> HashMap<String, PathBuf> {
    let agent: ureq::Agent = ureq::Agent::config_builder()
        .timeout_global(Some(options.timeout))
        .http_status_as_error(false)
        .build()
        .new_agent();
    let found = Mutex::new(HashMap::new());
    let said = Mutex::new(BTreeSet::new());
    for chunk in build_ids.chunks(CONCURRENCY) {
        std::thread::scope(|s| {
            for id in chunk {
                let (agent, found, said) = (&agent, &found, &said);
                s.spawn(move || {
                    let mut notes = Vec::new();
                    let file = fetch(options, agent, id, &mut notes);
                    said.lock().unwrap_or_else(|e| e.into_inner()).extend(notes);
                    if let Some(file) = file {
                        found
                            .lock()
                            .unwrap_or_else(|e| e.into_inner())
                            .insert(id.clone(), file);
                    }
                });
            }
        });
    }
    warnings.extend(said.into_inner().unwrap_or_else(|e| e.into_inner()));
    found.into_inner().unwrap_or_else(|e| e.into_inner())
}

/// The cached or fetched file of build id `id`: its debuginfo, else its executable.
fn fetch(
    options: &DebuginfodOptions,
    agent: &ureq::Agent,
    id: &str,
    notes: &mut Vec<String>,
) -> Option<PathBuf> {
    if id.len() < 2 || !id.chars().all(|c| c.is_ascii_hexdigit()) {
        return None;
    }
    let dir = options.cache_dir.join(id);
    for kind in KINDS {
        let cached = dir.join(kind);
        match cache_state(&cached, options.failure_ttl) {
            CacheState::Hit => return Some(cached),
            CacheState::RecentMiss => continue,
            CacheState::Absent => {}
        }
        let mut definite_miss = true;
        for url in &options.urls {
            let url_kind = format!("{url}/buildid/{id}/{kind}");
            match download(agent, &url_kind, &dir.join(kind), u64::MAX, |part| {
                is_elf_of(part, id)
            }) {
                Ok(Some(file)) => return Some(file),
                Ok(None) => {}
                Err(e) => {
                    definite_miss &= !e.transient;
                    notes.push(format!("debuginfod {url}: {kind} of {id}: {}", e.message));
                }
            }
        }
        if definite_miss {
            // elfutils' negative hit: an empty file, trusted while it is recent.
            let _ = std::fs::create_dir_all(&dir).and_then(|()| std::fs::write(&cached, b""));
        }
    }
    None
}

/// What the cache says of one file.
enum CacheState {
    /// The file is there.
    Hit,
    /// It was not found a short while ago.
    RecentMiss,
    /// Nothing known.
    Absent,
}

fn cache_state(path: &Path, failure_ttl: Duration) -> CacheState {
    let Ok(meta) = std::fs::metadata(path) else {
        return CacheState::Absent;
    };
    if meta.len() > 0 {
        return CacheState::Hit;
    }
    let age = meta
        .modified()
        .ok()
        .and_then(|m| SystemTime::now().duration_since(m).ok())
        .unwrap_or(Duration::MAX);
    if age < failure_ttl {
        CacheState::RecentMiss
    } else {
        CacheState::Absent
    }
}

/// Why a download gave nothing.
struct DownloadError {
    message: String,
    /// The server may answer later (down, slow): not remembered as a miss.
    transient: bool,
}

/// GETs `url` into `file` (at most `max_bytes`), keeping it when `check` passes;
/// `Ok(None)` on 404.
fn download(
    agent: &ureq::Agent,
    url: &str,
    file: &Path,
    max_bytes: u64,
    check: impl Fn(&Path) -> Result<(), String>,
) -> Result<Option<PathBuf>, DownloadError> {
    let transient = |e: &dyn std::fmt::Display| DownloadError {
        message: e.to_string(),
        transient: true,
    };
    let response = agent.get(url).call().map_err(|e| transient(&e))?;
    let status = response.status().as_u16();
    if status == 404 {
        return Ok(None);
    }
    if status != 200 {
        return Err(DownloadError {
            message: format!("HTTP {status}"),
            transient: status >= 500,
        });
    }
    let (Some(dir), Some(name)) = (file.parent(), file.file_name()) else {
        return Err(transient(&"no cache file name"));
    };
    std::fs::create_dir_all(dir).map_err(|e| transient(&e))?;
    let part = dir.join(format!(
        ".{}.part-{}",
        name.to_string_lossy(),
        std::process::id()
    ));
    let written = std::fs::File::create(&part).and_then(|mut f| {
        let mut body = response.into_body().into_reader().take(max_bytes);
        std::io::copy(&mut body, &mut f)?;
        f.flush()
    });
    if let Err(e) = written {
        let _ = std::fs::remove_file(&part);
        return Err(transient(&e));
    }
    match check(&part) {
        Ok(()) => {
            std::fs::rename(&part, file).map_err(|e| transient(&e))?;
            Ok(Some(file.to_path_buf()))
        }
        Err(message) => {
            let _ = std::fs::remove_file(&part);
            Err(DownloadError {
                message,
                transient: false,
            })
        }
    }
}

/// Whether the file at `part` is an ELF file of build id `id`, else what it is.
fn is_elf_of(part: &Path, id: &str) -> Result<(), String> {
    match elf::build_id_of(part) {
        Ok(got) if got == id => Ok(()),
        Ok(got) => Err(format!("answered the file of build id {got:?}")),
        Err(_) => Err("answered something that is not an ELF file".to_string()),
    }
}

/// Largest source file fetched (a larger answer is cut here, and refused as too large
/// by whoever reads it).
pub const MAX_SOURCE_BYTES: u64 = 16 << 20;

/// The cache file of source file `path` of build id `id`, as elfutils' client (0.188,
/// `debuginfod-find source`) names it: each `/` as `##`, each `#` as `#_`, so
/// `CACHE/ID/source##usr##src##a.c` for `/usr/src/a.c`.
pub fn source_cache_file(cache_dir: &Path, id: &str, path: &str) -> PathBuf {
    let escaped = path.replace('#', "#_").replace('/', "##");
    cache_dir.join(id).join(format!("source{escaped}"))
}

/// Source file `path` (absolute, as the binary's DWARF names it) of build id `id`, from
/// the cache or else from each server in turn (`/buildid/ID/source/PATH`), cached as
/// [`source_cache_file`]. `Err` says what each server answered (the URL asked first).
pub fn fetch_source(
    options: &DebuginfodOptions,
    id: &str,
    path: &str,
) -> Result<PathBuf, Vec<String>> {
    if id.len() < 2 || !id.chars().all(|c| c.is_ascii_hexdigit()) {
        return Err(vec![format!("no build id to ask debuginfod with ({id:?})")]);
    }
    if !path.starts_with('/') {
        return Err(vec![format!(
            "debuginfod serves sources by absolute path, not {path}"
        )]);
    }
    let cached = source_cache_file(&options.cache_dir, id, path);
    match cache_state(&cached, options.failure_ttl) {
        CacheState::Hit => return Ok(cached),
        CacheState::RecentMiss => {
            return Err(vec![format!(
                "debuginfod: {path} of {id} not found a short while ago ({})",
                cached.display()
            )]);
        }
        CacheState::Absent => {}
    }
    let agent: ureq::Agent = ureq::Agent::config_builder()
        .timeout_global(Some(options.timeout))
        .http_status_as_error(false)
        .build()
        .new_agent();
    let mut said = Vec::new();
    let mut definite_miss = true;
    for url in &options.urls {
        let asked = format!("{url}/buildid/{id}/source{path}");
        match download(&agent, &asked, &cached, MAX_SOURCE_BYTES, |_| Ok(())) {
            Ok(Some(file)) => return Ok(file),
            Ok(None) => said.push(format!("{asked}: not found (404)")),
            Err(e) => {
                definite_miss &= !e.transient;
                said.push(format!("{asked}: {}", e.message));
            }
        }
    }
    if definite_miss && let Some(dir) = cached.parent() {
        let _ = std::fs::create_dir_all(dir).and_then(|()| std::fs::write(&cached, b""));
    }
    Err(said)
}
