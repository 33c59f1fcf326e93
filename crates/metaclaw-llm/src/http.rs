//! The one place MetaClaw builds an HTTP client outside the proxy and the Tinker client:
//! LLM calls ([`crate::LlmClient`]), and the plain fetches that are not LLM calls (tokenizer
//! downloads, calendar URLs, the CLI talking to a running core). One builder keeps their
//! user agent, timeouts and proxy rules the same.

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
    let mut builder = reqwest::Client::builder()
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
}
