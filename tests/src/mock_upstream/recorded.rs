//! Error responses real providers sent (`tests/fixtures/upstream_errors.json`), served by the
//! mock as they are. The proxy's own error mapping is what these test, so the mock must not
//! derive its errors from the same idea of what providers send.

use std::collections::BTreeMap;
use std::sync::OnceLock;

use serde::Deserialize;
use serde_json::Value;

use super::Api;

/// One recorded error response.
#[derive(Deserialize, Debug, Clone)]
pub struct Recorded {
    /// Who sent it: openai, anthropic, kimi, qwen, openrouter.
    pub provider: String,
    /// The wire API it came on: "openai" or "anthropic".
    pub wire: String,
    pub status: u16,
    #[serde(default)]
    pub headers: BTreeMap<String, String>,
    pub body: Value,
    /// Where the response was quoted.
    pub source: String,
}

#[derive(Deserialize)]
struct Table {
    responses: Vec<Recorded>,
}

/// Every recorded response, in the fixture's order.
pub fn all() -> &'static [Recorded] {
    static TABLE: OnceLock<Vec<Recorded>> = OnceLock::new();
    TABLE.get_or_init(|| {
        let text = include_str!("../../fixtures/upstream_errors.json");
        serde_json::from_str::<Table>(text)
            .expect("tests/fixtures/upstream_errors.json is valid")
            .responses
    })
}

/// The first recording of `provider` with `status`.
pub fn find(provider: &str, status: u16) -> Option<&'static Recorded> {
    all()
        .iter()
        .find(|r| r.provider == provider && r.status == status)
}

fn wire_name(api: Api) -> &'static str {
    match api {
        Api::OpenAi | Api::Responses => "openai",
        Api::Anthropic => "anthropic",
    }
}

/// What the mock sends for an error of `status` on `api` when a script gives no body: the
/// first recording of that status on that wire; for a status nobody recorded, the wire's
/// recording nearest in status within the same class (4xx or 5xx), else the nearest at all.
pub fn default_for(api: Api, status: u16) -> &'static Recorded {
    let wire = wire_name(api);
    let on_wire = || all().iter().filter(move |r| r.wire == wire);
    on_wire()
        .find(|r| r.status == status)
        .or_else(|| {
            on_wire()
                .filter(|r| r.status / 100 == status / 100)
                .min_by_key(|r| r.status.abs_diff(status))
        })
        .or_else(|| on_wire().min_by_key(|r| r.status.abs_diff(status)))
        .expect("the fixture has recordings for both wires")
}

/// `body` with its human message replaced by `message`, wherever the provider put it.
pub fn with_message(body: &Value, message: &str) -> Value {
    let mut body = body.clone();
    if let Some(slot) = body.pointer_mut("/error/message") {
        *slot = Value::String(message.to_owned());
    } else if let Some(slot) = body.get_mut("message") {
        *slot = Value::String(message.to_owned());
    }
    body
}

/// The default body for `status` on `api`, saying `message`.
pub fn body(api: Api, status: u16, message: &str) -> Value {
    with_message(&default_for(api, status).body, message)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_recording_names_its_source_and_has_a_message() {
        assert!(all().len() >= 10);
        for r in all() {
            assert!(r.source.starts_with("https://"), "{r:?}");
            assert!(matches!(r.wire.as_str(), "openai" | "anthropic"), "{r:?}");
            assert!((400..600).contains(&r.status), "{r:?}");
            let message = r
                .body
                .pointer("/error/message")
                .or_else(|| r.body.get("message"))
                .and_then(Value::as_str);
            assert!(message.is_some_and(|m| !m.is_empty()), "{r:?}");
        }
    }

    #[test]
    fn defaults_prefer_the_same_status_then_the_same_class() {
        assert_eq!(default_for(Api::OpenAi, 401).provider, "openai");
        assert_eq!(default_for(Api::OpenAi, 401).status, 401);
        assert_eq!(default_for(Api::Anthropic, 529).status, 529);
        // Nobody recorded a 403 on the OpenAI wire: a 4xx stands in, never a 5xx.
        assert_eq!(default_for(Api::OpenAi, 403).status / 100, 4);
        assert_eq!(default_for(Api::Anthropic, 502).status / 100, 5);
    }

    #[test]
    fn a_scripted_message_replaces_the_recorded_one_in_either_shape() {
        let qwen = find("qwen", 401).unwrap();
        let v = with_message(&qwen.body, "say this");
        assert_eq!(v["message"], "say this");
        assert_eq!(v["code"], "InvalidApiKey");
        let v = body(Api::Anthropic, 529, "busy");
        assert_eq!(v["error"]["message"], "busy");
        assert_eq!(v["error"]["type"], "overloaded_error");
    }
}
