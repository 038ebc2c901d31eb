//! Real parts for the symbolizer's tests: a C and a Rust program built by
//! `tests/fixtures/symbols/build.sh` (with DWARF, split with `objcopy --only-keep-debug`,
//! stripped), and addresses-only profiles of them, with the truth from `addr2line`.

use std::path::{Path, PathBuf};
use std::process::Command;

use profile_model::Profile;
use profile_model::profile::{Location, Mapping, Samples, ValueType};

/// Where a program's code is loaded in the made-up process of the profiles.
const LOAD_BASE: u64 = 0x5555_0000_0000;

/// The three files of one test program.
#[derive(Debug, Clone)]
pub struct Program {
    /// With its symbol table and DWARF.
    pub full: PathBuf,
    /// Stripped of everything, with a `.gnu_debuglink` to `debug`.
    pub stripped: PathBuf,
    /// `objcopy --only-keep-debug` of `full`.
    pub debug: PathBuf,
    /// Its GNU build id, in hexadecimal.
    pub build_id: String,
}

/// Builds the C (`c`) and Rust (`rust`) programs into `dir`; `Err` says which tool is
/// missing or failed (tests then print a SKIP line).
pub fn build_programs(dir: &Path) -> Result<(Program, Program), String> {
    let script =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/fixtures/symbols/build.sh");
    let out = Command::new("sh")
        .arg(&script)
        .arg(dir)
        .output()
        .map_err(|e| format!("sh {}: {e}", script.display()))?;
    if !out.status.success() {
        return Err(format!(
            "{}: {}",
            script.display(),
            String::from_utf8_lossy(&out.stderr)
        ));
    }
    Ok((program(dir, "c")?, program(dir, "rust")?))
}

/// Builds the C and Rust programs with frame pointers, as `perf record -g` walks
/// them, into `dir/c-fp` and `dir/rust-fp` (with DWARF and a build id); `Err` says
/// which compiler failed.
pub fn build_frame_pointer_programs(dir: &Path) -> Result<(PathBuf, PathBuf), String> {
    let sources = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/fixtures/symbols");
    let (c, rust) = (dir.join("c-fp"), dir.join("rust-fp"));
    let (c_source, rust_source) = (sources.join("prog.c"), sources.join("prog.rs"));
    let os = |args: &[&str]| -> Vec<std::ffi::OsString> { args.iter().map(Into::into).collect() };
    let mut gcc = os(&[
        "-g",
        "-O1",
        "-fno-omit-frame-pointer",
        "-Wl,--build-id",
        "-o",
    ]);
    gcc.extend([c.clone().into(), c_source.into()]);
    let mut rustc = os(&["-g", "-C", "opt-level=1", "-C", "force-frame-pointers=yes"]);
    rustc.extend(os(&["-C", "link-arg=-Wl,--build-id", "-o"]));
    rustc.extend([rust.clone().into(), rust_source.into()]);
    for (tool, args) in [("gcc", gcc), ("rustc", rustc)] {
        let args: Vec<&std::ffi::OsStr> = args.iter().map(AsRef::as_ref).collect();
        run(tool, &args)?;
    }
    Ok((c, rust))
}

fn program(dir: &Path, name: &str) -> Result<Program, String> {
    let full = dir.join(format!("{name}.full"));
    let build_id = build_id(&full)?;
    Ok(Program {
        stripped: dir.join(name),
        debug: dir.join(format!("{name}.debug")),
        full,
        build_id,
    })
}

fn run(tool: &str, args: &[&std::ffi::OsStr]) -> Result<String, String> {
    let out = Command::new(tool)
        .args(args)
        .output()
        .map_err(|e| format!("{tool}: {e}"))?;
    if !out.status.success() {
        return Err(format!("{tool}: {}", String::from_utf8_lossy(&out.stderr)));
    }
    Ok(String::from_utf8_lossy(&out.stdout).into_owned())
}

/// `(address, size)` of the function symbols of `binary` whose name contains `name`.
pub fn function_symbol(binary: &Path, name: &str) -> Result<(u64, u64), String> {
    function_symbols(binary)?
        .into_iter()
        .find(|(_, _, sym)| sym.contains(name))
        .map(|(start, size, _)| (start, size))
        .ok_or_else(|| format!("{name} not in {}", binary.display()))
}

/// The function symbols of `binary`, as `nm -S` lists them: (address, size, name).
fn function_symbols(binary: &Path) -> Result<Vec<(u64, u64, String)>, String> {
    let text = run("nm", &["-S".as_ref(), binary.as_os_str()])?;
    Ok(text
        .lines()
        .filter_map(|l| {
            let f: Vec<&str> = l.split_whitespace().collect();
            match f.as_slice() {
                [addr, size, kind, sym] if kind.eq_ignore_ascii_case("t") => Some((
                    u64::from_str_radix(addr, 16).ok()?,
                    u64::from_str_radix(size, 16).ok()?,
                    (*sym).to_string(),
                )),
                _ => None,
            }
        })
        .collect())
}

/// The GNU build id of `binary`, in hexadecimal, as `readelf -n` shows it.
fn build_id(binary: &Path) -> Result<String, String> {
    let notes = run("readelf", &["-n".as_ref(), binary.as_os_str()])?;
    notes
        .lines()
        .find_map(|l| l.trim().strip_prefix("Build ID: "))
        .map(str::to_string)
        .ok_or_else(|| format!("no build id in {}", binary.display()))
}

/// The functions `addr2line -f -i -C` names at virtual address `vaddr` of `binary`,
/// innermost first.
pub fn addr2line_functions(binary: &Path, vaddr: u64) -> Result<Vec<String>, String> {
    let addr = format!("{vaddr:#x}");
    let text = run(
        "addr2line",
        &[
            "-f".as_ref(),
            "-i".as_ref(),
            "-C".as_ref(),
            "-e".as_ref(),
            binary.as_os_str(),
            addr.as_ref(),
        ],
    )?;
    Ok(text.lines().step_by(2).map(str::to_string).collect())
}

/// The executable segment of `binary`: (file offset, virtual address, size in memory).
fn code_segment(binary: &Path) -> Result<(u64, u64, u64), String> {
    let text = run("readelf", &["-lW".as_ref(), binary.as_os_str()])?;
    text.lines()
        .map(|l| l.split_whitespace().collect::<Vec<_>>())
        .find(|f| f.first() == Some(&"LOAD") && f.iter().skip(6).any(|flag| flag.contains('E')))
        .and_then(|f| {
            let num = |i: usize| u64::from_str_radix(f.get(i)?.trim_start_matches("0x"), 16).ok();
            Some((num(1)?, num(2)?, num(5)?))
        })
        .ok_or_else(|| format!("no code segment in {}", binary.display()))
}

/// An addresses-only CPU profile of `program`: one mapping of its code segment at
/// [`LOAD_BASE`], named `mapping_path` (with the build id when `with_build_id`), and
/// one sample per stack of `stacks` (virtual addresses, leaf first, each with a count).
pub fn addresses_only_profile(
    program: &Program,
    mapping_path: &str,
    with_build_id: bool,
    stacks: &[(Vec<u64>, i64)],
) -> Result<Profile, String> {
    let (offset, vaddr, size) = code_segment(&program.full)?;
    let mut strings = vec![
        String::new(),
        "cpu".into(),
        "nanoseconds".into(),
        mapping_path.into(),
    ];
    let build_id = if with_build_id {
        strings.push(program.build_id.clone());
        4
    } else {
        0
    };
    let memory_start = LOAD_BASE + (vaddr & !0xfff);
    let mapping = Mapping {
        memory_start,
        memory_limit: LOAD_BASE + ((vaddr + size + 0xfff) & !0xfff),
        file_offset: offset & !0xfff,
        filename: 3,
        build_id,
        flags: 0,
    };
    let mut locations: Vec<Location> = Vec::new();
    let mut samples = cpu_samples();
    for (stack, count) in stacks {
        let ids: Vec<u32> = stack
            .iter()
            .map(|&v| {
                let address = LOAD_BASE + v;
                let id = locations.iter().position(|l| l.address == address);
                id.unwrap_or_else(|| {
                    locations.push(Location {
                        mapping: Some(0),
                        address,
                        ..Location::default()
                    });
                    locations.len() - 1
                }) as u32
            })
            .collect();
        push_sample(&mut samples, ids, *count);
    }
    Ok(cpu_profile(strings, vec![mapping], locations, samples, 1))
}

/// An empty column of samples.
fn cpu_samples() -> Samples {
    Samples {
        stack_offsets: vec![0],
        values: vec![Vec::new()],
        ..Samples::default()
    }
}

/// Adds a sample of `stack` (location ids, leaf first) worth `value` to `samples`.
fn push_sample(samples: &mut Samples, stack: impl IntoIterator<Item = u32>, value: i64) {
    samples.stack_locations.extend(stack);
    samples
        .stack_offsets
        .push(samples.stack_locations.len() as u32);
    samples.values[0].push(value);
    samples.label_set.push(0);
}

/// A `cpu/nanoseconds` profile of these parts; `strings` start with "", "cpu",
/// "nanoseconds".
fn cpu_profile(
    strings: Vec<String>,
    mappings: Vec<Mapping>,
    locations: Vec<Location>,
    samples: Samples,
    period: i64,
) -> Profile {
    let cpu = ValueType { kind: 1, unit: 2 };
    Profile {
        strings,
        sample_types: vec![cpu],
        period_type: cpu,
        period,
        mappings,
        locations,
        label_sets: vec![Vec::new()],
        samples,
        ..Profile::default()
    }
}

/// [`build_programs`], or `None` after a `SKIP:` line where a tool is missing.
pub fn programs_or_skip(dir: &Path) -> Option<(Program, Program)> {
    match build_programs(dir) {
        Ok(p) => Some(p),
        Err(e) => {
            println!("SKIP: cannot build the test programs: {e}");
            None
        }
    }
}

/// `prog::rust_leaf` for `prog::rust_leaf::h0123456789abcdef`: names as the
/// symbolizer shows them, where `addr2line -C` keeps a Rust hash.
pub fn without_hash(name: &str) -> String {
    match name.rsplit_once("::h") {
        Some((head, hash)) if hash.len() == 16 => head.to_string(),
        _ => name.to_string(),
    }
}

/// The function names of each location of the first sample of `p`, leaf first,
/// inlined frames innermost first, without Rust hashes.
pub fn first_stack_names(p: &Profile) -> Vec<Vec<String>> {
    p.samples
        .stack(0)
        .iter()
        .filter_map(|&l| p.locations.get(l as usize))
        .map(|loc| {
            loc.lines
                .iter()
                .filter_map(|line| p.functions.get(line.function as usize))
                .map(|f| without_hash(p.str(f.name)))
                .collect()
        })
        .collect()
}

/// Debian's `debuginfod` serving a directory on 127.0.0.1, stopped when dropped.
#[derive(Debug)]
pub struct Debuginfod {
    child: std::process::Child,
    /// `http://127.0.0.1:PORT`.
    pub url: String,
}

impl Debuginfod {
    /// Starts `debuginfod -F` over `served` (its database in `db_dir`) and waits until
    /// it serves the debuginfo of every one of `build_ids`; `Err` when it is not
    /// installed or never does.
    pub fn start(served: &Path, db_dir: &Path, build_ids: &[&str]) -> Result<Self, String> {
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .and_then(|l| l.local_addr())
            .map_err(|e| e.to_string())?
            .port();
        let child = Command::new("debuginfod")
            .args(["-F", "-t", "1", "-p", &port.to_string(), "-d"])
            .arg(db_dir.join("debuginfod.sqlite"))
            .arg(served)
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn()
            .map_err(|e| format!("debuginfod (apt-get install debuginfod): {e}"))?;
        let server = Self {
            child,
            url: format!("http://127.0.0.1:{port}"),
        };
        let served = |id: &&str| {
            Command::new("curl")
                .args(["-sf", "-o", "/dev/null"])
                .arg(format!("{}/buildid/{id}/debuginfo", server.url))
                .status()
                .is_ok_and(|s| s.success())
        };
        let start = std::time::Instant::now();
        while !build_ids.iter().all(served) {
            if start.elapsed() > std::time::Duration::from_secs(60) {
                return Err("debuginfod did not serve the files within 60 s".into());
            }
            std::thread::sleep(std::time::Duration::from_millis(200));
        }
        Ok(server)
    }
}

impl Drop for Debuginfod {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Shape of [`addresses_fleet_profile`]: how many samples, distinct addresses and
/// functions, how deep the stacks go, and the seed.
#[derive(Debug, Clone)]
pub struct AddressesParams {
    /// Samples, one stack each.
    pub samples: usize,
    /// Distinct addresses (locations) the stacks are made of.
    pub locations: usize,
    /// Stack depth, from `min_depth` to `max_depth` frames.
    pub min_depth: usize,
    /// See `min_depth`.
    pub max_depth: usize,
    /// Seed of the pseudo-random choices.
    pub seed: u64,
    /// Whether mappings carry their binaries' build ids.
    pub build_ids: bool,
}

/// A fleet-like CPU profile with addresses only, in real binaries: each of `binaries`
/// is one mapping (`/usr/lib/fleet/NAME`, with its build id) of its code segment, and
/// the locations are addresses inside its function symbols (from `nm`), which
/// `addr2line` names. Needs binutils.
pub fn addresses_fleet_profile(
    binaries: &[PathBuf],
    p: &AddressesParams,
) -> Result<Profile, String> {
    use profile_model::synthetic::SplitMix64;
    let mut rng = SplitMix64::new(p.seed);
    let mut strings = vec![String::new(), "cpu".into(), "nanoseconds".into()];
    let mut mappings = Vec::new();
    let mut functions: Vec<(u32, u64, u64)> = Vec::new();
    for (i, binary) in binaries.iter().enumerate() {
        let (offset, vaddr, size) = code_segment(binary)?;
        let build_id = build_id(binary)?;
        let name = binary
            .file_name()
            .map_or_else(String::new, |n| n.to_string_lossy().into_owned());
        strings.push(format!("/usr/lib/fleet/{name}"));
        strings.push(if p.build_ids { build_id } else { String::new() });
        let base = LOAD_BASE + ((i as u64) << 36);
        mappings.push(Mapping {
            memory_start: base + (vaddr & !0xfff),
            memory_limit: base + ((vaddr + size + 0xfff) & !0xfff),
            file_offset: offset & !0xfff,
            filename: (strings.len() - 2) as u32,
            build_id: (strings.len() - 1) as u32,
            flags: 0,
        });
        functions.extend(
            function_symbols(binary)?
                .into_iter()
                .filter(|(_, size, _)| *size > 0)
                .map(|(start, size, _)| (i as u32, base + start, size)),
        );
    }
    if functions.is_empty() {
        return Err("no function symbols in the binaries".into());
    }
    let locations: Vec<Location> = (0..p.locations.max(1))
        .map(|_| {
            let (m, start, size) = functions[rng.below(functions.len() as u64) as usize];
            Location {
                mapping: Some(m),
                address: start + rng.below(size),
                ..Location::default()
            }
        })
        .collect();
    let mut samples = cpu_samples();
    let span = p.max_depth.saturating_sub(p.min_depth) as u64 + 1;
    for _ in 0..p.samples {
        let depth = p.min_depth.max(1) + rng.below(span) as usize;
        let stack: Vec<u32> = (0..depth)
            .map(|_| rng.below(locations.len() as u64) as u32)
            .collect();
        push_sample(&mut samples, stack, 10_000_000);
    }
    Ok(cpu_profile(
        strings, mappings, locations, samples, 10_000_000,
    ))
}
