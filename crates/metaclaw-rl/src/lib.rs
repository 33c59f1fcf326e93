//! RL mode: the LoRA policy serves chat, a judge scores turns, samples become training
//! data, and an online trainer updates the policy on Tinker and hot-swaps the sampler.
//!
//! Invariant: a sample trains only with a reward (or an OPD teacher signal) and only under
//! the skill generation the trainer is on; its tokens are the ones the sampler produced.

pub mod advantage;
pub mod datum;
mod error;
pub mod judge;
pub mod policy;
pub mod probe;
pub mod readiness;
pub mod reward;
pub mod scoring;
mod service;
pub mod teacher;
pub mod trainer;

pub use error::RlError;
pub use service::{
    AdapterGate, GateFuture, GateVerdict, Phase, PrepareFuture, RlModel, RlParts, RlService,
    RlStatus, SampleHook, StartupProgress,
};
pub use trainer::StepOutcome;
