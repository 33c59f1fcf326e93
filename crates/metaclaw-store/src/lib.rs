//! MetaClaw's turn log in SQLite.
//!
//! * [`Store::open`] migrates the database and starts one background writer thread.
//! * [`Recorder`]s (from [`Store::recorder`]) queue turns and session events without
//!   blocking; the writer group-commits them, normally within milliseconds and in any case
//!   within 1 s. The queue is bounded by a [`Backlog`]: callers wait for room before they
//!   start a turn, never after. WAL with `synchronous=NORMAL`: a committed turn survives `kill -9`.
//! * System prompts and tool lists are content-addressed in `blobs` and reinflated on read.
//! * [`Store::prune`] implements retention; [`Store::open_read_only`] serves the CLI while
//!   the daemon runs.
//! * Skill evolution: per-turn injected skills and feedback, evolver proposals and runs,
//!   skill version history and the skill generation counter.
//! * Training: the trainer's steps and checkpoints, process reward model votes and the
//!   reward of each turn (votes and rewards go with their turn on retention).

mod backlog;
mod blob;
mod connection;
mod enums;
mod error;
mod evals;
mod evidence;
mod evolution_runs;
mod feedback;
mod migrations;
mod proposals;
mod recorder;
mod retention;
mod reward_components;
mod rewards;
mod samples;
mod sessions;
mod skills;
mod store;
mod timestamp;
mod training;
mod turns;
mod versions;
mod writer;

pub use backlog::{Backlog, DEFAULT_LIMIT_BYTES, return_memory_to_os};
pub use enums::ParseEnumError;
pub use error::{Result, StoreError};
pub use evals::{AdapterStatus, AdapterVersion, BenchRound, EvalOutcome, EvalPurpose, EvalRun};
pub use evidence::{ControlCause, EvidenceArm, FollowUp, OutcomeCounts};
pub use evolution_runs::{EvolutionRunRow, EvolutionRunStatus, EvolutionTrigger, NewEvolutionRun};
pub use feedback::Feedback;
pub use migrations::SCHEMA_VERSION;
pub use proposals::{NewProposal, ProposalKind, ProposalRow, ProposalStatus};
pub use recorder::Recorder;
pub use retention::PruneReport;
pub use reward_components::{RewardComponent, RewardPart, SignalledSample, TurnSignals};
pub use rewards::{PrmVote, RewardSource, TurnReward};
pub use samples::{NewSample, RatedSample, SampleRow, SampleState};
pub use sessions::SessionRow;
pub use skills::{SkillStats, SkillSwitches, StateChange};
pub use store::Store;
pub use training::{Checkpoint, CheckpointKind, TrainingStatus, TrainingStep};
pub use turns::{MAX_DAYS, TurnRow};
pub use versions::{Author, NewSkillVersion, SkillVersionRow, VersionAction};
