//! Everything the proxy does with an upstream answer's bytes, in one synchronous call for the
//! `sse_capture` fuzz target and the robustness tests: the same functions `forward` and `turn`
//! run, without a network or a turn guard.

use std::convert::Infallible;

use bytes::{Bytes, BytesMut};
use eventsource_stream::Eventsource;
use futures_util::{FutureExt, StreamExt};
use metaclaw_domain::Dialect;
use serde_json::{Map, Value};

use crate::anthropic::stream::{AnthropicEncoder, Relayed};
use crate::anthropic::translate::{request_to_openai, response_to_anthropic};
use crate::capture::{Assembled, assemble, assemble_responses};
use crate::responses::response_from_chat;
use crate::responses::stream::ResponsesEncoder;
use crate::responses::translate::response_to_chat;

/// What the proxy made of one upstream answer.
#[derive(Debug, Default)]
pub struct UpstreamExercise {
    /// `(event, data)` of the SSE events parsed from the chunked body, as `forward` sees them.
    pub chunked_events: Vec<(String, String)>,
    /// The same events parsed from the body in one piece, as the turn log's capture sees them;
    /// `None` when the body is not UTF-8 (the chunked parse then stops at the bad chunk).
    pub whole_events: Option<Vec<(String, String)>>,
    /// The OpenAI stream re-encoded for an Anthropic client.
    pub translated: Bytes,
    /// The body captured as an OpenAI stream, as an Anthropic stream, and the re-encoded stream
    /// captured as Anthropic.
    pub captured_openai: Assembled,
    pub captured_anthropic: Assembled,
    pub captured_translated: Assembled,
    /// The OpenAI stream re-encoded for a Responses client.
    pub translated_responses: Bytes,
    /// The body captured as a Responses stream, and the re-encoded Responses stream captured.
    pub captured_responses: Assembled,
    pub captured_translated_responses: Assembled,
}

/// Run the upstream body, split into `chunks` as the network delivered it, through SSE parsing,
/// the OpenAI→Anthropic and OpenAI→Responses stream re-encoders and capture (streamed and whole), and through the
/// request and response translators when it is one JSON value. Never panics.
#[doc(hidden)]
pub fn exercise_upstream(chunks: &[&[u8]], model: &str) -> UpstreamExercise {
    let whole = Bytes::from(chunks.concat());
    let chunked_events = parse_events(chunks.iter().map(|c| Bytes::copy_from_slice(c)));
    let whole_events = std::str::from_utf8(&whole)
        .is_ok()
        .then(|| parse_events(std::iter::once(whole.clone())));

    // As `forward::translated`: event by event until `[DONE]`, an error chunk or a parse error.
    let mut encoder = AnthropicEncoder::new(model);
    let mut out = BytesMut::new();
    let mut ended = false;
    for event in &chunked_events {
        match event {
            Ok((_, data)) => {
                if encoder.event(data, &mut out) != Relayed::More {
                    ended = true;
                    break;
                }
            }
            Err(message) => {
                encoder.fail("api_error", message, &mut out);
                ended = true;
                break;
            }
        }
    }
    if !ended {
        encoder.finish(&mut out);
    }
    let translated = out.freeze();

    // As `forward::translated` for a Responses client.
    let mut responses = ResponsesEncoder::new(&Map::new(), model, 0);
    let mut out = BytesMut::new();
    let mut ended = false;
    for event in &chunked_events {
        match event {
            Ok((_, data)) => {
                if responses.event(data, &mut out) != Relayed::More {
                    ended = true;
                    break;
                }
            }
            Err(message) => {
                responses.fail(message, &mut out);
                ended = true;
                break;
            }
        }
    }
    if !ended {
        responses.finish(&mut out);
    }
    let translated_responses = out.freeze();

    if let Ok(value) = serde_json::from_slice::<Value>(&whole) {
        let _ = response_to_anthropic(&value, model);
        let _ = response_to_chat(&value);
        if let Value::Object(map) = &value {
            let _ = request_to_openai(map);
            let _ = response_from_chat(&value, map, model, 0);
        }
    }
    let capture = |dialect, stream, bytes| {
        assemble(dialect, stream, bytes)
            .now_or_never()
            .unwrap_or_default()
    };
    let _ = capture(Dialect::OpenAi, false, whole.clone());
    UpstreamExercise {
        chunked_events: chunked_events.into_iter().map_while(Result::ok).collect(),
        whole_events: whole_events.map(|events| events.into_iter().map_while(Result::ok).collect()),
        captured_openai: capture(Dialect::OpenAi, true, whole.clone()),
        captured_anthropic: capture(Dialect::Anthropic, true, whole.clone()),
        captured_translated: capture(Dialect::Anthropic, true, translated.clone()),
        captured_responses: assemble_responses(true, whole)
            .now_or_never()
            .unwrap_or_default(),
        captured_translated_responses: assemble_responses(true, translated_responses.clone())
            .now_or_never()
            .unwrap_or_default(),
        translated,
        translated_responses,
    }
}

/// SSE events from a byte stream; an error ends the list, as it ends a relayed stream.
fn parse_events(chunks: impl Iterator<Item = Bytes>) -> Vec<Result<(String, String), String>> {
    let mut events = Vec::new();
    let stream = futures_util::stream::iter(chunks.map(Ok::<_, Infallible>)).eventsource();
    let collected: Vec<_> = stream
        .collect::<Vec<_>>()
        .now_or_never()
        .unwrap_or_default();
    for event in collected {
        match event {
            Ok(e) => events.push(Ok((e.event, e.data))),
            Err(e) => {
                events.push(Err(format!("the upstream stream broke off: {e}")));
                break;
            }
        }
    }
    events
}
