//! Every system call of the crate: `bpf(2)`, `perf_event_open(2)`, their ioctls, the perf ring's
//! `mmap`, `membarrier(2)` and `setrlimit`. The only module with `unsafe` code.
//!
//! Layouts follow `include/uapi/linux/bpf.h` and `include/uapi/linux/perf_event.h`. The
//! `bpf_attr` unions are passed as zero-filled, 8-byte-aligned byte buffers with the fields
//! written at their offsets; the kernel requires unused tail bytes to be zero.
#![allow(unsafe_code, reason = "the bpf, perf_event_open, ioctl and mmap calls")]

use std::io;
use std::os::fd::{AsRawFd as _, FromRawFd as _, OwnedFd};
use std::ptr::NonNull;
use std::sync::atomic::{Ordering, fence};

use crate::error::CaptureError;

// bpf(2) commands.
const BPF_MAP_CREATE: i32 = 0;
const BPF_MAP_LOOKUP_ELEM: i32 = 1;
const BPF_MAP_UPDATE_ELEM: i32 = 2;
const BPF_MAP_DELETE_ELEM: i32 = 3;
const BPF_MAP_GET_NEXT_KEY: i32 = 4;
const BPF_PROG_LOAD: i32 = 5;
const BPF_MAP_LOOKUP_AND_DELETE_BATCH: i32 = 25;
const BPF_ENABLE_STATS: i32 = 32;

/// `BPF_MAP_TYPE_HASH`
pub const MAP_HASH: u32 = 1;
/// `BPF_MAP_TYPE_ARRAY`
pub const MAP_ARRAY: u32 = 2;
/// `BPF_MAP_TYPE_PERCPU_ARRAY`
pub const MAP_PERCPU_ARRAY: u32 = 6;
/// `BPF_MAP_TYPE_STACK_TRACE`
pub const MAP_STACK_TRACE: u32 = 7;
/// `BPF_PROG_TYPE_PERF_EVENT`
pub const PROG_PERF_EVENT: u32 = 7;
/// `BPF_ANY`
pub const BPF_ANY: u64 = 0;

/// The `bpf_attr` union: large enough for every command used here, zero-filled.
#[repr(C, align(8))]
struct Attr([u8; 128]);

impl Attr {
    fn new() -> Attr {
        Attr([0; 128])
    }

    fn u32(&mut self, offset: usize, value: u32) -> &mut Attr {
        self.0[offset..offset + 4].copy_from_slice(&value.to_ne_bytes());
        self
    }

    fn u64(&mut self, offset: usize, value: u64) -> &mut Attr {
        self.0[offset..offset + 8].copy_from_slice(&value.to_ne_bytes());
        self
    }

    fn read_u32(&self, offset: usize) -> u32 {
        let mut bytes = [0; 4];
        bytes.copy_from_slice(&self.0[offset..offset + 4]);
        u32::from_ne_bytes(bytes)
    }
}

fn ptr<T>(p: *const T) -> u64 {
    p as usize as u64
}

fn bpf(cmd: i32, attr: &mut Attr, call: &'static str) -> Result<i64, CaptureError> {
    // SAFETY: `attr` is a live, writable 128-byte buffer whose pointer fields (set by the
    // callers) point to buffers that outlive this call and have the sizes the kernel will use
    // (key and value sizes of the map, instruction count, log size).
    let ret = unsafe {
        libc::syscall(
            libc::SYS_bpf,
            cmd,
            attr.0.as_mut_ptr(),
            std::mem::size_of::<Attr>(),
        )
    };
    if ret < 0 {
        return Err(CaptureError::from_errno(call, io::Error::last_os_error()));
    }
    Ok(ret)
}

fn owned_fd(raw: i64, call: &'static str) -> Result<OwnedFd, CaptureError> {
    let raw = i32::try_from(raw)
        .map_err(|_| CaptureError::Kernel(format!("{call} returned fd {raw}")))?;
    // SAFETY: the kernel just returned this fd to us and nothing else owns it.
    Ok(unsafe { OwnedFd::from_raw_fd(raw) })
}

fn is_errno(error: &CaptureError, errno: i32) -> bool {
    match error {
        CaptureError::Syscall { source, .. } | CaptureError::Permission { source, .. } => {
            source.raw_os_error() == Some(errno)
        }
        _ => false,
    }
}

/// `BPF_MAP_CREATE`.
pub fn map_create(
    map_type: u32,
    key_size: u32,
    value_size: u32,
    max_entries: u32,
    name: &str,
) -> Result<OwnedFd, CaptureError> {
    let mut attr = Attr::new();
    attr.u32(0, map_type)
        .u32(4, key_size)
        .u32(8, value_size)
        .u32(12, max_entries);
    // map_name[16] at offset 28 (after map_flags, inner_map_fd, numa_node).
    for (i, byte) in name.bytes().take(15).enumerate() {
        attr.0[28 + i] = byte;
    }
    let fd = bpf(BPF_MAP_CREATE, &mut attr, "bpf(BPF_MAP_CREATE)")?;
    owned_fd(fd, "bpf(BPF_MAP_CREATE)")
}

fn elem_attr(map: &OwnedFd, key: u64, value: u64, flags: u64) -> Attr {
    let mut attr = Attr::new();
    attr.u32(0, map.as_raw_fd() as u32)
        .u64(8, key)
        .u64(16, value)
        .u64(24, flags);
    attr
}

/// `BPF_MAP_LOOKUP_ELEM`: `Ok(false)` if the key is absent. `value` must have the map's value
/// size (times the number of possible CPUs, rounded to 8 bytes each, for per-CPU maps).
pub fn map_lookup(map: &OwnedFd, key: &[u8], value: &mut [u8]) -> Result<bool, CaptureError> {
    let mut attr = elem_attr(map, ptr(key.as_ptr()), ptr(value.as_mut_ptr()), 0);
    match bpf(BPF_MAP_LOOKUP_ELEM, &mut attr, "bpf(BPF_MAP_LOOKUP_ELEM)") {
        Ok(_) => Ok(true),
        Err(error) if is_errno(&error, libc::ENOENT) => Ok(false),
        Err(error) => Err(error),
    }
}

/// `BPF_MAP_UPDATE_ELEM`.
pub fn map_update(map: &OwnedFd, key: &[u8], value: &[u8], flags: u64) -> Result<(), CaptureError> {
    let mut attr = elem_attr(map, ptr(key.as_ptr()), ptr(value.as_ptr()), flags);
    bpf(BPF_MAP_UPDATE_ELEM, &mut attr, "bpf(BPF_MAP_UPDATE_ELEM)").map(|_| ())
}

/// `BPF_MAP_DELETE_ELEM`: `Ok(false)` if the key was absent.
pub fn map_delete(map: &OwnedFd, key: &[u8]) -> Result<bool, CaptureError> {
    let mut attr = elem_attr(map, ptr(key.as_ptr()), 0, 0);
    match bpf(BPF_MAP_DELETE_ELEM, &mut attr, "bpf(BPF_MAP_DELETE_ELEM)") {
        Ok(_) => Ok(true),
        Err(error) if is_errno(&error, libc::ENOENT) => Ok(false),
        Err(error) => Err(error),
    }
}

/// `BPF_MAP_GET_NEXT_KEY`: the key after `key` (the first with `None`), `Ok(false)` at the end.
pub fn map_get_next_key(
    map: &OwnedFd,
    key: Option<&[u8]>,
    next: &mut [u8],
) -> Result<bool, CaptureError> {
    let key = key.map_or(0, |key| ptr(key.as_ptr()));
    let mut attr = elem_attr(map, key, ptr(next.as_mut_ptr()), 0);
    match bpf(BPF_MAP_GET_NEXT_KEY, &mut attr, "bpf(BPF_MAP_GET_NEXT_KEY)") {
        Ok(_) => Ok(true),
        Err(error) if is_errno(&error, libc::ENOENT) => Ok(false),
        Err(error) => Err(error),
    }
}

/// One `BPF_MAP_LOOKUP_AND_DELETE_BATCH` call: the entries read are deleted. `keys` and
/// `values` hold room for `capacity` entries; `cursor` is the opaque batch cursor (key-size
/// bytes for hash maps), `first` for the first call. Returns the number of entries filled
/// and whether the map is exhausted.
pub fn map_lookup_and_delete_batch(
    map: &OwnedFd,
    cursor: &mut [u8],
    first: bool,
    keys: &mut [u8],
    values: &mut [u8],
    capacity: u32,
) -> Result<(u32, bool), CaptureError> {
    let (cmd, call) = (
        BPF_MAP_LOOKUP_AND_DELETE_BATCH,
        "bpf(BPF_MAP_LOOKUP_AND_DELETE_BATCH)",
    );
    let mut attr = Attr::new();
    let cursor = ptr(cursor.as_mut_ptr());
    attr.u64(0, if first { 0 } else { cursor })
        .u64(8, cursor)
        .u64(16, ptr(keys.as_mut_ptr()))
        .u64(24, ptr(values.as_mut_ptr()))
        .u32(32, capacity)
        .u32(36, map.as_raw_fd() as u32);
    match bpf(cmd, &mut attr, call) {
        Ok(_) => Ok((attr.read_u32(32), false)),
        Err(error) if is_errno(&error, libc::ENOENT) => Ok((attr.read_u32(32), true)),
        Err(error) => Err(error),
    }
}

/// Whether a batch call failed because the kernel or map type does not support it.
pub fn is_unsupported(error: &CaptureError) -> bool {
    is_errno(error, libc::EINVAL) || is_errno(error, libc::ENOTSUP) || is_errno(error, 524)
}

/// `BPF_PROG_LOAD`; on failure the verifier log is loaded again and returned in the error.
pub fn prog_load(prog_type: u32, insns: &[u8], license: &str) -> Result<OwnedFd, CaptureError> {
    let license = format!("{license}\0");
    let load = |log: Option<&mut Vec<u8>>| {
        let mut attr = Attr::new();
        attr.u32(0, prog_type)
            .u32(4, (insns.len() / 8) as u32)
            .u64(8, ptr(insns.as_ptr()))
            .u64(16, ptr(license.as_ptr()));
        if let Some(log) = log {
            attr.u32(24, 1)
                .u32(28, log.len() as u32)
                .u64(32, ptr(log.as_mut_ptr()));
        }
        // prog_name[16] at offset 48 (after kern_version and prog_flags).
        for (i, byte) in b"flint_sample".iter().enumerate() {
            attr.0[48 + i] = *byte;
        }
        bpf(BPF_PROG_LOAD, &mut attr, "bpf(BPF_PROG_LOAD)")
    };
    match load(None) {
        Ok(fd) => owned_fd(fd, "bpf(BPF_PROG_LOAD)"),
        Err(CaptureError::Syscall { source, .. })
            if source.raw_os_error() == Some(libc::EINVAL)
                || source.raw_os_error() == Some(libc::EACCES) =>
        {
            let mut log = vec![0u8; 1 << 20];
            // The retry fails the same way; what matters is the log it fills.
            let _ = load(Some(&mut log));
            let end = log.iter().position(|&b| b == 0).unwrap_or(log.len());
            Err(CaptureError::Verifier {
                source,
                log: String::from_utf8_lossy(&log[..end]).into_owned(),
            })
        }
        Err(error) => Err(error),
    }
}

/// `BPF_ENABLE_STATS` with `BPF_STATS_RUN_TIME`: the kernel measures every BPF program's run
/// time and count (shown in `/proc/self/fdinfo/<prog fd>`) until the returned fd is closed.
pub fn enable_run_time_stats() -> Result<OwnedFd, CaptureError> {
    let mut attr = Attr::new();
    attr.u32(0, 0); // BPF_STATS_RUN_TIME
    let fd = bpf(BPF_ENABLE_STATS, &mut attr, "bpf(BPF_ENABLE_STATS)")?;
    owned_fd(fd, "bpf(BPF_ENABLE_STATS)")
}

/// `struct perf_event_attr`, up to `sig_data` (`PERF_ATTR_SIZE_VER8`, 128 bytes).
#[repr(C)]
#[derive(Debug, Clone, Copy, Default)]
pub struct PerfEventAttr {
    /// `PERF_TYPE_*`
    pub type_: u32,
    /// Size of this struct.
    pub size: u32,
    /// Event within the type.
    pub config: u64,
    /// Frequency in Hz when `FLAG_FREQ` is set.
    pub sample_freq: u64,
    /// `PERF_SAMPLE_*`
    pub sample_type: u64,
    /// `PERF_FORMAT_*`
    pub read_format: u64,
    /// The bit fields (`disabled`, `inherit`, …).
    pub flags: u64,
    /// Wake up after this many samples (unused: the rings are polled on drain).
    pub wakeup_events: u32,
    /// Breakpoint type.
    pub bp_type: u32,
    /// `config1`
    pub config1: u64,
    /// `config2`
    pub config2: u64,
    /// Branch sampling.
    pub branch_sample_type: u64,
    /// User registers.
    pub sample_regs_user: u64,
    /// User stack bytes.
    pub sample_stack_user: u32,
    /// Clock for timestamps.
    pub clockid: i32,
    /// Interrupt registers.
    pub sample_regs_intr: u64,
    /// AUX watermark.
    pub aux_watermark: u32,
    /// Callchain depth limit (0: the sysctl's).
    pub sample_max_stack: u16,
    /// Reserved.
    pub reserved_2: u16,
    /// AUX sample size.
    pub aux_sample_size: u32,
    /// Reserved.
    pub reserved_3: u32,
    /// Signal data.
    pub sig_data: u64,
}

/// `PERF_TYPE_SOFTWARE`
pub const PERF_TYPE_SOFTWARE: u32 = 1;
/// `PERF_COUNT_SW_CPU_CLOCK`
pub const PERF_COUNT_SW_CPU_CLOCK: u64 = 0;
/// `PERF_SAMPLE_TID`
pub const PERF_SAMPLE_TID: u64 = 1 << 1;
/// `PERF_SAMPLE_CALLCHAIN`
pub const PERF_SAMPLE_CALLCHAIN: u64 = 1 << 5;
/// Flag bit `disabled`.
pub const FLAG_DISABLED: u64 = 1 << 0;
/// Flag bit `inherit`: threads and processes created later are counted too.
pub const FLAG_INHERIT: u64 = 1 << 1;
/// Flag bit `exclude_idle`.
pub const FLAG_EXCLUDE_IDLE: u64 = 1 << 7;
/// Flag bit `freq`.
pub const FLAG_FREQ: u64 = 1 << 10;
const PERF_FLAG_FD_CLOEXEC: libc::c_ulong = 1 << 3;
const PERF_EVENT_IOC_ENABLE: libc::c_ulong = 0x2400;
const PERF_EVENT_IOC_DISABLE: libc::c_ulong = 0x2401;
const PERF_EVENT_IOC_SET_OUTPUT: libc::c_ulong = 0x2405;
const PERF_EVENT_IOC_SET_BPF: libc::c_ulong = 0x4004_2408;

/// `perf_event_open(attr, pid, cpu, -1, PERF_FLAG_FD_CLOEXEC)`.
pub fn perf_event_open(attr: &PerfEventAttr, pid: i32, cpu: i32) -> Result<OwnedFd, CaptureError> {
    let mut attr = *attr;
    attr.size = std::mem::size_of::<PerfEventAttr>() as u32;
    // SAFETY: `attr` is a valid perf_event_attr of the size it declares, alive for the call.
    let ret = unsafe {
        libc::syscall(
            libc::SYS_perf_event_open,
            &attr as *const PerfEventAttr,
            pid,
            cpu,
            -1,
            PERF_FLAG_FD_CLOEXEC,
        )
    };
    if ret < 0 {
        return Err(CaptureError::from_errno(
            "perf_event_open",
            io::Error::last_os_error(),
        ));
    }
    owned_fd(ret, "perf_event_open")
}

fn ioctl(
    fd: &OwnedFd,
    request: libc::c_ulong,
    arg: libc::c_ulong,
    call: &'static str,
) -> Result<(), CaptureError> {
    // SAFETY: the perf ioctls used here take an integer argument (a value or an fd), or none,
    // and no pointers.
    let ret = unsafe { libc::ioctl(fd.as_raw_fd(), request as _, arg) };
    if ret < 0 {
        return Err(CaptureError::from_errno(call, io::Error::last_os_error()));
    }
    Ok(())
}

/// `PERF_EVENT_IOC_SET_BPF`: runs `prog` on every sample of `event`.
pub fn perf_set_bpf(event: &OwnedFd, prog: &OwnedFd) -> Result<(), CaptureError> {
    ioctl(
        event,
        PERF_EVENT_IOC_SET_BPF,
        prog.as_raw_fd() as libc::c_ulong,
        "ioctl(PERF_EVENT_IOC_SET_BPF)",
    )
}

/// `PERF_EVENT_IOC_SET_OUTPUT`: `event` writes its samples into `target`'s ring (same CPU).
pub fn perf_set_output(event: &OwnedFd, target: &OwnedFd) -> Result<(), CaptureError> {
    ioctl(
        event,
        PERF_EVENT_IOC_SET_OUTPUT,
        target.as_raw_fd() as libc::c_ulong,
        "ioctl(PERF_EVENT_IOC_SET_OUTPUT)",
    )
}

/// Whether `perf_event_open` failed because the thread is gone (`ESRCH`).
pub fn is_no_such_process(error: &CaptureError) -> bool {
    is_errno(error, libc::ESRCH)
}

/// `PERF_EVENT_IOC_ENABLE`.
pub fn perf_enable(event: &OwnedFd) -> Result<(), CaptureError> {
    ioctl(
        event,
        PERF_EVENT_IOC_ENABLE,
        0,
        "ioctl(PERF_EVENT_IOC_ENABLE)",
    )
}

/// `PERF_EVENT_IOC_DISABLE`.
pub fn perf_disable(event: &OwnedFd) -> Result<(), CaptureError> {
    ioctl(
        event,
        PERF_EVENT_IOC_DISABLE,
        0,
        "ioctl(PERF_EVENT_IOC_DISABLE)",
    )
}

/// The system's page size.
pub fn page_size() -> usize {
    // SAFETY: sysconf has no memory-safety preconditions.
    let size = unsafe { libc::sysconf(libc::_SC_PAGESIZE) };
    usize::try_from(size)
        .ok()
        .filter(|&s| s > 0)
        .unwrap_or(4096)
}

/// A perf event's mmap ring buffer: the metadata page and `2^n` data pages. Unmapped on drop.
pub struct PerfRing {
    base: NonNull<u8>,
    len: usize,
    page: usize,
}

// SAFETY: the mapping is owned by this value alone; the kernel writes to it concurrently
// through the documented head/tail protocol, which `read` follows.
unsafe impl Send for PerfRing {}

const DATA_HEAD_OFFSET: usize = 1024;
const DATA_TAIL_OFFSET: usize = 1032;

impl PerfRing {
    /// Maps `data_pages` (a power of two) data pages of `event`'s ring.
    pub fn map(event: &OwnedFd, data_pages: usize) -> Result<PerfRing, CaptureError> {
        let page = page_size();
        let len = page * (data_pages + 1);
        // SAFETY: a fresh shared mapping of the perf fd; the kernel picks the address.
        let base = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                len,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_SHARED,
                event.as_raw_fd(),
                0,
            )
        };
        if base == libc::MAP_FAILED {
            return Err(CaptureError::from_errno(
                "mmap(perf ring)",
                io::Error::last_os_error(),
            ));
        }
        let base = NonNull::new(base.cast::<u8>()).ok_or_else(|| {
            CaptureError::Kernel("mmap(perf ring) returned a null pointer".into())
        })?;
        Ok(PerfRing { base, len, page })
    }

    /// Copies out every record between the tail and the head, then advances the tail, so the
    /// kernel can reuse the space. Records are returned as one byte vector each (wrapping
    /// records are joined).
    pub fn read(&mut self) -> Vec<Vec<u8>> {
        let data_size = self.len - self.page;
        // SAFETY: offsets 1024 and 1032 lie in the metadata page and are 8-byte aligned
        // u64 fields (data_head, data_tail) of perf_event_mmap_page.
        let head_ptr = unsafe { self.base.as_ptr().add(DATA_HEAD_OFFSET) }.cast::<u64>();
        // SAFETY: as above.
        let tail_ptr = unsafe { self.base.as_ptr().add(DATA_TAIL_OFFSET) }.cast::<u64>();
        // SAFETY: aligned reads of fields the kernel updates; volatile because it does.
        let head = unsafe { head_ptr.read_volatile() };
        fence(Ordering::Acquire);
        // SAFETY: as above; only we write data_tail.
        let mut tail = unsafe { tail_ptr.read_volatile() };
        // SAFETY: the data area starts one page after the base and spans `data_size` bytes.
        let data =
            unsafe { std::slice::from_raw_parts(self.base.as_ptr().add(self.page), data_size) };
        let copy = |from: u64, len: usize| -> Vec<u8> {
            let start = (from % data_size as u64) as usize;
            let first = len.min(data_size - start);
            let mut out = Vec::with_capacity(len);
            out.extend_from_slice(&data[start..start + first]);
            out.extend_from_slice(&data[..len - first]);
            out
        };
        let mut records = Vec::new();
        while head.wrapping_sub(tail) >= 8 {
            let header = copy(tail, 8);
            let size = usize::from(u16::from_ne_bytes([header[6], header[7]]));
            if size < 8 || head.wrapping_sub(tail) < size as u64 || size > data_size {
                // A malformed record: skip to the head rather than read garbage forever.
                tail = head;
                break;
            }
            records.push(copy(tail, size));
            tail = tail.wrapping_add(size as u64);
        }
        fence(Ordering::Release);
        // SAFETY: aligned write of data_tail, which the kernel reads to know what is free.
        unsafe { tail_ptr.write_volatile(tail) };
        records
    }
}

impl Drop for PerfRing {
    fn drop(&mut self) {
        // SAFETY: `base` and `len` are exactly the mapping made in `map`, unmapped once.
        unsafe {
            libc::munmap(self.base.as_ptr().cast(), self.len);
        }
    }
}

/// Waits until every BPF program that started before the call has returned: an RCU grace
/// period (`membarrier(MEMBARRIER_CMD_GLOBAL)` calls `synchronize_rcu`). Falls back to a
/// 20 ms sleep, far longer than one program run, when membarrier is unavailable.
pub fn wait_for_running_programs() {
    const MEMBARRIER_CMD_GLOBAL: libc::c_int = 1;
    // SAFETY: membarrier takes two integers and touches no user memory.
    let ret = unsafe { libc::syscall(libc::SYS_membarrier, MEMBARRIER_CMD_GLOBAL, 0, 0) };
    if ret != 0 {
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
}

/// Lifts `RLIMIT_MEMLOCK`, which kernels before 5.11 charge BPF maps against. Failure is
/// ignored: newer kernels account maps to the memory cgroup instead.
pub fn raise_memlock_limit() {
    let limit = libc::rlimit {
        rlim_cur: libc::RLIM_INFINITY,
        rlim_max: libc::RLIM_INFINITY,
    };
    // SAFETY: `limit` is a valid rlimit for the duration of the call.
    let _ = unsafe { libc::setrlimit(libc::RLIMIT_MEMLOCK, &limit) };
}
