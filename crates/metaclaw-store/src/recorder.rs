//! The hot-path handle: hands records to the writer thread and returns at once.

use std::sync::Arc;
use std::sync::mpsc::{SendError, Sender};

use chrono::{DateTime, Utc};
use metaclaw_domain::{SessionEndReason, SessionSource, TurnRecord};

use crate::backlog::{self, Backlog};
use crate::evidence::FollowUp;
use crate::writer::{Message, Write};

/// Cheap to clone, `Send + Sync`. Every recording method is a channel send: it never waits
/// for disk, never fails, never panics. If the writer is gone the record is logged as lost.
#[derive(Debug, Clone)]
pub struct Recorder {
    /// `None` for a read-only store.
    tx: Option<(Sender<Message>, Arc<Backlog>)>,
}

impl Recorder {
    pub(crate) fn new(tx: Option<(Sender<Message>, Arc<Backlog>)>) -> Self {
        Self { tx }
    }

    /// Waits while the turns queued for the writer exceed the backlog's bound. Call it
    /// before starting a turn (the proxy does, before forwarding), so that a burst slows the
    /// requests down instead of piling up answered turns in memory.
    pub async fn wait_for_room(&self) {
        if let Some((_, backlog)) = &self.tx {
            backlog.wait_for_room().await;
        }
    }

    /// Queues a finished turn. It is committed within milliseconds (at most 1 s) unless the
    /// disk fails; its session row is created or updated and it gets the next `seq`.
    /// Never waits: the turn was already answered.
    pub fn record_turn(&self, turn: impl Into<Arc<TurnRecord>>) {
        let turn = turn.into();
        let cost = backlog::estimate(&turn.request)
            + turn.response.as_ref().map_or(0, backlog::estimate)
            + 1024;
        self.send(Write::Turn(turn, cost));
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

    /// Queues what a main turn's request says about the main turn before it (the user
    /// corrected it, its tool calls failed). Send it after the turn itself.
    pub fn record_follow_up(&self, follow_up: FollowUp) {
        self.send(Write::FollowUp(follow_up));
    }

    fn send(&self, write: Write) {
        let Some((tx, backlog)) = &self.tx else {
            tracing::warn!(record = %write.describe(), "store: opened read-only; record dropped");
            return;
        };
        let cost = write.cost();
        backlog.add(cost);
        if let Err(SendError(Message::Write(write))) = tx.send(Message::Write(write)) {
            backlog.release(cost);
            tracing::error!(record = %write.describe(), "store: writer not running; record lost");
        }
    }
}
