//! The demo of time mode: an hour of a made-up fleet (four services on eight
//! binaries, a profile every 10 seconds) written into a temporary folder by flint's
//! synthetic profiles (`profile_model::synthetic`), ending now, so that the plot, Merge and Compare can be tried
//! without profiles of one's own; a deploy 20 minutes before the end makes one
//! function three times as costly, for Compare to show in red. The folder is removed
//! when the window closes (or, when the process was killed, by the next demo).

use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

use profile_model::proto::Profile;
use profile_model::synthetic::{
    SERIES_UNIVERSE, SeriesParams, Universe, encode_gz_level, series_profile,
};

use crate::gui::shell::temp_dirs;

/// Profiles in the demo hour.
pub const DEMO_PROFILES: u64 = 360;
/// Seconds between two demo profiles (each one's duration).
const STEP_SECS: i64 = 10;
/// Samples of a demo profile at the fleet's busiest (fewer at quieter times of day).
const SAMPLES: usize = 600;
/// The demo's deploy: from this profile on (the last 20 minutes), the samples that end
/// in [`SLOWER`] cost [`SLOWDOWN`] times as much, for Compare to find.
pub const DEPLOY_AT: u64 = 240;
/// The function the deploy makes costlier.
pub const SLOWER: &str = "ssl_shard_compact_token";
/// How much costlier.
const SLOWDOWN: i64 = 3;

/// A new demo's folders: the one to remove when its window closes (of its own,
/// below this process's, so that two windows of one process never share one), and
/// the one the hour is written into (named for the top bar).
pub fn new_demo_dir() -> (PathBuf, PathBuf) {
    static NEXT: AtomicU64 = AtomicU64::new(0);
    let n = NEXT.fetch_add(1, Ordering::Relaxed);
    let own = temp_dirs::own_dir(temp_dirs::DEMO).join(n.to_string());
    let dir = own.join("demo fleet, last hour");
    (own, dir)
}

/// Writes the demo hour into `dir` (emptied first): [`DEMO_PROFILES`] profiles, the
/// last one ending at `end_nanos` (rounded down to 10 seconds).
pub fn write_demo_hour(dir: &Path, end_nanos: i64) -> Result<(), String> {
    let failed = |e: &dyn std::fmt::Display| format!("cannot write the demo: {e}");
    let step = STEP_SECS * 1_000_000_000;
    let params = SeriesParams {
        samples: SAMPLES,
        start_nanos: (end_nanos / step - DEMO_PROFILES as i64) * step,
        step_secs: STEP_SECS,
        seed: 1,
    };
    let universe = Universe::new(&SERIES_UNIVERSE).map_err(|e| failed(&e.0))?;
    temp_dirs::remove_stale(temp_dirs::DEMO);
    let _ = std::fs::remove_dir_all(dir);
    std::fs::create_dir_all(dir).map_err(|e| failed(&e))?;
    for i in 0..DEMO_PROFILES {
        let mut profile = series_profile(&universe, &params, i);
        if i >= DEPLOY_AT {
            slow_down(&mut profile);
        }
        let (_, gz) =
            encode_gz_level(&profile, flate2::Compression::fast()).map_err(|e| failed(&e.0))?;
        std::fs::write(dir.join(format!("{i:03}.pb.gz")), gz).map_err(|e| failed(&e))?;
    }
    Ok(())
}

/// Multiplies by [`SLOWDOWN`] the values of the samples whose leaf is [`SLOWER`].
fn slow_down(profile: &mut Profile) {
    let Some(name) = profile.string_table.iter().position(|s| s == SLOWER) else {
        return;
    };
    let functions: HashSet<u64> = profile
        .function
        .iter()
        .filter(|f| f.name == name as i64)
        .map(|f| f.id)
        .collect();
    // A location's first line is its innermost frame.
    let leaves: HashSet<u64> = profile
        .location
        .iter()
        .filter(|l| {
            l.line
                .first()
                .is_some_and(|line| functions.contains(&line.function_id))
        })
        .map(|l| l.id)
        .collect();
    for sample in &mut profile.sample {
        if sample
            .location_id
            .first()
            .is_some_and(|l| leaves.contains(l))
        {
            sample.value.iter_mut().for_each(|v| *v *= SLOWDOWN);
        }
    }
}
