//! A server's memory budget: what queries and pushes may hold, so that the process
//! stays under its limit (`flint serve --max-memory`, else the cgroup's).
//!
//! The limit is shared out as grants, each a [`Lease`]'s. From the limit are first
//! set aside the process's resident size when the budget is made (code, runtime, the
//! store as opened) and a margin for what no account sees (connections' buffers,
//! allocator slack). What else grows is told by the budget's owner (the store's index:
//! [`MemoryBudget::new`]'s `elsewhere`). Of the rest, queries may hold all but an ingest reserve, so that
//! pushes go on while queries wait.
//!
//! - A query is admitted with a first grant, in order of arrival, when it fits: it
//!   waits in a bounded queue while memory is in use, and is refused when the queue is
//!   full or it waited too long.
//! - As it runs it checks its account ([`Lease::checkpoint`]) and grows its grant in
//!   steps. The oldest running query waits for memory others free; any other query
//!   that cannot grow is refused, so that the oldest always finishes; a query that
//!   would outgrow everything queries may hold is refused whatever its age.
//! - A push takes its grant at once or is refused: it never waits.

use std::collections::{BTreeSet, VecDeque};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard, PoisonError};
use std::time::{Duration, Instant};

use super::heap::Account;

/// Bytes held outside any lease, grown since the budget was made.
pub type Elsewhere = Box<dyn Fn() -> u64 + Send + Sync>;

/// How a budget is set.
#[derive(Debug, Clone)]
pub struct BudgetOptions {
    /// The most the process may hold, in bytes.
    pub limit_bytes: u64,
    /// Where the limit came from, for messages ("--max-memory", "the cgroup's limit").
    pub source: String,
    /// Resident bytes already in use when the budget is made.
    pub resident_bytes: u64,
    /// Queries that may wait for memory at once; more are refused.
    pub max_waiting: usize,
    /// How long a query waits for memory before it is refused.
    pub max_wait: Duration,
}

/// Why memory was not granted.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct Refused(pub String);

/// What a lease is for: queries wait and may be refused to let the oldest finish;
/// pushes never wait.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Use {
    Query,
    Push,
}

/// See the module documentation.
pub struct MemoryBudget {
    options: BudgetOptions,
    /// What grants may add up to, with the store's growth.
    for_all: u64,
    /// What query grants may add up to.
    for_queries: u64,
    /// What grows outside leases.
    elsewhere: Elsewhere,
    state: Mutex<State>,
    /// Told whenever memory is given back.
    freed: Condvar,
    /// The same, for queries waiting on the async runtime.
    freed_async: tokio::sync::Notify,
}

#[derive(Debug, Default)]
struct State {
    /// Sum of every lease's grant.
    granted: u64,
    /// Sum of query leases' grants.
    granted_queries: u64,
    /// Tickets of the queries waiting to start, in arrival order.
    waiting: VecDeque<u64>,
    /// Tickets of the running queries: the first is the oldest.
    running: BTreeSet<u64>,
    next_ticket: u64,
}

/// Bytes by which a grant grows at least.
const STEP_BYTES: u64 = 4 << 20;

/// The first grant of a query.
const FIRST_GRANT_BYTES: u64 = 8 << 20;

impl std::fmt::Debug for MemoryBudget {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("MemoryBudget")
            .field("options", &self.options)
            .field("for_all", &self.for_all)
            .field("for_queries", &self.for_queries)
            .finish_non_exhaustive()
    }
}

impl MemoryBudget {
    /// A budget of `options.limit_bytes`, refused when that does not even cover what
    /// is resident now, the margins and a first query.
    pub fn new(options: BudgetOptions, elsewhere: Elsewhere) -> Result<Arc<Self>, Refused> {
        let limit = options.limit_bytes;
        let margin = (limit / 6).max(16 << 20);
        let ingest = (limit / 16).max(8 << 20);
        let for_all = limit.saturating_sub(options.resident_bytes + margin);
        let for_queries = for_all.saturating_sub(ingest);
        if for_queries < FIRST_GRANT_BYTES {
            return Err(Refused(format!(
                "a memory budget of {} ({}) leaves nothing for queries: {} are resident already and {} are kept as margins",
                mib(limit),
                options.source,
                mib(options.resident_bytes),
                mib(margin + ingest)
            )));
        }
        Ok(Arc::new(Self {
            options,
            for_all,
            for_queries,
            elsewhere,
            state: Mutex::default(),
            freed: Condvar::new(),
            freed_async: tokio::sync::Notify::new(),
        }))
    }

    /// The limit, in bytes.
    pub fn limit_bytes(&self) -> u64 {
        self.options.limit_bytes
    }

    /// What grants may add up to, in bytes.
    pub fn for_all(&self) -> u64 {
        self.for_all
    }

    /// The most a push's profile of `hint` bytes (as its gzip trailer tells) may
    /// inflate to: its hint, or half of what is free now if more, within the codec's
    /// own cap.
    pub fn inflate_cap(&self, hint: u64) -> u64 {
        let free = self.for_all.saturating_sub(self.in_use(&self.lock()));
        hint.max(1 << 20)
            .max(free / 2)
            .min(profile_model::codec::DEFAULT_MAX_DECOMPRESSED_BYTES)
    }

    /// What queries may hold together, in bytes.
    pub fn for_queries(&self) -> u64 {
        self.for_queries
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Bytes in use by grants and what grew elsewhere.
    fn in_use(&self, state: &State) -> u64 {
        state.granted + (self.elsewhere)()
    }

    /// The limit as messages name it.
    fn named(&self) -> String {
        format!(
            "{} ({})",
            mib(self.options.limit_bytes),
            self.options.source
        )
    }

    /// Admits a query, waiting in the queue for memory; refused when the queue is
    /// full or memory stayed in use for the longest wait.
    /// `first` is its first grant (at least a small one, at most all queries may hold);
    /// `alone`, it starts only when no other query runs: a query tried again after it
    /// was refused memory that others held, which then cannot be refused again.
    pub async fn admit_query(self: &Arc<Self>, first: u64, alone: bool) -> Result<Lease, Refused> {
        let first = first.max(FIRST_GRANT_BYTES).min(self.for_queries);
        let ticket = {
            let mut state = self.lock();
            if state.waiting.len() >= self.options.max_waiting {
                return Err(Refused(format!(
                    "the server is busy: {} queries are waiting for memory within its budget of {}; try again later",
                    state.waiting.len(),
                    self.named()
                )));
            }
            let ticket = state.next_ticket;
            state.next_ticket += 1;
            state.waiting.push_back(ticket);
            ticket
        };
        let mut queued = Queued {
            budget: self,
            ticket,
            first,
            alone,
        };
        let deadline = tokio::time::Instant::now() + self.options.max_wait;
        loop {
            let freed = self.freed_async.notified();
            tokio::pin!(freed);
            freed.as_mut().enable();
            if let Some(lease) = queued.try_start() {
                return Ok(lease);
            }
            if tokio::time::timeout_at(deadline, freed).await.is_err() {
                return Err(Refused(format!(
                    "memory stayed in use for {} s within the server's budget of {}; try again later",
                    self.options.max_wait.as_secs(),
                    self.named()
                )));
            }
        }
    }

    /// A push's grant of `bytes`, at once, or why not.
    pub fn admit_push(self: &Arc<Self>, bytes: u64) -> Result<Lease, Refused> {
        let mut state = self.lock();
        if bytes > self.for_all {
            return Err(Refused(format!(
                "this profile needs {} to check, more than the server's memory budget of {} allows",
                mib(bytes),
                self.named()
            )));
        }
        if self.in_use(&state) + bytes > self.for_all {
            return Err(Refused(format!(
                "the server's memory budget of {} is in use; push again later",
                self.named()
            )));
        }
        state.granted += bytes;
        Ok(Lease::new(self.clone(), Use::Push, u64::MAX, bytes))
    }

    /// Gives back `bytes` of a lease's grant.
    fn give_back(&self, lease: &Lease, bytes: u64) {
        let mut state = self.lock();
        state.granted = state.granted.saturating_sub(bytes);
        if lease.use_ == Use::Query {
            state.granted_queries = state.granted_queries.saturating_sub(bytes);
            state.running.remove(&lease.ticket);
        }
        drop(state);
        self.freed.notify_all();
        self.freed_async.notify_waiters();
    }
}

/// A query's place in the queue, left when it starts or gives up.
struct Queued<'a> {
    budget: &'a Arc<MemoryBudget>,
    ticket: u64,
    /// Its first grant.
    first: u64,
    /// Whether it waits for every running query to end.
    alone: bool,
}

impl Queued<'_> {
    /// Starts the query if it is first in the queue and its first grant fits.
    fn try_start(&mut self) -> Option<Lease> {
        let budget = self.budget;
        let mut state = budget.lock();
        let first = state.waiting.front() == Some(&self.ticket);
        let first_grant = self.first;
        let fits = (!self.alone || state.running.is_empty())
            && state.granted_queries + first_grant <= budget.for_queries
            && budget.in_use(&state) + first_grant <= budget.for_all;
        if !(first && fits) {
            return None;
        }
        state.waiting.pop_front();
        state.running.insert(self.ticket);
        state.granted += first_grant;
        state.granted_queries += first_grant;
        // The next in the queue may fit too.
        budget.freed_async.notify_waiters();
        Some(Lease::new(
            budget.clone(),
            Use::Query,
            self.ticket,
            first_grant,
        ))
    }
}

impl Drop for Queued<'_> {
    fn drop(&mut self) {
        let mut state = self.budget.lock();
        if let Some(at) = state.waiting.iter().position(|&t| t == self.ticket) {
            state.waiting.remove(at);
            drop(state);
            self.budget.freed_async.notify_waiters();
        }
    }
}

/// Memory granted to one query or push, given back when dropped. Its [`Account`] is
/// what its threads hold ([`super::charge_to`]).
#[derive(Debug)]
pub struct Lease {
    budget: Arc<MemoryBudget>,
    use_: Use,
    ticket: u64,
    granted: AtomicU64,
    account: Arc<Account>,
    /// What it asked for when other requests' memory stood in the way (0: never).
    wanted: AtomicU64,
}

impl Lease {
    fn new(budget: Arc<MemoryBudget>, use_: Use, ticket: u64, granted: u64) -> Self {
        Self {
            budget,
            use_,
            ticket,
            granted: AtomicU64::new(granted),
            account: Arc::default(),
            wanted: AtomicU64::new(0),
        }
    }

    /// The account the lease's threads are charged to.
    pub fn account(&self) -> Arc<Account> {
        self.account.clone()
    }

    /// The bytes granted now.
    pub fn granted(&self) -> u64 {
        self.granted.load(Ordering::Relaxed)
    }

    /// Bytes the lease may still hold within its grant.
    pub fn room(&self) -> u64 {
        self.granted().saturating_sub(self.account.bytes())
    }

    /// Grows the grant to what the account holds (and a step more) when it holds
    /// more than granted. The oldest running query waits for memory to be freed; any
    /// other lease that cannot grow is refused, as is one that would outgrow all that
    /// its kind may hold.
    pub fn checkpoint(&self) -> Result<(), Refused> {
        let held = self.account.bytes();
        if held <= self.granted() {
            return Ok(());
        }
        // A step ahead, but never past what the lease's kind may hold while the
        // account itself fits.
        let ahead = (held + STEP_BYTES.max(held / 8)).min(self.cap());
        self.grow_to(ahead.max(held))
    }

    /// Grows the grant to `bytes` (see [`Lease::checkpoint`]).
    pub fn grow_to(&self, bytes: u64) -> Result<(), Refused> {
        let budget = &self.budget;
        let cap = self.cap();
        if bytes > cap {
            return Err(Refused(format!(
                "this {} needs more than the {} the server's memory budget of {} leaves for it; {}",
                self.what(),
                mib(cap),
                budget.named(),
                self.advice()
            )));
        }
        let started = Instant::now();
        let mut state = budget.lock();
        loop {
            let granted = self.granted();
            let more = bytes.saturating_sub(granted);
            let queries_fit =
                self.use_ == Use::Push || state.granted_queries + more <= budget.for_queries;
            if more == 0 || (queries_fit && budget.in_use(&state) + more <= budget.for_all) {
                state.granted += more;
                if self.use_ == Use::Query {
                    state.granted_queries += more;
                }
                self.granted.store(granted + more, Ordering::Relaxed);
                return Ok(());
            }
            let oldest = self.use_ == Use::Query && state.running.first() == Some(&self.ticket);
            if !oldest || started.elapsed() > budget.options.max_wait {
                self.wanted.store(bytes, Ordering::Relaxed);
                return Err(Refused(format!(
                    "the server's memory budget of {} is in use by other requests; {}",
                    budget.named(),
                    self.advice()
                )));
            }
            state = budget
                .freed
                .wait_timeout(state, Duration::from_millis(100))
                .unwrap_or_else(PoisonError::into_inner)
                .0;
        }
    }

    /// What the lease asked for when it was refused because other requests held the
    /// memory: a query tried again should first be granted this much.
    pub fn wanted(&self) -> Option<u64> {
        Some(self.wanted.load(Ordering::Relaxed)).filter(|&w| w > 0)
    }

    /// The most a lease of its kind may be granted.
    fn cap(&self) -> u64 {
        match self.use_ {
            Use::Query => self.budget.for_queries,
            Use::Push => self.budget.for_all,
        }
    }

    fn what(&self) -> &'static str {
        match self.use_ {
            Use::Query => "query",
            Use::Push => "profile",
        }
    }

    fn advice(&self) -> &'static str {
        match self.use_ {
            Use::Query => "ask again later, or for a shorter time range",
            Use::Push => "push again later, or in smaller profiles",
        }
    }
}

impl Drop for Lease {
    fn drop(&mut self) {
        self.budget.give_back(self, self.granted());
    }
}

/// `bytes` in MiB, as messages show it.
pub fn mib(bytes: u64) -> String {
    format!("{} MiB", bytes.div_ceil(1 << 20))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn budget(limit_mib: u64, max_waiting: usize) -> Arc<MemoryBudget> {
        MemoryBudget::new(
            BudgetOptions {
                limit_bytes: limit_mib << 20,
                source: "--max-memory".into(),
                resident_bytes: 0,
                max_waiting,
                max_wait: Duration::from_millis(300),
            },
            Box::new(|| 0),
        )
        .unwrap()
    }

    fn block_on<T>(f: impl std::future::Future<Output = T>) -> T {
        tokio::runtime::Builder::new_current_thread()
            .enable_time()
            .build()
            .unwrap()
            .block_on(f)
    }

    #[test]
    fn a_budget_must_leave_room_for_queries() {
        let refused = MemoryBudget::new(
            BudgetOptions {
                limit_bytes: 64 << 20,
                source: "the cgroup's limit".into(),
                resident_bytes: 40 << 20,
                max_waiting: 1,
                max_wait: Duration::ZERO,
            },
            Box::new(|| 0),
        )
        .unwrap_err();
        assert!(
            refused.0.contains("64 MiB (the cgroup's limit)"),
            "{refused}"
        );
    }

    #[test]
    fn the_oldest_query_grows_others_are_refused_and_room_comes_back() {
        let b = budget(256, 4);
        let (first, second) =
            block_on(async { (b.admit_query(0, false).await, b.admit_query(0, false).await) });
        let (first, second) = (first.unwrap(), second.unwrap());
        let rest = b.for_queries() - 2 * FIRST_GRANT_BYTES;
        // The younger query takes what is left; the older can then not grow at once.
        second.grow_to(FIRST_GRANT_BYTES + rest).unwrap();
        let refused = second.grow_to(b.for_queries() + 1).unwrap_err();
        assert!(refused.0.contains("leaves for it"), "{refused}");
        let waiting = std::thread::scope(|s| {
            let grow = s.spawn(|| first.grow_to(FIRST_GRANT_BYTES + (1 << 20)));
            std::thread::sleep(Duration::from_millis(50));
            drop(second);
            grow.join().unwrap()
        });
        assert_eq!(waiting, Ok(()));
        assert_eq!(first.granted(), FIRST_GRANT_BYTES + (1 << 20));
        // A younger query than `first` cannot grow past what is free.
        let third = block_on(b.admit_query(0, false)).unwrap();
        let refused = third
            .grow_to(b.for_queries() - first.granted() + 1)
            .unwrap_err();
        assert!(refused.0.contains("in use by other requests"), "{refused}");
    }

    #[test]
    fn pushes_keep_their_reserve_while_queries_hold_the_rest() {
        let b = budget(256, 4);
        let query = block_on(b.admit_query(0, false)).unwrap();
        query.grow_to(b.for_queries()).unwrap();
        let push = b.admit_push(4 << 20).unwrap();
        assert_eq!(push.granted(), 4 << 20);
        let refused = b.admit_push(b.limit_bytes()).unwrap_err();
        assert!(
            refused.0.contains("more than the server's memory budget"),
            "{refused}"
        );
    }

    #[test]
    fn a_full_queue_and_a_long_wait_are_refused() {
        let b = budget(256, 1);
        let holder = block_on(b.admit_query(0, false)).unwrap();
        holder.grow_to(b.for_queries()).unwrap();
        let (waited, full) = block_on(async {
            let waiting = b.admit_query(0, false);
            let second = async {
                tokio::time::sleep(Duration::from_millis(50)).await;
                b.admit_query(0, false).await
            };
            tokio::join!(waiting, second)
        });
        assert!(waited.unwrap_err().0.contains("stayed in use"));
        assert!(full.unwrap_err().0.contains("1 queries are waiting"));
        drop(holder);
        assert!(block_on(b.admit_query(0, false)).is_ok());
    }

    #[test]
    fn a_checkpoint_grows_the_grant_to_what_the_account_holds() {
        let b = budget(256, 1);
        let lease = block_on(b.admit_query(0, false)).unwrap();
        lease.account().add(20 << 20);
        lease.checkpoint().unwrap();
        assert!(lease.granted() >= 20 << 20);
        lease.account().add(i64::try_from(b.for_queries()).unwrap());
        assert!(lease.checkpoint().is_err());
    }
}
