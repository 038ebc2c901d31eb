//! The BPF `perf_event` program that counts stacks in the kernel.
//!
//! It runs on every `cpu-clock` sample (idle excluded), reads the current generation `g` (0
//! or 1) from the one-entry array `generation`, and counts the sample under the key
//! `(pid, tid, user stack id, kernel stack id)` in `counts[g]`, with the stacks stored in
//! `stacks[g]`. A drain flips `generation`, waits for an RCU grace period (every program that
//! read the old value has then returned) and reads and clears the old generation's maps.
//!
//! Stack ids are what `bpf_get_stackid` returned: a negative errno when the stack could not
//! be taken (`-EEXIST`: bucket collision, `-EFAULT`: no stack); the kernel stack id is
//! [`KSTACK_USER_MODE`] for samples taken in user mode, where no kernel stack exists.
//! `errors` (per-CPU array, two slots per generation) counts samples taken and samples lost
//! to a full counts map.
//!
//! Stack frame (offsets from `r10`): key at -16 (`pid` -16, `tid` -12, `user` -8, `kernel`
//! -4), the value 1 at -24, a `u32` scratch key at -28.
//!
//! ```text
//!     r6 = r1                          ; ctx (struct bpf_perf_event_data *)
//!     call bpf_get_current_pid_tgid
//!     r7 = r0
//!     r1 = r7
//!     r1 >>= 32
//!     *(u32 *)(r10 - 16) = r1          ; key.pid = tgid
//!     *(u32 *)(r10 - 12) = r7          ; key.tid
//!   [only with a pid filter:]
//!     r1 = map pids
//!     r2 = r10 ; r2 += -16
//!     call bpf_map_lookup_elem
//!     if r0 == 0 goto out              ; not a wanted process
//!   [end]
//!     *(u32 *)(r10 - 28) = 0
//!     r1 = map generation
//!     r2 = r10 ; r2 += -28
//!     call bpf_map_lookup_elem
//!     if r0 == 0 goto out
//!     r8 = *(u32 *)(r0 + 0)
//!     r8 &= 1                          ; g
//!     errors[2g + SAMPLES] += 1        ; (lookup, then lock add)
//!     r1 = r6
//!     r2 = g ? map stacks1 : map stacks0
//!     r3 = BPF_F_USER_STACK
//!     call bpf_get_stackid
//!     *(u32 *)(r10 - 8) = r0           ; key.user
//!     *(u32 *)(r10 - 4) = -1           ; key.kernel = KSTACK_USER_MODE
//!     r1 = *(u64 *)(r6 + MODE)         ; x86_64: regs.cs; aarch64: regs.pstate
//!     r1 &= MODE_MASK
//!     if r1 == MODE_USER goto count
//!     r1 = r6
//!     r2 = g ? map stacks1 : map stacks0
//!     r3 = 0
//!     call bpf_get_stackid
//!     *(u32 *)(r10 - 4) = r0           ; key.kernel
//!   count:
//!     r9 = g ? map counts1 : map counts0
//!     r1 = r9 ; r2 = r10 ; r2 += -16
//!     call bpf_map_lookup_elem
//!     if r0 == 0 goto insert
//!     r1 = 1
//!     lock *(u64 *)(r0 + 0) += r1
//!     goto out
//!   insert:
//!     *(u64 *)(r10 - 24) = 1
//!     r1 = r9 ; r2 = r10 ; r2 += -16 ; r3 = r10 ; r3 += -24
//!     r4 = BPF_NOEXIST
//!     call bpf_map_update_elem
//!     if r0 == 0 goto out
//!     if r0 != -EEXIST goto full        ; another CPU inserted the key first: add to it
//!     r1 = r9 ; r2 = r10 ; r2 += -16
//!     call bpf_map_lookup_elem
//!     if r0 == 0 goto full
//!     r1 = 1
//!     lock *(u64 *)(r0 + 0) += r1
//!     goto out
//!   full:
//!     errors[2g + MAP_FULL] += 1
//!   out:
//!     r0 = 0
//!     exit
//! ```

use crate::insn::{Alu, Cond, Insn, Reg, Size};

/// `bpf_map_lookup_elem`
pub const HELPER_MAP_LOOKUP_ELEM: i32 = 1;
/// `bpf_map_update_elem`
pub const HELPER_MAP_UPDATE_ELEM: i32 = 2;
/// `bpf_get_current_pid_tgid`
pub const HELPER_GET_CURRENT_PID_TGID: i32 = 14;
/// `bpf_get_stackid`
pub const HELPER_GET_STACKID: i32 = 27;
/// `bpf_get_stackid` flag: the user stack instead of the kernel stack.
pub const BPF_F_USER_STACK: i32 = 1 << 8;
/// `bpf_map_update_elem` flag: fail with `-EEXIST` if the key exists.
pub const BPF_NOEXIST: i32 = 1;
/// `EEXIST`, as `bpf_get_stackid` and `bpf_map_update_elem` return it negated.
pub const EEXIST: i32 = 17;
/// `EFAULT`, as `bpf_get_stackid` returns it negated when there is no stack.
pub const EFAULT: i32 = 14;
/// Kernel stack id of samples taken in user mode (no kernel stack was asked for).
pub const KSTACK_USER_MODE: i32 = -1;
/// Slot of the sample counter within a generation's pair in `errors`.
pub const ERROR_SAMPLES: u32 = 0;
/// Slot of the counts-map-full counter within a generation's pair in `errors`.
pub const ERROR_MAP_FULL: u32 = 1;
/// Entries of the `errors` map: two counters per generation.
pub const ERROR_SLOTS: u32 = 4;
/// Size of a counts-map key: `pid: u32, tid: u32, user: i32, kernel: i32`.
pub const COUNTS_KEY_SIZE: u32 = 16;

/// Where the context says whether the sample interrupted user mode: byte offset of the
/// register in `bpf_user_pt_regs_t`, the mask, and the masked value meaning "user".
#[cfg(target_arch = "x86_64")]
const USER_MODE_TEST: Option<(i16, i32, i32)> = Some((17 * 8, 3, 3)); // pt_regs.cs, RPL 3
#[cfg(target_arch = "aarch64")]
const USER_MODE_TEST: Option<(i16, i32, i32)> = Some((33 * 8, 0xf, 0)); // pstate, EL0t
#[cfg(not(any(target_arch = "x86_64", target_arch = "aarch64")))]
const USER_MODE_TEST: Option<(i16, i32, i32)> = None;

/// The file descriptors of the maps the program refers to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MapFds {
    /// One-entry `ARRAY` (`u32 → u32`): the current generation.
    pub generation: i32,
    /// Two `HASH` maps (16-byte key → `u64`), one per generation.
    pub counts: [i32; 2],
    /// Two `STACK_TRACE` maps, one per generation.
    pub stacks: [i32; 2],
    /// `PERCPU_ARRAY` (`u32 → u64`) of [`ERROR_SLOTS`] counters.
    pub errors: i32,
    /// `HASH` (`u32 tgid → u32`) of wanted processes, or `None` to sample all.
    pub pids: Option<i32>,
}

/// A tiny assembler: instructions plus forward jumps to named labels.
struct Asm {
    insns: Vec<Insn>,
    labels: Vec<(&'static str, usize)>,
    fixups: Vec<(usize, &'static str)>,
}

impl Asm {
    fn new() -> Asm {
        Asm {
            insns: Vec::new(),
            labels: Vec::new(),
            fixups: Vec::new(),
        }
    }

    fn push(&mut self, insn: Insn) {
        self.insns.push(insn);
    }

    fn map(&mut self, dst: Reg, fd: i32) {
        self.insns.extend(Insn::ld_map_fd(dst, fd));
    }

    fn jump_to(&mut self, insn: Insn, label: &'static str) {
        self.fixups.push((self.insns.len(), label));
        self.insns.push(insn);
    }

    fn label(&mut self, name: &'static str) {
        self.labels.push((name, self.insns.len()));
    }

    /// `dst = g ? fds[1] : fds[0]` with g in r8.
    fn map_by_generation(&mut self, dst: Reg, fds: [i32; 2], label_one: &'static str) {
        let done = label_one;
        // if r8 != 0 skip the first ld_imm64 (2 slots) and its jump (1 slot)
        self.push(Insn::jump_imm(Cond::Ne, Reg::R8, 0, 3));
        self.map(dst, fds[0]);
        self.jump_to(Insn::jump(0), done);
        self.map(dst, fds[1]);
        self.label(done);
    }

    /// `errors[2 * r8 + slot] += 1`; clobbers r0–r5.
    fn count_error(&mut self, errors: i32, slot: u32, skip: &'static str) {
        self.push(Insn::mov_reg(Reg::R1, Reg::R8));
        self.push(Insn::alu_imm(Alu::Lsh, Reg::R1, 1));
        self.push(Insn::alu_imm(Alu::Add, Reg::R1, slot as i32));
        self.push(Insn::store_reg(Size::W, Reg::R10, -28, Reg::R1));
        self.map(Reg::R1, errors);
        self.push(Insn::mov_reg(Reg::R2, Reg::R10));
        self.push(Insn::alu_imm(Alu::Add, Reg::R2, -28));
        self.push(Insn::call(HELPER_MAP_LOOKUP_ELEM));
        self.jump_to(Insn::jump_imm(Cond::Eq, Reg::R0, 0, 0), skip);
        self.push(Insn::mov_imm(Reg::R1, 1));
        self.push(Insn::atomic_add(Size::Dw, Reg::R0, 0, Reg::R1));
    }

    fn finish(mut self) -> Vec<Insn> {
        for (at, name) in &self.fixups {
            let target = self
                .labels
                .iter()
                .find(|(label, _)| label == name)
                .map(|&(_, target)| target);
            // Labels are all defined below; a missing one is a bug caught by the tests.
            let target = target.unwrap_or(*at + 1);
            let offset = target as i64 - (*at as i64 + 1);
            self.insns[*at].off = offset as i16;
        }
        self.insns
    }
}

/// The sampling program for the given maps (see the module documentation for its listing).
pub fn program(fds: &MapFds) -> Vec<Insn> {
    let mut a = Asm::new();
    a.push(Insn::mov_reg(Reg::R6, Reg::R1));
    a.push(Insn::call(HELPER_GET_CURRENT_PID_TGID));
    a.push(Insn::mov_reg(Reg::R7, Reg::R0));
    a.push(Insn::mov_reg(Reg::R1, Reg::R7));
    a.push(Insn::alu_imm(Alu::Rsh, Reg::R1, 32));
    a.push(Insn::store_reg(Size::W, Reg::R10, -16, Reg::R1));
    a.push(Insn::store_reg(Size::W, Reg::R10, -12, Reg::R7));
    if let Some(pids) = fds.pids {
        a.map(Reg::R1, pids);
        a.push(Insn::mov_reg(Reg::R2, Reg::R10));
        a.push(Insn::alu_imm(Alu::Add, Reg::R2, -16));
        a.push(Insn::call(HELPER_MAP_LOOKUP_ELEM));
        a.jump_to(Insn::jump_imm(Cond::Eq, Reg::R0, 0, 0), "out");
    }
    // Generation.
    a.push(Insn::store_imm(Size::W, Reg::R10, -28, 0));
    a.map(Reg::R1, fds.generation);
    a.push(Insn::mov_reg(Reg::R2, Reg::R10));
    a.push(Insn::alu_imm(Alu::Add, Reg::R2, -28));
    a.push(Insn::call(HELPER_MAP_LOOKUP_ELEM));
    a.jump_to(Insn::jump_imm(Cond::Eq, Reg::R0, 0, 0), "out");
    a.push(Insn::load(Size::W, Reg::R8, Reg::R0, 0));
    a.push(Insn::alu_imm(Alu::And, Reg::R8, 1));
    a.count_error(fds.errors, ERROR_SAMPLES, "user_stack");
    // User stack.
    a.label("user_stack");
    a.push(Insn::mov_reg(Reg::R1, Reg::R6));
    a.map_by_generation(Reg::R2, fds.stacks, "user_stack_map");
    a.push(Insn::mov_imm(Reg::R3, BPF_F_USER_STACK));
    a.push(Insn::call(HELPER_GET_STACKID));
    a.push(Insn::store_reg(Size::W, Reg::R10, -8, Reg::R0));
    // Kernel stack, for samples taken in kernel mode.
    a.push(Insn::store_imm(Size::W, Reg::R10, -4, KSTACK_USER_MODE));
    if let Some((offset, mask, user)) = USER_MODE_TEST {
        a.push(Insn::load(Size::Dw, Reg::R1, Reg::R6, offset));
        a.push(Insn::alu_imm(Alu::And, Reg::R1, mask));
        a.jump_to(Insn::jump_imm(Cond::Eq, Reg::R1, user, 0), "count");
    }
    a.push(Insn::mov_reg(Reg::R1, Reg::R6));
    a.map_by_generation(Reg::R2, fds.stacks, "kernel_stack_map");
    a.push(Insn::mov_imm(Reg::R3, 0));
    a.push(Insn::call(HELPER_GET_STACKID));
    a.push(Insn::store_reg(Size::W, Reg::R10, -4, Reg::R0));
    // Count.
    a.label("count");
    a.map_by_generation(Reg::R9, fds.counts, "counts_map");
    a.push(Insn::mov_reg(Reg::R1, Reg::R9));
    a.push(Insn::mov_reg(Reg::R2, Reg::R10));
    a.push(Insn::alu_imm(Alu::Add, Reg::R2, -16));
    a.push(Insn::call(HELPER_MAP_LOOKUP_ELEM));
    a.jump_to(Insn::jump_imm(Cond::Eq, Reg::R0, 0, 0), "insert");
    a.push(Insn::mov_imm(Reg::R1, 1));
    a.push(Insn::atomic_add(Size::Dw, Reg::R0, 0, Reg::R1));
    a.jump_to(Insn::jump(0), "out");
    a.label("insert");
    a.push(Insn::store_imm(Size::Dw, Reg::R10, -24, 1));
    a.push(Insn::mov_reg(Reg::R1, Reg::R9));
    a.push(Insn::mov_reg(Reg::R2, Reg::R10));
    a.push(Insn::alu_imm(Alu::Add, Reg::R2, -16));
    a.push(Insn::mov_reg(Reg::R3, Reg::R10));
    a.push(Insn::alu_imm(Alu::Add, Reg::R3, -24));
    a.push(Insn::mov_imm(Reg::R4, BPF_NOEXIST));
    a.push(Insn::call(HELPER_MAP_UPDATE_ELEM));
    a.jump_to(Insn::jump_imm(Cond::Eq, Reg::R0, 0, 0), "out");
    a.jump_to(Insn::jump_imm(Cond::Ne, Reg::R0, -EEXIST, 0), "full");
    a.push(Insn::mov_reg(Reg::R1, Reg::R9));
    a.push(Insn::mov_reg(Reg::R2, Reg::R10));
    a.push(Insn::alu_imm(Alu::Add, Reg::R2, -16));
    a.push(Insn::call(HELPER_MAP_LOOKUP_ELEM));
    a.jump_to(Insn::jump_imm(Cond::Eq, Reg::R0, 0, 0), "full");
    a.push(Insn::mov_imm(Reg::R1, 1));
    a.push(Insn::atomic_add(Size::Dw, Reg::R0, 0, Reg::R1));
    a.jump_to(Insn::jump(0), "out");
    a.label("full");
    a.count_error(fds.errors, ERROR_MAP_FULL, "out");
    a.label("out");
    a.push(Insn::mov_imm(Reg::R0, 0));
    a.push(Insn::exit());
    a.finish()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::insn::encode;

    const FDS: MapFds = MapFds {
        generation: 3,
        counts: [4, 5],
        stacks: [6, 7],
        errors: 8,
        pids: Some(9),
    };

    fn listing(fds: &MapFds) -> String {
        let bytes = encode(&program(fds));
        bytes
            .chunks(8)
            .enumerate()
            .map(|(i, insn)| {
                let hex: String = insn.iter().map(|b| format!("{b:02x}")).collect();
                format!("{i:3}: {hex}\n")
            })
            .collect()
    }

    /// The whole program for fixed map fds, byte for byte. `CAPTURE_EBPF_BLESS=1` rewrites the
    /// golden file after a deliberate change (review the diff of the listing too).
    #[cfg(target_arch = "x86_64")]
    #[test]
    fn whole_program_golden_bytes() {
        let path = concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/tests/data/program-x86_64.golden"
        );
        let actual = listing(&FDS);
        if std::env::var_os("CAPTURE_EBPF_BLESS").is_some() {
            std::fs::write(path, &actual).unwrap();
        }
        let expected = std::fs::read_to_string(path).unwrap();
        assert_eq!(actual, expected, "program bytes changed; see {path}");
    }

    #[test]
    fn jumps_land_on_their_labels() {
        let insns = program(&FDS);
        let out = insns.len() - 2;
        // Every jump goes forward, within the program; "out" is the r0 = 0 before exit.
        let mut to_out = 0;
        for (i, insn) in insns.iter().enumerate() {
            let is_jump = insn.code & 0x07 == 0x05 && insn.code != 0x85 && insn.code != 0x95;
            if is_jump {
                let target = i as i64 + 1 + i64::from(insn.off);
                assert!(target > i as i64 && (target as usize) < insns.len(), "{i}");
                if target as usize == out {
                    to_out += 1;
                }
            }
        }
        assert!(to_out >= 5, "{to_out} jumps to out");
        assert_eq!(insns[out], Insn::mov_imm(Reg::R0, 0));
    }

    #[test]
    fn map_fds_appear_in_ld_imm64() {
        let insns = program(&FDS);
        let mut fds: Vec<i32> = insns
            .iter()
            .filter(|insn| insn.code == 0x18)
            .map(|insn| insn.imm)
            .collect();
        fds.sort_unstable();
        fds.dedup();
        assert_eq!(fds, vec![3, 4, 5, 6, 7, 8, 9]);
        let without_filter = program(&MapFds { pids: None, ..FDS });
        assert_eq!(insns.len() - without_filter.len(), 6);
    }
}
