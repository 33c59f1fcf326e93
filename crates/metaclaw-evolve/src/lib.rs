//! Skill distillation: what a session teaches, as reviewed proposals.
//!
//! Pure logic plus the evolver's HTTP call; the core decides when it runs and keeps the
//! inbox in the database.

mod evolver;
mod proposal;
mod redact;
mod revision;
mod transcript;

pub use evolver::{EvolveError, Evolver, messages, parse};
pub use proposal::{
    Candidate, DUPLICATE_SCORE, Dropped, RawProposal, fingerprint, prepare, slug, unified_diff,
};
pub use redact::redact;
pub use revision::{Episode, merge_messages, revision_messages};
pub use transcript::{
    FollowUpSignals, Signal, SignalKind, TurnView, assistant_text, follow_up, new_tool_results,
    render, signals, user_text,
};
