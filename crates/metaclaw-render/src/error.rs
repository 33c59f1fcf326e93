//! One error type for loading tokenizers, converting messages and rendering.

use std::path::PathBuf;

#[derive(Debug, thiserror::Error)]
pub enum RenderError {
    #[error(
        "unknown renderer {0:?} (expected one of qwen3, qwen3_instruct, llama3, kimi_k2, kimi_k25)"
    )]
    UnknownRenderer(String),

    #[error("no renderer is known for model {0:?}; set the renderer explicitly in the config")]
    NoRendererForModel(String),

    #[error("tokenizer file {} is missing", .0.display())]
    TokenizerMissing(PathBuf),

    #[error("tokenizer file {} is corrupt: {reason}", path.display())]
    TokenizerCorrupt { path: PathBuf, reason: String },

    #[error("download of {url} failed: {reason}")]
    DownloadFailed { url: String, reason: String },

    #[error("download of {url} failed with HTTP status {status}")]
    DownloadStatus { url: String, status: u16 },

    #[error("tokenizer cache I/O on {}: {source}", path.display())]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },

    #[error("tokenizer for {tokenizer} has no {token} token; renderer {renderer} needs it")]
    MissingSpecialToken {
        tokenizer: String,
        token: String,
        renderer: &'static str,
    },

    #[error("unsupported content part {0:?}: only text parts can be rendered for RL sampling")]
    UnsupportedContent(String),

    #[error("invalid message at index {index}: {reason}")]
    InvalidMessage { index: usize, reason: String },

    #[error("tokenizer error: {0}")]
    Tokenizer(String),
}
