#[derive(Debug, thiserror::Error)]
pub enum OpenClawError {
    #[error("openclaw is not installed (no `openclaw` on PATH)")]
    NotInstalled,
    #[error("OpenClaw's config is read-only ({0} is set)")]
    ReadOnly(&'static str),
    #[error("`openclaw {command}` failed: {message}")]
    Command { command: String, message: String },
    #[error("`openclaw {0}` did not finish within its time limit")]
    Timeout(String),
    #[error("could not keep the wiring state in {path}: {message}")]
    State { path: String, message: String },
}
