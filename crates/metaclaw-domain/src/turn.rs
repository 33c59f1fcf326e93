use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// The wire API a client (or an upstream) speaks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Dialect {
    OpenAi,
    Anthropic,
}

impl Dialect {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::OpenAi => "openai",
            Self::Anthropic => "anthropic",
        }
    }
}

/// `main` turns are the user's conversation (skills injected, trainable); `side` turns are
/// the agent's housekeeping (titles, summaries, heartbeats).
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default, schemars::JsonSchema,
)]
#[serde(rename_all = "snake_case")]
pub enum TurnType {
    #[default]
    Main,
    Side,
}

impl TurnType {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Main => "main",
            Self::Side => "side",
        }
    }
}

/// How the session id of a turn was found.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum SessionSource {
    Header,
    Body,
    PromptCacheKey,
    /// OpenClaw's `Runtime: … sessionId=<uuid>` line.
    AgentRuntime,
    Heuristic,
}

impl SessionSource {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Header => "header",
            Self::Body => "body",
            Self::PromptCacheKey => "prompt_cache_key",
            Self::AgentRuntime => "agent_runtime",
            Self::Heuristic => "heuristic",
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum TurnStatus {
    /// The upstream answered and the client received all of it.
    Ok,
    /// The upstream answered with an HTTP error, passed on to the client.
    UpstreamError,
    /// The upstream could not be reached or timed out before answering.
    UpstreamUnreachable,
    /// The upstream stream broke off midway.
    StreamBroken,
    /// The client went away before the response ended.
    ClientAborted,
}

impl TurnStatus {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Ok => "ok",
            Self::UpstreamError => "upstream_error",
            Self::UpstreamUnreachable => "upstream_unreachable",
            Self::StreamBroken => "stream_broken",
            Self::ClientAborted => "client_aborted",
        }
    }
}

#[derive(
    Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema,
)]
pub struct Usage {
    pub input_tokens: Option<u64>,
    pub output_tokens: Option<u64>,
}

/// One request/response exchange, as the proxy saw it, ready to be logged.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct TurnRecord {
    pub turn_id: String,
    pub session_id: String,
    pub session_source: SessionSource,
    pub turn_type: TurnType,
    /// The API the client used.
    pub api: Dialect,
    pub stream: bool,
    pub model: Option<String>,
    /// The body as forwarded upstream (after injection and truncation), in the client's dialect.
    pub request: Value,
    /// The assembled response in the client's dialect; `None` when nothing usable came back.
    pub response: Option<Value>,
    pub status: TurnStatus,
    pub http_status: u16,
    pub error: Option<String>,
    pub usage: Usage,
    pub started_at: DateTime<Utc>,
    pub latency_ms: f64,
    /// Time to the first byte of the upstream body.
    pub ttfb_ms: Option<f64>,
    /// What the before-forward hooks added (e.g. injected skills with versions and scores).
    pub injected: Value,
    /// The skill generation (a counter the store bumps on every skill change) whose skills
    /// were available when this turn was served; `None` when unknown.
    #[serde(default)]
    pub skill_generation: Option<u64>,
    /// The agent that sent it: the one whose proxy key (or `x-metaclaw-agent` header) came
    /// with the request, [`DEFAULT_AGENT`] otherwise.
    #[serde(default = "default_agent")]
    pub agent: String,
}

/// The agent of requests that name none (the shared `proxy.api_key`, or no key).
pub const DEFAULT_AGENT: &str = "default";

fn default_agent() -> String {
    DEFAULT_AGENT.to_owned()
}

impl TurnRecord {
    /// A successful, non-streamed OpenAI main turn whose only message is the user's `text`,
    /// with no response: the base that tests, seeds and generators override with `..`.
    pub fn minimal(
        session_id: &str,
        turn_id: &str,
        text: &str,
        started_at: DateTime<Utc>,
    ) -> TurnRecord {
        TurnRecord {
            turn_id: turn_id.to_owned(),
            session_id: session_id.to_owned(),
            session_source: SessionSource::Header,
            turn_type: TurnType::Main,
            api: Dialect::OpenAi,
            stream: false,
            model: Some("m".to_owned()),
            request: serde_json::json!({"messages": [{"role": "user", "content": text}]}),
            response: None,
            status: TurnStatus::Ok,
            http_status: 200,
            error: None,
            usage: Usage::default(),
            started_at,
            latency_ms: 1.0,
            ttfb_ms: None,
            injected: Value::Array(Vec::new()),
            skill_generation: None,
            agent: DEFAULT_AGENT.to_owned(),
        }
    }
}
