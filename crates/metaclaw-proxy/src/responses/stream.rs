//! Re-encodes an OpenAI chat-completion chunk stream as the Responses API event stream, the
//! grammar the official SDK and Codex parse: `response.created`, `response.in_progress`, each
//! output item opened, filled and closed (`output_item.added`, `content_part.added`,
//! `output_text.delta`/`.done`, `function_call_arguments.delta`/`.done`, `content_part.done`,
//! `output_item.done`), then `response.completed` (or `.incomplete`) with the whole response
//! and usage; a failure is an `error` event then `response.failed`. Every event carries an
//! increasing `sequence_number`. The same state builds the non-streamed response.

use bytes::BytesMut;
use serde_json::{Map, Value, json};

use super::translate::usage_from_chat;
use crate::error::upstream_message;
use crate::reencode::{Reencode, Relayed, write_event};

/// Request fields a response object echoes back.
const ECHOED: &[&str] = &[
    "instructions",
    "max_output_tokens",
    "metadata",
    "parallel_tool_calls",
    "prompt_cache_key",
    "reasoning",
    "temperature",
    "text",
    "tool_choice",
    "tools",
    "top_p",
    "truncation",
    "user",
];

/// The output item being streamed.
#[derive(Debug)]
enum Open {
    Message {
        id: String,
        text: String,
    },
    Call {
        chat_index: u64,
        id: String,
        call_id: String,
        name: String,
        arguments: String,
    },
}

/// State of one translated response.
#[derive(Debug)]
pub struct ResponsesEncoder {
    /// The response object without `status`, `output` and `usage`.
    base: Map<String, Value>,
    sequence: u64,
    started: bool,
    finished: bool,
    /// Finished output items; the open one has index `output.len()`.
    output: Vec<Value>,
    open: Option<Open>,
    finish_reason: Option<String>,
    usage: Option<Value>,
    status: &'static str,
    error: Option<Value>,
}

fn short_id(prefix: &str) -> String {
    format!("{prefix}_{}", uuid::Uuid::new_v4().simple())
}

impl ResponsesEncoder {
    /// The part of a request a response echoes: all [`ResponsesEncoder::new`] reads, so a
    /// translated turn keeps this instead of a copy of the whole body.
    pub fn echo_of(request: &Map<String, Value>) -> Map<String, Value> {
        ECHOED
            .iter()
            .filter_map(|k| request.get(*k).map(|v| ((*k).to_owned(), v.clone())))
            .collect()
    }

    /// `request` is the Responses request as forwarded (after hooks), or its
    /// [`ResponsesEncoder::echo_of`]; `created_at` Unix seconds.
    pub fn new(request: &Map<String, Value>, model: &str, created_at: i64) -> Self {
        let mut base = Map::new();
        base.insert("id".into(), json!(short_id("resp")));
        base.insert("object".into(), json!("response"));
        base.insert("created_at".into(), json!(created_at));
        base.insert("model".into(), json!(model));
        base.insert("error".into(), Value::Null);
        base.insert("incomplete_details".into(), Value::Null);
        base.insert("previous_response_id".into(), Value::Null);
        for key in ECHOED {
            base.insert(
                (*key).into(),
                request.get(*key).cloned().unwrap_or(Value::Null),
            );
        }
        let defaults = [
            ("tools", json!([])),
            ("tool_choice", json!("auto")),
            ("parallel_tool_calls", json!(true)),
            ("metadata", json!({})),
            ("text", json!({"format": {"type": "text"}})),
            ("truncation", json!("disabled")),
        ];
        for (key, value) in defaults {
            if base[key].is_null() {
                base.insert(key.into(), value);
            }
        }
        // Nothing is stored: a translated response cannot be fetched or continued later.
        base.insert("store".into(), json!(false));
        Self {
            base,
            sequence: 0,
            started: false,
            finished: false,
            output: Vec::new(),
            open: None,
            finish_reason: None,
            usage: None,
            status: "in_progress",
            error: None,
        }
    }

    /// The response object as it stands (complete once the stream finished).
    pub fn response(&self) -> Value {
        let mut r = self.base.clone();
        r.insert("status".into(), json!(self.status));
        r.insert("output".into(), Value::Array(self.output.clone()));
        r.insert("usage".into(), self.usage.clone().unwrap_or(Value::Null));
        if let Some(e) = &self.error {
            r.insert("error".into(), e.clone());
        }
        if self.status == "incomplete" {
            let reason = match self.finish_reason.as_deref() {
                Some("content_filter") => "content_filter",
                _ => "max_output_tokens",
            };
            r.insert("incomplete_details".into(), json!({"reason": reason}));
        }
        Value::Object(r)
    }

    fn emit(&mut self, out: &mut BytesMut, kind: &str, fields: Value) {
        let mut data = Map::new();
        data.insert("type".into(), json!(kind));
        data.insert("sequence_number".into(), json!(self.sequence));
        if let Value::Object(f) = fields {
            data.extend(f);
        }
        self.sequence += 1;
        write_event(out, kind, &Value::Object(data));
    }

    fn start(&mut self, out: &mut BytesMut) {
        if self.started {
            return;
        }
        self.started = true;
        let response = self.response();
        self.emit(out, "response.created", json!({"response": response}));
        self.emit(out, "response.in_progress", json!({"response": response}));
    }

    fn index(&self) -> usize {
        self.output.len()
    }

    fn close_open(&mut self, out: &mut BytesMut) {
        let index = self.index();
        let item = match self.open.take() {
            None => return,
            Some(Open::Message { id, text }) => {
                let part = json!({"type": "output_text", "text": text, "annotations": []});
                self.emit(
                    out,
                    "response.output_text.done",
                    json!({"item_id": id, "output_index": index, "content_index": 0,
                        "text": text, "logprobs": []}),
                );
                self.emit(
                    out,
                    "response.content_part.done",
                    json!({"item_id": id, "output_index": index, "content_index": 0, "part": part}),
                );
                json!({"id": id, "type": "message", "status": "completed", "role": "assistant",
                    "content": [part]})
            }
            Some(Open::Call {
                id,
                call_id,
                name,
                arguments,
                ..
            }) => {
                self.emit(
                    out,
                    "response.function_call_arguments.done",
                    json!({"item_id": id, "output_index": index, "name": name,
                        "arguments": arguments}),
                );
                json!({"id": id, "type": "function_call", "status": "completed",
                    "call_id": call_id, "name": name, "arguments": arguments})
            }
        };
        self.emit(
            out,
            "response.output_item.done",
            json!({"output_index": index, "item": item}),
        );
        self.output.push(item);
    }

    fn text(&mut self, piece: &str, out: &mut BytesMut) {
        if !matches!(self.open, Some(Open::Message { .. })) {
            self.close_open(out);
            let id = short_id("msg");
            let index = self.index();
            self.emit(
                out,
                "response.output_item.added",
                json!({"output_index": index, "item": {"id": id, "type": "message",
                    "status": "in_progress", "role": "assistant", "content": []}}),
            );
            self.emit(
                out,
                "response.content_part.added",
                json!({"item_id": id, "output_index": index, "content_index": 0,
                    "part": {"type": "output_text", "text": "", "annotations": []}}),
            );
            self.open = Some(Open::Message {
                id,
                text: String::new(),
            });
        }
        let index = self.index();
        let Some(Open::Message { id, text }) = &mut self.open else {
            return;
        };
        text.push_str(piece);
        let id = id.clone();
        self.emit(
            out,
            "response.output_text.delta",
            json!({"item_id": id, "output_index": index, "content_index": 0, "delta": piece,
                "logprobs": []}),
        );
    }

    /// Chat backends stream one call after another, so a new tool index closes the open item.
    fn tool_delta(&mut self, call: &Value, out: &mut BytesMut) {
        let chat_index = call.get("index").and_then(Value::as_u64).unwrap_or(0);
        let same = matches!(&self.open, Some(Open::Call { chat_index: i, .. }) if *i == chat_index);
        if !same {
            self.close_open(out);
            let id = short_id("fc");
            let call_id = call
                .get("id")
                .and_then(Value::as_str)
                .filter(|s| !s.is_empty())
                .map_or_else(|| short_id("call"), str::to_owned);
            let name = call
                .pointer("/function/name")
                .and_then(Value::as_str)
                .unwrap_or_default()
                .to_owned();
            let index = self.index();
            self.emit(
                out,
                "response.output_item.added",
                json!({"output_index": index, "item": {"id": id, "type": "function_call",
                    "status": "in_progress", "call_id": call_id, "name": name, "arguments": ""}}),
            );
            self.open = Some(Open::Call {
                chat_index,
                id,
                call_id,
                name,
                arguments: String::new(),
            });
        }
        let Some(piece) = call
            .pointer("/function/arguments")
            .and_then(Value::as_str)
            .filter(|s| !s.is_empty())
        else {
            return;
        };
        let index = self.index();
        let Some(Open::Call { id, arguments, .. }) = &mut self.open else {
            return;
        };
        arguments.push_str(piece);
        let id = id.clone();
        self.emit(
            out,
            "response.function_call_arguments.delta",
            json!({"item_id": id, "output_index": index, "delta": piece}),
        );
    }

    /// Translate one parsed chat-completion chunk.
    pub fn chunk(&mut self, chunk: &Value, out: &mut BytesMut) {
        if self.finished {
            return;
        }
        self.start(out);
        if let Some(usage) = chunk.get("usage").filter(|u| u.is_object()) {
            self.usage = Some(usage_from_chat(usage));
        }
        let Some(choice) = chunk.pointer("/choices/0") else {
            return;
        };
        if let Some(text) = choice
            .pointer("/delta/content")
            .and_then(Value::as_str)
            .filter(|s| !s.is_empty())
        {
            self.text(text, out);
        }
        for call in choice
            .pointer("/delta/tool_calls")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
            self.tool_delta(call, out);
        }
        if let Some(reason) = choice.get("finish_reason").and_then(Value::as_str) {
            self.finish_reason = Some(reason.to_owned());
        }
    }

    /// Translate the data of one upstream SSE event: `[DONE]` finishes the stream, an `error`
    /// chunk fails it, data that is not JSON (keep-alives) is skipped.
    pub fn event(&mut self, data: &str, out: &mut BytesMut) -> Relayed {
        if data.trim() == "[DONE]" {
            self.finish(out);
            return Relayed::Done;
        }
        match serde_json::from_str::<Value>(data) {
            Ok(chunk) if chunk.get("error").is_some() => {
                let message = upstream_message(&chunk);
                self.fail(&message, out);
                Relayed::Broken(message)
            }
            Ok(chunk) => {
                self.chunk(&chunk, out);
                Relayed::More
            }
            Err(_) => Relayed::More,
        }
    }

    /// The upstream stream ended normally: close the open item and send the whole response.
    pub fn finish(&mut self, out: &mut BytesMut) {
        if self.finished {
            return;
        }
        self.start(out);
        self.close_open(out);
        self.finished = true;
        let (status, event) = match self.finish_reason.as_deref() {
            Some("length" | "content_filter") => ("incomplete", "response.incomplete"),
            _ => ("completed", "response.completed"),
        };
        self.status = status;
        let response = self.response();
        self.emit(out, event, json!({"response": response}));
    }

    /// The upstream failed midway: an `error` event, then `response.failed`, which ends the
    /// stream for clients that wait for a terminal response event (Codex).
    pub fn fail(&mut self, message: &str, out: &mut BytesMut) {
        if self.finished {
            return;
        }
        self.start(out);
        self.finished = true;
        self.status = "failed";
        self.error = Some(json!({"code": "server_error", "message": message}));
        self.emit(
            out,
            "error",
            json!({"code": "server_error", "message": message, "param": null}),
        );
        let response = self.response();
        self.emit(out, "response.failed", json!({"response": response}));
    }
}

impl Reencode for ResponsesEncoder {
    fn on_event(&mut self, data: &str, out: &mut BytesMut) -> Relayed {
        self.event(data, out)
    }

    fn on_broken(&mut self, message: &str, out: &mut BytesMut) {
        self.fail(message, out);
    }

    fn on_end(&mut self, out: &mut BytesMut) {
        self.finish(out);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn events(bytes: &[u8]) -> Vec<(String, Value)> {
        std::str::from_utf8(bytes)
            .unwrap()
            .split("\n\n")
            .filter(|e| !e.is_empty())
            .map(|e| {
                let mut lines = e.lines();
                let name = lines.next().unwrap().trim_start_matches("event: ");
                let data = lines.next().unwrap().trim_start_matches("data: ");
                (name.to_owned(), serde_json::from_str(data).unwrap())
            })
            .collect()
    }

    fn request() -> Map<String, Value> {
        json!({"model": "m", "input": "hi", "tools": [{"type": "function", "name": "read"}]})
            .as_object()
            .unwrap()
            .clone()
    }

    #[test]
    fn text_then_two_calls_in_grammar_order() {
        let mut enc = ResponsesEncoder::new(&request(), "m", 7);
        let mut out = BytesMut::new();
        for chunk in [
            json!({"choices": [{"index": 0, "delta": {"role": "assistant", "content": ""}}]}),
            json!({"choices": [{"index": 0, "delta": {"reasoning_content": "hmm"}}]}),
            json!({"choices": [{"index": 0, "delta": {"content": "Hel"}}]}),
            json!({"choices": [{"index": 0, "delta": {"content": "lo"}}]}),
            json!({"choices": [{"index": 0, "delta": {"tool_calls": [{"index": 0, "id": "call_a",
                "type": "function", "function": {"name": "read", "arguments": "{\"p\":"}}]}}]}),
            json!({"choices": [{"index": 0, "delta": {"tool_calls": [{"index": 0,
                "function": {"arguments": "1}"}}]}}]}),
            json!({"choices": [{"index": 0, "delta": {"tool_calls": [{"index": 1, "id": "call_b",
                "function": {"name": "read", "arguments": "{}"}}]}}]}),
            json!({"choices": [{"index": 0, "delta": {}, "finish_reason": "tool_calls"}]}),
            json!({"choices": [], "usage": {"prompt_tokens": 9, "completion_tokens": 4,
                "prompt_tokens_details": {"cached_tokens": 2}}}),
        ] {
            enc.chunk(&chunk, &mut out);
        }
        assert_eq!(enc.event("[DONE]", &mut out), Relayed::Done);
        let ev = events(&out);
        let names: Vec<&str> = ev.iter().map(|(n, _)| n.as_str()).collect();
        assert_eq!(
            names,
            [
                "response.created",
                "response.in_progress",
                "response.output_item.added",
                "response.content_part.added",
                "response.output_text.delta",
                "response.output_text.delta",
                "response.output_text.done",
                "response.content_part.done",
                "response.output_item.done",
                "response.output_item.added",
                "response.function_call_arguments.delta",
                "response.function_call_arguments.delta",
                "response.function_call_arguments.done",
                "response.output_item.done",
                "response.output_item.added",
                "response.function_call_arguments.delta",
                "response.function_call_arguments.done",
                "response.output_item.done",
                "response.completed",
            ]
        );
        for (i, (name, data)) in ev.iter().enumerate() {
            assert_eq!(data["type"], name.as_str());
            assert_eq!(data["sequence_number"], i as u64);
        }
        assert_eq!(ev[0].1["response"]["status"], "in_progress");
        assert_eq!(ev[0].1["response"]["output"], json!([]));
        assert_eq!(ev[6].1["text"], "Hello");
        assert_eq!(ev[9].1["output_index"], 1);
        assert_eq!(ev[9].1["item"]["call_id"], "call_a");
        assert_eq!(ev[12].1["arguments"], "{\"p\":1}");
        assert_eq!(ev[14].1["output_index"], 2);
        let done = &ev[18].1["response"];
        assert_eq!(done["status"], "completed");
        assert_eq!(done["output"].as_array().unwrap().len(), 3);
        assert_eq!(done["output"][0]["content"][0]["text"], "Hello");
        assert_eq!(done["output"][2]["call_id"], "call_b");
        assert_eq!(done["usage"]["input_tokens"], 9);
        assert_eq!(done["usage"]["input_tokens_details"]["cached_tokens"], 2);
        assert_eq!(done["usage"]["total_tokens"], 13);
        assert_eq!(done["id"], ev[0].1["response"]["id"]);
        assert_eq!(done["created_at"], 7);
        assert!(done["id"].as_str().unwrap().starts_with("resp_"));
        let item_id = ev[2].1["item"]["id"].as_str().unwrap();
        assert!(item_id.starts_with("msg_"));
        assert_eq!(ev[4].1["item_id"], item_id);
    }

    #[test]
    fn length_is_incomplete_and_errors_end_with_failed() {
        let mut enc = ResponsesEncoder::new(&request(), "m", 0);
        let mut out = BytesMut::new();
        enc.chunk(
            &json!({"choices": [{"delta": {"content": "x"}, "finish_reason": "length"}]}),
            &mut out,
        );
        enc.finish(&mut out);
        let ev = events(&out);
        assert_eq!(ev.last().unwrap().0, "response.incomplete");
        assert_eq!(
            ev.last().unwrap().1["response"]["incomplete_details"]["reason"],
            "max_output_tokens"
        );

        let mut enc = ResponsesEncoder::new(&request(), "m", 0);
        let mut out = BytesMut::new();
        let relayed = enc.event(r#"{"error": {"message": "overloaded"}}"#, &mut out);
        assert_eq!(relayed, Relayed::Broken("overloaded".into()));
        enc.finish(&mut out);
        let ev = events(&out);
        let names: Vec<&str> = ev.iter().map(|(n, _)| n.as_str()).collect();
        assert_eq!(
            names,
            [
                "response.created",
                "response.in_progress",
                "error",
                "response.failed"
            ]
        );
        assert_eq!(ev[2].1["message"], "overloaded");
        assert_eq!(ev[3].1["response"]["error"]["message"], "overloaded");
        assert_eq!(ev[3].1["sequence_number"], 3);
    }

    #[test]
    fn an_empty_stream_still_completes() {
        let mut enc = ResponsesEncoder::new(&request(), "m", 0);
        let mut out = BytesMut::new();
        enc.finish(&mut out);
        let ev = events(&out);
        assert_eq!(ev.last().unwrap().0, "response.completed");
        assert_eq!(enc.response()["output"], json!([]));
    }
}
