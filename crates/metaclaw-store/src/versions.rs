//! The `skill_versions` table and the skill generation counter in `meta`.
//!
//! Every change to a skill (created, approved proposal, edit, rollback, undo, delete) is a
//! new version row, numbered 1, 2, ... per skill, and starts a new skill generation: one
//! counter over all skills, so a turn's `skill_generation` says which skill set served it.

use chrono::{DateTime, Utc};
use rusqlite::{Connection, OptionalExtension, Row, params};
use serde::Serialize;

use crate::enums::{parse_text, text_enum};
use crate::error::{Result, StoreError};
use crate::timestamp;
use crate::turns::{to_i64, to_u64};

text_enum! {
    /// Who wrote a skill version.
    pub enum Author("skill version author") {
        User = "user",
        Evolver = "evolver",
    }
}

text_enum! {
    /// How a skill version came about.
    pub enum VersionAction("skill version action") {
        Create = "create",
        /// A proposal was approved.
        Approve = "approve",
        Edit = "edit",
        Rollback = "rollback",
        /// An approved proposal was undone.
        Undo = "undo",
        Delete = "delete",
    }
}

/// A skill version to record; the store assigns the version number and generation.
#[derive(Debug, Clone, PartialEq)]
pub struct NewSkillVersion {
    pub skill_name: String,
    /// The SKILL.md text of this version.
    pub content: String,
    pub author: Author,
    pub action: VersionAction,
    /// The proposal this version applies or reverts, if any.
    pub proposal_id: Option<i64>,
}

/// A skill version as stored.
#[derive(Debug, Clone, PartialEq, Serialize, serde::Deserialize, schemars::JsonSchema)]
pub struct SkillVersionRow {
    pub id: i64,
    pub skill_name: String,
    /// 1 for a skill's first version, then 2, 3, ...
    pub version: u64,
    pub content: String,
    pub author: Author,
    pub action: VersionAction,
    pub proposal_id: Option<i64>,
    /// The skill generation this version started.
    pub generation: u64,
    pub created_at: DateTime<Utc>,
}

const GENERATION_KEY: &str = "skill_generation";

fn parse_generation(text: &str) -> Result<u64> {
    text.parse().map_err(|_| StoreError::InvalidColumn {
        column: "meta.value (skill_generation)",
        value: text.to_owned(),
    })
}

/// Numbers the version, bumps the generation and inserts the row. Run it inside one
/// transaction (see `writer::in_transaction`) so the three steps are atomic.
pub(crate) fn record(conn: &Connection, v: &NewSkillVersion, at: &str) -> Result<SkillVersionRow> {
    let version: i64 = conn
        .prepare_cached(
            "SELECT coalesce(max(version), 0) + 1 FROM skill_versions WHERE skill_name = ?1",
        )?
        .query_row([&v.skill_name], |r| r.get(0))?;
    let generation: String = conn
        .prepare_cached(
            "INSERT INTO meta (key, value) VALUES (?1, '1')
             ON CONFLICT (key) DO UPDATE SET value = CAST(CAST(value AS INTEGER) + 1 AS TEXT)
             RETURNING value",
        )?
        .query_row([GENERATION_KEY], |r| r.get(0))?;
    let generation = parse_generation(&generation)?;
    conn.prepare_cached(
        "INSERT INTO skill_versions (
             skill_name, version, content, author, action, proposal_id, generation, created_at)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)",
    )?
    .execute(params![
        v.skill_name,
        version,
        v.content,
        v.author.as_str(),
        v.action.as_str(),
        v.proposal_id,
        to_i64(generation),
        at,
    ])?;
    Ok(SkillVersionRow {
        id: conn.last_insert_rowid(),
        skill_name: v.skill_name.clone(),
        version: to_u64(version),
        content: v.content.clone(),
        author: v.author,
        action: v.action,
        proposal_id: v.proposal_id,
        generation,
        created_at: timestamp::parse("skill_versions.created_at", at)?,
    })
}

/// The current skill generation; 0 before any skill version is recorded.
pub(crate) fn generation(conn: &Connection) -> Result<u64> {
    let value: Option<String> = conn
        .prepare_cached("SELECT value FROM meta WHERE key = ?1")?
        .query_row([GENERATION_KEY], |r| r.get(0))
        .optional()?;
    value.as_deref().map_or(Ok(0), parse_generation)
}

const COLUMNS: &str =
    "id, skill_name, version, content, author, action, proposal_id, generation, created_at";

/// Columns as SQLite returns them; converted outside the row callback.
struct RawVersion {
    id: i64,
    skill_name: String,
    version: i64,
    content: String,
    author: String,
    action: String,
    proposal_id: Option<i64>,
    generation: i64,
    created_at: String,
}

impl RawVersion {
    fn from_row(r: &Row<'_>) -> rusqlite::Result<Self> {
        Ok(Self {
            id: r.get(0)?,
            skill_name: r.get(1)?,
            version: r.get(2)?,
            content: r.get(3)?,
            author: r.get(4)?,
            action: r.get(5)?,
            proposal_id: r.get(6)?,
            generation: r.get(7)?,
            created_at: r.get(8)?,
        })
    }

    fn into_row(self) -> Result<SkillVersionRow> {
        Ok(SkillVersionRow {
            id: self.id,
            skill_name: self.skill_name,
            version: to_u64(self.version),
            content: self.content,
            author: parse_text("skill_versions.author", &self.author)?,
            action: parse_text("skill_versions.action", &self.action)?,
            proposal_id: self.proposal_id,
            generation: to_u64(self.generation),
            created_at: timestamp::parse("skill_versions.created_at", &self.created_at)?,
        })
    }
}

/// Oldest first.
pub(crate) fn list(conn: &Connection, skill_name: &str) -> Result<Vec<SkillVersionRow>> {
    let raws = conn
        .prepare_cached(&format!(
            "SELECT {COLUMNS} FROM skill_versions WHERE skill_name = ?1 ORDER BY version"
        ))?
        .query_map([skill_name], RawVersion::from_row)?
        .collect::<rusqlite::Result<Vec<_>>>()?;
    raws.into_iter().map(RawVersion::into_row).collect()
}

pub(crate) fn get(
    conn: &Connection,
    skill_name: &str,
    version: u64,
) -> Result<Option<SkillVersionRow>> {
    conn.prepare_cached(&format!(
        "SELECT {COLUMNS} FROM skill_versions WHERE skill_name = ?1 AND version = ?2"
    ))?
    .query_row(params![skill_name, to_i64(version)], RawVersion::from_row)
    .optional()?
    .map(RawVersion::into_row)
    .transpose()
}
