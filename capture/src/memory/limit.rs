//! What the system says of memory: the limit of the cgroup a process runs in (v1 or
//! v2) and the process's resident size.

use std::path::Path;

/// Where cgroup file systems are mounted.
const CGROUP_ROOT: &str = "/sys/fs/cgroup";

/// The memory limit of the cgroup this process runs in, the tightest of its own and
/// its ancestors'; `None` when there is none (or no cgroup file system).
pub fn cgroup_limit() -> Option<u64> {
    let membership = std::fs::read_to_string("/proc/self/cgroup").ok()?;
    limit_in(&membership, Path::new(CGROUP_ROOT))
}

/// The limit for a process whose `/proc/self/cgroup` reads `membership`, with cgroup
/// file systems under `root`: v2's `memory.max` (the unified line `0::/path`), else
/// v1's `memory.limit_in_bytes` (the line naming the `memory` controller), along the
/// path from the process's group up to the root.
pub fn limit_in(membership: &str, root: &Path) -> Option<u64> {
    let mut v1 = None;
    let mut v2 = None;
    for line in membership.lines() {
        let mut parts = line.splitn(3, ':');
        let (Some(_), Some(controllers), Some(path)) = (parts.next(), parts.next(), parts.next())
        else {
            continue;
        };
        if controllers.is_empty() {
            v2 = Some(path);
        } else if controllers.split(',').any(|c| c == "memory") {
            v1 = Some(path);
        }
    }
    let tightest = |base: &Path, path: &str, file: &str| {
        ancestors(path)
            .filter_map(|dir| std::fs::read_to_string(base.join(dir).join(file)).ok())
            .filter_map(|text| parse_limit(&text))
            .min()
    };
    v2.and_then(|path| tightest(root, path, "memory.max"))
        .or_else(|| {
            v1.and_then(|path| tightest(&root.join("memory"), path, "memory.limit_in_bytes"))
        })
}

/// `/a/b` → `a/b`, `a`, `` (the group, then each ancestor up to the root).
fn ancestors(path: &str) -> impl Iterator<Item = &str> {
    let path = path.trim().trim_start_matches('/');
    let mut next = Some(path);
    std::iter::from_fn(move || {
        let here = next?;
        next = match here.rfind('/') {
            Some(at) => Some(&here[..at]),
            None if here.is_empty() => None,
            None => Some(""),
        };
        Some(here)
    })
}

/// A limit file's contents: bytes, or `None` for "max" and v1's "no limit" (a huge
/// number near `i64::MAX`, rounded to pages).
fn parse_limit(text: &str) -> Option<u64> {
    let bytes: u64 = text.trim().parse().ok()?;
    (bytes < 1 << 60).then_some(bytes)
}

/// This process's resident size in bytes, from `/proc/self/statm`; `None` where
/// that is not readable.
pub fn resident_bytes() -> Option<u64> {
    let statm = std::fs::read_to_string("/proc/self/statm").ok()?;
    let pages: u64 = statm.split_whitespace().nth(1)?.parse().ok()?;
    Some(pages * 4096)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ancestors_go_up_to_the_root() {
        assert_eq!(ancestors("/a/b").collect::<Vec<_>>(), ["a/b", "a", ""]);
        assert_eq!(ancestors("/").collect::<Vec<_>>(), [""]);
    }

    #[test]
    fn limits_are_read_as_v2_then_v1_the_tightest_on_the_path() {
        let root = std::env::temp_dir().join(format!("flint-cgroup-{}", std::process::id()));
        let write = |path: &str, text: &str| {
            let path = root.join(path);
            std::fs::create_dir_all(path.parent().unwrap_or(&root)).unwrap_or_default();
            std::fs::write(path, text).unwrap_or_default();
        };
        write("memory.max", "max\n");
        write("svc/memory.max", "1073741824\n");
        write("svc/job/memory.max", "max\n");
        write("memory/old/memory.limit_in_bytes", "268435456\n");
        write("memory/memory.limit_in_bytes", "9223372036854771712\n");
        assert_eq!(limit_in("0::/svc/job\n", &root), Some(1 << 30));
        assert_eq!(limit_in("0::/\n", &root), None);
        assert_eq!(
            limit_in("4:cpu,cpuacct:/x\n3:memory:/old\n", &root),
            Some(256 << 20)
        );
        assert_eq!(limit_in("3:memory:/\n", &root), None);
        assert_eq!(limit_in("garbage", &root), None);
        std::fs::remove_dir_all(&root).unwrap_or_default();
    }

    #[test]
    fn this_process_has_a_resident_size() {
        assert!(resident_bytes().is_some_and(|b| b > 0));
    }
}
