//! Assembling the response a client received into one JSON value for the turn log.
//! Runs off the request path, after the response has ended.

use std::collections::BTreeMap;
use std::convert::Infallible;

use bytes::Bytes;
use eventsource_stream::Eventsource;
use futures_util::StreamExt;
use metaclaw_domain::{Dialect, Usage};
use serde_json::{Map, Value, json};

/// What came out of parsing a captured response.
#[derive(Debug, Default, PartialEq)]
pub struct Assembled {
    pub response: Option<Value>,
    pub usage: Usage,
    /// An error event found inside an otherwise successful stream.
    pub stream_error: Option<String>,
}

impl Assembled {
    /// A response that was not streamed: no stream error can hide inside it.
    fn whole(response: Option<Value>, usage: Usage) -> Assembled {
        Assembled {
            response,
            usage,
            stream_error: None,
        }
    }
}

/// The (event, data) pairs of a captured server-sent event stream; malformed events are
/// passed over.
async fn sse_events(bytes: Bytes) -> Vec<(String, String)> {
    futures_util::stream::iter([Ok::<_, Infallible>(bytes)])
        .eventsource()
        .filter_map(|e| async move { e.ok().map(|e| (e.event, e.data)) })
        .collect()
        .await
}

pub async fn assemble(dialect: Dialect, stream: bool, bytes: Bytes) -> Assembled {
    if !stream {
        let response = serde_json::from_slice::<Value>(&bytes).ok();
        let usage = response
            .as_ref()
            .map(|r| usage_of(dialect, r))
            .unwrap_or_default();
        return Assembled::whole(response, usage);
    }
    let events = sse_events(bytes).await;
    match dialect {
        Dialect::OpenAi => assemble_openai(&events),
        Dialect::Anthropic => assemble_anthropic(&events),
    }
}

/// A captured Responses API answer (streamed or whole), as the `response` object it carried.
pub async fn assemble_responses(stream: bool, bytes: Bytes) -> Assembled {
    if !stream {
        let response = serde_json::from_slice::<Value>(&bytes).ok();
        let usage = response.as_ref().map(responses_usage).unwrap_or_default();
        return Assembled::whole(response, usage);
    }
    let events = sse_events(bytes).await;
    let mut base: Option<Value> = None;
    let mut items: BTreeMap<u64, Value> = BTreeMap::new();
    let mut last: Option<Value> = None;
    let mut stream_error = None;
    for (_, data) in &events {
        let Ok(ev) = serde_json::from_str::<Value>(data) else {
            continue;
        };
        let response = ev.get("response").filter(|r| r.is_object());
        match ev.get("type").and_then(Value::as_str) {
            Some("response.created") => base = response.cloned(),
            Some("response.output_item.done") => {
                let index = ev.get("output_index").and_then(Value::as_u64).unwrap_or(0);
                if let Some(item) = ev.get("item").filter(|i| i.is_object()) {
                    items.insert(index, item.clone());
                }
            }
            Some("response.completed" | "response.incomplete") => last = response.cloned(),
            Some("response.failed") => {
                stream_error = response
                    .and_then(|r| r.pointer("/error/message"))
                    .and_then(Value::as_str)
                    .map(str::to_owned)
                    .or(stream_error);
                last = response.cloned();
            }
            Some("error") => {
                stream_error = ev
                    .get("message")
                    .and_then(Value::as_str)
                    .map(str::to_owned)
                    .or_else(|| error_message(&ev));
            }
            _ => {}
        }
    }
    // A stream cut before its terminal event: what was finished so far.
    let response = last.or_else(|| {
        base.map(|mut b| {
            b["output"] = Value::Array(items.into_values().collect());
            b
        })
    });
    let usage = response.as_ref().map(responses_usage).unwrap_or_default();
    Assembled {
        response,
        usage,
        stream_error,
    }
}

fn responses_usage(v: &Value) -> Usage {
    let u = v.get("usage");
    let get = |key: &str| u.and_then(|u| u.get(key)).and_then(Value::as_u64);
    Usage {
        input_tokens: get("input_tokens"),
        output_tokens: get("output_tokens"),
    }
}

fn usage_of(dialect: Dialect, v: &Value) -> Usage {
    let Some(u) = v.get("usage").filter(|u| u.is_object()) else {
        return Usage::default();
    };
    let (input, output) = match dialect {
        Dialect::OpenAi => ("prompt_tokens", "completion_tokens"),
        Dialect::Anthropic => ("input_tokens", "output_tokens"),
    };
    Usage {
        input_tokens: u.get(input).and_then(Value::as_u64),
        output_tokens: u.get(output).and_then(Value::as_u64),
    }
}

fn error_message(v: &Value) -> Option<String> {
    let e = v.get("error")?;
    Some(
        e.get("message")
            .and_then(Value::as_str)
            .map_or_else(|| e.to_string(), str::to_owned),
    )
}

fn assemble_openai(events: &[(String, String)]) -> Assembled {
    let mut id = Value::Null;
    let mut model = Value::Null;
    let mut content = String::new();
    let mut reasoning = String::new();
    // Keyed by the upstream's tool-call index: a sparse map, so a hostile index such as
    // 4000000000 costs one entry instead of billions of empty calls.
    let mut calls: BTreeMap<u64, Map<String, Value>> = BTreeMap::new();
    let mut finish = Value::Null;
    let mut usage_value = Value::Null;
    let mut stream_error = None;
    for (_, data) in events {
        if data.trim() == "[DONE]" {
            continue;
        }
        let Ok(chunk) = serde_json::from_str::<Value>(data) else {
            continue;
        };
        if let Some(msg) = error_message(&chunk) {
            stream_error = Some(msg);
            continue;
        }
        if id.is_null() {
            id = chunk.get("id").cloned().unwrap_or(Value::Null);
            model = chunk.get("model").cloned().unwrap_or(Value::Null);
        }
        if chunk.get("usage").is_some_and(Value::is_object) {
            usage_value = chunk["usage"].clone();
        }
        let Some(choice) = chunk.pointer("/choices/0") else {
            continue;
        };
        if let Some(f) = choice.get("finish_reason").filter(|f| !f.is_null()) {
            finish = f.clone();
        }
        let Some(delta) = choice.get("delta") else {
            continue;
        };
        if let Some(t) = delta.get("content").and_then(Value::as_str) {
            content.push_str(t);
        }
        if let Some(r) = delta
            .get("reasoning_content")
            .or_else(|| delta.get("reasoning"))
            .and_then(Value::as_str)
        {
            reasoning.push_str(r);
        }
        for c in delta
            .get("tool_calls")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
            let index = c.get("index").and_then(Value::as_u64).unwrap_or(0);
            let call = calls.entry(index).or_default();
            for key in ["id", "type"] {
                if let Some(v) = c.get(key).filter(|v| !v.is_null()) {
                    call.insert(key.into(), v.clone());
                }
            }
            let function = call
                .entry("function")
                .or_insert_with(|| json!({"name": "", "arguments": ""}));
            if let Some(name) = c.pointer("/function/name").and_then(Value::as_str) {
                let joined = format!("{}{name}", function["name"].as_str().unwrap_or(""));
                function["name"] = Value::String(joined);
            }
            if let Some(args) = c.pointer("/function/arguments").and_then(Value::as_str) {
                let joined = format!("{}{args}", function["arguments"].as_str().unwrap_or(""));
                function["arguments"] = Value::String(joined);
            }
        }
    }
    let mut message = Map::new();
    message.insert("role".into(), json!("assistant"));
    message.insert(
        "content".into(),
        if content.is_empty() && !calls.is_empty() {
            Value::Null
        } else {
            json!(content)
        },
    );
    if !reasoning.is_empty() {
        message.insert("reasoning_content".into(), json!(reasoning));
    }
    if !calls.is_empty() {
        message.insert(
            "tool_calls".into(),
            Value::Array(calls.into_values().map(Value::Object).collect()),
        );
    }
    let response = json!({
        "id": id, "object": "chat.completion", "model": model,
        "choices": [{"index": 0, "message": message, "finish_reason": finish}],
        "usage": usage_value,
    });
    let usage = usage_of(Dialect::OpenAi, &response);
    let empty = events.is_empty();
    Assembled {
        response: (!empty).then_some(response),
        usage,
        stream_error,
    }
}

fn assemble_anthropic(events: &[(String, String)]) -> Assembled {
    let mut message: Option<Value> = None;
    let mut blocks: Vec<Value> = Vec::new();
    let mut partial_json: Vec<String> = Vec::new();
    let mut stream_error = None;
    for (_, data) in events {
        let Ok(ev) = serde_json::from_str::<Value>(data) else {
            continue;
        };
        match ev.get("type").and_then(Value::as_str) {
            // Only objects are kept: indexing a number or string by key would panic.
            Some("message_start") => {
                message = ev.get("message").filter(|m| m.is_object()).cloned();
            }
            Some("content_block_start") => {
                let block = ev.get("content_block").filter(|b| b.is_object());
                blocks.push(block.cloned().unwrap_or(Value::Null));
                partial_json.push(String::new());
            }
            Some("content_block_delta") => {
                let index = ev.get("index").and_then(Value::as_u64).unwrap_or(0) as usize;
                let (Some(block), Some(delta)) = (blocks.get_mut(index), ev.get("delta")) else {
                    continue;
                };
                match delta.get("type").and_then(Value::as_str) {
                    Some("text_delta") => append(block, "text", delta.get("text")),
                    Some("thinking_delta") => append(block, "thinking", delta.get("thinking")),
                    Some("input_json_delta") => {
                        if let Some(p) = delta.get("partial_json").and_then(Value::as_str) {
                            partial_json[index].push_str(p);
                        }
                    }
                    _ => {}
                }
            }
            Some("message_delta") => {
                if let Some(m) = message.as_mut() {
                    if let Some(d) = ev.get("delta").and_then(Value::as_object) {
                        for (k, v) in d {
                            m[k] = v.clone();
                        }
                    }
                    if let Some(u) = ev.get("usage").and_then(Value::as_object) {
                        let usage = &mut m["usage"];
                        if !usage.is_object() {
                            *usage = json!({});
                        }
                        for (k, v) in u {
                            usage[k] = v.clone();
                        }
                    }
                }
            }
            Some("error") => stream_error = error_message(&ev),
            _ => {}
        }
    }
    for (block, json_text) in blocks.iter_mut().zip(&partial_json) {
        if !json_text.is_empty() {
            block["input"] = serde_json::from_str(json_text)
                .unwrap_or_else(|_| json!({"_raw_arguments": json_text}));
        }
    }
    let response = message.map(|mut m| {
        m["content"] = Value::Array(blocks);
        m
    });
    let usage = response
        .as_ref()
        .map(|r| usage_of(Dialect::Anthropic, r))
        .unwrap_or_default();
    Assembled {
        response,
        usage,
        stream_error,
    }
}

fn append(block: &mut Value, key: &str, piece: Option<&Value>) {
    if let Some(p) = piece.and_then(Value::as_str) {
        let joined = format!(
            "{}{p}",
            block.get(key).and_then(Value::as_str).unwrap_or("")
        );
        block[key] = Value::String(joined);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sse(events: &[(&str, Value)]) -> Bytes {
        let mut s = String::new();
        for (name, data) in events {
            if !name.is_empty() {
                s.push_str(&format!("event: {name}\n"));
            }
            s.push_str(&format!("data: {data}\n\n"));
        }
        Bytes::from(s)
    }

    #[tokio::test]
    async fn openai_stream_with_tool_calls_and_usage() {
        let mut bytes = sse(&[
            ("", json!({"id": "c1", "model": "m", "choices": [{"index": 0, "delta": {"role": "assistant", "content": "Hi "}}]})),
            ("", json!({"id": "c1", "choices": [{"index": 0, "delta": {"content": "there", "reasoning_content": "r"}}]})),
            ("", json!({"id": "c1", "choices": [{"index": 0, "delta": {"tool_calls": [{"index": 0, "id": "t1", "type": "function", "function": {"name": "read", "arguments": "{\"a\""}}]}}]})),
            ("", json!({"id": "c1", "choices": [{"index": 0, "delta": {"tool_calls": [{"index": 0, "function": {"arguments": ":1}"}}]}}]})),
            ("", json!({"id": "c1", "choices": [{"index": 0, "delta": {}, "finish_reason": "tool_calls"}]})),
            ("", json!({"id": "c1", "choices": [], "usage": {"prompt_tokens": 3, "completion_tokens": 7}})),
        ])
        .to_vec();
        bytes.extend_from_slice(b"data: [DONE]\n\n");
        let a = assemble(Dialect::OpenAi, true, Bytes::from(bytes)).await;
        let r = a.response.unwrap();
        assert_eq!(r["choices"][0]["message"]["content"], "Hi there");
        assert_eq!(r["choices"][0]["message"]["reasoning_content"], "r");
        assert_eq!(
            r["choices"][0]["message"]["tool_calls"][0]["function"]["arguments"],
            "{\"a\":1}"
        );
        assert_eq!(r["choices"][0]["finish_reason"], "tool_calls");
        assert_eq!(
            a.usage,
            Usage {
                input_tokens: Some(3),
                output_tokens: Some(7)
            }
        );
        assert_eq!(a.stream_error, None);
    }

    #[tokio::test]
    async fn openai_error_event_is_reported() {
        let bytes = sse(&[(
            "",
            json!({"error": {"message": "boom", "type": "api_error"}}),
        )]);
        let a = assemble(Dialect::OpenAi, true, bytes).await;
        assert_eq!(a.stream_error.as_deref(), Some("boom"));
    }

    #[tokio::test]
    async fn anthropic_stream_assembles_message() {
        let bytes = sse(&[
            (
                "message_start",
                json!({"type": "message_start", "message": {"id": "msg_1", "type": "message", "role": "assistant", "content": [], "model": "m", "usage": {"input_tokens": 5, "output_tokens": 0}}}),
            ),
            (
                "content_block_start",
                json!({"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}}),
            ),
            (
                "content_block_delta",
                json!({"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": "Hello"}}),
            ),
            (
                "content_block_stop",
                json!({"type": "content_block_stop", "index": 0}),
            ),
            (
                "content_block_start",
                json!({"type": "content_block_start", "index": 1, "content_block": {"type": "tool_use", "id": "t", "name": "read", "input": {}}}),
            ),
            (
                "content_block_delta",
                json!({"type": "content_block_delta", "index": 1, "delta": {"type": "input_json_delta", "partial_json": "{\"p\": 2}"}}),
            ),
            (
                "message_delta",
                json!({"type": "message_delta", "delta": {"stop_reason": "tool_use"}, "usage": {"output_tokens": 9}}),
            ),
            ("message_stop", json!({"type": "message_stop"})),
        ]);
        let a = assemble(Dialect::Anthropic, true, bytes).await;
        let r = a.response.unwrap();
        assert_eq!(r["content"][0]["text"], "Hello");
        assert_eq!(r["content"][1]["input"], json!({"p": 2}));
        assert_eq!(r["stop_reason"], "tool_use");
        assert_eq!(
            a.usage,
            Usage {
                input_tokens: Some(5),
                output_tokens: Some(9)
            }
        );
    }

    #[tokio::test]
    async fn responses_stream_keeps_the_final_response_or_the_finished_items() {
        let created = json!({"type": "response.created", "sequence_number": 0,
            "response": {"id": "resp_1", "status": "in_progress", "output": []}});
        let item = json!({"type": "message", "content": [{"type": "output_text", "text": "hi"}]});
        let done = json!({"type": "response.output_item.done", "sequence_number": 1,
            "output_index": 0, "item": item});
        let completed = json!({"type": "response.completed", "sequence_number": 2,
            "response": {"id": "resp_1", "status": "completed", "output": [item],
            "usage": {"input_tokens": 4, "output_tokens": 2}}});
        let whole = sse(&[
            ("response.created", created.clone()),
            ("response.output_item.done", done.clone()),
            ("response.completed", completed),
        ]);
        let a = assemble_responses(true, whole).await;
        assert_eq!(a.response.unwrap()["status"], "completed");
        assert_eq!(a.usage.output_tokens, Some(2));
        let cut = sse(&[
            ("response.created", created),
            ("response.output_item.done", done),
            (
                "error",
                json!({"type": "error", "message": "boom", "sequence_number": 2}),
            ),
        ]);
        let a = assemble_responses(true, cut).await;
        assert_eq!(a.response.unwrap()["output"][0]["content"][0]["text"], "hi");
        assert_eq!(a.stream_error.as_deref(), Some("boom"));
    }

    #[tokio::test]
    async fn non_stream_parses_json_usage() {
        let body = json!({"choices": [], "usage": {"prompt_tokens": 1, "completion_tokens": 2}});
        let a = assemble(Dialect::OpenAi, false, Bytes::from(body.to_string())).await;
        assert_eq!(a.usage.output_tokens, Some(2));
    }

    // Found probing the sse_capture fuzz target: events whose `message`, `content_block` or
    // `usage` is not an object made `Value` indexing panic.
    #[tokio::test]
    async fn anthropic_events_of_the_wrong_shape_are_ignored() {
        let bytes = sse(&[
            ("", json!({"type": "message_start", "message": 5})),
            ("", json!({"type": "message_delta", "delta": {"a": 1}})),
            (
                "",
                json!({"type": "message_start", "message": {"id": "m", "usage": 3}}),
            ),
            (
                "",
                json!({"type": "content_block_start", "index": 0, "content_block": "x"}),
            ),
            (
                "",
                json!({"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": "hi"}}),
            ),
            (
                "",
                json!({"type": "message_delta", "usage": {"output_tokens": 2}}),
            ),
        ]);
        let a = assemble(Dialect::Anthropic, true, bytes).await;
        let r = a.response.unwrap();
        assert_eq!(r["content"][0]["text"], "hi");
        assert_eq!(r["usage"]["output_tokens"], 2);
        assert_eq!(a.usage.output_tokens, Some(2));
    }

    // Found probing the sse_capture fuzz target: a tool-call index of 4000000000 allocated
    // that many empty calls.
    #[tokio::test]
    async fn a_huge_tool_call_index_is_one_call() {
        let bytes = sse(&[
            (
                "",
                json!({"choices": [{"delta": {"tool_calls": [{"index": 4_000_000_000u64, "id": "b"}]}}]}),
            ),
            (
                "",
                json!({"choices": [{"delta": {"tool_calls": [{"index": 0, "id": "a"}]}}]}),
            ),
        ]);
        let a = assemble(Dialect::OpenAi, true, bytes).await;
        let calls = &a.response.unwrap()["choices"][0]["message"]["tool_calls"];
        assert_eq!(calls.as_array().map(Vec::len), Some(2));
        assert_eq!(calls[0]["id"], "a");
        assert_eq!(calls[1]["id"], "b");
    }
}
