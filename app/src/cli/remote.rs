//! What the subcommands that talk to a server share: connection flags (token, headers,
//! CA file), the query and its time range, and a runtime to run the requests on.

use std::path::{Path, PathBuf};
use std::time::Duration;

use capture::time::{now_nanos, parse_duration, parse_time};
use capture::{ProfileType, RemoteOptions, RemoteSource, Selector, TimeRange};
use clap::Args;

use super::CliError;

/// How to reach a server: `grpc://HOST:PORT` (cleartext HTTP/2) or `https://HOST`.
#[derive(Debug, Args)]
pub struct ConnectArgs {
    /// Bearer token sent with every request.
    #[arg(long, env = "FLINT_TOKEN", hide_env_values = true)]
    token: Option<String>,
    /// File holding the bearer token (its first line).
    #[arg(long, value_name = "FILE", conflicts_with = "token")]
    token_file: Option<PathBuf>,
    /// Extra request header, `NAME=VALUE` (repeatable), e.g. `x-scope-orgid=team`.
    #[arg(long = "header", value_name = "NAME=VALUE")]
    headers: Vec<String>,
    /// PEM file of the CA to trust for https:// instead of the system's roots.
    #[arg(long, value_name = "FILE")]
    ca_file: Option<PathBuf>,
    /// How long connecting may take, and how long a connection may stay silent (a
    /// peer that accepts and never answers is named after it), e.g. `10s`.
    #[arg(long, value_name = "DURATION", default_value = "10s")]
    timeout: String,
}

impl ConnectArgs {
    /// The client options these flags ask for.
    pub fn options(&self, max_decompressed_bytes: u64) -> Result<RemoteOptions, CliError> {
        let token = match (&self.token, &self.token_file) {
            (Some(t), _) => Some(t.trim().to_string()),
            (None, Some(file)) => Some(read_token(file)?),
            (None, None) => None,
        };
        let headers = self
            .headers
            .iter()
            .map(|h| {
                h.split_once('=')
                    .map(|(k, v)| (k.trim().to_ascii_lowercase(), v.trim().to_string()))
                    .filter(|(k, _)| !k.is_empty())
                    .ok_or_else(|| format!("--header {h:?}: expected NAME=VALUE"))
            })
            .collect::<Result<_, _>>()?;
        Ok(RemoteOptions {
            bearer_token: token.filter(|t| !t.is_empty()),
            headers,
            ca_file: self.ca_file.clone(),
            max_decompressed_bytes,
            connect_timeout: positive_duration("--timeout", &self.timeout)?,
            ..crate::version::remote_options()
        })
    }

    /// A client of the server at `url`.
    pub fn connect(
        &self,
        url: &str,
        max_decompressed_bytes: u64,
    ) -> Result<RemoteSource, CliError> {
        Ok(RemoteSource::new(
            url,
            self.options(max_decompressed_bytes)?,
        )?)
    }
}

fn read_token(file: &Path) -> Result<String, String> {
    let text = std::fs::read_to_string(file)
        .map_err(|e| format!("--token-file {}: {e}", file.display()))?;
    let token = text.lines().next().unwrap_or("").trim().to_string();
    if token.is_empty() {
        return Err(format!(
            "--token-file {}: the file is empty",
            file.display()
        ));
    }
    Ok(token)
}

/// Which profiles of a server or a store to ask for.
#[derive(Debug, Args)]
pub struct RangeArgs {
    /// Start of the range: `now-1h`, an RFC 3339 time or nanoseconds (default: an
    /// hour before --to for a server, everything for a store or files).
    #[arg(long, value_name = "TIME")]
    from: Option<String>,
    /// End of the range (default: now for a server, everything for a store or files).
    #[arg(long, value_name = "TIME")]
    to: Option<String>,
}

impl RangeArgs {
    /// The range asked for, the last hour by default (a server).
    pub fn range(&self) -> Result<TimeRange, CliError> {
        let now = now_nanos();
        let end = match &self.to {
            Some(t) => parse_time(t, now).map_err(|e| format!("--to: {e}"))?,
            None => now,
        };
        let start = match &self.from {
            Some(t) => parse_time(t, now).map_err(|e| format!("--from: {e}"))?,
            None => end.saturating_sub(3_600_000_000_000),
        };
        checked(start, end)
    }

    /// Whether --from or --to was given.
    pub fn given(&self) -> bool {
        self.from.is_some() || self.to.is_some()
    }

    /// The range asked for, `all` by default (a store).
    pub fn range_or(&self, all: TimeRange) -> Result<TimeRange, CliError> {
        let now = now_nanos();
        let start = match &self.from {
            Some(t) => parse_time(t, now).map_err(|e| format!("--from: {e}"))?,
            None => all.start_nanos,
        };
        let end = match &self.to {
            Some(t) => parse_time(t, now).map_err(|e| format!("--to: {e}"))?,
            None => all.end_nanos,
        };
        checked(start, end)
    }
}

fn checked(start_nanos: i64, end_nanos: i64) -> Result<TimeRange, CliError> {
    if end_nanos <= start_nanos {
        return Err("--from is not before --to".into());
    }
    Ok(TimeRange {
        start_nanos,
        end_nanos,
    })
}

/// The `--label NAME=VALUE` flags as labels; names must be valid label names and
/// not reserved (`__name__` has its own flag).
pub fn parse_labels(flags: &[String]) -> Result<capture::Labels, String> {
    let mut labels = capture::Labels::new();
    for l in flags {
        let (k, v) = l
            .split_once('=')
            .ok_or_else(|| format!("--label {l:?}: expected NAME=VALUE"))?;
        if !capture::selector::is_label_name(k) || k.starts_with("__") {
            return Err(format!(
                "--label {l:?}: {k:?} is not a valid label name (letters, digits and _, not starting with a digit or __)"
            ));
        }
        labels.insert(k.to_string(), v.to_string());
    }
    Ok(labels)
}

/// Whether a command-line input names a server rather than a file.
fn is_url(input: &Path) -> bool {
    capture::PathKind::of(input) == capture::PathKind::Server
}

/// What the inputs of a command name: one server, one flint store, or files and
/// folders.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Input {
    /// `grpc://HOST:PORT` or `https://HOST`, alone.
    Server,
    /// A directory holding flint's store, alone.
    Store,
    /// Profile files and folders (searched recursively).
    Files,
}

/// The inputs opened as one source ([`Input::open`]).
pub struct OpenedInput {
    /// Where the profiles are.
    pub source: Box<dyn capture::ProfileSource>,
    /// The range asked for: --from/--to, by default the last hour of a server and
    /// everything of a store or files.
    pub range: TimeRange,
    /// The span of the profiles a store or files hold (a server's is not known).
    pub held: Option<TimeRange>,
    /// The files skipped as unreadable.
    pub skipped: Vec<String>,
}

impl Input {
    /// What `paths` name; a server given together with other inputs is an error.
    pub fn of(paths: &[PathBuf]) -> Result<Self, CliError> {
        match paths {
            [url] if is_url(url) => Ok(Self::Server),
            [dir] if capture::Store::is_store_dir(dir) => Ok(Self::Store),
            paths => match paths.iter().find(|p| is_url(p)) {
                Some(url) => Err(format!(
                    "{}: a server is queried alone, not together with files",
                    url.display()
                )
                .into()),
                None => Ok(Self::Files),
            },
        }
    }

    /// Opens `paths` (which this names) as one source, over the range `range` asks for.
    pub fn open(
        self,
        paths: &[PathBuf],
        connect: &ConnectArgs,
        range: &RangeArgs,
        decode: profile_model::codec::DecodeOptions,
    ) -> Result<OpenedInput, CliError> {
        let first = || paths.first().map_or_else(PathBuf::new, PathBuf::clone);
        Ok(match self {
            Self::Server => {
                let range = range.range()?;
                let server =
                    connect.connect(&first().to_string_lossy(), decode.max_decompressed_bytes)?;
                OpenedInput {
                    source: Box::new(server),
                    range,
                    held: None,
                    skipped: Vec::new(),
                }
            }
            Self::Store => {
                let store = capture::Store::open(&first(), capture::StoreOptions::default())?;
                OpenedInput {
                    range: range.range_or(TimeRange::ALL)?,
                    held: Some(store.span()),
                    source: Box::new(store),
                    skipped: Vec::new(),
                }
            }
            Self::Files => {
                let (files, skipped) =
                    capture::FileSource::open(paths, decode, &capture::Progress::default())?;
                OpenedInput {
                    range: range.range_or(TimeRange::ALL)?,
                    held: Some(files.span()),
                    source: Box::new(files),
                    skipped,
                }
            }
        })
    }
}

/// A runtime for the requests of one command; its threads are named as the recorder
/// counts them (`flint record --push` sends from them).
pub fn runtime() -> Result<tokio::runtime::Runtime, capture::RuntimeError> {
    capture::runtime(capture::RuntimeUse::Network)
}

/// The selector `query` asks for, else the type the source shows by default
/// ([`capture::shown_type`]: pprof's default type of its profiles, else CPU time).
/// `held` is the span of the profiles a store or files hold, named when `range` holds
/// none of them. A query for a profile type the source has none of in `range`, while
/// it has others, is an error naming those (a type written without its `:delta`, say);
/// with none at all in `range`, the range is.
pub async fn selector_or_default(
    source: &dyn capture::ProfileSource,
    query: Option<&str>,
    range: TimeRange,
    held: Option<TimeRange>,
) -> Result<Selector, CliError> {
    let asked = query.map(Selector::parse).transpose()?;
    let types = source.profile_types(range).await;
    if let Some(selector) = asked {
        // Types that cannot be listed leave the query to say what is wrong.
        return match types {
            Ok(types) if types.is_empty() => Err(no_profiles(range, held).into()),
            Ok(types) if !types.contains(&selector.profile_type) => {
                Err(unknown_type(&selector, &types).into())
            }
            _ => Ok(selector),
        };
    }
    let types = types.map_err(|e| e.to_string())?;
    let default = source
        .default_type(range)
        .await
        .map_err(|e| e.to_string())?;
    let chosen =
        capture::shown_type(&types, default.as_ref()).ok_or_else(|| no_profiles(range, held))?;
    Ok(Selector {
        profile_type: chosen.clone(),
        matchers: Vec::new(),
    })
}

/// The error of a query for a profile type there is none of: the types there are.
fn unknown_type(selector: &Selector, types: &[ProfileType]) -> String {
    let names: Vec<String> = types.iter().map(|t| t.to_string()).collect();
    format!(
        "no profiles of type {}; the types here are {}",
        selector.profile_type,
        names.join(", ")
    )
}

/// Why a range gives nothing: the range asked for (times as RFC 3339), and the span of
/// what there is, when known.
fn no_profiles(range: TimeRange, held: Option<TimeRange>) -> String {
    let time = capture::time::rfc3339;
    let mut text = match (range.start_nanos, range.end_nanos) {
        (i64::MIN, i64::MAX) => "no profiles".to_string(),
        (start, i64::MAX) => format!("no profiles in this range, from {} on", time(start)),
        (i64::MIN, end) => format!("no profiles in this range, up to {}", time(end)),
        (start, end) => format!(
            "no profiles in this range, from {} to {}",
            time(start),
            time(end)
        ),
    };
    if range == TimeRange::ALL {
        return text;
    }
    match held.filter(|h| h.start_nanos <= h.end_nanos) {
        Some(held) => text.push_str(&format!(
            " (the profiles span {} to {})",
            time(held.start_nanos),
            time(held.end_nanos)
        )),
        // A server tells no span: what to do instead.
        None => text.push_str(" (--from and --to ask for another range)"),
    }
    text
}

/// A duration flag's value (`10s`, `2m`), refused when it is not longer than zero.
pub fn positive_duration(flag: &str, text: &str) -> Result<Duration, String> {
    let nanos = parse_duration(text).map_err(|e| format!("{flag}: {e}"))?;
    let nanos = u64::try_from(nanos).unwrap_or(0);
    if nanos == 0 {
        return Err(format!("{flag} {text}: must be longer than zero"));
    }
    Ok(Duration::from_nanos(nanos))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_empty_range_names_what_there_is_or_how_to_ask_for_another() {
        let second = 1_000_000_000;
        let range = TimeRange {
            start_nanos: 0,
            end_nanos: second,
        };
        let held = TimeRange {
            start_nanos: 5 * second,
            end_nanos: 6 * second,
        };
        assert_eq!(
            no_profiles(range, Some(held)),
            "no profiles in this range, from 1970-01-01T00:00:00Z to 1970-01-01T00:00:01Z \
             (the profiles span 1970-01-01T00:00:05Z to 1970-01-01T00:00:06Z)"
        );
        assert!(
            no_profiles(range, None).ends_with(" (--from and --to ask for another range)"),
            "a server"
        );
        assert_eq!(no_profiles(TimeRange::ALL, None), "no profiles");
    }
}
