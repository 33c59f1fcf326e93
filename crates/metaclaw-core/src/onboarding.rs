//! First run: checking an upstream the user is about to choose, before it is saved. The
//! dashboard's onboarding calls this; saving goes through `settings::apply` with
//! `metaclaw_config::preset::endpoint_changes`, the keys `metaclaw setup` writes.

use std::time::{Duration, Instant};

use metaclaw_config::{AuthMethod, Config, LlmProvider};
use metaclaw_domain::Dialect;
use metaclaw_llm::{LlmClient, LlmError, RetryPolicy};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// How long a check waits when the caller names no limit: a cold local model can take a
/// while to answer its first token.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(20);
const MAX_TIMEOUT: Duration = Duration::from_secs(120);

/// An endpoint not saved yet.
#[derive(Debug, Clone, Default, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct EndpointCandidate {
    /// `anthropic` is called with the Messages API; every other provider is OpenAI-compatible.
    #[serde(default)]
    pub provider: LlmProvider,
    pub api_base: String,
    /// `None`: the stored `llm.api_key`, but only for the stored `llm.api_base` (a stored key
    /// is never sent to another host). `""`: no key.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub api_key: Option<String>,
    #[serde(default)]
    pub model: String,
    /// How the agent's turns are signed: `passthrough` forwards the agent's own sign-in (the
    /// key above is then MetaClaw's own, for its own calls). Saved only when given.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub auth_method: Option<AuthMethod>,
    /// Limit for the whole check (default 20 s, at most 120 s).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timeout_ms: Option<u64>,
}

impl EndpointCandidate {
    /// The key to send: the one given, or the stored one for the stored endpoint.
    pub fn key(&self, config: &Config) -> String {
        match &self.api_key {
            Some(key) => key.trim().to_owned(),
            None if same_base(&self.api_base, &config.llm.api_base) => config.llm.api_key.clone(),
            None => String::new(),
        }
    }

    fn timeout(&self) -> Duration {
        self.timeout_ms
            .map(Duration::from_millis)
            .unwrap_or(DEFAULT_TIMEOUT)
            .clamp(Duration::from_millis(1), MAX_TIMEOUT)
    }

    fn dialect(&self) -> Dialect {
        match self.provider {
            LlmProvider::Anthropic => Dialect::Anthropic,
            _ => Dialect::OpenAi,
        }
    }

    /// A client for this endpoint that tries once: a check reports what the endpoint says
    /// now (a refused connection is not waited out).
    fn client(&self, config: &Config) -> Result<LlmClient, LlmError> {
        Ok(
            LlmClient::new(&self.api_base, &self.key(config), self.timeout())?
                .with_retry(RetryPolicy::none())
                .with_dialect(self.dialect()),
        )
    }
}

fn same_base(a: &str, b: &str) -> bool {
    let norm = |s: &str| s.trim().trim_end_matches('/').to_owned();
    !b.trim().is_empty() && norm(a) == norm(b)
}

/// Why a check failed, in words and as data.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct EndpointFailure {
    /// Stable kind: `unauthorized`, `not_found`, `rate_limited`, `upstream_status`,
    /// `timeout`, `dns`, `connection_refused`, `tls`, `connection`, `malformed_response`,
    /// `config`.
    pub kind: String,
    /// The HTTP status, when the endpoint answered.
    pub status: Option<u16>,
    /// The provider's own explanation (its `error.message`), when it gave one.
    pub upstream_message: Option<String>,
    /// One line for the user: `401: Invalid Authentication` for an answer, what went wrong
    /// in words for a transport failure.
    pub summary: String,
    /// The whole error (URL, cause); never contains the API key.
    pub detail: String,
}

impl From<&LlmError> for EndpointFailure {
    fn from(e: &LlmError) -> Self {
        let kind = e.kind();
        let upstream_message = e.upstream_message().map(str::to_owned);
        let summary = match (e.status(), &upstream_message) {
            (Some(status), Some(m)) => format!("{status}: {m}"),
            (Some(status), None) => format!("{status}: {}", kind.words()),
            (None, _) => match e {
                LlmError::Timeout { after, .. } => format!(
                    "{} (no answer within {:.1} s)",
                    capitalised(kind.words()),
                    after.as_secs_f64()
                ),
                LlmError::Config(detail) => format!("{}: {detail}", capitalised(kind.words())),
                _ => capitalised(kind.words()),
            },
        };
        EndpointFailure {
            kind: kind.as_str().to_owned(),
            status: e.status(),
            upstream_message,
            summary,
            detail: e.to_string(),
        }
    }
}

fn capitalised(words: &str) -> String {
    let mut chars = words.chars();
    chars
        .next()
        .map(|c| c.to_uppercase().chain(chars).collect())
        .unwrap_or_default()
}

/// The models an endpoint lists.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct EndpointModels {
    /// Model ids, sorted; empty when the endpoint did not list any.
    pub models: Vec<String>,
    /// Why there is no list (many endpoints do not serve one: the model is then typed).
    pub failure: Option<EndpointFailure>,
}

/// The outcome of a one-token request.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct EndpointTest {
    pub ok: bool,
    pub failure: Option<EndpointFailure>,
    pub latency_ms: f64,
    /// The URL that was called (no key in it).
    pub endpoint: String,
}

/// `GET /models` on the candidate, once.
pub async fn list_models(candidate: &EndpointCandidate, config: &Config) -> EndpointModels {
    let answer = match candidate.client(config) {
        Ok(client) => client.models().await,
        Err(e) => Err(e),
    };
    match answer {
        Ok(list) => {
            let mut models: Vec<String> = list.data.into_iter().map(|m| m.id).collect();
            models.sort();
            models.dedup();
            EndpointModels {
                models,
                failure: None,
            }
        }
        Err(e) => EndpointModels {
            models: Vec::new(),
            failure: Some(EndpointFailure::from(&e)),
        },
    }
}

/// One real request for one token of `candidate.model`: what the proxy will do for every
/// turn, in the smallest form.
pub async fn test(candidate: &EndpointCandidate, config: &Config) -> EndpointTest {
    let started = Instant::now();
    let outcome = match candidate.client(config) {
        Ok(client) => client.ping(candidate.model.trim()).await,
        Err(e) => Err(e),
    };
    let endpoint = match candidate.dialect() {
        Dialect::Anthropic => "Messages API",
        Dialect::OpenAi => "chat completions",
    };
    if let Err(e) = &outcome {
        tracing::debug!(error = %e, "onboarding connection test failed");
    }
    EndpointTest {
        ok: outcome.is_ok(),
        failure: outcome.as_ref().err().map(EndpointFailure::from),
        latency_ms: started.elapsed().as_secs_f64() * 1000.0,
        endpoint: format!("{} ({endpoint})", candidate.api_base.trim()),
    }
}

/// Under pass-through the agent's sign-in serves its own turns only: MetaClaw's own calls
/// (skill distillation, the judge, connection checks) need a key of MetaClaw's. `None`
/// when they have one (or pass-through is off).
pub fn own_endpoint_warning(config: &Config) -> Option<String> {
    (config.llm.auth_method == AuthMethod::Passthrough
        && config.llm.api_key.trim().is_empty()
        && config.llm.oauth_token.trim().is_empty())
    .then(|| {
        "Pass-through: your agent's own sign-in is forwarded for its turns, but MetaClaw has \
         no key of its own, so skill distillation, the judge and connection checks cannot \
         run. Set an endpoint and API key for them in Settings → LLM (llm.api_base, \
         llm.api_key)."
            .to_owned()
    })
}

/// Whether the dashboard should open on onboarding: no upstream to send requests to.
pub fn needs_onboarding(config: &Config) -> bool {
    config.llm.api_base.trim().is_empty()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_stored_key_only_goes_to_the_stored_endpoint() {
        let mut config = Config::default();
        config.llm.api_base = "https://api.example.com/v1".into();
        config.llm.api_key = "sk-stored".into();
        let mut c = EndpointCandidate {
            api_base: "https://api.example.com/v1/".into(),
            ..EndpointCandidate::default()
        };
        assert_eq!(c.key(&config), "sk-stored");
        c.api_base = "https://elsewhere.example/v1".into();
        assert_eq!(c.key(&config), "");
        c.api_key = Some(" sk-typed ".into());
        assert_eq!(c.key(&config), "sk-typed");
    }

    #[test]
    fn failures_read_as_status_and_message_or_words() {
        let e = LlmError::Unauthorized {
            endpoint: "u".into(),
            status: 401,
            message: "Invalid Authentication".into(),
        };
        let f = EndpointFailure::from(&e);
        assert_eq!(f.summary, "401: Invalid Authentication");
        assert_eq!((f.kind.as_str(), f.status), ("unauthorized", Some(401)));
        let f = EndpointFailure::from(&LlmError::ConnectionRefused {
            endpoint: "http://127.0.0.1:9/v1/models".into(),
        });
        assert_eq!(f.summary, "Nothing is listening at that address");
        assert!(f.detail.contains("127.0.0.1:9"), "{}", f.detail);
        let f = EndpointFailure::from(&LlmError::Timeout {
            endpoint: "u".into(),
            after: Duration::from_millis(300),
        });
        assert_eq!(f.summary, "The request timed out (no answer within 0.3 s)");
    }

    #[test]
    fn pass_through_without_a_key_of_metaclaws_is_said() {
        let mut config = Config::default();
        assert_eq!(own_endpoint_warning(&config), None);
        config.llm.auth_method = AuthMethod::Passthrough;
        let said = own_endpoint_warning(&config).unwrap();
        assert!(said.contains("skill distillation, the judge"), "{said}");
        config.llm.api_key = "sk-metaclaw".into();
        assert_eq!(own_endpoint_warning(&config), None);
    }

    #[test]
    fn onboarding_is_needed_without_a_base_url() {
        let mut config = Config::default();
        assert!(needs_onboarding(&config));
        config.llm.api_base = "  ".into();
        assert!(needs_onboarding(&config));
        config.llm.api_base = "http://127.0.0.1:11434/v1".into();
        assert!(!needs_onboarding(&config));
    }
}
