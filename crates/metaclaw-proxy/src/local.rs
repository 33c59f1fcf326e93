//! Models the daemon serves itself (the RL policy) instead of forwarding upstream.
//!
//! A local model answers with one complete OpenAI `chat.completion`; this module turns it
//! into whatever the client asked for: chat completions, Anthropic Messages or Responses,
//! whole or as a well-formed SSE sequence. One mechanism for all: streams are OpenAI chunks,
//! re-encoded for the other APIs by the same encoders that translate upstream streams.

use std::future::Future;
use std::pin::Pin;

use bytes::{Bytes, BytesMut};
use serde_json::{Map, Value, json};

use crate::anthropic::stream::AnthropicEncoder;
use crate::anthropic::translate;
use crate::error::ProxyError;
use crate::hooks::{ClientApi, TurnContext};
use crate::reencode::Reencode;
use crate::responses::{self, stream::ResponsesEncoder};

/// Why a local model could not answer.
#[derive(Debug, Clone, thiserror::Error)]
pub enum LocalError {
    /// The request cannot be served by this model (e.g. an image part): the client's fault.
    #[error("{0}")]
    BadRequest(String),
    /// The model is not ready (loading, no sampler yet).
    #[error("{0}")]
    Unavailable(String),
    /// Sampling failed.
    #[error("{0}")]
    Failed(String),
}

impl From<LocalError> for ProxyError {
    fn from(e: LocalError) -> Self {
        match e {
            LocalError::BadRequest(m) => ProxyError::bad_request(m),
            LocalError::Unavailable(m) => ProxyError::ModelUnavailable(m),
            LocalError::Failed(m) => ProxyError::ModelFailed(m),
        }
    }
}

pub type LocalFuture<'a> = Pin<Box<dyn Future<Output = Result<Value, LocalError>> + Send + 'a>>;

/// A model served in-process.
pub trait LocalModel: Send + Sync + 'static {
    /// Whether this turn goes to the local model (checked per request, so switching modes
    /// at run time needs no restart).
    fn serves(&self, ctx: &TurnContext) -> bool;

    /// Answers an OpenAI-shaped chat request with a complete `chat.completion` object.
    fn complete<'a>(&'a self, ctx: &'a TurnContext, request: Map<String, Value>)
    -> LocalFuture<'a>;
}

/// The request in OpenAI shape, whatever the client sent.
pub(crate) fn openai_request(api: ClientApi, body: &Map<String, Value>) -> Map<String, Value> {
    match api {
        ClientApi::ChatCompletions => body.clone(),
        ClientApi::Messages => translate::request_to_openai(body),
        ClientApi::Responses => responses::translate::request_to_chat(body),
    }
}

/// How a local completion is shaped for the client.
pub(crate) struct Shape {
    pub api: ClientApi,
    pub model: String,
    /// Chat completions: the client asked for a usage chunk.
    pub include_usage: bool,
    /// Responses: the request, which the response object echoes.
    pub responses_request: Option<Map<String, Value>>,
    pub created_at: i64,
}

impl Shape {
    fn encoder(&self) -> Option<Box<dyn Reencode>> {
        match self.api {
            ClientApi::ChatCompletions => None,
            ClientApi::Messages => Some(Box::new(AnthropicEncoder::new(&self.model))),
            ClientApi::Responses => Some(Box::new(ResponsesEncoder::new(
                self.responses_request.as_ref().unwrap_or(&Map::new()),
                &self.model,
                self.created_at,
            ))),
        }
    }

    /// The completion as a non-streamed body in the client's API.
    pub fn whole(&self, completion: &Value) -> Bytes {
        let body = match self.api {
            ClientApi::ChatCompletions => return Bytes::from(completion.to_string()),
            ClientApi::Messages => translate::response_to_anthropic(completion, &self.model),
            ClientApi::Responses => responses::response_from_chat(
                completion,
                self.responses_request.as_ref().unwrap_or(&Map::new()),
                &self.model,
                self.created_at,
            ),
        };
        Bytes::from(body.to_string())
    }

    /// The completion as SSE events in the client's API, one `Bytes` per event.
    pub fn events(&self, completion: &Value) -> Vec<Bytes> {
        let Some(mut enc) = self.encoder() else {
            return chunks(completion, self.include_usage)
                .iter()
                .map(|c| Bytes::from(format!("data: {c}\n\n")))
                .chain(std::iter::once(Bytes::from_static(b"data: [DONE]\n\n")))
                .collect();
        };
        let mut out = Vec::new();
        for c in chunks(completion, true) {
            let mut buf = BytesMut::new();
            enc.on_event(&c.to_string(), &mut buf);
            if !buf.is_empty() {
                out.push(buf.freeze());
            }
        }
        let mut buf = BytesMut::new();
        enc.on_end(&mut buf);
        out.push(buf.freeze());
        out
    }
}

/// OpenAI `chat.completion.chunk`s carrying the completion: role, reasoning, content, each
/// tool call (with its `index`, which strict stream parsers need), the finish reason, and
/// usage when asked for.
pub(crate) fn chunks(completion: &Value, include_usage: bool) -> Vec<Value> {
    let base = |choices: Value| {
        json!({
            "id": completion.get("id").cloned().unwrap_or(Value::Null),
            "object": "chat.completion.chunk",
            "created": completion.get("created").cloned().unwrap_or(json!(0)),
            "model": completion.get("model").cloned().unwrap_or(Value::Null),
            "choices": choices,
        })
    };
    let delta = |d: Value| base(json!([{"index": 0, "delta": d, "finish_reason": null}]));
    let message = completion
        .pointer("/choices/0/message")
        .cloned()
        .unwrap_or(Value::Null);
    let mut out = vec![delta(json!({"role": "assistant", "content": ""}))];
    if let Some(r) = message
        .get("reasoning_content")
        .and_then(Value::as_str)
        .filter(|s| !s.is_empty())
    {
        out.push(delta(json!({"reasoning_content": r})));
    }
    if let Some(c) = message
        .get("content")
        .and_then(Value::as_str)
        .filter(|s| !s.is_empty())
    {
        out.push(delta(json!({"content": c})));
    }
    if let Some(calls) = message.get("tool_calls").and_then(Value::as_array) {
        for (i, call) in calls.iter().enumerate() {
            let mut call = call.clone();
            if let Some(obj) = call.as_object_mut() {
                obj.insert("index".into(), json!(i));
            }
            out.push(delta(json!({"tool_calls": [call]})));
        }
    }
    let finish = completion
        .pointer("/choices/0/finish_reason")
        .cloned()
        .unwrap_or(json!("stop"));
    out.push(base(
        json!([{"index": 0, "delta": {}, "finish_reason": finish}]),
    ));
    if include_usage && let Some(usage) = completion.get("usage") {
        let mut last = base(json!([]));
        last["usage"] = usage.clone();
        out.push(last);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn completion() -> Value {
        json!({
            "id": "chatcmpl-1", "object": "chat.completion", "created": 5, "model": "m",
            "choices": [{"index": 0, "finish_reason": "tool_calls", "message": {
                "role": "assistant", "content": "Looking.", "reasoning_content": "think",
                "tool_calls": [
                    {"id": "call_0", "type": "function", "function": {"name": "read", "arguments": "{\"p\":1}"}},
                    {"id": "call_1", "type": "function", "function": {"name": "exec", "arguments": "{}"}}
                ]}}],
            "usage": {"prompt_tokens": 10, "completion_tokens": 4, "total_tokens": 14}
        })
    }

    fn shape(api: ClientApi, include_usage: bool) -> Shape {
        Shape {
            api,
            model: "m".into(),
            include_usage,
            responses_request: None,
            created_at: 0,
        }
    }

    #[tokio::test]
    async fn openai_stream_reassembles_to_the_completion() {
        let events = shape(ClientApi::ChatCompletions, true).events(&completion());
        let bytes: Vec<u8> = events.iter().flat_map(|b| b.to_vec()).collect();
        let text = String::from_utf8(bytes).unwrap();
        assert!(text.ends_with("data: [DONE]\n\n"));
        let assembled =
            crate::capture::assemble(metaclaw_domain::Dialect::OpenAi, true, Bytes::from(text))
                .await;
        let msg = &assembled.response.as_ref().unwrap()["choices"][0]["message"];
        assert_eq!(msg["content"], "Looking.");
        assert_eq!(msg["reasoning_content"], "think");
        assert_eq!(msg["tool_calls"][1]["function"]["name"], "exec");
        assert_eq!(msg["tool_calls"][0]["function"]["arguments"], "{\"p\":1}");
        let chunks = chunks(&completion(), true);
        assert_eq!(
            chunks[3]["choices"][0]["delta"]["tool_calls"][0]["index"],
            0
        );
        assert_eq!(
            chunks[4]["choices"][0]["delta"]["tool_calls"][0]["index"],
            1
        );
        assert_eq!(chunks.last().unwrap()["usage"]["completion_tokens"], 4);
    }

    #[test]
    fn usage_chunk_only_when_asked() {
        let c = chunks(&completion(), false);
        assert!(c.iter().all(|c| c.get("usage").is_none()));
        assert_eq!(
            c.last().unwrap()["choices"][0]["finish_reason"],
            "tool_calls"
        );
    }

    #[test]
    fn anthropic_stream_has_the_event_sequence() {
        let events = shape(ClientApi::Messages, false).events(&completion());
        let text: String = events
            .iter()
            .map(|b| String::from_utf8(b.to_vec()).unwrap())
            .collect();
        let names: Vec<&str> = text
            .lines()
            .filter_map(|l| l.strip_prefix("event: "))
            .collect();
        assert_eq!(names.first(), Some(&"message_start"));
        assert_eq!(names.last(), Some(&"message_stop"));
        assert!(names.contains(&"content_block_start"));
        assert!(text.contains("thinking_delta"));
        assert!(text.contains("\"tool_use\""));
        assert!(text.contains("\"stop_reason\":\"tool_use\""));
        assert!(text.contains("\"output_tokens\":4"));
    }

    #[tokio::test]
    async fn responses_stream_carries_text_and_both_calls() {
        let events = shape(ClientApi::Responses, false).events(&completion());
        let text: String = events
            .iter()
            .map(|b| String::from_utf8(b.to_vec()).unwrap())
            .collect();
        let a = crate::capture::assemble_responses(true, Bytes::from(text)).await;
        let r = a.response.unwrap();
        assert_eq!(r["status"], "completed");
        assert_eq!(r["output"][0]["content"][0]["text"], "Looking.");
        assert_eq!(r["output"][2]["name"], "exec");
        assert_eq!(a.usage.output_tokens, Some(4));
    }
}
