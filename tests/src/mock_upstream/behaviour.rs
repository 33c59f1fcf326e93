//! Scripted behaviours of the mock upstream, in the JSON form accepted by `POST /_mock/script`.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// One function/tool call the mock should emit.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Eq)]
pub struct ToolCallSpec {
    pub name: String,
    /// The arguments as a JSON *string* (OpenAI style). Anthropic replies parse it into `input`
    /// (falling back to `{}` when it is not a JSON object).
    pub arguments: String,
}

/// What the mock does for one request to `/v1/chat/completions` or `/v1/messages`.
///
/// Behaviours are queued FIFO and each LLM request consumes one; with an empty queue the mock
/// answers with [`Behaviour::default_reply`]: `"mock reply: <first 40 chars of last user text>"`.
///
/// JSON forms (`kind` tag):
/// - `{"kind":"reply","text":"hi"}`
/// - `{"kind":"reasoning","reasoning":"thinking...","text":"answer"}`
/// - `{"kind":"tool_call","name":"read","arguments":"{\"path\":\"a\"}","text":null}`
/// - `{"kind":"tool_calls","calls":[{"name":"a","arguments":"{}"},...],"text":null}`
/// - `{"kind":"error","status":429,"body":{...}?,"headers":{"retry-after":"1"}?}` — body defaults
///   to the error shape of the endpoint's API (OpenAI `{"error":{..}}`, Anthropic `{"type":"error",..}`)
/// - `{"kind":"delay_ms","ms":5000,"then":{...}?}` — sleep before sending headers
/// - `{"kind":"hang"}` — never answer (until the client leaves or the mock stops)
/// - `{"kind":"reset_mid_stream","after_events":3}` — send that many SSE events, then abort the
///   connection (non-stream: half of the JSON body, then abort)
/// - `{"kind":"slow_stream","events":20,"interval_ms":50,"text":null}` — `events` content deltas,
///   one per interval; default text is `"w0 w1 w2 ... w{events-1} "` (one word per delta)
/// - `{"kind":"stream_error","after_events":2,"status":529?,"message":"..."?}` — a well-formed
///   in-stream error event (OpenAI `data: {"error":..}`, Anthropic `event: error`) after N events;
///   non-stream requests get an HTTP error with that status
/// - `{"kind":"match","contains":"foo"?,"path":"/v1/embeddings"?,"then":{...}}` — only consumed
///   by a request whose last user text contains `contains` and whose path equals `path`
///   (default: the two LLM endpoints). Non-matching requests skip it and use the next entry.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Behaviour {
    Reply {
        text: String,
    },
    Reasoning {
        reasoning: String,
        text: String,
    },
    ToolCall {
        name: String,
        arguments: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        text: Option<String>,
    },
    ToolCalls {
        calls: Vec<ToolCallSpec>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        text: Option<String>,
    },
    Error {
        status: u16,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        body: Option<Value>,
        #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
        headers: BTreeMap<String, String>,
    },
    /// An error a real provider sent (`tests/fixtures/upstream_errors.json`), as it was.
    Recorded {
        provider: String,
        status: u16,
    },
    DelayMs {
        ms: u64,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        then: Option<Box<Behaviour>>,
    },
    Hang,
    ResetMidStream {
        after_events: usize,
    },
    SlowStream {
        events: usize,
        interval_ms: u64,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        text: Option<String>,
    },
    StreamError {
        after_events: usize,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        status: Option<u16>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        message: Option<String>,
    },
    Match {
        #[serde(default, skip_serializing_if = "Option::is_none")]
        contains: Option<String>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        path: Option<String>,
        then: Box<Behaviour>,
    },
}

impl Behaviour {
    pub fn reply(text: impl Into<String>) -> Self {
        Self::Reply { text: text.into() }
    }

    pub fn reasoning(reasoning: impl Into<String>, text: impl Into<String>) -> Self {
        Self::Reasoning {
            reasoning: reasoning.into(),
            text: text.into(),
        }
    }

    pub fn tool_call(name: impl Into<String>, arguments: impl Into<String>) -> Self {
        Self::ToolCall {
            name: name.into(),
            arguments: arguments.into(),
            text: None,
        }
    }

    pub fn error(status: u16) -> Self {
        Self::Error {
            status,
            body: None,
            headers: BTreeMap::new(),
        }
    }

    pub fn error_with(status: u16, body: Value, headers: &[(&str, &str)]) -> Self {
        Self::Error {
            status,
            body: Some(body),
            headers: headers
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect(),
        }
    }

    /// The error `provider` really sent with `status` (see `mock_upstream::recorded`).
    pub fn recorded(provider: impl Into<String>, status: u16) -> Self {
        Self::Recorded {
            provider: provider.into(),
            status,
        }
    }

    /// Replaces each `Recorded` with the `Error` it stands for; an unknown recording is an
    /// error, so a script cannot silently fall back to something else.
    pub(crate) fn resolve(self) -> Result<Self, String> {
        Ok(match self {
            Self::Recorded { provider, status } => {
                let r = super::recorded::find(&provider, status).ok_or_else(|| {
                    format!("no recorded {status} response of {provider:?} in tests/fixtures/upstream_errors.json")
                })?;
                Self::Error {
                    status,
                    body: Some(r.body.clone()),
                    headers: r.headers.clone(),
                }
            }
            Self::DelayMs { ms, then } => Self::DelayMs {
                ms,
                then: then.map(|b| b.resolve().map(Box::new)).transpose()?,
            },
            Self::Match {
                contains,
                path,
                then,
            } => Self::Match {
                contains,
                path,
                then: Box::new(then.resolve()?),
            },
            other => other,
        })
    }

    pub fn delay(ms: u64, then: Behaviour) -> Self {
        Self::DelayMs {
            ms,
            then: Some(Box::new(then)),
        }
    }

    pub fn reset_mid_stream(after_events: usize) -> Self {
        Self::ResetMidStream { after_events }
    }

    pub fn slow_stream(events: usize, interval_ms: u64) -> Self {
        Self::SlowStream {
            events,
            interval_ms,
            text: None,
        }
    }

    pub fn when_contains(needle: impl Into<String>, then: Behaviour) -> Self {
        Self::Match {
            contains: Some(needle.into()),
            path: None,
            then: Box::new(then),
        }
    }

    /// The text the mock answers with when no behaviour is queued.
    pub fn default_reply_text(last_user_text: &str) -> String {
        let head: String = last_user_text.chars().take(40).collect();
        format!("mock reply: {head}")
    }

    /// The default text of a `slow_stream` without `text`: `"w0 w1 ... w{n-1} "`.
    pub fn slow_stream_text(events: usize) -> String {
        (0..events).map(|i| format!("w{i} ")).collect()
    }

    /// Whether this queued entry may be consumed by a request to `path` with that last user text.
    pub(crate) fn applies(&self, path: &str, last_user_text: &str) -> bool {
        match self {
            Self::Match {
                contains, path: p, ..
            } => {
                let path_ok = match p {
                    Some(p) => p == path,
                    None => is_llm_path(path),
                };
                path_ok
                    && contains
                        .as_deref()
                        .is_none_or(|c| last_user_text.contains(c))
            }
            _ => is_llm_path(path),
        }
    }

    /// Strips `match` wrappers.
    pub(crate) fn unwrap_match(self) -> Self {
        match self {
            Self::Match { then, .. } => then.unwrap_match(),
            other => other,
        }
    }
}

pub(crate) fn is_llm_path(path: &str) -> bool {
    matches!(
        path,
        "/v1/chat/completions" | "/v1/messages" | "/v1/responses"
    )
}
