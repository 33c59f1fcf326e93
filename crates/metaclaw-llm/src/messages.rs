//! Anthropic's `POST /v1/messages`, only as far as a connection test needs: one user message
//! and a one-token answer.

use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, PartialEq, Serialize)]
pub(crate) struct MessagesRequest {
    pub model: String,
    pub max_tokens: u32,
    pub messages: Vec<crate::ChatMessage>,
}

impl MessagesRequest {
    /// The smallest request that exercises the key, the model and the route.
    pub(crate) fn ping(model: &str) -> MessagesRequest {
        MessagesRequest {
            model: model.to_owned(),
            max_tokens: 1,
            messages: vec![crate::ChatMessage::user("ping")],
        }
    }
}

/// Only what shows the answer is a Messages response.
#[derive(Debug, Clone, PartialEq, Deserialize)]
pub(crate) struct MessagesResponse {
    // Decoded only to check the answer's shape.
    #[allow(dead_code)]
    pub content: Vec<serde_json::Value>,
}
