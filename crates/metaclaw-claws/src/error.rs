use std::path::PathBuf;

/// Everything that can stop `apply` or `restore`. Restart problems are not
/// errors: they are lines in a [`crate::RestartReport`].
#[derive(Debug, thiserror::Error)]
pub enum ClawError {
    #[error("recipe {recipe}: {message}")]
    Recipe { recipe: String, message: String },

    #[error("{claw}: no config file found; looked for {}", tried.join(", "))]
    ConfigNotFound { claw: String, tried: Vec<String> },

    #[error("cannot parse {path} as {format}: {message}")]
    Parse {
        path: PathBuf,
        format: &'static str,
        message: String,
    },

    #[error("cannot set {key} in {path}: {message}")]
    Edit {
        path: PathBuf,
        key: String,
        message: String,
    },

    #[error("cannot write {path} as {format}: {message}")]
    Render {
        path: PathBuf,
        format: &'static str,
        message: String,
    },

    #[error(
        "{claw} was wired through {recorded}, but the config now resolves to {resolved}; \
         unwire first (metaclaw stop --unwire) so the first backup is not lost"
    )]
    PathChanged {
        claw: String,
        recorded: PathBuf,
        resolved: PathBuf,
    },

    #[error("backup state in {path} is unreadable: {message}")]
    State { path: PathBuf, message: String },

    #[error("{action} {path}: {source}")]
    Io {
        action: &'static str,
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
}

impl ClawError {
    pub(crate) fn io(
        action: &'static str,
        path: impl Into<PathBuf>,
        source: std::io::Error,
    ) -> Self {
        ClawError::Io {
            action,
            path: path.into(),
            source,
        }
    }

    pub(crate) fn recipe(recipe: &str, message: impl Into<String>) -> Self {
        ClawError::Recipe {
            recipe: recipe.to_string(),
            message: message.into(),
        }
    }
}
