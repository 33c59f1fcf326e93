use std::time::Duration;

use metaclaw_domain::Dialect;

/// Everything the request path needs from the configuration, resolved once at start-up.
#[derive(Debug, Clone, PartialEq)]
pub struct ProxySettings {
    /// `proxy.api_key`; empty disables the check.
    pub api_key: String,
    pub max_body_bytes: u64,
    pub upstream: UpstreamSettings,
    /// `llm.model_id`; when set it replaces the model the client asked for.
    pub model_override: Option<String>,
    /// Advertised on `/v1/models`.
    pub served_model: String,
    /// `max_context_tokens`; 0 disables truncation.
    pub max_context_tokens: u64,
    pub session_idle_timeout: Duration,
    /// The agents of `agents:`, with their own proxy keys.
    pub agents: Vec<AgentIdentity>,
}

/// An agent the proxy tells apart: its name and its own key (empty: it has none and is known
/// only by the `x-metaclaw-agent` header).
#[derive(Clone, PartialEq)]
pub struct AgentIdentity {
    pub name: String,
    pub key: String,
}

impl std::fmt::Debug for AgentIdentity {
    // The key is a secret: never in a log line.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AgentIdentity")
            .field("name", &self.name)
            .field("has_key", &!self.key.is_empty())
            .finish()
    }
}

#[derive(Debug, Clone, PartialEq)]
pub struct UpstreamSettings {
    /// The API the upstream speaks: Anthropic only for `llm.provider: anthropic`.
    pub dialect: Dialect,
    /// `llm.api_base` without a trailing slash.
    pub api_base: String,
    /// `llm.api_key`; empty means the client's own credentials are passed through.
    pub api_key: String,
    /// `llm.oauth_token`: a subscription token sent as a bearer when there is no api key.
    pub oauth_token: String,
    /// `llm.auth_method: passthrough`: the caller's credential goes upstream untouched.
    pub passthrough: bool,
    pub timeout: Duration,
    /// Whether `/v1/responses` is forwarded as is (`llm.responses_api`, by provider when
    /// `auto`); otherwise it is translated to chat completions.
    pub responses: bool,
}

impl UpstreamSettings {
    pub fn chat_url(&self) -> String {
        format!("{}/chat/completions", self.api_base)
    }

    pub fn responses_url(&self) -> String {
        format!("{}/responses", self.api_base)
    }

    pub fn count_tokens_url(&self) -> String {
        format!("{}/count_tokens", self.messages_url())
    }

    /// Anthropic bases are given with or without `/v1`; accept both.
    pub fn messages_url(&self) -> String {
        if self.api_base.ends_with("/v1") {
            format!("{}/messages", self.api_base)
        } else {
            format!("{}/v1/messages", self.api_base)
        }
    }

    pub fn is_openrouter(&self) -> bool {
        self.api_base.contains("openrouter.ai")
    }
}

impl ProxySettings {
    pub fn from_config(config: &metaclaw_config::Config) -> Self {
        let dialect = match config.llm.provider {
            metaclaw_config::LlmProvider::Anthropic => Dialect::Anthropic,
            _ => Dialect::OpenAi,
        };
        let model = config.llm.model_id.trim();
        Self {
            api_key: config.proxy.api_key.clone(),
            max_body_bytes: config.proxy.max_body_bytes,
            upstream: UpstreamSettings {
                dialect,
                api_base: config.llm.api_base.trim_end_matches('/').to_owned(),
                api_key: config.llm.api_key.clone(),
                oauth_token: config.llm.oauth_token.trim().to_owned(),
                passthrough: config.llm.auth_method == metaclaw_config::AuthMethod::Passthrough,
                timeout: Duration::from_secs(config.llm.timeout_seconds.max(1)),
                responses: config.llm.upstream_has_responses(),
            },
            model_override: (!model.is_empty()).then(|| model.to_owned()),
            served_model: config.served_model().to_owned(),
            max_context_tokens: config.max_context_tokens,
            session_idle_timeout: Duration::from_secs(config.session.idle_timeout.max(1)),
            agents: config
                .agents
                .iter()
                .map(|(name, a)| AgentIdentity {
                    name: name.clone(),
                    key: a.api_key.trim().to_owned(),
                })
                .collect(),
        }
    }

    /// The agent whose own key `key` is.
    pub fn agent_for_key(&self, key: &str) -> Option<&str> {
        if key.is_empty() {
            return None;
        }
        self.agents
            .iter()
            .find(|a| {
                !a.key.is_empty() && crate::auth::constant_time_eq(a.key.as_bytes(), key.as_bytes())
            })
            .map(|a| a.name.as_str())
    }

    /// Pass-through mode: `llm.auth_method: passthrough`, or (as before it existed) no
    /// stored upstream credential and no proxy key, so the client's own credentials are the
    /// upstream's.
    pub fn pass_through_auth(&self) -> bool {
        self.upstream.passthrough
            || (self.upstream.api_key.is_empty()
                && self.upstream.oauth_token.is_empty()
                && self.api_key.is_empty())
    }
}
