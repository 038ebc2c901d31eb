//! Names the build in `flint --version`: the commit of the checkout it was built from
//! and that commit's date (or `SOURCE_DATE_EPOCH`'s), as `FLINT_VERSION`, e.g.
//! `0.2.0 (abc1234 2026-12-10)`. A build without the git checkout (a source tarball, a
//! container build) may name its commit in `FLINT_COMMIT`. Nothing here depends on the
//! folder or the clock, so two builds of one commit stay the same to the byte.

use std::path::{Path, PathBuf};
use std::process::Command;

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    println!("cargo:rerun-if-env-changed=SOURCE_DATE_EPOCH");
    println!("cargo:rerun-if-env-changed=FLINT_COMMIT");
    let manifest_dir = PathBuf::from(std::env::var_os("CARGO_MANIFEST_DIR").unwrap_or_default());
    let given = std::env::var("FLINT_COMMIT")
        .ok()
        .map(|c| c.trim().chars().take(7).collect::<String>())
        .filter(|c| !c.is_empty() && c.chars().all(|ch| ch.is_ascii_hexdigit()))
        .map(|c| (c, None));
    let commit = given.or_else(|| {
        Git::of(&manifest_dir).and_then(|git| {
            // Built again when HEAD moves: HEAD itself, the branch it names, packed refs.
            for path in git.watched() {
                println!("cargo:rerun-if-changed={}", path.display());
            }
            git.commit().map(|(hash, time)| (hash, Some(time)))
        })
    });
    let epoch = std::env::var("SOURCE_DATE_EPOCH")
        .ok()
        .and_then(|s| s.trim().parse::<i64>().ok())
        .or(commit.as_ref().and_then(|c| c.1));
    let what = match (&commit, epoch) {
        (Some((hash, _)), Some(t)) => format!("{hash} {}", civil_date(t)),
        (Some((hash, _)), None) => hash.clone(),
        (None, Some(t)) => format!("unknown commit, {}", civil_date(t)),
        (None, None) => "unknown commit".to_string(),
    };
    let version = std::env::var("CARGO_PKG_VERSION").unwrap_or_default();
    println!("cargo:rustc-env=FLINT_VERSION={version} ({what})");
}

/// The git checkout this package is the top of (not a repository it was unpacked in).
struct Git {
    dir: PathBuf,
}

impl Git {
    fn of(manifest_dir: &Path) -> Option<Self> {
        let workspace = manifest_dir.parent()?.canonicalize().ok()?;
        let git = Self {
            dir: manifest_dir.to_path_buf(),
        };
        let top = PathBuf::from(git.run(&["rev-parse", "--show-toplevel"])?);
        (top.canonicalize().ok()? == workspace).then_some(git)
    }

    fn run(&self, args: &[&str]) -> Option<String> {
        let out = Command::new("git")
            .arg("-C")
            .arg(&self.dir)
            .args(args)
            .output()
            .ok()?;
        let text = String::from_utf8(out.stdout).ok()?;
        out.status.success().then(|| text.trim().to_string())
    }

    /// The files whose change moves HEAD.
    fn watched(&self) -> Vec<PathBuf> {
        let mut refs = vec!["HEAD".to_string(), "packed-refs".to_string()];
        if let Some(branch) = self.run(&["symbolic-ref", "-q", "HEAD"]) {
            refs.push(branch);
        }
        refs.iter()
            .filter_map(|r| self.run(&["rev-parse", "--path-format=absolute", "--git-path", r]))
            .map(PathBuf::from)
            .filter(|p| p.exists())
            .collect()
    }

    /// HEAD's abbreviated hash (seven digits) and commit time (seconds since 1970).
    fn commit(&self) -> Option<(String, i64)> {
        let line = self.run(&["log", "-1", "--format=%H %ct", "HEAD"])?;
        let (hash, time) = line.split_once(' ')?;
        Some((hash.get(..7)?.to_string(), time.parse().ok()?))
    }
}

/// `YYYY-MM-DD` (UTC) of a time in seconds since 1970 (Howard Hinnant's algorithm).
fn civil_date(seconds: i64) -> String {
    let z = seconds.div_euclid(86_400) + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!("{year:04}-{month:02}-{day:02}")
}
