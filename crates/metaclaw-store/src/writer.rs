//! The background writer: the only thread that writes to the database.
//!
//! Group commit: block for one message, take whatever else is queued or arrives within
//! [`LINGER`] (up to [`MAX_BATCH`]), write it all in one transaction, commit, repeat. A turn
//! is committed about 10 ms after it is sent; under load batches grow and the per-commit
//! cost is shared, so throughput keeps up.

use std::panic::{self, AssertUnwindSafe};
use std::sync::Arc;
use std::sync::mpsc::{Receiver, Sender};
use std::thread::{self, JoinHandle};
use std::time::{Duration, Instant};

use chrono::{DateTime, Utc};
use metaclaw_domain::{Clock, SessionEndReason, SessionSource, TurnRecord};
use rusqlite::{Connection, Transaction, TransactionBehavior};

use crate::backlog::{self, Backlog};
use crate::error::{Result, StoreError};
use crate::turns::PreparedTurn;
use crate::{evidence, sessions, skills, timestamp, turns};

/// Upper bound on one transaction, so a large backlog still commits in steady steps.
const MAX_BATCH: usize = 1024;

/// How long a batch of writes waits for more before it commits. A commit's fixed cost (WAL
/// frames of the shared index pages, checkpoints) is most of a lone turn's write; while turns
/// come back to back, sharing it halves the writer's CPU, which would otherwise compete with
/// the requests themselves. Readers that must see a write first ask for a flush.
pub(crate) const LINGER: Duration = Duration::from_millis(10);

/// A change to the log, sent by a [`crate::Recorder`].
#[derive(Debug)]
pub(crate) enum Write {
    /// A turn and its estimated size in memory (its share of the [`Backlog`]).
    Turn(Arc<TurnRecord>, usize),
    SessionSeen {
        session_id: String,
        source: SessionSource,
        at: DateTime<Utc>,
    },
    SessionEnded {
        session_id: String,
        reason: SessionEndReason,
        at: DateTime<Utc>,
    },
    SkillState(skills::StateChange),
    SkillEmbedding {
        model: String,
        hash: String,
        vector: Vec<f32>,
    },
    FollowUp(evidence::FollowUp),
}

impl Write {
    /// For logs about a record that could not be stored.
    pub(crate) fn describe(&self) -> String {
        match self {
            Self::Turn(t, _) => format!("turn {} (session {})", t.turn_id, t.session_id),
            Self::SessionSeen { session_id, .. } => format!("session_seen {session_id}"),
            Self::SessionEnded { session_id, .. } => format!("session_ended {session_id}"),
            Self::SkillState(c) => format!("skill_state {}", c.name),
            Self::SkillEmbedding { hash, .. } => format!("skill_embedding {hash}"),
            Self::FollowUp(f) => format!("follow_up of turn {}", f.turn_id),
        }
    }

    /// What this write counts against the backlog (only turns are large).
    pub(crate) fn cost(&self) -> usize {
        match self {
            Self::Turn(_, cost) => *cost,
            _ => 0,
        }
    }
}

/// Work that must run on the writer connection and answer its caller: the closure sends its
/// own reply (see `Store::call`). Runs after everything sent before it is committed.
pub(crate) struct Call(Box<dyn FnOnce(&mut Connection) + Send>);

impl Call {
    pub(crate) fn new(f: impl FnOnce(&mut Connection) + Send + 'static) -> Self {
        Self(Box::new(f))
    }

    /// A panicking call loses only itself: its reply channel closes, the writer goes on.
    /// (An open transaction is rolled back when it is dropped during the unwind.)
    fn run(self, conn: &mut Connection) {
        if panic::catch_unwind(AssertUnwindSafe(|| (self.0)(conn))).is_err() {
            tracing::error!("store: a writer call panicked; it was abandoned");
        }
    }
}

impl std::fmt::Debug for Call {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Call(..)")
    }
}

/// Runs `f` in one `BEGIN IMMEDIATE` transaction, committed if `f` succeeds.
pub(crate) fn in_transaction<T>(
    conn: &mut Connection,
    f: impl FnOnce(&Transaction<'_>) -> Result<T>,
) -> Result<T> {
    let tx = conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
    let value = f(&tx)?;
    tx.commit()?;
    Ok(value)
}

#[derive(Debug)]
pub(crate) enum Message {
    Write(Write),
    /// Answered once everything sent before it is committed.
    Flush(Sender<()>),
    /// A synchronous operation with a result (prune, ids of new rows, ...).
    Call(Call),
    /// Commit everything queued, then stop.
    Shutdown,
    /// Tests: stall the writer until the sender side is dropped, so a batch piles up.
    #[cfg(test)]
    Hold(std::sync::mpsc::Receiver<()>),
}

/// A write with its CPU work (serialization, hashing) already done.
#[derive(Debug)]
enum Op {
    Turn(Box<PreparedTurn>),
    SessionSeen {
        session_id: String,
        source: SessionSource,
        at: String,
    },
    SessionEnded {
        session_id: String,
        reason: SessionEndReason,
        at: String,
    },
    SkillState(skills::StateChange, String),
    SkillEmbedding {
        model: String,
        hash: String,
        vector: Vec<f32>,
        at: String,
    },
    FollowUp(evidence::FollowUp),
}

impl Op {
    /// `clock` stamps the writes that carry no time of their own.
    fn prepare(write: Write, clock: &dyn Clock) -> Result<Self> {
        Ok(match write {
            Write::Turn(t, _) => Self::Turn(Box::new(PreparedTurn::new(
                // Hooks share the record; copy it only if one still holds it.
                Arc::try_unwrap(t).unwrap_or_else(|shared| (*shared).clone()),
            )?)),
            Write::SessionSeen {
                session_id,
                source,
                at,
            } => Self::SessionSeen {
                session_id,
                source,
                at: timestamp::format(at),
            },
            Write::SessionEnded {
                session_id,
                reason,
                at,
            } => Self::SessionEnded {
                session_id,
                reason,
                at: timestamp::format(at),
            },
            Write::SkillState(c) => Self::SkillState(c, timestamp::format(clock.now())),
            Write::SkillEmbedding {
                model,
                hash,
                vector,
            } => Self::SkillEmbedding {
                model,
                hash,
                vector,
                at: timestamp::format(clock.now()),
            },
            Write::FollowUp(f) => Self::FollowUp(f),
        })
    }

    fn describe(&self) -> String {
        match self {
            Self::Turn(t) => format!(
                "turn {} (session {})",
                t.record.turn_id, t.record.session_id
            ),
            Self::SessionSeen { session_id, .. } => format!("session_seen {session_id}"),
            Self::SessionEnded { session_id, .. } => format!("session_ended {session_id}"),
            Self::SkillState(c, _) => format!("skill_state {}", c.name),
            Self::SkillEmbedding { hash, .. } => format!("skill_embedding {hash}"),
            Self::FollowUp(f) => format!("follow_up of turn {}", f.turn_id),
        }
    }

    fn apply(&self, conn: &Connection) -> Result<()> {
        match self {
            Self::Turn(t) => turns::insert(conn, t),
            Self::SessionSeen {
                session_id,
                source,
                at,
            } => sessions::touch(conn, session_id, *source, at),
            Self::SessionEnded {
                session_id,
                reason,
                at,
            } => {
                if !sessions::end(conn, session_id, *reason, at)? {
                    // Sessions are created by their turns; one without any is not worth a row.
                    tracing::debug!(%session_id, "store: end of a session with no stored turns");
                }
                Ok(())
            }
            Self::SkillState(c, at) => skills::apply_state(conn, c, at),
            Self::SkillEmbedding {
                model,
                hash,
                vector,
                at,
            } => skills::put_embedding(conn, model, hash, vector, at),
            Self::FollowUp(f) => evidence::apply_follow_up(conn, f),
        }
    }
}

pub(crate) fn spawn(
    conn: Connection,
    rx: Receiver<Message>,
    backlog: Arc<Backlog>,
    clock: Arc<dyn Clock>,
    linger: Duration,
) -> Result<JoinHandle<()>> {
    thread::Builder::new()
        .name("metaclaw-store-writer".into())
        .spawn(move || run(conn, rx, &backlog, clock.as_ref(), linger))
        .map_err(StoreError::SpawnWriter)
}

fn run(
    mut conn: Connection,
    rx: Receiver<Message>,
    backlog: &Backlog,
    clock: &dyn Clock,
    linger: Duration,
) {
    let mut pending: Vec<Op> = Vec::new();
    // Backlog bytes of the ops in `pending`, released once they are committed.
    let mut pending_cost = 0usize;
    let mut shutting_down = false;
    let commit_and_release = |conn: &mut Connection, pending: &mut Vec<Op>, cost: &mut usize| {
        commit(conn, pending);
        backlog.release(std::mem::take(cost));
    };
    while let Ok(first) = rx.recv() {
        let started = Instant::now();
        let mut next = Some(first);
        let mut taken = 0usize;
        while let Some(message) = next.take() {
            taken += 1;
            match message {
                Message::Write(write) => {
                    pending_cost += write.cost();
                    match Op::prepare(write, clock) {
                        Ok(op) => pending.push(op),
                        Err(error) => {
                            tracing::error!(%error, "store: record not storable; dropped")
                        }
                    }
                }
                Message::Flush(reply) => {
                    commit_and_release(&mut conn, &mut pending, &mut pending_cost);
                    let _ = reply.send(());
                }
                Message::Call(call) => {
                    commit_and_release(&mut conn, &mut pending, &mut pending_cost);
                    call.run(&mut conn);
                }
                Message::Shutdown => shutting_down = true,
                #[cfg(test)]
                Message::Hold(release) => {
                    let _ = release.recv();
                }
            }
            // On shutdown, drain everything regardless of batch size.
            if shutting_down {
                next = rx.try_recv().ok();
            } else if taken < MAX_BATCH {
                next = rx.try_recv().ok().or_else(|| {
                    // Wait out the rest of the linger for more, if writes are pending (a flush
                    // or a call has committed them already otherwise).
                    let left = linger.checked_sub(started.elapsed())?;
                    if pending.is_empty() {
                        return None;
                    }
                    rx.recv_timeout(left).ok()
                });
            }
        }
        commit_and_release(&mut conn, &mut pending, &mut pending_cost);
        if shutting_down {
            break;
        }
        // Nothing queued after a burst: give the memory it used back to the OS.
        if backlog.queued() == 0 && backlog.take_return_due() {
            backlog::return_memory_to_os();
        }
    }
    tracing::debug!("store: writer stopped");
}

/// Writes `pending` in one transaction, never returning an error: the writer keeps going.
///
/// Recovery: an op failing on its own (e.g. a duplicate turn id) is rolled back alone and
/// retried once with the other failures; a failed transaction is retried once as a whole
/// (transient: busy, I/O), then split into one transaction per op so a poisoned op cannot
/// sink the others. Every record that is still not stored is logged by name.
fn commit(conn: &mut Connection, pending: &mut Vec<Op>) {
    if pending.is_empty() {
        return;
    }
    let mut todo: Vec<&Op> = pending.iter().collect();
    for attempt in 1..=2 {
        match write_batch(conn, &todo) {
            Ok(failed) if failed.is_empty() => {
                todo.clear();
                break;
            }
            Ok(failed) if attempt == 2 => {
                for (op, error) in failed {
                    tracing::error!(record = %op.describe(), %error, "store: record lost after retry");
                }
                todo.clear();
                break;
            }
            Ok(failed) => {
                tracing::warn!(
                    failed = failed.len(),
                    "store: some records failed to write; retrying"
                );
                todo = failed.into_iter().map(|(op, _)| op).collect();
            }
            Err(error) => {
                tracing::warn!(attempt, records = todo.len(), %error, "store: batch transaction failed");
            }
        }
    }
    // Non-empty only if the transaction failed twice as a whole.
    write_one_by_one(conn, &todo);
    pending.clear();
}

fn write_one_by_one(conn: &mut Connection, ops: &[&Op]) {
    let mut ops = ops.iter();
    while let Some(&op) = ops.next() {
        let error = match write_batch(conn, &[op]) {
            Ok(mut failed) => match failed.pop() {
                None => continue,
                Some((_, error)) => error,
            },
            Err(error) => error,
        };
        tracing::error!(record = %op.describe(), %error, "store: record lost after retry");
        // Another process holding the lock would make every remaining op wait out the busy
        // timeout in turn; give up on the batch instead of stalling for minutes.
        if is_busy(&error) {
            for op in ops.by_ref() {
                tracing::error!(record = %op.describe(), %error, "store: record lost (database busy)");
            }
        }
    }
}

fn is_busy(error: &StoreError) -> bool {
    matches!(
        error,
        StoreError::Sqlite(e) if matches!(
            e.sqlite_error_code(),
            Some(rusqlite::ErrorCode::DatabaseBusy | rusqlite::ErrorCode::DatabaseLocked)
        )
    )
}

/// `Err` when the transaction as a whole failed (nothing of it is committed); otherwise the
/// ops that failed individually (everything else is committed).
fn write_batch<'a>(conn: &mut Connection, ops: &[&'a Op]) -> Result<Vec<(&'a Op, StoreError)>> {
    let mut tx = conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
    let mut failed = Vec::new();
    for &op in ops {
        let sp = tx.savepoint()?;
        match op.apply(&sp) {
            Ok(()) => sp.commit()?,
            Err(error) => {
                drop(sp); // rolls back this op only
                // Errors like SQLITE_FULL make SQLite roll back the whole transaction.
                if tx.is_autocommit() {
                    return Err(error);
                }
                failed.push((op, error));
            }
        }
    }
    tx.commit()?;
    Ok(failed)
}
