//! What can go wrong calling an LLM endpoint, in kinds a UI can put in words.
//!
//! Every message is built from redacted text: the API key is cut out of upstream bodies,
//! transport errors and URLs before they are stored in an `LlmError`, so no `Display` or
//! `Debug` of an error can show it.

use std::time::Duration;

/// How much of an upstream error body is kept in a message.
const EXCERPT_CHARS: usize = 300;
/// Stands in for the API key wherever a text contained it.
const REDACTED: &str = "[redacted]";

/// A failed call. `endpoint` is the URL that was called (redacted like the rest).
#[derive(Debug, Clone, thiserror::Error)]
pub enum LlmError {
    /// The client could not be set up (bad base URL, TLS backend missing).
    #[error("invalid LLM client settings: {0}")]
    Config(String),
    #[error("HTTP {status} from {endpoint}: the API key was refused ({message})")]
    Unauthorized {
        endpoint: String,
        status: u16,
        message: String,
    },
    #[error(
        "HTTP 404 from {endpoint}: not found; check the base URL and the model name ({message})"
    )]
    NotFound { endpoint: String, message: String },
    #[error("HTTP 429 from {endpoint}: rate limited{}: {message}", retry_hint(*retry_after))]
    RateLimited {
        endpoint: String,
        retry_after: Option<Duration>,
        message: String,
    },
    #[error("HTTP {status} from {endpoint}: {message}")]
    Status {
        endpoint: String,
        status: u16,
        message: String,
    },
    #[error("{endpoint}: timed out after {}", seconds(*after))]
    Timeout { endpoint: String, after: Duration },
    #[error("{endpoint}: the host name could not be resolved ({detail})")]
    Dns { endpoint: String, detail: String },
    #[error("{endpoint}: connection refused (is the server running?)")]
    ConnectionRefused { endpoint: String },
    #[error("{endpoint}: TLS failed ({detail})")]
    Tls { endpoint: String, detail: String },
    /// Any other transport failure: reset connections, broken bodies.
    #[error("{endpoint}: connection failed ({detail})")]
    Connection { endpoint: String, detail: String },
    /// The server answered `status` with a body that is not the expected shape.
    #[error("{endpoint}: malformed response (HTTP {status}): {reason}")]
    Malformed {
        endpoint: String,
        status: u16,
        reason: String,
    },
}

/// The stable kind of an [`LlmError`], for code and for UIs that show it in words.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ErrorKind {
    Config,
    Unauthorized,
    NotFound,
    RateLimited,
    UpstreamStatus,
    Timeout,
    Dns,
    ConnectionRefused,
    Tls,
    Connection,
    Malformed,
}

impl ErrorKind {
    /// A stable snake_case name.
    pub fn as_str(self) -> &'static str {
        match self {
            ErrorKind::Config => "config",
            ErrorKind::Unauthorized => "unauthorized",
            ErrorKind::NotFound => "not_found",
            ErrorKind::RateLimited => "rate_limited",
            ErrorKind::UpstreamStatus => "upstream_status",
            ErrorKind::Timeout => "timeout",
            ErrorKind::Dns => "dns",
            ErrorKind::ConnectionRefused => "connection_refused",
            ErrorKind::Tls => "tls",
            ErrorKind::Connection => "connection",
            ErrorKind::Malformed => "malformed_response",
        }
    }

    /// A short sentence for a status line.
    pub fn words(self) -> &'static str {
        match self {
            ErrorKind::Config => "the endpoint settings are invalid",
            ErrorKind::Unauthorized => "the API key was refused",
            ErrorKind::NotFound => "the endpoint or model was not found",
            ErrorKind::RateLimited => "the provider is rate limiting requests",
            ErrorKind::UpstreamStatus => "the provider returned an error",
            ErrorKind::Timeout => "the request timed out",
            ErrorKind::Dns => "the host name could not be resolved",
            ErrorKind::ConnectionRefused => "nothing is listening at that address",
            ErrorKind::Tls => "the secure connection failed",
            ErrorKind::Connection => "the connection failed",
            ErrorKind::Malformed => "the answer was not in the expected format",
        }
    }
}

impl std::fmt::Display for ErrorKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

impl LlmError {
    pub fn kind(&self) -> ErrorKind {
        match self {
            LlmError::Config(_) => ErrorKind::Config,
            LlmError::Unauthorized { .. } => ErrorKind::Unauthorized,
            LlmError::NotFound { .. } => ErrorKind::NotFound,
            LlmError::RateLimited { .. } => ErrorKind::RateLimited,
            LlmError::Status { .. } => ErrorKind::UpstreamStatus,
            LlmError::Timeout { .. } => ErrorKind::Timeout,
            LlmError::Dns { .. } => ErrorKind::Dns,
            LlmError::ConnectionRefused { .. } => ErrorKind::ConnectionRefused,
            LlmError::Tls { .. } => ErrorKind::Tls,
            LlmError::Connection { .. } => ErrorKind::Connection,
            LlmError::Malformed { .. } => ErrorKind::Malformed,
        }
    }

    /// The HTTP status the server answered with, when it answered.
    pub fn status(&self) -> Option<u16> {
        match self {
            LlmError::Unauthorized { status, .. }
            | LlmError::Status { status, .. }
            | LlmError::Malformed { status, .. } => Some(*status),
            LlmError::NotFound { .. } => Some(404),
            LlmError::RateLimited { .. } => Some(429),
            _ => None,
        }
    }

    /// The server's own explanation (its `error.message` or a body excerpt), for callers that
    /// react to what a 4xx says.
    pub fn upstream_message(&self) -> Option<&str> {
        match self {
            LlmError::Unauthorized { message, .. }
            | LlmError::NotFound { message, .. }
            | LlmError::RateLimited { message, .. }
            | LlmError::Status { message, .. } => Some(message),
            _ => None,
        }
    }

    /// Worth another try: the server may recover (408, 429, 5xx) or was not reached
    /// (refused or dropped connections). DNS and TLS failures, refused keys, other 4xx and
    /// timeouts are not: trying again gives the same answer or doubles a long wait.
    pub fn is_retryable(&self) -> bool {
        match self {
            LlmError::RateLimited { .. }
            | LlmError::ConnectionRefused { .. }
            | LlmError::Connection { .. } => true,
            LlmError::Status { status, .. } => *status == 408 || *status >= 500,
            _ => false,
        }
    }

    /// How long the server asked to wait before trying again.
    pub fn retry_after(&self) -> Option<Duration> {
        match self {
            LlmError::RateLimited { retry_after, .. } => *retry_after,
            _ => None,
        }
    }

    /// The error for a non-success answer; `body` is the raw response text.
    pub(crate) fn from_status(
        endpoint: &str,
        status: u16,
        body: &str,
        retry_after: Option<Duration>,
        secret: &Secret,
    ) -> LlmError {
        let endpoint = endpoint.to_owned();
        let message = excerpt(body, secret);
        match status {
            401 | 403 => LlmError::Unauthorized {
                endpoint,
                status,
                message,
            },
            404 => LlmError::NotFound { endpoint, message },
            429 => LlmError::RateLimited {
                endpoint,
                retry_after,
                message,
            },
            _ => LlmError::Status {
                endpoint,
                status,
                message,
            },
        }
    }

    /// Sorts a transport error by the most specific cause in its chain.
    pub(crate) fn from_transport(
        endpoint: &str,
        err: &reqwest::Error,
        secret: &Secret,
    ) -> LlmError {
        let endpoint = endpoint.to_owned();
        let detail = secret.redact(&root_cause(err));
        let mut source: Option<&(dyn std::error::Error + 'static)> = Some(err);
        while let Some(e) = source {
            if e.downcast_ref::<native_tls::Error>().is_some() {
                return LlmError::Tls { endpoint, detail };
            }
            if let Some(io) = e.downcast_ref::<std::io::Error>()
                && io.kind() == std::io::ErrorKind::ConnectionRefused
            {
                return LlmError::ConnectionRefused { endpoint };
            }
            // hyper-util names resolver failures "dns error"; the resolver's own error is an
            // io::Error of kind Other, so the name is the only mark.
            if e.to_string().starts_with("dns error") {
                return LlmError::Dns { endpoint, detail };
            }
            source = e.source();
        }
        if err.is_builder() {
            return LlmError::Config(detail);
        }
        LlmError::Connection { endpoint, detail }
    }
}

/// The API key, kept so every text that leaves the client can be scrubbed of it.
#[derive(Clone, Default)]
pub(crate) struct Secret(String);

impl Secret {
    pub(crate) fn new(key: &str) -> Secret {
        Secret(key.trim().to_owned())
    }

    pub(crate) fn expose(&self) -> &str {
        &self.0
    }

    pub(crate) fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// `text` with every occurrence of the key replaced.
    pub(crate) fn redact(&self, text: &str) -> String {
        if self.0.is_empty() {
            text.to_owned()
        } else {
            text.replace(&self.0, REDACTED)
        }
    }
}

impl std::fmt::Debug for Secret {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(if self.0.is_empty() { "\"\"" } else { REDACTED })
    }
}

/// The server's explanation: `error.message` of an OpenAI- or Anthropic-shaped body, else the
/// body itself; on one line, redacted before it is shortened (so no prefix of the key
/// survives a cut), at most `EXCERPT_CHARS` characters.
fn excerpt(body: &str, secret: &Secret) -> String {
    let message = serde_json::from_str::<serde_json::Value>(body)
        .ok()
        .and_then(|v| {
            v.pointer("/error/message")
                .or_else(|| v.pointer("/message"))
                .or_else(|| v.get("error").filter(|e| e.is_string()))
                .and_then(serde_json::Value::as_str)
                .map(str::to_owned)
        })
        .unwrap_or_else(|| body.to_owned());
    let one_line = message.split_whitespace().collect::<Vec<_>>().join(" ");
    let clean = secret.redact(&one_line);
    if clean.is_empty() {
        return "no details".to_owned();
    }
    match clean.char_indices().nth(EXCERPT_CHARS) {
        Some((cut, _)) => format!("{}…", &clean[..cut]),
        None => clean,
    }
}

fn root_cause(err: &(dyn std::error::Error + 'static)) -> String {
    let mut last = err.to_string();
    let mut source = err.source();
    while let Some(e) = source {
        last = e.to_string();
        source = e.source();
    }
    last
}

fn retry_hint(after: Option<Duration>) -> String {
    after.map_or_else(String::new, |d| format!(" (retry after {})", seconds(d)))
}

fn seconds(d: Duration) -> String {
    let s = d.as_secs_f64();
    if s.fract() == 0.0 {
        format!("{s:.0} s")
    } else {
        format!("{s:.1} s")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn upstream_messages_are_one_redacted_line_and_short() {
        let key = Secret::new("sk-live-0123456789abcdef");
        let body =
            r#"{"error": {"message": "Incorrect API key provided:\n sk-live-0123456789abcdef"}}"#;
        let e = LlmError::from_status("http://h/v1/models", 401, body, None, &key);
        assert_eq!(e.kind(), ErrorKind::Unauthorized);
        assert_eq!(
            e.upstream_message(),
            Some("Incorrect API key provided: [redacted]")
        );
        // A key that straddles the cut is redacted first, so no prefix of it remains.
        let long = format!("{}sk-live-0123456789abcdef", "x".repeat(EXCERPT_CHARS - 5));
        let e = LlmError::from_status("u", 500, &long, None, &key);
        let text = e.to_string();
        assert!(!text.contains("sk-live"), "{text}");
        assert!(text.ends_with('…'), "{text}");
        assert!(e.is_retryable());
    }

    #[test]
    fn kinds_follow_the_status() {
        let key = Secret::default();
        let kind = |s| LlmError::from_status("u", s, "", None, &key).kind();
        assert_eq!(kind(403), ErrorKind::Unauthorized);
        assert_eq!(kind(404), ErrorKind::NotFound);
        assert_eq!(kind(429), ErrorKind::RateLimited);
        assert_eq!(kind(400), ErrorKind::UpstreamStatus);
        let retry = |s| LlmError::from_status("u", s, "", None, &key).is_retryable();
        assert!(retry(408) && retry(429) && retry(500) && retry(503));
        assert!(!retry(400) && !retry(401) && !retry(404) && !retry(422));
        assert_eq!(
            LlmError::from_status("u", 418, "", None, &key).to_string(),
            "HTTP 418 from u: no details"
        );
    }

    #[test]
    fn secret_debug_never_shows_the_key() {
        assert_eq!(format!("{:?}", Secret::new("sk-abc")), "[redacted]");
    }
}
