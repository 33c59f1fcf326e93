//! The `proposals` table: skills the evolver proposes, and what the user decided.

use std::collections::HashSet;

use chrono::{DateTime, Utc};
use rusqlite::{Connection, OptionalExtension, Row, params};
use serde::Serialize;
use serde_json::Value;

use crate::enums::{parse_text, text_enum};
use crate::error::{Result, StoreError};
use crate::timestamp;

text_enum! {
    /// Whether a proposal creates a skill or rewrites an existing one.
    pub enum ProposalKind("proposal kind") {
        New = "new",
        Update = "update",
    }
}

text_enum! {
    /// Where a proposal stands. Every proposal starts `Pending`.
    pub enum ProposalStatus("proposal status") {
        Pending = "pending",
        Approved = "approved",
        Rejected = "rejected",
        /// Approved, then reverted by the user.
        Undone = "undone",
    }
}

/// A proposal to store; it is stored as [`ProposalStatus::Pending`].
#[derive(Debug, Clone, PartialEq)]
pub struct NewProposal {
    pub kind: ProposalKind,
    pub skill_name: String,
    /// The full proposed SKILL.md.
    pub content: String,
    /// For updates: the skill's SKILL.md when the proposal was made.
    pub base_content: Option<String>,
    pub diff: Option<String>,
    pub reason: String,
    pub session_id: Option<String>,
    pub turn_ids: Vec<String>,
    pub signals: Value,
    pub evolver_model: String,
    /// Identifies the proposal's substance, so a rejected idea is not proposed again.
    pub fingerprint: String,
}

/// A proposal as stored.
#[derive(Debug, Clone, PartialEq, Serialize, serde::Deserialize, schemars::JsonSchema)]
pub struct ProposalRow {
    pub id: i64,
    pub kind: ProposalKind,
    pub skill_name: String,
    pub content: String,
    pub base_content: Option<String>,
    pub diff: Option<String>,
    pub reason: String,
    pub session_id: Option<String>,
    pub turn_ids: Vec<String>,
    pub signals: Value,
    pub evolver_model: String,
    pub status: ProposalStatus,
    pub reject_reason: Option<String>,
    pub fingerprint: String,
    pub created_at: DateTime<Utc>,
    /// When the status last left `Pending`; `None` while pending.
    pub decided_at: Option<DateTime<Utc>>,
    /// The agent whose skills folder it goes to (its session's agent); `None`: the shared
    /// folder, for every agent.
    pub agent: Option<String>,
}

/// Returns the new proposal's id.
pub(crate) fn insert(conn: &Connection, p: &NewProposal, at: &str) -> Result<i64> {
    conn.prepare_cached(
        "INSERT INTO proposals (
             kind, skill_name, content, base_content, diff, reason, session_id, turn_ids,
             signals, evolver_model, status, fingerprint, created_at, agent)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13,
                 (SELECT agent FROM sessions WHERE id = ?7 AND agent <> 'default'))",
    )?
    .execute(params![
        p.kind.as_str(),
        p.skill_name,
        p.content,
        p.base_content,
        p.diff,
        p.reason,
        p.session_id,
        serde_json::to_string(&p.turn_ids)?,
        serde_json::to_string(&p.signals)?,
        p.evolver_model,
        ProposalStatus::Pending.as_str(),
        p.fingerprint,
        at,
    ])?;
    Ok(conn.last_insert_rowid())
}

/// Sets the status and reject reason (`None` clears it). `decided_at` becomes `at`, or
/// NULL when the proposal goes back to pending. `NotFound` if there is no such proposal.
pub(crate) fn set_status(
    conn: &Connection,
    id: i64,
    status: ProposalStatus,
    reject_reason: Option<&str>,
    at: &str,
) -> Result<()> {
    let decided_at = (status != ProposalStatus::Pending).then_some(at);
    let changed = conn
        .prepare_cached(
            "UPDATE proposals SET status = ?2, reject_reason = ?3, decided_at = ?4 WHERE id = ?1",
        )?
        .execute(params![id, status.as_str(), reject_reason, decided_at])?;
    if changed == 0 {
        return Err(StoreError::NotFound {
            what: "proposal",
            id: id.to_string(),
        });
    }
    Ok(())
}

const COLUMNS: &str = "id, kind, skill_name, content, base_content, diff, reason, session_id, \
     turn_ids, signals, evolver_model, status, reject_reason, fingerprint, created_at, decided_at, \
     agent";

/// Give the proposal to every agent (its skill goes to the shared folder) or to one.
pub(crate) fn set_agent(conn: &Connection, id: i64, agent: Option<&str>) -> Result<()> {
    let changed = conn
        .prepare_cached("UPDATE proposals SET agent = ?2 WHERE id = ?1")?
        .execute(params![id, agent])?;
    if changed == 0 {
        return Err(StoreError::NotFound {
            what: "proposal",
            id: id.to_string(),
        });
    }
    Ok(())
}

/// Columns as SQLite returns them; converted outside the row callback.
struct RawProposal {
    id: i64,
    kind: String,
    skill_name: String,
    content: String,
    base_content: Option<String>,
    diff: Option<String>,
    reason: String,
    session_id: Option<String>,
    turn_ids: String,
    signals: String,
    evolver_model: String,
    status: String,
    reject_reason: Option<String>,
    fingerprint: String,
    created_at: String,
    decided_at: Option<String>,
    agent: Option<String>,
}

impl RawProposal {
    fn from_row(r: &Row<'_>) -> rusqlite::Result<Self> {
        Ok(Self {
            id: r.get(0)?,
            kind: r.get(1)?,
            skill_name: r.get(2)?,
            content: r.get(3)?,
            base_content: r.get(4)?,
            diff: r.get(5)?,
            reason: r.get(6)?,
            session_id: r.get(7)?,
            turn_ids: r.get(8)?,
            signals: r.get(9)?,
            evolver_model: r.get(10)?,
            status: r.get(11)?,
            reject_reason: r.get(12)?,
            fingerprint: r.get(13)?,
            created_at: r.get(14)?,
            decided_at: r.get(15)?,
            agent: r.get(16)?,
        })
    }

    fn into_row(self) -> Result<ProposalRow> {
        Ok(ProposalRow {
            id: self.id,
            kind: parse_text("proposals.kind", &self.kind)?,
            skill_name: self.skill_name,
            content: self.content,
            base_content: self.base_content,
            diff: self.diff,
            reason: self.reason,
            session_id: self.session_id,
            turn_ids: serde_json::from_str(&self.turn_ids)?,
            signals: serde_json::from_str(&self.signals)?,
            evolver_model: self.evolver_model,
            status: parse_text("proposals.status", &self.status)?,
            reject_reason: self.reject_reason,
            fingerprint: self.fingerprint,
            created_at: timestamp::parse("proposals.created_at", &self.created_at)?,
            decided_at: self
                .decided_at
                .map(|t| timestamp::parse("proposals.decided_at", &t))
                .transpose()?,
            agent: self.agent,
        })
    }
}

pub(crate) fn get(conn: &Connection, id: i64) -> Result<Option<ProposalRow>> {
    conn.prepare_cached(&format!("SELECT {COLUMNS} FROM proposals WHERE id = ?1"))?
        .query_row([id], RawProposal::from_row)
        .optional()?
        .map(RawProposal::into_row)
        .transpose()
}

/// Newest first, `limit` from `offset`; every status when `status` is `None`.
pub(crate) fn list(
    conn: &Connection,
    status: Option<ProposalStatus>,
    agent: Option<&str>,
    limit: usize,
    offset: usize,
) -> Result<Vec<ProposalRow>> {
    let limit = i64::try_from(limit).unwrap_or(i64::MAX);
    let offset = i64::try_from(offset).unwrap_or(i64::MAX);
    // NULL status matches every row; the (status, id) index serves the filtered case.
    let raws = conn
        .prepare_cached(&format!(
            "SELECT {COLUMNS} FROM proposals WHERE (?1 IS NULL OR status = ?1)
                 AND (?4 IS NULL OR agent = ?4)
             ORDER BY id DESC LIMIT ?2 OFFSET ?3"
        ))?
        .query_map(
            rusqlite::params![status.map(ProposalStatus::as_str), limit, offset, agent],
            RawProposal::from_row,
        )?
        .collect::<rusqlite::Result<Vec<_>>>()?;
    raws.into_iter().map(RawProposal::into_row).collect()
}

/// How many proposals have `status` (counted on the index, no row is read).
pub(crate) fn count(conn: &Connection, status: ProposalStatus) -> Result<u64> {
    let n: i64 = conn
        .prepare_cached("SELECT count(*) FROM proposals WHERE status = ?1")?
        .query_row([status.as_str()], |r| r.get(0))?;
    Ok(u64::try_from(n).unwrap_or(0))
}

pub(crate) fn rejected_fingerprints(conn: &Connection) -> Result<HashSet<String>> {
    let fingerprints = conn
        .prepare_cached("SELECT DISTINCT fingerprint FROM proposals WHERE status = 'rejected'")?
        .query_map([], |r| r.get(0))?
        .collect::<rusqlite::Result<_>>()?;
    Ok(fingerprints)
}

/// Distinct, sorted.
pub(crate) fn rejected_names(conn: &Connection) -> Result<Vec<String>> {
    let names = conn
        .prepare_cached(
            "SELECT DISTINCT skill_name FROM proposals WHERE status = 'rejected' ORDER BY skill_name",
        )?
        .query_map([], |r| r.get(0))?
        .collect::<rusqlite::Result<_>>()?;
    Ok(names)
}
