//! The perf fallback: one `cpu-clock` event per online CPU with
//! `PERF_SAMPLE_TID | PERF_SAMPLE_CALLCHAIN`, read from an mmap ring per CPU on every drain and
//! counted in userspace. With [`Target::Pids`] it opens an inherited event per thread of the
//! wanted processes and CPU (less privilege needed: `perf_event_paranoid` ≤ 1 lets a user
//! sample their own processes), redirected into one ring per CPU; threads started between
//! listing `/proc/PID/task` and opening the events are missed unless a sampled thread
//! created them. Processes with more than [`MAX_THREAD_EVENTS`] / CPUs threads are sampled
//! CPU-wide instead. Either way samples of other processes (such as children of the wanted
//! ones, which inherit the events) are dropped in userspace.

use std::collections::{HashMap, HashSet};
use std::os::fd::OwnedFd;

use crate::counts::{LossStats, StackCount};
use crate::error::CaptureError;
use crate::{SamplerOptions, Target, cpus, sys};

const PERF_RECORD_LOST: u32 = 2;
const PERF_RECORD_SAMPLE: u32 = 9;
/// Callchain context markers (`enum perf_callchain_context`).
const PERF_CONTEXT_KERNEL: u64 = -128i64 as u64;
const PERF_CONTEXT_USER: u64 = -512i64 as u64;
const PERF_CONTEXT_MAX: u64 = -4095i64 as u64;

/// Samples counted in userspace: `(pid, tid, user, kernel)` → count.
type Counts = HashMap<(u32, u32, Vec<u64>, Vec<u64>), u64>;

pub(crate) struct PerfSampler {
    rings: Vec<sys::PerfRing>,
    events: Vec<OwnedFd>,
    wanted: Option<HashSet<u32>>,
    max_stack: usize,
    /// What the rings held, counted by the drain.
    counts: Counts,
    stats: LossStats,
}

impl PerfSampler {
    pub(crate) fn open(options: &SamplerOptions) -> Result<PerfSampler, CaptureError> {
        let attr = sys::PerfEventAttr {
            type_: sys::PERF_TYPE_SOFTWARE,
            config: sys::PERF_COUNT_SW_CPU_CLOCK,
            sample_freq: options.frequency_hz,
            sample_type: sys::PERF_SAMPLE_TID | sys::PERF_SAMPLE_CALLCHAIN,
            flags: sys::FLAG_DISABLED | sys::FLAG_FREQ | sys::FLAG_EXCLUDE_IDLE,
            ..sys::PerfEventAttr::default()
        };
        let cpus = cpus::online()?;
        let mut events = Vec::new();
        let mut rings = Vec::new();
        let threads = match &options.target {
            Target::All => None,
            Target::Pids(pids) => threads_of(pids, cpus.len())?,
        };
        match threads {
            None => {
                for &cpu in &cpus {
                    let event = sys::perf_event_open(&attr, -1, cpu as i32)?;
                    rings.push(sys::PerfRing::map(&event, options.perf_ring_pages)?);
                    events.push(event);
                }
            }
            Some(tids) => {
                // One event per (thread, CPU), inherited by threads and children created later;
                // the events of one CPU share the first one's ring.
                let attr = sys::PerfEventAttr {
                    flags: attr.flags | sys::FLAG_INHERIT,
                    ..attr
                };
                for &cpu in &cpus {
                    let mut leader = None;
                    for &tid in &tids {
                        let event = match sys::perf_event_open(&attr, tid as i32, cpu as i32) {
                            Ok(event) => event,
                            Err(error) if sys::is_no_such_process(&error) => continue,
                            Err(error) => return Err(error),
                        };
                        match leader {
                            None => {
                                rings.push(sys::PerfRing::map(&event, options.perf_ring_pages)?);
                                leader = Some(events.len());
                            }
                            Some(index) => sys::perf_set_output(&event, &events[index])?,
                        }
                        events.push(event);
                    }
                }
            }
        }
        for event in &events {
            sys::perf_enable(event)?;
        }
        let wanted = match &options.target {
            Target::All => None,
            Target::Pids(pids) => Some(pids.iter().copied().collect()),
        };
        Ok(PerfSampler {
            rings,
            events,
            wanted,
            max_stack: crate::max_stack_depth(),
            counts: Counts::new(),
            stats: LossStats::default(),
        })
    }

    /// Reads every ring up to its head. Samples written during the read stay in the ring
    /// for the next drain.
    pub(crate) fn drain(&mut self) -> Result<(Vec<StackCount>, LossStats), CaptureError> {
        self.read_rings()?;
        let stats = std::mem::take(&mut self.stats);
        let stacks = std::mem::take(&mut self.counts)
            .into_iter()
            .map(|((pid, tid, user, kernel), count)| StackCount {
                pid,
                tid,
                user,
                kernel,
                count,
            })
            .collect();
        Ok((stacks, stats))
    }

    /// Counts the records of every ring into `self.counts` and `self.stats`.
    fn read_rings(&mut self) -> Result<(), CaptureError> {
        let (counts, stats) = (&mut self.counts, &mut self.stats);
        for ring in &mut self.rings {
            for record in ring.read() {
                match parse_record(&record)? {
                    Record::Lost(lost) => stats.lost += lost,
                    Record::Sample {
                        pid,
                        tid,
                        user,
                        kernel,
                    } => {
                        if self.wanted.as_ref().is_some_and(|w| !w.contains(&pid)) {
                            continue;
                        }
                        stats.samples += 1;
                        if user.len() + kernel.len() >= self.max_stack {
                            stats.truncated += 1;
                        }
                        *counts.entry((pid, tid, user, kernel)).or_default() += 1;
                    }
                    Record::Other => {}
                }
            }
        }
        Ok(())
    }
}

impl Drop for PerfSampler {
    fn drop(&mut self) {
        for event in &self.events {
            let _ = sys::perf_disable(event);
        }
        // Rings unmap before their events close (field order would do it the other way round).
        self.rings.clear();
    }
}

/// Most per-thread events opened for [`Target::Pids`]; beyond, every CPU is sampled.
const MAX_THREAD_EVENTS: usize = 4096;

/// The threads of `pids`, or `None` when there are too many to open an event per thread and
/// CPU. Fails when none of the processes exists.
fn threads_of(pids: &[u32], cpus: usize) -> Result<Option<Vec<u32>>, CaptureError> {
    let mut tids = Vec::new();
    let mut found = false;
    for pid in pids {
        let Ok(dir) = std::fs::read_dir(format!("/proc/{pid}/task")) else {
            continue; // exited
        };
        found = true;
        tids.extend(
            dir.filter_map(Result::ok)
                .filter_map(|entry| entry.file_name().to_str()?.parse::<u32>().ok()),
        );
    }
    if !found {
        return Err(CaptureError::System {
            path: "/proc/<pid>/task".into(),
            reason: format!("none of the processes {pids:?} exists"),
        });
    }
    Ok((tids.len() * cpus <= MAX_THREAD_EVENTS).then_some(tids))
}

/// One ring record, as far as the sampler cares.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Record {
    /// `PERF_RECORD_SAMPLE` with the callchain split at its context markers, leaf first.
    Sample {
        pid: u32,
        tid: u32,
        user: Vec<u64>,
        kernel: Vec<u64>,
    },
    /// `PERF_RECORD_LOST`: this many samples were dropped.
    Lost(u64),
    /// Anything else (throttle, unthrottle, …).
    Other,
}

fn u32_at(bytes: &[u8], offset: usize) -> Option<u32> {
    Some(u32::from_ne_bytes(
        bytes.get(offset..offset + 4)?.try_into().ok()?,
    ))
}

fn u64_at(bytes: &[u8], offset: usize) -> Option<u64> {
    Some(u64::from_ne_bytes(
        bytes.get(offset..offset + 8)?.try_into().ok()?,
    ))
}

/// Parses one record (header included) of an event with `PERF_SAMPLE_TID | CALLCHAIN`.
pub(crate) fn parse_record(record: &[u8]) -> Result<Record, CaptureError> {
    let short = || CaptureError::Kernel(format!("short perf record of {} bytes", record.len()));
    let kind = u32_at(record, 0).ok_or_else(short)?;
    match kind {
        PERF_RECORD_LOST => Ok(Record::Lost(u64_at(record, 16).ok_or_else(short)?)),
        PERF_RECORD_SAMPLE => {
            let pid = u32_at(record, 8).ok_or_else(short)?;
            let tid = u32_at(record, 12).ok_or_else(short)?;
            let nr = u64_at(record, 16).ok_or_else(short)?;
            let nr = usize::try_from(nr).map_err(|_| short())?;
            let mut user = Vec::new();
            let mut kernel = Vec::new();
            let mut in_kernel = true;
            for i in 0..nr {
                let ip = u64_at(record, 24 + i * 8).ok_or_else(short)?;
                if ip >= PERF_CONTEXT_MAX {
                    // Guest and hypervisor contexts are not ours: drop their frames.
                    in_kernel = match ip {
                        PERF_CONTEXT_KERNEL => true,
                        PERF_CONTEXT_USER => false,
                        _ => continue,
                    };
                    continue;
                }
                if in_kernel {
                    kernel.push(ip);
                } else {
                    user.push(ip);
                }
            }
            crate::counts::cut_at_non_user(&mut user);
            Ok(Record::Sample {
                pid,
                tid,
                user,
                kernel,
            })
        }
        _ => Ok(Record::Other),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample(pid: u32, tid: u32, ips: &[u64]) -> Vec<u8> {
        let mut bytes = Vec::new();
        let size = 8 + 8 + 8 + ips.len() * 8;
        bytes.extend(PERF_RECORD_SAMPLE.to_ne_bytes());
        bytes.extend(0u16.to_ne_bytes());
        bytes.extend((size as u16).to_ne_bytes());
        bytes.extend(pid.to_ne_bytes());
        bytes.extend(tid.to_ne_bytes());
        bytes.extend((ips.len() as u64).to_ne_bytes());
        for ip in ips {
            bytes.extend(ip.to_ne_bytes());
        }
        bytes
    }

    #[test]
    fn callchain_splits_at_context_markers() {
        let record = sample(
            5,
            6,
            &[
                PERF_CONTEXT_KERNEL,
                0xffff_ffff_8100_0000,
                0xffff_ffff_8100_0100,
                PERF_CONTEXT_USER,
                0x40_1000,
                0x40_2000,
            ],
        );
        assert_eq!(
            parse_record(&record).unwrap(),
            Record::Sample {
                pid: 5,
                tid: 6,
                user: vec![0x40_1000, 0x40_2000],
                kernel: vec![0xffff_ffff_8100_0000, 0xffff_ffff_8100_0100],
            }
        );
        let user_only = sample(5, 7, &[PERF_CONTEXT_USER, 0x40_1000]);
        let Record::Sample { user, kernel, .. } = parse_record(&user_only).unwrap() else {
            panic!("not a sample");
        };
        assert_eq!((user, kernel), (vec![0x40_1000], vec![]));
    }

    #[test]
    fn lost_and_short_records() {
        let mut lost = Vec::new();
        lost.extend(PERF_RECORD_LOST.to_ne_bytes());
        lost.extend(0u16.to_ne_bytes());
        lost.extend(24u16.to_ne_bytes());
        lost.extend(1u64.to_ne_bytes()); // id
        lost.extend(42u64.to_ne_bytes());
        assert_eq!(parse_record(&lost).unwrap(), Record::Lost(42));
        let mut truncated = sample(1, 1, &[PERF_CONTEXT_USER, 1, 2]);
        truncated.truncate(truncated.len() - 4);
        assert!(parse_record(&truncated).is_err());
        assert!(parse_record(&[9, 0]).is_err());
    }
}
