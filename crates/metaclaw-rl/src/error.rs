use thiserror::Error;

/// Failures of RL mode, worded for the status line and the CLI.
#[derive(Debug, Error)]
pub enum RlError {
    /// Settings that make RL impossible; the message says which key to set.
    #[error("{0}")]
    Config(String),
    /// A helper model's call (judge, teacher) failed.
    #[error("{0}")]
    Llm(#[from] metaclaw_llm::LlmError),
    #[error("Tinker: {0}")]
    Tinker(String),
    #[error("renderer: {0}")]
    Render(String),
    #[error("store: {0}")]
    Store(#[from] metaclaw_store::StoreError),
    /// The OPD teacher's tokenisation does not line up with the student's.
    #[error("OPD teacher: {0}")]
    Teacher(String),
    #[error("{0}")]
    Other(String),
}
