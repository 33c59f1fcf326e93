use std::path::PathBuf;

#[derive(Debug, thiserror::Error)]
pub enum SkillsError {
    #[error("{path}: {reason}")]
    Invalid { path: PathBuf, reason: String },
    #[error("could not read {path}: {source}")]
    Io {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error(
        "invalid skill name `{0}`: use lowercase letters, digits and single hyphens, at most 64 characters"
    )]
    BadName(String),
    #[error("no skill named `{0}`")]
    NotFound(String),
    #[error("could not watch {path}: {reason}")]
    Watch { path: PathBuf, reason: String },
}

pub type Result<T, E = SkillsError> = std::result::Result<T, E>;
