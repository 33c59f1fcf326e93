//! Assembles a running MetaClaw: store, proxy, events and background tasks. The headless
//! daemon (`metaclaw start`) and the tray app both run exactly this.

mod api;
mod claws;
pub mod control;
mod error;
mod evolution;
mod health;
pub mod instance;
pub mod live;
mod recording;
mod rl;
mod runtime;
pub mod scheduling;
mod skills;
pub mod wiring;

pub use error::CoreError;
pub use evolution::{Evolution, RunReport};
pub use metaclaw_store::EvolutionTrigger;
pub use runtime::{CoreOptions, RunningCore, init_tracing, shutdown_signal, start};
pub use skills::{SkillInfo, SkillService};
