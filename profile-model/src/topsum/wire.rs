//! One profile's top table counted straight from its pprof bytes, at any granularity
//! and through any filter, as [`crate::frames::FrameTable::build`] and [`crate::filter::Filters::prepare`] would see
//! the decoded profile: frames are named once per location of the message, and every
//! regex runs once per distinct string of the whole sum, never per sample.

use std::borrow::Borrow;
use std::fmt::Write as _;
use std::hash::Hash;

use regex::Regex;
use rustc_hash::FxHashMap;

use super::Rows;
use crate::error::ProfileError;
use crate::filter::{TagFilter, locations_matching, stack_passes};
use crate::frames::{FrameId, Granularity, LineParts};
use crate::merge::BASE_LABEL;
use crate::names::{clean_path, function_name};
use crate::profile::{Function, Label, LocationId, StrId};
use crate::top::{Counts, LocationFrames};
use crate::view::ViewOptions;
use crate::wire::tables::{LabelRuns, RawTables, SampleBuf, TableLocation, Tables};

/// A function without a name: its locations' frames are named by their addresses.
const NO_FRAME: FrameId = FrameId::MAX;
/// A function whose frames `hide` removes.
const HIDDEN: FrameId = FrameId::MAX - 1;

/// What reading profiles from their bytes keeps from one profile to the next: frames
/// interned as [`crate::frames::FrameTable`] tells them apart, their counts, what each
/// regex said of each string, and reused buffers.
///
/// Every profile's samples are counted into the same counts, by frame id, which are
/// added to the rows only when the sum is read ([`WireState::flush`]): a day of
/// profiles names about as many frames as one of them, and folding each profile's
/// counts into the rows had cost a twentieth of the time. A profile refused halfway
/// is taken back out by counting it again negated ([`WireState::add`]).
#[derive(Debug, Default)]
pub(super) struct WireState {
    granularity: Granularity,
    filters: WireFilters,
    /// Frame key → frame id; `row_of[frame]` is the frame's row.
    by_key: FxHashMap<String, FrameId>,
    row_of: Vec<usize>,
    /// Counts by frame id, of every profile added since the last flush.
    counts: Counts,
    /// Per profile, per function: at function granularity its frame id, else the
    /// id of its name and file in `names`; [`NO_FRAME`] for a function without a name
    /// (known by its binary), [`HIDDEN`] for one `hide` removes.
    function_key: Vec<FrameId>,
    /// Frames at function granularity without `hide`, by what the functions they
    /// were met for are shown by ([`shown_by`]), which alone decides the frame: the
    /// next profile's look-up then needs no naming.
    raw_frames: ByShownName<FrameId>,
    /// The `function_key` of every function at line or address granularity, or with
    /// `hide`: by what it is shown by and its file.
    named: NamedFunctions,
    /// Functions (line and address granularity): the name's length, `:`, the name and
    /// the file → id, and by id the name and the cleaned file.
    names: FxHashMap<String, u32>,
    name_of: Vec<(String, String)>,
    /// The key being looked up in `names`, kept to be reused.
    name_key: String,
    /// Frame ids by (function, line, address) at line and address granularity, so
    /// that a frame's key is made once per sum.
    line_frames: FxHashMap<(u32, i64, u64), FrameId>,
    /// Per profile: `location_frames[start..end]`, with `(start, end) = spans[l]`, are
    /// location l's frame ids (32-bit, as [`Tables::parse_with`] bounds them; one
    /// load per location).
    spans: Vec<(u32, u32)>,
    location_frames: Vec<FrameId>,
    /// Per profile: each location's frames as the counting loop reads them.
    frames: LocationFrames,
    sample: SampleBuf,
    /// Per profile: the label runs met so far and their labels, so that a sample whose
    /// labels repeat a run's bytes has them neither read nor checked again.
    runs: LabelRuns,
    run_labels: Vec<Vec<Label>>,
    pub(super) raw: RawTables,
    /// Whether the last profile counted had a negative value: its totals are then
    /// pprof's only once equal samples are merged ([`crate::top::totals`]).
    pub(super) saw_negative: bool,
    /// Whether a profile was counted since the last [`WireState::flush`].
    unflushed: bool,
}

/// What a question about strings answered for each string asked so far.
#[derive(Debug, Default)]
struct Answers(FxHashMap<String, bool>);

impl Answers {
    /// The answer for `text`, asked of `ask` the first time only.
    fn of(&mut self, text: &str, ask: impl FnOnce(&str) -> bool) -> bool {
        if let Some(&said) = self.0.get(text) {
            return said;
        }
        let said = ask(text);
        self.0.insert(text.to_string(), said);
        said
    }
}

/// A regex with what it said of each string met so far, of each function's name, and
/// of each string of the profile being read.
#[derive(Debug)]
struct CachedRegex {
    regex: Regex,
    said: Answers,
    /// Whether it matches the name a function is shown by, by what it is shown by
    /// ([`shown_by`]): each name is rewritten once per sum.
    names: ByShownName<bool>,
    /// What it said of each string of the profile, so that a file or binary is
    /// looked up once per profile.
    strings: PerString<bool>,
}

impl CachedRegex {
    fn new(regex: &Regex) -> Self {
        Self {
            regex: regex.clone(),
            said: Answers::default(),
            names: ByShownName::default(),
            strings: PerString::default(),
        }
    }

    fn is_match(&mut self, text: &str) -> bool {
        let regex = &self.regex;
        self.said.of(text, |t| regex.is_match(t))
    }

    /// Whether it matches string `id` of `tables`.
    fn matches_string(&mut self, tables: &Tables<'_>, id: StrId) -> bool {
        let (regex, said) = (&self.regex, &mut self.said);
        let mut ask = || said.of(tables.str(id), |t| regex.is_match(t));
        match self.strings.of(id, &mut ask) {
            Some(matched) => matched,
            None => ask(),
        }
    }

    /// Whether it matches the name function `f` of `tables` is shown by, or its file.
    fn matches_function(&mut self, tables: &Tables<'_>, f: &Function) -> bool {
        let (by, by_system) = shown_by(tables, f);
        let name_matches = match self.names.get(by, by_system) {
            Some(said) => said,
            None => {
                let name = function_name(tables.str(f.name), tables.str(f.system_name));
                let said = self.is_match(&name);
                self.names.insert(by, by_system, said);
                said
            }
        };
        name_matches || self.matches_string(tables, f.filename)
    }
}

/// What was asked of the strings of the profile being read, by string id, each asked
/// once per profile.
#[derive(Debug)]
struct PerString<T>(Vec<Option<T>>);

impl<T> Default for PerString<T> {
    fn default() -> Self {
        Self(Vec::new())
    }
}

impl<T: Copy> PerString<T> {
    /// Starts a profile of `tables`: its string ids are new.
    fn begin_profile(&mut self, tables: &Tables<'_>) {
        self.0.clear();
        self.0.resize_with(tables.strings.len(), || None);
    }

    /// The answer for string `id`, asked of `ask` the first time in the profile;
    /// `None` for an id the profile has no string for.
    fn of(&mut self, id: StrId, ask: impl FnOnce() -> T) -> Option<T> {
        let known = self.0.get_mut(id as usize)?;
        Some(*known.get_or_insert_with(ask))
    }
}

/// A name (or a source file's path) as the sums find it again: its 128-bit xxh3 hash,
/// not its bytes. Comparing a stored name's bytes cost a cache miss per function per
/// file (7% of the time of the 2,000-sample day's sum); two different names share a
/// hash with odds of 2^-128 a pair, and whoever writes a profile can give any two
/// functions one name anyway. Kept as two halves, not a `u128`, whose 16-byte
/// alignment made each map entry 32 bytes where 24 do.
type NameHash = [u64; 2];

/// The [`NameHash`] of `name`.
fn name_hash(name: &str) -> NameHash {
    let hash = twox_hash::XxHash3_128::oneshot(name.as_bytes());
    [(hash >> 64) as u64, hash as u64]
}

/// Something known of functions by what they are shown by ([`shown_by`]): a name
/// shown as it is apart from the same system name rewritten.
#[derive(Debug)]
struct ByShownName<T>(FxHashMap<NameHash, [Option<T>; 2]>);

impl<T> Default for ByShownName<T> {
    fn default() -> Self {
        Self(FxHashMap::default())
    }
}

impl<T: Copy> ByShownName<T> {
    /// What is known of the functions shown by `name`, a system name or not.
    fn get(&self, name: &str, by_system: bool) -> Option<T> {
        self.0.get(&name_hash(name))?[usize::from(by_system)]
    }

    /// Notes `value` for the functions shown by `name`, a system name or not.
    fn insert(&mut self, name: &str, by_system: bool, value: T) {
        let known = self.0.entry(name_hash(name)).or_insert([None, None]);
        known[usize::from(by_system)] = Some(value);
    }
}

/// What function `f` of `tables` is shown by, which alone decides the name shown
/// ([`function_name`]): its system name, rewritten as pprof does (demangled,
/// shortened), where its name is empty or is the system name; else its name as it is.
/// Returned with whether it is the system name: the same name is two functions when
/// one profile sets it as both names and one not.
fn shown_by<'a>(tables: &Tables<'a>, f: &Function) -> (&'a str, bool) {
    let (raw, system_name) = (tables.str(f.name), tables.str(f.system_name));
    match f.name == f.system_name || raw.is_empty() || raw == system_name {
        true => (system_name, true),
        false => (raw, false),
    }
}

/// Keys of functions by what they are shown by ([`shown_by`]) and their file: the
/// name is looked up as it is, the file by the id it got when first met in the
/// profile, so that no key is put together from the two (name and path: the longest
/// strings of a profile).
#[derive(Debug, Default)]
struct NamedFunctions {
    /// Name → the first of its entries in `entries`.
    by_name: FxHashMap<NameHash, u32>,
    /// (file id times 2, plus 1 when shown by the system name; key; the name's next
    /// entry or [`NONE`]).
    entries: Vec<(u32, FrameId, u32)>,
    /// File → id.
    files: FxHashMap<NameHash, u32>,
    /// Per profile, by string id: the string's id as a file.
    file_ids: PerString<u32>,
}

/// No next entry in [`NamedFunctions`]; the file id of a function at plain function
/// granularity, where files are not looked up.
const NONE: u32 = u32::MAX;

impl NamedFunctions {
    /// The id of file `file` (a string id of `tables`).
    fn file_id(&mut self, tables: &Tables<'_>, file: StrId) -> u32 {
        let files = &mut self.files;
        let mut id = || id_of(files, &name_hash(tables.str(file)));
        match self.file_ids.of(file, &mut id) {
            Some(id) => id,
            None => id(),
        }
    }

    /// The key of the function shown by `name` (a system name or not: `by_system`) in
    /// file `file` (an id), if met before.
    fn get(&self, name: &str, by_system: bool, file: u32) -> Option<FrameId> {
        let mut e = *self.by_name.get(&name_hash(name))?;
        let file = 2 * file + u32::from(by_system);
        while let Some(&(f, key, next)) = self.entries.get(e as usize) {
            if f == file {
                return Some(key);
            }
            e = next;
        }
        None
    }

    /// Notes the key of a function [`NamedFunctions::get`] did not find.
    fn insert(&mut self, name: &str, by_system: bool, file: u32, key: FrameId) {
        let e = self.entries.len() as u32;
        let first = self.by_name.entry(name_hash(name)).or_insert(NONE);
        self.entries
            .push((2 * file + u32::from(by_system), key, *first));
        *first = e;
    }
}

/// [`crate::filter::Filters`] for reading profiles from their bytes.
#[derive(Debug, Default)]
struct WireFilters {
    hide: Option<CachedRegex>,
    focus: Option<CachedRegex>,
    ignore: Option<CachedRegex>,
    tags: Vec<WireTag>,
    /// Per profile: which locations the focus and the ignore regexes match.
    focused: Vec<bool>,
    ignored: Vec<bool>,
}

/// A [`TagFilter`] for reading profiles from their bytes.
#[derive(Debug)]
struct WireTag {
    filter: TagFilter,
    said: Answers,
    /// Per profile: the string ids of the filter's key, and whether the filter keeps
    /// each string as a value.
    keys: Vec<StrId>,
    values: PerString<bool>,
}

impl WireState {
    /// A state that counts frames at `options`' granularity, through its filters.
    pub(super) fn new(options: &ViewOptions) -> Self {
        let f = &options.filters;
        Self {
            granularity: options.granularity,
            filters: WireFilters {
                hide: f.hide.as_ref().map(CachedRegex::new),
                focus: f.focus.as_ref().map(CachedRegex::new),
                ignore: f.ignore.as_ref().map(CachedRegex::new),
                tags: f
                    .tags
                    .iter()
                    .map(|t| WireTag {
                        filter: t.clone(),
                        said: Answers::default(),
                        keys: Vec::new(),
                        values: PerString::default(),
                    })
                    .collect(),
                ..WireFilters::default()
            },
            ..Self::default()
        }
    }

    /// Counts the samples of `body` (the message `tables` were read from) into
    /// `rows`, `sign` times; returns the profile's [`crate::top::Top::total`] and
    /// [`crate::top::Top::base_total`]. Nothing is added when a sample is refused.
    pub(super) fn add(
        &mut self,
        tables: &Tables<'_>,
        body: &[u8],
        sample_type: usize,
        rows: &mut Rows,
        sign: i64,
    ) -> Result<(i64, i64), ProfileError> {
        self.unflushed = true;
        self.location_frames(tables, rows);
        self.filters.prepare(tables);
        self.counts.grow(self.row_of.len());
        let frames = &self.location_frames;
        let locations = (self.spans.iter()).map(|&(a, b)| &frames[a as usize..b as usize]);
        self.counts.note_locations(locations, &mut self.frames);
        // The counting loop is picked once per profile (see `Counts::add`).
        let count = |w: &mut Self, sign: i64| match w.counts.keeps_every_edge() {
            true => w.count_samples::<true>(tables, body, sample_type, sign),
            false => w.count_samples::<false>(tables, body, sample_type, sign),
        };
        let counted = count(self, sign);
        if counted.is_err() {
            // Reading is deterministic: counted again negated, the samples counted
            // before the refused one (and the part of it that was) are taken back out,
            // up to the same error.
            let again = count(self, sign.wrapping_neg());
            debug_assert!(again.is_err(), "a refused profile was read whole");
            self.counts.forget_new_edges();
        }
        self.counts.keep_edges();
        counted
    }

    /// Adds the counts of every profile added since the last flush to `rows`, and
    /// forgets them.
    pub(super) fn flush(&mut self, rows: &mut Rows) {
        if !std::mem::take(&mut self.unflushed) {
            return;
        }
        for (frame, flat, cum) in self.counts.values(self.row_of.len()) {
            rows.add(self.row_of[frame as usize], flat, cum, 1);
        }
        for e in self.counts.edges() {
            let (caller, callee) = (
                self.row_of[e.caller as usize],
                self.row_of[e.callee as usize],
            );
            rows.edge(caller, callee, e.inlined, e.called);
        }
        self.counts.clear(self.row_of.len());
    }

    /// Fills `spans` and `location_frames` with the frames of every location,
    /// innermost first, as [`crate::frames::FrameTable::build`] names them; frames
    /// seen for the first time get their row in `rows`.
    fn location_frames(&mut self, tables: &Tables<'_>, rows: &mut Rows) {
        let w = self;
        w.function_key.clear();
        // Every function first, in a loop of its own: the look-ups by name then do not
        // wait on one another (naming took a third less time than finding them location
        // by location). At function granularity, a function no location names gets a
        // row that stays empty.
        let plain = w.granularity == Granularity::Function && w.filters.hide.is_none();
        if !plain {
            w.named.file_ids.begin_profile(tables);
        }
        if let Some(hide) = &mut w.filters.hide {
            hide.strings.begin_profile(tables);
        }
        for function in &tables.functions {
            // Most functions: shown by a name met before, which alone decides the
            // frame at plain function granularity, and with the file otherwise.
            let (by, by_system) = shown_by(tables, function);
            let file_id = match plain {
                true => NONE,
                false => w.named.file_id(tables, function.filename),
            };
            let found = match plain {
                true => w.raw_frames.get(by, by_system),
                false => w.named.get(by, by_system, file_id),
            };
            if let Some(key) = found {
                w.function_key.push(key);
                continue;
            }
            let file = tables.str(function.filename);
            let name = function_name(tables.str(function.name), tables.str(function.system_name));
            let key = if w
                .filters
                .hide
                .as_mut()
                .is_some_and(|hide| hide.matches_function(tables, function))
            {
                HIDDEN
            } else if name.is_empty() {
                NO_FRAME
            } else if w.granularity == Granularity::Function {
                // A named frame's key is its name (crate::names::node_key).
                w.frame(rows, &name, &name)
            } else {
                w.function_id(&name, file)
            };
            match plain {
                true => w.raw_frames.insert(by, by_system, key),
                false => w.named.insert(by, by_system, file_id, key),
            }
            w.function_key.push(key);
        }
        w.spans.clear();
        w.location_frames.clear();
        for loc in &tables.locations {
            let start = w.location_frames.len() as u32;
            // Most locations: one line, of a named function, nothing hidden.
            if let (true, [line]) = (plain, tables.lines_of(loc)) {
                let frame = w.function_key[line.function as usize];
                if frame != NO_FRAME {
                    w.location_frames.push(frame);
                    w.spans.push((start, start + 1));
                    continue;
                }
            }
            let binary = loc.mapping.map(|m| tables.mappings[m as usize].filename);
            let hidden = (w.filters.hide.as_mut()).is_some_and(|h| match binary {
                Some(binary) => h.matches_string(tables, binary),
                None => h.is_match(""),
            });
            let binary = binary.map_or("", |b| tables.str(b));
            if !hidden {
                w.frames_of(tables, loc, binary, rows);
            }
            w.spans.push((start, w.location_frames.len() as u32));
        }
    }

    /// Appends the frame numbers of location `loc` (in binary `binary`) to
    /// `location_frames`.
    fn frames_of(
        &mut self,
        tables: &Tables<'_>,
        loc: &TableLocation,
        binary: &str,
        rows: &mut Rows,
    ) {
        let at = LineParts {
            binary,
            address: loc.address,
            ..LineParts::default()
        };
        let lines = tables.lines_of(loc);
        if lines.is_empty() {
            let frame = self.named_frame(rows, &at);
            self.location_frames.push(frame);
        }
        for line in lines {
            let function = line.function as usize;
            let frame = match (self.granularity, self.function_key[function]) {
                (_, HIDDEN) => continue,
                (_, NO_FRAME) => {
                    let f = &tables.functions[function];
                    let parts = LineParts {
                        file: tables.str(f.filename),
                        line: line.line,
                        start_line: f.start_line,
                        ..at
                    };
                    self.named_frame(rows, &parts)
                }
                (Granularity::Function, frame) => frame,
                (granularity, name) => {
                    let address = match granularity {
                        Granularity::Address => loc.address,
                        _ => 0,
                    };
                    let key = (name, line.line, address);
                    match self.line_frames.get(&key) {
                        Some(&f) => f,
                        None => {
                            let (function, file) = &self.name_of[name as usize];
                            let parts = LineParts {
                                function,
                                file,
                                line: line.line,
                                ..at
                            };
                            let (frame_key, frame) = parts.frame(granularity);
                            let f = self.frame(rows, &frame_key, &frame.name);
                            self.line_frames.insert(key, f);
                            f
                        }
                    }
                }
            };
            self.location_frames.push(frame);
        }
    }

    /// The frame of `parts` (no function name, or no line at all), named and told
    /// apart as [`LineParts::frame`] does.
    fn named_frame(&mut self, rows: &mut Rows, parts: &LineParts<'_>) -> FrameId {
        let (key, frame) = parts.frame(self.granularity);
        self.frame(rows, &key, &frame.name)
    }

    /// The id in `names` of the function named `name` in source file `file`.
    fn function_id(&mut self, name: &str, file: &str) -> u32 {
        let key = &mut self.name_key;
        key.clear();
        // Told apart by the name's length: a name or a file may hold any character.
        let _ = write!(key, "{}:", name.len());
        key.push_str(name);
        key.push_str(file);
        let id = id_of(&mut self.names, key);
        if id as usize == self.name_of.len() {
            (self.name_of).push((name.to_string(), clean_path(file).into_owned()));
        }
        id
    }

    /// The frame with `key`, made (with its row in `rows`, named `name`) when new.
    fn frame(&mut self, rows: &mut Rows, key: &str, name: &str) -> FrameId {
        match self.by_key.get(key) {
            Some(f) => *f,
            None => {
                let f = self.row_of.len() as FrameId;
                self.row_of.push(rows.row(key, name));
                self.by_key.insert(key.to_string(), f);
                f
            }
        }
    }

    /// Counts every sample of `body` that the filters keep into `counts`, `sign` times;
    /// returns the profile's totals (of every sample, kept or not). `COMPLETE` is
    /// [`Counts::keeps_every_edge`].
    fn count_samples<const COMPLETE: bool>(
        &mut self,
        tables: &Tables<'_>,
        body: &[u8],
        sample_type: usize,
        sign: i64,
    ) -> Result<(i64, i64), ProfileError> {
        let WireState {
            counts,
            frames,
            sample,
            filters,
            runs,
            run_labels,
            ..
        } = self;
        runs.clear();
        run_labels.clear();
        let (mut total, mut base_total) = (0i64, 0i64);
        let mut saw_negative = false;
        // The string ids of the base label's key and value (none in most profiles):
        // labels are then told apart by their ids, not by their strings.
        let base_keys = ids_of(tables, BASE_LABEL);
        let trues = if base_keys.is_empty() {
            Vec::new()
        } else {
            ids_of(tables, "true")
        };
        // Without focus or ignore filters, which look at whole stacks, a stack is
        // counted as its ids are read.
        let defer = filters.focus.is_none() && filters.ignore.is_none();
        let keeps_all = defer && filters.tags.is_empty();
        let mut i = 0;
        tables.for_each_sample(body, |bytes| {
            let packed = if defer {
                tables.read_sample_deferred(i, bytes, sample, Some((runs, run_labels)))?
            } else {
                tables.read_sample_with(i, bytes, sample, Some((runs, run_labels)))?;
                None
            };
            i += 1;
            if sample.run_read {
                runs.remember(run_labels.len() as u32);
                run_labels.push(sample.labels.clone());
            }
            let labels = match sample.known {
                Some(run) => run_labels.get(run as usize).map_or(&[][..], Vec::as_slice),
                None => &sample.labels,
            };
            // A profile without the column counts nothing, but its stacks are checked.
            let value = sample.values.get(sample_type).copied().unwrap_or(0);
            saw_negative |= value < 0;
            total = total.wrapping_add(value.wrapping_abs());
            if !base_keys.is_empty()
                && labels
                    .iter()
                    .any(|l| base_keys.contains(&l.key) && trues.contains(&l.str))
            {
                base_total = base_total.wrapping_add(value.wrapping_abs());
            }
            let counted =
                value != 0 && (keeps_all || filters.keeps(tables, &sample.locations, labels));
            let weight = value.wrapping_mul(sign);
            match packed {
                None if counted => {
                    let stack = sample.locations.iter();
                    counts.add::<COMPLETE>(weight, &mut stack.map(|&l| frames.entry(l)), frames);
                }
                None => {}
                // One entry per location: `location_frames` filled `frames` so.
                Some(packed) => {
                    let read = (i - 1, bytes, packed);
                    tables.read_deferred_ids(read, frames.entries(), sample, |stack| {
                        if counted {
                            counts.add::<COMPLETE>(
                                weight,
                                &mut stack.map(|(_, entry)| entry),
                                frames,
                            );
                        }
                    })?;
                }
            }
            Ok(())
        })?;
        self.saw_negative = saw_negative;
        Ok((if base_total > 0 { base_total } else { total }, base_total))
    }
}

/// The id of `key` in `ids`, the next one when it has none yet (a key is copied only
/// then: a name, or a [`NameHash`]).
fn id_of<K, Q>(ids: &mut FxHashMap<K, u32>, key: &Q) -> u32
where
    K: Borrow<Q> + Eq + Hash,
    Q: ToOwned<Owned = K> + Eq + Hash + ?Sized,
{
    if let Some(&id) = ids.get(key) {
        return id;
    }
    let id = ids.len() as u32;
    ids.insert(key.to_owned(), id);
    id
}

/// The ids of the strings of `tables` equal to `text`.
fn ids_of(tables: &Tables<'_>, text: &str) -> Vec<StrId> {
    (0..tables.strings.len() as StrId)
        .filter(|&id| tables.str(id) == text)
        .collect()
}

impl WireFilters {
    /// Prepares the focus and ignore regexes' answers per location of `tables`, and
    /// the tag filters' keys, as [`crate::filter::Filters::prepare`] does for a decoded profile.
    fn prepare(&mut self, tables: &Tables<'_>) {
        for (regex, matched) in [
            (&mut self.focus, &mut self.focused),
            (&mut self.ignore, &mut self.ignored),
        ] {
            if let Some(re) = regex {
                re.strings.begin_profile(tables);
                let functions: Vec<bool> = (tables.functions.iter())
                    .map(|f| re.matches_function(tables, f))
                    .collect();
                let mappings: Vec<bool> = (tables.mappings.iter())
                    .map(|m| re.matches_string(tables, m.filename))
                    .collect();
                let locations = tables.locations.iter();
                *matched = locations_matching(
                    &functions,
                    &mappings,
                    locations.map(|l| (tables.lines_of(l), l.mapping)),
                );
            }
        }
        for tag in &mut self.tags {
            tag.keys = ids_of(tables, &tag.filter.key);
            tag.values.begin_profile(tables);
        }
    }

    /// Whether a sample of `stack` and `labels` passes the focus, ignore and tag
    /// filters.
    fn keeps(&mut self, tables: &Tables<'_>, stack: &[LocationId], labels: &[Label]) -> bool {
        let kept_by_tags = self
            .tags
            .iter_mut()
            .all(|tag| labels.iter().any(|l| tag.keeps(tables, l)));
        let ignored = self.ignore.as_ref().map(|_| &self.ignored[..]);
        let focused = self.focus.as_ref().map(|_| &self.focused[..]);
        kept_by_tags && stack_passes(stack, ignored, focused)
    }
}

impl WireTag {
    /// Whether `label` has the filter's key and a value it keeps.
    fn keeps(&mut self, tables: &Tables<'_>, label: &Label) -> bool {
        if !self.keys.contains(&label.key) {
            return false;
        }
        if label.str == 0 {
            return self.filter.keeps_num(label.num);
        }
        let (filter, said) = (&self.filter, &mut self.said);
        let ask = || said.of(tables.str(label.str), |t| filter.keeps_str(t));
        self.values.of(label.str, ask).unwrap_or(false)
    }
}
