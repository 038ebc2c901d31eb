//! `flint push`: sends pprof files to a Parca server or `flint serve` through
//! WriteRaw, named and labelled as Parca names scraped profiles.

use std::path::PathBuf;

use capture::files::default_profile_name;
use capture::read::{FileBytes, FileRef, Files, Fold, NotAdded, ReadError, ReadOptions};
use capture::selector::is_label_name;
use capture::{Labels, ProfileSink as _};
use clap::Args;
use profile_model::codec::DecodeOptions;

use super::CliError;
use super::remote::{ConnectArgs, runtime};

/// Arguments of `flint push`.
#[derive(Debug, Args)]
pub struct PushArgs {
    /// pprof files (.pb.gz or raw) or directories (searched recursively).
    #[arg(required = true, value_name = "FILE")]
    files: Vec<PathBuf>,
    /// The server: `grpc://HOST:PORT` (cleartext) or `https://HOST`.
    #[arg(long, value_name = "URL")]
    to: String,
    /// Profile name (`__name__`); default: as Parca names scraped Go profiles,
    /// `process_cpu` for CPU profiles and `memory` for heap profiles.
    #[arg(long)]
    name: Option<String>,
    /// Label of every profile pushed, `NAME=VALUE` (repeatable), e.g. `job=api`.
    #[arg(long = "label", value_name = "NAME=VALUE")]
    labels: Vec<String>,
    #[command(flatten)]
    connect: ConnectArgs,
}

/// How many writes `push` keeps in flight.
const IN_FLIGHT: usize = 16;

/// Counts a finished write, or keeps its error when it is the first.
fn note_error(
    done: Result<Result<(), String>, tokio::task::JoinError>,
    first: &mut Option<String>,
    pushed: &mut usize,
) {
    let err = match done {
        Ok(Ok(())) => {
            *pushed += 1;
            return;
        }
        Ok(Err(e)) => e,
        Err(e) => format!("a write failed: {e}"),
    };
    first.get_or_insert(err);
}

/// One file to send, checked before anything is sent.
struct Upload {
    path: PathBuf,
    bytes: Vec<u8>,
    labels: Labels,
}

/// Each file checked (decoded whole) and kept as it was read, with its labels.
struct Uploads<'a> {
    /// The labels of every profile.
    common: &'a Labels,
    /// `--name`, else each profile's own ([`default_profile_name`]).
    name: Option<&'a str>,
}

impl Fold for Uploads<'_> {
    type Run = Vec<Upload>;

    fn run(&self) -> Self::Run {
        Vec::new()
    }

    fn add(
        &self,
        uploads: &mut Self::Run,
        file: FileRef<'_>,
        bytes: FileBytes<'_>,
    ) -> Result<(), NotAdded> {
        let profile = bytes.profile().map_err(|e| file.broken(e))?;
        let mut labels = self.common.clone();
        let name = self
            .name
            .map_or_else(|| default_profile_name(&profile), str::to_string);
        labels.insert("__name__".to_string(), name);
        uploads.push(Upload {
            path: file.path.to_path_buf(),
            bytes: bytes.stored.to_vec(),
            labels,
        });
        Ok(())
    }

    fn absorb(&self, uploads: &mut Self::Run, later: Self::Run) -> Result<(), ReadError> {
        uploads.extend(later);
        Ok(())
    }
}

/// Runs `flint push`: every file is read and checked first, so a broken file named on
/// the command line sends nothing; broken files found in directories are skipped with
/// a warning.
pub fn run(args: &PushArgs, decode: DecodeOptions) -> Result<(), CliError> {
    let common = super::remote::parse_labels(&args.labels)?;
    if let Some(name) = &args.name
        && !is_label_name(name)
    {
        return Err(format!("--name {name:?} is not a valid profile name").into());
    }
    let fold = Uploads {
        common: &common,
        name: args.name.as_deref(),
    };
    let read = Files::list(&[&args.files])?.read(
        &fold,
        ReadOptions {
            folders_may_hold_none: true,
            ..ReadOptions::new(decode)
        },
    )?;
    super::warn_skipped(&read.skipped);
    let uploads = read.folded;
    if uploads.is_empty() {
        return Err("no profiles to push".into());
    }
    let remote = args
        .connect
        .connect(&args.to, decode.max_decompressed_bytes)?;
    let total_bytes: usize = uploads.iter().map(|u| u.bytes.len()).sum();
    let count = uploads.len();
    let remote = std::sync::Arc::new(remote);
    runtime()?.block_on(async {
        // Several writes in flight: the server makes each durable before it answers,
        // and writes that arrive together share one fsync.
        let mut in_flight = tokio::task::JoinSet::new();
        let mut first_error = None;
        let mut pushed = 0;
        for u in uploads {
            if in_flight.len() >= IN_FLIGHT
                && let Some(done) = in_flight.join_next().await
            {
                note_error(done, &mut first_error, &mut pushed);
            }
            if first_error.is_some() {
                break;
            }
            let remote = remote.clone();
            in_flight.spawn(async move {
                remote
                    .write_raw(u.labels, u.bytes)
                    .await
                    .map_err(|e| format!("{}: {e}", u.path.display()))
            });
        }
        while let Some(done) = in_flight.join_next().await {
            note_error(done, &mut first_error, &mut pushed);
        }
        match first_error {
            None => Ok(()),
            Some(e) => Err(format!("{e} ({pushed} of {count} profiles were pushed)")),
        }
    })?;
    eprintln!(
        "pushed {count} profile{} ({total_bytes} bytes) to {}",
        if count == 1 { "" } else { "s" },
        remote.url()
    );
    Ok(())
}
