//! One version everywhere: `flint --version` names the commit built; `flint serve`
//! names it on its startup line and to its clients; `flint push` names it to the server.

use std::io::{BufRead as _, BufReader};
use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::mpsc;
use std::time::Duration;

use capture::{ProfileSource as _, RemoteOptions, RemoteSource, TimeRange};

use super::serve::{runtime, temp_store};
use super::{fixtures, flint, flint_ok};

/// What `flint --version` prints after `flint `.
fn version() -> String {
    let out = flint_ok(&["--version"]);
    out.trim()
        .strip_prefix("flint ")
        .unwrap_or_else(|| panic!("{out}"))
        .to_string()
}

#[test]
fn version_names_the_workspace_version_and_the_commit() {
    let version = version();
    let (number, build) = version.split_once(' ').unwrap();
    assert_eq!(number, env!("CARGO_PKG_VERSION"));
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let head = Command::new("git")
        .arg("-C")
        .arg(&root)
        .args(["rev-parse", "HEAD"])
        .output()
        .ok()
        .filter(|o| o.status.success())
        .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string());
    let Some(head) = head else {
        assert!(build.starts_with("(unknown commit"), "{version}");
        return;
    };
    // `(abc1234 2026-12-10)`: HEAD's hash and a date.
    let inner = build.strip_prefix('(').and_then(|b| b.strip_suffix(')'));
    let (hash, date) = inner
        .and_then(|i| i.split_once(' '))
        .unwrap_or_else(|| panic!("{version}"));
    assert_eq!(hash, &head[..7], "{version}");
    let digits: Vec<&str> = date.split('-').collect();
    assert!(
        digits.len() == 3 && digits.iter().all(|d| d.bytes().all(|b| b.is_ascii_digit())),
        "{version}"
    );
}

#[test]
fn serve_and_push_tell_each_other_their_version() {
    let version = version();
    let store = temp_store("version");
    let mut child = Command::new(env!("CARGO_BIN_EXE_flint"))
        .args(["serve", "--listen", "127.0.0.1:0", "--store"])
        .arg(&store)
        .env_remove("FLINT_TOKEN")
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let (tx, lines) = mpsc::channel();
    let stderr = BufReader::new(child.stderr.take().unwrap());
    std::thread::spawn(move || {
        for line in stderr.lines().map_while(Result::ok) {
            let _ = tx.send(line);
        }
    });
    let next = || lines.recv_timeout(Duration::from_secs(30)).unwrap();
    let started = next();
    assert!(
        started.contains(&format!("(flint {version}; store ")),
        "{started}"
    );
    let url = started
        .split_whitespace()
        .find(|w| w.starts_with("grpc://"))
        .unwrap()
        .to_string();
    // A client reads the server's version from its answers.
    let rt = runtime();
    let remote = RemoteSource::new(&url, RemoteOptions::default()).unwrap();
    rt.block_on(remote.profile_types(TimeRange::ALL)).unwrap();
    assert_eq!(remote.server_version(), Some(version.as_str()));
    // The server is told the pusher's version.
    let file = fixtures().join("cpu-1.pb.gz").display().to_string();
    let out = flint(&["push", &file, "--to", &url]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let told = next();
    assert!(
        told.starts_with(&format!(
            "flint serve: first profile from agent flint/{version} tonic/"
        )),
        "{told}"
    );
    let _ = child.kill();
    let _ = child.wait();
    let _ = std::fs::remove_dir_all(&store);
}
