//! Opening a folder for time mode: flint's own store, or a folder of profile files
//! indexed (their samples kept up to a budget), as what the plot needs ([`Opened`]).

use std::path::Path;
use std::sync::Arc;

use capture::{FileSource, ProfileSource as _, Progress, Store, StoreOptions, TimeRange};
use profile_model::codec::DecodeOptions;

use crate::gui::time::queries::instant_answer;
use crate::gui::time::timeline::Opened;

/// Opens `dir`: a store as it is, else its profile files indexed (keeping up to
/// `budget` bytes of their samples for merges), with `progress`; runs on a worker
/// thread.
pub fn open_folder(
    dir: &Path,
    decode: DecodeOptions,
    budget: usize,
    progress: &Progress,
) -> Result<Opened, String> {
    if Store::is_store_dir(dir) {
        // flint's own store (`flint record --store`, `flint serve --store`).
        let store = Store::open(dir, StoreOptions::default())?;
        let span = store.span();
        let profiles = store.stats().profiles;
        let types = instant_answer(store.profile_types(TimeRange::ALL));
        let default_type = instant_answer(store.default_type(TimeRange::ALL));
        let type_spans = types.iter().map(|t| store.span_of(t)).collect();
        return Ok(Opened {
            warnings: store.warnings(),
            source: Arc::new(store),
            span,
            types,
            default_type,
            type_spans,
            profiles: Some(profiles),
        });
    }
    FileSource::open_keeping_stacks(&[dir.to_path_buf()], decode, budget, progress)
        .map(|(source, skipped)| {
            let span = source.span();
            let types = instant_answer(source.profile_types(TimeRange::ALL));
            let default_type = instant_answer(source.default_type(TimeRange::ALL));
            let type_spans = types.iter().map(|t| source.span_of(t)).collect();
            Opened {
                profiles: Some(source.len()),
                source: Arc::new(source),
                span,
                types,
                default_type,
                type_spans,
                warnings: skipped
                    .into_iter()
                    .map(|s| format!("skipped {s}"))
                    .collect(),
            }
        })
        .map_err(String::from)
}
