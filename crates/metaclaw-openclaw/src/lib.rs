//! OpenClaw wiring. Everything goes through `openclaw config …` (never by editing its file),
//! so OpenClaw's own validation, backups and hot reload apply.
//!
//! `wire` snapshots what it will change, writes the provider and the primary model in one
//! batch, and keeps the snapshot; `unwire` restores only values that are still ours, so a
//! change the user made in between is never clobbered.

mod cli;
mod error;
mod wiring;

pub use cli::OpenClawCli;
pub use error::OpenClawError;
pub use wiring::{PROVIDER_ID, WireSpec, WiringState, manual_steps, unwire, wire};
