//! What a path given on the command line or opened in the window names: a file, a
//! folder, or a server ([`PathKind`]).

use std::path::Path;

use crate::grpc::ServerUrl;

/// What a path names.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PathKind {
    /// A profile file (or anything else that is neither: reading it says what is
    /// wrong).
    File,
    /// A folder: of profiles over time, or flint's store.
    Dir,
    /// A server, `grpc://HOST:PORT` or `https://HOST` ([`ServerUrl::names_server`]),
    /// even if malformed.
    Server,
}

impl PathKind {
    /// What `path` names; a server's URL wins over a folder of the same name.
    pub fn of(path: &Path) -> Self {
        if ServerUrl::names_server(&path.to_string_lossy()) {
            Self::Server
        } else if path.is_dir() {
            Self::Dir
        } else {
            Self::File
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_path_names_a_server_a_folder_or_a_file() {
        let dir = std::env::temp_dir();
        assert_eq!(PathKind::of(&dir), PathKind::Dir);
        assert_eq!(
            PathKind::of(Path::new("grpc://localhost:7070")),
            PathKind::Server
        );
        assert_eq!(
            PathKind::of(Path::new("https://parca.example.com")),
            PathKind::Server
        );
        assert_eq!(
            PathKind::of(&dir.join("no such file.pb.gz")),
            PathKind::File
        );
        // A scheme flint does not speak is a file that reading says is missing.
        assert_eq!(PathKind::of(Path::new("ftp://host")), PathKind::File);
    }
}
