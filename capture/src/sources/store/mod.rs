//! flint's own on-disk store: profiles written through [`ProfileSink`] (Parca's WriteRaw
//! semantics) and queried through [`ProfileSource`], as [`crate::FileSource`] answers.
//!
//! The store is a directory of append-only segment files (`0000000000000001.seg`, …) of
//! checksummed records (see `record`). Each record holds the index data of one profile
//! (time, duration, profile types, value sums per series) ahead of the pprof bytes as
//! written, so opening the store reads the records but decodes no pprof. Writers queue
//! their records; one writer thread appends a whole queue to the active segment, syncs it
//! once (group commit) and only then adds the profiles to the index and acknowledges
//! them. A crash can only tear the unacknowledged tail, which opening truncates away.

mod ingest;
mod record;
mod retention;
mod segment;

use std::collections::{BTreeMap, BTreeSet};
use std::fs::{File, OpenOptions};
use std::io::Write as _;
use std::os::unix::fs::FileExt as _;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Condvar, Mutex, MutexGuard, PoisonError, RwLock};
use std::thread::JoinHandle;

use profile_model::Profile;
use profile_model::codec::DecodeOptions;
use tokio::sync::oneshot;

use crate::index::{self, Entry, Index, Interner, SampleLabels};
use crate::selector::{ProfileType, Selector};
use crate::source::{
    Labels, ProfileSink, ProfileSource, Progress, QueryTime, Series, SourceError, SourceFuture,
    TimeRange,
};
use crate::time::now_nanos;
use ingest::Prepared;
use record::Header;

/// How long and how much the store keeps.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StoreOptions {
    /// Drop profiles older than this, measured back from the newest stored profile's
    /// time (not the wall clock, so a store opened after a pause keeps its data).
    pub retention_nanos: Option<i64>,
    /// Drop the oldest segments while the segment files hold more than this (the
    /// newest segment is kept; segments are then at most an eighth of this).
    pub max_size_bytes: Option<u64>,
    /// A segment file is closed and a new one started once it reaches this size; size
    /// retention drops whole segments, so this is its granularity.
    pub segment_bytes: u64,
}

impl Default for StoreOptions {
    /// Keep everything, in segments of 64 MiB.
    fn default() -> Self {
        Self {
            retention_nanos: None,
            max_size_bytes: None,
            segment_bytes: 64 << 20,
        }
    }
}

/// Figures for the status line.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct StoreStats {
    /// Profiles stored (and queryable).
    pub profiles: usize,
    /// Bytes of all segment files.
    pub size_bytes: u64,
    /// Number of segment files.
    pub segments: usize,
}

/// Where a stored profile's record is: its segment, and the offset and length of the
/// whole record (frame and payload) in it. Ordered by write order.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct RecordRef {
    /// Segment id.
    pub segment: u64,
    /// Offset of the record's frame in the segment file.
    pub offset: u64,
    /// Bytes of frame and payload.
    pub len: u64,
}

/// A segment file as readers see it.
#[derive(Debug)]
struct Segment {
    file: Arc<File>,
    size_bytes: u64,
}

/// Profiles written but not yet durable, and whoever waits for them.
struct Job {
    records: Vec<Prepared>,
    done: oneshot::Sender<Result<(), SourceError>>,
}

#[derive(Default)]
struct Queue {
    jobs: Vec<Job>,
    closed: bool,
}

/// The index entry of a record at `locator` with `header`, its label sets and type
/// list shared through `interner`.
fn entry_of(interner: &mut Interner, locator: RecordRef, header: Header) -> Entry<RecordRef> {
    Entry {
        locator,
        time_nanos: header.time_nanos,
        duration_nanos: header.duration_nanos,
        period: header.period,
        types: interner.types(header.types),
        default_type: header.default_type,
        rated: header.rated,
        base_labels: interner.labels(header.labels),
        groups: interner.groups(header.groups),
        groups_over_base: false,
    }
}

/// What the store's users and its writer thread share.
struct Shared {
    dir: PathBuf,
    options: StoreOptions,
    index: RwLock<Index<RecordRef>>,
    segments: RwLock<BTreeMap<u64, Segment>>,
    interner: Mutex<Interner>,
    queue: Mutex<Queue>,
    wake: Condvar,
    warnings: Mutex<Vec<String>>,
}

/// The segment the writer thread appends to.
struct Active {
    id: u64,
    file: File,
    size_bytes: u64,
}

/// flint's on-disk profile store; see the module documentation. Dropping it finishes the
/// queued writes and stops its writer thread.
pub struct Store {
    shared: Arc<Shared>,
    writer: Option<JoinHandle<()>>,
    /// Held for the store's lifetime: one process per directory.
    _lock: File,
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

/// Why a store could not be opened, or a segment written or removed.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    /// A file or the directory could not be used.
    #[error("{what} {}: {source}", path.display())]
    Io {
        /// What was tried: "cannot open", "cannot sync", ….
        what: &'static str,
        /// The file or directory.
        path: PathBuf,
        /// What the system said.
        source: std::io::Error,
    },
    /// The directory holds other files: a folder of profiles would open as the store
    /// and hide them.
    #[error(
        "{} is not a flint store and is not empty (it holds {holds}): give a new or \
         empty folder",
        dir.display()
    )]
    NotAStore {
        /// The directory.
        dir: PathBuf,
        /// One of the files it holds.
        holds: String,
    },
    /// Another process has the store open.
    #[error(
        "store {} is open in another process (a flint serve or flint record): ask \
         that server (flint top grpc://HOST:PORT), or stop it first",
        dir.display()
    )]
    Locked {
        /// The store's directory.
        dir: PathBuf,
    },
    /// The writer thread could not be started.
    #[error("cannot start the store's writer thread: {0}")]
    WriterThread(std::io::Error),
}

/// The message, for callers that carry errors as text.
impl From<StoreError> for String {
    fn from(e: StoreError) -> Self {
        e.to_string()
    }
}

fn io_error(what: &'static str, path: &Path, source: std::io::Error) -> StoreError {
    StoreError::Io {
        what,
        path: path.to_path_buf(),
        source,
    }
}

impl Store {
    /// Whether `dir` holds a store (its `LOCK` file), so that a viewer opens it as one
    /// rather than as a directory of profile files.
    pub fn is_store_dir(dir: &Path) -> bool {
        dir.join("LOCK").is_file()
    }

    /// Opens the store in `dir`, creating it if missing. Rebuilds the index from the
    /// record headers, truncates a torn tail, skips damaged records (see
    /// [`Store::warnings`]) and applies retention. Fails when the directory cannot be
    /// used, holds other files (a folder of profiles would then open as the store and
    /// hide them), or another process has the store open.
    pub fn open(dir: &Path, options: StoreOptions) -> Result<Store, StoreError> {
        if !Self::is_store_dir(dir)
            && let Ok(mut items) = std::fs::read_dir(dir)
            && let Some(item) = items.next()
        {
            let name = item.map_or_else(|_| "files".into(), |i| i.file_name());
            return Err(StoreError::NotAStore {
                dir: dir.to_path_buf(),
                holds: name.to_string_lossy().into_owned(),
            });
        }
        std::fs::create_dir_all(dir).map_err(|e| io_error("cannot create", dir, e))?;
        let lock_path = dir.join("LOCK");
        let lock_file = OpenOptions::new()
            .create(true)
            .truncate(false)
            .write(true)
            .open(&lock_path)
            .map_err(|e| io_error("cannot open", &lock_path, e))?;
        lock_file.try_lock().map_err(|e| match e {
            std::fs::TryLockError::WouldBlock => StoreError::Locked {
                dir: dir.to_path_buf(),
            },
            std::fs::TryLockError::Error(e) => io_error("cannot lock", &lock_path, e),
        })?;

        let mut ids = Vec::new();
        for item in std::fs::read_dir(dir).map_err(|e| io_error("cannot read", dir, e))? {
            let item = item.map_err(|e| io_error("cannot read", dir, e))?;
            if let Some(id) = item.file_name().to_str().and_then(segment::parse_file_name) {
                ids.push(id);
            }
        }
        ids.sort_unstable();

        let mut warnings = Vec::new();
        let mut interner = Interner::default();
        let mut entries = Vec::new();
        let mut segments = BTreeMap::new();
        for &id in &ids {
            let path = dir.join(segment::file_name(id));
            let size_bytes =
                recover_segment(&path, id, &mut interner, &mut entries, &mut warnings)?;
            let file = File::open(&path).map_err(|e| io_error("cannot open", &path, e))?;
            segments.insert(
                id,
                Segment {
                    file: Arc::new(file),
                    size_bytes,
                },
            );
        }
        let shared = Arc::new(Shared {
            dir: dir.to_path_buf(),
            options,
            index: RwLock::new(Index::new(entries, SampleLabels::StringsOnly)),
            segments: RwLock::new(segments),
            interner: Mutex::new(interner),
            queue: Mutex::new(Queue::default()),
            wake: Condvar::new(),
            warnings: Mutex::new(warnings),
        });
        let mut active = match ids.last() {
            Some(&id) => {
                let path = dir.join(segment::file_name(id));
                let file = OpenOptions::new()
                    .append(true)
                    .open(&path)
                    .map_err(|e| io_error("cannot open", &path, e))?;
                let size_bytes = shared.segment_size(id);
                Active {
                    id,
                    file,
                    size_bytes,
                }
            }
            None => shared.new_segment(1)?,
        };
        shared.enforce_retention(&mut active)?;
        let writer_shared = shared.clone();
        let writer = std::thread::Builder::new()
            .name(crate::threads::STORE_WRITER.into())
            .spawn(move || writer_shared.run_writer(active))
            .map_err(StoreError::WriterThread)?;
        Ok(Store {
            shared,
            writer: Some(writer),
            _lock: lock_file,
        })
    }

    /// Stores one profile (gzipped or plain pprof) under `labels` and returns once it is
    /// durable; see [`ingest::prepare`] for what is checked. Blocks: call it from a plain
    /// thread, or use [`ProfileSink::write_raw`] from async code.
    pub fn write(&self, labels: Labels, raw_profile: &[u8]) -> Result<(), SourceError> {
        let prepared = ingest::prepare(labels, raw_profile, now_nanos(), DecodeOptions::default())?;
        self.submit(vec![prepared])?
            .blocking_recv()
            .map_err(|_| stopped())?
    }

    /// Stores several profiles with one sync; all are checked first, and none is stored
    /// when one is invalid. Blocks like [`Store::write`].
    pub fn write_batch(&self, profiles: &[(Labels, Vec<u8>)]) -> Result<(), SourceError> {
        let prepared = prepare_all(
            profiles.iter().map(|(l, raw)| (l.clone(), raw)),
            DecodeOptions::default(),
        )?;
        self.submit(prepared)?
            .blocking_recv()
            .map_err(|_| stopped())?
    }

    /// Queues prepared records for the writer thread.
    fn submit(
        &self,
        records: Vec<Prepared>,
    ) -> Result<oneshot::Receiver<Result<(), SourceError>>, SourceError> {
        let (done, wait) = oneshot::channel();
        let mut queue = lock(&self.shared.queue);
        if queue.closed {
            return Err(stopped());
        }
        queue.jobs.push(Job { records, done });
        drop(queue);
        self.shared.wake.notify_one();
        Ok(wait)
    }

    /// Profiles stored, bytes on disk, segment files.
    pub fn stats(&self) -> StoreStats {
        let segments = self
            .shared
            .segments
            .read()
            .unwrap_or_else(PoisonError::into_inner);
        StoreStats {
            profiles: self.shared.read_index().len(),
            size_bytes: segments.values().map(|s| s.size_bytes).sum(),
            segments: segments.len(),
        }
    }

    /// What opening repaired or skipped, and later problems of the writer thread (e.g.
    /// retention that could not delete a file), one line each.
    pub fn warnings(&self) -> Vec<String> {
        lock(&self.shared.warnings).clone()
    }

    /// The time span of all stored profiles.
    pub fn span(&self) -> TimeRange {
        self.shared.read_index().span()
    }

    /// The time span of the stored profiles of type `t` ([`Index::span_of`]).
    pub fn span_of(&self, t: &ProfileType) -> TimeRange {
        self.shared.read_index().span_of(t)
    }

    /// The heap bytes its index holds, for a memory budget.
    pub fn index_bytes(&self) -> u64 {
        self.shared.read_index().heap_bytes()
    }

    /// The store's directory.
    pub fn dir(&self) -> &Path {
        &self.shared.dir
    }

    /// The merged selected profile, cut to the selected profile type.
    fn merged(
        &self,
        selector: &Selector,
        time: QueryTime,
        progress: &Progress,
    ) -> Result<Profile, SourceError> {
        // Copy what the merge needs, so that writes go on while profiles are decoded.
        let entries: Vec<Entry<RecordRef>> = self
            .shared
            .read_index()
            .to_merge(selector, time)
            .into_iter()
            .cloned()
            .collect();
        self.merge_of(&entries, selector, progress)
    }

    /// Each selected profile of `range` apart, in time order (see
    /// [`ProfileSource::query_each`]).
    fn each(
        &self,
        selector: &Selector,
        range: TimeRange,
        progress: &Progress,
    ) -> Result<Vec<Profile>, SourceError> {
        let entries: Vec<Entry<RecordRef>> = (self.shared.read_index())
            .to_merge(selector, QueryTime::Merge(range))
            .into_iter()
            .cloned()
            .collect();
        index::each_time(
            entries,
            |e| e.time_nanos,
            |at_once| self.merge_of(at_once, selector, progress),
        )
    }

    /// The merge of `entries`' selected samples.
    fn merge_of(
        &self,
        entries: &[Entry<RecordRef>],
        selector: &Selector,
        progress: &Progress,
    ) -> Result<Profile, SourceError> {
        let files: BTreeMap<u64, Arc<File>> = {
            let segments = self
                .shared
                .segments
                .read()
                .unwrap_or_else(PoisonError::into_inner);
            entries
                .iter()
                .filter_map(|e| {
                    let id = e.locator.segment;
                    segments.get(&id).map(|s| (id, s.file.clone()))
                })
                .collect()
        };
        let refs: Vec<&Entry<RecordRef>> = entries.iter().collect();
        index::merge(
            &refs,
            selector,
            SampleLabels::StringsOnly,
            true,
            DecodeOptions::default(),
            progress,
            |r| format!("segment {} offset {}", r.segment, r.offset),
            |r, buf| {
                let file = files
                    .get(&r.segment)
                    .ok_or_else(|| format!("segment {} is gone", r.segment))?;
                read_body(file, r, buf)
            },
        )
    }
}

fn stopped() -> SourceError {
    SourceError::Failed("the store is closed".into())
}

/// Reads and checks one record into `bytes` (replacing its contents): where in it its
/// pprof bytes, as written, start.
fn read_body(file: &File, r: &RecordRef, bytes: &mut Vec<u8>) -> Result<usize, String> {
    let len = usize::try_from(r.len).map_err(|e| e.to_string())?;
    bytes.clear();
    bytes.resize(len, 0);
    file.read_exact_at(bytes, r.offset)
        .map_err(|e| format!("segment {} offset {}: {e}", r.segment, r.offset))?;
    let (frame, payload) = bytes.split_at(record::FRAME_BYTES.min(len));
    record::check_payload(frame, payload)
        .map_err(|e| format!("segment {} offset {}: {e}", r.segment, r.offset))?;
    let (_, body) = record::decode(payload)?;
    Ok(body.as_ptr() as usize - bytes.as_ptr() as usize)
}

/// Scans one segment file: indexes its intact records, reports damaged ones, and
/// truncates a torn tail (synced). Returns the file's size afterwards.
fn recover_segment(
    path: &Path,
    id: u64,
    interner: &mut Interner,
    entries: &mut Vec<Entry<RecordRef>>,
    warnings: &mut Vec<String>,
) -> Result<u64, StoreError> {
    let bytes = std::fs::read(path).map_err(|e| io_error("cannot read", path, e))?;
    let found = segment::scan(&bytes);
    for range in &found.damaged {
        warnings.push(format!(
            "{}: skipped {} damaged bytes at offset {}",
            path.display(),
            range.len(),
            range.start
        ));
    }
    for (offset, payload) in found.records {
        let locator = RecordRef {
            segment: id,
            offset: offset as u64,
            len: (payload.end - offset) as u64,
        };
        match record::decode(&bytes[payload]) {
            Ok((header, _)) => entries.push(entry_of(interner, locator, header)),
            Err(e) => warnings.push(format!(
                "{}: skipped the record at offset {offset}: {e}",
                path.display()
            )),
        }
    }
    if found.end < bytes.len() {
        warnings.push(format!(
            "{}: truncated {} bytes of an incomplete write at offset {}",
            path.display(),
            bytes.len() - found.end,
            found.end
        ));
        let file = OpenOptions::new()
            .write(true)
            .open(path)
            .map_err(|e| io_error("cannot open", path, e))?;
        file.set_len(found.end as u64)
            .and_then(|()| file.sync_all())
            .map_err(|e| io_error("cannot truncate", path, e))?;
    }
    Ok(found.end as u64)
}

impl Shared {
    fn read_index(&self) -> std::sync::RwLockReadGuard<'_, Index<RecordRef>> {
        self.index.read().unwrap_or_else(PoisonError::into_inner)
    }

    fn write_index(&self) -> std::sync::RwLockWriteGuard<'_, Index<RecordRef>> {
        self.index.write().unwrap_or_else(PoisonError::into_inner)
    }

    fn segment_size(&self, id: u64) -> u64 {
        self.segments
            .read()
            .unwrap_or_else(PoisonError::into_inner)
            .get(&id)
            .map_or(0, |s| s.size_bytes)
    }

    fn segment_bytes(&self) -> u64 {
        retention::segment_bytes(self.options.segment_bytes, self.options.max_size_bytes)
    }

    fn warn(&self, line: String) {
        lock(&self.warnings).push(line);
    }

    /// Creates segment `id` and makes its directory entry durable.
    fn new_segment(&self, id: u64) -> Result<Active, StoreError> {
        let path = self.dir.join(segment::file_name(id));
        let file = OpenOptions::new()
            .create_new(true)
            .append(true)
            .open(&path)
            .map_err(|e| io_error("cannot create", &path, e))?;
        self.sync_dir()?;
        let reader = File::open(&path).map_err(|e| io_error("cannot open", &path, e))?;
        self.segments
            .write()
            .unwrap_or_else(PoisonError::into_inner)
            .insert(
                id,
                Segment {
                    file: Arc::new(reader),
                    size_bytes: 0,
                },
            );
        Ok(Active {
            id,
            file,
            size_bytes: 0,
        })
    }

    fn sync_dir(&self) -> Result<(), StoreError> {
        File::open(&self.dir)
            .and_then(|d| d.sync_all())
            .map_err(|e| io_error("cannot sync", &self.dir, e))
    }

    /// The writer thread: commits the queued jobs batch by batch until the store is
    /// dropped and the queue is empty.
    fn run_writer(&self, mut active: Active) {
        loop {
            let jobs = {
                let mut queue = lock(&self.queue);
                while queue.jobs.is_empty() && !queue.closed {
                    queue = self
                        .wake
                        .wait(queue)
                        .unwrap_or_else(PoisonError::into_inner);
                }
                if queue.jobs.is_empty() {
                    return;
                }
                std::mem::take(&mut queue.jobs)
            };
            let result = self.commit(&mut active, &jobs);
            let retention = match &result {
                Ok(()) => self.enforce_retention(&mut active),
                Err(_) => Ok(()),
            };
            for job in jobs {
                // A writer that stopped waiting does not need the answer.
                let _ = job.done.send(result.clone());
            }
            if let Err(e) = retention {
                self.warn(format!("retention: {e}"));
            }
        }
    }

    /// Appends the jobs' records, syncs, then indexes them.
    fn commit(&self, active: &mut Active, jobs: &[Job]) -> Result<(), SourceError> {
        let mut buffer = Vec::new();
        let mut placed = Vec::new();
        for prepared in jobs.iter().flat_map(|j| &j.records) {
            let at = active.size_bytes + buffer.len() as u64;
            if at > 0 && at + prepared.record.len() as u64 > self.segment_bytes() {
                self.append(active, &mut buffer)?;
                *active = self
                    .new_segment(active.id + 1)
                    .map_err(|e| SourceError::Failed(e.to_string()))?;
            }
            placed.push((
                RecordRef {
                    segment: active.id,
                    offset: active.size_bytes + buffer.len() as u64,
                    len: prepared.record.len() as u64,
                },
                &prepared.header,
            ));
            buffer.extend_from_slice(&prepared.record);
        }
        self.append(active, &mut buffer)?;
        let mut interner = lock(&self.interner);
        let mut index = self.write_index();
        for (locator, header) in placed {
            index.insert(entry_of(&mut interner, locator, header.clone()));
        }
        Ok(())
    }

    /// Writes and syncs `buffer` at the end of the active segment; on failure cuts the
    /// segment back to what was durable before.
    fn append(&self, active: &mut Active, buffer: &mut Vec<u8>) -> Result<(), SourceError> {
        if buffer.is_empty() {
            return Ok(());
        }
        let written = active
            .file
            .write_all(buffer)
            .and_then(|()| active.file.sync_data());
        if let Err(e) = written {
            // Leave no partial record behind (opening would cut it away too).
            let _ = active.file.set_len(active.size_bytes);
            buffer.clear();
            return Err(SourceError::Failed(format!(
                "cannot write segment {}: {e}",
                active.id
            )));
        }
        active.size_bytes += buffer.len() as u64;
        buffer.clear();
        if let Some(s) = self
            .segments
            .write()
            .unwrap_or_else(PoisonError::into_inner)
            .get_mut(&active.id)
        {
            s.size_bytes = active.size_bytes;
        }
        Ok(())
    }

    /// Drops what retention says to: profiles past the age limit, and the oldest
    /// segments while over the size limit. Segment files left without profiles are
    /// deleted (the active one is first replaced by a new one).
    fn enforce_retention(&self, active: &mut Active) -> Result<(), StoreError> {
        let sizes: BTreeMap<u64, u64> = self
            .segments
            .read()
            .unwrap_or_else(PoisonError::into_inner)
            .iter()
            .map(|(id, s)| (*id, s.size_bytes))
            .collect();
        let cutoff = {
            let index = self.read_index();
            let times = index.entries();
            retention::age_cutoff(
                self.options.retention_nanos,
                times.first().map(|e| e.time_nanos),
                times.last().map(|e| e.time_nanos),
            )
        };
        let over_size = retention::segments_over_size(self.options.max_size_bytes, &sizes);
        if cutoff.is_none() && over_size.is_empty() {
            return Ok(());
        }
        let live: BTreeSet<u64> = {
            let mut index = self.write_index();
            index.retain(|e| {
                cutoff.is_none_or(|c| e.time_nanos >= c) && !over_size.contains(&e.locator.segment)
            });
            index.entries().iter().map(|e| e.locator.segment).collect()
        };
        let empty: Vec<u64> = sizes
            .keys()
            .copied()
            .filter(|id| !live.contains(id))
            .filter(|id| *id != active.id || active.size_bytes > 0)
            .collect();
        if empty.contains(&active.id) {
            *active = self.new_segment(active.id + 1)?;
        }
        let mut segments = self
            .segments
            .write()
            .unwrap_or_else(PoisonError::into_inner);
        for id in empty {
            segments.remove(&id);
            let path = self.dir.join(segment::file_name(id));
            std::fs::remove_file(&path).map_err(|e| io_error("cannot delete", &path, e))?;
        }
        drop(segments);
        self.sync_dir()
    }
}

impl Drop for Store {
    fn drop(&mut self) {
        lock(&self.shared.queue).closed = true;
        self.shared.wake.notify_all();
        if let Some(writer) = self.writer.take() {
            let _ = writer.join();
        }
    }
}

impl ProfileSource for Store {
    fn profile_types(&self, range: TimeRange) -> SourceFuture<'_, Vec<ProfileType>> {
        Box::pin(async move { Ok(self.shared.read_index().profile_types(range)) })
    }

    fn default_type(&self, range: TimeRange) -> SourceFuture<'_, Option<ProfileType>> {
        Box::pin(async move { Ok(self.shared.read_index().default_type(range)) })
    }

    fn labels(&self, selector: Selector, range: TimeRange) -> SourceFuture<'_, Vec<String>> {
        Box::pin(async move { Ok(self.shared.read_index().labels(&selector, range)) })
    }

    fn values(
        &self,
        name: String,
        selector: Selector,
        range: TimeRange,
    ) -> SourceFuture<'_, Vec<String>> {
        Box::pin(async move { Ok(self.shared.read_index().values(&name, &selector, range)) })
    }

    fn query_range(
        &self,
        selector: Selector,
        range: TimeRange,
        step_nanos: i64,
        sum_by: Option<Vec<String>>,
    ) -> SourceFuture<'_, Vec<Series>> {
        Box::pin(async move {
            self.shared
                .read_index()
                .query_range(&selector, range, step_nanos, sum_by.as_deref())
        })
    }

    fn query(
        &self,
        selector: Selector,
        time: QueryTime,
        progress: Progress,
    ) -> SourceFuture<'_, Profile> {
        Box::pin(async move { self.merged(&selector, time, &progress) })
    }

    fn query_each(
        &self,
        selector: Selector,
        range: TimeRange,
        progress: Progress,
    ) -> SourceFuture<'_, Vec<Profile>> {
        Box::pin(async move { self.each(&selector, range, &progress) })
    }

    /// The bytes of the records a query of `time` reads.
    fn estimate_bytes(&self, selector: &Selector, time: QueryTime) -> Option<u64> {
        let index = self.shared.read_index();
        Some(
            index
                .to_merge(selector, time)
                .iter()
                .map(|e| e.locator.len)
                .sum(),
        )
    }
}

/// Every profile checked and made into its record, stamped with one time of arrival;
/// the first refused one is the error, and then none is kept.
fn prepare_all<R: AsRef<[u8]>>(
    profiles: impl IntoIterator<Item = (Labels, R)>,
    decode: DecodeOptions,
) -> Result<Vec<Prepared>, SourceError> {
    let now = now_nanos();
    profiles
        .into_iter()
        .map(|(labels, raw)| ingest::prepare(labels, raw.as_ref(), now, decode))
        .collect()
}

impl ProfileSink for Store {
    /// Checks and indexes the profile on tokio's blocking pool, then waits (without
    /// blocking the executor) for the writer thread to make it durable.
    fn write_raw(&self, labels: Labels, raw_profile: Vec<u8>) -> SourceFuture<'_, ()> {
        Box::pin(async move {
            let now = now_nanos();
            let prepared = tokio::task::spawn_blocking(move || {
                ingest::prepare(labels, &raw_profile, now, DecodeOptions::default())
            })
            .await
            .map_err(|e| SourceError::Failed(format!("ingest task failed: {e}")))??;
            self.submit(vec![prepared])?.await.map_err(|_| stopped())?
        })
    }

    /// Every profile checked and prepared first, then all written with one sync: a
    /// refused one leaves the store as it was.
    fn write_raw_all(
        &self,
        profiles: Vec<(Labels, Vec<u8>)>,
        max_inflated_bytes: u64,
    ) -> SourceFuture<'_, ()> {
        let decode = DecodeOptions {
            max_decompressed_bytes: max_inflated_bytes,
            ..DecodeOptions::default()
        };
        Box::pin(async move {
            let prepared = tokio::task::spawn_blocking(move || prepare_all(profiles, decode))
                .await
                .map_err(|e| SourceError::Failed(format!("ingest task failed: {e}")))??;
            if prepared.is_empty() {
                return Ok(());
            }
            self.submit(prepared)?.await.map_err(|_| stopped())?
        })
    }
}
