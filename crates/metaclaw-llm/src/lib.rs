//! The one client MetaClaw uses to call LLM endpoints of its own: the skill evolver, the PRM
//! judge, the OPD teacher, skill embeddings and connection probes (and the onboarding's
//! one-token test, also as an Anthropic Messages request). OpenAI-compatible wire
//! types for chat completions (JSON mode, JSON schema), completions with echo + logprobs,
//! embeddings and the model list; one retry and timeout policy ([`RetryPolicy`]); errors
//! with stable kinds ([`ErrorKind`]) that never contain the API key.
//!
//! This crate is the only place that builds a `reqwest::Client` (see [`http_client`]), for LLM
//! calls and for the plain fetches that are not (tokenizer downloads, calendar URLs, the CLI
//! talking to a running core), except two that keep their own on purpose: the proxy
//! (`metaclaw-proxy`) relays the user's requests and their streams byte for byte and must not
//! decode or retry them; `tinker-client` speaks the Tinker training API with its own retry and
//! idempotency rules and is reusable outside MetaClaw. A tidy test holds this rule.

mod chat;
mod client;
mod completion;
mod embedding;
mod error;
mod http;
mod messages;
mod models;
mod retry;

pub use chat::{
    AssistantMessage, ChatChoice, ChatMessage, ChatRequest, ChatResponse, JsonSchema,
    ResponseFormat, Role, Usage,
};
pub use client::{LlmClient, Probe};
pub use completion::{CompletionChoice, CompletionRequest, CompletionResponse, Logprobs, Prompt};
pub use embedding::EmbeddingRequest;
pub use error::{ErrorKind, LlmError};
pub use http::{HttpOptions, http_client, shared_tls};
pub use models::{Model, ModelList};
pub use retry::RetryPolicy;
