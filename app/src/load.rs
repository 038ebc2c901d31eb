//! Reading profiles from disk, for the window: the library's ([`capture::read`]), under
//! the names the window calls.

pub use capture::read::{Merged, read_merged};
