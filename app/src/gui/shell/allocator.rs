//! How the window hands freed memory back to the system.
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

/// Sets the thresholds above (glibc on Linux; elsewhere the allocator's own policy
/// stays).
pub fn map_large_blocks() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    for (parameter, bytes) in [
        (libc::M_MMAP_THRESHOLD, 1 << 20),
        (libc::M_TRIM_THRESHOLD, 64 << 20),
    ] {
        #[expect(unsafe_code, reason = "glibc's mallopt, called at start-up")]
        // SAFETY: mallopt only sets a parameter of the allocator; both take a byte
        // count, and these lie within their ranges (the mmap threshold at most 32 MiB).
        let set = unsafe { libc::mallopt(parameter, bytes) };
        debug_assert_eq!(set, 1, "mallopt({parameter}) refused");
    }
}
