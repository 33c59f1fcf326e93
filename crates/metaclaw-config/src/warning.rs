use std::fmt;

/// Something in config.yaml that loads fine but deserves the user's attention.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ConfigWarning {
    /// Neither this version nor the Python MetaClaw knows the key.
    UnknownKey { key: String },
    /// The Python MetaClaw reads the key; this version deliberately does not.
    IgnoredKey { key: String, reason: &'static str },
    /// Still honoured, but spelled the old way.
    Deprecated { key: String, message: String },
}

impl ConfigWarning {
    /// The full dotted key the warning is about.
    pub fn key(&self) -> &str {
        match self {
            ConfigWarning::UnknownKey { key }
            | ConfigWarning::IgnoredKey { key, .. }
            | ConfigWarning::Deprecated { key, .. } => key,
        }
    }
}

impl fmt::Display for ConfigWarning {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ConfigWarning::UnknownKey { key } => {
                write!(f, "unknown key `{key}` in config.yaml (ignored)")
            }
            ConfigWarning::IgnoredKey { key, reason } => write!(
                f,
                "key `{key}` is read by the Python MetaClaw but ignored by this version: {reason}"
            ),
            ConfigWarning::Deprecated { key, message } => {
                write!(f, "key `{key}` is deprecated: {message}")
            }
        }
    }
}
