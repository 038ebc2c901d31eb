//! The one loop that reads many profiles on all cores ([`fold_in_runs`]): each thread
//! folds a run of consecutive items into a value of its own, the runs are absorbed in
//! item order, and what could not be read is noted or ends the read, the same way for
//! files named on the command line, a folder indexed by the window and a store's
//! records.

use std::ops::Range;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Mutex, MutexGuard, PoisonError};

use crate::memory;

/// Why an item was not folded in.
#[derive(Debug)]
pub enum Failure<E> {
    /// The item alone: it could not be read or is not a valid profile (nothing of it
    /// was added), so the read goes on without it and notes why.
    Skip(E),
    /// The whole read: no item after this one is needed (cancelled, profiles that
    /// cannot be added together, a file that had to be a profile).
    Stop(E),
}

/// What [`fold_in_runs`] made: the fold of every item in order, and the items skipped
/// with why, in item order.
#[derive(Debug)]
pub struct Folded<A, E> {
    /// Every run absorbed, in item order.
    pub fold: A,
    /// (item, why) of each item skipped.
    pub skipped: Vec<(usize, E)>,
}

/// Buffers a thread of [`fold_in_runs`] reuses from item to item: one for an item's
/// bytes as stored, one for them inflated. Reused, so that a day of files is not a
/// day of large allocations, each mapped and unmapped again.
#[derive(Debug, Default)]
pub struct RunBuffers {
    /// The item's bytes as read.
    pub stored: Vec<u8>,
    /// The item's pprof message, inflated.
    pub body: Vec<u8>,
}

/// Folds items `0..count` on up to four threads: each thread folds a run of
/// consecutive items into a value of its own made by `new`, with `add(fold, buffers,
/// i)` (the thread's [`RunBuffers`]), then `seal`s it (work absorbing would otherwise
/// do on one thread), and the runs are absorbed in order into the first (or, with no
/// item, a value made by `new`), so the result is the one of adding every item in
/// order to one value.
/// A thread done with its run takes the second half of what is left of the largest
/// run as a new run, so that the threads finish together however the work lies.
/// With [`Order::Any`], a thread folds all its runs into one value, which then holds
/// items that are not consecutive: a value that learns as it folds (a sum's frames
/// and edges) learns once per thread, and is absorbed once.
///
/// An item that [`Failure::Skip`]s is noted and left out. Once an item
/// [`Failure::Stop`]s, no item after it is started, while those before it still are:
/// the error returned is the one of the first item that stops, as reading in order
/// would have found it.
pub fn fold_in_runs<A: Send, E: Send>(
    count: usize,
    order: Order,
    new: impl Fn() -> A + Sync,
    add: impl Fn(&mut A, &mut RunBuffers, usize) -> Result<(), Failure<E>> + Sync,
    seal: impl Fn(&mut A) + Sync,
    absorb: impl Fn(&mut A, A) -> Result<(), E>,
) -> Result<Folded<A, E>, E> {
    // The helpers' memory is the caller's (a query's, within a server's budget). A
    // query within a budget runs on one thread: memory, not time, is what the budget
    // shares out, and two partial merges held a fifth more than one.
    let account = memory::current();
    let workers = if account.is_some() { 1 } else { worker_count() };
    let size = count.div_ceil(workers).max(1);
    let first_runs: Vec<_> = (0..count)
        .step_by(size)
        .map(|s| s..(s + size).min(count))
        .collect();
    let threads = first_runs.len();
    let runs = Runs {
        left: Mutex::new(first_runs),
        stop_at: AtomicUsize::new(usize::MAX),
    };
    let done: Vec<RunsDone<A, E>> = std::thread::scope(|scope| {
        let workers: Vec<_> = (0..threads)
            .map(|thread| {
                let (runs, new, add, seal) = (&runs, &new, &add, &seal);
                let account = account.clone();
                scope.spawn(move || {
                    let _charge = memory::charge_to_any(account);
                    let mut done = runs.work(thread, order, new, add);
                    done.folds.iter_mut().for_each(|(_, fold)| seal(fold));
                    done
                })
            })
            .collect();
        workers
            .into_iter()
            .map(|t| {
                t.join()
                    .unwrap_or_else(|panic| std::panic::resume_unwind(panic))
            })
            .collect()
    });
    let mut folds = Vec::new();
    let mut skipped = Vec::new();
    let mut first_stop: Option<(usize, E)> = None;
    for d in done {
        folds.extend(d.folds);
        skipped.extend(d.skipped);
        if let Some((at, e)) = d.stopped
            && first_stop.as_ref().is_none_or(|(first, _)| at < *first)
        {
            first_stop = Some((at, e));
        }
    }
    if let Some((_, e)) = first_stop {
        return Err(e);
    }
    folds.sort_by_key(|(start, _)| *start);
    skipped.sort_by_key(|(i, _)| *i);
    let mut folds = folds.into_iter().map(|(_, fold)| fold);
    let mut fold = folds.next().unwrap_or_else(new);
    for run in folds {
        absorb(&mut fold, run)?;
    }
    Ok(Folded { fold, skipped })
}

/// Whether [`fold_in_runs`] must absorb items in their order.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Order {
    /// The result must be the one of adding every item in order: each run is folded
    /// into a value of its own, and the runs are absorbed in order.
    Items,
    /// Adding and absorbing give the same result in any order (a sum): each thread
    /// folds every run it takes into one value.
    Any,
}

/// How many threads read profiles: the cores, at most four.
fn worker_count() -> usize {
    std::thread::available_parallelism()
        .map_or(2, usize::from)
        .clamp(1, 4)
}

/// What one thread of [`fold_in_runs`] did: (first item, fold) of each run it folded,
/// the items it skipped, and the item that stopped it with its error.
struct RunsDone<A, E> {
    folds: Vec<(usize, A)>,
    skipped: Vec<(usize, E)>,
    stopped: Option<(usize, E)>,
}

/// The runs of [`fold_in_runs`] not yet folded: what is left of each.
struct Runs {
    left: Mutex<Vec<Range<usize>>>,
    /// The first item that stopped the read so far (`usize::MAX`: none).
    stop_at: AtomicUsize,
}

impl Runs {
    /// Folds run `run` and then runs taken from others, until none is left: each
    /// into a value of its own, or with [`Order::Any`] all into one.
    fn work<A, E>(
        &self,
        mut run: usize,
        order: Order,
        new: &impl Fn() -> A,
        add: &impl Fn(&mut A, &mut RunBuffers, usize) -> Result<(), Failure<E>>,
    ) -> RunsDone<A, E> {
        let mut buf = RunBuffers::default();
        let mut done = RunsDone {
            folds: Vec::new(),
            skipped: Vec::new(),
            stopped: None,
        };
        let mut folding: Option<(usize, A)> = None;
        loop {
            let start = self.lock()[run].start;
            let (_, fold) = folding.get_or_insert_with(|| (start, new()));
            while let Some(i) = self.next(run) {
                match add(fold, &mut buf, i) {
                    Ok(()) => {}
                    Err(Failure::Skip(e)) => done.skipped.push((i, e)),
                    Err(Failure::Stop(e)) => {
                        self.stop_at.fetch_min(i, Ordering::Relaxed);
                        done.stopped = Some((i, e));
                        return done;
                    }
                }
            }
            if order == Order::Items {
                done.folds.extend(folding.take());
            }
            match self.take() {
                Some(taken) => run = taken,
                None => {
                    done.folds.extend(folding.take());
                    return done;
                }
            }
        }
    }

    fn lock(&self) -> MutexGuard<'_, Vec<Range<usize>>> {
        self.left.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// The next item of run `run`: `None` when it is done, or when the item comes
    /// after one that stopped the read.
    fn next(&self, run: usize) -> Option<usize> {
        let i = self.lock()[run].next()?;
        (i < self.stop_at.load(Ordering::Relaxed)).then_some(i)
    }

    /// A new run: the second half of what is left of the largest run (if it is worth
    /// taking), which keeps the first half. None once the read has stopped: what is
    /// left before the item that stopped it, its runs' own threads read.
    fn take(&self) -> Option<usize> {
        if self.stop_at.load(Ordering::Relaxed) != usize::MAX {
            return None;
        }
        let mut left = self.lock();
        let (largest, r) = left
            .iter()
            .enumerate()
            .max_by_key(|(_, r)| r.len())
            .map(|(i, r)| (i, r.clone()))?;
        if r.len() < 4 {
            return None;
        }
        let middle = r.start + r.len() / 2;
        left[largest].end = middle;
        left.push(middle..r.end);
        Some(left.len() - 1)
    }
}

#[cfg(test)]
mod tests {
    use std::path::PathBuf;
    use std::time::Duration;

    use profile_model::codec::{self, DecodeOptions, message_bytes};
    use profile_model::merge::{Merger, Selection};

    use super::*;

    fn fixture(name: &str) -> Vec<u8> {
        let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../tests/fixtures/go");
        std::fs::read(path.join(name)).unwrap_or_else(|e| panic!("{name}: {e}"))
    }

    fn go_cpu() -> Vec<Vec<u8>> {
        ["cpu.pb.gz", "cpu-1.pb.gz", "cpu-2.pb.gz", "cpu-3.pb.gz"]
            .map(fixture)
            .into()
    }

    /// Item `i` of the test merges: a Go CPU profile, the slow ones taking longer.
    fn add_item(
        files: &[Vec<u8>],
        slow: impl Fn(usize) -> bool + Sync,
    ) -> impl Fn(&mut Merger, &mut RunBuffers, usize) -> Result<(), Failure<String>> + Sync {
        move |merger, buf, i| {
            if slow(i) {
                std::thread::sleep(Duration::from_millis(3));
            }
            let bytes = &files[i % files.len()];
            let body = message_bytes(bytes, DecodeOptions::default(), &mut buf.body)
                .map_err(|e| Failure::Stop(e.to_string()))?;
            merger
                .add_pprof(&format!("item {i}"), body, Selection::default())
                .map_err(|e| Failure::Stop(e.to_string()))
        }
    }

    fn merge(
        count: usize,
        add: impl Fn(&mut Merger, &mut RunBuffers, usize) -> Result<(), Failure<String>> + Sync,
    ) -> Result<Folded<Merger, String>, String> {
        fold_in_runs(
            count,
            Order::Items,
            Merger::new,
            add,
            |_| {},
            |merger, run| merger.absorb(run).map_err(|e| e.to_string()),
        )
    }

    #[test]
    fn runs_taken_from_slower_threads_merge_as_one_merger_in_order() {
        let files = go_cpu();
        let mut expected = Merger::new();
        for i in 0..40 {
            let p = codec::decode(&files[i % files.len()]).expect("fixture");
            expected.add(&format!("item {i}"), &p).expect("same types");
        }
        let expected = expected.finish();
        // The first run is slow: the other threads take parts of it.
        for slow_until in [0, 20, 35] {
            let merged = merge(40, add_item(&files, |i| i < slow_until)).expect("valid");
            assert_eq!(merged.fold.inputs(), 40);
            assert_eq!(merged.fold.finish(), expected, "slow until {slow_until}");
        }
        // Fewer items than threads.
        for count in 1..=3 {
            let mut expected = Merger::new();
            for (i, bytes) in files.iter().enumerate().take(count) {
                let p = codec::decode(bytes).expect("fixture");
                expected.add(&format!("item {i}"), &p).expect("same types");
            }
            let merged = merge(count, add_item(&files, |_| false)).expect("valid");
            assert_eq!(merged.fold.finish(), expected.finish(), "{count} items");
        }
    }

    #[test]
    fn the_first_item_that_stops_is_the_error_and_no_item_after_it_is_needed() {
        let files = go_cpu();
        let add = add_item(&files, |_| false);
        // Item 30 stops at once, item 13 (in the first run, read slowly) later: the
        // error is 13's, as reading in order would have found it.
        let failing = |merger: &mut Merger, buf: &mut RunBuffers, i: usize| {
            match i {
                13 => return Err(Failure::Stop("item 13 is broken".to_string())),
                30 => return Err(Failure::Stop("item 30 is broken".to_string())),
                i if i < 13 => std::thread::sleep(Duration::from_millis(3)),
                _ => {}
            }
            add(merger, buf, i)
        };
        let err = merge(40, failing).expect_err("items 13 and 30 fail");
        assert_eq!(err, "item 13 is broken");
        let empty = merge(0, add_item(&files, |_| false));
        assert_eq!(empty.expect("nothing to merge").fold.inputs(), 0);
    }

    #[test]
    fn skipped_items_are_left_out_and_noted_in_order() {
        let files = go_cpu();
        let add = add_item(&files, |_| false);
        let skipping = |merger: &mut Merger, buf: &mut RunBuffers, i: usize| {
            if i % 7 == 3 {
                return Err(Failure::Skip(format!("item {i}")));
            }
            add(merger, buf, i)
        };
        let merged = merge(40, skipping).expect("the others merge");
        let skipped: Vec<usize> = merged.skipped.iter().map(|(i, _)| *i).collect();
        assert_eq!(skipped, [3, 10, 17, 24, 31, 38]);
        assert_eq!(merged.fold.inputs(), 34);
    }

    /// Folds items `0..count` (the first run slow, so that other threads take parts
    /// of it) into lists of items, in `order`: the items folded, and how many lists
    /// were made. Each list is sealed once, on the thread that folded it.
    fn fold_lists(count: usize, order: Order) -> (Vec<usize>, usize) {
        let made = AtomicUsize::new(0);
        let sealed = AtomicUsize::new(0);
        let main = std::thread::current().id();
        let seal = |items: &mut Vec<usize>| {
            assert_ne!(
                std::thread::current().id(),
                main,
                "sealed by its own thread"
            );
            sealed.fetch_add(1, Ordering::Relaxed);
            items.push(usize::MAX);
        };
        let new = || {
            made.fetch_add(1, Ordering::Relaxed);
            Vec::new()
        };
        let add = |items: &mut Vec<usize>, _: &mut RunBuffers, i: usize| {
            if i < 20 {
                std::thread::sleep(Duration::from_millis(3));
            }
            items.push(i);
            Ok::<(), Failure<String>>(())
        };
        let absorb = |items: &mut Vec<usize>, later: Vec<usize>| {
            items.extend(later);
            Ok(())
        };
        let folded = fold_in_runs(count, order, new, add, seal, absorb).expect("no item fails");
        let made = made.into_inner();
        assert_eq!(sealed.into_inner(), made, "every list sealed once");
        let mut items = folded.fold;
        assert_eq!(items.iter().filter(|&&i| i == usize::MAX).count(), made);
        items.retain(|&i| i != usize::MAX);
        (items, made)
    }

    #[test]
    fn a_sum_in_any_order_is_folded_into_one_value_per_thread() {
        let (mut items, made) = fold_lists(40, Order::Any);
        items.sort_unstable();
        assert_eq!(items, (0..40).collect::<Vec<_>>(), "each item once");
        // One value per thread, the others absorbed into the first, however many runs
        // the threads took from one another.
        assert!(made <= worker_count(), "{made} values made");
        // In item order, every run is a value of its own, absorbed in order.
        let (items, made) = fold_lists(40, Order::Items);
        assert_eq!(items, (0..40).collect::<Vec<_>>());
        assert!(made > worker_count().min(2), "{made} values made");
    }
}
