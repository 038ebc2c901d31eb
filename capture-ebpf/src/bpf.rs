//! The BPF backend: creates the maps, loads [`crate::program`], attaches it to one `cpu-clock`
//! event per online CPU, and drains one generation of maps at a time.

use std::collections::HashMap;
use std::os::fd::{AsRawFd as _, OwnedFd};

use crate::counts::{LossStats, ProgramStats, StackCount};
use crate::error::CaptureError;
use crate::program::{
    self, COUNTS_KEY_SIZE, EEXIST, EFAULT, ERROR_MAP_FULL, ERROR_SAMPLES, ERROR_SLOTS,
    KSTACK_USER_MODE, MapFds,
};
use crate::{SamplerOptions, Target, cpus, insn, sys};

/// One counts-map key as the program writes it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) struct Key {
    pub pid: u32,
    pub tid: u32,
    pub user: i32,
    pub kernel: i32,
}

impl Key {
    fn from_bytes(bytes: &[u8]) -> Option<Key> {
        let word = |i: usize| -> Option<[u8; 4]> { bytes.get(i..i + 4)?.try_into().ok() };
        Some(Key {
            pid: u32::from_ne_bytes(word(0)?),
            tid: u32::from_ne_bytes(word(4)?),
            user: i32::from_ne_bytes(word(8)?),
            kernel: i32::from_ne_bytes(word(12)?),
        })
    }
}

fn u64_at(bytes: &[u8], index: usize) -> u64 {
    bytes
        .get(index * 8..index * 8 + 8)
        .and_then(|b| b.try_into().ok())
        .map_or(0, u64::from_ne_bytes)
}

pub(crate) struct BpfSampler {
    generation: OwnedFd,
    counts: [OwnedFd; 2],
    stacks: [OwnedFd; 2],
    errors: OwnedFd,
    _pids: Option<OwnedFd>,
    prog: OwnedFd,
    stats_enabled: Option<OwnedFd>,
    events: Vec<OwnedFd>,
    current: u32,
    possible_cpus: usize,
    max_stack: usize,
    counts_capacity: u32,
    batch_supported: bool,
}

impl BpfSampler {
    pub(crate) fn open(options: &SamplerOptions) -> Result<BpfSampler, CaptureError> {
        sys::raise_memlock_limit();
        let max_stack = crate::max_stack_depth();
        let possible_cpus = cpus::possible_count()?;
        let generation = sys::map_create(sys::MAP_ARRAY, 4, 4, 1, "flint_gen")?;
        let counts_map = || {
            sys::map_create(
                sys::MAP_HASH,
                COUNTS_KEY_SIZE,
                8,
                options.counts_map_entries,
                "flint_counts",
            )
        };
        let counts = [counts_map()?, counts_map()?];
        let stack_map = || {
            sys::map_create(
                sys::MAP_STACK_TRACE,
                4,
                (max_stack * 8) as u32,
                options.stack_map_entries,
                "flint_stacks",
            )
        };
        let stacks = [stack_map()?, stack_map()?];
        let errors = sys::map_create(sys::MAP_PERCPU_ARRAY, 4, 8, ERROR_SLOTS, "flint_errors")?;
        let pids = match &options.target {
            Target::All => None,
            Target::Pids(pids) => {
                let map = sys::map_create(sys::MAP_HASH, 4, 4, pids.len() as u32, "flint_pids")?;
                for pid in pids {
                    sys::map_update(&map, &pid.to_ne_bytes(), &1u32.to_ne_bytes(), sys::BPF_ANY)?;
                }
                Some(map)
            }
        };
        let fds = MapFds {
            generation: generation.as_raw_fd(),
            counts: [counts[0].as_raw_fd(), counts[1].as_raw_fd()],
            stacks: [stacks[0].as_raw_fd(), stacks[1].as_raw_fd()],
            errors: errors.as_raw_fd(),
            pids: pids.as_ref().map(|map| map.as_raw_fd()),
        };
        let bytes = insn::encode(&program::program(&fds));
        let prog = sys::prog_load(sys::PROG_PERF_EVENT, &bytes, "GPL")?;
        let attr = sys::PerfEventAttr {
            type_: sys::PERF_TYPE_SOFTWARE,
            config: sys::PERF_COUNT_SW_CPU_CLOCK,
            sample_freq: options.frequency_hz,
            flags: sys::FLAG_DISABLED | sys::FLAG_FREQ | sys::FLAG_EXCLUDE_IDLE,
            ..sys::PerfEventAttr::default()
        };
        let mut events = Vec::new();
        for cpu in cpus::online()? {
            let event = sys::perf_event_open(&attr, -1, cpu as i32)?;
            sys::perf_set_bpf(&event, &prog)?;
            events.push(event);
        }
        for event in &events {
            sys::perf_enable(event)?;
        }
        Ok(BpfSampler {
            generation,
            counts,
            stacks,
            errors,
            _pids: pids,
            prog,
            stats_enabled: None,
            events,
            current: 0,
            possible_cpus,
            max_stack,
            counts_capacity: options.counts_map_entries,
            batch_supported: true,
        })
    }

    /// Flips the generation, waits for programs still writing the old one, then reads and
    /// clears the old generation's counters, counts and stacks.
    pub(crate) fn drain(&mut self) -> Result<(Vec<StackCount>, LossStats), CaptureError> {
        let old = self.current;
        let new = 1 - old;
        sys::map_update(
            &self.generation,
            &0u32.to_ne_bytes(),
            &new.to_ne_bytes(),
            sys::BPF_ANY,
        )?;
        self.current = new;
        sys::wait_for_running_programs();
        let old = old as usize;

        let samples = self.take_error_counter(old as u32 * 2 + ERROR_SAMPLES)?;
        let map_full = self.take_error_counter(old as u32 * 2 + ERROR_MAP_FULL)?;
        let entries = self.read_counts(old)?;

        let mut stacks: HashMap<i32, Vec<u64>> = HashMap::new();
        let mut value = vec![0u8; self.max_stack * 8];
        for entry in &entries {
            for id in [entry.0.user, entry.0.kernel] {
                if id < 0 || stacks.contains_key(&id) {
                    continue;
                }
                value.fill(0);
                if sys::map_lookup(&self.stacks[old], &id.to_ne_bytes(), &mut value)? {
                    let frames = (0..self.max_stack)
                        .map(|i| u64_at(&value, i))
                        .take_while(|&ip| ip != 0)
                        .collect();
                    stacks.insert(id, frames);
                }
            }
        }
        self.clear_stacks(old, stacks.keys().copied())?;
        let (counts, mut stats) = classify(&entries, &stacks, self.max_stack);
        stats.samples = samples;
        stats.map_full = map_full;
        Ok((counts, stats))
    }

    /// Turns on the kernel's run-time accounting of BPF programs (system-wide, until the
    /// sampler is dropped).
    pub(crate) fn enable_program_stats(&mut self) -> Result<(), CaptureError> {
        if self.stats_enabled.is_none() {
            self.stats_enabled = Some(sys::enable_run_time_stats()?);
        }
        Ok(())
    }

    /// The program's cumulative run time and run count from `/proc/self/fdinfo`.
    pub(crate) fn program_stats(&self) -> Result<ProgramStats, CaptureError> {
        let path = format!("/proc/self/fdinfo/{}", self.prog.as_raw_fd());
        let text = std::fs::read_to_string(&path).map_err(|error| CaptureError::System {
            path: path.clone(),
            reason: error.to_string(),
        })?;
        let field = |name: &str| -> u64 {
            text.lines()
                .find_map(|line| line.strip_prefix(name)?.strip_prefix(':'))
                .and_then(|value| value.trim().parse().ok())
                .unwrap_or(0)
        };
        Ok(ProgramStats {
            run_time_nanos: field("run_time_ns"),
            run_count: field("run_cnt"),
            recursion_misses: field("recursion_misses"),
        })
    }

    fn take_error_counter(&self, slot: u32) -> Result<u64, CaptureError> {
        let key = slot.to_ne_bytes();
        let mut values = vec![0u8; self.possible_cpus * 8];
        if !sys::map_lookup(&self.errors, &key, &mut values)? {
            return Err(CaptureError::Kernel(format!(
                "error counter {slot} missing from the per-CPU array"
            )));
        }
        let total = (0..self.possible_cpus)
            .map(|cpu| u64_at(&values, cpu))
            .sum();
        values.fill(0);
        sys::map_update(&self.errors, &key, &values, sys::BPF_ANY)?;
        Ok(total)
    }

    /// Reads and deletes every entry of `counts[generation]` (the drain, once the program
    /// no longer writes that generation).
    fn read_counts(&mut self, generation: usize) -> Result<Vec<(Key, u64)>, CaptureError> {
        let map = &self.counts[generation];
        let key_size = COUNTS_KEY_SIZE as usize;
        let mut raw: Vec<(Vec<u8>, u64)> = Vec::new();
        if self.batch_supported {
            let capacity = self.counts_capacity.clamp(1, 4096);
            let mut keys = vec![0u8; capacity as usize * key_size];
            let mut values = vec![0u8; capacity as usize * 8];
            let mut cursor = vec![0u8; key_size];
            let mut first = true;
            loop {
                let result = sys::map_lookup_and_delete_batch(
                    map,
                    &mut cursor,
                    first,
                    &mut keys,
                    &mut values,
                    capacity,
                );
                let (filled, done) = match result {
                    Ok(result) => result,
                    Err(error) if first && sys::is_unsupported(&error) => {
                        self.batch_supported = false;
                        return self.read_counts(generation);
                    }
                    Err(error) => return Err(error),
                };
                for i in 0..filled as usize {
                    raw.push((
                        keys[i * key_size..(i + 1) * key_size].to_vec(),
                        u64_at(&values, i),
                    ));
                }
                first = false;
                if done {
                    break;
                }
            }
        } else {
            // Keys first, then values and deletes: deleting while walking would restart the
            // walk. The program no longer writes this generation, so the set is stable.
            let mut keys = Vec::new();
            let mut next = vec![0u8; key_size];
            let mut previous: Option<Vec<u8>> = None;
            while sys::map_get_next_key(map, previous.as_deref(), &mut next)? {
                keys.push(next.clone());
                previous = Some(next.clone());
            }
            let mut value = [0u8; 8];
            for key in keys {
                if sys::map_lookup(map, &key, &mut value)? {
                    raw.push((key.clone(), u64::from_ne_bytes(value)));
                }
                sys::map_delete(map, &key)?;
            }
        }
        parse_entries(&raw)
    }

    /// Deletes the stacks read, then whatever else is left (stacks of samples the full counts
    /// map did not take).
    fn clear_stacks(
        &self,
        generation: usize,
        ids: impl Iterator<Item = i32>,
    ) -> Result<(), CaptureError> {
        let map = &self.stacks[generation];
        for id in ids {
            sys::map_delete(map, &id.to_ne_bytes())?;
        }
        let mut next = [0u8; 4];
        while sys::map_get_next_key(map, None, &mut next)? {
            sys::map_delete(map, &next)?;
        }
        Ok(())
    }
}

/// Counts-map entries as read, bytes to keys.
fn parse_entries(raw: &[(Vec<u8>, u64)]) -> Result<Vec<(Key, u64)>, CaptureError> {
    raw.iter()
        .map(|(key, count)| {
            Key::from_bytes(key)
                .map(|key| (key, *count))
                .ok_or_else(|| CaptureError::Kernel("short counts-map key".into()))
        })
        .collect()
}

impl Drop for BpfSampler {
    fn drop(&mut self) {
        for event in &self.events {
            // Closing the fds detaches the program anyway; disabling first stops samples at once.
            let _ = sys::perf_disable(event);
        }
    }
}

/// Turns counts-map entries into [`StackCount`]s and the losses they show.
pub(crate) fn classify(
    entries: &[(Key, u64)],
    stacks: &HashMap<i32, Vec<u64>>,
    max_stack: usize,
) -> (Vec<StackCount>, LossStats) {
    let mut stats = LossStats::default();
    let mut counts = Vec::with_capacity(entries.len());
    for &(key, count) in entries {
        let kernel_mode = key.kernel != KSTACK_USER_MODE;
        if key.user == -EEXIST || key.kernel == -EEXIST {
            stats.collisions += count;
        }
        let user = if key.user >= 0 {
            stacks.get(&key.user).cloned()
        } else {
            None
        };
        let kernel = if key.kernel >= 0 {
            stacks.get(&key.kernel).cloned()
        } else {
            None
        };
        // A kernel-mode sample without a user stack (-EFAULT) is a kernel thread: it has none.
        let kernel_thread = kernel_mode && key.user == -EFAULT;
        if user.is_none() && key.user != -EEXIST && !kernel_thread {
            stats.user_stack_errors += count;
        }
        if kernel_mode && kernel.is_none() && key.kernel != -EEXIST {
            stats.kernel_stack_errors += count;
        }
        let mut user = user.unwrap_or_default();
        let kernel = kernel.unwrap_or_default();
        if user.len() >= max_stack || kernel.len() >= max_stack {
            stats.truncated += count;
        }
        crate::counts::cut_at_non_user(&mut user);
        counts.push(StackCount {
            pid: key.pid,
            tid: key.tid,
            user,
            kernel,
            count,
        });
    }
    (counts, stats)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The `get_next_key` + lookup + delete path, used where the batch command is missing.
    #[test]
    fn drain_without_batch_commands() {
        let options = SamplerOptions {
            frequency_hz: 99,
            ..SamplerOptions::default()
        };
        let mut sampler = match BpfSampler::open(&options) {
            Ok(sampler) => sampler,
            Err(error) => {
                println!("SKIP: cannot load the BPF program here: {error}");
                return;
            }
        };
        sampler.batch_supported = false;
        sampler.drain().unwrap();
        let until = std::time::Instant::now() + std::time::Duration::from_millis(500);
        let mut x = 1u64;
        while std::time::Instant::now() < until {
            x = x.wrapping_mul(3).wrapping_add(1);
        }
        std::hint::black_box(x);
        let (counts, stats) = sampler.drain().unwrap();
        let total: u64 = counts.iter().map(|c| c.count).sum();
        assert!(total >= 20, "{total} samples in 0.5 s");
        assert_eq!(total, stats.samples - stats.map_full);
        // Both generations were emptied: two more drains right away find only the few samples
        // of the last milliseconds, not the half second above again.
        sampler.drain().unwrap();
        let (again, _) = sampler.drain().unwrap();
        let again: u64 = again.iter().map(|c| c.count).sum();
        assert!(again < total / 4, "{again} samples came back after {total}");
    }

    fn key(user: i32, kernel: i32) -> Key {
        Key {
            pid: 10,
            tid: 11,
            user,
            kernel,
        }
    }

    #[test]
    fn key_bytes() {
        let mut bytes = Vec::new();
        bytes.extend(7u32.to_ne_bytes());
        bytes.extend(8u32.to_ne_bytes());
        bytes.extend((-17i32).to_ne_bytes());
        bytes.extend(3i32.to_ne_bytes());
        assert_eq!(
            Key::from_bytes(&bytes),
            Some(Key {
                pid: 7,
                tid: 8,
                user: -17,
                kernel: 3
            })
        );
        assert_eq!(Key::from_bytes(&bytes[..12]), None);
    }

    #[test]
    fn classify_counts_every_loss_once() {
        let stacks = HashMap::from([(1, vec![0x10, 0x20]), (2, vec![0xffff_ffff_8000_0000; 4])]);
        let entries = [
            (key(1, KSTACK_USER_MODE), 5),       // user-mode sample, fine
            (key(1, 2), 3),                      // kernel-mode sample of a user process, fine
            (key(-EFAULT, 2), 7),                // kernel thread: no user stack expected
            (key(-EEXIST, KSTACK_USER_MODE), 2), // user stack collided
            (key(1, -EEXIST), 1),                // kernel stack collided
            (key(-EFAULT, KSTACK_USER_MODE), 4), // user mode, but no user stack
            (key(1, -EFAULT), 6),                // kernel mode, but no kernel stack
            (key(9, KSTACK_USER_MODE), 1),       // stack id not in the map
        ];
        let (counts, stats) = classify(&entries, &stacks, 4);
        assert_eq!(counts.len(), entries.len());
        assert_eq!(counts.iter().map(|c| c.count).sum::<u64>(), 29);
        assert_eq!(stats.collisions, 3);
        assert_eq!(stats.user_stack_errors, 4 + 1);
        assert_eq!(stats.kernel_stack_errors, 6);
        assert_eq!(stats.truncated, 3 + 7); // the kernel stack has max_stack = 4 frames
        assert_eq!(counts[0].user, vec![0x10, 0x20]);
        assert!(counts[0].kernel.is_empty());
        assert!(counts[2].user.is_empty());
    }

    #[test]
    fn a_user_stack_ends_before_a_frame_no_user_code_has() {
        let stacks = HashMap::from([(1, vec![0x10, 0x20, 0xffff_ffff_8100_0000, 0x30])]);
        let (counts, stats) = classify(&[(key(1, KSTACK_USER_MODE), 2)], &stacks, 127);
        assert_eq!(counts[0].user, vec![0x10, 0x20]);
        assert_eq!(stats, LossStats::default());
    }
}
