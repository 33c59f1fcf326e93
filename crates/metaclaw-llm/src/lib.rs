//! The one client MetaClaw uses to call LLM endpoints of its own: the skill evolver, the PRM
//! judge, the OPD teacher, skill embeddings and connection probes. OpenAI-compatible wire
//! types for chat completions (JSON mode, JSON schema), completions with echo + logprobs,
//! embeddings and the model list; one retry and timeout policy ([`RetryPolicy`]); errors
//! with stable kinds ([`ErrorKind`]) that never contain the API key.
//!
//! This crate is the only place that builds a `reqwest::Client` for LLM calls. Others keep
//! their own on purpose: the proxy (`metaclaw-proxy`) relays the user's requests and their
//! streams byte for byte and must not decode or retry them; `tinker-client` speaks the
//! Tinker training API with its own retry and idempotency rules; the tokenizer download
//! (`metaclaw-render`'s hub) and calendar fetching (`metaclaw-scheduler`) are not LLM calls;
//! the CLI's client of a running core and its `/healthz` wait talk to MetaClaw itself.

mod chat;
mod client;
mod completion;
mod embedding;
mod error;
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
pub use models::{Model, ModelList};
pub use retry::RetryPolicy;
