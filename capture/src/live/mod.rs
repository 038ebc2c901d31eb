//! Live capture's user-space half: the [`recorder`], which turns the kernel's stack
//! counts (`capture-ebpf`) into one labelled profile per interval, and the
//! [`symbols`] it names their addresses with.

pub mod recorder;
pub mod symbols;
