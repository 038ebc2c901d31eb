//! The demo of time mode: an hour of a made-up fleet (four services on eight
//! binaries, a profile every 10 seconds) written into a temporary folder by flint's
//! fixture generator, ending now, so that the plot, Merge and Compare can be tried
//! without profiles of one's own. The folder is removed when the window closes (or,
//! when the process was killed, by the next demo).

use std::path::{Path, PathBuf};

use flint_fixture_gen::{SERIES_UNIVERSE, SeriesParams, Universe, encode_gz_level, series_profile};

/// Profiles in the demo hour.
pub const DEMO_PROFILES: u64 = 360;
/// Seconds between two demo profiles (each one's duration).
const STEP_SECS: i64 = 10;
/// Samples of a demo profile at the fleet's busiest (fewer at quieter times of day).
const SAMPLES: usize = 600;

/// The folder of this process's demo files, removed when the window closes.
pub fn demo_root() -> PathBuf {
    std::env::temp_dir().join(format!("flint-demo-{}", std::process::id()))
}

/// Removes the demo folders of flint processes that ended without removing theirs
/// (killed): a folder named for a process that no longer runs (Linux: no `/proc/PID`).
fn remove_stale_demos() {
    let Ok(entries) = std::fs::read_dir(std::env::temp_dir()) else {
        return;
    };
    for entry in entries.flatten() {
        let name = entry.file_name();
        let pid = name
            .to_str()
            .and_then(|n| n.strip_prefix("flint-demo-"))
            .and_then(|pid| pid.parse::<u32>().ok());
        if let Some(pid) = pid
            && cfg!(target_os = "linux")
            && !Path::new(&format!("/proc/{pid}")).exists()
        {
            let _ = std::fs::remove_dir_all(entry.path());
        }
    }
}

/// The folder the demo hour is written into (named for the top bar).
pub fn demo_dir() -> PathBuf {
    demo_root().join("demo fleet, last hour")
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
    remove_stale_demos();
    let _ = std::fs::remove_dir_all(dir);
    std::fs::create_dir_all(dir).map_err(|e| failed(&e))?;
    for i in 0..DEMO_PROFILES {
        let profile = series_profile(&universe, &params, i);
        let (_, gz) =
            encode_gz_level(&profile, flate2::Compression::fast()).map_err(|e| failed(&e.0))?;
        std::fs::write(dir.join(format!("{i:03}.pb.gz")), gz).map_err(|e| failed(&e))?;
    }
    Ok(())
}
