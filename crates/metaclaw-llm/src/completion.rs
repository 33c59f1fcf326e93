//! `POST /completions` (the legacy text API): a prompt as text or token ids, and with
//! `echo` + `logprobs` the log-probability of every prompt token, which is how a teacher
//! model scores a sequence it did not write.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::chat::Usage;

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(untagged)]
pub enum Prompt {
    Text(String),
    /// Token ids, so the server scores exactly these tokens and does not re-tokenise.
    Tokens(Vec<u32>),
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CompletionRequest {
    pub model: String,
    pub prompt: Prompt,
    /// Return the prompt (and its logprobs) before the completion.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub echo: bool,
    /// How many alternatives per position in `top_logprobs`; `Some(0)` or more asks for
    /// `token_logprobs`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub logprobs: Option<u32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub max_tokens: Option<u32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub temperature: Option<f64>,
}

impl CompletionRequest {
    pub fn new(model: impl Into<String>, prompt: Prompt) -> CompletionRequest {
        CompletionRequest {
            model: model.into(),
            prompt,
            echo: false,
            logprobs: None,
            max_tokens: None,
            temperature: None,
        }
    }
}

#[derive(Debug, Clone, PartialEq, Deserialize)]
pub struct CompletionResponse {
    pub choices: Vec<CompletionChoice>,
    #[serde(default)]
    pub usage: Option<Usage>,
}

#[derive(Debug, Clone, PartialEq, Deserialize)]
pub struct CompletionChoice {
    #[serde(default)]
    pub text: String,
    #[serde(default)]
    pub index: u32,
    /// Absent when the server ignores `logprobs`.
    #[serde(default)]
    pub logprobs: Option<Logprobs>,
    #[serde(default)]
    pub finish_reason: Option<String>,
}

/// Per-token detail, one entry per token of (echoed prompt +) completion.
#[derive(Debug, Clone, PartialEq, Deserialize)]
pub struct Logprobs {
    #[serde(default)]
    pub tokens: Option<Vec<String>>,
    /// `null` for the first prompt token, which has no context to be scored in.
    #[serde(default)]
    pub token_logprobs: Option<Vec<Option<f64>>>,
    #[serde(default)]
    pub top_logprobs: Option<Vec<Option<BTreeMap<String, f64>>>>,
    #[serde(default)]
    pub text_offset: Option<Vec<u32>>,
}
