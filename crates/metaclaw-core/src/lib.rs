//! Assembles a running MetaClaw: store, proxy, events and background tasks. The headless
//! daemon (`metaclaw start`) and the tray app both run exactly this.

pub mod agents;
pub mod api;
mod claws;
mod error;
pub mod evidence;
mod evolution;
mod health;
pub mod instance;
pub mod live;
pub mod logging;
pub mod onboarding;
mod recording;
mod revision;
mod rl;
pub mod rollout;
mod runtime;
pub mod scheduling;
pub mod setting_fields;
pub mod settings;
mod skill_health;
mod skills;
pub mod skills_comparison;
pub mod wiring;

pub use error::{CoreError, SkillError};
pub use evolution::{Evolution, RunReport};
pub use logging::{LogGuard, LogTarget, init_tracing};
pub use metaclaw_store::{EvolutionTrigger, return_memory_to_os};
pub use revision::RequestedProposal;
pub use runtime::{CoreOptions, LocalCore, RunningCore, open_local, shutdown_signal, start};
pub use skill_health::{HealthFlag, SkillHealthReport, SkillHealthRow};
pub use skills::{SkillInfo, SkillService};
