//! Assembles a running MetaClaw: store, proxy, events and background tasks. The headless
//! daemon (`metaclaw start`) and the tray app both run exactly this.

pub mod api;
mod claws;
mod error;
mod evolution;
mod health;
pub mod instance;
pub mod live;
pub mod logging;
pub mod onboarding;
mod recording;
mod rl;
pub mod rollout;
mod runtime;
pub mod scheduling;
pub mod setting_fields;
pub mod settings;
mod skills;
pub mod wiring;

pub use error::{CoreError, SkillError};
pub use evolution::{Evolution, RunReport};
pub use logging::{LogGuard, LogTarget, init_tracing};
pub use metaclaw_store::EvolutionTrigger;
pub use runtime::{CoreOptions, LocalCore, RunningCore, open_local, shutdown_signal, start};
pub use skills::{SkillInfo, SkillService};
