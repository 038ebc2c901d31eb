//! The real window under Xvfb: it opens, draws and stays up, on a good file and on a
//! broken one. Skipped (with a SKIP line) where Xvfb is not installed.

use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use super::fixtures;

/// An X server on a display of its own, stopped when dropped.
struct Xvfb {
    child: Child,
    display: String,
    /// Where its messages go, shown when a window fails.
    log: std::path::PathBuf,
}

impl Xvfb {
    fn start() -> Option<Self> {
        let binary = ["/usr/bin/Xvfb", "/usr/local/bin/Xvfb"]
            .into_iter()
            .find(|p| Path::new(p).exists())?;
        // A display number that is free: not one whose socket exists (another X
        // server, e.g. a developer's Xvfb), starting from one that differs per process.
        let first = 90 + std::process::id() % 100;
        let number =
            (first..first + 200).find(|n| !Path::new(&format!("/tmp/.X11-unix/X{n}")).exists())?;
        let display = format!(":{number}");
        let log = std::env::temp_dir().join(format!("flint-e2e-xvfb-{number}.log"));
        let child = Command::new(binary)
            .args([
                display.as_str(),
                "-screen",
                "0",
                "1280x800x24",
                "-nolisten",
                "tcp",
                // Without it the server resets when its last client goes, and the
                // next window, started during the reset, cannot connect.
                "-noreset",
            ])
            .stdout(Stdio::null())
            .stderr(std::fs::File::create(&log).ok()?)
            .spawn()
            .ok()?;
        let socket = format!("/tmp/.X11-unix/X{number}");
        let start = Instant::now();
        while !Path::new(&socket).exists() && start.elapsed() < Duration::from_secs(10) {
            std::thread::sleep(Duration::from_millis(50));
        }
        Some(Self {
            child,
            display,
            log,
        })
    }
}

impl Drop for Xvfb {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Runs `flint ARGS` for a few seconds; returns its stderr if it exited early.
fn stays_up(x: &Xvfb, args: &[&str]) -> Result<(), String> {
    let mut child = Command::new(env!("CARGO_BIN_EXE_flint"))
        .args(args)
        .current_dir(fixtures())
        .env("DISPLAY", &x.display)
        .env_remove("WAYLAND_DISPLAY")
        .env("HOME", std::env::temp_dir())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("flint starts");
    let start = Instant::now();
    while start.elapsed() < Duration::from_secs(4) {
        if let Some(status) = child.try_wait().expect("wait") {
            let mut err = String::new();
            if let Some(mut e) = child.stderr.take() {
                let _ = std::io::Read::read_to_string(&mut e, &mut err);
            }
            let xvfb = std::fs::read_to_string(&x.log).unwrap_or_default();
            return Err(format!(
                "flint {args:?} exited with {status}: {err}\nXvfb's messages:\n{xvfb}"
            ));
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    let _ = child.kill();
    let _ = child.wait();
    Ok(())
}

#[test]
fn window_opens_on_good_and_broken_files() {
    let Some(x) = Xvfb::start() else {
        println!(
            "SKIP window_opens_on_good_and_broken_files: Xvfb is not installed (apt-get install xvfb)"
        );
        return;
    };
    stays_up(&x, &[]).expect("the demo opens");
    stays_up(&x, &["cpu.pb.gz"]).expect("a Go profile opens");
    stays_up(&x, &["cpu-1.pb.gz", "cpu-2.pb.gz"]).expect("several profiles open merged");
    // A folder is opened alone: one line says so, and the window is not opened.
    let err = stays_up(&x, &["cpu-1.pb.gz", "golden"]).expect_err("refused");
    assert!(
        err.contains(
            "error: golden: a folder or a server is opened alone; several profile files are merged"
        ),
        "{err}"
    );
    // A broken file: the window says why instead of exiting.
    stays_up(&x, &["golden/COMMANDS.txt"]).expect("a broken file leaves the window up");
}
