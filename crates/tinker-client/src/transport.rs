//! HTTP plumbing: headers, one-shot sends, and the submission retry loop.

use std::sync::Mutex;
use std::time::{Duration, Instant};

use bytes::Bytes;
use reqwest::Method;
use reqwest::header::{HeaderMap, HeaderValue};
use serde_json::Value;

use crate::config::ClientConfig;
use crate::error::{Error, Result};
use crate::retry;

pub(crate) const PROTO_CT: &str = "application/x-protobuf";

/// A request body as it goes on the wire.
#[derive(Debug, Clone)]
pub(crate) enum Body {
    None,
    Json(Bytes),
    Proto(Bytes),
}

/// One logical request; kept so it can be re-sent verbatim (retries, 410).
#[derive(Debug, Clone)]
pub(crate) struct Request {
    pub method: Method,
    pub path: String,
    pub body: Body,
    /// `x-sdk-method`, e.g. `TrainingClient.forward_backward`.
    pub sdk_method: &'static str,
    /// `Some(prompt_bytes)` for `asample`: 429 means "back off" (spec §1.3).
    pub sample_prompt_bytes: Option<usize>,
}

impl Request {
    pub fn post_json(
        path: &str,
        body: &impl serde::Serialize,
        sdk_method: &'static str,
    ) -> Result<Self> {
        let bytes = serde_json::to_vec(body).map_err(|e| Error::InvalidArgument(e.to_string()))?;
        Ok(Self {
            method: Method::POST,
            path: path.to_string(),
            body: Body::Json(bytes.into()),
            sdk_method,
            sample_prompt_bytes: None,
        })
    }

    pub fn get(path: &str, sdk_method: &'static str) -> Self {
        Self {
            method: Method::GET,
            path: path.to_string(),
            body: Body::None,
            sdk_method,
            sample_prompt_bytes: None,
        }
    }
}

/// A raw HTTP answer.
#[derive(Debug)]
pub(crate) struct RawResponse {
    pub status: u16,
    pub headers: HeaderMap,
    pub body: Bytes,
}

impl RawResponse {
    pub fn is_proto(&self) -> bool {
        self.headers
            .get(reqwest::header::CONTENT_TYPE)
            .and_then(|v| v.to_str().ok())
            .is_some_and(|ct| ct.starts_with(PROTO_CT))
    }

    pub fn text(&self) -> String {
        String::from_utf8_lossy(&self.body)
            .chars()
            .take(2000)
            .collect()
    }

    pub fn json(&self) -> Option<Value> {
        serde_json::from_slice(&self.body).ok()
    }

    pub fn http_error(&self) -> Error {
        Error::Http {
            status: self.status,
            body: self.text(),
        }
    }
}

/// Fresh idempotency key, generated once per logical request.
pub(crate) fn idempotency_key() -> String {
    format!("rust-tinker-retry-{}", uuid::Uuid::new_v4())
}

/// HTTP client plus config; shared by every client of a session.
pub(crate) struct Transport {
    pub http: reqwest::Client,
    pub cfg: ClientConfig,
    pub base: String,
    /// Global sampling back-off deadline set by 429s on `asample`.
    sample_backoff_until: Mutex<Option<Instant>>,
}

impl Transport {
    pub fn new(cfg: ClientConfig) -> Result<Self> {
        let http = reqwest::Client::builder()
            .connect_timeout(Duration::from_secs(5).min(cfg.request_timeout))
            .build()
            .map_err(Error::from_reqwest)?;
        Ok(Self {
            http,
            base: cfg.normalized_base_url(),
            cfg,
            sample_backoff_until: Mutex::new(None),
        })
    }

    /// One attempt, no retries.
    pub async fn send_once(
        &self,
        req: &Request,
        idem_key: Option<&str>,
        extra: &[(&'static str, String)],
        timeout: Duration,
    ) -> Result<RawResponse> {
        let url = format!("{}{}", self.base, req.path);
        let mut b = self
            .http
            .request(req.method.clone(), url)
            .timeout(timeout)
            .header("X-API-Key", &self.cfg.api_key)
            .header("x-sdk-version", &self.cfg.sdk_tag)
            .header("x-sdk-method", req.sdk_method)
            .header(reqwest::header::USER_AGENT, &self.cfg.sdk_tag);
        if let Some(k) = idem_key {
            b = b.header("X-Idempotency-Key", k);
        }
        let mut has_accept = false;
        for (k, v) in extra {
            has_accept |= k.eq_ignore_ascii_case("accept");
            b = b.header(*k, v);
        }
        if !has_accept {
            b = b.header(reqwest::header::ACCEPT, "application/json");
        }
        b = match &req.body {
            Body::None => b,
            Body::Json(bytes) => b
                .header(reqwest::header::CONTENT_TYPE, "application/json")
                .body(bytes.clone()),
            Body::Proto(bytes) => b
                .header(reqwest::header::CONTENT_TYPE, PROTO_CT)
                .body(bytes.clone()),
        };
        let resp = b.send().await.map_err(Error::from_reqwest)?;
        let status = resp.status().as_u16();
        let headers = resp.headers().clone();
        log_deprecation(&headers, &req.path);
        let body = resp.bytes().await.map_err(Error::from_reqwest)?;
        Ok(RawResponse {
            status,
            headers,
            body,
        })
    }

    async fn wait_sample_backoff(&self) {
        let until = *self
            .sample_backoff_until
            .lock()
            .unwrap_or_else(|e| e.into_inner());
        if let Some(t) = until {
            tokio::time::sleep_until(t.into()).await;
        }
    }

    fn set_sample_backoff(&self, prompt_bytes: usize) -> Duration {
        let p = &self.cfg.retry;
        let d = if prompt_bytes <= 128 * 1024 {
            p.sample_backoff_small
        } else {
            p.sample_backoff_large
        };
        let until = Instant::now() + d;
        let mut g = self
            .sample_backoff_until
            .lock()
            .unwrap_or_else(|e| e.into_inner());
        if g.is_none_or(|t| t < until) {
            *g = Some(until);
        }
        d
    }

    /// Sends `req` until the server accepts it (spec §1.3): connect errors,
    /// timeouts, 408/409/429/5xx are retried with `min(base·2^n, cap)` inside
    /// `submit_budget`; 402 pauses up to `billing_pause_max`; the same
    /// idempotency key is used for every attempt.
    pub async fn submit(&self, req: &Request, idem_key: Option<&str>) -> Result<RawResponse> {
        let policy = &self.cfg.retry;
        let start = Instant::now();
        let mut billing_start: Option<Instant> = None;
        let mut attempt: u32 = 0;
        let mut extra: Vec<(&'static str, String)> = Vec::new();
        if req.sample_prompt_bytes.is_some() {
            extra.push(("X-Tinker-Sampling-Backpressure", "1".to_string()));
        }
        loop {
            if req.sample_prompt_bytes.is_some() {
                self.wait_sample_backoff().await;
            }
            let outcome = self
                .send_once(req, idem_key, &extra, self.cfg.request_timeout)
                .await;
            let (err, delay) = match outcome {
                Ok(r) if (200..300).contains(&r.status) => return Ok(r),
                Ok(r) if r.status == 402 => {
                    let began = *billing_start.get_or_insert_with(Instant::now);
                    if began.elapsed() >= policy.billing_pause_max {
                        return Err(Error::BillingPause(policy.billing_pause_max));
                    }
                    tracing::warn!(path = %req.path, "402 billing pause; waiting");
                    tokio::time::sleep(policy.billing_sleep).await;
                    continue;
                }
                Ok(r) => {
                    let retryable = retry::should_retry_header(&r.headers)
                        .unwrap_or_else(|| retry::is_retryable_status(r.status));
                    if !retryable {
                        return Err(r.http_error());
                    }
                    let delay = if r.status == 429
                        && let Some(bytes) = req.sample_prompt_bytes
                    {
                        self.set_sample_backoff(bytes)
                    } else {
                        retry::retry_after(&r.headers).unwrap_or_else(|| policy.backoff(attempt))
                    };
                    (r.http_error(), delay)
                }
                Err(e @ (Error::Transport(_) | Error::Timeout(_))) => (e, policy.backoff(attempt)),
                Err(e) => return Err(e),
            };
            if start.elapsed() + delay > policy.submit_budget {
                tracing::warn!(path = %req.path, error = %err, "submission retry budget exhausted");
                return Err(err);
            }
            tracing::debug!(path = %req.path, error = %err, ?delay, "retrying submission");
            if req.sample_prompt_bytes.is_none() || !matches!(err, Error::Http { status: 429, .. })
            {
                tokio::time::sleep(delay).await;
            }
            attempt = attempt.saturating_add(1);
        }
    }

    /// Submit and parse the JSON answer.
    pub async fn submit_json(&self, req: &Request) -> Result<Value> {
        let key = (req.method != Method::GET).then(idempotency_key);
        let r = self.submit(req, key.as_deref()).await?;
        parse_json_body(&r.body)
    }
}

/// Empty bodies are valid answers for some endpoints (e.g. finish).
pub(crate) fn parse_json_body(body: &[u8]) -> Result<Value> {
    if body.iter().all(u8::is_ascii_whitespace) {
        return Ok(Value::Null);
    }
    serde_json::from_slice(body).map_err(Error::decode)
}

fn log_deprecation(headers: &HeaderMap, path: &str) {
    if let Some(note) = headers
        .get("x-deprecation-note")
        .and_then(|v: &HeaderValue| v.to_str().ok())
    {
        let level = headers
            .get("x-deprecation-level")
            .and_then(|v| v.to_str().ok())
            .unwrap_or("warning");
        tracing::warn!(%path, %level, "Tinker deprecation note: {note}");
    }
}
