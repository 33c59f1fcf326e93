//! Deleting old turns and whatever they alone kept alive, in bounded batches.
//!
//! A year of turns can take minutes to delete. Each batch is its own short transaction on
//! the writer thread, so the turns recorded meanwhile are committed between batches (the
//! writer never stalls for the whole prune) and readers, on WAL, are never blocked.

use chrono::{DateTime, Utc};
use rusqlite::{Connection, TransactionBehavior};
use serde::Serialize;

use crate::error::Result;
use crate::timestamp;

/// Rows deleted per transaction. A turn takes its blob links, skills, feedback, votes,
/// rewards and samples along; on a busy machine a year-old log deletes a few hundred turns
/// per second, so this keeps each batch (and what waits behind it on the writer) well
/// under a second.
pub(crate) const BATCH: usize = 250;

/// What one [`crate::Store::prune`] removed.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct PruneReport {
    pub turns: u64,
    pub sessions: u64,
    pub blobs: u64,
}

impl PruneReport {
    pub(crate) fn add(&mut self, other: PruneReport) {
        self.turns += other.turns;
        self.sessions += other.sessions;
        self.blobs += other.blobs;
    }

    fn rows(&self) -> u64 {
        self.turns + self.sessions + self.blobs
    }
}

/// One batch of retention: deletes up to `batch` of the oldest turns started before
/// `older_than`; once none is left, up to `batch` sessions left without turns, then up to
/// `batch` blobs no turn references. `done` is true when nothing was left to delete.
pub(crate) fn prune_batch(
    conn: &mut Connection,
    older_than: DateTime<Utc>,
    batch: usize,
) -> Result<(PruneReport, bool)> {
    let cutoff = timestamp::format(older_than);
    let limit = i64::try_from(batch).unwrap_or(i64::MAX);
    let tx = conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
    let mut report = PruneReport::default();

    tx.execute_batch(
        "CREATE TEMP TABLE IF NOT EXISTS prune_turns (id TEXT PRIMARY KEY, session_id TEXT);
         DELETE FROM temp.prune_turns;",
    )?;
    tx.execute(
        "INSERT INTO temp.prune_turns (id, session_id)
         SELECT id, session_id FROM turns WHERE started_at < ?1 ORDER BY started_at LIMIT ?2",
        rusqlite::params![cutoff, limit],
    )?;
    // Keep turn_count equal to the turns still stored.
    tx.execute(
        "UPDATE sessions SET turn_count = turn_count
             - (SELECT count(*) FROM temp.prune_turns p WHERE p.session_id = sessions.id)
         WHERE id IN (SELECT session_id FROM temp.prune_turns)",
        [],
    )?;
    // Their blob links, skills, feedback, votes, rewards and samples go with them
    // (ON DELETE CASCADE).
    report.turns = tx.execute(
        "DELETE FROM turns WHERE id IN (SELECT id FROM temp.prune_turns)",
        [],
    )? as u64;
    tx.execute("DELETE FROM temp.prune_turns", [])?;

    if report.turns == 0 {
        // The last_seen_at guard spares a live session whose first turn is not yet written.
        report.sessions = tx.execute(
            "DELETE FROM sessions WHERE rowid IN (
                 SELECT rowid FROM sessions
                 WHERE last_seen_at < ?1
                   AND NOT EXISTS (SELECT 1 FROM turns t WHERE t.session_id = sessions.id)
                 LIMIT ?2)",
            rusqlite::params![cutoff, limit],
        )? as u64;
    }
    if report.turns == 0 && report.sessions == 0 {
        // Later tables that reference blobs must be added here. Their foreign keys make a
        // forgotten one fail loudly instead of leaving dangling refs.
        report.blobs = tx.execute(
            "DELETE FROM blobs WHERE hash IN (
                 SELECT hash FROM blobs
                 WHERE NOT EXISTS (SELECT 1 FROM turn_blobs tb WHERE tb.hash = blobs.hash)
                 LIMIT ?1)",
            [limit],
        )? as u64;
    }
    tx.commit()?;
    Ok((report, report.rows() == 0))
}

pub(crate) fn log(older_than: DateTime<Utc>, report: &PruneReport) {
    tracing::info!(cutoff = %timestamp::format(older_than), ?report, "store: pruned");
}

/// Deletes one session: its turns (with everything that cascades from them), the session
/// row, and the blobs no other turn references. One transaction.
pub(crate) fn delete_session(conn: &mut Connection, session_id: &str) -> Result<PruneReport> {
    let tx = conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
    let exists: bool = tx.query_row(
        "SELECT EXISTS (SELECT 1 FROM sessions WHERE id = ?1)",
        [session_id],
        |r| r.get(0),
    )?;
    if !exists {
        return Err(crate::StoreError::NotFound {
            what: "session",
            id: session_id.to_owned(),
        });
    }
    let mut report = PruneReport {
        turns: tx.execute("DELETE FROM turns WHERE session_id = ?1", [session_id])? as u64,
        sessions: tx.execute("DELETE FROM sessions WHERE id = ?1", [session_id])? as u64,
        blobs: 0,
    };
    report.blobs = tx.execute(
        "DELETE FROM blobs WHERE NOT EXISTS (SELECT 1 FROM turn_blobs tb WHERE tb.hash = blobs.hash)",
        [],
    )? as u64;
    tx.commit()?;
    Ok(report)
}
