//! The one place MetaClaw builds an HTTP client outside the proxy and the Tinker client:
//! LLM calls ([`crate::LlmClient`]), and the plain fetches that are not LLM calls (tokenizer
//! downloads, calendar URLs, the CLI talking to a running core). One builder keeps their
//! user agent, timeouts and proxy rules the same.

use std::sync::OnceLock;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

/// How a client should behave.
#[derive(Debug, Clone)]
pub struct HttpOptions {
    /// Bounds a whole request (`None`: only the connect timeout applies, e.g. downloads
    /// whose own code bounds them).
    pub timeout: Option<Duration>,
    pub connect_timeout: Duration,
    /// For MetaClaw's own loopback API: never route through a proxy from the environment,
    /// which must not see the dashboard token.
    pub loopback: bool,
}

impl HttpOptions {
    pub fn with_timeout(timeout: Duration) -> HttpOptions {
        HttpOptions {
            timeout: Some(timeout),
            ..HttpOptions::default()
        }
    }

    /// For MetaClaw's own API on 127.0.0.1.
    pub fn loopback(timeout: Duration) -> HttpOptions {
        HttpOptions {
            timeout: Some(timeout),
            connect_timeout: Duration::from_secs(2),
            loopback: true,
        }
    }
}

impl Default for HttpOptions {
    fn default() -> HttpOptions {
        HttpOptions {
            timeout: None,
            connect_timeout: Duration::from_secs(30),
            loopback: false,
        }
    }
}

pub fn http_client(options: &HttpOptions) -> Result<reqwest::Client, reqwest::Error> {
    let mut builder = reqwest::Client::builder();
    if let Some(tls) = shared_tls() {
        builder = builder.tls_backend_preconfigured(tls);
    }
    builder = builder
        .connect_timeout(options.connect_timeout)
        .user_agent(concat!("metaclaw/", env!("CARGO_PKG_VERSION")));
    if let Some(timeout) = options.timeout {
        builder = builder.timeout(timeout);
    }
    if options.loopback {
        builder = builder.no_proxy();
    }
    builder.build()
}

/// How many times the shared TLS context was built (once per process, unless it failed).
static TLS_BUILDS: AtomicUsize = AtomicUsize::new(0);

/// The TLS context every client shares. Building one reads and parses the system's root
/// certificates, about 100 ms, which start-up paid once per client (evolver, calendar, judge,
/// ...). `None` when it cannot be built: each client then builds its own and reports why.
pub fn shared_tls() -> Option<native_tls::TlsConnector> {
    static TLS: OnceLock<Option<native_tls::TlsConnector>> = OnceLock::new();
    TLS.get_or_init(|| {
        TLS_BUILDS.fetch_add(1, Ordering::Relaxed);
        native_tls::TlsConnector::builder()
            // What reqwest asks for itself with HTTP/2 on: h2 when the server offers it.
            .request_alpns(&["h2", "http/1.1"])
            .build()
            .map_err(|e| tracing::warn!("shared TLS context not built: {e}"))
            .ok()
    })
    .clone()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_kind_of_client_builds() {
        for options in [
            HttpOptions::default(),
            HttpOptions::with_timeout(Duration::from_secs(5)),
            HttpOptions::loopback(Duration::from_millis(500)),
        ] {
            http_client(&options).unwrap();
        }
    }

    #[test]
    fn clients_share_one_tls_context() {
        for _ in 0..4 {
            http_client(&HttpOptions::default()).unwrap();
        }
        assert_eq!(TLS_BUILDS.load(Ordering::Relaxed), 1);
    }
}
