//! The hot-path handle: hands records to the writer thread and returns at once.

use std::sync::Arc;
use std::sync::mpsc::{SendError, Sender};

use chrono::{DateTime, Utc};
use metaclaw_domain::{SessionEndReason, SessionSource, TurnRecord};

use crate::writer::{Message, Write};

/// Cheap to clone, `Send + Sync`. Every method is a channel send: it never waits for disk,
/// never fails, never panics. If the writer is gone the record is logged as lost.
#[derive(Debug, Clone)]
pub struct Recorder {
    /// `None` for a read-only store.
    tx: Option<Sender<Message>>,
}

impl Recorder {
    pub(crate) fn new(tx: Option<Sender<Message>>) -> Self {
        Self { tx }
    }

    /// Queues a finished turn. It is committed within milliseconds (at most 1 s) unless the
    /// disk fails; its session row is created or updated and it gets the next `seq`.
    pub fn record_turn(&self, turn: impl Into<Arc<TurnRecord>>) {
        self.send(Write::Turn(turn.into()));
    }

    /// Marks activity in a session without a turn (creates the session row if needed).
    pub fn session_seen(
        &self,
        session_id: impl Into<String>,
        source: SessionSource,
        at: DateTime<Utc>,
    ) {
        self.send(Write::SessionSeen {
            session_id: session_id.into(),
            source,
            at,
        });
    }

    /// Sets `ended_at` / `end_reason` of a session that has stored turns.
    pub fn session_ended(
        &self,
        session_id: impl Into<String>,
        reason: SessionEndReason,
        at: DateTime<Utc>,
    ) {
        self.send(Write::SessionEnded {
            session_id: session_id.into(),
            reason,
            at,
        });
    }

    fn send(&self, write: Write) {
        let Some(tx) = &self.tx else {
            tracing::warn!(record = %write.describe(), "store: opened read-only; record dropped");
            return;
        };
        if let Err(SendError(Message::Write(write))) = tx.send(Message::Write(write)) {
            tracing::error!(record = %write.describe(), "store: writer not running; record lost");
        }
    }
}
