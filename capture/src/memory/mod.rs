//! Memory a server holds: heap bytes counted per use ([`heap`]), shared out within a
//! budget ([`budget`]), whose limit is given or read from the cgroup ([`limit`]).

pub mod budget;
pub mod heap;
pub mod limit;

pub use budget::{BudgetOptions, Elsewhere, Lease, MemoryBudget, Refused};
pub use heap::{Account, Charging, CountingAllocator, charge_to, charge_to_any, current};
