//! Re-encodes an OpenAI chat-completion chunk stream as the Anthropic Messages event stream,
//! event by event as chunks arrive.

use bytes::BytesMut;
use serde_json::{Value, json};

use super::translate::{message_id, stop_reason, tool_use_id};
use crate::error::upstream_message;
pub use crate::reencode::Relayed;
use crate::reencode::{Reencode, write_event};

#[derive(Debug, Clone, Copy, PartialEq)]
enum Block {
    Thinking,
    Text,
    Tool,
}

/// State of one translated stream.
#[derive(Debug)]
pub struct AnthropicEncoder {
    model: String,
    started: bool,
    finished: bool,
    /// The content block currently open, with its Anthropic index.
    open: Option<(Block, usize)>,
    next_index: usize,
    /// OpenAI tool-call index → Anthropic block index.
    tool_blocks: Vec<(u64, usize)>,
    finish_reason: Option<String>,
    saw_tool: bool,
    input_tokens: u64,
    output_tokens: u64,
}

impl AnthropicEncoder {
    pub fn new(model: &str) -> Self {
        Self {
            model: model.to_owned(),
            started: false,
            finished: false,
            open: None,
            next_index: 0,
            tool_blocks: Vec::new(),
            finish_reason: None,
            saw_tool: false,
            input_tokens: 0,
            output_tokens: 0,
        }
    }

    fn start(&mut self, id: Option<&str>, out: &mut BytesMut) {
        if self.started {
            return;
        }
        self.started = true;
        write_event(
            out,
            "message_start",
            &json!({"type": "message_start", "message": {
                "id": message_id(id), "type": "message", "role": "assistant", "model": self.model,
                "content": [], "stop_reason": null, "stop_sequence": null,
                "usage": {"input_tokens": self.input_tokens, "output_tokens": 0}}}),
        );
        write_event(out, "ping", &json!({"type": "ping"}));
    }

    fn close_block(&mut self, out: &mut BytesMut) {
        if let Some((_, index)) = self.open.take() {
            write_event(
                out,
                "content_block_stop",
                &json!({"type": "content_block_stop", "index": index}),
            );
        }
    }

    fn open_block(&mut self, kind: Block, block: Value, out: &mut BytesMut) -> usize {
        self.close_block(out);
        let index = self.next_index;
        self.next_index += 1;
        self.open = Some((kind, index));
        write_event(
            out,
            "content_block_start",
            &json!({"type": "content_block_start", "index": index, "content_block": block}),
        );
        index
    }

    fn ensure_block(&mut self, kind: Block, block: Value, out: &mut BytesMut) -> usize {
        match self.open {
            Some((k, index)) if k == kind => index,
            _ => self.open_block(kind, block, out),
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
                self.fail("api_error", &message, out);
                Relayed::Broken(message)
            }
            Ok(chunk) => {
                self.chunk(&chunk, out);
                Relayed::More
            }
            Err(_) => Relayed::More,
        }
    }

    /// Translate one parsed OpenAI chunk.
    pub fn chunk(&mut self, chunk: &Value, out: &mut BytesMut) {
        if self.finished {
            return;
        }
        self.start(chunk.get("id").and_then(Value::as_str), out);
        if let Some(usage) = chunk.get("usage").filter(|u| u.is_object()) {
            self.input_tokens = usage
                .get("prompt_tokens")
                .and_then(Value::as_u64)
                .unwrap_or(self.input_tokens);
            self.output_tokens = usage
                .get("completion_tokens")
                .and_then(Value::as_u64)
                .unwrap_or(self.output_tokens);
        }
        let Some(choice) = chunk.pointer("/choices/0") else {
            return;
        };
        let delta = choice.get("delta").cloned().unwrap_or(Value::Null);
        let reasoning = delta
            .get("reasoning_content")
            .or_else(|| delta.get("reasoning"))
            .and_then(Value::as_str)
            .filter(|s| !s.is_empty());
        if let Some(r) = reasoning {
            let index = self.ensure_block(
                Block::Thinking,
                json!({"type": "thinking", "thinking": ""}),
                out,
            );
            write_event(
                out,
                "content_block_delta",
                &json!({"type": "content_block_delta", "index": index,
                "delta": {"type": "thinking_delta", "thinking": r}}),
            );
        }
        if let Some(text) = delta
            .get("content")
            .and_then(Value::as_str)
            .filter(|s| !s.is_empty())
        {
            let index = self.ensure_block(Block::Text, json!({"type": "text", "text": ""}), out);
            write_event(
                out,
                "content_block_delta",
                &json!({"type": "content_block_delta", "index": index,
                "delta": {"type": "text_delta", "text": text}}),
            );
        }
        for call in delta
            .get("tool_calls")
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

    fn tool_delta(&mut self, call: &Value, out: &mut BytesMut) {
        self.saw_tool = true;
        let oa_index = call.get("index").and_then(Value::as_u64).unwrap_or(0);
        let known = self
            .tool_blocks
            .iter()
            .find(|(i, _)| *i == oa_index)
            .map(|(_, b)| *b);
        let index = match known {
            Some(b) => b,
            None => {
                let block = json!({"type": "tool_use",
                    "id": tool_use_id(call.get("id").and_then(Value::as_str)),
                    "name": call.pointer("/function/name").and_then(Value::as_str).unwrap_or(""),
                    "input": {}});
                let b = self.open_block(Block::Tool, block, out);
                self.tool_blocks.push((oa_index, b));
                b
            }
        };
        if let Some(args) = call
            .pointer("/function/arguments")
            .and_then(Value::as_str)
            .filter(|s| !s.is_empty())
        {
            write_event(
                out,
                "content_block_delta",
                &json!({"type": "content_block_delta", "index": index,
                "delta": {"type": "input_json_delta", "partial_json": args}}),
            );
        }
    }

    /// The upstream stream ended normally.
    pub fn finish(&mut self, out: &mut BytesMut) {
        if self.finished {
            return;
        }
        self.start(None, out);
        if self.next_index == 0 {
            self.open_block(Block::Text, json!({"type": "text", "text": ""}), out);
        }
        self.close_block(out);
        self.finished = true;
        let reason = stop_reason(self.finish_reason.as_deref(), self.saw_tool);
        write_event(
            out,
            "message_delta",
            &json!({"type": "message_delta",
            "delta": {"stop_reason": reason, "stop_sequence": null},
            "usage": {"input_tokens": self.input_tokens, "output_tokens": self.output_tokens}}),
        );
        write_event(out, "message_stop", &json!({"type": "message_stop"}));
    }

    /// The upstream failed midway: tell the client in Anthropic's error event.
    pub fn fail(&mut self, error_type: &str, message: &str, out: &mut BytesMut) {
        if self.finished {
            return;
        }
        self.finished = true;
        write_event(
            out,
            "error",
            &json!({"type": "error", "error": {"type": error_type, "message": message}}),
        );
    }
}

impl Reencode for AnthropicEncoder {
    fn on_event(&mut self, data: &str, out: &mut BytesMut) -> Relayed {
        self.event(data, out)
    }

    fn on_broken(&mut self, message: &str, out: &mut BytesMut) {
        self.fail("api_error", message, out);
    }

    fn on_end(&mut self, out: &mut BytesMut) {
        self.finish(out);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn events(bytes: &[u8]) -> Vec<(String, Value)> {
        let text = std::str::from_utf8(bytes).unwrap();
        text.split("\n\n")
            .filter(|e| !e.is_empty())
            .map(|e| {
                let mut lines = e.lines();
                let name = lines
                    .next()
                    .unwrap()
                    .trim_start_matches("event: ")
                    .to_owned();
                let data = lines.next().unwrap().trim_start_matches("data: ");
                (name, serde_json::from_str(data).unwrap())
            })
            .collect()
    }

    #[test]
    fn text_then_tool_call_sequence() {
        let mut enc = AnthropicEncoder::new("m");
        let mut out = BytesMut::new();
        for chunk in [
            json!({"id": "c1", "choices": [{"index": 0, "delta": {"role": "assistant", "content": ""}}]}),
            json!({"id": "c1", "choices": [{"index": 0, "delta": {"reasoning_content": "hmm"}}]}),
            json!({"id": "c1", "choices": [{"index": 0, "delta": {"content": "Hel"}}]}),
            json!({"id": "c1", "choices": [{"index": 0, "delta": {"content": "lo"}}]}),
            json!({"id": "c1", "choices": [{"index": 0, "delta": {"tool_calls": [{"index": 0, "id": "call_1",
                "type": "function", "function": {"name": "read", "arguments": ""}}]}}]}),
            json!({"id": "c1", "choices": [{"index": 0, "delta": {"tool_calls": [{"index": 0,
                "function": {"arguments": "{\"path\":"}}]}}]}),
            json!({"id": "c1", "choices": [{"index": 0, "delta": {"tool_calls": [{"index": 0,
                "function": {"arguments": "\"a\"}"}}]}}]}),
            json!({"id": "c1", "choices": [{"index": 0, "delta": {}, "finish_reason": "tool_calls"}]}),
            json!({"id": "c1", "choices": [], "usage": {"prompt_tokens": 9, "completion_tokens": 4}}),
        ] {
            enc.chunk(&chunk, &mut out);
        }
        enc.finish(&mut out);
        let ev = events(&out);
        let names: Vec<&str> = ev.iter().map(|(n, _)| n.as_str()).collect();
        assert_eq!(
            names,
            [
                "message_start",
                "ping",
                "content_block_start",
                "content_block_delta",
                "content_block_stop",
                "content_block_start",
                "content_block_delta",
                "content_block_delta",
                "content_block_stop",
                "content_block_start",
                "content_block_delta",
                "content_block_delta",
                "content_block_stop",
                "message_delta",
                "message_stop"
            ]
        );
        assert_eq!(ev[2].1["content_block"]["type"], "thinking");
        assert_eq!(ev[5].1["content_block"]["type"], "text");
        assert_eq!(
            ev[9].1["content_block"],
            json!({"type": "tool_use", "id": "call_1", "name": "read", "input": {}})
        );
        assert_eq!(ev[10].1["delta"]["partial_json"], "{\"path\":");
        assert_eq!(ev[13].1["delta"]["stop_reason"], "tool_use");
        assert_eq!(ev[13].1["usage"]["output_tokens"], 4);
    }

    #[test]
    fn empty_stream_still_has_a_block_and_error_is_terminal() {
        let mut enc = AnthropicEncoder::new("m");
        let mut out = BytesMut::new();
        enc.finish(&mut out);
        let names: Vec<String> = events(&out).into_iter().map(|(n, _)| n).collect();
        assert!(names.contains(&"content_block_start".to_string()));
        let mut enc = AnthropicEncoder::new("m");
        let mut out = BytesMut::new();
        enc.chunk(
            &json!({"choices": [{"index": 0, "delta": {"content": "x"}}]}),
            &mut out,
        );
        enc.fail("api_error", "boom", &mut out);
        enc.finish(&mut out);
        let ev = events(&out);
        assert_eq!(ev.last().unwrap().0, "error");
    }
}
