//! Reading and checking request bodies. Everything a client can get wrong ends here as a
//! 400-class error in the client's API shape.

use axum::body::Body;
use serde_json::{Map, Value};

use crate::error::ProxyError;

/// Read at most `limit` bytes, then parse a JSON object.
pub(crate) async fn read_json_object(
    body: Body,
    limit: u64,
) -> Result<Map<String, Value>, ProxyError> {
    let limit_usize = usize::try_from(limit).unwrap_or(usize::MAX);
    let bytes = axum::body::to_bytes(body, limit_usize)
        .await
        .map_err(|err| {
            if is_length_limit(&err) {
                ProxyError::TooLarge { limit }
            } else {
                ProxyError::bad_request(format!("could not read the request body: {err}"))
            }
        })?;
    parse_object(&bytes)
}

fn is_length_limit(err: &axum::Error) -> bool {
    let mut source: Option<&dyn std::error::Error> = Some(err);
    while let Some(e) = source {
        if e.to_string().contains("length limit") {
            return true;
        }
        source = e.source();
    }
    false
}

/// Parse a request body into a JSON object (also the cargo-fuzz entry point).
pub fn parse_object(bytes: &[u8]) -> Result<Map<String, Value>, ProxyError> {
    if bytes.is_empty() {
        return Err(ProxyError::bad_request(
            "the request body is empty; expected a JSON object",
        ));
    }
    let text = std::str::from_utf8(bytes).map_err(|e| {
        ProxyError::bad_request(format!(
            "the request body is not valid UTF-8 (invalid byte at offset {})",
            e.valid_up_to()
        ))
    })?;
    match serde_json::from_str::<Value>(text) {
        Ok(Value::Object(map)) => Ok(map),
        Ok(other) => Err(ProxyError::bad_request(format!(
            "the request body must be a JSON object, not {}",
            kind(&other)
        ))),
        Err(e) => Err(ProxyError::bad_request(format!(
            "the request body is not valid JSON: {e}"
        ))),
    }
}

pub(crate) fn kind(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

fn expect_type(
    body: &Map<String, Value>,
    key: &str,
    ok: fn(&Value) -> bool,
    what: &str,
) -> Result<(), ProxyError> {
    match body.get(key) {
        None | Some(Value::Null) => Ok(()),
        Some(v) if ok(v) => Ok(()),
        Some(v) => Err(ProxyError::bad_param(
            key,
            format!("`{key}` must be {what}, got {}", kind(v)),
        )),
    }
}

fn is_count(v: &Value) -> bool {
    v.as_u64().is_some()
}

fn messages(body: &Map<String, Value>) -> Result<&Vec<Value>, ProxyError> {
    match body.get("messages") {
        None | Some(Value::Null) => Err(ProxyError::bad_param(
            "messages",
            "`messages` is required: a non-empty array of message objects",
        )),
        Some(Value::Array(list)) if list.is_empty() => Err(ProxyError::bad_param(
            "messages",
            "`messages` must not be empty",
        )),
        Some(Value::Array(list)) => Ok(list),
        Some(other) => Err(ProxyError::bad_param(
            "messages",
            format!("`messages` must be an array, got {}", kind(other)),
        )),
    }
}

/// Check the parts of a `/v1/chat/completions` body the proxy relies on.
pub fn validate_chat(body: &Map<String, Value>) -> Result<(), ProxyError> {
    for (i, m) in messages(body)?.iter().enumerate() {
        let Some(obj) = m.as_object() else {
            return Err(ProxyError::bad_param(
                "messages",
                format!("`messages[{i}]` must be an object, got {}", kind(m)),
            ));
        };
        if !obj.get("role").is_some_and(Value::is_string) {
            return Err(ProxyError::bad_param(
                "messages",
                format!("`messages[{i}].role` is required and must be a string"),
            ));
        }
        match obj.get("content") {
            None | Some(Value::Null | Value::String(_) | Value::Array(_)) => {}
            Some(other) => {
                return Err(ProxyError::bad_param(
                    "messages",
                    format!(
                        "`messages[{i}].content` must be a string or an array, got {}",
                        kind(other)
                    ),
                ));
            }
        }
    }
    expect_type(body, "model", Value::is_string, "a string")?;
    expect_type(body, "stream", Value::is_boolean, "a boolean")?;
    expect_type(body, "max_tokens", is_count, "a non-negative integer")?;
    expect_type(
        body,
        "max_completion_tokens",
        is_count,
        "a non-negative integer",
    )?;
    expect_type(body, "tools", Value::is_array, "an array")?;
    expect_type(body, "stream_options", Value::is_object, "an object")?;
    Ok(())
}

/// Check the parts of a `/v1/messages` body the proxy relies on.
pub fn validate_messages(body: &Map<String, Value>) -> Result<(), ProxyError> {
    for (i, m) in messages(body)?.iter().enumerate() {
        let role = m.get("role").and_then(Value::as_str);
        // `system` inside `messages`: Claude Code 2.1 sends one after the first user message
        // (the mid-conversation-system beta).
        if !matches!(role, Some("user" | "assistant" | "system")) {
            return Err(ProxyError::bad_param(
                "messages",
                format!("`messages[{i}].role` must be \"user\", \"assistant\" or \"system\""),
            ));
        }
        match m.get("content") {
            Some(Value::String(_) | Value::Array(_)) => {}
            _ => {
                return Err(ProxyError::bad_param(
                    "messages",
                    format!(
                        "`messages[{i}].content` must be a string or an array of content blocks"
                    ),
                ));
            }
        }
    }
    expect_type(body, "model", Value::is_string, "a string")?;
    expect_type(body, "stream", Value::is_boolean, "a boolean")?;
    expect_type(body, "max_tokens", is_count, "a non-negative integer")?;
    expect_type(
        body,
        "system",
        |v| v.is_string() || v.is_array(),
        "a string or an array",
    )?;
    expect_type(body, "tools", Value::is_array, "an array")?;
    Ok(())
}

fn is_number(v: &Value) -> bool {
    v.is_number()
}

fn input_error(path: String, message: String) -> ProxyError {
    ProxyError::bad_param(&path, format!("`{path}` {message}"))
}

/// The string field `key` of the item at `path`, required.
fn item_string(item: &Map<String, Value>, path: &str, key: &str) -> Result<(), ProxyError> {
    match item.get(key) {
        Some(Value::String(_)) => Ok(()),
        None | Some(Value::Null) => Err(input_error(
            format!("{path}.{key}"),
            "is required: a string".into(),
        )),
        Some(v) => Err(input_error(
            format!("{path}.{key}"),
            format!("must be a string, got {}", kind(v)),
        )),
    }
}

fn check_input_item(i: usize, item: &Value) -> Result<(), ProxyError> {
    let path = format!("input[{i}]");
    let Some(obj) = item.as_object() else {
        return Err(input_error(
            path,
            format!("must be an object, got {}", kind(item)),
        ));
    };
    let kind_of = match obj.get("type") {
        None | Some(Value::Null) => "message",
        Some(Value::String(t)) => t.as_str(),
        Some(v) => {
            return Err(input_error(
                format!("{path}.type"),
                format!("must be a string, got {}", kind(v)),
            ));
        }
    };
    match kind_of {
        "message" => {
            let role = obj.get("role").and_then(Value::as_str);
            if !matches!(role, Some("user" | "assistant" | "system" | "developer")) {
                return Err(input_error(
                    format!("{path}.role"),
                    "must be one of \"user\", \"assistant\", \"system\", \"developer\"".into(),
                ));
            }
            match obj.get("content") {
                Some(Value::String(_)) => {}
                Some(Value::Array(parts)) => {
                    for (j, part) in parts.iter().enumerate() {
                        if !part.get("type").is_some_and(Value::is_string) {
                            return Err(input_error(
                                format!("{path}.content[{j}]"),
                                "must be an object with a string `type`".into(),
                            ));
                        }
                    }
                }
                _ => {
                    return Err(input_error(
                        format!("{path}.content"),
                        "is required: a string or an array of content parts".into(),
                    ));
                }
            }
        }
        "function_call" => {
            for key in ["call_id", "name", "arguments"] {
                item_string(obj, &path, key)?;
            }
        }
        "function_call_output" => {
            item_string(obj, &path, "call_id")?;
            if !obj
                .get("output")
                .is_some_and(|o| o.is_string() || o.is_array())
            {
                return Err(input_error(
                    format!("{path}.output"),
                    "is required: a string or an array of content parts".into(),
                ));
            }
        }
        // Reasoning and the other item types are relayed or dropped as they are.
        _ => {}
    }
    Ok(())
}

/// Check the parts of a `/v1/responses` body the proxy relies on, naming the field at fault
/// (`input[2].call_id`) as the Responses API does.
pub fn validate_responses(body: &Map<String, Value>) -> Result<(), ProxyError> {
    match body.get("input") {
        Some(Value::String(_)) => {}
        Some(Value::Array(items)) => {
            for (i, item) in items.iter().enumerate() {
                check_input_item(i, item)?;
            }
        }
        None | Some(Value::Null) => {
            return Err(ProxyError::bad_param(
                "input",
                "`input` is required: a string or an array of input items",
            ));
        }
        Some(other) => {
            return Err(ProxyError::bad_param(
                "input",
                format!(
                    "`input` must be a string or an array of input items, got {}",
                    kind(other)
                ),
            ));
        }
    }
    expect_type(body, "model", Value::is_string, "a string")?;
    expect_type(body, "instructions", Value::is_string, "a string")?;
    expect_type(body, "stream", Value::is_boolean, "a boolean")?;
    expect_type(body, "store", Value::is_boolean, "a boolean")?;
    expect_type(
        body,
        "max_output_tokens",
        is_count,
        "a non-negative integer",
    )?;
    expect_type(body, "temperature", is_number, "a number")?;
    expect_type(body, "top_p", is_number, "a number")?;
    expect_type(body, "previous_response_id", Value::is_string, "a string")?;
    expect_type(
        body,
        "tool_choice",
        |v| v.is_string() || v.is_object(),
        "a string or an object",
    )?;
    expect_type(body, "tools", Value::is_array, "an array")?;
    let tools = body.get("tools").and_then(Value::as_array);
    for (i, tool) in tools.into_iter().flatten().enumerate() {
        let path = format!("tools[{i}]");
        let Some(obj) = tool.as_object() else {
            return Err(input_error(
                path,
                format!("must be an object, got {}", kind(tool)),
            ));
        };
        if obj.get("type").and_then(Value::as_str) == Some("function") {
            item_string(obj, &path, "name")?;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn obj(v: Value) -> Map<String, Value> {
        v.as_object().unwrap().clone()
    }

    #[test]
    fn rejects_non_json_non_utf8_and_non_objects() {
        assert!(parse_object(b"").unwrap_err().to_string().contains("empty"));
        assert!(
            parse_object(b"{")
                .unwrap_err()
                .to_string()
                .contains("not valid JSON")
        );
        assert!(
            parse_object(b"\xff\xfe")
                .unwrap_err()
                .to_string()
                .contains("UTF-8")
        );
        assert!(
            parse_object(b"[1]")
                .unwrap_err()
                .to_string()
                .contains("an array")
        );
        assert!(parse_object(br#"{"a":1}"#).is_ok());
    }

    #[test]
    fn chat_requires_messages_with_roles() {
        let err = validate_chat(&obj(json!({"model": "m"}))).unwrap_err();
        assert!(err.to_string().contains("`messages` is required"));
        let err = validate_chat(&obj(json!({"messages": []}))).unwrap_err();
        assert!(err.to_string().contains("must not be empty"));
        let err = validate_chat(&obj(json!({"messages": [{"content": "x"}]}))).unwrap_err();
        assert!(err.to_string().contains("messages[0].role"));
        let err = validate_chat(&obj(json!({"messages": "hi"}))).unwrap_err();
        assert!(err.to_string().contains("must be an array, got a string"));
    }

    #[test]
    fn chat_type_checks() {
        let ok = json!({"messages": [{"role": "user", "content": "hi"}]});
        assert!(validate_chat(&obj(ok.clone())).is_ok());
        let mut bad = obj(ok);
        bad.insert("stream".into(), json!("yes"));
        assert!(
            validate_chat(&bad)
                .unwrap_err()
                .to_string()
                .contains("`stream` must be a boolean")
        );
        bad.insert("stream".into(), json!(true));
        bad.insert("max_tokens".into(), json!(-1));
        assert!(
            validate_chat(&bad)
                .unwrap_err()
                .to_string()
                .contains("max_tokens")
        );
    }

    #[test]
    fn messages_roles_and_content() {
        let ok =
            json!({"messages": [{"role": "user", "content": [{"type": "text", "text": "x"}]}]});
        assert!(validate_messages(&obj(ok)).is_ok());
        // Claude Code's mid-conversation system message.
        let ok = json!({"messages": [{"role": "user", "content": "x"},
            {"role": "system", "content": [{"type": "text", "text": "agents: …"}]}]});
        assert!(validate_messages(&obj(ok)).is_ok());
        let bad = json!({"messages": [{"role": "tool", "content": "x"}]});
        assert!(
            validate_messages(&obj(bad))
                .unwrap_err()
                .to_string()
                .contains("messages[0].role")
        );
        let bad = json!({"messages": [{"role": "user"}]});
        assert!(validate_messages(&obj(bad)).is_err());
    }

    #[test]
    fn responses_errors_name_the_field() {
        let param = |v: Value| match validate_responses(&obj(v)) {
            Err(ProxyError::BadRequest { param, message }) => (param.unwrap(), message),
            other => panic!("expected a bad request, got {other:?}"),
        };
        assert!(validate_responses(&obj(json!({"input": "hi"}))).is_ok());
        assert_eq!(param(json!({"model": "m"})).0, "input");
        assert_eq!(param(json!({"input": 3})).0, "input");
        let (p, m) = param(json!({"input": [{"type": "function_call_output", "output": "x"}]}));
        assert_eq!(p, "input[0].call_id");
        assert!(m.contains("`input[0].call_id` is required"), "{m}");
        assert_eq!(
            param(json!({"input": [{"role": "user", "content": "a"}, {"role": "robot", "content": "b"}]})).0,
            "input[1].role"
        );
        assert_eq!(
            param(json!({"input": [{"type": "function_call", "call_id": "c", "name": "f", "arguments": {}}]})).0,
            "input[0].arguments"
        );
        assert_eq!(
            param(json!({"input": "x", "max_output_tokens": "5"})).0,
            "max_output_tokens"
        );
        assert_eq!(
            param(json!({"input": "x", "tools": [{"type": "function"}]})).0,
            "tools[0].name"
        );
        assert_eq!(param(json!({"input": "x", "stream": "yes"})).0, "stream");
        let codex = json!({"input": [{"type": "reasoning", "id": "rs", "summary": []},
            {"type": "web_search_call", "id": "ws"}], "tools": [{"type": "web_search"}],
            "client_metadata": {}, "include": ["reasoning.encrypted_content"]});
        assert!(
            validate_responses(&obj(codex)).is_ok(),
            "unknown items and keys pass"
        );
    }
}
