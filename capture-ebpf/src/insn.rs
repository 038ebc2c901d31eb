//! A small typed encoder for eBPF instructions.
//!
//! Only the instructions the sampling program needs: 64-bit ALU with immediates and registers,
//! loads and stores of words and double words, the atomic add, conditional jumps, helper calls,
//! exit, and the two-slot `ld_imm64` that carries a map fd. Each constructor yields one
//! [`Insn`] (eight bytes on the wire); `ld_map_fd` yields two.
//!
//! The encoding follows the kernel's `struct bpf_insn`: `code: u8`, `dst_reg: 4 bits`,
//! `src_reg: 4 bits`, `off: i16`, `imm: i32`, little-endian (`include/uapi/linux/bpf.h`).

/// One of the eleven eBPF registers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Reg {
    /// Return value of helpers and of the program.
    R0,
    /// First argument (the context on entry).
    R1,
    /// Second argument.
    R2,
    /// Third argument.
    R3,
    /// Fourth argument.
    R4,
    /// Fifth argument.
    R5,
    /// Callee-saved.
    R6,
    /// Callee-saved.
    R7,
    /// Callee-saved.
    R8,
    /// Callee-saved.
    R9,
    /// Read-only frame pointer (top of the 512-byte stack).
    R10,
}

impl Reg {
    fn num(self) -> u8 {
        self as u8
    }
}

/// Operand size of a load or store.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Size {
    /// 32 bits.
    W,
    /// 64 bits.
    Dw,
}

impl Size {
    fn bits(self) -> u8 {
        match self {
            Size::W => BPF_W,
            Size::Dw => BPF_DW,
        }
    }
}

/// A 64-bit arithmetic operation.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Alu {
    /// `dst += src`
    Add,
    /// `dst &= src`
    And,
    /// `dst <<= src`
    Lsh,
    /// `dst >>= src` (logical)
    Rsh,
    /// `dst = src`
    Mov,
}

impl Alu {
    fn bits(self) -> u8 {
        match self {
            Alu::Add => 0x00,
            Alu::And => 0x50,
            Alu::Lsh => 0x60,
            Alu::Rsh => 0x70,
            Alu::Mov => 0xb0,
        }
    }
}

/// A conditional jump's comparison (64-bit).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Cond {
    /// `==`
    Eq,
    /// `!=`
    Ne,
    /// signed `>=`
    Sge,
}

impl Cond {
    fn bits(self) -> u8 {
        match self {
            Cond::Eq => 0x10,
            Cond::Ne => 0x50,
            Cond::Sge => 0x70,
        }
    }
}

// Instruction classes.
const BPF_LD: u8 = 0x00;
const BPF_LDX: u8 = 0x01;
const BPF_ST: u8 = 0x02;
const BPF_STX: u8 = 0x03;
const BPF_JMP: u8 = 0x05;
const BPF_ALU64: u8 = 0x07;
// Sizes and modes.
const BPF_W: u8 = 0x00;
const BPF_DW: u8 = 0x18;
const BPF_IMM: u8 = 0x00;
const BPF_MEM: u8 = 0x60;
const BPF_ATOMIC: u8 = 0xc0;
// Operand source.
const BPF_K: u8 = 0x00;
const BPF_X: u8 = 0x08;
// Jump operations.
const BPF_JA: u8 = 0x00;
const BPF_CALL: u8 = 0x80;
const BPF_EXIT: u8 = 0x90;
/// `src_reg` of an `ld_imm64` whose immediate is a map fd.
const BPF_PSEUDO_MAP_FD: u8 = 1;
/// Atomic operation `BPF_ADD` (in `imm` of a `BPF_ATOMIC` store).
const BPF_ATOMIC_ADD: i32 = 0x00;

/// One eight-byte eBPF instruction slot.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Insn {
    /// Opcode: class | size/op | mode/source.
    pub code: u8,
    /// Destination register.
    pub dst: u8,
    /// Source register (or a pseudo marker such as `BPF_PSEUDO_MAP_FD`).
    pub src: u8,
    /// Signed offset (jumps: in instructions, relative to the next one; memory: bytes).
    pub off: i16,
    /// Signed immediate.
    pub imm: i32,
}

impl Insn {
    fn new(code: u8, dst: Reg, src: Reg, off: i16, imm: i32) -> Insn {
        Insn {
            code,
            dst: dst.num(),
            src: src.num(),
            off,
            imm,
        }
    }

    /// The instruction as the kernel reads it.
    pub fn to_bytes(self) -> [u8; 8] {
        let off = self.off.to_le_bytes();
        let imm = self.imm.to_le_bytes();
        [
            self.code,
            (self.src << 4) | (self.dst & 0x0f),
            off[0],
            off[1],
            imm[0],
            imm[1],
            imm[2],
            imm[3],
        ]
    }

    /// `dst op= imm` on 64 bits.
    pub fn alu_imm(op: Alu, dst: Reg, imm: i32) -> Insn {
        Insn::new(BPF_ALU64 | op.bits() | BPF_K, dst, Reg::R0, 0, imm)
    }

    /// `dst op= src` on 64 bits.
    pub fn alu_reg(op: Alu, dst: Reg, src: Reg) -> Insn {
        Insn::new(BPF_ALU64 | op.bits() | BPF_X, dst, src, 0, 0)
    }

    /// `dst = imm` (sign-extended to 64 bits).
    pub fn mov_imm(dst: Reg, imm: i32) -> Insn {
        Insn::alu_imm(Alu::Mov, dst, imm)
    }

    /// `dst = src`.
    pub fn mov_reg(dst: Reg, src: Reg) -> Insn {
        Insn::alu_reg(Alu::Mov, dst, src)
    }

    /// `dst = *(size *)(src + off)`.
    pub fn load(size: Size, dst: Reg, src: Reg, off: i16) -> Insn {
        Insn::new(BPF_LDX | size.bits() | BPF_MEM, dst, src, off, 0)
    }

    /// `*(size *)(dst + off) = src`.
    pub fn store_reg(size: Size, dst: Reg, off: i16, src: Reg) -> Insn {
        Insn::new(BPF_STX | size.bits() | BPF_MEM, dst, src, off, 0)
    }

    /// `*(size *)(dst + off) = imm`.
    pub fn store_imm(size: Size, dst: Reg, off: i16, imm: i32) -> Insn {
        Insn::new(BPF_ST | size.bits() | BPF_MEM, dst, Reg::R0, off, imm)
    }

    /// `lock *(size *)(dst + off) += src`.
    pub fn atomic_add(size: Size, dst: Reg, off: i16, src: Reg) -> Insn {
        Insn::new(
            BPF_STX | size.bits() | BPF_ATOMIC,
            dst,
            src,
            off,
            BPF_ATOMIC_ADD,
        )
    }

    /// `if dst cond imm goto pc + 1 + off`.
    pub fn jump_imm(cond: Cond, dst: Reg, imm: i32, off: i16) -> Insn {
        Insn::new(BPF_JMP | cond.bits() | BPF_K, dst, Reg::R0, off, imm)
    }

    /// `goto pc + 1 + off`.
    pub fn jump(off: i16) -> Insn {
        Insn::new(BPF_JMP | BPF_JA, Reg::R0, Reg::R0, off, 0)
    }

    /// Call helper number `helper` (arguments in r1–r5, result in r0).
    pub fn call(helper: i32) -> Insn {
        Insn::new(BPF_JMP | BPF_CALL, Reg::R0, Reg::R0, 0, helper)
    }

    /// Return r0.
    pub fn exit() -> Insn {
        Insn::new(BPF_JMP | BPF_EXIT, Reg::R0, Reg::R0, 0, 0)
    }

    /// `dst = map` as the two-slot `ld_imm64` with `src_reg = BPF_PSEUDO_MAP_FD`; the kernel
    /// replaces the fd with the map's address when it loads the program.
    pub fn ld_map_fd(dst: Reg, fd: i32) -> [Insn; 2] {
        [
            Insn {
                code: BPF_LD | BPF_DW | BPF_IMM,
                dst: dst.num(),
                src: BPF_PSEUDO_MAP_FD,
                off: 0,
                imm: fd,
            },
            Insn {
                code: 0,
                dst: 0,
                src: 0,
                off: 0,
                imm: 0,
            },
        ]
    }
}

/// The program as the bytes `BPF_PROG_LOAD` takes.
pub fn encode(program: &[Insn]) -> Vec<u8> {
    program.iter().flat_map(|insn| insn.to_bytes()).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hex(insn: Insn) -> String {
        insn.to_bytes().iter().map(|b| format!("{b:02x}")).collect()
    }

    // Expected bytes as `llvm-objdump -d` prints them for the same instructions.
    #[test]
    fn alu_and_moves() {
        assert_eq!(hex(Insn::mov_imm(Reg::R0, 0)), "b700000000000000");
        assert_eq!(hex(Insn::mov_imm(Reg::R3, 256)), "b703000000010000");
        assert_eq!(hex(Insn::mov_imm(Reg::R1, -1)), "b7010000ffffffff");
        assert_eq!(hex(Insn::mov_reg(Reg::R6, Reg::R1)), "bf16000000000000");
        assert_eq!(
            hex(Insn::alu_imm(Alu::Add, Reg::R2, -16)),
            "07020000f0ffffff"
        );
        assert_eq!(
            hex(Insn::alu_imm(Alu::Rsh, Reg::R1, 32)),
            "7701000020000000"
        );
        assert_eq!(hex(Insn::alu_imm(Alu::Lsh, Reg::R1, 1)), "6701000001000000");
        assert_eq!(hex(Insn::alu_imm(Alu::And, Reg::R1, 3)), "5701000003000000");
        assert_eq!(
            hex(Insn::alu_reg(Alu::Add, Reg::R2, Reg::R10)),
            "0fa2000000000000"
        );
    }

    #[test]
    fn loads_and_stores() {
        assert_eq!(
            hex(Insn::load(Size::W, Reg::R8, Reg::R0, 0)),
            "6108000000000000"
        );
        assert_eq!(
            hex(Insn::load(Size::Dw, Reg::R1, Reg::R6, 136)),
            "7961880000000000"
        );
        assert_eq!(
            hex(Insn::store_reg(Size::W, Reg::R10, -16, Reg::R1)),
            "631af0ff00000000"
        );
        assert_eq!(
            hex(Insn::store_reg(Size::Dw, Reg::R10, -8, Reg::R7)),
            "7b7af8ff00000000"
        );
        assert_eq!(
            hex(Insn::store_imm(Size::W, Reg::R10, -32, 0)),
            "620ae0ff00000000"
        );
        assert_eq!(
            hex(Insn::store_imm(Size::Dw, Reg::R10, -24, 1)),
            "7a0ae8ff01000000"
        );
        assert_eq!(
            hex(Insn::atomic_add(Size::Dw, Reg::R0, 0, Reg::R1)),
            "db10000000000000"
        );
    }

    #[test]
    fn jumps_calls_exit() {
        assert_eq!(
            hex(Insn::jump_imm(Cond::Eq, Reg::R0, 0, 5)),
            "1500050000000000"
        );
        assert_eq!(
            hex(Insn::jump_imm(Cond::Ne, Reg::R8, 0, 3)),
            "5508030000000000"
        );
        assert_eq!(
            hex(Insn::jump_imm(Cond::Sge, Reg::R0, 0, -2)),
            "7500feff00000000"
        );
        assert_eq!(hex(Insn::jump(2)), "0500020000000000");
        assert_eq!(hex(Insn::call(27)), "850000001b000000");
        assert_eq!(hex(Insn::call(14)), "850000000e000000");
        assert_eq!(hex(Insn::exit()), "9500000000000000");
    }

    #[test]
    fn ld_map_fd_takes_two_slots() {
        let [first, second] = Insn::ld_map_fd(Reg::R1, 7);
        assert_eq!(hex(first), "1811000007000000");
        assert_eq!(hex(second), "0000000000000000");
        let [first, _] = Insn::ld_map_fd(Reg::R2, 0x1234);
        assert_eq!(hex(first), "1812000034120000");
    }

    #[test]
    fn encode_concatenates() {
        let bytes = encode(&[Insn::mov_imm(Reg::R0, 0), Insn::exit()]);
        assert_eq!(bytes.len(), 16);
        assert_eq!(&bytes[8..], &[0x95, 0, 0, 0, 0, 0, 0, 0]);
    }
}
