//! The Connect dialog: a server's URL, its bearer token, a CA file and extra headers,
//! a Test button, and the connections used recently (remembered across restarts,
//! without their tokens).

use std::path::PathBuf;
use std::sync::mpsc::{self, Receiver};

use capture::{ProfileSource as _, RemoteOptions, RemoteSource, ServerUrl, TimeRange};
use egui::Context;

use crate::gui::action::Action;

/// Key of the recent connections in eframe's storage.
pub const RECENT_KEY: &str = "flint.recent_connections";
/// How many recent connections are kept.
const MAX_RECENT: usize = 8;

/// The dialog's fields and state.
#[derive(Default)]
pub struct ConnectDialog {
    /// Whether the dialog is shown.
    pub open: bool,
    /// `grpc://host:7070` or `https://host`.
    pub url: String,
    /// Bearer token (never stored).
    pub token: String,
    /// PEM file of the CA to trust, empty for the system's roots.
    pub ca_file: String,
    /// Extra headers, `name=value` separated by commas.
    pub headers: String,
    /// How long connecting, and a connection's silence, may take (`10s`); empty for
    /// the default.
    pub timeout: String,
    /// What the last test found: a summary, or the error.
    pub status: Option<Result<String, String>>,
    testing: Option<Receiver<Result<String, String>>>,
    /// URLs connected to recently, the latest first.
    pub recent: Vec<String>,
}

impl ConnectDialog {
    /// The recent connections as stored (one URL per line).
    pub fn load_recent(&mut self, stored: &str) {
        self.recent = stored
            .lines()
            .map(str::trim)
            .filter(|l| ServerUrl::parse(l).is_ok())
            .take(MAX_RECENT)
            .map(str::to_string)
            .collect();
    }

    /// Puts `url` first among the recent connections.
    pub fn remember(&mut self, url: &str) {
        self.recent.retain(|u| u != url);
        self.recent.insert(0, url.to_string());
        self.recent.truncate(MAX_RECENT);
    }

    /// The client options the fields ask for; the token falls back to `FLINT_TOKEN`.
    pub fn options(&self, max_decompressed_bytes: u64) -> Result<RemoteOptions, String> {
        let headers = self
            .headers
            .split(',')
            .map(str::trim)
            .filter(|h| !h.is_empty())
            .map(|h| {
                h.split_once('=')
                    .map(|(k, v)| (k.trim().to_ascii_lowercase(), v.trim().to_string()))
                    .ok_or_else(|| format!("header {h:?}: expected name=value"))
            })
            .collect::<Result<_, _>>()?;
        let token = Some(self.token.trim().to_string())
            .filter(|t| !t.is_empty())
            .or_else(env_token);
        let defaults = crate::version::remote_options();
        let connect_timeout = match self.timeout.trim() {
            "" => defaults.connect_timeout,
            text => match capture::time::parse_duration(text) {
                Ok(nanos) if nanos > 0 => std::time::Duration::from_nanos(nanos.unsigned_abs()),
                Ok(_) => return Err(format!("timeout {text}: must be longer than zero")),
                Err(e) => return Err(format!("timeout: {e}")),
            },
        };
        Ok(RemoteOptions {
            bearer_token: token,
            headers,
            ca_file: Some(self.ca_file.trim())
                .filter(|f| !f.is_empty())
                .map(PathBuf::from),
            max_decompressed_bytes,
            connect_timeout,
            ..defaults
        })
    }
}

/// The token in `FLINT_TOKEN`, if set.
pub fn env_token() -> Option<String> {
    std::env::var("FLINT_TOKEN")
        .ok()
        .map(|t| t.trim().to_string())
        .filter(|t| !t.is_empty())
}

/// Asks the server for its profile types of the last week: "ok: 3 profile types".
fn test_connection(url: &str, options: RemoteOptions) -> Result<String, String> {
    let source = RemoteSource::new(url, options)?;
    let runtime = capture::runtime(capture::RuntimeUse::Network)?;
    let now = capture::time::now_nanos();
    let week = TimeRange {
        start_nanos: now - 7 * 86_400_000_000_000,
        end_nanos: now,
    };
    let types = runtime
        .block_on(source.profile_types(week))
        .map_err(|e| e.to_string())?;
    Ok(format!(
        "ok: {} answers, {} profile type{} in the last week",
        source.url(),
        types.len(),
        if types.len() == 1 { "" } else { "s" }
    ))
}

impl ConnectDialog {
    /// Draws the Connect dialog when it is open.
    /// The Connect window when it is open; Connect asks for a connection to the URL
    /// with the options given (`max_decompressed_bytes`: the window's decode limit).
    pub fn window(&mut self, ctx: &Context, max_decompressed_bytes: u64) -> Option<Action> {
        let d = self;
        if let Some(rx) = &d.testing
            && let Ok(result) = rx.try_recv()
        {
            d.status = Some(result);
            d.testing = None;
        }
        if !d.open {
            return None;
        }
        let mut open = true;
        let mut connect = None;
        egui::Window::new("Connect to a server")
            .open(&mut open)
            .collapsible(false)
            .resizable(false)
            .show(ctx, |ui| {
                egui::Grid::new("connect fields")
                    .num_columns(2)
                    .show(ui, |ui| {
                        ui.label("URL");
                        ui.add(
                            egui::TextEdit::singleline(&mut d.url)
                                .hint_text("grpc://host:7070 or https://host")
                                .desired_width(320.0),
                        );
                        ui.end_row();
                        ui.label("Bearer token");
                        ui.add(
                            egui::TextEdit::singleline(&mut d.token)
                                .password(true)
                                .hint_text("optional; FLINT_TOKEN when empty")
                                .desired_width(320.0),
                        );
                        ui.end_row();
                        ui.label("CA file");
                        ui.add(
                            egui::TextEdit::singleline(&mut d.ca_file)
                                .hint_text("PEM, for https:// (default: system roots)")
                                .desired_width(320.0),
                        );
                        ui.end_row();
                        ui.label("Headers");
                        ui.add(
                            egui::TextEdit::singleline(&mut d.headers)
                                .hint_text("name=value, name=value")
                                .desired_width(320.0),
                        );
                        ui.end_row();
                        ui.label("Timeout");
                        ui.add(
                            egui::TextEdit::singleline(&mut d.timeout)
                                .hint_text("10s: connecting, and a silent connection")
                                .desired_width(320.0),
                        );
                        ui.end_row();
                    });
                if let Err(e) = ServerUrl::parse(d.url.trim())
                    && !d.url.trim().is_empty()
                {
                    ui.colored_label(ui.visuals().error_fg_color, e.to_string());
                }
                ui.weak("Tokens are never stored; recent connections keep only the URL.");
                ui.horizontal(|ui| {
                    let valid = ServerUrl::parse(d.url.trim()).is_ok();
                    if ui
                        .add_enabled(valid && d.testing.is_none(), egui::Button::new("Test"))
                        .clicked()
                    {
                        match d.options(max_decompressed_bytes) {
                            Ok(options) => {
                                let (tx, rx) = mpsc::channel();
                                let (url, ctx) = (d.url.trim().to_string(), ctx.clone());
                                std::thread::spawn(move || {
                                    let _ = tx.send(test_connection(&url, options));
                                    ctx.request_repaint();
                                });
                                d.testing = Some(rx);
                                d.status = None;
                            }
                            Err(e) => d.status = Some(Err(e)),
                        }
                    }
                    if ui
                        .add_enabled(valid, egui::Button::new("Connect"))
                        .clicked()
                    {
                        match d.options(max_decompressed_bytes) {
                            Ok(options) => connect = Some((d.url.trim().to_string(), options)),
                            Err(e) => d.status = Some(Err(e)),
                        }
                    }
                    if d.testing.is_some() {
                        ui.spinner();
                        ui.label("testing…");
                    }
                });
                match &d.status {
                    Some(Ok(text)) => {
                        ui.colored_label(egui::Color32::from_rgb(60, 160, 80), text);
                    }
                    Some(Err(e)) => {
                        ui.colored_label(ui.visuals().error_fg_color, e);
                    }
                    None => {}
                }
                if !d.recent.is_empty() {
                    ui.separator();
                    ui.label("Recent");
                    for url in d.recent.clone() {
                        if ui.link(&url).clicked() {
                            d.url = url;
                            d.status = None;
                        }
                    }
                }
            });
        d.open = open && connect.is_none();
        connect.map(|(url, options)| Action::Connect(url, options))
    }
}

#[cfg(test)]
mod tests {
    use super::ConnectDialog;

    #[test]
    fn recent_connections_keep_valid_urls_latest_first() {
        let mut d = ConnectDialog::default();
        d.load_recent("grpc://a:7070\nnot a url\nhttps://b\n");
        assert_eq!(d.recent, ["grpc://a:7070", "https://b"]);
        d.remember("https://b");
        assert_eq!(d.recent, ["https://b", "grpc://a:7070"]);
        for i in 0..20 {
            d.remember(&format!("grpc://h{i}:7070"));
        }
        assert_eq!(d.recent.len(), 8);
        assert_eq!(d.recent[0], "grpc://h19:7070");
    }

    #[test]
    fn headers_and_token_become_client_options() {
        let d = ConnectDialog {
            url: "grpc://a:7070".into(),
            token: " t0k ".into(),
            headers: "X-Scope-OrgID=team, a=b".into(),
            ..ConnectDialog::default()
        };
        let o = d.options(1 << 20).unwrap();
        assert_eq!(o.bearer_token.as_deref(), Some("t0k"));
        assert_eq!(
            o.headers,
            [
                ("x-scope-orgid".to_string(), "team".to_string()),
                ("a".into(), "b".into())
            ]
        );
        assert_eq!(o.max_decompressed_bytes, 1 << 20);
        let bad = ConnectDialog {
            headers: "novalue".into(),
            ..ConnectDialog::default()
        };
        assert!(bad.options(1).is_err());
    }

    #[test]
    fn the_timeout_field_sets_the_connect_timeout() {
        let with = |timeout: &str| {
            ConnectDialog {
                timeout: timeout.into(),
                ..ConnectDialog::default()
            }
            .options(1)
        };
        let default = capture::RemoteOptions::default().connect_timeout;
        assert_eq!(with("").unwrap().connect_timeout, default);
        assert_eq!(
            with(" 3s ").unwrap().connect_timeout,
            std::time::Duration::from_secs(3)
        );
        assert!(with("0s").unwrap_err().contains("longer than zero"));
        assert!(with("soon").unwrap_err().starts_with("timeout:"));
    }
}
