//! A folder for a test's files, in the system's temporary folder, removed when the
//! test is done with it (dropped, whether the test passed or failed), so that runs of
//! the suite leave nothing behind.

use std::path::{Path, PathBuf};

/// A fresh, empty folder, removed when dropped.
#[derive(Debug)]
pub struct Scratch(PathBuf);

impl Scratch {
    /// `flint-NAME-PID` in the temporary folder, emptied first.
    pub fn new(name: &str) -> Self {
        let dir = std::env::temp_dir().join(format!("flint-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        let _ = std::fs::create_dir_all(&dir);
        Self(dir)
    }

    /// Takes charge of `dir` (made by the caller, or not yet): removed when dropped.
    pub fn adopt(dir: PathBuf) -> Self {
        Self(dir)
    }
}

impl std::ops::Deref for Scratch {
    type Target = Path;

    fn deref(&self) -> &Path {
        &self.0
    }
}

impl AsRef<Path> for Scratch {
    fn as_ref(&self) -> &Path {
        &self.0
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}
