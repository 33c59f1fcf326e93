use std::path::PathBuf;

/// What can go wrong with a task set, a verifier or an episode.
#[derive(Debug, thiserror::Error)]
pub enum TaskError {
    #[error("no task file {path}: a task set is a folder of <split>.jsonl files")]
    MissingSplit { path: PathBuf },
    #[error("could not read {path}: {source}")]
    Read {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("{path} has no valid task ({problems} line(s) skipped)")]
    Empty { path: PathBuf, problems: usize },
    #[error("could not prepare the scratch folder: {0}")]
    Scratch(std::io::Error),
    #[error("could not run the command: {0}")]
    Spawn(std::io::Error),
    #[error("{0}")]
    Bench(String),
    #[error("the agent's request failed: {0}")]
    Chat(String),
}
