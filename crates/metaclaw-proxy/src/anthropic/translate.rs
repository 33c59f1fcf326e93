//! Anthropic Messages ⇄ OpenAI Chat Completions, for Anthropic clients in front of an
//! OpenAI-compatible upstream.

use serde_json::{Map, Value, json};

fn text_of_blocks(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        Value::Array(blocks) => blocks
            .iter()
            .filter_map(|b| match b.get("type").and_then(Value::as_str) {
                Some("text") | None => b.get("text").and_then(Value::as_str),
                _ => None,
            })
            .collect::<Vec<_>>()
            .join("\n\n"),
        _ => String::new(),
    }
}

fn image_part(block: &Value) -> Option<Value> {
    let source = block.get("source")?;
    let url = match source.get("type").and_then(Value::as_str)? {
        "base64" => format!(
            "data:{};base64,{}",
            source.get("media_type")?.as_str()?,
            source.get("data")?.as_str()?
        ),
        "url" => source.get("url")?.as_str()?.to_owned(),
        _ => return None,
    };
    Some(json!({"type": "image_url", "image_url": {"url": url}}))
}

/// Convert one Anthropic message into one or more OpenAI messages.
fn convert_message(m: &Value, out: &mut Vec<Value>) {
    let role = m.get("role").and_then(Value::as_str).unwrap_or("user");
    let blocks = match m.get("content") {
        Some(Value::String(s)) => {
            out.push(json!({"role": role, "content": s}));
            return;
        }
        Some(Value::Array(b)) => b,
        _ => return,
    };
    if role == "system" {
        // A mid-conversation system message stays a system message where it stands.
        out.push(json!({"role": "system", "content": text_of_blocks(m.get("content").unwrap_or(&Value::Null))}));
        return;
    }
    if role == "assistant" {
        let mut text = Vec::new();
        let mut reasoning = Vec::new();
        let mut calls = Vec::new();
        for b in blocks {
            match b.get("type").and_then(Value::as_str) {
                Some("text") => text.extend(b.get("text").and_then(Value::as_str)),
                Some("thinking") => reasoning.extend(b.get("thinking").and_then(Value::as_str)),
                Some("tool_use") => calls.push(json!({
                    "id": b.get("id").cloned().unwrap_or(Value::Null),
                    "type": "function",
                    "function": {
                        "name": b.get("name").cloned().unwrap_or(Value::Null),
                        "arguments": b.get("input").map_or_else(|| "{}".to_owned(), Value::to_string),
                    }
                })),
                _ => {}
            }
        }
        let mut msg = Map::new();
        msg.insert("role".into(), json!("assistant"));
        msg.insert(
            "content".into(),
            if text.is_empty() {
                Value::Null
            } else {
                Value::String(text.join(""))
            },
        );
        if !reasoning.is_empty() {
            msg.insert(
                "reasoning_content".into(),
                Value::String(reasoning.join("")),
            );
        }
        if !calls.is_empty() {
            msg.insert("tool_calls".into(), Value::Array(calls));
        }
        out.push(Value::Object(msg));
        return;
    }
    // User turn: tool results become `tool` messages first (they answer the previous
    // assistant turn), then whatever else the user said.
    let mut parts = Vec::new();
    for b in blocks {
        match b.get("type").and_then(Value::as_str) {
            Some("tool_result") => {
                let mut content = b.get("content").map(text_of_blocks).unwrap_or_default();
                if b.get("is_error").and_then(Value::as_bool) == Some(true) {
                    content = format!("[tool error] {content}");
                }
                out.push(json!({
                    "role": "tool",
                    "tool_call_id": b.get("tool_use_id").cloned().unwrap_or(Value::Null),
                    "content": content,
                }));
            }
            Some("text") => {
                parts.push(
                    json!({"type": "text", "text": b.get("text").cloned().unwrap_or(json!(""))}),
                );
            }
            Some("image") => parts.extend(image_part(b)),
            Some("document") => {
                if let Some(t) = b.pointer("/source/data").and_then(Value::as_str) {
                    parts.push(json!({"type": "text", "text": t}));
                }
            }
            _ => {}
        }
    }
    if parts.is_empty() {
        return;
    }
    let only_text = parts.iter().all(|p| p["type"] == "text");
    let content = if only_text {
        Value::String(
            parts
                .iter()
                .filter_map(|p| p["text"].as_str())
                .collect::<Vec<_>>()
                .join("\n\n"),
        )
    } else {
        Value::Array(parts)
    };
    out.push(json!({"role": "user", "content": content}));
}

fn convert_tool_choice(tc: &Value) -> Option<Value> {
    match tc.get("type").and_then(Value::as_str)? {
        "auto" => Some(json!("auto")),
        "any" => Some(json!("required")),
        "none" => Some(json!("none")),
        "tool" => Some(json!({"type": "function", "function": {"name": tc.get("name")?}})),
        _ => None,
    }
}

/// Anthropic Messages request → OpenAI Chat Completions request.
pub fn request_to_openai(body: &Map<String, Value>) -> Map<String, Value> {
    let mut messages = Vec::new();
    if let Some(system) = body.get("system") {
        let text = text_of_blocks(system);
        if !text.is_empty() {
            messages.push(json!({"role": "system", "content": text}));
        }
    }
    for m in body
        .get("messages")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        convert_message(m, &mut messages);
    }
    let mut out = Map::new();
    if let Some(model) = body.get("model") {
        out.insert("model".into(), model.clone());
    }
    out.insert("messages".into(), Value::Array(messages));
    out.insert(
        "max_tokens".into(),
        body.get("max_tokens").cloned().unwrap_or(json!(2048)),
    );
    for key in ["temperature", "top_p"] {
        if let Some(v) = body.get(key) {
            out.insert(key.into(), v.clone());
        }
    }
    if let Some(stop) = body.get("stop_sequences") {
        out.insert("stop".into(), stop.clone());
    }
    if let Some(tools) = body.get("tools").and_then(Value::as_array) {
        let converted: Vec<Value> = tools
            .iter()
            .filter(|t| t.get("name").is_some())
            .map(|t| {
                json!({"type": "function", "function": {
                    "name": t["name"],
                    "description": t.get("description").cloned().unwrap_or(json!("")),
                    "parameters": t.get("input_schema").cloned().unwrap_or(json!({"type": "object"})),
                }})
            })
            .collect();
        if !converted.is_empty() {
            out.insert("tools".into(), Value::Array(converted));
        }
    }
    if let Some(tc) = body.get("tool_choice").and_then(convert_tool_choice) {
        out.insert("tool_choice".into(), tc);
    }
    if let Some(user) = body.get("metadata").and_then(|m| m.get("user_id")) {
        out.insert("user".into(), user.clone());
    }
    if body.get("stream").and_then(Value::as_bool) == Some(true) {
        out.insert("stream".into(), json!(true));
        // Anthropic clients expect usage at the end of the stream.
        out.insert("stream_options".into(), json!({"include_usage": true}));
    }
    out
}

/// OpenAI `finish_reason` → Anthropic `stop_reason`.
pub fn stop_reason(finish: Option<&str>, has_tool_calls: bool) -> &'static str {
    if has_tool_calls {
        return "tool_use";
    }
    match finish {
        Some("length") => "max_tokens",
        Some("tool_calls" | "function_call") => "tool_use",
        Some("content_filter") => "refusal",
        _ => "end_turn",
    }
}

pub fn message_id(openai_id: Option<&str>) -> String {
    match openai_id {
        Some(id) if id.starts_with("msg_") => id.to_owned(),
        Some(id) if !id.is_empty() => format!("msg_{id}"),
        _ => format!("msg_{}", uuid::Uuid::new_v4().simple()),
    }
}

pub fn tool_use_id(openai_id: Option<&str>) -> String {
    match openai_id {
        Some(id) if !id.is_empty() => id.to_owned(),
        _ => format!("toolu_{}", &uuid::Uuid::new_v4().simple().to_string()[..24]),
    }
}

/// Tool-call arguments are a JSON string in OpenAI and an object in Anthropic.
pub fn parse_arguments(args: &str) -> Value {
    if args.trim().is_empty() {
        return json!({});
    }
    serde_json::from_str(args).unwrap_or_else(|_| json!({"_raw_arguments": args}))
}

/// OpenAI Chat Completions response → Anthropic Messages response.
pub fn response_to_anthropic(resp: &Value, model: &str) -> Value {
    let message = resp
        .pointer("/choices/0/message")
        .cloned()
        .unwrap_or(json!({}));
    let mut content = Vec::new();
    let reasoning = message
        .get("reasoning_content")
        .or_else(|| message.get("reasoning"))
        .and_then(Value::as_str)
        .filter(|s| !s.is_empty());
    if let Some(r) = reasoning {
        content.push(json!({"type": "thinking", "thinking": r, "signature": ""}));
    }
    let text = match message.get("content") {
        Some(Value::String(s)) => s.clone(),
        Some(v @ Value::Array(_)) => text_of_blocks(v),
        _ => String::new(),
    };
    if !text.is_empty() {
        content.push(json!({"type": "text", "text": text}));
    }
    let calls = message
        .get("tool_calls")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    for c in &calls {
        content.push(json!({
            "type": "tool_use",
            "id": tool_use_id(c.get("id").and_then(Value::as_str)),
            "name": c.pointer("/function/name").cloned().unwrap_or(json!("")),
            "input": parse_arguments(c.pointer("/function/arguments").and_then(Value::as_str).unwrap_or("")),
        }));
    }
    if content.is_empty() {
        content.push(json!({"type": "text", "text": ""}));
    }
    let finish = resp
        .pointer("/choices/0/finish_reason")
        .and_then(Value::as_str);
    json!({
        "id": message_id(resp.get("id").and_then(Value::as_str)),
        "type": "message",
        "role": "assistant",
        "model": resp.get("model").and_then(Value::as_str).unwrap_or(model),
        "content": content,
        "stop_reason": stop_reason(finish, !calls.is_empty()),
        "stop_sequence": null,
        "usage": {
            "input_tokens": resp.pointer("/usage/prompt_tokens").and_then(Value::as_u64).unwrap_or(0),
            "output_tokens": resp.pointer("/usage/completion_tokens").and_then(Value::as_u64).unwrap_or(0),
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn request_with_system_blocks_tools_and_tool_results() {
        let body = json!({
            "model": "claude", "max_tokens": 100, "stream": true,
            "system": [{"type": "text", "text": "stable", "cache_control": {"type": "ephemeral"}},
                       {"type": "text", "text": "dynamic"}],
            "tools": [{"name": "read", "description": "Read a file", "input_schema": {"type": "object"}}],
            "tool_choice": {"type": "any"},
            "stop_sequences": ["END"],
            "messages": [
                {"role": "user", "content": "read HELLO"},
                {"role": "assistant", "content": [
                    {"type": "text", "text": "sure"},
                    {"type": "tool_use", "id": "toolu1", "name": "read", "input": {"path": "HELLO"}}]},
                {"role": "user", "content": [
                    {"type": "tool_result", "tool_use_id": "toolu1", "content": [{"type": "text", "text": "hi"}]},
                    {"type": "text", "text": "thanks"}]},
                {"role": "user", "content": [{"type": "text", "text": "internal context"}]}
            ]
        });
        let out = request_to_openai(body.as_object().unwrap());
        let msgs = out["messages"].as_array().unwrap();
        assert_eq!(
            msgs[0],
            json!({"role": "system", "content": "stable\n\ndynamic"})
        );
        assert_eq!(msgs[1], json!({"role": "user", "content": "read HELLO"}));
        assert_eq!(
            msgs[2]["tool_calls"][0]["function"]["arguments"],
            "{\"path\":\"HELLO\"}"
        );
        assert_eq!(msgs[2]["content"], "sure");
        assert_eq!(
            msgs[3],
            json!({"role": "tool", "tool_call_id": "toolu1", "content": "hi"})
        );
        assert_eq!(msgs[4], json!({"role": "user", "content": "thanks"}));
        assert_eq!(msgs[5]["content"], "internal context");
        assert_eq!(
            out["tools"][0]["function"]["parameters"],
            json!({"type": "object"})
        );
        assert_eq!(out["tool_choice"], "required");
        assert_eq!(out["stop"], json!(["END"]));
        assert_eq!(out["stream_options"], json!({"include_usage": true}));
    }

    #[test]
    fn a_mid_conversation_system_message_stays_a_system_message() {
        let body = json!({"model": "claude", "max_tokens": 10, "messages": [
            {"role": "user", "content": "hi"},
            {"role": "system", "content": [{"type": "text", "text": "agents: a"}, {"type": "text", "text": "skills: b"}]},
        ]});
        let out = request_to_openai(body.as_object().unwrap());
        assert_eq!(
            out["messages"][1],
            json!({"role": "system", "content": "agents: a\n\nskills: b"})
        );
    }

    #[test]
    fn response_with_text_tool_calls_and_usage() {
        let resp = json!({"id": "chatcmpl-1", "model": "m", "choices": [{"index": 0, "finish_reason": "tool_calls",
            "message": {"role": "assistant", "content": "let me look", "tool_calls": [
                {"id": "call_1", "type": "function", "function": {"name": "read", "arguments": "{\"path\":\"a\"}"}}]}}],
            "usage": {"prompt_tokens": 12, "completion_tokens": 5}});
        let out = response_to_anthropic(&resp, "fallback");
        assert_eq!(out["id"], "msg_chatcmpl-1");
        assert_eq!(out["stop_reason"], "tool_use");
        assert_eq!(
            out["content"][0],
            json!({"type": "text", "text": "let me look"})
        );
        assert_eq!(out["content"][1]["input"], json!({"path": "a"}));
        assert_eq!(
            out["usage"],
            json!({"input_tokens": 12, "output_tokens": 5})
        );
    }

    #[test]
    fn stop_reasons() {
        assert_eq!(stop_reason(Some("stop"), false), "end_turn");
        assert_eq!(stop_reason(Some("length"), false), "max_tokens");
        assert_eq!(stop_reason(Some("stop"), true), "tool_use");
    }
}
