//! A query's merge of the selected samples of index entries, read straight from their
//! bytes on all cores ([`merge`]).

use profile_model::codec::{DecodeOptions, message_bytes};
use profile_model::merge::{KeepLabels, LabelValue, Merger, Selection};
use profile_model::{Profile, ProfileError};

use super::entry::Entry;
use super::labels::{SampleLabels, labels_over};
use crate::read::runs::{Failure, Order, RunBuffers, fold_in_runs};
use crate::selector::Selector;
use crate::source::{Progress, SourceError};

/// Merges the selected samples of `entries`, each loaded by `load(locator, buffer)`
/// into a reused buffer (replacing its contents), which returns where in it the pprof
/// bytes start (gzipped or not, inflated with `decode`'s cap); `name` names an entry in
/// errors.
/// With `one_type`, only the selected profile type is merged (as Parca answers). The
/// entries are merged straight from their bytes ([`Merger::add_pprof`]), never decoded
/// into profiles: each thread merges a run of consecutive entries, and the runs are
/// merged in order ([`fold_in_runs`]), so the result is the same as merging one entry
/// after another. An entry gone or broken since it was indexed is merged without and
/// named ([`Progress::skip`]); the merge fails only when nothing is left.
/// [`SourceError::NoData`] when `entries` is empty. Before each entry the memory the
/// merge holds is checked against its lease, if any ([`Progress::checkpoint`]).
#[allow(
    clippy::too_many_arguments,
    reason = "one call site per source, each naming every part"
)]
pub(crate) fn merge<L: Sync>(
    entries: &[&Entry<L>],
    selector: &Selector,
    rule: SampleLabels,
    one_type: bool,
    decode: DecodeOptions,
    progress: &Progress,
    name: impl Fn(&L) -> String + Sync,
    load: impl Fn(&L, &mut Vec<u8>) -> Result<usize, String> + Sync,
) -> Result<Profile, SourceError> {
    if entries.is_empty() {
        return Err(SourceError::NoData);
    }
    progress.set_total(entries.len());
    let add = |merger: &mut Merger, buf: &mut RunBuffers, i: usize| {
        if progress.is_cancelled() {
            return Err(Failure::Stop(SourceError::Cancelled));
        }
        progress.checkpoint().map_err(Failure::Stop)?;
        let entry = entries[i];
        let added = merge_entry(
            merger, buf, entry, selector, rule, one_type, decode, &name, &load,
        );
        if !matches!(added, Err(Failure::Stop(_))) {
            progress.step();
        }
        added
    };
    let merged = fold_in_runs(
        entries.len(),
        Order::Items,
        Merger::new,
        add,
        |_| {},
        |merger, run| {
            merger
                .absorb(run)
                .map_err(|e| SourceError::Failed(e.to_string()))
        },
    )?;
    let mut skipped = merged.skipped;
    if skipped.len() == entries.len() && !skipped.is_empty() {
        // Nothing was left to merge: the first entry's reason is the answer.
        return Err(skipped.swap_remove(0).1);
    }
    for (_, why) in skipped {
        progress.skip(why.to_string());
    }
    Ok(merged.fold.finish())
}

/// The profiles of `entries` one time apart, in time order: `merge` makes each of the
/// entries of one time (`time` of an entry), and the profile is stamped with it; a
/// query over time's answer ([`crate::ProfileSource::query_each`]).
pub(crate) fn each_time<E>(
    mut entries: Vec<E>,
    time: impl Fn(&E) -> i64,
    mut merge: impl FnMut(&[E]) -> Result<Profile, SourceError>,
) -> Result<Vec<Profile>, SourceError> {
    if entries.is_empty() {
        return Err(SourceError::NoData);
    }
    entries.sort_by_key(&time);
    (entries.chunk_by(|a, b| time(a) == time(b)))
        .map(|at_once| {
            let mut profile = merge(at_once)?;
            profile.time_nanos = time(&at_once[0]);
            Ok(profile)
        })
        .collect()
}

/// Loads one entry's bytes and merges its selected samples into `merger`. Gone or
/// broken since it was indexed, it is skipped ([`Failure::Skip`]); profiles that
/// cannot be merged together stop the merge.
#[allow(
    clippy::too_many_arguments,
    reason = "the parts of one merge, passed down"
)]
fn merge_entry<L>(
    merger: &mut Merger,
    buf: &mut RunBuffers,
    entry: &Entry<L>,
    selector: &Selector,
    rule: SampleLabels,
    one_type: bool,
    decode: DecodeOptions,
    name: &impl Fn(&L) -> String,
    load: &impl Fn(&L, &mut Vec<u8>) -> Result<usize, String>,
) -> Result<(), Failure<SourceError>> {
    let skip = |why: String| Failure::Skip(SourceError::Failed(why));
    let start = load(&entry.locator, &mut buf.stored).map_err(skip)?;
    let who = name(&entry.locator);
    // `Merger::add_pprof` adds nothing of a profile it finds invalid.
    let failed = |e: ProfileError| match e {
        ProfileError::IncompatibleSampleTypes { .. } | ProfileError::MergeTooLarge(_) => {
            Failure::Stop(SourceError::Failed(e.to_string()))
        }
        e => skip(format!("{who}: {e}")),
    };
    let stored = buf.stored.get(start..).unwrap_or_default();
    let body = message_bytes(stored, decode, &mut buf.body).map_err(failed)?;
    let mut keep = |labels: &[(&str, LabelValue<'_>)]| {
        let labels = labels_over(&entry.base_labels, labels.iter().copied(), rule);
        selector.matches(|name| labels.get(name).map(String::as_str))
    };
    let selection = Selection {
        sample_type: one_type.then(|| entry.type_index(&selector.profile_type).unwrap_or(0)),
        keep: (!selector.matchers.is_empty()).then_some(&mut keep as &mut KeepLabels<'_>),
    };
    merger.add_pprof(&who, body, selection).map_err(failed)
}
