//! Task sets for programmatic rollouts and evaluations: `<dir>/<split>.jsonl` tasks with
//! verifiers (`answer`, `pattern`, `choices`, `check`), a fresh scratch folder per episode
//! with the task's `workspace` copied in, confined commands (`run_command`, `check`), the
//! episode loop over a caller-supplied transport, and success rates with Wilson intervals.
//!
//! Invariant: an episode's commands run only in its own scratch folder, under a time limit
//! and an output cap; the agent's `run_command` is offered only when allowed and sandboxed.

pub mod bench;
pub mod command;
pub mod episode;
mod error;
pub mod scratch;
pub mod stats;
pub mod task;
pub mod verify;

pub use command::{CommandLimits, CommandOutput};
pub use episode::{Agent, AgentFuture, ChatReply, ChatRequest, EpisodeResult, EpisodeSettings};
pub use error::TaskError;
pub use stats::{MeanScore, SuccessRate, newcombe, wilson};
pub use task::{LineProblem, Task, TaskSet};
pub use verify::{Verdict, Verifier};
