//! The folders the window makes for itself in the system's temporary folder, one per
//! process and purpose (the demo's files, a capture's store): removed when the window
//! closes, and those of processes that ended without removing theirs (killed) when
//! the next one of their purpose is made.

use std::path::{Path, PathBuf};

/// The demo's files ([`crate::gui::time::demo`]).
pub const DEMO: &str = "demo";
/// The store a capture of this machine writes ([`crate::gui::live`]).
pub const CAPTURE: &str = "capture";

/// This process's folder for `purpose`: `flint-PURPOSE-PID` in the temporary folder.
pub fn own_dir(purpose: &str) -> PathBuf {
    std::env::temp_dir().join(format!("flint-{purpose}-{}", std::process::id()))
}

/// Removes the folders for `purpose` of processes that no longer run (Linux: no
/// `/proc/PID`; elsewhere none is known to have ended, and none is removed).
pub fn remove_stale(purpose: &str) {
    if !cfg!(target_os = "linux") {
        return;
    }
    let Ok(entries) = std::fs::read_dir(std::env::temp_dir()) else {
        return;
    };
    let prefix = format!("flint-{purpose}-");
    for entry in entries.flatten() {
        let name = entry.file_name();
        let pid = name
            .to_str()
            .and_then(|n| n.strip_prefix(&prefix))
            .and_then(|pid| pid.parse::<u32>().ok());
        if let Some(pid) = pid
            && !Path::new(&format!("/proc/{pid}")).exists()
        {
            let _ = std::fs::remove_dir_all(entry.path());
        }
    }
}

/// Removes `dir`, a folder a window made, and the process's folder it lies in once
/// that holds nothing else (a demo's is `flint-demo-PID/N`).
pub fn remove(dir: &Path) {
    let _ = std::fs::remove_dir_all(dir);
    let temp = std::env::temp_dir();
    if let Some(parent) = dir.parent()
        && parent != temp
        && parent.starts_with(&temp)
    {
        let _ = std::fs::remove_dir(parent);
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, reason = "tests")]

    use super::{own_dir, remove_stale};

    #[test]
    fn only_the_folders_of_ended_processes_are_stale() {
        let ended = std::env::temp_dir().join(format!("flint-test-stale-{}", u32::MAX));
        let other = std::env::temp_dir().join(format!("flint-test-kept-{}", u32::MAX));
        let own = own_dir("test-stale");
        for dir in [&ended, &other, &own] {
            std::fs::create_dir_all(dir.join("inside")).unwrap();
        }
        remove_stale("test-stale");
        assert_eq!(ended.exists(), !cfg!(target_os = "linux"));
        assert!(own.exists(), "this process runs");
        assert!(other.exists(), "another purpose");
        for dir in [&ended, &other, &own] {
            let _ = std::fs::remove_dir_all(dir);
        }
    }
}
