//! Builds OpenAI and Anthropic responses (JSON or SSE event lists) from a planned answer.

use std::time::Duration;

use bytes::Bytes;
use serde_json::{Value, json};

use super::behaviour::ToolCallSpec;

/// One step of a streamed body.
pub(crate) enum Step {
    Data(Bytes),
    Sleep(Duration),
    /// Error the body: hyper aborts the connection, so the client sees a truncated stream.
    Abort,
}

pub(crate) enum End {
    Normal,
    Reset {
        after_events: usize,
    },
    StreamError {
        after_events: usize,
        status: u16,
        message: String,
    },
}

/// What to answer, independent of the wire API.
pub(crate) struct Answer {
    pub reasoning: Vec<String>,
    pub content: Vec<String>,
    pub calls: Vec<ToolCallSpec>,
    pub interval: Option<Duration>,
    pub end: End,
}

impl Answer {
    pub fn text(&self) -> Option<String> {
        if self.content.is_empty() {
            None
        } else {
            Some(self.content.concat())
        }
    }

    pub fn reasoning_text(&self) -> Option<String> {
        if self.reasoning.is_empty() {
            None
        } else {
            Some(self.reasoning.concat())
        }
    }

    fn completion_tokens(&self) -> u64 {
        let chars: usize = self
            .content
            .iter()
            .chain(&self.reasoning)
            .map(|s| s.len())
            .sum::<usize>()
            + self
                .calls
                .iter()
                .map(|c| c.name.len() + c.arguments.len())
                .sum::<usize>();
        (chars as u64).div_ceil(4).max(1)
    }
}

/// Request facts the renderers need.
pub(crate) struct Ctx {
    pub seq: u64,
    pub model: String,
    pub include_usage: bool,
    pub prompt_tokens: u64,
    pub created: u64,
    pub chunks: usize,
}

/// Splits `s` into at most `n` non-empty pieces on char boundaries.
pub(crate) fn split_pieces(s: &str, n: usize) -> Vec<String> {
    if s.is_empty() {
        return Vec::new();
    }
    let chars = s.chars().count();
    let n = n.clamp(1, chars);
    let per = chars.div_ceil(n);
    let mut out = Vec::with_capacity(n);
    let mut cur = String::new();
    for (i, c) in s.chars().enumerate() {
        cur.push(c);
        if (i + 1) % per == 0 {
            out.push(std::mem::take(&mut cur));
        }
    }
    if !cur.is_empty() {
        out.push(cur);
    }
    out
}

fn sse_data(v: &Value) -> Bytes {
    let mut buf = Vec::with_capacity(256);
    buf.extend_from_slice(b"data: ");
    serde_json::to_writer(&mut buf, v).expect("serialize");
    buf.extend_from_slice(b"\n\n");
    Bytes::from(buf)
}

fn sse_event(name: &str, v: &Value) -> Bytes {
    let mut buf = Vec::with_capacity(256);
    buf.extend_from_slice(b"event: ");
    buf.extend_from_slice(name.as_bytes());
    buf.extend_from_slice(b"\ndata: ");
    serde_json::to_writer(&mut buf, v).expect("serialize");
    buf.extend_from_slice(b"\n\n");
    Bytes::from(buf)
}

/// Turns (event, is_content_delta) pairs into steps: sleeps before content deltas for slow
/// streams, truncation + abort / error event for faulty ones.
fn finish_steps(
    events: Vec<(Bytes, bool)>,
    answer: &Answer,
    error_event: impl Fn(u16, &str) -> Bytes,
) -> Vec<Step> {
    let mut steps =
        Vec::with_capacity(events.len() * if answer.interval.is_some() { 2 } else { 1 } + 1);
    let limit = match &answer.end {
        End::Normal => usize::MAX,
        End::Reset { after_events } => (*after_events).min(events.len().saturating_sub(1)),
        End::StreamError { after_events, .. } => *after_events,
    };
    for (i, (ev, is_content)) in events.into_iter().enumerate() {
        if i >= limit {
            break;
        }
        if let (true, Some(d)) = (is_content, answer.interval) {
            steps.push(Step::Sleep(d));
        }
        steps.push(Step::Data(ev));
    }
    match &answer.end {
        End::Normal => {}
        End::Reset { .. } => {
            // Let hyper flush what was sent before the abort tears the connection down.
            steps.push(Step::Sleep(Duration::from_millis(5)));
            steps.push(Step::Abort);
        }
        End::StreamError {
            status, message, ..
        } => steps.push(Step::Data(error_event(*status, message))),
    }
    steps
}

// ---------------------------------------------------------------- errors

// ---------------------------------------------------------------- OpenAI

fn openai_usage(ctx: &Ctx, answer: &Answer) -> Value {
    let c = answer.completion_tokens();
    json!({"prompt_tokens": ctx.prompt_tokens, "completion_tokens": c, "total_tokens": ctx.prompt_tokens + c})
}

fn openai_call_id(ctx: &Ctx, i: usize) -> String {
    format!("call_mock_{}_{}", ctx.seq, i)
}

pub(crate) fn openai_json(ctx: &Ctx, answer: &Answer) -> Value {
    let mut msg = json!({"role": "assistant", "content": answer.text(), "refusal": null});
    if let Some(r) = answer.reasoning_text() {
        msg["reasoning_content"] = json!(r);
    }
    if !answer.calls.is_empty() {
        let calls: Vec<Value> = answer
            .calls
            .iter()
            .enumerate()
            .map(|(i, c)| json!({"id": openai_call_id(ctx, i), "type": "function", "function": {"name": c.name, "arguments": c.arguments}}))
            .collect();
        msg["tool_calls"] = Value::Array(calls);
    }
    let finish = if answer.calls.is_empty() {
        "stop"
    } else {
        "tool_calls"
    };
    json!({
        "id": format!("chatcmpl-mock-{}", ctx.seq),
        "object": "chat.completion",
        "created": ctx.created,
        "model": ctx.model,
        "system_fingerprint": "fp_mock",
        "choices": [{"index": 0, "message": msg, "logprobs": null, "finish_reason": finish}],
        "usage": openai_usage(ctx, answer),
    })
}

pub(crate) fn openai_stream(ctx: &Ctx, answer: &Answer) -> Vec<Step> {
    let id = format!("chatcmpl-mock-{}", ctx.seq);
    let chunk = |delta: Value, finish: Option<&str>| -> Bytes {
        let mut v = json!({
            "id": id,
            "object": "chat.completion.chunk",
            "created": ctx.created,
            "model": ctx.model,
            "system_fingerprint": "fp_mock",
            "choices": [{"index": 0, "delta": delta, "logprobs": null, "finish_reason": finish}],
        });
        if ctx.include_usage {
            v["usage"] = Value::Null;
        }
        sse_data(&v)
    };
    let mut ev: Vec<(Bytes, bool)> =
        Vec::with_capacity(answer.content.len() + answer.reasoning.len() + 6);
    ev.push((
        chunk(
            json!({"role": "assistant", "content": "", "refusal": null}),
            None,
        ),
        false,
    ));
    for r in &answer.reasoning {
        ev.push((chunk(json!({"reasoning_content": r}), None), true));
    }
    for c in &answer.content {
        ev.push((chunk(json!({"content": c}), None), true));
    }
    for (i, call) in answer.calls.iter().enumerate() {
        ev.push((
            chunk(
                json!({"tool_calls": [{"index": i, "id": openai_call_id(ctx, i), "type": "function", "function": {"name": call.name, "arguments": ""}}]}),
                None,
            ),
            true,
        ));
        for piece in split_pieces(&call.arguments, ctx.chunks.max(2)) {
            ev.push((
                chunk(
                    json!({"tool_calls": [{"index": i, "function": {"arguments": piece}}]}),
                    None,
                ),
                true,
            ));
        }
    }
    let finish = if answer.calls.is_empty() {
        "stop"
    } else {
        "tool_calls"
    };
    ev.push((chunk(json!({}), Some(finish)), false));
    if ctx.include_usage {
        let v = json!({
            "id": id,
            "object": "chat.completion.chunk",
            "created": ctx.created,
            "model": ctx.model,
            "system_fingerprint": "fp_mock",
            "choices": [],
            "usage": openai_usage(ctx, answer),
        });
        ev.push((sse_data(&v), false));
    }
    ev.push((Bytes::from_static(b"data: [DONE]\n\n"), false));
    finish_steps(ev, answer, |status, message| {
        sse_data(&super::recorded::body(super::Api::OpenAi, status, message))
    })
}

// ---------------------------------------------------------------- Anthropic

fn anthropic_tool_id(ctx: &Ctx, i: usize) -> String {
    format!("toolu_mock_{}_{}", ctx.seq, i)
}

fn tool_input(arguments: &str) -> Value {
    match serde_json::from_str::<Value>(arguments) {
        Ok(v @ Value::Object(_)) => v,
        _ => json!({}),
    }
}

const SIGNATURE: &str = "mock-signature";

pub(crate) fn anthropic_json(ctx: &Ctx, answer: &Answer) -> Value {
    let mut content = Vec::new();
    if let Some(r) = answer.reasoning_text() {
        content.push(json!({"type": "thinking", "thinking": r, "signature": SIGNATURE}));
    }
    if let Some(t) = answer.text() {
        content.push(json!({"type": "text", "text": t}));
    }
    for (i, c) in answer.calls.iter().enumerate() {
        content.push(json!({"type": "tool_use", "id": anthropic_tool_id(ctx, i), "name": c.name, "input": tool_input(&c.arguments)}));
    }
    if content.is_empty() {
        content.push(json!({"type": "text", "text": ""}));
    }
    let stop = if answer.calls.is_empty() {
        "end_turn"
    } else {
        "tool_use"
    };
    json!({
        "id": format!("msg_mock_{}", ctx.seq),
        "type": "message",
        "role": "assistant",
        "model": ctx.model,
        "content": content,
        "stop_reason": stop,
        "stop_sequence": null,
        "usage": {"input_tokens": ctx.prompt_tokens, "output_tokens": answer.completion_tokens()},
    })
}

pub(crate) fn anthropic_stream(ctx: &Ctx, answer: &Answer) -> Vec<Step> {
    let mut ev: Vec<(Bytes, bool)> =
        Vec::with_capacity(answer.content.len() + answer.reasoning.len() + 10);
    let start = json!({
        "type": "message_start",
        "message": {
            "id": format!("msg_mock_{}", ctx.seq),
            "type": "message",
            "role": "assistant",
            "model": ctx.model,
            "content": [],
            "stop_reason": null,
            "stop_sequence": null,
            "usage": {"input_tokens": ctx.prompt_tokens, "output_tokens": 1},
        }
    });
    ev.push((sse_event("message_start", &start), false));
    let mut index = 0usize;
    let mut pinged = false;
    let mut block_start = |ev: &mut Vec<(Bytes, bool)>, index: usize, block: Value| {
        ev.push((
            sse_event(
                "content_block_start",
                &json!({"type": "content_block_start", "index": index, "content_block": block}),
            ),
            false,
        ));
        if !pinged {
            pinged = true;
            ev.push((sse_event("ping", &json!({"type": "ping"})), false));
        }
    };
    let delta = |index: usize, d: Value| {
        sse_event(
            "content_block_delta",
            &json!({"type": "content_block_delta", "index": index, "delta": d}),
        )
    };
    let stop = |index: usize| {
        sse_event(
            "content_block_stop",
            &json!({"type": "content_block_stop", "index": index}),
        )
    };

    if !answer.reasoning.is_empty() {
        block_start(
            &mut ev,
            index,
            json!({"type": "thinking", "thinking": "", "signature": ""}),
        );
        for r in &answer.reasoning {
            ev.push((
                delta(index, json!({"type": "thinking_delta", "thinking": r})),
                true,
            ));
        }
        ev.push((
            delta(
                index,
                json!({"type": "signature_delta", "signature": SIGNATURE}),
            ),
            false,
        ));
        ev.push((stop(index), false));
        index += 1;
    }
    if !answer.content.is_empty() || answer.calls.is_empty() {
        block_start(&mut ev, index, json!({"type": "text", "text": ""}));
        for c in &answer.content {
            ev.push((delta(index, json!({"type": "text_delta", "text": c})), true));
        }
        ev.push((stop(index), false));
        index += 1;
    }
    for (i, call) in answer.calls.iter().enumerate() {
        block_start(
            &mut ev,
            index,
            json!({"type": "tool_use", "id": anthropic_tool_id(ctx, i), "name": call.name, "input": {}}),
        );
        ev.push((
            delta(
                index,
                json!({"type": "input_json_delta", "partial_json": ""}),
            ),
            true,
        ));
        for piece in split_pieces(&call.arguments, ctx.chunks.max(2)) {
            ev.push((
                delta(
                    index,
                    json!({"type": "input_json_delta", "partial_json": piece}),
                ),
                true,
            ));
        }
        ev.push((stop(index), false));
        index += 1;
    }
    let stop_reason = if answer.calls.is_empty() {
        "end_turn"
    } else {
        "tool_use"
    };
    ev.push((
        sse_event(
            "message_delta",
            &json!({"type": "message_delta", "delta": {"stop_reason": stop_reason, "stop_sequence": null}, "usage": {"output_tokens": answer.completion_tokens()}}),
        ),
        false,
    ));
    ev.push((
        sse_event("message_stop", &json!({"type": "message_stop"})),
        false,
    ));
    finish_steps(ev, answer, |status, message| {
        sse_event(
            "error",
            &super::recorded::body(super::Api::Anthropic, status, message),
        )
    })
}

// ---------------------------------------------------------------- OpenAI Responses

fn responses_output(ctx: &Ctx, answer: &Answer) -> Vec<Value> {
    let mut output = Vec::new();
    if let Some(r) = answer.reasoning_text() {
        output.push(
            json!({"id": format!("rs_mock_{}", ctx.seq), "type": "reasoning",
            "summary": [{"type": "summary_text", "text": r}]}),
        );
    }
    if let Some(t) = answer.text() {
        output.push(
            json!({"id": format!("msg_mock_{}", ctx.seq), "type": "message",
            "status": "completed", "role": "assistant",
            "content": [{"type": "output_text", "text": t, "annotations": []}]}),
        );
    }
    for (i, c) in answer.calls.iter().enumerate() {
        output.push(
            json!({"id": format!("fc_mock_{}_{i}", ctx.seq), "type": "function_call",
            "status": "completed", "call_id": openai_call_id(ctx, i), "name": c.name,
            "arguments": c.arguments}),
        );
    }
    output
}

fn responses_object(ctx: &Ctx, answer: &Answer, status: &str, output: Vec<Value>) -> Value {
    let c = answer.completion_tokens();
    let usage = (status == "completed").then(|| {
        json!({"input_tokens": ctx.prompt_tokens, "input_tokens_details": {"cached_tokens": 0},
            "output_tokens": c, "output_tokens_details": {"reasoning_tokens": 0},
            "total_tokens": ctx.prompt_tokens + c})
    });
    json!({
        "id": format!("resp_mock_{}", ctx.seq), "object": "response", "created_at": ctx.created,
        "status": status, "error": null, "incomplete_details": null, "model": ctx.model,
        "output": output, "parallel_tool_calls": true, "tool_choice": "auto", "tools": [],
        "store": false, "usage": usage,
    })
}

pub(crate) fn responses_json(ctx: &Ctx, answer: &Answer) -> Value {
    responses_object(ctx, answer, "completed", responses_output(ctx, answer))
}

/// The Responses event grammar: each output item added, filled and done in turn.
pub(crate) fn responses_stream(ctx: &Ctx, answer: &Answer) -> Vec<Step> {
    let mut ev: Vec<(Bytes, bool)> = Vec::new();
    let mut seq = 0u64;
    let mut push = |ev: &mut Vec<(Bytes, bool)>, kind: &str, mut data: Value, content: bool| {
        data["type"] = json!(kind);
        data["sequence_number"] = json!(seq);
        seq += 1;
        ev.push((sse_event(kind, &data), content));
    };
    let start = responses_object(ctx, answer, "in_progress", Vec::new());
    push(
        &mut ev,
        "response.created",
        json!({"response": start}),
        false,
    );
    push(
        &mut ev,
        "response.in_progress",
        json!({"response": start}),
        false,
    );
    for (index, item) in responses_output(ctx, answer).into_iter().enumerate() {
        let id = item["id"].clone();
        match item["type"].as_str() {
            Some("message") => {
                let mut added = item.clone();
                added["status"] = json!("in_progress");
                added["content"] = json!([]);
                push(
                    &mut ev,
                    "response.output_item.added",
                    json!({"output_index": index, "item": added}),
                    false,
                );
                push(
                    &mut ev,
                    "response.content_part.added",
                    json!({"item_id": id, "output_index": index,
                    "content_index": 0, "part": {"type": "output_text", "text": "", "annotations": []}}),
                    false,
                );
                for piece in &answer.content {
                    push(
                        &mut ev,
                        "response.output_text.delta",
                        json!({"item_id": id, "output_index": index,
                        "content_index": 0, "delta": piece, "logprobs": []}),
                        true,
                    );
                }
                let text = answer.text().unwrap_or_default();
                push(
                    &mut ev,
                    "response.output_text.done",
                    json!({"item_id": id, "output_index": index,
                    "content_index": 0, "text": text, "logprobs": []}),
                    false,
                );
                push(
                    &mut ev,
                    "response.content_part.done",
                    json!({"item_id": id, "output_index": index,
                    "content_index": 0, "part": item["content"][0]}),
                    false,
                );
            }
            Some("function_call") => {
                let mut added = item.clone();
                added["status"] = json!("in_progress");
                added["arguments"] = json!("");
                push(
                    &mut ev,
                    "response.output_item.added",
                    json!({"output_index": index, "item": added}),
                    false,
                );
                let args = item["arguments"].as_str().unwrap_or_default().to_owned();
                for piece in split_pieces(&args, ctx.chunks.max(2)) {
                    push(
                        &mut ev,
                        "response.function_call_arguments.delta",
                        json!({"item_id": id,
                        "output_index": index, "delta": piece}),
                        true,
                    );
                }
                push(
                    &mut ev,
                    "response.function_call_arguments.done",
                    json!({"item_id": id,
                    "output_index": index, "name": item["name"], "arguments": args}),
                    false,
                );
            }
            _ => {
                push(
                    &mut ev,
                    "response.output_item.added",
                    json!({"output_index": index, "item": item}),
                    false,
                );
            }
        }
        push(
            &mut ev,
            "response.output_item.done",
            json!({"output_index": index, "item": item}),
            false,
        );
    }
    let done = responses_json(ctx, answer);
    push(
        &mut ev,
        "response.completed",
        json!({"response": done}),
        false,
    );
    finish_steps(ev, answer, |status, message| {
        let body = super::recorded::body(super::Api::OpenAi, status, message);
        let message = body
            .pointer("/error/message")
            .cloned()
            .unwrap_or(json!(message));
        sse_event(
            "error",
            &json!({"type": "error", "code": "server_error", "message": message, "param": null}),
        )
    })
}
