//! Client configuration. Every duration is injectable so tests run in milliseconds.

use std::time::Duration;

/// Default Tinker cloud endpoint (spec §0.1).
pub const DEFAULT_BASE_URL: &str = "https://tinker.thinkingmachines.dev/services/tinker-prod";

/// Which body encoding to use for `forward_backward` requests. Results of
/// sample / forward_backward are always negotiated with `Accept` and decoded by
/// the response `Content-Type`, whatever the dialect.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum WireDialect {
    /// JSON unless `client/config` says `proto_write_fwdbwd: true` or the host is
    /// the Tinker cloud.
    #[default]
    Auto,
    /// JSON bodies everywhere (SDK ≤ 0.21 / SkyRL 0.3.0 dialect).
    Json,
    /// Protobuf `forward_backward` bodies (SDK ≥ 0.25 dialect).
    Proto,
}

/// Retry / back-off knobs (spec §1.3, §3).
#[derive(Debug, Clone)]
pub struct RetryPolicy {
    /// First back-off step; attempt `n` waits `min(base * 2^n, cap)`.
    pub base: Duration,
    pub cap: Duration,
    /// Total time a submission may spend retrying transient failures.
    pub submit_budget: Duration,
    /// How long 402 (billing) answers are waited out before giving up.
    pub billing_pause_max: Duration,
    /// Sleep between 402 retries.
    pub billing_sleep: Duration,
    /// Sampling back-off after a 429 for prompts ≤ 128 KiB.
    pub sample_backoff_small: Duration,
    /// Sampling back-off after a 429 for larger prompts.
    pub sample_backoff_large: Duration,
    /// Consecutive 5xx answers while polling a future before giving up (the SDK
    /// loops forever; a bound keeps a broken server from hanging the caller).
    pub poll_max_server_errors: u32,
}

impl Default for RetryPolicy {
    fn default() -> Self {
        Self {
            base: Duration::from_secs(1),
            cap: Duration::from_secs(30),
            submit_budget: Duration::from_secs(300),
            billing_pause_max: Duration::from_secs(3600),
            billing_sleep: Duration::from_secs(5),
            sample_backoff_small: Duration::from_secs(1),
            sample_backoff_large: Duration::from_secs(5),
            poll_max_server_errors: 30,
        }
    }
}

impl RetryPolicy {
    /// Millisecond-scale policy for tests against the fake server.
    pub fn fast() -> Self {
        Self {
            base: Duration::from_millis(1),
            cap: Duration::from_millis(20),
            submit_budget: Duration::from_secs(5),
            billing_pause_max: Duration::from_secs(2),
            billing_sleep: Duration::from_millis(5),
            sample_backoff_small: Duration::from_millis(10),
            sample_backoff_large: Duration::from_millis(50),
            poll_max_server_errors: 30,
        }
    }

    /// `min(base * 2^attempt, cap)`.
    pub fn backoff(&self, attempt: u32) -> Duration {
        let factor = 1u32.checked_shl(attempt.min(31)).unwrap_or(u32::MAX);
        self.base.saturating_mul(factor).min(self.cap)
    }
}

/// Everything needed to talk to one Tinker deployment.
#[derive(Debug, Clone)]
pub struct ClientConfig {
    pub base_url: String,
    pub api_key: String,
    pub dialect: WireDialect,
    pub retry: RetryPolicy,
    /// Timeout of ordinary requests.
    pub request_timeout: Duration,
    /// Timeout of one `retrieve_future` long-poll.
    pub poll_timeout: Duration,
    pub heartbeat_interval: Duration,
    /// Sent as `x-sdk-version` so the server can tell this client apart.
    pub sdk_tag: String,
    /// Session tags sent with `create_session`.
    pub tags: Vec<String>,
}

impl Default for ClientConfig {
    fn default() -> Self {
        Self {
            base_url: DEFAULT_BASE_URL.to_string(),
            api_key: String::new(),
            dialect: WireDialect::Auto,
            retry: RetryPolicy::default(),
            request_timeout: Duration::from_secs(60),
            poll_timeout: Duration::from_secs(45),
            heartbeat_interval: Duration::from_secs(10),
            sdk_tag: format!("rust-tinker-client/{}", env!("CARGO_PKG_VERSION")),
            tags: Vec::new(),
        }
    }
}

impl ClientConfig {
    pub fn new(base_url: impl Into<String>, api_key: impl Into<String>) -> Self {
        Self {
            base_url: base_url.into(),
            api_key: api_key.into(),
            ..Self::default()
        }
    }

    /// Config with millisecond timings, for tests against the fake server.
    pub fn fast(base_url: impl Into<String>, api_key: impl Into<String>) -> Self {
        Self {
            retry: RetryPolicy::fast(),
            request_timeout: Duration::from_secs(5),
            poll_timeout: Duration::from_secs(5),
            heartbeat_interval: Duration::from_millis(50),
            ..Self::new(base_url, api_key)
        }
    }

    /// Base URL without trailing slashes; empty means the cloud default.
    pub(crate) fn normalized_base_url(&self) -> String {
        let trimmed = self.base_url.trim().trim_end_matches('/');
        if trimmed.is_empty() {
            DEFAULT_BASE_URL.to_string()
        } else {
            trimmed.to_string()
        }
    }

    pub(crate) fn is_tinker_cloud(&self) -> bool {
        self.normalized_base_url()
            .contains("tinker.thinkingmachines.dev")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn backoff_doubles_and_caps() {
        let p = RetryPolicy::default();
        assert_eq!(p.backoff(0), Duration::from_secs(1));
        assert_eq!(p.backoff(3), Duration::from_secs(8));
        assert_eq!(p.backoff(10), Duration::from_secs(30));
        assert_eq!(p.backoff(200), Duration::from_secs(30));
    }

    #[test]
    fn base_url_is_normalized() {
        let c = ClientConfig::new("http://127.0.0.1:9/", "k");
        assert_eq!(c.normalized_base_url(), "http://127.0.0.1:9");
        assert!(!c.is_tinker_cloud());
        let c = ClientConfig::default();
        assert!(c.is_tinker_cloud());
        assert_eq!(c.poll_timeout, Duration::from_secs(45));
        assert_eq!(c.heartbeat_interval, Duration::from_secs(10));
    }
}
