//! The top table of many files, summed straight from their bytes without building
//! profiles ([`sum_top`]), or of one profile ([`top_of_profile`]), with what pprof's
//! header says about them ([`TopHeader`]): `flint top`'s library half.

use std::path::{Path, PathBuf};

use profile_model::codec::{DecodeOptions, decode_without_stacks};
use profile_model::topsum::TopSum;
use profile_model::{Profile, ProfileError, View, ViewOptions};

use super::runs::Order;
use super::{FileBytes, FileRef, Files, Fold, NotAdded, ReadError, ReadOptions, read_into};

/// What the header of pprof's `-top` says about the inputs.
#[derive(Debug)]
pub struct TopHeader {
    /// `type/unit` of every sample type, from the first profile.
    sample_type_names: Vec<String>,
    /// Name of the first profile, for errors.
    first: String,
    /// The first profile's chosen type as `--query` takes it, for errors.
    profile_type: String,
    /// The chosen sample type's kind.
    pub kind: String,
    /// The chosen sample type's unit.
    pub unit: String,
    /// The first profile's main binary (its first mapping): file name and build id.
    pub binary: (String, String),
    /// Every profile's comments, each once, in the order read.
    pub comments: Vec<String>,
    /// As pprof merges headers: the earliest start of the profiles that have one.
    pub time_nanos: i64,
    /// As pprof merges headers: the sum of the profiles' durations.
    pub duration_nanos: i64,
}

impl TopHeader {
    /// What the first profile read says: its sample types, the chosen one's kind and
    /// unit, and its main binary. Its time and comments are added by
    /// [`TopHeader::add`], as every profile's.
    fn of_first(path: &Path, profile: &Profile, sample_type: usize) -> Self {
        let kind_unit = profile.sample_types[sample_type];
        let binary = profile.mappings.first().map_or_else(Default::default, |m| {
            let file = profile.str(m.filename);
            let base = file.rsplit('/').next().unwrap_or(file);
            (base.to_string(), profile.str(m.build_id).to_string())
        });
        Self {
            sample_type_names: profile.sample_type_names(),
            first: path.display().to_string(),
            profile_type: crate::files::profile_types_of(profile)
                .get(sample_type)
                .map_or_else(String::new, ToString::to_string),
            kind: profile.str(kind_unit.kind).to_string(),
            unit: profile.str(kind_unit.unit).to_string(),
            binary,
            comments: Vec::new(),
            time_nanos: 0,
            duration_nanos: 0,
        }
    }

    /// Adds a profile's header: its start (the earliest counts), its duration (they
    /// add up) and its comments.
    fn add(&mut self, header: &HeaderPart) {
        if header.time_nanos != 0 && (self.time_nanos == 0 || header.time_nanos < self.time_nanos) {
            self.time_nanos = header.time_nanos;
        }
        self.duration_nanos = self.duration_nanos.saturating_add(header.duration_nanos);
        for c in &header.comments {
            if !self.comments.contains(c) {
                self.comments.push(c.clone());
            }
        }
    }

    /// The error for a later profile whose sample types differ from the first's; for
    /// one found in a folder (not `named` on the command line), how to take one type
    /// of a folder's profiles.
    fn mismatch(&self, path: &Path, names: Vec<String>, named: bool) -> ReadError {
        ReadError::SampleTypesDiffer {
            error: Box::new(ProfileError::IncompatibleSampleTypes {
                first: self.first.clone(),
                first_types: self.sample_type_names.join(", "),
                second: path.display().to_string(),
                second_types: names.join(", "),
            }),
            hint: (!named && !self.profile_type.is_empty()).then(|| self.profile_type.clone()),
        }
    }
}

/// What one profile's header adds to a [`TopHeader`].
#[derive(Debug, Default)]
struct HeaderPart {
    /// The file's place among the files read (its comments count in file order).
    file: usize,
    time_nanos: i64,
    duration_nanos: i64,
    comments: Vec<String>,
}

impl HeaderPart {
    fn of(profile: &Profile) -> Self {
        Self {
            file: 0,
            time_nanos: profile.time_nanos,
            duration_nanos: profile.duration_nanos,
            comments: profile
                .comments
                .iter()
                .map(|c| profile.str(*c).to_string())
                .collect(),
        }
    }
}

/// The summed top table, what the header says about the inputs, and the files and
/// folders skipped.
#[derive(Debug)]
pub struct TopSummed {
    /// The sum of every profile's top table.
    pub sum: TopSum,
    /// `None` when no profile was read.
    pub header: Option<TopHeader>,
    /// A line per folder or file skipped, with why.
    pub skipped: Vec<String>,
}

/// The sample type `spec` asks for (by name or index), else pprof's default.
pub fn sample_type_of(profile: &Profile, spec: Option<&str>) -> Result<usize, ReadError> {
    if profile.sample_types.is_empty() {
        return Err(ReadError::NoSampleTypes);
    }
    match spec {
        None => Ok(profile.default_sample_index()),
        Some(spec) => profile
            .find_sample_type(spec)
            .ok_or_else(|| ReadError::NoSuchSampleType {
                spec: spec.to_string(),
                has: profile.sample_type_names(),
            }),
    }
}

/// What pprof's header says of one profile named `name`, shown in `sample_type`.
pub fn header_of(name: &Path, profile: &Profile, sample_type: usize) -> TopHeader {
    let mut header = TopHeader::of_first(name, profile, sample_type);
    header.add(&HeaderPart::of(profile));
    header
}

/// The top table of one profile named `name`, seen through `options`, and its header.
pub fn top_of_profile(
    name: &Path,
    profile: &Profile,
    sample_type: usize,
    options: &ViewOptions,
) -> (TopSum, TopHeader) {
    let header = header_of(name, profile, sample_type);
    let mut sum = TopSum::new();
    let view = View::new(profile, options);
    sum.add(&view.top(profile, sample_type), &view.frames, 1);
    (sum, header)
}

/// Sums the top tables of `files` minus those of `bases` (files and folders, as
/// [`Files::list`] finds them), seen through `options`, the sample type `sample_type`
/// asks for ([`sample_type_of`], of the first profile that reads). Each file's samples
/// are read straight from its bytes on every core ([`Files::read`]), without building
/// profiles: the same table and the same errors as decoding each file and summing the
/// top tables of their views (the model's tests compare both), a few times faster.
/// A lone file is decoded whole instead, and its top table made from its view: one
/// read of it, where the sum would read it again (a 300,000-sample file: 349 ms
/// against 398 ms).
pub fn sum_top(
    files: &[PathBuf],
    bases: &[PathBuf],
    sample_type: Option<&str>,
    options: &ViewOptions,
    decode: DecodeOptions,
) -> Result<TopSummed, ReadError> {
    let all = Files::list(&[files, bases])?;
    if let Some(lone) = all.read_lone(decode) {
        let (profile, skipped) = lone?;
        let path = all.file(0).path;
        let t = sample_type_of(&profile, sample_type)?;
        let (sum, header) = top_of_profile(path, &profile, t, options);
        return Ok(TopSummed {
            sum,
            header: Some(header),
            skipped,
        });
    }
    // The sample type and the header come from the first file that reads, as when
    // profiles are decoded one by one (checked as decoding checks it, but without its
    // stacks, which the sum reads). What the files tried for it held (or why they
    // could not be read) is handed on: a pipe (`/dev/stdin`, `<(…)`) gives its bytes
    // only once.
    let mut tried = Vec::new();
    let mut first = None;
    for i in 0..all.len() {
        let path = all.file(i).path;
        let mut bytes = Vec::new();
        let read = read_into(path, &mut bytes, decode);
        let profile = read
            .as_ref()
            .ok()
            .and_then(|()| decode_without_stacks(&bytes, decode).ok());
        tried.push(read.map(|()| bytes));
        if let Some(profile) = profile {
            first = Some((path, profile));
            break;
        }
    }
    let (mut header, sample_type) = match &first {
        Some((path, profile)) => {
            let t = sample_type_of(profile, sample_type)?;
            (Some(TopHeader::of_first(path, profile, t)), t)
        }
        None => (None, 0),
    };
    let fold = SumFiles {
        options,
        sample_type,
        first: header.as_ref(),
    };
    let read = all.read(
        &fold,
        ReadOptions {
            prefetched: tried,
            ..ReadOptions::new(decode)
        },
    )?;
    let (sum, mut parts) = read.folded;
    parts.sort_unstable_by_key(|part| part.file);
    if let Some(header) = &mut header {
        for part in &parts {
            header.add(part);
        }
    }
    Ok(TopSummed {
        sum,
        header,
        skipped: read.skipped,
    })
}

/// [`sum_top`]'s fold: each file's top table added to the sum (the bases' taken
/// away), and its header kept.
struct SumFiles<'a> {
    options: &'a ViewOptions,
    sample_type: usize,
    /// The header of the first profile that read: every other must have its sample
    /// types.
    first: Option<&'a TopHeader>,
}

impl Fold for SumFiles<'_> {
    type Run = (TopSum, Vec<HeaderPart>);

    fn run(&self) -> Self::Run {
        (TopSum::for_view(self.options), Vec::new())
    }

    fn add(
        &self,
        (sum, parts): &mut Self::Run,
        file: FileRef<'_>,
        mut bytes: FileBytes<'_>,
    ) -> Result<(), NotAdded> {
        let sign = if file.set == 0 { 1 } else { -1 };
        let body = bytes.body().map_err(|e| file.broken(e))?;
        let summary = sum
            .add_pprof(body, self.sample_type, sign)
            .map_err(|e| file.broken(e))?;
        if let Some(first) = self.first
            && first.sample_type_names != summary.sample_types
        {
            let e = first.mismatch(file.path, summary.sample_types, file.named);
            return Err(NotAdded::Stop(e));
        }
        parts.push(HeaderPart {
            file: file.index,
            time_nanos: summary.time_nanos,
            duration_nanos: summary.duration_nanos,
            comments: summary.comments,
        });
        Ok(())
    }

    fn seal(&self, (sum, _): &mut Self::Run) {
        sum.settle();
    }

    fn absorb(&self, (sum, parts): &mut Self::Run, later: Self::Run) -> Result<(), ReadError> {
        sum.absorb(later.0);
        parts.extend(later.1);
        Ok(())
    }

    /// A sum: each thread adds all the files it reads to one [`TopSum`], whose frames
    /// and call edges it then learns once.
    const ORDER: Order = Order::Any;
}
