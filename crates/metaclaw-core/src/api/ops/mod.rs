//! The operations, grouped by what they act on. Each is a unit struct implementing
//! [`Operation`](super::Operation), with its input and output types beside it.

pub mod agents;
pub mod config;
pub mod data;
pub mod login;
pub mod onboarding;
pub mod proposals;
pub mod scheduler;
pub mod sessions;
pub mod settings;
pub mod skill_health;
pub mod skills;
pub mod status;
pub mod tasks;
pub mod training;
pub mod wiring;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// The answer of an operation that only succeeds or fails.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct Ack {
    pub ok: bool,
}

impl Ack {
    pub const OK: Ack = Ack { ok: true };
}
