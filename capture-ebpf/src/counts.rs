//! What a drain yields: distinct stacks with their counts, and what was lost.

/// The first address above user space (x86-64 and arm64 with 48-bit user addresses).
const USER_SPACE_END: u64 = 0x0000_8000_0000_0000;

/// Cuts a user stack (leaf first) at its first address that no user code can have: the
/// kernel walks user frame pointers and copies whatever return address each frame
/// holds, so code without frame pointers can give a garbage frame, and every frame
/// after it comes from the same bogus walk.
pub(crate) fn cut_at_non_user(stack: &mut Vec<u64>) {
    if let Some(end) = stack.iter().position(|&ip| ip >= USER_SPACE_END) {
        stack.truncate(end);
    }
}

/// How often one `(pid, tid, user stack, kernel stack)` was sampled.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct StackCount {
    /// Process (thread-group) id.
    pub pid: u32,
    /// Thread id.
    pub tid: u32,
    /// User-space return addresses, leaf first; empty for kernel threads, and when the user
    /// stack could not be taken (then counted in [`LossStats`]).
    pub user: Vec<u64>,
    /// Kernel return addresses, leaf first; empty for samples taken in user mode, and when the
    /// kernel stack could not be taken (then counted in [`LossStats`]).
    pub kernel: Vec<u64>,
    /// Number of samples.
    pub count: u64,
}

/// Samples taken and everything that went wrong with them during one drain interval.
/// Nothing is dropped silently: every sample that lost a stack, or was not counted at all,
/// shows up here.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct LossStats {
    /// Samples taken for the target (counted or not).
    pub samples: u64,
    /// Samples whose user or kernel stack was dropped because another stack occupied its
    /// stack-map bucket (`bpf_get_stackid` returned `-EEXIST`); the sample is still counted,
    /// with that stack empty. BPF only.
    pub collisions: u64,
    /// Samples of user processes whose user stack could not be taken (other errors of
    /// `bpf_get_stackid`, such as `-EFAULT`); kernel threads, which have no user stack, are
    /// not counted. BPF only.
    pub user_stack_errors: u64,
    /// Samples taken in kernel mode whose kernel stack could not be taken. BPF only.
    pub kernel_stack_errors: u64,
    /// Samples not counted at all because the counts map was full. BPF only.
    pub map_full: u64,
    /// Samples with a stack of the kernel's maximum depth (`perf_event_max_stack`): the
    /// outermost frames are probably missing.
    pub truncated: u64,
    /// Samples the kernel dropped because the perf ring was full (`PERF_RECORD_LOST`). Perf
    /// only; the count covers all processes, the target's share is unknown.
    pub lost: u64,
}

impl LossStats {
    /// Adds `other` to `self`, field by field.
    pub fn add(&mut self, other: &LossStats) {
        self.samples += other.samples;
        self.collisions += other.collisions;
        self.user_stack_errors += other.user_stack_errors;
        self.kernel_stack_errors += other.kernel_stack_errors;
        self.map_full += other.map_full;
        self.truncated += other.truncated;
        self.lost += other.lost;
    }
}

/// The result of one [`crate::Sampler::drain`].
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RawCounts {
    /// Distinct stacks with their counts, in no particular order.
    pub stacks: Vec<StackCount>,
    /// Samples taken and lost in the interval.
    pub stats: LossStats,
    /// Wall time since the previous drain (or since the sampler was opened).
    pub interval_nanos: u64,
}

impl RawCounts {
    /// Adds the counts of a later drain: a stack counted in both is counted once with
    /// the sum; the losses and the wall time add up.
    pub fn absorb(&mut self, later: RawCounts) {
        self.stacks.extend(later.stacks);
        self.stacks.sort_unstable_by(|a, b| {
            (a.pid, a.tid, &a.user, &a.kernel).cmp(&(b.pid, b.tid, &b.user, &b.kernel))
        });
        self.stacks.dedup_by(|later, earlier| {
            let same = (later.pid, later.tid, &later.user, &later.kernel)
                == (earlier.pid, earlier.tid, &earlier.user, &earlier.kernel);
            if same {
                earlier.count += later.count;
            }
            same
        });
        self.stats.add(&later.stats);
        self.interval_nanos += later.interval_nanos;
    }

    /// Sum of the counts of all stacks.
    pub fn total(&self) -> u64 {
        self.stacks.iter().map(|stack| stack.count).sum()
    }

    /// Sum of the counts of one thread's stacks.
    pub fn total_for_tid(&self, tid: u32) -> u64 {
        self.stacks
            .iter()
            .filter(|stack| stack.tid == tid)
            .map(|stack| stack.count)
            .sum()
    }
}

/// The kernel's accounting of the BPF program (cumulative since the sampler was opened).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ProgramStats {
    /// Total time spent in the program, in nanoseconds; counted only while run-time statistics
    /// are enabled ([`crate::Sampler::enable_program_stats`] or `kernel.bpf_stats_enabled`).
    pub run_time_nanos: u64,
    /// Number of runs (counted under the same condition).
    pub run_count: u64,
    /// Runs skipped because another BPF program was running on the CPU.
    pub recursion_misses: u64,
}

#[cfg(test)]
mod tests {
    use super::{LossStats, RawCounts, StackCount, cut_at_non_user};

    #[test]
    fn user_stacks_are_cut_at_the_first_address_above_user_space() {
        let mut stack = vec![0x40_1000, 0x7fff_ffff_f000, 0x8000_0000_0000, 0x40_2000];
        cut_at_non_user(&mut stack);
        assert_eq!(stack, [0x40_1000, 0x7fff_ffff_f000]);
        let mut whole = vec![0x40_1000, 0x40_2000];
        cut_at_non_user(&mut whole);
        assert_eq!(whole, [0x40_1000, 0x40_2000]);
    }

    fn stack(tid: u32, user: &[u64], kernel: &[u64], count: u64) -> StackCount {
        StackCount {
            pid: 7,
            tid,
            user: user.to_vec(),
            kernel: kernel.to_vec(),
            count,
        }
    }

    fn drained(stacks: Vec<StackCount>, collisions: u64) -> RawCounts {
        RawCounts {
            stacks,
            stats: LossStats {
                samples: 10,
                collisions,
                ..LossStats::default()
            },
            interval_nanos: 1_000,
        }
    }

    #[test]
    fn absorbing_a_later_drain_sums_the_stacks_counted_in_both() {
        let mut counts = drained(
            vec![
                stack(1, &[0x10, 0x20], &[], 3),
                stack(2, &[0x10], &[0x99], 1),
            ],
            2,
        );
        counts.absorb(drained(
            vec![
                stack(1, &[0x10, 0x20], &[], 4),
                // Same addresses, another thread: another stack.
                stack(3, &[0x10, 0x20], &[], 5),
                // Same user stack, another kernel stack.
                stack(2, &[0x10], &[], 6),
            ],
            1,
        ));
        let mut got: Vec<(u32, Vec<u64>, Vec<u64>, u64)> = counts
            .stacks
            .iter()
            .map(|s| (s.tid, s.user.clone(), s.kernel.clone(), s.count))
            .collect();
        got.sort();
        assert_eq!(
            got,
            [
                (1, vec![0x10, 0x20], vec![], 7),
                (2, vec![0x10], vec![], 6),
                (2, vec![0x10], vec![0x99], 1),
                (3, vec![0x10, 0x20], vec![], 5),
            ]
        );
        assert_eq!(counts.total(), 19);
        assert_eq!(counts.stats.samples, 20);
        assert_eq!(counts.stats.collisions, 3);
        assert_eq!(counts.interval_nanos, 2_000);
    }
}
