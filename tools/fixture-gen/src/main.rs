//! `flint-fixture-gen`: writes deterministic synthetic pprof profiles.
//!
//! ```text
//! flint-fixture-gen fleet OUT.pb.gz [--samples 300000] [--locations 120000] [--functions 30000]
//!     [--binaries 8] [--min-depth 20] [--max-depth 80] [--seed N] [--time-nanos T] [--duration-nanos D]
//! flint-fixture-gen series DIR [--count 8640] [--samples 2000] [--step-secs 10] [--locations 8000]
//!     [--functions 2500] [--binaries 8] [--min-depth 10] [--max-depth 40] [--seed N] [--time-nanos T]
//! flint-fixture-gen addresses OUT.pb.gz BINARY... [--samples 300000] [--locations 120000]
//!     [--min-depth 20] [--max-depth 80] [--seed N] [--build-ids true]
//! ```

use std::collections::HashMap;
use std::error::Error;
use std::path::{Path, PathBuf};
use std::time::Instant;

use flint_fixture_gen::{
    FleetParams, GenError, SERIES_UNIVERSE, SeriesParams, Universe, UniverseParams, encode_gz,
    encode_gz_level, fleet_profile, series_profile,
};

const USAGE: &str = "usage:
  flint-fixture-gen fleet OUT.pb.gz [--samples 300000] [--locations 120000] [--functions 30000]
      [--binaries 8] [--min-depth 20] [--max-depth 80] [--seed 1] [--time-nanos T] [--duration-nanos D]
  flint-fixture-gen series DIR [--count 8640] [--samples 2000] [--step-secs 10] [--locations 8000]
      [--functions 2500] [--binaries 8] [--min-depth 10] [--max-depth 40] [--seed 1] [--time-nanos T]
  flint-fixture-gen addresses OUT.pb.gz BINARY... [--samples 300000] [--locations 120000]
      [--min-depth 20] [--max-depth 80] [--seed 1] [--build-ids true]";

/// 2023-11-14T22:13:20Z, a fixed default so output is reproducible.
const DEFAULT_TIME_NANOS: i64 = 1_700_000_000_000_000_000;

/// Parsed `--key value` options with defaults.
struct Opts(HashMap<String, String>);

impl Opts {
    fn parse(args: &[String], allowed: &[&str]) -> Result<Self, GenError> {
        let mut map = HashMap::new();
        let mut it = args.iter();
        while let Some(a) = it.next() {
            let key = a
                .strip_prefix("--")
                .filter(|k| allowed.contains(k))
                .ok_or_else(|| GenError(format!("unexpected argument {a:?}\n{USAGE}")))?;
            let value = it
                .next()
                .ok_or_else(|| GenError(format!("--{key} needs a value")))?;
            map.insert(key.to_string(), value.clone());
        }
        Ok(Opts(map))
    }

    fn get<T: std::str::FromStr>(&self, key: &str, default: T) -> Result<T, GenError> {
        match self.0.get(key) {
            None => Ok(default),
            Some(v) => v
                .parse()
                .map_err(|_| GenError(format!("bad value for --{key}: {v:?}"))),
        }
    }

    fn universe(
        &self,
        locations: usize,
        functions: usize,
        min: usize,
        max: usize,
    ) -> Result<UniverseParams, GenError> {
        Ok(UniverseParams {
            locations: self.get("locations", locations)?,
            functions: self.get("functions", functions)?,
            binaries: self.get("binaries", 8)?,
            min_depth: self.get("min-depth", min)?,
            max_depth: self.get("max-depth", max)?,
            seed: self.get("seed", 1)?,
        })
    }
}

const UNIVERSE_KEYS: [&str; 6] = [
    "locations",
    "functions",
    "binaries",
    "min-depth",
    "max-depth",
    "seed",
];

fn fleet(out: &Path, args: &[String]) -> Result<(), Box<dyn Error>> {
    let mut keys = UNIVERSE_KEYS.to_vec();
    keys.extend(["samples", "time-nanos", "duration-nanos"]);
    let o = Opts::parse(args, &keys)?;
    let params = FleetParams {
        universe: o.universe(120_000, 30_000, 20, 80)?,
        samples: o.get("samples", 300_000)?,
        time_nanos: o.get("time-nanos", DEFAULT_TIME_NANOS)?,
        duration_nanos: o.get("duration-nanos", 60_000_000_000)?,
    };
    let started = Instant::now();
    let profile = fleet_profile(&params)?;
    let (raw, gz) = encode_gz(&profile)?;
    std::fs::write(out, &gz)?;
    eprintln!(
        "{}: {} samples, {} locations, {} functions, {} mappings, {} bytes uncompressed, {} bytes gzipped ({:.2?})",
        out.display(),
        profile.sample.len(),
        profile.location.len(),
        profile.function.len(),
        profile.mapping.len(),
        raw,
        gz.len(),
        started.elapsed()
    );
    Ok(())
}

/// An addresses-only fleet-like profile in real binaries, for the symbolizer's benchmark.
fn addresses(out: &Path, args: &[String]) -> Result<(), Box<dyn Error>> {
    let split = args
        .iter()
        .position(|a| a.starts_with("--"))
        .unwrap_or(args.len());
    let binaries: Vec<PathBuf> = args[..split].iter().map(PathBuf::from).collect();
    let keys = [
        "samples",
        "locations",
        "min-depth",
        "max-depth",
        "seed",
        "build-ids",
    ];
    let o = Opts::parse(&args[split..], &keys)?;
    let params = flint_fixture_gen::symbol_parts::AddressesParams {
        samples: o.get("samples", 300_000)?,
        locations: o.get("locations", 120_000)?,
        min_depth: o.get("min-depth", 20)?,
        max_depth: o.get("max-depth", 80)?,
        seed: o.get("seed", 1)?,
        build_ids: o.get("build-ids", true)?,
    };
    let profile = flint_fixture_gen::symbol_parts::addresses_fleet_profile(&binaries, &params)
        .map_err(GenError)?;
    std::fs::write(out, profile_model::codec::encode_gzip(&profile))?;
    eprintln!(
        "{}: {} samples, {} addresses in {} binaries",
        out.display(),
        profile.samples.len(),
        profile.locations.len(),
        profile.mappings.len()
    );
    Ok(())
}

fn series(dir: &Path, args: &[String]) -> Result<(), Box<dyn Error>> {
    let mut keys = UNIVERSE_KEYS.to_vec();
    keys.extend(["count", "samples", "step-secs", "time-nanos"]);
    let o = Opts::parse(args, &keys)?;
    let d = &SERIES_UNIVERSE;
    let up = o.universe(d.locations, d.functions, d.min_depth, d.max_depth)?;
    let count: u64 = o.get("count", 8640)?;
    let sp = SeriesParams {
        samples: o.get("samples", 2000)?,
        start_nanos: o.get("time-nanos", DEFAULT_TIME_NANOS)?,
        step_secs: o.get("step-secs", 10)?,
        seed: up.seed,
    };
    let last = count
        .checked_sub(1)
        .and_then(|n| i64::try_from(n).ok())
        .and_then(|n| n.checked_mul(sp.step_secs)?.checked_mul(1_000_000_000))
        .and_then(|span| sp.start_nanos.checked_add(span));
    if count > 0 && last.is_none() {
        return Err(Box::new(GenError(
            "--time-nanos, --count and --step-secs: the last profile's time would not fit in \
             64-bit nanoseconds"
                .into(),
        )));
    }
    let started = Instant::now();
    let universe = Universe::new(&up)?;
    std::fs::create_dir_all(dir)?;
    let threads = std::thread::available_parallelism().map_or(1, |n| n.get()) as u64;
    let totals = std::thread::scope(|scope| {
        let workers: Vec<_> = (0..threads)
            .map(|t| {
                let (universe, sp) = (&universe, &sp);
                scope.spawn(move || -> Result<(usize, usize, usize), GenError> {
                    let (mut samples, mut raw, mut gzipped) = (0, 0, 0);
                    for i in (t..count).step_by(threads as usize) {
                        let p = series_profile(universe, sp, i);
                        let (r, gz) = encode_gz_level(&p, flate2::Compression::fast())?;
                        std::fs::write(dir.join(format!("{i:07}.pb.gz")), &gz)?;
                        samples += p.sample.len();
                        raw += r;
                        gzipped += gz.len();
                    }
                    Ok((samples, raw, gzipped))
                })
            })
            .collect();
        let mut sum = (0, 0, 0);
        for w in workers {
            let part = w
                .join()
                .map_err(|_| GenError("worker thread panicked".into()))??;
            sum = (sum.0 + part.0, sum.1 + part.1, sum.2 + part.2);
        }
        Ok::<_, GenError>(sum)
    })?;
    eprintln!(
        "{}: {count} profiles, {} samples, {} bytes uncompressed, {} bytes gzipped ({:.2?})",
        dir.display(),
        totals.0,
        totals.1,
        totals.2,
        started.elapsed()
    );
    Ok(())
}

fn main() -> std::process::ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if args.iter().any(|a| a == "--help" || a == "-h") {
        println!("{USAGE}");
        return std::process::ExitCode::SUCCESS;
    }
    match run(&args) {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e}");
            std::process::ExitCode::from(2)
        }
    }
}

/// Runs the command `args` name; an output path that looks like a flag is refused
/// rather than written to.
fn run(args: &[String]) -> Result<(), Box<dyn Error>> {
    let out = match args.get(1) {
        Some(out) if out.starts_with('-') => {
            return Err(Box::new(GenError(format!(
                "expected an output path, not {out:?}\n{USAGE}"
            ))));
        }
        out => out,
    };
    match (args.first().map(String::as_str), out) {
        (Some("fleet"), Some(out)) => fleet(&PathBuf::from(out), &args[2..]),
        (Some("series"), Some(dir)) => series(&PathBuf::from(dir), &args[2..]),
        (Some("addresses"), Some(out)) => addresses(&PathBuf::from(out), &args[2..]),
        _ => Err(Box::new(GenError(USAGE.to_string()))),
    }
}
