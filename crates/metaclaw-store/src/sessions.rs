//! The `sessions` table: one row per conversation.

use chrono::{DateTime, Utc};
use metaclaw_domain::{SessionEndReason, SessionSource};
use rusqlite::{Connection, OptionalExtension, Row, params};
use serde::Serialize;

use crate::error::Result;
use crate::{enums, timestamp};

/// A session as stored.
#[derive(Debug, Clone, PartialEq, Serialize, serde::Deserialize, schemars::JsonSchema)]
pub struct SessionRow {
    pub id: String,
    pub source: SessionSource,
    /// Start of its earliest turn.
    pub started_at: DateTime<Utc>,
    pub last_seen_at: DateTime<Utc>,
    pub ended_at: Option<DateTime<Utc>>,
    pub end_reason: Option<SessionEndReason>,
    /// Turns currently stored (retention lowers it).
    pub turn_count: u64,
    /// The agent whose turns it holds (`default` when unnamed).
    pub agent: String,
}

/// Creates the session on first sight; afterwards only widens its time span.
pub(crate) fn touch(conn: &Connection, id: &str, source: SessionSource, at: &str) -> Result<()> {
    conn.prepare_cached(
        "INSERT INTO sessions (id, source, started_at, last_seen_at, turn_count)
         VALUES (?1, ?2, ?3, ?3, 0)
         ON CONFLICT (id) DO UPDATE SET
             started_at = min(started_at, excluded.started_at),
             last_seen_at = max(last_seen_at, excluded.last_seen_at)",
    )?
    .execute(params![id, source.as_str(), at])?;
    Ok(())
}

pub(crate) fn count_turn(conn: &Connection, id: &str) -> Result<()> {
    conn.prepare_cached("UPDATE sessions SET turn_count = turn_count + 1 WHERE id = ?1")?
        .execute([id])?;
    Ok(())
}

/// Returns false when the session has no row (it never had a turn stored).
pub(crate) fn end(conn: &Connection, id: &str, reason: SessionEndReason, at: &str) -> Result<bool> {
    let changed = conn
        .prepare_cached("UPDATE sessions SET ended_at = ?2, end_reason = ?3 WHERE id = ?1")?
        .execute(params![id, at, reason.as_str()])?;
    Ok(changed > 0)
}

const COLUMNS: &str =
    "id, source, started_at, last_seen_at, ended_at, end_reason, turn_count, agent";

/// Names the session's agent once a turn of a named agent arrives (a session's first turns
/// may be unnamed side requests).
pub(crate) fn set_agent(conn: &Connection, id: &str, agent: &str) -> Result<()> {
    if agent == metaclaw_domain::DEFAULT_AGENT {
        return Ok(());
    }
    conn.prepare_cached("UPDATE sessions SET agent = ?2 WHERE id = ?1 AND agent <> ?2")?
        .execute(params![id, agent])?;
    Ok(())
}

/// Columns as SQLite returns them; converted outside the row callback so conversion errors
/// are `StoreError`s.
struct RawSession {
    id: String,
    source: String,
    started_at: String,
    last_seen_at: String,
    ended_at: Option<String>,
    end_reason: Option<String>,
    turn_count: i64,
    agent: String,
}

impl RawSession {
    fn from_row(r: &Row<'_>) -> rusqlite::Result<Self> {
        Ok(Self {
            id: r.get(0)?,
            source: r.get(1)?,
            started_at: r.get(2)?,
            last_seen_at: r.get(3)?,
            ended_at: r.get(4)?,
            end_reason: r.get(5)?,
            turn_count: r.get(6)?,
            agent: r.get(7)?,
        })
    }

    fn into_row(self) -> Result<SessionRow> {
        Ok(SessionRow {
            source: enums::parse("sessions.source", &self.source)?,
            started_at: timestamp::parse("sessions.started_at", &self.started_at)?,
            last_seen_at: timestamp::parse("sessions.last_seen_at", &self.last_seen_at)?,
            ended_at: self
                .ended_at
                .map(|t| timestamp::parse("sessions.ended_at", &t))
                .transpose()?,
            end_reason: self
                .end_reason
                .map(|r| enums::parse("sessions.end_reason", &r))
                .transpose()?,
            turn_count: u64::try_from(self.turn_count).unwrap_or(0),
            id: self.id,
            agent: self.agent,
        })
    }
}

/// Most recently active first (ties by id), skipping the first `offset`; served in that
/// order by the `sessions_recent` index, so a deep page costs an index walk, not a sort.
pub(crate) fn list(
    conn: &Connection,
    agent: Option<&str>,
    limit: usize,
    offset: usize,
) -> Result<Vec<SessionRow>> {
    let limit = i64::try_from(limit).unwrap_or(i64::MAX);
    let offset = i64::try_from(offset).unwrap_or(i64::MAX);
    // Two statements, so each is served in order by its own index.
    let raws = match agent {
        None => conn
            .prepare_cached(&format!(
                "SELECT {COLUMNS} FROM sessions ORDER BY last_seen_at DESC, id LIMIT ?1 OFFSET ?2"
            ))?
            .query_map(params![limit, offset], RawSession::from_row)?
            .collect::<rusqlite::Result<Vec<_>>>()?,
        Some(agent) => conn
            .prepare_cached(&format!(
                "SELECT {COLUMNS} FROM sessions WHERE agent = ?3
                 ORDER BY last_seen_at DESC, id LIMIT ?1 OFFSET ?2"
            ))?
            .query_map(params![limit, offset, agent], RawSession::from_row)?
            .collect::<rusqlite::Result<Vec<_>>>()?,
    };
    raws.into_iter().map(RawSession::into_row).collect()
}

/// The agents that have sessions, with how many each.
pub(crate) fn agents(conn: &Connection) -> Result<Vec<(String, u64)>> {
    let rows = conn
        .prepare_cached("SELECT agent, count(*) FROM sessions GROUP BY agent ORDER BY agent")?
        .query_map([], |r| Ok((r.get::<_, String>(0)?, r.get::<_, i64>(1)?)))?
        .collect::<rusqlite::Result<Vec<_>>>()?;
    Ok(rows
        .into_iter()
        .map(|(a, n)| (a, u64::try_from(n).unwrap_or(0)))
        .collect())
}

/// Sessions without an end, most recently active first (the `sessions_open` index).
pub(crate) fn open(conn: &Connection) -> Result<Vec<SessionRow>> {
    let mut stmt = conn.prepare_cached(&format!(
        "SELECT {COLUMNS} FROM sessions WHERE ended_at IS NULL ORDER BY last_seen_at DESC"
    ))?;
    let raws = stmt
        .query_map([], RawSession::from_row)?
        .collect::<rusqlite::Result<Vec<_>>>()?;
    raws.into_iter().map(RawSession::into_row).collect()
}

/// Turns stored, from the per-session counts: one row per session instead of one per turn.
pub(crate) fn turn_total(conn: &Connection) -> Result<u64> {
    let n: i64 = conn
        .prepare_cached("SELECT coalesce(sum(turn_count), 0) FROM sessions")?
        .query_row([], |r| r.get(0))?;
    Ok(u64::try_from(n).unwrap_or(0))
}

pub(crate) fn get(conn: &Connection, id: &str) -> Result<Option<SessionRow>> {
    conn.prepare_cached(&format!("SELECT {COLUMNS} FROM sessions WHERE id = ?1"))?
        .query_row([id], RawSession::from_row)
        .optional()?
        .map(RawSession::into_row)
        .transpose()
}

pub(crate) fn count(conn: &Connection) -> Result<u64> {
    let n: i64 = conn
        .prepare_cached("SELECT count(*) FROM sessions")?
        .query_row([], |r| r.get(0))?;
    Ok(u64::try_from(n).unwrap_or(0))
}
