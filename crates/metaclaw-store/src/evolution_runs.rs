//! The `evolution_runs` table: one row per evolver run, whatever its outcome.

use chrono::{DateTime, Utc};
use rusqlite::{Connection, OptionalExtension, Row, params};
use serde::Serialize;

use crate::enums::{parse_text, text_enum};
use crate::error::Result;
use crate::timestamp;
use crate::turns::{to_i64, to_u64};

text_enum! {
    /// What started an evolver run.
    pub enum EvolutionTrigger("evolution trigger") {
        SessionEnd = "session_end",
        EveryNTurns = "every_n_turns",
        Manual = "manual",
    }
}

text_enum! {
    /// How an evolver run ended.
    pub enum EvolutionRunStatus("evolution run status") {
        Ok = "ok",
        Failed = "failed",
        /// Nothing to do (e.g. no new turns); not an error.
        Skipped = "skipped",
    }
}

/// A finished evolver run to record.
#[derive(Debug, Clone, PartialEq)]
pub struct NewEvolutionRun {
    pub session_id: Option<String>,
    pub trigger: EvolutionTrigger,
    pub status: EvolutionRunStatus,
    pub error: Option<String>,
    /// Proposals the run stored.
    pub proposals: u64,
    pub model: String,
    pub started_at: DateTime<Utc>,
    pub finished_at: DateTime<Utc>,
}

/// An evolver run as stored.
#[derive(Debug, Clone, PartialEq, Serialize, serde::Deserialize, schemars::JsonSchema)]
pub struct EvolutionRunRow {
    pub id: i64,
    pub session_id: Option<String>,
    pub trigger: EvolutionTrigger,
    pub status: EvolutionRunStatus,
    pub error: Option<String>,
    pub proposals: u64,
    pub model: String,
    pub started_at: DateTime<Utc>,
    pub finished_at: DateTime<Utc>,
}

/// Returns the new run's id.
pub(crate) fn insert(conn: &Connection, run: &NewEvolutionRun) -> Result<i64> {
    conn.prepare_cached(
        "INSERT INTO evolution_runs (
             session_id, \"trigger\", status, error, proposals, model, started_at, finished_at)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)",
    )?
    .execute(params![
        run.session_id,
        run.trigger.as_str(),
        run.status.as_str(),
        run.error,
        to_i64(run.proposals),
        run.model,
        timestamp::format(run.started_at),
        timestamp::format(run.finished_at),
    ])?;
    Ok(conn.last_insert_rowid())
}

const COLUMNS: &str =
    "id, session_id, \"trigger\", status, error, proposals, model, started_at, finished_at";

/// Columns as SQLite returns them; converted outside the row callback.
struct RawRun {
    id: i64,
    session_id: Option<String>,
    trigger: String,
    status: String,
    error: Option<String>,
    proposals: i64,
    model: String,
    started_at: String,
    finished_at: String,
}

impl RawRun {
    fn from_row(r: &Row<'_>) -> rusqlite::Result<Self> {
        Ok(Self {
            id: r.get(0)?,
            session_id: r.get(1)?,
            trigger: r.get(2)?,
            status: r.get(3)?,
            error: r.get(4)?,
            proposals: r.get(5)?,
            model: r.get(6)?,
            started_at: r.get(7)?,
            finished_at: r.get(8)?,
        })
    }

    fn into_row(self) -> Result<EvolutionRunRow> {
        Ok(EvolutionRunRow {
            id: self.id,
            session_id: self.session_id,
            trigger: parse_text("evolution_runs.trigger", &self.trigger)?,
            status: parse_text("evolution_runs.status", &self.status)?,
            error: self.error,
            proposals: to_u64(self.proposals),
            model: self.model,
            started_at: timestamp::parse("evolution_runs.started_at", &self.started_at)?,
            finished_at: timestamp::parse("evolution_runs.finished_at", &self.finished_at)?,
        })
    }
}

/// Newest (by start) first.
pub(crate) fn list(conn: &Connection, limit: usize) -> Result<Vec<EvolutionRunRow>> {
    let limit = i64::try_from(limit).unwrap_or(i64::MAX);
    let raws = conn
        .prepare_cached(&format!(
            "SELECT {COLUMNS} FROM evolution_runs ORDER BY started_at DESC, id DESC LIMIT ?1"
        ))?
        .query_map([limit], RawRun::from_row)?
        .collect::<rusqlite::Result<Vec<_>>>()?;
    raws.into_iter().map(RawRun::into_row).collect()
}

/// The most recently started run that failed.
pub(crate) fn last_failure(conn: &Connection) -> Result<Option<EvolutionRunRow>> {
    conn.prepare_cached(&format!(
        "SELECT {COLUMNS} FROM evolution_runs WHERE status = 'failed'
         ORDER BY started_at DESC, id DESC LIMIT 1"
    ))?
    .query_row([], RawRun::from_row)
    .optional()?
    .map(RawRun::into_row)
    .transpose()
}
