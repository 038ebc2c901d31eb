//! The names of the threads flint starts, in one list: the recorder counts the CPU of
//! those that work for it by these names ([`RECORDER`]).

/// The symbolizer's thread, which opens binaries and reads their symbols.
pub const SYMBOLS: &str = "flint-symbols";

/// The store's writer thread (group commit).
pub const STORE_WRITER: &str = "flint-store-writer";

/// The threads of the runtime that sends requests to a server (what the recorder
/// pushes, and the CLI's queries).
pub const NETWORK: &str = "flint-net";

/// The threads of the window's query runtime.
pub const QUERY: &str = "flint-query";

/// The threads working for the recorder, whose CPU is counted as the recorder's: the
/// symbolizer's, the store's writer, and the network threads.
pub const RECORDER: [&str; 3] = [SYMBOLS, STORE_WRITER, NETWORK];

/// Most bytes of a thread's name the kernel keeps (`comm`, without its NUL).
const COMM_BYTES: usize = 15;

/// Whether a thread's `comm` (its name as the kernel keeps it, cut to 15 bytes) is
/// that of a thread named `name`.
pub fn comm_is(comm: &str, name: &str) -> bool {
    let cut = name.get(..COMM_BYTES).unwrap_or(name);
    comm.trim_end_matches('\n').starts_with(cut)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_name_longer_than_comm_holds_is_known_by_its_first_15_bytes() {
        assert!(comm_is("flint-store-wri\n", STORE_WRITER));
        assert!(comm_is("flint-symbols\n", SYMBOLS));
        assert!(comm_is("flint-net", NETWORK));
        assert!(!comm_is("flint-query", NETWORK));
    }
}
