//! flint's version as the build names it (see `build.rs`): printed by `--version` and
//! `flint serve`, sent to servers as the agent's, and to clients by `flint serve`.

/// `0.2.0 (abc1234 2026-12-10)`: the workspace version, the commit built and its date.
pub const VERSION: &str = env!("FLINT_VERSION");

/// `flint/0.2.0 (abc1234 2026-12-10)`: what flint calls itself in a gRPC `user-agent`.
pub const AGENT: &str = concat!("flint/", env!("FLINT_VERSION"));

/// Client options that name flint as the agent, to start from instead of
/// [`capture::RemoteOptions::default`].
pub fn remote_options() -> capture::RemoteOptions {
    capture::RemoteOptions {
        user_agent: Some(AGENT.to_string()),
        ..capture::RemoteOptions::default()
    }
}
