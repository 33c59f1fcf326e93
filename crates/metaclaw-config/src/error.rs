use std::io;
use std::path::PathBuf;

/// Everything that can go wrong while locating, reading, validating or writing the config.
#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    #[error("cannot locate the MetaClaw home directory: set METACLAW_HOME or HOME")]
    NoHome,

    #[error("cannot {action} {}: {source}", path.display())]
    Io {
        action: &'static str,
        path: PathBuf,
        #[source]
        source: io::Error,
    },

    /// `message` already carries "at line L, column C" when the parser knows it.
    #[error("invalid YAML in config: {message}")]
    Yaml {
        message: String,
        line: Option<u64>,
        column: Option<u64>,
    },

    #[error("the config file must be a YAML mapping at the top level, found {found}")]
    NotAMapping { found: &'static str },

    /// `value` is rendered as JSON (secrets masked); `allowed` reads "allowed: a, b" or "expected …".
    #[error("invalid value for `{key}`: {value} ({allowed})")]
    InvalidValue {
        key: String,
        value: String,
        allowed: String,
    },

    #[error("invalid key `{key}`: {reason}")]
    InvalidKey { key: String, reason: String },

    #[error("cannot write config as YAML: {0}")]
    Serialize(String),
}

impl ConfigError {
    pub(crate) fn io(action: &'static str, path: impl Into<PathBuf>, source: io::Error) -> Self {
        ConfigError::Io {
            action,
            path: path.into(),
            source,
        }
    }
}
