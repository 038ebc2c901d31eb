//! Perf maps given by hand (`--perf-map FILE`): names of JIT code in anonymous memory,
//! a file named `perf-PID.map` used only for samples of that process.

use std::collections::BTreeSet;
use std::path::PathBuf;

use profile_model::Profile;
use profile_model::profile::Label;

use crate::symbols::perfmap::PerfMap;

/// The perf maps given, each with the process it belongs to when its name says.
pub(super) struct PerfMaps {
    maps: Vec<(Option<u32>, PerfMap)>,
}

impl PerfMaps {
    /// Reads `paths`; an unreadable one is a warning in `warnings`.
    pub(super) fn read(paths: &[PathBuf], warnings: &mut BTreeSet<String>) -> Self {
        let maps = paths
            .iter()
            .filter_map(|p| match std::fs::read(p) {
                Ok(bytes) => Some((pid_of(p), PerfMap::parse(&String::from_utf8_lossy(&bytes)))),
                Err(e) => {
                    warnings.insert(format!("perf map {}: {e}", p.display()));
                    None
                }
            })
            .collect();
        Self { maps }
    }

    /// Whether no perf map was read.
    pub(super) fn is_empty(&self) -> bool {
        self.maps.is_empty()
    }

    /// The name of the code at `addr` run by one of `pids` (any process when the
    /// profile says none).
    pub(super) fn find(&self, addr: u64, pids: &BTreeSet<u32>) -> Option<&str> {
        self.maps
            .iter()
            .filter(|(pid, _)| pids.is_empty() || pid.is_none_or(|p| pids.contains(&p)))
            .find_map(|(_, map)| map.find(addr))
    }
}

/// The pid in a file name `perf-PID.map`.
fn pid_of(path: &std::path::Path) -> Option<u32> {
    let name = path.file_name()?.to_str()?;
    name.strip_prefix("perf-")?
        .strip_suffix(".map")?
        .parse()
        .ok()
}

/// The process id a label set's `pid` label names.
pub(crate) fn pid_label(profile: &Profile, set: &[Label]) -> Option<u32> {
    set.iter()
        .find(|l| profile.str(l.key) == "pid")
        .and_then(|l| profile.label_value(l).parse().ok())
}

/// The `pid` labels of the samples each location is in, for the locations `wanted`.
pub(super) fn location_pids(profile: &Profile, wanted: &[bool]) -> Vec<BTreeSet<u32>> {
    let mut out = vec![BTreeSet::new(); profile.locations.len()];
    for i in 0..profile.samples.len() {
        let Some(set) = profile
            .samples
            .label_set
            .get(i)
            .and_then(|&s| profile.label_sets.get(s as usize))
        else {
            continue;
        };
        let Some(pid) = pid_label(profile, set) else {
            continue;
        };
        for &loc in profile.samples.stack(i) {
            if wanted.get(loc as usize) == Some(&true)
                && let Some(pids) = out.get_mut(loc as usize)
            {
                pids.insert(pid);
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::pid_of;
    use std::path::Path;

    #[test]
    fn the_pid_comes_from_a_perf_dash_pid_name_only() {
        assert_eq!(pid_of(Path::new("/tmp/perf-4242.map")), Some(4242));
        assert_eq!(pid_of(Path::new("jit.map")), None);
        assert_eq!(pid_of(Path::new("perf-x.map")), None);
    }
}
