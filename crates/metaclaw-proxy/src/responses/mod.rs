//! The OpenAI Responses API (`/v1/responses`): translation to and from chat completions for
//! upstreams without it, and the streaming re-encoder.

pub mod stream;
pub mod translate;

use bytes::BytesMut;
use serde_json::{Map, Value};

use stream::ResponsesEncoder;

/// A whole `chat.completion` → the Responses `response` object, through the same encoder
/// that translates streams, so both paths build identical items.
pub fn response_from_chat(
    completion: &Value,
    request: &Map<String, Value>,
    model: &str,
    created_at: i64,
) -> Value {
    let mut enc = ResponsesEncoder::new(request, model, created_at);
    let mut scratch = BytesMut::new();
    for chunk in crate::local::chunks(completion, true) {
        enc.chunk(&chunk, &mut scratch);
    }
    enc.finish(&mut scratch);
    enc.response()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn whole_completion_with_text_and_a_call() {
        let completion = json!({"id": "c1", "model": "up", "choices": [{"index": 0,
            "finish_reason": "tool_calls", "message": {"role": "assistant", "content": "let me look",
            "tool_calls": [{"id": "call_1", "type": "function",
                "function": {"name": "read", "arguments": "{\"path\":\"a\"}"}}]}}],
            "usage": {"prompt_tokens": 12, "completion_tokens": 5, "total_tokens": 17}});
        let request = json!({"input": "x", "instructions": "sys", "temperature": 0.5});
        let r = response_from_chat(&completion, request.as_object().unwrap(), "m", 3);
        assert_eq!(r["object"], "response");
        assert_eq!(r["status"], "completed");
        assert_eq!(r["model"], "m");
        assert_eq!(r["instructions"], "sys");
        assert_eq!(r["temperature"], 0.5);
        assert_eq!(r["output"][0]["type"], "message");
        assert_eq!(r["output"][0]["content"][0]["text"], "let me look");
        assert_eq!(
            r["output"][1],
            json!({"id": r["output"][1]["id"], "type": "function_call", "status": "completed",
                "call_id": "call_1", "name": "read", "arguments": "{\"path\":\"a\"}"})
        );
        assert_eq!(r["usage"]["output_tokens"], 5);
        assert_eq!(r["usage"]["total_tokens"], 17);
    }
}
