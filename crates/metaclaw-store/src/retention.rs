//! Deleting old turns and whatever they alone kept alive.

use chrono::{DateTime, Utc};
use rusqlite::{Connection, TransactionBehavior};
use serde::Serialize;

use crate::error::Result;
use crate::timestamp;

/// What one [`crate::Store::prune`] removed.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct PruneReport {
    pub turns: u64,
    pub sessions: u64,
    pub blobs: u64,
}

/// Deletes turns started before `older_than`, sessions left without turns, and blobs no
/// turn references. One transaction: readers see either the old or the pruned log.
pub(crate) fn prune(conn: &mut Connection, older_than: DateTime<Utc>) -> Result<PruneReport> {
    let cutoff = timestamp::format(older_than);
    let tx = conn.transaction_with_behavior(TransactionBehavior::Immediate)?;

    // Keep turn_count equal to the turns still stored, for the sessions about to lose some.
    tx.execute(
        "UPDATE sessions SET turn_count =
             (SELECT count(*) FROM turns t WHERE t.session_id = sessions.id AND t.started_at >= ?1)
         WHERE id IN (SELECT session_id FROM turns WHERE started_at < ?1)",
        [&cutoff],
    )?;
    // turn_blobs rows go with them (ON DELETE CASCADE).
    let turns = tx.execute("DELETE FROM turns WHERE started_at < ?1", [&cutoff])?;
    // The last_seen_at guard spares a live session whose first turn is not yet written.
    let sessions = tx.execute(
        "DELETE FROM sessions
         WHERE last_seen_at < ?1
           AND NOT EXISTS (SELECT 1 FROM turns t WHERE t.session_id = sessions.id)",
        [&cutoff],
    )?;
    // Later tables that reference blobs must be added here. Their foreign keys make a
    // forgotten one fail loudly instead of leaving dangling refs.
    let blobs = tx.execute(
        "DELETE FROM blobs WHERE NOT EXISTS (SELECT 1 FROM turn_blobs tb WHERE tb.hash = blobs.hash)",
        [],
    )?;
    tx.commit()?;

    let report = PruneReport {
        turns: turns as u64,
        sessions: sessions as u64,
        blobs: blobs as u64,
    };
    tracing::info!(cutoff = %cutoff, ?report, "store: pruned");
    Ok(report)
}
