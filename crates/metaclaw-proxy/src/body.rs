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
        if !matches!(role, Some("user" | "assistant")) {
            return Err(ProxyError::bad_param(
                "messages",
                format!("`messages[{i}].role` must be \"user\" or \"assistant\""),
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
        let bad = json!({"messages": [{"role": "system", "content": "x"}]});
        assert!(validate_messages(&obj(bad)).is_err());
        let bad = json!({"messages": [{"role": "user"}]});
        assert!(validate_messages(&obj(bad)).is_err());
    }
}
