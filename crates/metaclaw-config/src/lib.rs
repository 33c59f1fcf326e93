//! MetaClaw configuration: the home directory layout, `config.yaml` loading
//! with upstream-compatible validation and warnings, and `config KEY VALUE` edits.

mod choices;
mod config;
mod document;
mod error;
mod file;
mod home;
mod keys;
mod mask;
mod validation;
mod warning;

pub use choices::{ClawType, LlmProvider, LossFn, Mode, RetrievalMode, WireFormat};
pub use config::{
    CalendarConfig, Config, DEFAULT_SERVED_MODEL, DEFAULT_SKILLS_DIR, EmbeddingConfig, LlmConfig,
    OpdConfig, ProxyConfig, RecordsConfig, RlConfig, SchedulerConfig, SessionConfig, SkillsConfig,
};
pub use document::{Document, coerce};
pub use error::ConfigError;
pub use file::{LoadedConfig, load, load_document, load_str, save, set_and_save};
pub use home::Home;
pub use mask::masked;
pub use validation::validate;
pub use warning::ConfigWarning;
