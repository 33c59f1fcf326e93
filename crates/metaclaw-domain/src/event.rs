use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

/// Why a session was closed. Skill evolution reacts to every reason alike.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum SessionEndReason {
    /// The client sent `X-Session-Done` (or `session_done` in the body).
    Explicit,
    /// No request for `session.idle_timeout` seconds.
    IdleTimeout,
    /// A header-less client started over with fewer messages than before.
    CountDrop,
    /// The daemon stopped while the session was open; it is closed at the next start.
    Shutdown,
}

impl SessionEndReason {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Explicit => "explicit",
            Self::IdleTimeout => "idle_timeout",
            Self::CountDrop => "count_drop",
            Self::Shutdown => "shutdown",
        }
    }
}

/// Things that happened inside the core, broadcast to whoever listens (store, evolver, tray).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum Event {
    SessionStarted {
        session_id: String,
        at: DateTime<Utc>,
    },
    SessionEnded {
        session_id: String,
        reason: SessionEndReason,
        turns: u64,
        at: DateTime<Utc>,
    },
    TurnCompleted {
        session_id: String,
        turn_id: String,
        turn_type: crate::TurnType,
    },
    /// Skill evolution put new proposals in the review inbox.
    ProposalsCreated {
        session_id: Option<String>,
        proposal_ids: Vec<i64>,
    },
    /// A skill evolution run failed (also recorded in the database).
    EvolutionFailed {
        session_id: Option<String>,
        error: String,
    },
    /// Mode, toggles or endpoints changed (dashboard, tray or CLI).
    ConfigChanged,
    /// Training progress (the RL trainer reports each step).
    Training {
        step: u64,
        status: String,
        progress: Option<f64>,
    },
    /// The RL service moved through its start-up (`phase`: off, starting, serving, failed),
    /// with what it is doing in words; while a tokenizer downloads, `progress` (0–1) moves
    /// in steps of a tenth.
    RlPhase {
        phase: String,
        message: Option<String>,
        progress: Option<f64>,
    },
    /// An approved change (approval, edit, rollback, undo) changed the skill library.
    SkillChanged {
        name: String,
        version: u64,
        generation: u64,
    },
}
