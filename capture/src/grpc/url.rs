//! Where a remote server is: `grpc://HOST[:PORT]` (cleartext HTTP/2, as Parca serves
//! it on port 7070) or `https://HOST[:PORT]` (TLS).

use std::fmt;

/// A server URL that cannot be read: what is wrong with it, in one line.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct UrlError(String);

impl From<String> for UrlError {
    fn from(message: String) -> Self {
        Self(message)
    }
}

/// The message, for callers that carry errors as text.
impl From<UrlError> for String {
    fn from(e: UrlError) -> Self {
        e.0
    }
}

/// Parca's default port, used when a `grpc://` URL gives none.
pub const DEFAULT_PORT: u16 = 7070;

/// The schemes a server URL may have: (scheme, TLS, default port).
const SCHEMES: [(&str, bool, u16); 4] = [
    ("grpc", false, DEFAULT_PORT),
    ("http", false, DEFAULT_PORT),
    ("https", true, 443),
    ("grpcs", true, 443),
];

/// A parsed server address.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ServerUrl {
    /// Whether to speak TLS (`https://`, `grpcs://`) or cleartext h2c (`grpc://`, `http://`).
    pub tls: bool,
    /// Host name or IP address (IPv6 without brackets).
    pub host: String,
    /// TCP port.
    pub port: u16,
}

impl ServerUrl {
    /// Whether `text` begins with a server URL's scheme (`grpc://`, `https://`, …): it
    /// names a server, not a file, even if [`ServerUrl::parse`] then finds it malformed.
    pub fn names_server(text: &str) -> bool {
        text.trim().split_once("://").is_some_and(|(scheme, _)| {
            SCHEMES
                .iter()
                .any(|(known, _, _)| known.eq_ignore_ascii_case(scheme))
        })
    }

    /// Parses `grpc://HOST[:PORT]`, `http://HOST[:PORT]` (both h2c, port 7070 by
    /// default) or `https://HOST[:PORT]`, `grpcs://HOST[:PORT]` (TLS, port 443 by
    /// default). IPv6 hosts go in brackets. Errors are one line naming the problem.
    pub fn parse(text: &str) -> Result<Self, UrlError> {
        let text = text.trim();
        let Some((scheme, rest)) = text.split_once("://") else {
            return Err(format!(
                "{text:?} has no scheme: write grpc://HOST:PORT or https://HOST[:PORT]"
            )
            .into());
        };
        let Some(&(_, tls, default_port)) = SCHEMES
            .iter()
            .find(|(known, _, _)| known.eq_ignore_ascii_case(scheme))
        else {
            return Err(format!(
                "unknown scheme {scheme:?} in {text:?}: use grpc://HOST:PORT or https://HOST[:PORT]"
            )
            .into());
        };
        let authority = rest.strip_suffix('/').unwrap_or(rest);
        if authority.contains('/') || authority.contains('?') || authority.contains('#') {
            return Err(format!("{text:?} has a path; give only the scheme, host and port").into());
        }
        if authority.contains('@') {
            return Err(
                format!("{text:?} has user information; give a bearer token instead").into(),
            );
        }
        let (host, port_text) = if let Some(bracketed) = authority.strip_prefix('[') {
            let Some((host, after)) = bracketed.split_once(']') else {
                return Err(format!("{text:?}: an IPv6 host needs a closing ']'").into());
            };
            let port = match after {
                "" => None,
                _ => match after.strip_prefix(':') {
                    Some(port) => Some(port),
                    None => return Err(format!("{text:?}: expected ':PORT' after ']'").into()),
                },
            };
            (host, port)
        } else {
            match authority.rsplit_once(':') {
                Some((host, port)) => (host, Some(port)),
                None => (authority, None),
            }
        };
        if host.is_empty() {
            return Err(format!("{text:?} has no host").into());
        }
        if host.contains(':') && !authority.starts_with('[') {
            return Err(format!("{text:?}: put an IPv6 host in brackets, [::1]").into());
        }
        let port = match port_text {
            None => default_port,
            Some(p) => match p.parse::<u16>() {
                Ok(port) if port != 0 => port,
                _ => {
                    return Err(
                        format!("{text:?}: bad port {p:?} (a number from 1 to 65535)").into(),
                    );
                }
            },
        };
        Ok(Self {
            tls,
            host: host.to_string(),
            port,
        })
    }

    /// The URI tonic connects to (`http://…` or `https://…`).
    pub fn uri(&self) -> String {
        let scheme = if self.tls { "https" } else { "http" };
        format!("{scheme}://{}:{}", self.bracketed_host(), self.port)
    }

    /// `host:port` (the host in brackets for IPv6), as a message names the server.
    pub fn authority(&self) -> String {
        format!("{}:{}", self.bracketed_host(), self.port)
    }

    fn bracketed_host(&self) -> String {
        if self.host.contains(':') {
            format!("[{}]", self.host)
        } else {
            self.host.clone()
        }
    }
}

impl fmt::Display for ServerUrl {
    /// `grpc://host:port` or `https://host:port`, as the source is shown to the user.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let scheme = if self.tls { "https" } else { "grpc" };
        write!(f, "{scheme}://{}:{}", self.bracketed_host(), self.port)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn url(tls: bool, host: &str, port: u16) -> ServerUrl {
        ServerUrl {
            tls,
            host: host.to_string(),
            port,
        }
    }

    #[test]
    fn server_urls_are_told_from_file_paths() {
        for text in [
            "grpc://h:7070",
            "HTTPS://h",
            "grpcs://h",
            "http://h/path",
            "grpc://",
        ] {
            assert!(ServerUrl::names_server(text), "{text}");
        }
        for text in ["cpu.pb.gz", "/tmp/a://b", "ftp://h", "profiles/", ""] {
            assert!(!ServerUrl::names_server(text), "{text}");
        }
    }

    #[test]
    fn good_urls() {
        assert_eq!(
            ServerUrl::parse("grpc://localhost:7070"),
            Ok(url(false, "localhost", 7070))
        );
        assert_eq!(
            ServerUrl::parse("grpc://parca"),
            Ok(url(false, "parca", 7070))
        );
        assert_eq!(
            ServerUrl::parse("https://parca.example.com/"),
            Ok(url(true, "parca.example.com", 443))
        );
        assert_eq!(
            ServerUrl::parse("https://10.0.0.1:8443"),
            Ok(url(true, "10.0.0.1", 8443))
        );
        assert_eq!(
            ServerUrl::parse("grpc://[::1]:7071"),
            Ok(url(false, "::1", 7071))
        );
        assert_eq!(
            ServerUrl::parse("grpc://[::1]:7071").map(|u| u.uri()),
            Ok("http://[::1]:7071".to_string())
        );
        assert_eq!(
            ServerUrl::parse("https://h:1").map(|u| u.to_string()),
            Ok("https://h:1".to_string())
        );
    }

    #[test]
    fn bad_urls_say_what_is_wrong() {
        let error = |text: &str| {
            ServerUrl::parse(text)
                .err()
                .map(String::from)
                .unwrap_or_default()
        };
        assert!(error("ftp://h:1").contains("unknown scheme \"ftp\""));
        assert!(error("localhost:7070").contains("no scheme"));
        assert!(error("grpc://:7070").contains("no host"));
        assert!(error("grpc://").contains("no host"));
        assert!(error("grpc://h:http").contains("bad port \"http\""));
        assert!(error("grpc://h:70000").contains("bad port"));
        assert!(error("grpc://h:0").contains("bad port"));
        assert!(error("grpc://h:1/api").contains("path"));
        assert!(error("grpc://[::1").contains("']'"));
        for text in ["ftp://h:1", "grpc://", "grpc://h:x", "x"] {
            assert!(!error(text).contains('\n'), "{text}");
        }
    }
}
