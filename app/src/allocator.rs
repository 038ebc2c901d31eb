//! How flint allocates: every allocation counted against the account its thread is
//! charged to ([`capture::memory::CountingAllocator`], for `flint serve`'s memory
//! budget), and freed memory handed back to the system (for the window and the
//! server).
//!
//! glibc's malloc serves an allocation below its mmap threshold from its heaps, and
//! that threshold rises (up to 32 MiB) each time a larger mapped block is freed. The
//! window's views are columns of tens of MiB (a merged day's call tree: five columns of
//! 26 MB): with the rising threshold they land in the heaps, where freed space stays
//! resident, and a second merge of a day peaked at 1.3 GB. A fixed threshold of 1 MiB
//! maps every large block on its own, so that freeing it returns it at once; smaller
//! allocations, the many, stay in the heaps. Fixing one threshold fixes the other:
//! the heaps' trim threshold is raised to 64 MiB with it, else the per-file buffers of
//! indexing a directory are handed back and faulted in again file after file (25%
//! slower indexing). BENCHMARKS.md has the figures.

/// The allocator the `flint` binary installs.
pub type Allocator = capture::memory::CountingAllocator;

/// Sets the thresholds above (glibc on Linux; elsewhere the allocator's own policy
/// stays).
pub fn map_large_blocks() {
    set(&[(MMAP_THRESHOLD, 1 << 20), (TRIM_THRESHOLD, 64 << 20)]);
}

/// As [`map_large_blocks`], for a server within a memory budget: two heaps for all
/// threads (glibc's default, one per thread up to eight per core, keeps what one
/// thread freed out of another's reach: 8 concurrent merges in a 256 MiB budget
/// peaked 25 MiB above it), and freed space at the top of a heap handed back from
/// 4 MiB on.
pub fn share_heaps() {
    set(&[
        (MMAP_THRESHOLD, 1 << 20),
        (TRIM_THRESHOLD, 4 << 20),
        (ARENA_MAX, 2),
    ]);
}

#[cfg(not(all(target_os = "linux", target_env = "gnu")))]
use self::other::{ARENA_MAX, MMAP_THRESHOLD, TRIM_THRESHOLD};
#[cfg(all(target_os = "linux", target_env = "gnu"))]
use libc::{
    M_ARENA_MAX as ARENA_MAX, M_MMAP_THRESHOLD as MMAP_THRESHOLD,
    M_TRIM_THRESHOLD as TRIM_THRESHOLD,
};

/// Where glibc's parameters do not exist: placeholders, never set.
#[cfg(not(all(target_os = "linux", target_env = "gnu")))]
mod other {
    pub const ARENA_MAX: i32 = 0;
    pub const MMAP_THRESHOLD: i32 = 0;
    pub const TRIM_THRESHOLD: i32 = 0;
}

/// Sets glibc's malloc parameters (glibc on Linux; elsewhere nothing).
fn set(parameters: &[(i32, i32)]) {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    for &(parameter, value) in parameters {
        #[expect(unsafe_code, reason = "glibc's mallopt, called at start-up")]
        // SAFETY: mallopt only sets a parameter of the allocator; these take a byte
        // count or a number of heaps, and the values lie within their ranges (the mmap
        // threshold at most 32 MiB).
        let set = unsafe { libc::mallopt(parameter, value) };
        debug_assert_eq!(set, 1, "mallopt({parameter}) refused");
    }
    #[cfg(not(all(target_os = "linux", target_env = "gnu")))]
    let _ = parameters;
}
