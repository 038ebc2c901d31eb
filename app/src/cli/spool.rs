//! The intervals of `flint record -o FILE`, kept on disk until the recording ends, so
//! the recorder's memory stays flat however long it runs: one gzipped pprof per
//! interval in a directory next to the output file, merged profile by profile into
//! the file at the end, then removed.

use std::path::{Path, PathBuf};

use profile_model::Profile;
use profile_model::codec::{DecodeOptions, decode_with, encode_gzip};
use profile_model::merge::Merger;

/// A directory of interval profiles (`00000001.pb.gz`, …) being recorded.
#[derive(Debug)]
pub struct Spool {
    dir: PathBuf,
    intervals: usize,
}

impl Spool {
    /// Creates the spool of output file `output`: `.NAME.spool-PID` in its directory
    /// (same file system, same permissions, easy to find if it is left behind).
    pub fn create(output: &Path) -> Result<Self, String> {
        let name = output
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_else(|| "profile".into());
        let dir = parent_dir(output).join(format!(".{name}.spool-{}", std::process::id()));
        std::fs::create_dir(&dir)
            .map_err(|e| format!("-o {}: creating {}: {e}", output.display(), dir.display()))?;
        Ok(Self { dir, intervals: 0 })
    }

    /// The directory the intervals are in.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// Intervals spooled so far.
    pub fn intervals(&self) -> usize {
        self.intervals
    }

    /// Writes one interval's profile to the spool.
    pub fn add(&mut self, profile: &Profile) -> Result<(), String> {
        let path = self.dir.join(format!("{:08}.pb.gz", self.intervals + 1));
        std::fs::write(&path, encode_gzip(profile))
            .map_err(|e| format!("writing {}: {e}", path.display()))?;
        self.intervals += 1;
        Ok(())
    }

    /// All spooled intervals merged, read back one at a time in the order they were
    /// added (the merge holds only the merged profile and the interval being read).
    pub fn merged(&self, options: DecodeOptions) -> Result<Profile, String> {
        let mut merger = Merger::new();
        for n in 1..=self.intervals {
            let path = self.dir.join(format!("{n:08}.pb.gz"));
            let bytes =
                std::fs::read(&path).map_err(|e| format!("reading {}: {e}", path.display()))?;
            let profile =
                decode_with(&bytes, options).map_err(|e| format!("{}: {e}", path.display()))?;
            merger
                .add(&format!("interval {n}"), &profile)
                .map_err(|e| format!("merging {}: {e}", path.display()))?;
        }
        Ok(merger.finish())
    }

    /// Deletes the spool (once its intervals are safely in the output file).
    pub fn remove(self) -> Result<(), String> {
        std::fs::remove_dir_all(&self.dir)
            .map_err(|e| format!("removing {}: {e}", self.dir.display()))
    }
}

/// The directory of `path` (`.` for a bare file name): where the output file, its
/// spool and its temporary copy go.
pub(super) fn parent_dir(path: &Path) -> &Path {
    match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    }
}

#[cfg(test)]
pub(super) mod tests {
    #![allow(clippy::unwrap_used, reason = "a test fails loudly")]

    use super::*;
    use capture::recorder::{CapturedStack, Interval, ProcessInfo, build_profile};
    use capture::symbols::Symbolizer;

    /// An interval's profile as the recorder builds it: stacks of two threads of a
    /// pid that is this interval's own (process churn), one shared with every interval.
    pub(in crate::cli) fn interval_profile(n: u32) -> Profile {
        let stack = |pid: u32, user: Vec<u64>, count: u64| CapturedStack {
            pid,
            tid: pid,
            user,
            kernel: Vec::new(),
            count,
        };
        let stacks = vec![
            stack(1, vec![0x1000, 0x2000], 5),
            stack(4_000_000 + n, vec![0x1000 + u64::from(n), 0x3000], 2),
        ];
        let interval = Interval {
            start_nanos: 1_700_000_000_000_000_000 + i64::from(n) * 1_000_000_000,
            duration_nanos: 1_000_000_000,
            frequency_hz: 99,
        };
        build_profile(
            &stacks,
            interval,
            &mut Symbolizer::new(),
            &mut ProcessInfo::new(),
        )
        .0
    }

    #[test]
    fn the_merge_of_the_spool_is_the_merge_of_its_intervals_and_the_spool_goes_away() {
        let dir = std::env::temp_dir().join(format!("flint-spool-test-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let output = dir.join("out.pb.gz");
        let mut spool = Spool::create(&output).unwrap();
        assert!(spool.dir().starts_with(&dir), "{}", spool.dir().display());
        assert!(Spool::create(&output).is_err(), "one spool per output");
        let mut expected = Merger::new();
        for n in 1..=3 {
            let p = interval_profile(n);
            spool.add(&p).unwrap();
            expected.add(&format!("interval {n}"), &p).unwrap();
        }
        assert_eq!(spool.intervals(), 3);
        let merged = spool.merged(DecodeOptions::default()).unwrap();
        let expected = expected.finish();
        assert_eq!(
            merged.samples.len(),
            4,
            "one stack in every interval, one in each"
        );
        assert_eq!(encode_gzip(&merged), encode_gzip(&expected));
        let spooled = spool.dir().to_path_buf();
        spool.remove().unwrap();
        assert!(!spooled.exists());
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
