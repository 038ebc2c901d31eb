//! Reading profile files, one or many: the one place where many files are read and
//! added up on all cores, for `flint top`, `fold` and `push`, the window's merge of
//! several files and the index of a folder ([`crate::FileSource`]).
//!
//! [`Files::list`] finds the files that paths name (folders searched, each file once);
//! [`Files::read`], the entry point, reads them on up to four threads and folds each
//! into what a [`Fold`] makes of it (a merge, a top table, an index, uploads), a run
//! of consecutive files per thread, the runs absorbed in file order (`runs`); a file
//! that cannot be read is skipped when found in a folder and the error when named, and
//! a folder none of whose files is a profile is an error ([`Inputs::judge`]).
//! [`read_merged`] and [`top::sum_top`] are its two folds that the CLI and the window
//! share.

mod error;
mod file;
mod inputs;
mod merged;
pub(crate) mod runs;
pub mod top;

use std::path::{Path, PathBuf};
use std::sync::{Mutex, PoisonError};

use profile_model::codec::{self, DecodeOptions, message_bytes};
use profile_model::{Profile, ProfileError};

use crate::source::Progress;
use runs::{Failure, Order, RunBuffers, fold_in_runs};

pub use error::ReadError;
pub use file::{perf_data_as_pprof, read_into, read_profile};
pub use inputs::{Inputs, Listing, files_under};
pub use merged::{Merged, read_diff, read_merged};

/// Files read together: the files one list of paths names, or those of several lists
/// (a difference's files and bases), one after another.
#[derive(Debug)]
pub struct Files {
    sets: Vec<Inputs>,
    /// (set, index in the set's files) of every file, in order.
    all: Vec<(usize, usize)>,
}

/// One file of [`Files`].
#[derive(Debug, Clone, Copy)]
pub struct FileRef<'a> {
    /// Its place among all the files.
    pub index: usize,
    /// Its path.
    pub path: &'a Path,
    /// The list of paths it came from.
    pub set: usize,
    /// Whether it was named as it is, rather than found in a folder: it must then be a
    /// profile.
    pub named: bool,
}

impl FileRef<'_> {
    /// `e`, an error of this file's profile, naming the file.
    pub fn broken(&self, e: ProfileError) -> NotAdded {
        NotAdded::Broken(ReadError::profile(self.path.display().to_string(), e))
    }
}

/// A file's bytes as [`Fold::add`] gets them.
#[derive(Debug)]
pub struct FileBytes<'b> {
    /// The bytes as stored (gzipped or not).
    pub stored: &'b [u8],
    /// A buffer the thread reuses from file to file.
    scratch: &'b mut Vec<u8>,
    decode: DecodeOptions,
}

impl FileBytes<'_> {
    /// The pprof message, inflated (into the thread's reused buffer) when gzipped.
    pub fn body(&mut self) -> Result<&[u8], ProfileError> {
        message_bytes(self.stored, self.decode, self.scratch)
    }

    /// The profile, decoded whole.
    pub fn profile(&self) -> Result<Profile, ProfileError> {
        codec::decode_with(self.stored, self.decode)
    }

    /// The cap the bytes are read and inflated under.
    pub fn decode_options(&self) -> DecodeOptions {
        self.decode
    }
}

/// Each file decoded whole: [`Files::read_lone`]'s fold.
struct Whole;

impl Fold for Whole {
    type Run = Option<Profile>;

    fn run(&self) -> Self::Run {
        None
    }

    fn add(
        &self,
        run: &mut Self::Run,
        file: FileRef<'_>,
        bytes: FileBytes<'_>,
    ) -> Result<(), NotAdded> {
        *run = Some(bytes.profile().map_err(|e| file.broken(e))?);
        Ok(())
    }

    fn absorb(&self, run: &mut Self::Run, later: Self::Run) -> Result<(), ReadError> {
        if later.is_some() {
            *run = later;
        }
        Ok(())
    }
}

/// Why [`Fold::add`] did not add a file; nothing of it was added.
#[derive(Debug)]
pub enum NotAdded {
    /// The file is not a valid profile: skipped when it was found in a folder, the
    /// error when it was named.
    Broken(ReadError),
    /// No file after it is needed (profiles of other sample types than the first's):
    /// the error wherever the file was found.
    Stop(ReadError),
}

/// What [`Files::read`] makes of the files, one at a time.
pub trait Fold: Sync {
    /// What the files of one run (consecutive files, read by one thread) add up to.
    type Run: Send;

    /// A run of no file.
    fn run(&self) -> Self::Run;

    /// Adds one file to `run`.
    fn add(
        &self,
        run: &mut Self::Run,
        file: FileRef<'_>,
        bytes: FileBytes<'_>,
    ) -> Result<(), NotAdded>;

    /// Called by the thread that folded `run` once it adds no more files to it: work
    /// that absorbing runs would do on one thread, done by every thread on its own.
    fn seal(&self, _run: &mut Self::Run) {}

    /// Adds `later`, the run of the files after those of `run`, to `run`.
    fn absorb(&self, run: &mut Self::Run, later: Self::Run) -> Result<(), ReadError>;

    /// [`Order::Items`]: the files are added as in file order. [`Order::Any`], for a
    /// fold whose result is the same in any order (a sum): a run may then hold files
    /// that are not consecutive, and `later` holds files of any place.
    const ORDER: Order = Order::Items;
}

/// How [`Files::read`] reads.
#[derive(Debug, Default)]
pub struct ReadOptions<'a> {
    /// The decompressed-size cap of every file.
    pub decode: DecodeOptions,
    /// Counts the files read (its total set to their number) and cancels the read.
    pub progress: Option<&'a Progress>,
    /// What reading the first files gave already, in file order: a pipe
    /// (`/dev/stdin`, `<(…)`) gives its bytes only once.
    pub prefetched: Vec<Result<Vec<u8>, ReadError>>,
    /// Whether a folder none of whose files is a profile is passed over as its broken
    /// files are, rather than an error.
    pub folders_may_hold_none: bool,
}

impl ReadOptions<'_> {
    /// Reading with `decode`'s cap, nothing else asked for.
    pub fn new(decode: DecodeOptions) -> Self {
        Self {
            decode,
            ..Self::default()
        }
    }
}

/// What [`Files::read`] made.
#[derive(Debug)]
pub struct Read<R> {
    /// Every file added, in order.
    pub folded: R,
    /// The index of every file added, in order.
    pub added: Vec<usize>,
    /// A line per folder that could not be listed and per file skipped, with why.
    pub skipped: Vec<String>,
}

impl Files {
    /// The files each list of paths names ([`Inputs::list`]), the lists one after
    /// another.
    pub fn list(sets: &[&[PathBuf]]) -> Result<Self, ReadError> {
        let sets = sets
            .iter()
            .map(|paths| Inputs::list(paths))
            .collect::<Result<Vec<_>, _>>()?;
        let all = sets
            .iter()
            .enumerate()
            .flat_map(|(s, set)| (0..set.files.len()).map(move |i| (s, i)))
            .collect();
        Ok(Self { sets, all })
    }

    /// How many files there are.
    pub fn len(&self) -> usize {
        self.all.len()
    }

    /// Whether there is no file.
    pub fn is_empty(&self) -> bool {
        self.all.is_empty()
    }

    /// File `index`.
    pub fn file(&self, index: usize) -> FileRef<'_> {
        let (set, i) = self.all[index];
        let (path, dir) = &self.sets[set].files[i];
        FileRef {
            index,
            path,
            set,
            named: dir.is_none(),
        }
    }

    /// Judges the files that could not be read, (index, why) in index order, list by
    /// list ([`Inputs::judge`]): the first error, or the lines of what was skipped.
    pub fn judge(&self, failed: Vec<(usize, ReadError)>) -> Result<Vec<String>, ReadError> {
        self.per_set(failed, |set, failed| set.judge(failed))
    }

    /// The lines of what was skipped, list by list ([`Inputs::skipped`]).
    fn skipped(&self, failed: Vec<(usize, ReadError)>) -> Vec<String> {
        let lines = self.per_set(failed, |set, failed| Ok(set.skipped(failed)));
        lines.unwrap_or_default()
    }

    fn per_set(
        &self,
        failed: Vec<(usize, ReadError)>,
        mut lines: impl FnMut(&Inputs, Vec<(usize, ReadError)>) -> Result<Vec<String>, ReadError>,
    ) -> Result<Vec<String>, ReadError> {
        let mut per_set: Vec<Vec<(usize, ReadError)>> =
            self.sets.iter().map(|_| Vec::new()).collect();
        for (index, e) in failed {
            let (set, i) = self.all[index];
            per_set[set].push((i, e));
        }
        let mut all = Vec::new();
        for (set, failed) in self.sets.iter().zip(per_set) {
            all.extend(lines(set, failed)?);
        }
        Ok(all)
    }

    /// The one file there is, decoded whole from its bytes as read once, kept as it
    /// is (its comments and frame regexes too, which a merge leaves out), with the
    /// folders that could not be listed; `None` when there are more files or none. A
    /// file that cannot be read is judged as any other: named, it is the error; found
    /// in a folder, the folder without a profile is.
    pub fn read_lone(
        &self,
        decode: DecodeOptions,
    ) -> Option<Result<(Profile, Vec<String>), ReadError>> {
        if self.len() != 1 {
            return None;
        }
        let read = self.read(&Whole, ReadOptions::new(decode));
        Some(read.and_then(|read| {
            let no_profile = || ReadError::NoProfiles {
                paths: vec![self.file(0).path.to_path_buf()],
            };
            Ok((read.folded.ok_or_else(no_profile)?, read.skipped))
        }))
    }

    /// Reads every file and adds it to what `fold` makes, on up to four threads, a run
    /// of consecutive files each, the runs absorbed in order (`runs::fold_in_runs`):
    /// the same as adding one file after another. A file that cannot be read, or that
    /// `fold` finds broken, is skipped when found in a folder and stops the read when
    /// named; the error is then the one of the first file that stops it, as reading in
    /// order finds it. The files that failed are judged ([`Files::judge`]) unless
    /// `options` let folders hold none.
    pub fn read<F: Fold>(
        &self,
        fold: &F,
        options: ReadOptions<'_>,
    ) -> Result<Read<F::Run>, ReadError> {
        let ReadOptions {
            decode,
            progress,
            prefetched,
            folders_may_hold_none,
        } = options;
        if let Some(progress) = progress {
            progress.set_total(self.len());
        }
        let prefetched: Vec<Mutex<Option<_>>> = prefetched
            .into_iter()
            .map(|p| Mutex::new(Some(p)))
            .collect();
        let take_prefetched = |i: usize| {
            let slot = prefetched.get(i)?;
            slot.lock().unwrap_or_else(PoisonError::into_inner).take()
        };
        let add = |(run, added): &mut (F::Run, Vec<usize>), buf: &mut RunBuffers, i: usize| {
            if progress.is_some_and(Progress::is_cancelled) {
                return Err(Failure::Stop(ReadError::Cancelled));
            }
            let file = self.file(i);
            let read = match take_prefetched(i) {
                Some(bytes) => bytes.and_then(|bytes| {
                    buf.stored = bytes;
                    perf_data_as_pprof(file.path, &mut buf.stored, None)
                }),
                None => read_into(file.path, &mut buf.stored, decode),
            };
            let result = read.map_err(NotAdded::Broken).and_then(|()| {
                let bytes = FileBytes {
                    stored: &buf.stored,
                    scratch: &mut buf.body,
                    decode,
                };
                fold.add(run, file, bytes)
            });
            if let Some(progress) = progress {
                progress.step();
            }
            match result {
                Ok(()) => {
                    added.push(i);
                    Ok(())
                }
                Err(NotAdded::Broken(e)) if !file.named => Err(Failure::Skip(e)),
                Err(NotAdded::Broken(e) | NotAdded::Stop(e)) => Err(Failure::Stop(e)),
            }
        };
        let folded = fold_in_runs(
            self.len(),
            F::ORDER,
            || (fold.run(), Vec::new()),
            add,
            |(run, _)| fold.seal(run),
            |(run, added), (later, later_added)| {
                fold.absorb(run, later)?;
                added.extend(later_added);
                Ok(())
            },
        )?;
        let skipped = if folders_may_hold_none {
            self.skipped(folded.skipped)
        } else {
            self.judge(folded.skipped)?
        };
        let (folded_run, mut added) = folded.fold;
        added.sort_unstable();
        Ok(Read {
            folded: folded_run,
            added,
            skipped,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Each file's profile type count, in file order.
    struct Count;

    impl Fold for Count {
        type Run = Vec<usize>;

        fn run(&self) -> Self::Run {
            Vec::new()
        }

        fn add(
            &self,
            run: &mut Self::Run,
            file: FileRef<'_>,
            bytes: FileBytes<'_>,
        ) -> Result<(), NotAdded> {
            let profile = bytes.profile().map_err(|e| file.broken(e))?;
            run.push(profile.sample_types.len());
            Ok(())
        }

        fn absorb(&self, run: &mut Self::Run, later: Self::Run) -> Result<(), ReadError> {
            run.extend(later);
            Ok(())
        }
    }

    /// A folder of `good` Go CPU profiles and `broken` files that are none.
    fn folder(tag: &str, good: usize, broken: usize) -> PathBuf {
        let dir = std::env::temp_dir().join(format!("flint-read-{tag}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).expect("made");
        let fixture =
            PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../tests/fixtures/go/cpu.pb.gz");
        for i in 0..good {
            std::fs::copy(&fixture, dir.join(format!("good-{i}.pb.gz"))).expect("copied");
        }
        for i in 0..broken {
            std::fs::write(dir.join(format!("broken-{i}.pb.gz")), b"not a profile")
                .expect("written");
        }
        dir
    }

    #[test]
    fn broken_files_in_a_folder_are_skipped_and_a_named_one_is_the_error() {
        let dir = folder("skip", 6, 2);
        let files = Files::list(&[std::slice::from_ref(&dir)]).expect("listed");
        let read = files.read(&Count, ReadOptions::default()).expect("read");
        assert_eq!(read.folded, [2; 6]);
        assert_eq!(
            read.added,
            [2, 3, 4, 5, 6, 7],
            "broken-* come first by name"
        );
        assert_eq!(read.skipped.len(), 2, "{:?}", read.skipped);
        // Named before its folder, it counts as named (the first path that reaches a
        // file counts).
        let named = dir.join("broken-1.pb.gz");
        let files = Files::list(&[&[named.clone(), dir.clone()]]).expect("listed");
        let e = files
            .read(&Count, ReadOptions::default())
            .expect_err("named");
        assert!(
            e.to_string().starts_with(&named.display().to_string()),
            "{e}"
        );
        std::fs::remove_dir_all(&dir).expect("removed");
    }

    #[test]
    fn a_folder_without_a_profile_is_an_error_unless_folders_may_hold_none() {
        let dir = folder("none", 0, 2);
        let files = Files::list(&[std::slice::from_ref(&dir)]).expect("listed");
        let e = files
            .read(&Count, ReadOptions::default())
            .expect_err("no profile");
        assert!(
            e.to_string()
                .contains("neither of its 2 files is a pprof profile"),
            "{e}"
        );
        let lenient = ReadOptions {
            folders_may_hold_none: true,
            ..ReadOptions::default()
        };
        let read = files.read(&Count, lenient).expect("passed over");
        assert!(read.added.is_empty());
        assert_eq!(read.skipped.len(), 2);
        std::fs::remove_dir_all(&dir).expect("removed");
    }

    #[test]
    fn prefetched_bytes_are_read_in_place_of_the_file() {
        let dir = folder("prefetched", 2, 0);
        let files = Files::list(&[std::slice::from_ref(&dir)]).expect("listed");
        let options = ReadOptions {
            prefetched: vec![Ok(b"not a profile".to_vec())],
            ..ReadOptions::default()
        };
        let read = files.read(&Count, options).expect("the other reads");
        assert_eq!(read.added, [1]);
        assert_eq!(read.skipped.len(), 1, "{:?}", read.skipped);
        std::fs::remove_dir_all(&dir).expect("removed");
    }
}
