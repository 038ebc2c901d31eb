//! Heap bytes counted per use: a query, a push, the store's index.
//!
//! [`CountingAllocator`] is the system allocator that also notes each allocation's
//! size against the [`Account`] its thread is [`charge_to`]d, if any: a thread keeps
//! its changes to itself until they pass [`FLUSH_BYTES`], so counting costs a
//! thread-local read and an add per allocation, and no shared write. Threads a
//! charged thread starts to help it ([`crate::read::runs`]) charge the same account
//! ([`current`]). Memory freed on another thread than the one that allocated it is
//! taken off that thread's account: an account tells what its threads hold, near
//! enough to keep a process within a budget, not to the byte.
//!
//! A binary counts only when it installs the allocator (`flint` does); elsewhere
//! accounts stay at 0.

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::{Cell, RefCell};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicI64, Ordering};

/// Bytes a thread allocates or frees before it adds them to its account.
pub const FLUSH_BYTES: i64 = 256 << 10;

/// Heap bytes held by one use of memory, as its threads allocated and freed them.
#[derive(Debug, Default)]
pub struct Account {
    bytes: AtomicI64,
}

impl Account {
    /// Bytes held now (up to [`FLUSH_BYTES`] per thread not yet added); never below 0.
    pub fn bytes(&self) -> u64 {
        u64::try_from(self.bytes.load(Ordering::Relaxed)).unwrap_or(0)
    }

    /// Adds `delta` bytes: what a thread counted, or a size known without counting.
    pub fn add(&self, delta: i64) {
        self.bytes.fetch_add(delta, Ordering::Relaxed);
    }
}

thread_local! {
    /// The account this thread's allocations are noted against, for the allocator:
    /// valid while the [`Charging`] that set it lives (it holds the `Arc`).
    static CHARGED: Cell<*const Account> = const { Cell::new(std::ptr::null()) };
    /// Bytes noted on this thread and not yet added to its account.
    static PENDING: Cell<i64> = const { Cell::new(0) };
    /// The same account as [`CHARGED`], to hand to helper threads.
    static CURRENT: RefCell<Option<Arc<Account>>> = const { RefCell::new(None) };
}

/// Whether any thread has been charged yet: until then (all of `flint top`, the
/// window), the allocator notes nothing and reads no thread-local. Reading them at
/// every allocation cost `flint top` of fleet 5% of its time.
static COUNTING: AtomicBool = AtomicBool::new(false);

/// The system allocator, noting sizes against the thread's account.
#[derive(Debug, Default, Clone, Copy)]
pub struct CountingAllocator;

#[expect(unsafe_code, reason = "a global allocator is an unsafe trait")]
// SAFETY: every call is passed to `System` unchanged; the counting around it
// allocates nothing and never unwinds.
unsafe impl GlobalAlloc for CountingAllocator {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        // SAFETY: the caller's guarantees for `alloc` are passed on.
        let p = unsafe { System.alloc(layout) };
        if !p.is_null() {
            note(layout.size() as i64);
        }
        p
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        // SAFETY: the caller's guarantees for `alloc_zeroed` are passed on.
        let p = unsafe { System.alloc_zeroed(layout) };
        if !p.is_null() {
            note(layout.size() as i64);
        }
        p
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: the caller's guarantees for `dealloc` are passed on.
        unsafe { System.dealloc(ptr, layout) };
        note(-(layout.size() as i64));
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        // SAFETY: the caller's guarantees for `realloc` are passed on.
        let p = unsafe { System.realloc(ptr, layout, new_size) };
        if !p.is_null() {
            note(new_size as i64 - layout.size() as i64);
        }
        p
    }
}

/// Notes `delta` bytes on this thread, adding them to its account once they pass
/// [`FLUSH_BYTES`]. Uncharged threads note nothing.
#[inline]
fn note(delta: i64) {
    if !COUNTING.load(Ordering::Relaxed) {
        return;
    }
    let _ = CHARGED.try_with(|charged| {
        let account = charged.get();
        if account.is_null() {
            return;
        }
        let _ = PENDING.try_with(|pending| {
            let sum = pending.get() + delta;
            if sum.abs() >= FLUSH_BYTES {
                pending.set(0);
                #[expect(unsafe_code, reason = "the account's address kept in a thread-local")]
                // SAFETY: `CHARGED` is non-null only while the `Charging` that set it
                // lives on this thread, and it holds the `Arc` of this account.
                unsafe { &*account }.add(sum);
            } else {
                pending.set(sum);
            }
        });
    });
}

/// Adds what this thread noted to its account, if it has one.
fn flush() {
    let pending = PENDING.with(|p| p.replace(0));
    if pending != 0
        && let Some(account) = current()
    {
        account.add(pending);
    }
}

/// While alive, this thread's allocations are noted against an account; dropping it
/// puts back the one before (drop in the reverse order of making).
#[derive(Debug)]
#[must_use = "the charge ends when this is dropped"]
pub struct Charging {
    previous: Option<Arc<Account>>,
    /// Makes the guard `!Send`: it belongs to the thread it was made on.
    _thread: std::marker::PhantomData<*const ()>,
}

/// Charges this thread's allocations to `account` until the guard is dropped.
pub fn charge_to(account: Arc<Account>) -> Charging {
    flush();
    let raw = Arc::as_ptr(&account);
    COUNTING.store(true, Ordering::Relaxed);
    let previous = CURRENT.with(|c| c.replace(Some(account)));
    CHARGED.with(|c| c.set(raw));
    Charging {
        previous,
        _thread: std::marker::PhantomData,
    }
}

impl Drop for Charging {
    fn drop(&mut self) {
        flush();
        let previous = self.previous.take();
        let raw = previous.as_ref().map_or(std::ptr::null(), Arc::as_ptr);
        CHARGED.with(|c| c.set(raw));
        // The account left is dropped after the allocator stopped seeing it.
        drop(CURRENT.with(|c| c.replace(previous)));
    }
}

/// The account this thread is charged to, to charge the threads it starts.
pub fn current() -> Option<Arc<Account>> {
    CURRENT.with(|c| c.borrow().clone())
}

/// Charges this thread to `account` when there is one (a helper thread charged as the
/// thread that started it, from [`current`]).
pub fn charge_to_any(account: Option<Arc<Account>>) -> Option<Charging> {
    account.map(charge_to)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn charges_nest_and_unwind() {
        let (a, b) = (Arc::new(Account::default()), Arc::new(Account::default()));
        assert!(current().is_none());
        {
            let _outer = charge_to(a.clone());
            assert!(current().is_some_and(|c| Arc::ptr_eq(&c, &a)));
            {
                let _inner = charge_to(b.clone());
                assert!(current().is_some_and(|c| Arc::ptr_eq(&c, &b)));
            }
            assert!(current().is_some_and(|c| Arc::ptr_eq(&c, &a)));
        }
        assert!(current().is_none());
    }

    #[test]
    fn an_account_never_reads_below_zero() {
        let a = Account::default();
        a.add(-10);
        assert_eq!(a.bytes(), 0);
        a.add(30);
        assert_eq!(a.bytes(), 20);
    }
}
