//! Token-exact chat rendering for RL serving: OpenAI-style messages → prompt token ids for a
//! model family, and sampled token ids → content, reasoning and tool calls.
//!
//! Renderers work on ids: special tokens are inserted as ids (never re-tokenised text) and
//! message text is encoded without special-token matching, so user content cannot forge a turn
//! boundary. Parsing reads the sampled ids the same way.

mod error;
mod hub;
mod json;
mod kimi;
mod llama3;
mod message;
mod parse;
mod qwen3;
mod renderer;
#[cfg(feature = "test-tokenizer")]
mod testing;
mod tokenizer;
mod typescript;

pub use error::RenderError;
pub use hub::{
    DEFAULT_HUB_URL, DownloadProgress, HubConfig, LLAMA3_TOKENIZER_REPO, OnProgress, PROGRESS_STEP,
    TokenizerFormat, TokenizerSource, load_tokenizer, load_tokenizer_reporting, strip_model_suffix,
};
pub use kimi::DEFAULT_SYSTEM_PROMPT as KIMI_DEFAULT_SYSTEM_PROMPT;
pub use message::{ChatMessage, Role, ToolCall, ToolSpec, messages_from_openai, tools_from_openai};
pub use parse::Finish;
pub use renderer::{ParsedResponse, RenderOptions, Renderer, RendererKind};
#[cfg(feature = "test-tokenizer")]
pub use testing::{
    family_specials, test_tokenizer, train as train_test_tokenizer, write_kimi_tiktoken,
    write_test_tokenizer_json,
};
pub use tokenizer::{KIMI_PATTERN, Tokenizer};
