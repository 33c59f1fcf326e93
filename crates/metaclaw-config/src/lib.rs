//! MetaClaw configuration: the home directory layout, `config.yaml` loading
//! with upstream-compatible validation and warnings, `config KEY VALUE` edits, and the provider
//! presets `metaclaw setup` and the dashboard's onboarding share (`preset`).

mod agents;
mod choices;
mod claw_list;
mod config;
mod document;
mod error;
mod file;
mod home;
mod keys;
mod mask;
pub mod preset;
mod validation;
mod warning;

pub use agents::{AGENT_FIELDS, AgentConfig, valid_agent_name};
pub use choices::{
    AuthMethod, ClawType, LlmProvider, LossFn, Mode, Placement, ResponsesApi, RetrievalMode,
    RewardCombine, WireFormat,
};
pub use claw_list::ClawTypes;
pub use config::{
    CalendarConfig, Config, DEFAULT_SERVED_MODEL, DEFAULT_SKILLS_DIR, EmbeddingConfig, LlmConfig,
    OpdConfig, ProxyConfig, RecordsConfig, RlConfig, SchedulerConfig, SessionConfig, SkillsConfig,
};
pub use document::{Document, coerce};
pub use error::ConfigError;
pub use file::{LoadedConfig, load, load_document, load_str, save, set_and_save};
pub use home::Home;
pub use keys::{KeySpec, Kind as KeyKind, agent_keys, known_keys};
pub use mask::is_secret_key;
pub use mask::{mask_secret, masked};
pub use validation::validate;
pub use warning::ConfigWarning;
