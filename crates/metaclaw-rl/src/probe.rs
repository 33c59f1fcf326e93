//! "Test Tinker": open a session on the configured Tinker-compatible server and read what it
//! can train, so a wrong URL or key shows up in Settings instead of at RL start-up.

use std::time::{Duration, Instant};

use metaclaw_config::Config;
use serde::{Deserialize, Serialize};
use tinker_client::{ClientConfig, Error, RetryPolicy, ServiceClient};

use crate::readiness;

/// What the server said.
#[derive(Debug, Clone, Serialize, Deserialize, schemars::JsonSchema)]
pub struct TinkerProbe {
    pub ok: bool,
    /// In words: the session that was created, or why none was.
    pub detail: String,
    pub base_url: String,
    /// Models the server can train (from its capabilities).
    pub models: Vec<String>,
    /// Whether the configured base model is among them (`None`: no model set or no list).
    pub model_supported: Option<bool>,
    pub latency_ms: f64,
}

/// A short retry budget: a person is waiting for the answer.
fn client_config(base_url: &str, api_key: &str) -> ClientConfig {
    let mut c = ClientConfig::new(base_url, api_key);
    c.retry = RetryPolicy {
        base: Duration::from_millis(100),
        cap: Duration::from_secs(1),
        submit_budget: Duration::from_secs(3),
        ..RetryPolicy::default()
    };
    c.request_timeout = Duration::from_secs(10);
    c
}

fn explain(e: &Error, base_url: &str) -> String {
    match e {
        Error::Http {
            status: 401 | 403, ..
        } => format!("{base_url} refused the API key (set rl.api_key)"),
        Error::Transport(m) => format!("cannot reach {base_url}: {m}"),
        Error::Timeout(_) => format!("{base_url} did not answer in time"),
        other => format!("{base_url} answered, but: {other}"),
    }
}

/// Create a session with the configured endpoint and key, read the capabilities, close it.
pub async fn test_tinker(config: &Config) -> TinkerProbe {
    let ep = readiness::endpoint(config);
    let key = if ep.api_key.is_empty() {
        "tml-local".to_owned()
    } else {
        ep.api_key.clone()
    };
    let started = Instant::now();
    let outcome = async {
        let service = ServiceClient::connect(client_config(&ep.base_url, &key)).await?;
        let caps = service.capabilities().await;
        let session = service.session_id().to_owned();
        service.close().await;
        Ok::<_, Error>((session, caps?))
    }
    .await;
    let latency_ms = started.elapsed().as_secs_f64() * 1e3;
    match outcome {
        Ok((session, caps)) => {
            let models: Vec<String> = caps
                .supported_models
                .into_iter()
                .map(|m| m.model_name)
                .collect();
            let model_supported = readiness::model(config)
                .filter(|_| !models.is_empty())
                .map(|m| models.contains(&m));
            let mut detail = format!("session {session} created on {}", ep.base_url);
            // Not a failure: Tinker-compatible servers (SkyRL) may train models they do not list.
            if model_supported == Some(false) {
                detail.push_str(&format!(
                    "; note: the server does not list {} (rl.model)",
                    readiness::model(config).unwrap_or_default()
                ));
            }
            TinkerProbe {
                ok: true,
                detail,
                base_url: ep.base_url,
                models,
                model_supported,
                latency_ms,
            }
        }
        Err(e) => TinkerProbe {
            ok: false,
            detail: explain(&e, &ep.base_url),
            base_url: ep.base_url,
            models: Vec::new(),
            model_supported: None,
            latency_ms,
        },
    }
}
