//! OpenAI Responses ⇄ Chat Completions, for Responses clients (Codex, Hermes) in front of an
//! upstream that only speaks chat completions.
//!
//! Lossy by nature: reasoning items, hosted tools and server-side state have no chat form.
//! Reasoning items are dropped (never fabricated: clients replay what they get), hosted tools
//! are not offered, and state the proxy cannot keep (`previous_response_id`) is refused by
//! [`check_translatable`] with a message saying so.

use serde_json::{Map, Value, json};

use crate::error::ProxyError;

/// Chat message role for a Responses message role: chat-only backends rarely know
/// `developer`, so it becomes `system`.
fn chat_role(role: &str) -> &str {
    match role {
        "developer" => "system",
        other => other,
    }
}

/// The text of a content list (`input_text`, `output_text`, `refusal` parts) or a string.
pub(crate) fn text_of(content: &Value) -> String {
    match content {
        Value::String(s) => s.clone(),
        Value::Array(parts) => parts
            .iter()
            .filter_map(|p| match p.get("type").and_then(Value::as_str) {
                Some("input_text" | "output_text" | "text") => p.get("text")?.as_str(),
                Some("refusal") => p.get("refusal")?.as_str(),
                _ => None,
            })
            .collect::<Vec<_>>()
            .join("\n\n"),
        _ => String::new(),
    }
}

fn user_content(content: &Value) -> Value {
    let Value::Array(parts) = content else {
        return Value::String(text_of(content));
    };
    let mut out = Vec::new();
    for p in parts {
        match p.get("type").and_then(Value::as_str) {
            Some("input_text" | "output_text" | "text") => {
                if let Some(t) = p.get("text").and_then(Value::as_str) {
                    out.push(json!({"type": "text", "text": t}));
                }
            }
            Some("input_image") => {
                if let Some(url) = p.get("image_url").and_then(Value::as_str) {
                    let mut image = json!({"url": url});
                    if let Some(detail) = p.get("detail").and_then(Value::as_str) {
                        image["detail"] = json!(detail);
                    }
                    out.push(json!({"type": "image_url", "image_url": image}));
                }
            }
            _ => {}
        }
    }
    if out.iter().all(|p| p["type"] == "text") {
        let texts: Vec<&str> = out.iter().filter_map(|p| p["text"].as_str()).collect();
        Value::String(texts.join("\n\n"))
    } else {
        Value::Array(out)
    }
}

/// A tool output is a string or a list of parts; chat tool messages take text.
fn output_text(output: Option<&Value>) -> String {
    match output {
        Some(Value::String(s)) => s.clone(),
        Some(v @ Value::Array(_)) => text_of(v),
        Some(Value::Null) | None => String::new(),
        Some(other) => other.to_string(),
    }
}

/// Append one tool call: consecutive calls (and the text before them) form one assistant
/// message, as chat backends expect.
fn push_call(out: &mut Vec<Value>, call: Value) {
    if let Some(last) = out.last_mut()
        && last.get("role").and_then(Value::as_str) == Some("assistant")
    {
        match last.get_mut("tool_calls") {
            Some(Value::Array(calls)) => calls.push(call),
            _ => {
                last["tool_calls"] = json!([call]);
                if last.get("content").and_then(Value::as_str) == Some("") {
                    last["content"] = Value::Null;
                }
            }
        }
        return;
    }
    out.push(json!({"role": "assistant", "content": null, "tool_calls": [call]}));
}

fn convert_item(item: &Value, out: &mut Vec<Value>) {
    let kind = item
        .get("type")
        .and_then(Value::as_str)
        .unwrap_or("message");
    let str_of = |key: &str| item.get(key).and_then(Value::as_str).unwrap_or_default();
    match kind {
        "message" => {
            let role = chat_role(str_of("role"));
            let content = item.get("content").unwrap_or(&Value::Null);
            let content = if role == "user" {
                user_content(content)
            } else {
                Value::String(text_of(content))
            };
            out.push(json!({"role": role, "content": content}));
        }
        "function_call" => push_call(
            out,
            json!({"id": str_of("call_id"), "type": "function",
                "function": {"name": str_of("name"), "arguments": str_of("arguments")}}),
        ),
        "function_call_output" => out.push(json!({
            "role": "tool",
            "tool_call_id": str_of("call_id"),
            "content": output_text(item.get("output")),
        })),
        // Reasoning, hosted tool calls, item references: nothing a chat backend can read.
        _ => {}
    }
}

/// `instructions` and `input` as chat messages.
pub fn chat_messages(body: &Map<String, Value>) -> Vec<Value> {
    let mut out = Vec::new();
    if let Some(text) = body
        .get("instructions")
        .and_then(Value::as_str)
        .filter(|s| !s.is_empty())
    {
        out.push(json!({"role": "system", "content": text}));
    }
    match body.get("input") {
        Some(Value::String(s)) => out.push(json!({"role": "user", "content": s})),
        Some(Value::Array(items)) => items.iter().for_each(|i| convert_item(i, &mut out)),
        _ => {}
    }
    out
}

fn convert_tool(tool: &Value) -> Option<Value> {
    if tool.get("type").and_then(Value::as_str) != Some("function") {
        return None;
    }
    let mut function = Map::new();
    function.insert("name".into(), tool.get("name")?.clone());
    for key in ["description", "parameters", "strict"] {
        if let Some(v) = tool.get(key).filter(|v| !v.is_null()) {
            function.insert(key.into(), v.clone());
        }
    }
    function
        .entry("parameters")
        .or_insert_with(|| json!({"type": "object", "properties": {}}));
    Some(json!({"type": "function", "function": function}))
}

fn convert_tool_choice(tc: &Value) -> Option<Value> {
    match tc {
        Value::String(s) if matches!(s.as_str(), "auto" | "none" | "required") => Some(tc.clone()),
        Value::Object(o) if o.get("type").and_then(Value::as_str) == Some("function") => {
            Some(json!({"type": "function", "function": {"name": o.get("name")?}}))
        }
        _ => None,
    }
}

fn response_format(format: &Value) -> Option<Value> {
    match format.get("type").and_then(Value::as_str)? {
        "json_schema" => {
            let mut schema = Map::new();
            for key in ["name", "schema", "strict", "description"] {
                if let Some(v) = format.get(key).filter(|v| !v.is_null()) {
                    schema.insert(key.into(), v.clone());
                }
            }
            Some(json!({"type": "json_schema", "json_schema": schema}))
        }
        "json_object" => Some(json!({"type": "json_object"})),
        _ => None,
    }
}

/// Responses request → Chat Completions request.
pub fn request_to_chat(body: &Map<String, Value>) -> Map<String, Value> {
    let mut out = Map::new();
    if let Some(model) = body.get("model") {
        out.insert("model".into(), model.clone());
    }
    out.insert("messages".into(), Value::Array(chat_messages(body)));
    let tools: Vec<Value> = body
        .get("tools")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(convert_tool)
        .collect();
    if !tools.is_empty() {
        out.insert("tools".into(), Value::Array(tools));
        if let Some(tc) = body.get("tool_choice").and_then(convert_tool_choice) {
            out.insert("tool_choice".into(), tc);
        }
        if let Some(p) = body.get("parallel_tool_calls").filter(|v| v.is_boolean()) {
            out.insert("parallel_tool_calls".into(), p.clone());
        }
    }
    if let Some(max) = body.get("max_output_tokens").filter(|v| v.is_u64()) {
        out.insert("max_tokens".into(), max.clone());
    }
    for key in ["temperature", "top_p", "user", "prompt_cache_key"] {
        if let Some(v) = body.get(key).filter(|v| !v.is_null()) {
            out.insert(key.into(), v.clone());
        }
    }
    if let Some(effort) = body
        .get("reasoning")
        .and_then(|r| r.get("effort"))
        .filter(|v| v.is_string())
    {
        out.insert("reasoning_effort".into(), effort.clone());
    }
    if let Some(format) = body
        .get("text")
        .and_then(|t| t.get("format"))
        .and_then(response_format)
    {
        out.insert("response_format".into(), format);
    }
    if body.get("stream").and_then(Value::as_bool) == Some(true) {
        out.insert("stream".into(), json!(true));
        // `response.completed` carries usage.
        out.insert("stream_options".into(), json!({"include_usage": true}));
    }
    out
}

fn not_translatable(param: &str, what: &str) -> ProxyError {
    ProxyError::bad_param(
        param,
        format!(
            "{what} is not supported: the upstream speaks chat completions only, so MetaClaw \
             translates the Responses API and keeps no state between requests. Send the whole \
             conversation in `input` (with `store: false`), or set `llm.responses_api: native` \
             if the upstream has the Responses API"
        ),
    )
}

/// Refuse what a chat-completions upstream cannot do, naming the field, instead of silently
/// answering a different question.
pub fn check_translatable(body: &Map<String, Value>) -> Result<(), ProxyError> {
    let set = |key: &str| body.get(key).is_some_and(|v| !v.is_null());
    if set("previous_response_id") {
        return Err(not_translatable(
            "previous_response_id",
            "`previous_response_id`",
        ));
    }
    if set("conversation") {
        return Err(not_translatable("conversation", "`conversation`"));
    }
    if body.get("background").and_then(Value::as_bool) == Some(true) {
        return Err(not_translatable("background", "`background: true`"));
    }
    let items = body.get("input").and_then(Value::as_array);
    for (i, item) in items.into_iter().flatten().enumerate() {
        let parts = item.get("content").and_then(Value::as_array);
        for (j, part) in parts.into_iter().flatten().enumerate() {
            let kind = part.get("type").and_then(Value::as_str);
            let file_image = kind == Some("input_image") && !part["image_url"].is_string();
            if kind == Some("input_file") || file_image {
                return Err(ProxyError::bad_param(
                    &format!("input[{i}].content[{j}]"),
                    format!(
                        "`input[{i}].content[{j}]`: files and images by `file_id` cannot be \
                         sent to a chat-completions upstream; send images as `image_url`"
                    ),
                ));
            }
        }
    }
    Ok(())
}

/// A Responses `response` object → the `chat.completion` it stands for (the turn log keeps
/// chat-completions shapes, which the transcript, training and the dashboard read).
pub fn response_to_chat(resp: &Value) -> Value {
    let mut text = String::new();
    let mut calls = Vec::new();
    for item in resp
        .get("output")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        match item.get("type").and_then(Value::as_str) {
            Some("message") => text.push_str(&text_of(item.get("content").unwrap_or(&Value::Null))),
            Some("function_call") => calls.push(json!({
                "id": item.get("call_id").cloned().unwrap_or(Value::Null),
                "type": "function",
                "function": {
                    "name": item.get("name").cloned().unwrap_or(json!("")),
                    "arguments": item.get("arguments").cloned().unwrap_or(json!("")),
                }
            })),
            _ => {}
        }
    }
    let finish = match (
        resp.get("status").and_then(Value::as_str),
        resp.pointer("/incomplete_details/reason")
            .and_then(Value::as_str),
    ) {
        (Some("incomplete"), Some("content_filter")) => "content_filter",
        (Some("incomplete"), _) => "length",
        _ if !calls.is_empty() => "tool_calls",
        _ => "stop",
    };
    let mut message = json!({"role": "assistant",
        "content": if text.is_empty() && !calls.is_empty() { Value::Null } else { json!(text) }});
    if !calls.is_empty() {
        message["tool_calls"] = Value::Array(calls);
    }
    let usage = resp.get("usage").filter(|u| u.is_object()).map(|u| {
        json!({
            "prompt_tokens": u.get("input_tokens").cloned().unwrap_or(json!(0)),
            "completion_tokens": u.get("output_tokens").cloned().unwrap_or(json!(0)),
            "total_tokens": u.get("total_tokens").cloned().unwrap_or(json!(0)),
        })
    });
    json!({
        "id": resp.get("id").cloned().unwrap_or(Value::Null),
        "object": "chat.completion",
        "model": resp.get("model").cloned().unwrap_or(Value::Null),
        "choices": [{"index": 0, "message": message, "finish_reason": finish}],
        "usage": usage.unwrap_or(Value::Null),
    })
}

/// Chat `usage` → Responses `usage`.
pub(crate) fn usage_from_chat(u: &Value) -> Value {
    let input = u.get("prompt_tokens").and_then(Value::as_u64).unwrap_or(0);
    let output = u
        .get("completion_tokens")
        .and_then(Value::as_u64)
        .unwrap_or(0);
    json!({
        "input_tokens": input,
        "input_tokens_details": {"cached_tokens": u.pointer("/prompt_tokens_details/cached_tokens")
            .and_then(Value::as_u64).unwrap_or(0)},
        "output_tokens": output,
        "output_tokens_details": {"reasoning_tokens": u.pointer("/completion_tokens_details/reasoning_tokens")
            .and_then(Value::as_u64).unwrap_or(0)},
        "total_tokens": u.get("total_tokens").and_then(Value::as_u64).unwrap_or(input + output),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn obj(v: Value) -> Map<String, Value> {
        v.as_object().unwrap().clone()
    }

    #[test]
    fn codex_shaped_history_becomes_chat_messages() {
        let body = obj(json!({
            "model": "m", "stream": true, "store": false, "instructions": "Be brief.",
            "input": [
                {"type": "message", "role": "developer", "content": [
                    {"type": "input_text", "text": "base prompt"}, {"type": "input_text", "text": "perms"}]},
                {"type": "message", "role": "user", "content": [
                    {"type": "input_text", "text": "look"},
                    {"type": "input_image", "image_url": "data:image/png;base64,AA", "detail": "low"}]},
                {"type": "reasoning", "id": "rs_1", "summary": [], "encrypted_content": "xx"},
                {"type": "message", "role": "assistant", "id": "msg_1", "content": [
                    {"type": "output_text", "text": "checking", "annotations": []}]},
                {"type": "function_call", "id": "fc_1", "call_id": "call_1", "name": "exec", "arguments": "{\"cmd\":\"ls\"}"},
                {"type": "function_call", "id": "fc_2", "call_id": "call_2", "name": "exec", "arguments": "{}"},
                {"type": "function_call_output", "call_id": "call_1", "output": "a.txt"},
                {"type": "function_call_output", "call_id": "call_2", "output": [{"type": "input_text", "text": "ok"}]},
                {"role": "user", "content": "thanks"}
            ],
            "tools": [{"type": "function", "name": "exec", "description": "run", "parameters": {"type": "object"}, "strict": false},
                      {"type": "web_search"}, {"type": "namespace", "name": "x", "tools": []}],
            "tool_choice": "auto", "parallel_tool_calls": true, "max_output_tokens": 50,
            "temperature": 0.2, "reasoning": {"effort": "low", "summary": "auto"},
            "include": ["reasoning.encrypted_content"], "client_metadata": {"a": 1},
            "prompt_cache_key": "thread-1"
        }));
        let out = request_to_chat(&body);
        let msgs = out["messages"].as_array().unwrap();
        assert_eq!(msgs[0], json!({"role": "system", "content": "Be brief."}));
        assert_eq!(
            msgs[1],
            json!({"role": "system", "content": "base prompt\n\nperms"})
        );
        assert_eq!(
            msgs[2]["content"][0],
            json!({"type": "text", "text": "look"})
        );
        assert_eq!(
            msgs[2]["content"][1],
            json!({"type": "image_url", "image_url": {"url": "data:image/png;base64,AA", "detail": "low"}})
        );
        assert_eq!(msgs[3]["role"], "assistant");
        assert_eq!(msgs[3]["content"], "checking");
        assert_eq!(msgs[3]["tool_calls"][0]["id"], "call_1");
        assert_eq!(msgs[3]["tool_calls"][1]["function"]["name"], "exec");
        assert_eq!(
            msgs[4],
            json!({"role": "tool", "tool_call_id": "call_1", "content": "a.txt"})
        );
        assert_eq!(msgs[5]["content"], "ok");
        assert_eq!(msgs[6], json!({"role": "user", "content": "thanks"}));
        assert_eq!(msgs.len(), 7, "the reasoning item is dropped");
        assert_eq!(out["tools"].as_array().unwrap().len(), 1);
        assert_eq!(out["tools"][0]["function"]["name"], "exec");
        assert_eq!(out["tool_choice"], "auto");
        assert_eq!(out["max_tokens"], 50);
        assert_eq!(out["reasoning_effort"], "low");
        assert_eq!(out["prompt_cache_key"], "thread-1");
        assert_eq!(out["stream_options"], json!({"include_usage": true}));
        for key in [
            "store",
            "include",
            "client_metadata",
            "input",
            "instructions",
        ] {
            assert!(out.get(key).is_none(), "{key} was forwarded");
        }
    }

    #[test]
    fn a_string_input_and_a_named_tool_choice() {
        let body = obj(
            json!({"input": "hi", "tools": [{"type": "function", "name": "f"}],
            "tool_choice": {"type": "function", "name": "f"},
            "text": {"format": {"type": "json_schema", "name": "s", "schema": {"type": "object"}, "strict": true}}}),
        );
        let out = request_to_chat(&body);
        assert_eq!(out["messages"], json!([{"role": "user", "content": "hi"}]));
        assert_eq!(
            out["tool_choice"],
            json!({"type": "function", "function": {"name": "f"}})
        );
        assert_eq!(
            out["tools"][0]["function"]["parameters"],
            json!({"type": "object", "properties": {}})
        );
        assert_eq!(out["response_format"]["json_schema"]["name"], "s");
    }

    #[test]
    fn state_and_files_are_refused_by_name() {
        let err = check_translatable(&obj(
            json!({"input": "x", "previous_response_id": "resp_1"}),
        ))
        .unwrap_err();
        assert!(
            err.to_string()
                .contains("`previous_response_id` is not supported")
        );
        assert!(
            matches!(err, ProxyError::BadRequest { param: Some(p), .. } if p == "previous_response_id")
        );
        assert!(
            check_translatable(&obj(
                json!({"input": "x", "previous_response_id": null, "store": false})
            ))
            .is_ok()
        );
        let err = check_translatable(&obj(json!({"input": [{"role": "user", "content": [
            {"type": "input_text", "text": "a"}, {"type": "input_file", "file_id": "f"}]}]})))
        .unwrap_err();
        assert!(
            matches!(err, ProxyError::BadRequest { param: Some(p), .. } if p == "input[0].content[1]")
        );
    }

    #[test]
    fn response_back_to_chat_for_the_log() {
        let resp = json!({"id": "resp_1", "model": "m", "status": "completed", "output": [
            {"type": "reasoning", "id": "rs", "summary": []},
            {"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "hi"}]},
            {"type": "function_call", "call_id": "c1", "name": "f", "arguments": "{}"}],
            "usage": {"input_tokens": 3, "output_tokens": 4, "total_tokens": 7}});
        let chat = response_to_chat(&resp);
        assert_eq!(chat["choices"][0]["message"]["content"], "hi");
        assert_eq!(chat["choices"][0]["message"]["tool_calls"][0]["id"], "c1");
        assert_eq!(chat["choices"][0]["finish_reason"], "tool_calls");
        assert_eq!(chat["usage"]["completion_tokens"], 4);
    }
}
